"""Execution-barrier scaling: waves × phases of the workgroup barrier (issue 9 targets:
4 waves × 2 phases with every outcome listed < 2 s; 16 waves × 1 phase < 10 s).

    python3 benchmarks/barrier_scaling.py [--waves 1,2,4,8,16] [--phases 1,2] [--split]

Family: W waves of one workgroup, P phases. Wave 0 stores x = 1 and releases before the first
barrier; every other wave acquires after the last barrier and reads x (one outcome: every
read is 1), and wave 1 also reads a location nobody writes before the first barrier. With
--early the last wave ends without a barrier (its drop completes the phases), which is
outside the static fast path of encode/barrier.py, so every run is enumerated. The
test lists its single outcome, so the time includes enumerating every outcome. Columns:
barrier states explored, defined barrier outcomes, outcomes, seconds (analysis of the runs,
encode + solve).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from amdmm_smt.elaborate.events import elaborate  # noqa: E402
from amdmm_smt.encode import barrier as bar  # noqa: E402
from amdmm_smt.model import get_model  # noqa: E402
from amdmm_smt.frontend.litmus import parse_text  # noqa: E402
from amdmm_smt.solve import run_test  # noqa: E402


def family(waves: int, phases: int, split: bool, early: bool = False) -> str:
    sync = (["call void @llvm.amdgcn.s.barrier.signal(i32 -1)",
             "call void @llvm.amdgcn.s.barrier.wait(i16 -1)"] if split
            else ["call void @llvm.amdgcn.s.barrier()"])
    lines = [f"name: bar-scaling-{waves}x{phases}", "description: generated",
             f"target: {'gfx1200' if split else 'gfx1250'}", "memory:",
             "  x: {space: global, init: 0}", "  z: {space: global, init: 0}", "threads:"]
    outcome = []
    for w in range(waves):
        code = []
        if w == 0:
            code += ["store i32 1, ptr addrspace(1) @x",
                     'fence syncscope("workgroup") release']
        if w == 1:
            code.append("%z = load i32, ptr addrspace(1) @z")
            outcome.append(f"T{w}:%z == 0")
        if not (early and w == waves - 1 and waves > 2):
            code += sync * phases
        else:
            code.append("%e = load i32, ptr addrspace(1) @z")   # ends without a barrier
            outcome.append(f"T{w}:%e == 0")
        if w > 0 and not (early and w == waves - 1 and waves > 2):
            code += ['fence syncscope("workgroup") acquire',
                     "%r = load i32, ptr addrspace(1) @x"]
            outcome.append(f"T{w}:%r == 1")
        lines += [f"  T{w}:", "    code: |"] + [f"      {c}" for c in code]
    if outcome:       # one wave has no register: nothing to claim
        lines += ["outcomes:", f'  - "{" && ".join(outcome)}"']
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--waves", default="1,2,4,8,16")
    ap.add_argument("--phases", default="1,2")
    ap.add_argument("--split", action="store_true")
    ap.add_argument("--early", action="store_true",
                    help="the last wave ends without a barrier (not the static fast path: "
                    "every run is enumerated)")
    args = ap.parse_args()
    model = get_model(None)
    run_test(parse_text(family(2, 1, False), "warm.yaml"), model)     # load Z3
    print(f"{'waves':>5} {'phases':>6} {'states':>8} {'bar-outc':>8} {'outcomes':>8} "
          f"{'runs s':>8} {'total s':>8}  status")
    for p in [int(v) for v in args.phases.split(",")]:
        for w in [int(v) for v in args.waves.split(",")]:
            t = parse_text(family(w, p, args.split, args.early), "gen.yaml")
            t0 = time.perf_counter()
            an = bar.analyse(elaborate(t, model))
            t1 = time.perf_counter()
            r = run_test(t, model, timeout=600)
            t2 = time.perf_counter()
            print(f"{w:>5} {p:>6} {an.runs:>8} {len(an.outcomes):>8} {len(r.states):>8} "
                  f"{t1 - t0:>8.2f} {t2 - t1:>8.2f}  {r.status}", flush=True)


if __name__ == "__main__":
    main()
