"""Long differential run: N generated tests, each under a random shipped model, through both
engines; prints the count of disagreements (target: 0) and writes each one to a directory.

    python3 benchmarks/differential.py --count 10000 [--seed 1] [--out /tmp/disagreements]
        [--family mixed|plain|async|async-rich|async-multiwait|calls] [--barriers N]

Families: `plain` (tests/gen.py `litmus`: 2-4 threads, tags, LDS), `async` (tests/gen.py
`gen_async`), `async-rich` (tests/gen_async_rich.py: async with MMRA tags, atomics, fences,
another workgroup), `async-multiwait` (tests/gen_async_rich.py `gen_async_multiwait`: several
differently tagged waits after a copy, issue 17 items 3 and 4), `calls` (tests/gen_async_calls.py:
functions that copy, mark and wait, nested, branchy and in loops, under seed, upstream-2026 and
the inlined reading; docs R-call-async-seq), `mixed` (default: half plain, a quarter each async
family).

--barriers N adds N generated execution-barrier tests (tests/gen.py barrier_test, and every
other one barrier_choice_test: unequal signal / wait patterns around barrier-ordered atomics,
issue 17); those the reference engine refuses (ReferenceUnsupported, until its barrier family
lands) are counted and printed.

--files compares, instead, the model files with the hand encoders (issue 27 item 4): each
generated test under a random shipped version runs through the hand SMT encoder
(`get_model(name)`), the SMT engine driven by `models/NAME.cat` and the reference engine
driven by the same file; the three must list the same outcomes (the file reference engine
only where it finishes within --ref-limit candidate executions). `--jobs N` spreads the tests
over N processes; the tests and their order do not depend on N. `--demand-from 0` turns the
file engine's demanded pairs on for every test (by default only from 12 events, which few
generated tests reach).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from hypothesis.errors import NonInteractiveExampleWarning  # noqa: E402

from amdmm_smt.model import list_models  # noqa: E402
from tests.gen import gen_async, litmus, render  # noqa: E402
from tests.gen_async_rich import gen_async_multiwait, gen_async_rich, render_rich  # noqa: E402
from tests.test_differential import disagreement  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="/tmp/amdmm-disagreements")
    ap.add_argument("--family", choices=["mixed", "plain", "async", "async-rich", "async-multiwait",
                                         "calls"],
                    default="mixed")
    ap.add_argument("--barriers", type=int, default=0)
    ap.add_argument("--files", action="store_true",
                    help="model files against the hand encoders (three engines per test)")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--ref-limit", type=int, default=3_000)
    ap.add_argument("--demand-from", type=int, default=None, metavar="N",
                    help="with --files: the SMT file engine's demanded pairs from N events "
                         "(default: encode/cat_z3.py Z3Algebra.DEMAND_FROM; 0 exercises them "
                         "on every test, docs/semantics.md section 18)")
    a = ap.parse_args()
    if a.demand_from is not None:
        from amdmm_smt.encode import cat_z3     # set before the worker processes fork
        cat_z3.Z3Algebra.DEMAND_FROM = a.demand_from
    if a.files:
        sys.exit(1 if files_differential(a) else 0)
    warnings.simplefilter("ignore", NonInteractiveExampleWarning)
    rnd = random.Random(a.seed)
    models = [m.name for m in list_models()]
    strat = litmus(tags=True, lds=True)
    os.makedirs(a.out, exist_ok=True)
    bad = skipped = 0
    per_family: dict = {}
    t0 = time.time()

    def pick(xs):
        return rnd.choice(list(xs))
    for i in range(a.count):
        fam = a.family
        if fam == "mixed":
            fam = rnd.choice(["plain", "plain", "async", "async-rich"])
        if fam == "calls":
            from tests.gen_async_calls import calls_test
            from tests.test_differential import cf_disagreement
            text = calls_test(rnd, f"diff-{i}")
            model = rnd.choice(["seed", "upstream-2026",
                                os.path.join(ROOT, "litmus", "calls", "inlined-calls.model")])
            per_family[fam] = per_family.get(fam, 0) + 1
            d = cf_disagreement(text, model)
            if d in ("too big", "refused"):
                skipped += 1
            elif d is not None:
                bad += 1
                with open(os.path.join(a.out, f"diff-{i}.{os.path.basename(model)}.yaml"),
                          "w") as f:
                    f.write(f"# model: {model}\n# smt / reference: {d}\n{text}")
            continue
        if fam == "plain":
            g = strat.example()
        elif fam == "async":
            g = gen_async(pick)
        elif fam == "async-multiwait":
            g = gen_async_multiwait(pick)
        else:
            g = gen_async_rich(pick)
        text = (render_rich if fam.startswith("async-") else render)(g, name=f"diff-{i}")
        model = rnd.choice(models)
        if fam != "plain" and rnd.random() < 0.8:     # the two async versions, mostly
            model = rnd.choice(["seed", "upstream-2026"])
        per_family[fam] = per_family.get(fam, 0) + 1
        d = disagreement(text, model)
        if d == "too big":
            skipped += 1
        elif d is not None:
            bad += 1
            with open(os.path.join(a.out, f"diff-{i}.{model}.yaml"), "w") as f:
                f.write(f"# model: {model}\n# smt only / reference only: {d}\n{text}")
        if (i + 1) % max(1, a.count // 20) == 0:
            print(f"[{i + 1}/{a.count}] disagreements: {bad}, too big for the reference: "
                  f"{skipped}, {time.time() - t0:.0f} s", file=sys.stderr)
    fams = ", ".join(f"{k} {v}" for k, v in sorted(per_family.items()))
    print(f"tests: {a.count} ({fams})  disagreements: {bad}  skipped (too big): {skipped}  "
          f"seconds: {time.time() - t0:.0f}")
    bad += barriers(a.barriers, rnd, a.out)
    sys.exit(1 if bad else 0)


def _file_case(i: int, seed: int, family: str, ref_limit: int):
    """Generate case i (from its own seed, so the case does not depend on the process that
    runs it) and run it through the three engines: (i, family, model, verdict, text)."""
    from amdmm_smt.errors import LitmusError
    from amdmm_smt.frontend.litmus import parse_text
    from amdmm_smt.model import get_model
    from amdmm_smt.reference import run_reference
    from amdmm_smt.solve import run_test
    from tests.gen import barrier_choice_test, barrier_test
    warnings.simplefilter("ignore", NonInteractiveExampleWarning)
    rnd = random.Random(seed * 1_000_003 + i)
    fam = family
    if fam == "mixed":
        fam = rnd.choice(["plain", "plain", "plain", "async", "async-rich", "barrier"])
    if fam == "barrier":
        gen = barrier_choice_test if i % 2 else barrier_test
        text = gen(rnd, f"diff-{i}")
        model = rnd.choice(["seed", "pr170447"])
    else:
        if fam == "plain":
            g = litmus(tags=True, lds=True).example()
        elif fam == "async":
            g = gen_async(lambda xs: rnd.choice(list(xs)))
        else:
            g = gen_async_rich(lambda xs: rnd.choice(list(xs)))
        text = (render_rich if fam.startswith("async-") else render)(g, name=f"diff-{i}")
        model = rnd.choice([m.name for m in list_models()])
        if fam != "plain" and rnd.random() < 0.8:
            model = rnd.choice(["seed", "upstream-2026"])
    t = parse_text(text, "gen.yaml")
    f = os.path.join(ROOT, "models", f"{model}.cat")
    try:
        hand = run_test(t, get_model(model), timeout=120)
    except LitmusError as e:                  # a test the hand engine refuses: so must the file
        try:
            run_test(t, get_model(f), timeout=120)
            return i, fam, model, f"hand refuses ({e}), the file does not", text
        except LitmusError:
            return i, fam, model, "refused", text
    cat = run_test(t, get_model(f), timeout=120)
    if not (hand.complete and cat.complete):
        return i, fam, model, "unknown", text
    hub = (bool(hand.ub), (hand.ub or {}).get("all"))
    cub = (bool(cat.ub), (cat.ub or {}).get("all"))
    if hand.states != cat.states or hub != cub:
        return i, fam, model, f"smt hand {sorted(hand.states)} {hub} / file {sorted(cat.states)} {cub}", text
    ref = run_reference(t, get_model(f), limit=ref_limit)
    if not ref.complete:
        return i, fam, model, "ok (reference too big)", text
    rub = (bool(getattr(ref, "ub", None)), (getattr(ref, "ub", None) or {}).get("all"))
    if ref.states != hand.states or rub != hub:
        return i, fam, model, f"reference file {sorted(ref.states)} {rub} / hand {sorted(hand.states)} {hub}", text
    return i, fam, model, "ok", text


def files_differential(a) -> int:
    """N generated tests through the hand SMT encoder, the file SMT engine and the file
    reference engine (`--files`); prints a table per family and returns the disagreements."""
    import multiprocessing as mp
    os.makedirs(a.out, exist_ok=True)
    t0 = time.time()
    tally: dict = {}
    bad = 0
    args = [(i, a.seed, a.family, a.ref_limit) for i in range(a.count)]
    with mp.get_context("fork").Pool(a.jobs) as pool:
        for n, (i, fam, model, verdict, text) in enumerate(
                pool.imap_unordered(_star, args, chunksize=4), 1):
            kind = verdict if verdict in ("ok", "ok (reference too big)", "refused",
                                          "unknown") else "DISAGREE"
            tally[(fam, kind)] = tally.get((fam, kind), 0) + 1
            if kind == "DISAGREE":
                bad += 1
                with open(os.path.join(a.out, f"diff-{i}.{model}.yaml"), "w") as fh:
                    fh.write(f"# model: models/{model}.cat against the hand encoder\n"
                             f"# {verdict}\n{text}")
            if n % max(1, a.count // 20) == 0:
                print(f"[{n}/{a.count}] disagreements: {bad}, {time.time() - t0:.0f} s",
                      file=sys.stderr)
    fams = sorted({f for f, _ in tally})
    kinds = ["ok", "ok (reference too big)", "refused", "unknown", "DISAGREE"]
    print("| family | " + " | ".join(kinds) + " |")
    print("| --- |" + " --- |" * len(kinds))
    for f in fams:
        print(f"| {f} | " + " | ".join(str(tally.get((f, k), 0)) for k in kinds) + " |")
    print(f"tests: {a.count}  disagreements: {bad}  seconds: {time.time() - t0:.0f}  "
          f"jobs: {a.jobs}")
    return bad


def _star(args):
    return _file_case(*args)


def barriers(n: int, rnd, out: str) -> int:
    """Generated barrier tests through both engines: outcomes and undefinedness must agree."""
    if not n:
        return 0
    from amdmm_smt.errors import LitmusError
    from amdmm_smt.model import get_model
    from amdmm_smt.frontend.litmus import parse_text
    from amdmm_smt.reference import run_reference
    from amdmm_smt.solve import run_test
    from tests.gen import barrier_choice_test, barrier_test
    from tests.test_differential import reference_refuses
    bad = refused = 0
    for i in range(n):
        gen = barrier_choice_test if i % 2 else barrier_test
        text = gen(random.Random(rnd.random()), f"diff-bar-{i}")
        t = parse_text(text, "gen.yaml")
        m = get_model(rnd.choice(["seed", "pr170447"]))
        try:
            a = run_test(t, m, timeout=120)
        except LitmusError:
            m = get_model("seed")
            a = run_test(t, m, timeout=120)
        if reference_refuses(t, m):
            refused += 1
            continue
        b = run_reference(t, m)
        ua = (bool(a.ub), (a.ub or {}).get("all"))
        ub = (bool(getattr(b, "ub", None)), (getattr(b, "ub", None) or {}).get("all"))
        if not (b.complete and a.states == b.states and ua == ub):
            bad += 1
            with open(os.path.join(out, f"diff-bar-{i}.{m.name}.yaml"), "w") as f:
                f.write(f"# model: {m.name}\n# smt {a.states} {a.ub}\n# ref {b.states} "
                        f"{ub}\n{text}")
    print(f"barrier tests: {n}  disagreements: {bad}  refused by the reference engine: "
          f"{refused}")
    return bad


if __name__ == "__main__":
    main()
