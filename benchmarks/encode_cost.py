"""Where deciding a dense test spends its CPU (issue 30 item 1): the encoding built in Python
against Z3's check, for issue 30's three decide figures.

    PYTHONPATH=$PWD python3 benchmarks/encode_cost.py [--runs N] [--profile] [--micro]
                                              [--model-file [--limit S]]

For each case (4 threads x 16 operations, 16 x 8, 8 x 25; benchmarks/families.py's
ops_per_thread): the median CPU seconds of N runs, each in a fresh process (bench.py --one
style, parse to verdict), against issue 30's goal; with --profile, one cProfile run of each
that splits the time into Z3's check, the AND/OR helpers (encode/logic.py) and the
happens-before closure (encode/sync.py _closure). Only measures; nothing asserts a time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ENV = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + HERE + os.pathsep
           + os.environ.get("PYTHONPATH", ""))

CASES = [("decide 4 threads x 16 operations", "ops-per-thread", 16, 0.5),
         ("decide 16 threads x 8 operations", "ops-16threads", 8, 2.0),
         ("decide 8 threads x 25 operations", "ops-8threads", 25, 5.0)]

_MODEL_CHILD = """
import sys, json, time
sys.argv = ['x']
import bench
from amdmm_smt.model import get_model
from amdmm_smt.frontend.litmus import parse_text
from amdmm_smt.solve import run_test
fam, n, path, limit = %r, %d, %r, %r
f = bench.CASES[fam] if fam in bench.CASES else bench.FAMILIES[fam][0]
t = parse_text(f(n), 'x.yaml')
m = get_model(path)
c = time.process_time()
r = run_test(t, m, timeout=limit, decide_only=True)
print(json.dumps({'cpu': time.process_time() - c, 'status': r.status}))
"""

_CHILD = """
import sys, json, cProfile, pstats, io
sys.argv = ['x']
import bench
fam, n, prof = %r, %d, %r
if not prof:
    print(json.dumps(bench.one(fam, n, 'decide')))
else:
    p = cProfile.Profile()
    p.enable(); r = bench.one(fam, n, 'decide'); p.disable()
    st = pstats.Stats(p).stats
    def cum(name, file=''):
        return sum(v[3] for k, v in st.items() if k[2] == name and file in k[0])
    def tot(name, file=''):
        return sum(v[2] for k, v in st.items() if k[2] == name and file in k[0])
    total = sum(v[2] for v in st.values())
    print(json.dumps({'total': total,
                      'check': tot('Z3_solver_check_assumptions') + tot('Z3_solver_check'),
                      'and_or': cum('AND', 'logic.py') + cum('OR', 'logic.py'),
                      'closure': cum('_closure', 'sync.py'),
                      'del': cum('__del__', 'z3.py')}))
