"""Explanation times over a litmus corpus (issue 12: under 2 s per outcome for two- or
three-thread tests). For every test: its exists: condition (witness or minimal core) and
each outcome it lists (witness), explained one by one in one process.

    python3 benchmarks/explain.py [PATH ...] [--model NAME]

Prints a table (slowest first): test, threads, what was explained, allowed / forbidden, the
core size, seconds; then count, median, max, and how many took 2 s or more.
"""

from __future__ import annotations

import argparse
import glob
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from amdmm_smt.explain.witness import explain  # noqa: E402
from amdmm_smt.model import get_model  # noqa: E402
from amdmm_smt.frontend.litmus import parse_file  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("paths", nargs="*", default=["litmus"])
    ap.add_argument("--model", default=None)
    args = ap.parse_args()
    files = []
    for p in args.paths:
        files += sorted(glob.glob(os.path.join(p, "**", "*.yaml"), recursive=True)) \
            if os.path.isdir(p) else [p]
    tests = [parse_file(f) for f in files]
    rows = []
    explain(tests[0], get_model(args.model or tests[0].model),
            tests[0].exists or tests[0].outcomes[0])          # warm-up: load Z3
    for t in tests:
        model = get_model(args.model or t.model)
        conds = ([("exists", t.exists)] if t.exists else []) + [
            (f"outcome {i + 1}", o) for i, o in enumerate(t.outcomes or [])]
        for what, c in conds:
            t0 = time.perf_counter()
            ex = explain(t, model, c)
            s = time.perf_counter() - t0
            verdict = {True: "allowed", False: "forbidden", None: "unknown"}[ex.reachable]
            rows.append((t.name, len(t.threads), what, verdict,
                         len(ex.core) if ex.reachable is False else "", s))
    rows.sort(key=lambda r: (-r[5], r[0], r[2]))
    w = max(len(r[0]) for r in rows)
    print(f"{'test':<{w}}  thr  {'explained':<11} {'verdict':<9} core  seconds")
    for name, thr, what, v, core, s in rows:
        print(f"{name:<{w}}  {thr:>3}  {what:<11} {v:<9} {core!s:>4}  {s:7.3f}")
    times = [r[5] for r in rows]
    print(f"\n{len(rows)} explanations in {len(tests)} tests: median {statistics.median(times):.3f}"
          f" s, max {max(times):.3f} s, total {sum(times):.1f} s, "
          f"{sum(1 for x in times if x >= 2.0)} took 2 s or more")


if __name__ == "__main__":
    main()
