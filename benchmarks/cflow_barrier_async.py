"""Cost of barriers and async operations under control flow (issue 18, docs 15.9): prints a
table, asserts nothing. Run from the repository root:

    python3 benchmarks/cflow_barrier_async.py

Targets (issue 18): the S004 software pipeline loop, 3 blocks in flight, 2 iterations under
2 s and 4 iterations under 10 s; a tiled loop, 4 waves x 3 tiles, two barriers per iteration,
under 5 s."""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from amdmm_smt.frontend.litmus import parse_text  # noqa: E402
from amdmm_smt.model import get_model  # noqa: E402
from amdmm_smt.reference import run_reference  # noqa: E402
from amdmm_smt.solve import run_test  # noqa: E402

DMA = ("call void @llvm.amdgcn.load.async.to.lds.p1(ptr addrspace(1) @g{g}, ptr addrspace(3) "
       "@l{l}, i32 4, i32 0, i32 0)")
MARK = "call void @llvm.amdgcn.asyncmark()"
WAIT = "call void @llvm.amdgcn.wait.asyncmark(i16 {n})"


def pipeline(iters: int) -> str:
    """litmus/async/async-pipeline-loop.yaml with `iters` iterations."""
    mem = [f"  g{k}: {{space: global, init: {10 + k}}}" for k in range(iters + 3)]
    mem += [f"  l{k}: {{space: local, init: 0}}" for k in range(3)]
    mem += [f"  o{k}: {{space: global, init: 0}}" for k in range(iters + 3)]
    c = ["entry:"]
    for k in range(3):
        c += [DMA.format(g=k, l=k), MARK]
    c += ["br label %loop", "loop:", "%i = phi i32 [ 0, %entry ], [ %n, %next ]",
          WAIT.format(n=2)]
    for k in range(iters - 1):
        c += [f"%z{k} = icmp eq i32 %i, {k}", f"br i1 %z{k}, label %use{k}, label %it{k + 1}",
              f"it{k + 1}:"]
    c += [f"br label %use{iters - 1}"]
    for k in range(iters):
        c += [f"use{k}:", f"%u{k} = load i32, ptr addrspace(3) @l{k % 3}",
              f"store i32 %u{k}, ptr addrspace(1) @o{k}", DMA.format(g=k + 3, l=k % 3),
              "br label %next"]
    c += ["next:", MARK, "%n = add i32 %i, 1", f"%c = icmp slt i32 %n, {iters}",
          "br i1 %c, label %loop, label %flush", "flush:"]
    for j, n in enumerate((2, 1, 0)):
        c += [WAIT.format(n=n), f"%f{j} = load i32, ptr addrspace(3) @l{(iters + j) % 3}",
              f"store i32 %f{j}, ptr addrspace(1) @o{iters + j}"]
    c += ["ret void"]
    return "\n".join([f"name: pipeline-{iters}", f"unroll: {iters}", "memory:"] + mem +
                     ["threads:", "  T0:", "    code: |"] + ["      " + x for x in c]) + "\n"


def tiled(waves: int, tiles: int, barriers: int = 2) -> str:
    """litmus/barrier/bar-loop-tiled-2tiles-2barriers.yaml with more waves and tiles."""
    out = [f"name: tiled-{waves}x{tiles}", "target: gfx1250", f"unroll: {tiles}", "memory:",
           "  t: {space: local, init: 0}", "threads:"]
    for w in range(waves):
        b = ["entry:", "br label %loop", "loop:", "%i = phi i32 [ 0, %entry ], [ %n, %loop ]",
             "%acc = phi i32 [ 0, %entry ], [ %s, %loop ]", "%n = add i32 %i, 1"]
        if w == 0:
            b.append("store i32 %n, ptr addrspace(3) @t")
        b += ['fence syncscope("workgroup") release', "call void @llvm.amdgcn.s.barrier()",
              'fence syncscope("workgroup") acquire', "%r = load i32, ptr addrspace(3) @t",
              "%s = add i32 %acc, %r"]
        if barriers == 2:
            b += ['fence syncscope("workgroup") release', "call void @llvm.amdgcn.s.barrier()",
                  'fence syncscope("workgroup") acquire']
        b += [f"%c = icmp slt i32 %n, {tiles}", "br i1 %c, label %loop, label %exit", "exit:",
              "ret void"]
        out += [f"  W{w}:", f"    wavefront: {w}", "    code: |"] + ["      " + x for x in b]
    return "\n".join(out) + "\n"


CASES = [("S004 pipeline loop, 3 in flight, 2 iterations", lambda: pipeline(2), 2.0),
         ("S004 pipeline loop, 3 in flight, 4 iterations", lambda: pipeline(4), 10.0),
         ("tiled loop, 4 waves x 3 tiles, 2 barriers/iter", lambda: tiled(4, 3), 5.0),
         ("tiled loop, 4 waves x 3 tiles, 1 barrier/iter", lambda: tiled(4, 3, 1), 5.0)]


def main() -> None:
    m = get_model(None)
    print(f"{'case':50} {'engine':10} {'seconds':>8} {'target':>7} {'outcomes':>8} status")
    for name, make, target in CASES:
        t = parse_text(make(), "bench.yaml")
        for ename, run in (("z3", run_test), ("reference", run_reference)):
            t0 = time.perf_counter()
            r = run(t, m)
            dt = time.perf_counter() - t0
            ok = "ok" if dt < target else "SLOW"
            print(f"{name:50} {ename:10} {dt:8.2f} {target:7.1f} {len(r.states):8} "
                  f"{r.status} {ok} {r.why[:60]}")


if __name__ == "__main__":
    main()
