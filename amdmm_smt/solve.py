"""Stage 4: solve. Enumerate every distinct final state the model allows (blocking each
projected state until UNSAT), and decide each expectation with its own solver query, so that
`expect: forbidden` is a proof (UNSAT of model ∧ condition)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Optional

import z3

from .elaborate import elaborate
from .encode import encode
from .encode.execution import Execution
from .encode.logic import AND, NOT, OR
from .errors import LitmusError
from .ir import BoolOp, Cmp, Cond, Condition, Const, LocTerm, Not, RegTerm, Test
from .model import Model

State = tuple  # ((key, value-or-None), ...) sorted by key order of the projection


@dataclass
class Verdict:
    kind: str            # exists | outcomes | undefined
    expected: str        # allowed | forbidden | undefined | exact
    status: str          # pass | fail | unknown
    detail: str = ""
    missing: list = field(default_factory=list)      # outcomes: expected but not allowed
    unexpected: list = field(default_factory=list)   # outcomes: allowed but not expected


@dataclass
class Result:
    test: Test
    model: str
    keys: list[str]
    states: list[State]
    complete: bool
    verdicts: list[Verdict]
    seconds: float
    undefined: bool = False
    error: Optional[str] = None
    thin_air: bool = False     # outcome set unbounded: values out of thin air
    ub: Optional[dict] = None  # undefined behaviour found (docs 10.6): rule, all, op, run

    @property
    def status(self) -> str:
        if self.error:
            return "error"
        if any(v.status == "unknown" for v in self.verdicts) or (
                not self.complete and not self.verdicts):
            return "unknown"
        if any(v.status == "fail" for v in self.verdicts):
            return "fail"
        return "pass"


# ---- conditions -------------------------------------------------------------------------

def _key(term) -> str:
    return f"{term.thread}:%{term.reg}" if isinstance(term, RegTerm) else f"@{term.loc}"


def cond_locations(cond: Cond) -> set[str]:
    if isinstance(cond, Cmp):
        return {t.loc for t in (cond.left, cond.right) if isinstance(t, LocTerm)}
    if isinstance(cond, Not):
        return cond_locations(cond.arg)
    return set().union(*(cond_locations(a) for a in cond.args))


def eval_cond(cond: Cond, state: dict) -> bool:
    """`undef` is a value of its own: `%r == 0` is false when %r is undef."""
    if isinstance(cond, Cmp):
        def val(t):
            return t.value if isinstance(t, Const) else state[_key(t)]
        eq = val(cond.left) == val(cond.right)
        return eq if cond.op == "==" else not eq
    if isinstance(cond, Not):
        return not eval_cond(cond.arg, state)
    vals = [eval_cond(a, state) for a in cond.args]
    return all(vals) if cond.op == "and" else any(vals)


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


def outcome_state(c: Condition, keys: list[str], file: str) -> State:
    """An `outcomes` entry must be a conjunction of `term == value` fixing every key."""
    fixed: dict[str, Optional[int]] = {}

    def walk(n):
        if isinstance(n, BoolOp) and n.op == "and":
            for a in n.args:
                walk(a)
            return
        if isinstance(n, Cmp) and n.op == "==":
            a, b = n.left, n.right
            if isinstance(a, Const):
                a, b = b, a
            if isinstance(b, Const) and not isinstance(a, Const):
                k = _key(a)
                if k in fixed and fixed[k] != b.value:
                    raise LitmusError(f"outcome \"{c.text}\" fixes {k} twice", file, c.line)
                fixed[k] = b.value
                return
        raise LitmusError(f"outcome \"{c.text}\" must be a conjunction of `register == value` "
                          "(and `@location == value`)", file, c.line)
    walk(c.cond)
    missing = [k for k in keys if k not in fixed]
    if missing:
        raise LitmusError(f"outcome \"{c.text}\" does not fix {', '.join(missing)}", file,
                          c.line)
    return tuple((k, fixed[k]) for k in keys)


def format_state(state: State) -> str:
    return " && ".join(f"{k} == {'undef' if v is None else v}" for k, v in state)


def _signed(v: int) -> int:
    return v - 2 ** 32 if v >= 2 ** 31 else v


# ---- the run ----------------------------------------------------------------------------

def projection(test: Test) -> tuple[list[str], list]:
    keys, terms = [], []
    for t in test.threads:
        for ins in t.code:
            if ins.reg:
                keys.append(f"{t.name}:%{ins.reg}")
                terms.append(RegTerm(t.name, ins.reg))
    locs: set[str] = set()
    if test.exists:
        locs |= cond_locations(test.exists.cond)
    for o in test.outcomes or []:
        locs |= cond_locations(o.cond)
    for n in test.memory:
        if n in locs:
            keys.append(f"@{n}")
            terms.append(LocTerm(n))
    return keys, terms


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
    wanted = _wanted(test, keys)       # malformed outcomes are an input error, before solving
    zterms = [_term_z3(x, t) for t in terms]

    def left_ms() -> int:
        return int(max(0.001, deadline - time.perf_counter()) * 1000)

    s = _solver(x, left_ms())
    s.add(NOT(x.ub) if not isinstance(x.ub, bool) else z3.BoolVal(not x.ub))
    reachable: Optional[bool] = None
    if test.exists is not None and test.expect in ("allowed", "forbidden"):
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
    thin_air = _thin_air(test, x, s, left_ms)
    while not thin_air:
        s.set("timeout", left_ms())
        r = s.check()
        if r == z3.unsat:
            break
        if r == z3.unknown or len(states) >= max_outcomes:
            complete = False
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
    res = _judge(test, model, keys, states, complete, lambda: reachable, t0, wanted)
    res.thin_air = thin_air
    if x.bar is not None:
        judge_ub(res, x.bar)
    return res


def judge_ub(res: Result, an) -> None:
    """docs/semantics.md 10.6 (R-bar-ub): undefined behaviour in some or every execution is
    never a clean pass. `an`: the barrier analysis (encode/barrier.py)."""
    test = res.test
    rule = an.ub_rule()
    if rule is None:
        if test.undefined == "some":
            res.verdicts.append(Verdict("undefined", "some", "fail",
                                        "no execution is undefined"))
        return
    op, run = an.ub[rule]
    res.ub = {"rule": rule, "all": an.all_undefined, "op": op, "run": run,
              "rules": sorted(an.ub)}
    where = f"{rule} at {op}"
    if an.all_undefined:
        if test.expect == "undefined":
            for v in res.verdicts:
                if v.kind == "undefined":
                    v.detail += f" ({where})"
            return
        res.verdicts.append(Verdict("undefined", "defined", "fail",
                                    f"undefined behaviour in every execution: {where}"))
        return
    if test.undefined == "some":
        res.verdicts.append(Verdict("undefined", "some", "pass",
                                    f"undefined in some executions: {where}"))
    elif test.expect != "undefined":
        res.verdicts.append(Verdict("undefined", "defined", "fail",
                                    f"undefined behaviour in some executions: {where} (a test "
                                    "that means it declares `undefined: some`)"))
    else:
        for v in res.verdicts:
            if v.kind == "undefined":
                v.detail += f"; undefined only in some executions: {where}"


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


def run_reference(test: Test, model: Model, limit: int = 2_000_000) -> Result:
    """The same answer from the independent explicit enumerator (amdmm_smt/reference.py)."""
    from .reference import ReferenceTooBig, reference_outcomes
    t0 = time.perf_counter()
    elab = elaborate(test, model)
    keys, _ = projection(test)
    wanted = _wanted(test, keys)
    try:
        states, complete = sorted(reference_outcomes(elab, limit), key=state_sort_key), True
    except ReferenceTooBig:
        states, complete = [], False

    def exists_query() -> Optional[bool]:
        if not complete:
            return None
        return any(eval_cond(test.exists.cond, dict(st)) for st in states)
    return _judge(test, model, keys, states, complete, exists_query, t0, wanted)


def _wanted(test: Test, keys: list) -> Optional[list]:
    """The states the test's `outcomes:` list, or None when it has none."""
    if test.outcomes is None:
        return None
    return [outcome_state(o, keys, test.file) for o in test.outcomes]


