"""How the async family scales (issue 10): software pipelines (S004 "Software pipeline") of
COPIES asynchronous copies in blocks of PER_BLOCK, with STAGES blocks in flight (a ring of
STAGES LDS slot groups), one asyncmark per block and one wait.asyncmark per consumed block;
a second wave of the workgroup acquires a flag the producer releases after its last wait and
reads every slot. Variants: `exact` (each wait leaves STAGES-1 blocks outstanding: the block
consumed is completed) and `short` (each wait allows one more outstanding block: too short).
Prints events, outcomes and wall time per test (parse + elaborate + encode + enumerate).

    python3 benchmarks/async_scaling.py [--max-copies N] [--model seed|upstream-2026]

The issue's target: 8 copies, 4 marks, 4 waits (copies 8, per block 2, stages 2) lists every
outcome in under 2 s.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from amdmm_smt.elaborate.events import elaborate  # noqa: E402
from amdmm_smt.model import get_model  # noqa: E402
from amdmm_smt.frontend.litmus import parse_text  # noqa: E402
from amdmm_smt.solve import run_test  # noqa: E402

COPY = ("      call void @llvm.amdgcn.load.async.to.lds.p1(ptr addrspace(1) @{g}, "
        "ptr addrspace(3) @{l}, i32 4, i32 0, i32 0)\n")


def pipeline(copies: int, stages: int, per_block: int = 2, short: bool = False) -> str:
    blocks = (copies + per_block - 1) // per_block
    src = [f"g{i}" for i in range(copies)]
    slot = {i: f"l{(i // per_block) % stages}_{i % per_block}" for i in range(copies)}
    mem = "".join(f"  {g}: {{space: global, init: {10 + i}}}\n" for i, g in enumerate(src))
    mem += "".join(f"  {s}: {{space: local, init: 0}}\n" for s in sorted(set(slot.values())))
    mem += "  f: {space: global, init: 0}\n"
    code, issued, reg = "", 0, 0

    def issue(b: int) -> str:
        return "".join(COPY.format(g=src[i], l=slot[i]) for i in range(
            b * per_block, min(copies, (b + 1) * per_block))) + \
            "      call void @llvm.amdgcn.asyncmark()\n"
    for b in range(min(stages, blocks)):
        code += issue(b)
        issued += 1
    for b in range(blocks):
        n = issued - b - 1 + (1 if short else 0)         # leave the later blocks outstanding
        code += f"      call void @llvm.amdgcn.wait.asyncmark(i16 {n})\n"
        for i in range(b * per_block, min(copies, (b + 1) * per_block)):
            code += f"      %r{reg} = load i32, ptr addrspace(3) @{slot[i]}\n"
            reg += 1
        if issued < blocks:
            code += issue(issued)
            issued += 1
    code += ('      store atomic i32 1, ptr addrspace(1) @f syncscope("workgroup") release\n')
    wave = ('      %c = load atomic i32, ptr addrspace(1) @f syncscope("workgroup") acquire\n'
            + "".join(f"      %s{j} = load i32, ptr addrspace(3) @{s}\n"
                      for j, s in enumerate(sorted(set(slot.values())))))
    return (f"name: pipe-{copies}x{stages}\nmemory:\n{mem}threads:\n  P:\n    workgroup: 0\n"
            f"    code: |\n{code}  C:\n    workgroup: 0\n    code: |\n{wave}"
            "exists: \"P:%r0 == 10\"\nexpect: allowed\n")


def measure(text: str, model) -> tuple:
    t0 = time.perf_counter()
    t = parse_text(text, "bench.yaml")
    events = len(elaborate(t, model).events)
    r = run_test(t, model, timeout=600)
    return events, len(r.states), r.complete, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-copies", type=int, default=12)
    ap.add_argument("--model", default="seed")
    a = ap.parse_args()
    model = get_model(a.model)
    print(f"model {model.name}")
    print(f"{'copies':>6} {'stages':>6} {'marks':>5} {'waits':>5} {'variant':>7} {'events':>6} "
          f"{'outcomes':>8} {'seconds':>8}")
    for copies in range(4, a.max_copies + 1, 4):
        for stages in (1, 2, 3, 4):
            blocks = (copies + 1) // 2
            if stages > blocks:
                continue
            for short in (False, True):
                ev, n, complete, secs = measure(pipeline(copies, stages, short=short), model)
                print(f"{copies:>6} {stages:>6} {blocks:>5} {blocks:>5} "
                      f"{'short' if short else 'exact':>7} {ev:>6} "
                      f"{n if complete else str(n) + '+':>8} {secs:>8.2f}")


if __name__ == "__main__":
    main()
