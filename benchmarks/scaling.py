"""How the engine scales: a family of IRIW-like tests (N writers of N locations, N readers
reading every location in a rotated order), per ordering; prints events, outcomes and time.

    python3 benchmarks/scaling.py [--max N]        (default 3; N=4 takes minutes: ~28k-65k outcomes)
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from amdmm_smt.model import get_model  # noqa: E402
from amdmm_smt.frontend.litmus import parse_text  # noqa: E402
from amdmm_smt.solve import run_test  # noqa: E402


def family(n: int, order: str, scope: str = "agent") -> str:
    locs = [f"x{i}" for i in range(n)]
    store = {"acquire": "release"}.get(order, order)
    s = "name: scale\nmemory:\n" + "".join(f"  {x}: {{}}\n" for x in locs) + "threads:\n"
    for i, x in enumerate(locs):
        s += (f"  W{i}:\n    workgroup: {i}\n    code: |\n      store atomic i32 1, "
              f"ptr addrspace(1) @{x} syncscope(\"{scope}\") {store}\n")
    for j in range(n):
        s += f"  R{j}:\n    workgroup: {n + j}\n    code: |\n"
        for k in range(n):
            s += (f"      %r{k} = load atomic i32, ptr addrspace(1) @{locs[(j + k) % n]} "
                  f"syncscope(\"{scope}\") {order}\n")
    return s


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--max", type=int, default=3)
    a = ap.parse_args()
    model = get_model(None)
    run_test(parse_text(family(2, "monotonic"), "w.yaml"), model)   # warm-up
    print(f"{'N':>2} {'order':<10} {'events':>6} {'outcomes':>8} {'seconds':>8} {'ms/outcome':>10}")
    for n in range(2, a.max + 1):
        for order in ("monotonic", "acquire", "seq_cst"):
            t = parse_text(family(n, order), "scale.yaml")
            t0 = time.perf_counter()
            r = run_test(t, model, timeout=3600)
            dt = time.perf_counter() - t0
            ev = n + n * n
            print(f"{n:>2} {order:<10} {ev:>6} {len(r.states):>8} {dt:>8.2f} "
                  f"{1000 * dt / max(1, len(r.states)):>10.2f}")
    print(f"peak RSS: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
