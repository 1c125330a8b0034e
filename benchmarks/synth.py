"""`amdmm-smt synth` speed (issue 21 "How good", 2-core machine): for seed vs upstream-2026
and for each option they differ in, the smallest distinguishing test (target: each under
60 s, at 2 threads × ≤ 4 events); and an exhaustive "none up to 2 threads × 3 events" claim
for two equivalent option settings (target: under 5 minutes).

    python3 benchmarks/synth.py [--jobs 2] [--quick]

Prints a table: pair, size found (or the claim), seconds, programs examined, candidate states.
--quick: only the rows that finish in seconds (the benchmark smoke test runs it).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from amdmm_smt.synth import build_models, run, size_words  # noqa: E402
from amdmm_smt.synth.presets import default_vocab  # noqa: E402
from amdmm_smt.synth.programs import Bound  # noqa: E402

FIND = [("seed", "upstream-2026", []),
        ("seed", None, ["async_model=upstream-stages"]),
        ("seed", None, ["lds_av_workgroup=true"]),
        ("seed", None, ["volatile_av=true"]),
        ("seed", None, ["read_lo=true"])]
# equivalent on their preset vocabulary: async_done_edges differs only where MMRA tags cut
# program order (docs R-async-done-every), which needs more than 3 instructions
# final_co=hb: the final values from happens-before instead of location order agree on every
# program of its vocabulary up to 2 × 3 (docs/synth-options.md), with encodings that differ
EXHAUST = [("seed", None, ["async_done_edges=first"], 3), ("seed", None, ["final_co=hb"], 3)]
QUICK = {"seed vs upstream-2026", "seed vs seed+async_model=upstream-stages"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    print(f"{'pair':48s} {'result':34s} {'seconds':>8s} {'programs':>9s} {'states':>7s}")
    rows = [(a, b, o, 4, True) for a, b, o in FIND] + [(a, b, o, e, False)
                                                       for a, b, o, e in EXHAUST]
    for a_name, b_name, opts, events, find in rows:
        a, b = build_models(a_name, b_name, opts)
        what = f"{a.name} vs {b.name}"
        if args.quick and what not in QUICK:
            continue
        t0 = time.perf_counter()
        r = run(a, b, Bound(2, events, 2, default_vocab(a, b)), jobs=args.jobs, max_found=1,
                explain_it=False)
        dt = time.perf_counter() - t0
        if r.tests:
            p = r.tests[0].found.prog
            res = f"found {size_words(len(p.threads), p.events)}"
        else:
            res = (f"none up to 2 × {events} (exhaustive)" if r.search.exhaustive
                   else "none, NOT exhaustive")
        print(f"{what:48s} {res:34s} {dt:8.1f} {r.search.programs:9d} {r.search.states:7d}",
              flush=True)


if __name__ == "__main__":
    main()
