"""Stage 4: solve. Enumerate every distinct final state the model allows (blocking each
projected state until UNSAT), and decide each expectation with its own solver query, so that
`expect: forbidden` is a proof (UNSAT of model ∧ condition)."""

from __future__ import annotations

import time
from typing import Optional

import z3

from .elaborate import elaborate
from .encode import encode
from .encode.execution import Execution
from .encode.logic import AND, NOT, OR
from .ir import Cmp, Cond, Const, Not, RegTerm, Test
from .model import Model
from .outcomes import (Result, State, judge, judge_ub, projection, state_sort_key,
                       wanted_states)


# ---- conditions -------------------------------------------------------------------------

def _term_z3(x: Execution, t):
    if isinstance(t, Const):
        return (True, z3.BitVecVal(0, 32)) if t.value is None else (False,
                                                                    z3.BitVecVal(t.value, 32))
    if isinstance(t, RegTerm):
        return x.reg_term(t.thread, t.reg)
    return x.final[t.loc]


def cond_z3(x: Execution, cond: Cond):
    if isinstance(cond, Cmp):
        (lu, lv), (ru, rv) = _term_z3(x, cond.left), _term_z3(x, cond.right)
        both_undef = AND(lu, ru)
        both_def_eq = AND(NOT(lu), NOT(ru), lv == rv)
        eq = OR(both_undef, both_def_eq)
        return eq if cond.op == "==" else NOT(eq)
    if isinstance(cond, Not):
        return NOT(cond_z3(x, cond.arg))
    parts = [cond_z3(x, a) for a in cond.args]
    return AND(*parts) if cond.op == "and" else OR(*parts)


def _signed(v: int) -> int:
    return v - 2 ** 32 if v >= 2 ** 31 else v


# ---- the run ----------------------------------------------------------------------------

def _solver(x: Execution, timeout_ms: int) -> z3.Solver:
    s = z3.Solver()
    s.set("timeout", max(1, int(timeout_ms)))
    s.add(*x.ctx.constraints) if x.ctx.constraints else None
    return s


def run_test(test: Test, model: Model, timeout: float = 600.0,
             max_outcomes: int = 100000, memory_mb: Optional[int] = None) -> Result:
    """Enumerate the test's outcomes and decide its expectations. Past `timeout` seconds or
    `memory_mb` of solver memory the solver gives up and the test is reported unknown."""
    if memory_mb:
        z3.set_param("memory_max_size", int(memory_mb))
    t0 = time.perf_counter()
    deadline = t0 + timeout
    elab = elaborate(test, model)
    x = encode(elab)
    keys, terms = projection(test)
    wanted = wanted_states(test, keys)       # malformed outcomes are an input error, before solving
    zterms = [_term_z3(x, t) for t in terms]

    def left_ms() -> int:
        return int(max(0.001, deadline - time.perf_counter()) * 1000)

    s = _solver(x, left_ms())
    s.add(NOT(x.ub) if not isinstance(x.ub, bool) else z3.BoolVal(not x.ub))
    reachable: Optional[bool] = None
    if test.exists is not None and test.expect in ("allowed", "forbidden", None):
        # `expect: forbidden` is a proof: UNSAT of model ∧ condition. Asked first, on the same
        # solver (push / pop), so the enumeration below reuses what it learnt.
        s.push()
        c = cond_z3(x, test.exists.cond)
        s.add(c if not isinstance(c, bool) else z3.BoolVal(c))
        r = s.check()
        reachable = None if r == z3.unknown else r == z3.sat
        s.pop()
    states: list[State] = []
    complete = True
    why = ""
    thin_air = _thin_air(test, x, s, left_ms)
    while not thin_air:
        s.set("timeout", left_ms())
        r = s.check()
        if r == z3.unsat:
            break
        if r == z3.unknown or len(states) >= max_outcomes:
            complete = False
            why = (f"stopped at {max_outcomes} outcomes" if r != z3.unknown else
                   f"the solver gave up ({s.reason_unknown()}) within --timeout {timeout:g} s")
            break
        m = s.model()
        vals, block = [], []
        for (u, v) in zterms:
            uu = bool(z3.is_true(m.eval(u, model_completion=True))) if not isinstance(
                u, bool) else u
            if uu:
                vals.append(None)
                block.append(NOT(u))
            else:
                vv = _signed(m.eval(v, model_completion=True).as_long())
                vals.append(vv)
                block.append(OR(u, v != z3.BitVecVal(vv, 32)))
        states.append(tuple(zip(keys, vals)))
        blk = OR(block)
        if blk is False:      # nothing to project: one state only
            break
        s.add(blk)
    states = sorted(set(states), key=state_sort_key)

    if thin_air:
        complete = False
    res = judge(test, model, keys, states, complete, lambda: reachable, t0, wanted)
    res.thin_air = thin_air
    res.why = why
    res.warnings = list(elab.warnings)
    if x.bar is not None:
        judge_ub(res, x.bar)
    return res


THIN_AIR_PROBES = (0x5EED1234, 0x0BADF00D)


def _thin_air(test: Test, x: Execution, s: z3.Solver, left_ms) -> bool:
    """Can a read return a value nothing in the test computes? Only possible when a register
    flows into a write (load buffering through data dependencies, with no no-thin-air axiom
    in the documents, docs R-no-thin-air); then the outcome set is unbounded and cannot be
    enumerated. Probed with two arbitrary constants: both reachable means any value is."""
    if not any(ins.uses() for t in test.threads for ins in t.code if ins.writes):
        return False
    reads = [e for e in x.ev if e.reads]
    for probe in THIN_AIR_PROBES:
        s.push()
        s.set("timeout", left_ms())
        s.add(z3.Or([z3.And(z3.Not(x.rundef[e.id]) if not isinstance(x.rundef[e.id], bool)
                            else z3.BoolVal(not x.rundef[e.id]),
                            x.rval[e.id] == z3.BitVecVal(probe, 32)) for e in reads]))
        r = s.check()
        s.pop()
        if r != z3.sat:
            return False
    return True


