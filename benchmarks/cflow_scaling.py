"""Control-flow scaling (issue 11 targets: a two-workgroup spin lock or software barrier with
unroll 3 < 5 s; a ticket lock with three contenders and unroll 4 < 30 s).

    python3 benchmarks/cflow_scaling.py [--contenders 2,3] [--unroll 2,3,4] [--family all]
                                        [--decide-only]

Families (docs/semantics.md §15; the two-contender versions are the hand-derived tests of
litmus/cflow/): `caslock` (CAS spin lock around a non-atomic counter), `ticket` (ticket lock),
`swbarrier` (software barrier from an agent-scope atomic counter); one contender per
workgroup, agent scope, `bound: assume`, every outcome enumerated and `@cnt` (or the data)
checked by an `exists ... forbidden`. Columns: path combinations, the candidate executions an
explicit enumeration would face (per combination: for each read, undef or any write to its
location; for each location, every order of its writes; summed over combinations), outcomes,
verdict, seconds (the Z3 engine, parse to verdict; "solved": the combinations solved, one per
orbit of interchangeable contenders, docs 15.7 R-cf-symmetry; --no-symmetry solves all), CPU seconds of this process (Z3 included:
the figure to compare on a shared machine). --decide-only: answer the expectation per path
combination without listing outcomes (docs/semantics.md 15.7).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from amdmm_smt.elaborate.cflow import combos, symmetric_combos, symmetries  # noqa: E402
from amdmm_smt.elaborate.events import elaborate  # noqa: E402
from amdmm_smt.model import get_model  # noqa: E402
from amdmm_smt.frontend.litmus import parse_text  # noqa: E402
from amdmm_smt.solve import run_test  # noqa: E402

G = "ptr addrspace(1)"


def caslock(c: int, u: int) -> str:
    body = ["entry:", "  br label %spin", "spin:",
            f'  %old = cmpxchg {G} @lock, i32 0, i32 1 syncscope("agent") acquire monotonic',
            "  %ok = icmp eq i32 %old, 0", "  br i1 %ok, label %crit, label %spin", "crit:",
            f"  %c = load i32, {G} @cnt", "  %c1 = add i32 %c, 1", f"  store i32 %c1, {G} @cnt",
            f'  store atomic i32 0, {G} @lock syncscope("agent") release']
    return _test(f"caslock-{c}x{u}", ["lock", "cnt"], c, u, body, f"@cnt != {c}")


def ticket(c: int, u: int) -> str:
    body = ["entry:", f'  %t = atomicrmw add {G} @next, i32 1 syncscope("agent") monotonic',
            "  br label %spin", "spin:",
            f'  %s = load atomic i32, {G} @serving syncscope("agent") acquire',
            "  %mine = icmp eq i32 %s, %t", "  br i1 %mine, label %crit, label %spin", "crit:",
            f"  %c = load i32, {G} @cnt", "  %c1 = add i32 %c, 1", f"  store i32 %c1, {G} @cnt",
            "  %t1 = add i32 %t, 1",
            f'  store atomic i32 %t1, {G} @serving syncscope("agent") release']
    return _test(f"ticket-{c}x{u}", ["next", "serving", "cnt"], c, u, body, f"@cnt != {c}")


def swbarrier(c: int, u: int) -> str:
    threads = []
    for i in range(c):
        threads.append([
            "entry:", f"  store i32 1, {G} @d{i}",
            f'  %t = atomicrmw add {G} @count, i32 1 syncscope("agent") acq_rel',
            "  br label %wait", "wait:",
            f'  %n = load atomic i32, {G} @count syncscope("agent") acquire',
            f"  %more = icmp ult i32 %n, {c}", "  br i1 %more, label %wait, label %go", "go:",
            f"  %r = load i32, {G} @d{(i + 1) % c}"])
    cond = " || ".join(f"P{i}:%r != 1" for i in range(c))
    return _test(f"swbarrier-{c}x{u}", ["count"] + [f"d{i}" for i in range(c)], c, u, threads,
                 cond)


def _test(name, locs, c, u, body, bad) -> str:
    lines = [f"name: {name}", "description: generated", f"unroll: {u}", "bound: assume",
             "memory:"] + [f"  {n}: {{space: global, init: 0}}" for n in locs] + ["threads:"]
    for i in range(c):
        code = body[i] if isinstance(body[0], list) else body
        lines += [f"  P{i}:", f"    workgroup: {i}", "    code: |"]
        lines += [f"      {ln}" for ln in code]
    lines += [f'exists: "{bad}"', "expect: forbidden"]
    return "\n".join(lines) + "\n"


FAMILIES = {"caslock": caslock, "ticket": ticket, "swbarrier": swbarrier}


def candidates(test, model) -> tuple[int, int]:
    """(path combinations, candidate executions of an explicit enumeration)."""
    _, total, gen = combos(test, test.unroll)
    n = 0
    for ct, _ in gen:
        el = elaborate(ct, model)
        k = 1
        for loc in el.locs:
            ws = el.writes_to(loc)
            k *= math.factorial(len([w for w in ws if not w.is_init]))
            for r in el.reads_of(loc):
                k *= 1 + len([w for w in ws if w.id != r.id])
        n += k
    return total, n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--contenders", default="2,3")
    ap.add_argument("--unroll", default="2,3,4")
    ap.add_argument("--family", default="all")
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--decide-only", action="store_true")
    ap.add_argument("--no-symmetry", action="store_true",
                    help="solve every path combination (docs 15.7 R-cf-symmetry)")
    a = ap.parse_args()
    model = get_model(None)
    fams = list(FAMILIES) if a.family == "all" else a.family.split(",")
    print(f"{'family':<10} {'C':>2} {'U':>2} {'combos':>7} {'solved':>7} {'candidates':>14} {'outcomes':>8} "
          f"{'verdict':>8} {'seconds':>8} {'cpu':>7}")
    for fam in fams:
        for c in [int(v) for v in a.contenders.split(",")]:
            for u in [int(v) for v in a.unroll.split(",")]:
                text = FAMILIES[fam](c, u)
                t = parse_text(text, f"{fam}.yaml")
                combos_n, cand = candidates(t, model)
                group = [] if a.no_symmetry else symmetries(t)
                solved = combos_n if len(group) < 2 else sum(
                    1 for _ in symmetric_combos(t, u, group)[2])
                t0, c0 = time.perf_counter(), time.process_time()
                r = run_test(parse_text(text, f"{fam}.yaml"), model, timeout=a.timeout,
                             decide_only=a.decide_only, symmetry=not a.no_symmetry)
                dt, dc = time.perf_counter() - t0, time.process_time() - c0
                print(f"{fam:<10} {c:>2} {u:>2} {combos_n:>7} {solved:>7} {cand:>15.3g} {len(r.states):>8} "
                      f"{r.status:>8} {dt:>8.2f} {dc:>7.2f}", flush=True)


if __name__ == "__main__":
    main()