"""


def child(fam: str, n: int, prof: bool) -> dict:
    out = subprocess.run([sys.executable, "-c", _CHILD % (fam, n, prof)], env=ENV,
                         cwd=HERE, capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def micro() -> None:
    """The per-term cost of the two ways to build terms: the encoder's ctypes AND/OR path
    (encode/logic.py) against SMT-LIB text parsed by z3.parse_smt2_string with declared
    decls; 40,000 assertions of (a and b) or (c and d), 120,000 terms."""
    import time
    import z3
    from amdmm_smt.encode.logic import AND, OR
    n = 200
    v = [z3.Bool(f"v{i}") for i in range(n)]
    idx = [(i, (i * 7 + 3) % n, (i + 1) % n, (i * 3 + 1) % n) for i in range(n)] * 200

    def py() -> float:
        # asserted as solve.py does: Z3_solver_assert directly, not Solver.add
        s, t = z3.Solver(), time.process_time()
        ctx, sol, assert_ = s.ctx.ref(), s.solver, z3.z3core.Z3_solver_assert
        for a, b, c, d in idx:
            assert_(ctx, sol, OR(AND(v[a], v[b]), AND(v[c], v[d])).as_ast())
        return time.process_time() - t

    def smt() -> float:
        s, t = z3.Solver(), time.process_time()
        txt = "".join(f"(assert (or (and v{a} v{b}) (and v{c} v{d})))\n" for a, b, c, d in idx)
        s.add(z3.parse_smt2_string(txt, decls={f"v{i}": v[i] for i in range(n)}))
        return time.process_time() - t

    def smt_solver() -> float:
        # the text straight into the solver (Z3_solver_from_string): no Python object per
        # assertion; the constants declared in the text are the same terms as z3.Bool(name)
        s, t = z3.Solver(), time.process_time()
        txt = "".join(f"(declare-const v{i} Bool)\n" for i in range(n)) + "".join(
            f"(assert (or (and v{a} v{b}) (and v{c} v{d})))\n" for a, b, c, d in idx)
        s.from_string(txt)
        return time.process_time() - t

    tp = statistics.median(py() for _ in range(3))
    ts = statistics.median(smt() for _ in range(3))
    tf = statistics.median(smt_solver() for _ in range(3))
    print(f"\n{'120,000 terms asserted':<36}{'CPU s':>8}{'us/term':>9}")
    print(f"{'  ctypes AND/OR (encode/logic.py)':<36}{tp:>8.3f}{tp / 120000 * 1e6:>9.2f}")
    print(f"{'  SMT-LIB text, parse_smt2_string':<36}{ts:>8.3f}{ts / 120000 * 1e6:>9.2f}")
    print(f"{'  SMT-LIB text, Solver.from_string':<36}{tf:>8.3f}{tf / 120000 * 1e6:>9.2f}")


def model_file(limit: float) -> None:
    """The same three cases through models/seed.cat compiled by encode/cat_z3.py (issue 30
    item 1: a compiled model file should reach these figures too)."""
    seed = os.path.join(ROOT, "models", "seed.cat")
    print(f"\n{'models/seed.cat (cat_z3), one run':<36}{'CPU s':>13}{'goal':>8}")
    for name, fam, n, goal in CASES:
        out = subprocess.run([sys.executable, "-c", _MODEL_CHILD % (fam, n, seed, limit)],
                             env=ENV, cwd=HERE, capture_output=True, text=True,
                             check=True).stdout
        r = json.loads(out.strip().splitlines()[-1])
        shown = f"{r['cpu']:.3f}" if r["status"] != "unknown" else f"> {limit:g}"
        print(f"{name:<36}{shown:>13}{'< ' + format(goal, 'g'):>8}  "
              f"{'met' if r['status'] != 'unknown' and r['cpu'] < goal else 'NOT met'}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--micro", action="store_true",
                    help="only the per-term cost: ctypes AND/OR against SMT-LIB text")
    ap.add_argument("--model-file", action="store_true",
                    help="also the three cases through models/seed.cat (slow: a limit each)")
    ap.add_argument("--limit", type=float, default=60.0,
                    help="seconds for each --model-file case (default 60)")
    a = ap.parse_args()
    if a.micro:
        micro()
        return
    print(f"{'case':<36}{'median CPU s':>13}{'goal':>8}  runs")
    for name, fam, n, goal in CASES:
        cpus = [child(fam, n, False)["cpu"] for _ in range(a.runs)]
        med = statistics.median(cpus)
        print(f"{name:<36}{med:>13.3f}{'< ' + format(goal, 'g'):>8}  "
              f"{'met' if med < goal else 'NOT met'}  {' '.join(f'{c:.2f}' for c in cpus)}")
    if a.model_file:
        model_file(a.limit)
    if a.profile:
        print(f"\n{'profile (share of CPU under cProfile)':<36}{'Z3 check':>10}{'AND/OR':>9}"
              f"{'closure':>9}{'z3 __del__':>11}")
        for name, fam, n, _ in CASES:
            p = child(fam, n, True)
            t = p["total"] or 1.0
            print(f"{name:<36}{p['check'] / t:>10.0%}{p['and_or'] / t:>9.0%}"
                  f"{p['closure'] / t:>9.0%}{p['del'] / t:>11.0%}")


if __name__ == "__main__":
    main()
