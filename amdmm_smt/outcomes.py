"""What both engines share about outcomes (docs/semantics.md section 6 "Final state" and
"Outcome"; the input contract's `exists` / `expect` / `outcomes`): the projection of a final
state (which registers and locations, in which order), conditions over a final state, and the
verdicts of a test's expectations from its outcome set. Neutral ground: neither engine
(`amdmm_smt/encode/` + `solve.py`, `amdmm_smt/reference/`) imports the other."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Optional

from .errors import LitmusError
from .ir import BoolOp, Cmp, Cond, Condition, Const, LocTerm, Not, POISON, RegTerm, Test
from .model import Model

State = tuple  # ((key, value-or-None), ...) sorted by key order of the projection


@dataclass
class Verdict:
    """The verdict of one expectation of a test."""
    kind: str            # exists | outcomes | undefined
    expected: str        # allowed | forbidden | undefined | exact
    status: str          # pass | fail | unknown
    detail: str = ""
    missing: list = field(default_factory=list)      # outcomes: expected but not allowed
    unexpected: list = field(default_factory=list)   # outcomes: allowed but not expected


@dataclass
class Result:
    """What running a test found: its outcomes, verdicts and limits."""
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
    limit: Optional[str] = None   # why --timeout / --memory stopped the test
    listed: bool = True        # False: --decide-only decided without listing the outcomes
    ub: Optional[dict] = None  # undefined behaviour found (docs 10.6): rule, all, op, run
    why: str = ""              # when not complete: what stopped the enumeration, in words
    warnings: list = field(default_factory=list)    # errors.Warn about the test, sorted
    options: tuple = ()        # the model options that differ from the default: ((k, v), ...)

    @property
    def status(self) -> str:
        if self.error:
            return "error"
        if self.limit:
            return "unknown"
        if any(v.status == "unknown" for v in self.verdicts) or (
                not self.complete and not self.verdicts):
            return "unknown"
        if any(v.status == "fail" for v in self.verdicts):
            return "fail"
        return "pass"


# ---- conditions -------------------------------------------------------------------------

def term_key(term) -> str:
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
            return t.value if isinstance(t, Const) else state[term_key(t)]
        eq = val(cond.left) == val(cond.right)
        return eq if cond.op == "==" else not eq
    if isinstance(cond, Not):
        return not eval_cond(cond.arg, state)
    vals = [eval_cond(a, state) for a in cond.args]
    return all(vals) if cond.op == "and" else any(vals)


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
                k = term_key(a)
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


# ---- projection and verdicts ------------------------------------------------------------

def projection(test: Test) -> tuple[list[str], list]:
    keys, terms = [], []
    for t in test.threads:
        # docs section 15.3: with control flow, the i32 registers defined on every path
        regs = t.out_regs if t.out_regs is not None else [i.reg for i in t.code if i.reg]
        for reg in regs:
            keys.append(f"{t.name}:%{reg}")
            terms.append(RegTerm(t.name, reg))
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


def wanted_states(test: Test, keys: list) -> Optional[list]:
    """The states the test's `outcomes:` list, or None when it has none."""
    if test.outcomes is None:
        return None
    return [outcome_state(o, keys, test.file) for o in test.outcomes]


def judge(test: Test, model: Model, keys: list, states: list, complete: bool,
          exists_query, t0: float, outcome_states: Optional[list]) -> Result:
    """Verdicts for every expectation of the test, from its outcome set."""
    verdicts: list[Verdict] = []
    any_defined = bool(states)
    undefined = complete and not states
    if test.exists is not None and test.expect in ("allowed", "forbidden", None):
        reachable = exists_query()   # no expect: a question without a claim, never a failure
        if reachable is None:
            verdicts.append(Verdict("exists", test.expect or "no claim", "unknown",
                                    "undecided"))
        else:
            ok = test.expect is None or reachable == (test.expect == "allowed")
            verdicts.append(Verdict("exists", test.expect or "no claim", "pass" if ok else "fail",
                                    f"condition {'reachable' if reachable else 'unreachable'}"))
    if test.expect == "undefined":
        if not complete:
            verdicts.append(Verdict("undefined", "undefined", "unknown", "undecided"))
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
                  time.perf_counter() - t0, undefined=undefined and test.expect == "undefined",
                  options=model.changed_options())


def gave_up(test: Test, model: Model, why: str, seconds: float = 0.0) -> Result:
    """An `unknown` result: every expectation undecided, with the reason in words (for example
    the solver running out of --memory, which Z3 raises as an exception)."""
    verdicts = []
    if test.exists is not None and test.expect in ("allowed", "forbidden"):
        verdicts.append(Verdict("exists", test.expect, "unknown", why))
    if test.expect == "undefined":
        verdicts.append(Verdict("undefined", "undefined", "unknown", why))
    if test.outcomes is not None:
        verdicts.append(Verdict("outcomes", "exact", "unknown", why))
    return Result(test, model.name, [], [], False, verdicts, seconds, why=why,
                  options=model.changed_options())


