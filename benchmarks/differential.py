"""Long differential run: N generated tests, each under a random shipped model, through both
engines; prints the count of disagreements (target: 0) and writes each one to a directory.

    python3 benchmarks/differential.py --count 10000 [--seed 1] [--out /tmp/disagreements]
        [--family mixed|plain|async|async-rich]

Families: `plain` (tests/gen.py `litmus`: 2-4 threads, tags, LDS), `async` (tests/gen.py
`gen_async`), `async-rich` (tests/gen_async_rich.py: async with MMRA tags, atomics, fences,
another workgroup), `mixed` (default: half plain, a quarter each async family).
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
from tests.gen_async_rich import gen_async_rich, render_rich  # noqa: E402
from tests.test_differential import disagreement  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="/tmp/amdmm-disagreements")
    ap.add_argument("--family", choices=["mixed", "plain", "async", "async-rich"],
                    default="mixed")
    a = ap.parse_args()
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
        if fam == "plain":
            g = strat.example()
        elif fam == "async":
            g = gen_async(pick)
        else:
            g = gen_async_rich(pick)
        text = (render_rich if fam == "async-rich" else render)(g, name=f"diff-{i}")
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
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