def _judge(test: Test, model: Model, keys: list, states: list, complete: bool,
           exists_query, t0: float, outcome_states: Optional[list]) -> Result:
    """Verdicts for every expectation of the test, from its outcome set."""
    verdicts: list[Verdict] = []
    any_defined = bool(states)
    undefined = complete and not states
    if test.exists is not None and test.expect in ("allowed", "forbidden"):
        reachable = exists_query()
        if reachable is None:
            verdicts.append(Verdict("exists", test.expect, "unknown", "solver gave up"))
        else:
            ok = reachable == (test.expect == "allowed")
            verdicts.append(Verdict("exists", test.expect, "pass" if ok else "fail",
                                    f"condition {'reachable' if reachable else 'unreachable'}"))
    if test.expect == "undefined":
        if not complete:
            verdicts.append(Verdict("undefined", "undefined", "unknown", "solver gave up"))
        else:
            verdicts.append(Verdict("undefined", "undefined", "pass" if not any_defined else
                                    "fail", "no defined execution" if not any_defined else
                                    f"{len(states)} defined outcome(s)"))
    if outcome_states is not None:
        want = set(outcome_states)
        got = set(states)
        missing = sorted(want - got, key=state_sort_key)
        unexpected = sorted(got - want, key=state_sort_key)
        status = "unknown" if not complete else ("pass" if not missing and not unexpected
                                                 else "fail")
        verdicts.append(Verdict("outcomes", "exact", status,
                                f"{len(got)} allowed, {len(want)} expected",
                                missing=missing, unexpected=unexpected))
    return Result(test, model.name, keys, states, complete, verdicts,
                  time.perf_counter() - t0, undefined=undefined and test.expect == "undefined")


def state_sort_key(state: State):
    return tuple((0, v) if v is not None else (1, 0) for _, v in state)