def state_sort_key(state: State):
    return tuple((0, v) if isinstance(v, int) else ((1, 0) if v is None else (2, 0))
                 for _, v in state)


# ---- states held compactly (issue 30 item 2) ---------------------------------------------
#
# A listing holds each state as one Python int (about 100 bytes for 17 registers, against
# about 1.5 KiB for a tuple of (key, value) pairs): per key, 33 bits, the first key most
# significant; an undef value is 1 << 32, a defined value v is (v mod 2**32) ^ 2**31 (signed
# order as unsigned). So the ints sort as state_sort_key sorts the states (numbers ascending,
# undef after every number, poison (1 << 32 | 1) last), and a sorted listing is a sorted list of ints, decoded at print
# time.

FIELD = 33
_SIGN = 1 << 31
_UNDEF = 1 << 32
_POISON = _UNDEF | 1       # poison sorts after undef, as state_sort_key has it
_MASK = (1 << FIELD) - 1


def pack_values(vals) -> int:
    """The packed int of a state's values (None: undef, POISON: poison), in key order."""
    n = 0
    for v in vals:
        n = (n << FIELD) | (_UNDEF if v is None else _POISON if v == POISON
                            else ((v & 0xFFFFFFFF) ^ _SIGN))
    return n


def unpack_values(n: int, width: int) -> tuple:
    """The values of a packed state with `width` keys (inverse of pack_values)."""
    vals = [None] * width
    for i in range(width - 1, -1, -1):
        f = n & _MASK
        n >>= FIELD
        if f & _UNDEF:
            vals[i] = POISON if f & 1 else None
        else:
            v = f ^ _SIGN
            vals[i] = v - (1 << 32) if v & _SIGN else v
    return tuple(vals)


class PackedStates:
    """A sorted listing held as packed ints (pack_values), read as the list of states
    ((key, value), ...) it stands for: len, indexing, slicing, iteration (each state decoded
    when it is reached), equality with a list of states. Pickled as keys and ints."""

    __slots__ = ("keys", "ints")

    def __init__(self, keys, ints):
        self.keys = tuple(keys)
        self.ints = sorted(ints)

    @classmethod
    def of(cls, keys, states) -> "PackedStates":
        """From states ((key, value), ...) in `keys` order."""
        return cls(keys, {pack_values(v for _, v in st) for st in states})

    def state(self, n: int) -> State:
        return tuple(zip(self.keys, unpack_values(n, len(self.keys))))

    def __len__(self) -> int:
        return len(self.ints)

    def __bool__(self) -> bool:
        return bool(self.ints)

    def __iter__(self):
        for n in self.ints:
            yield self.state(n)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self.state(n) for n in self.ints[i]]
        return self.state(self.ints[i])

    def __eq__(self, other) -> bool:
        if isinstance(other, PackedStates):
            return self.keys == other.keys and self.ints == other.ints
        if isinstance(other, (list, tuple)):
            return len(other) == len(self.ints) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None    # a list's equality, a list's hashability

    def __getstate__(self):
        return (self.keys, self.ints)

    def __setstate__(self, st):
        self.keys, self.ints = st

    def __repr__(self) -> str:
        return f"PackedStates({list(self)!r})"


def judge_ub(res: Result, an) -> None:
    """docs/semantics.md 10.6 (R-bar-ub): undefined behaviour in some or every execution is
    never a clean pass. `an`: an engine's barrier analysis (`ub_rule()`, `ub`: rule -> (op, run),
    `all_undefined`). Shared by both engines (moved from solve.py)."""
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
    ub_verdict(res, f"{rule} at {op}", an.all_undefined)


class FlagUB:
    """A model file's `flag ~empty e as NAME` that holds in some consistent execution
    (docs/semantics.md §18, reported as 10.6 reports barrier undefined behaviour): the
    analysis `judge_ub` reads, the same in both engines. The executions where `e` is not
    empty are undefined; `every`: no consistent execution is defined."""

    def __init__(self, name: str, file: str, line: int, every: bool):
        import os
        where = f"{os.path.basename(file)}:{line}"
        self.rule = f"flag {name}"
        self.ub = {self.rule: (where, [f"the model file's flag '{name}' ({where}) is not "
                                      "empty in this execution"])}
        self.all_undefined = every

    def ub_rule(self) -> str:
        return self.rule


