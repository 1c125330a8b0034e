"""The reference engine on the execution-barrier scaling family of barrier_scaling.py (waves ×
phases of the workgroup barrier, wave 0 publishing x to every other wave):

    python3 benchmarks/reference_barrier_scaling.py [--waves 2,4,8,16] [--phases 1,2] [--split]

Columns: barrier run states explored, distinct runs, status, seconds (process time). The
reference engine explores runs state by state (amdmm_smt/reference/barrier.py) and refuses a
test past RUN_STATES states (status unknown); issue 9 asks it to handle 4 waves × 2 phases.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from barrier_scaling import family  # noqa: E402

from amdmm_smt.elaborate.events import elaborate  # noqa: E402
from amdmm_smt.model import get_model  # noqa: E402
from amdmm_smt.frontend.litmus import parse_text  # noqa: E402
from amdmm_smt.reference import ReferenceTooBig, run_reference  # noqa: E402
from amdmm_smt.reference.barrier import RUN_STATES, BarrierProgram  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--waves", default="2,4,8,16")
    ap.add_argument("--phases", default="1,2")
    ap.add_argument("--split", action="store_true")
    ap.add_argument("--early", action="store_true")
    ap.add_argument("--model", default=None)
    a = ap.parse_args()
    model = get_model(a.model)
    print(f"{'waves':>5} {'phases':>6} {'states':>8} {'runs':>5} {'status':>8} {'seconds':>8}")
    for w in map(int, a.waves.split(",")):
        for p in map(int, a.phases.split(",")):
            t = parse_text(family(w, p, a.split, a.early), "family.yaml")
            t0 = time.process_time()
            res = run_reference(t, model)
            secs = time.process_time() - t0
            prog = BarrierProgram(elaborate(t, model))
            states = 0
            try:
                runs = len(prog.runs(RUN_STATES))
                states = prog.states
            except ReferenceTooBig:
                runs, states = "-", f">{RUN_STATES}"
            print(f"{w:>5} {p:>6} {states:>8} {runs:>5} {res.status:>8} {secs:>8.2f}")


if __name__ == "__main__":
    main()
