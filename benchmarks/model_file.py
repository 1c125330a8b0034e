"""Hand-written encoders vs the same rules read from models/seed.cat (issue 27): CPU seconds
of one process, side by side in one run, per engine.

    python3 benchmarks/model_file.py [--quick] [--demand-from N] [--repeat N]

Rows: the corpus directories in scope of the gate (litmus/classic, s000, mmra, cflow, every
test under the seed model), and a few sizes of benchmarks/families.py (MP chains, SB rings,
IRIW, operations per thread). Each cell is CPU seconds (time.process_time) for listing every
outcome (SMT engine), or enumerating (reference engine, corpus rows only); an SMT cell is the
least of --repeat runs (default 3; hand and file in turn, after one warm-up test each, so that
a shared machine's drift and the first test's lazy imports weigh on neither side), a row
whose one run takes over 5 s is run once. Nothing in tests/ asserts a time; this script only
measures.
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, HERE)

from families import FAMILIES  # noqa: E402

from amdmm_smt.frontend.litmus import parse_file, parse_text  # noqa: E402
from amdmm_smt.model import get_model  # noqa: E402
from amdmm_smt.reference import run_reference  # noqa: E402
from amdmm_smt.solve import run_test  # noqa: E402

SEED = os.path.join(ROOT, "models", "seed.cat")
SLOW_REFERENCE = ("CAS-spinlock", "ticketlock", "swbarrier")


def cpu(f) -> float:
    t0 = time.process_time()
    f()
    return time.process_time() - t0


def side_by_side(job, hand, cat, repeat: int, warm=None) -> tuple[float, float]:
    """(hand CPU, file CPU) of job(model): the least of `repeat` runs each, in turn; once
    when one run takes over 5 s."""
    if warm is not None:
        warm(hand)
        warm(cat)
    hs, cs = [], []
    for _ in range(max(1, repeat)):
        hs.append(cpu(lambda: job(hand)))
        cs.append(cpu(lambda: job(cat)))
        if max(hs[-1], cs[-1]) > 5.0:
            break
    return min(hs), min(cs)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer family sizes")
    ap.add_argument("--demand-from", type=int, default=None, metavar="N",
                    help="the SMT file engine's demanded pairs from N events (default: "
                         "encode/cat_z3.py Z3Algebra.DEMAND_FROM; a large N turns them off)")
    ap.add_argument("--repeat", type=int, default=3, metavar="N",
                    help="each SMT cell: the least CPU of N runs (default 3)")
    a = ap.parse_args()
    if a.demand_from is not None:
        from amdmm_smt.encode import cat_z3
        cat_z3.Z3Algebra.DEMAND_FROM = a.demand_from
    hand, cat = get_model(None), get_model(SEED)
    rows = []
    for d in ("classic", "s000", "mmra", "cflow"):
        tests = [parse_file(f) for f in sorted(glob.glob(os.path.join(ROOT, "litmus", d,
                                                                        "*.yaml")))]
        tests = [t for t in tests if t.model in (None, "seed")]
        h, c = side_by_side(lambda m: [run_test(t, m) for t in tests], hand, cat, a.repeat,
                            warm=lambda m: run_test(tests[0], m))
        quick = [t for t in tests if not any(s in t.file for s in SLOW_REFERENCE)]
        rh = sum(cpu(lambda t=t: run_reference(t, hand)) for t in quick)
        rc = sum(cpu(lambda t=t: run_reference(t, cat)) for t in quick)
        rows.append((f"litmus/{d} ({len(tests)} tests)", h, c, rh, rc))
    sizes = {"mp-chain": [4, 8], "sb-ring": [3, 5], "iriw": [2, 3], "ops-per-thread": [2, 4]}
    for name, ns in sizes.items():
        if name not in FAMILIES:
            continue
        f = FAMILIES[name][0] if isinstance(FAMILIES[name], tuple) else FAMILIES[name]
        for n in ns[:1] if a.quick else ns:
            t = parse_text(f(n), f"{name}-{n}.yaml")
            h, c = side_by_side(lambda m: run_test(t, m), hand, cat, a.repeat)
            rows.append((f"{name} n={n}", h, c, None, None))
    print("| workload | SMT hand s | SMT file s | file/hand | reference hand s | "
          "reference file s | file/hand |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, h, c, rh, rc in rows:
        ref = (f"{rh:.2f} | {rc:.2f} | {rc / max(rh, 1e-9):.1f}x" if rh is not None
               else "- | - | -")
        print(f"| {name} | {h:.2f} | {c:.2f} | {c / max(h, 1e-9):.2f}x | {ref} |")


if __name__ == "__main__":
    main()
