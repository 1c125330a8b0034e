"""Per-test wall time and outcome count over a litmus corpus, in one process, and totals.

    python3 benchmarks/corpus.py [PATH ...] [--model NAME] [--repeat N]

Prints a table (sorted by time, slowest first): test, threads, events, outcomes, seconds
(best of --repeat). The encode and solve stages are timed separately. Z3 is loaded (and a
warm-up test run) before timing starts.
"""

from __future__ import annotations

import argparse
import glob
import os
import resource
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from amdmm_smt.elaborate import cflow as cflow  # noqa: E402
from amdmm_smt.elaborate.barrier import WaveDivergent  # noqa: E402
from amdmm_smt.elaborate.events import elaborate  # noqa: E402
from amdmm_smt.encode import encode  # noqa: E402
from amdmm_smt.model import get_model  # noqa: E402
from amdmm_smt.frontend.litmus import parse_file  # noqa: E402
from amdmm_smt.solve import run_test  # noqa: E402


def _first_paths(t, model):
    """A straight-line test as it is; a control-flow test as its first combination of thread
    paths that elaborates (a wave-divergent one has no execution, docs 15.9): the encoding
    time and event count of one combination."""
    if not cflow.test_has_cflow(t):
        return elaborate(t, model)
    _, _, gen = cflow.combos(t, cflow.unroll_bound(t, None))
    for ct, _ in gen:
        try:
            return elaborate(ct, model)
        except WaveDivergent:
            continue
    return elaborate(next(cflow.combos(t, cflow.unroll_bound(t, None))[2])[0], model)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("paths", nargs="*", default=["litmus"])
    ap.add_argument("--model", default=None)
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    files = []
    for p in args.paths:
        files += sorted(glob.glob(os.path.join(p, "**", "*.yaml"), recursive=True)) \
            if os.path.isdir(p) else [p]
    model = get_model(args.model)
    tests = [parse_file(f) for f in files]
    run_test(tests[0], model)   # warm-up: load Z3
    rows = []
    t_all = time.perf_counter()
    for t in tests:
        best, best_enc = float("inf"), float("inf")
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            x = encode(_first_paths(t, model))   # control flow: one combination
            enc = time.perf_counter() - t0
            t0 = time.perf_counter()
            r = run_test(t, model)
            best = min(best, time.perf_counter() - t0)
            best_enc = min(best_enc, enc)
        rows.append((t.name, len(t.threads), len(x.ev), len(r.states), best_enc, best,
                     r.status))
    total = time.perf_counter() - t_all
    rows.sort(key=lambda r: (-r[5], r[0]))
    w = max(len(r[0]) for r in rows)
    print(f"{'test':<{w}}  thr  ev  outcomes  encode_s  total_s  status")
    for name, thr, ev, n, enc, s, st in rows:
        print(f"{name:<{w}}  {thr:>3}  {ev:>2}  {n:>8}  {enc:>8.3f}  {s:>7.3f}  {st}")
    times = [r[5] for r in rows]
    two = [r[5] for r in rows if r[1] == 2]
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print()
    print(f"tests: {len(rows)}  model: {model.name}  corpus total: {sum(times):.2f} s "
          f"(wall incl. encode-only pass: {total:.2f} s)")
    print(f"median: {statistics.median(times):.3f} s   max: {max(times):.3f} s   "
          + (f"median two-thread: {statistics.median(two):.3f} s   " if two else "")
          + f"peak RSS: {rss:.0f} MiB")


if __name__ == "__main__":
    main()