def ub_verdict(res: Result, where: str, every: bool) -> None:
    """docs 10.6 (R-bar-ub), for every kind of undefined behaviour (barrier rules, branch on
    undef): in every execution it passes only `expect: undefined`; in some executions it passes
    only a test that declares `undefined: some`; `where` names the rule and the operation."""
    test = res.test
    if test.exists is not None and test.expect is None and test.outcomes is None \
            and getattr(test, "undefined", None) is None:
        # a test without a claim (an imported herd test: `exists` and no `expect`) gets undefined
        # behaviour as part of its answer, as herd users expect a result (issue 19 item 2);
        # `verify --undefined fail` makes it a failure
        res.verdicts.append(Verdict("undefined", "reported", "pass",
                                    f"undefined behaviour in {'every' if every else 'some'} "
                                    f"execution{'' if every else 's'}: {where} (no claim: "
                                    "reported; --undefined fail fails it)"))
        return
    if every:
        if test.expect == "undefined":
            for v in res.verdicts:
                if v.kind == "undefined":
                    v.detail += f" ({where})"
            return
        res.verdicts.append(Verdict("undefined", "defined", "fail",
                                    f"undefined behaviour in every execution: {where}"))
        return
    if getattr(test, "undefined", None) == "some":
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


def limit_result(test: Test, model, reason: str, seconds: float) -> Result:
    """The unknown result of a test stopped by --timeout or --memory (amdmm_smt/limits.py):
    every expectation it has is unknown, with the reason. `model`: a Model, or its name when
    the model could not be loaded."""
    if isinstance(model, Model):
        r = gave_up(test, model, reason, seconds)
    else:
        r = Result(test, str(model), [], [], False, [], seconds, why=reason)
        r.verdicts = gave_up(test, _NoModel(), reason).verdicts
    try:
        r.keys = projection(test)[0]
    except Exception:   # the reason matters more than the column names
        pass
    r.limit = reason
    return r


class _NoModel:
    name = "?"

    @staticmethod
    def changed_options() -> tuple:
        return ()


WAVE_UNIFORM = (" (S002: \"barrier operations can only be performed in wave-uniform control "
                "flow\")")


def bar_ub_record(ub: dict, path: str) -> dict:
    """docs 15.9: the barrier undefined behaviour (the record of 10.6) of the first path
    combination, in combination order, that has it and has an execution; with that path."""
    return {"rule": ub["rule"], "op": ub["op"], "run": list(ub["run"]),
            "rules": list(ub.get("rules", [ub["rule"]])), "path": path}


def cf_verdicts(res: Result, test: Test, bound: int, cut, ub, complete: bool, states,
                assumed: bool = False, bar_ub: Optional[dict] = None) -> None:
    """docs 15.2 (bound reached; `bound: assume` that assumes every execution away) and 15.5
    (branch on undef): shared by both engines. `assumed`: some cut combination had a defined
    execution that `bound: assume` assumed away. `bar_ub`: barrier undefined behaviour on a
    path combination (docs 15.9, bar_ub_record), judged like 10.6 over the whole test."""
    if assumed and complete and not states and ub is None and bar_ub is None:
        # docs 15.2: nothing is left to judge: every expectation would hold vacuously
        from .errors import Warn
        res.warnings.append(Warn("bound-assumed-all", "`bound: assume` assumed every "
                                 f"execution away (unroll: {bound}): no execution is left",
                                 test.file, test.line))
        # issue 28 item 5: no verdict is drawn from the empty set, claim or no claim: every
        # expectation (also a claimless exists) is unknown, and so is the test (exit 1)
        why = (f"every execution was assumed away by `bound: assume` (unroll: {bound}): "
               "nothing is left to judge; raise unroll, or check the loop can exit")
        for v in res.verdicts:
            v.status, v.detail = "unknown", why
        res.verdicts.append(Verdict("bound", "some execution within bound", "unknown", why))
        res.complete = False
        res.why = res.why or why
    if cut is not None:
        thread, block, line = cut
        res.verdicts.append(Verdict(
            "bound", "within bound", "fail",
            f"bound reached: thread {thread} would run block %{block} (line {line}) more than "
            f"{bound} time(s) (unroll: {bound}); raise unroll, or declare `bound: assume` for "
            "an await loop"))
    if ub is not None:
        thread, line = ub
        every = complete and not states
        res.cf_ub = ub
        # the record of docs 10.6 (R-bar-ub), judged the same way
        res.ub = {"rule": "branch-on-undef", "all": every, "op": f"{thread} line {line}",
                  "run": [f"{thread} branches on an undef or poison condition (LangRef br: "
                          "undefined behaviour; docs 15.5)"], "rules": ["branch-on-undef"]}
        ub_verdict(res, f"branch on undef at {thread}, line {line}", every)
    elif bar_ub is not None:
        every = complete and not states
        res.ub = dict(bar_ub, all=every)
        where = f" (path {bar_ub['path']})" if bar_ub["path"] else ""
        ub_verdict(res, f"{bar_ub['rule']} at {bar_ub['op']}{where}", every)
    elif complete and getattr(test, "undefined", None) == "some":
        res.verdicts.append(Verdict("undefined", "some", "fail", "no execution is undefined"))
    elif test.expect == "undefined" and complete:
        for v in res.verdicts:
            if v.kind == "undefined":
                v.status, v.detail = "fail", "no execution branches on undef (no undefined " \
                    "behaviour)"
