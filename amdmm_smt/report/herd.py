"""`verify --format herd`: herd7's result block per test (issue 19 item 4), so that herd users'
habits and `mcompare7` / `msum7`-style pipelines carry over. The mapping (docs/herd-import.md
"Output in herd's format"):

    Test NAME Allowed|Required          Required for a .litmus `forall`, else Allowed
    States N                            the distinct final states restricted to what the
    0:r0=1; 1:r1=undef; x=2;            condition names (as herd shows them; every register and
                                        location named by the outcome without a condition),
                                        thread index:register, locations (undef as is)
    Ok|No|Undecided                     the condition's verdict; Undecided: not decided
    Witnesses
    Positive: P Negative: N             counts of final STATES (herd counts executions)
    Flag undefined-behaviour            when some execution is undefined (like herd's flags)
    Condition exists|~exists|forall (C) the condition in herd's syntax (/\\ \\/ ~ =)
    Observation NAME Never|Sometimes|Always S U    S, U: states satisfying / not the condition
    Time NAME 0.01                      left out under --no-timing

A YAML test's quantifier: `expect: forbidden` is `~exists`, any other `exists`; a test without
`exists:` has the condition `true`. A .litmus test keeps its own quantifier.
"""

from __future__ import annotations

import re

from ..ir import BoolOp, Cmp, LocTerm, Not, RegTerm
from ..outcomes import Result, eval_cond, state_sort_key, term_key


def _terms(c, out: list) -> list:
    if isinstance(c, Cmp):
        for t in (c.left, c.right):
            if isinstance(t, (RegTerm, LocTerm)) and term_key(t) not in out:
                out.append(term_key(t))
    elif isinstance(c, Not):
        _terms(c.arg, out)
    elif isinstance(c, BoolOp):
        for a in c.args:
            _terms(a, out)
    return out


def _reg_name(test, reg: str) -> str:
    """A .litmus test's register as herd names it: the importer gives a re-assigned C variable
    `r0.1`, `r0.2` (docs/herd-import.md); herd shows `r0`."""
    return re.sub(r"\.\d+$", "", reg) if getattr(test, "quantifier", None) else reg


def _quantifier(test) -> str:
    q = getattr(test, "quantifier", None)
    if q:
        return q
    return "~exists" if test.expect == "forbidden" else "exists"


def _term(t, index: dict, test=None) -> str:
    if isinstance(t, RegTerm):
        return f"{index.get(t.thread, t.thread)}:{_reg_name(test, t.reg)}"
    if isinstance(t, LocTerm):
        return t.loc
    return "undef" if t.value is None else str(t.value)


def herd_cond(c, index: dict, top: bool = True, test=None) -> str:
    """A condition of ours in herd's syntax."""
    if isinstance(c, Cmp):
        s = f"{_term(c.left, index, test)}={_term(c.right, index, test)}"
        return s if c.op == "==" else f"~{s}"
    if isinstance(c, Not):
        return f"~({herd_cond(c.arg, index, False, test)})"
    if isinstance(c, BoolOp):
        op = " /\\ " if c.op == "and" else " \\/ "
        s = op.join(herd_cond(a, index, False, test) for a in c.args)
        return s if top else f"({s})"
    raise TypeError(c)          # pragma: no cover


def _state_line(state, index: dict, test) -> str:
    parts = []
    for key, v in state:
        val = "undef" if v is None else str(v)
        if key.startswith("@"):
            parts.append(f"{key[1:]}={val};")
        else:
            th, reg = key.split(":", 1)
            parts.append(f"{index.get(th, th)}:{_reg_name(test, reg.lstrip('%'))}={val};")
    return " ".join(parts)


def herd_block(r: Result, timing: bool = True) -> str:
    t = r.test
    index = {th.name: i for i, th in enumerate(t.threads)}
    q = _quantifier(t)
    cond = t.exists.cond if t.exists is not None else None
    keep = _terms(cond, []) if cond is not None else None
    states = sorted({tuple((k, v) for k, v in s if keep is None or k in keep) for s in r.states},
                    key=state_sort_key)
    if q == "forall" and cond is not None and isinstance(cond, Not):
        shown = cond.arg         # the importer wrote forall C as exists !(C)
    else:
        shown = cond
    sat = [s for s in states if cond is None or eval_cond(cond, dict(s))]
    unsat = len(states) - len(sat)
    if q == "forall":          # validated when no state satisfies exists !(C)
        pos, neg = unsat, len(sat)
        holds = not sat
        obs_sat, obs_unsat = unsat, len(sat)
    elif q == "~exists":
        pos, neg = unsat, len(sat)
        holds = not sat
        obs_sat, obs_unsat = len(sat), unsat
    else:
        pos, neg = len(sat), unsat
        holds = bool(sat)
        obs_sat, obs_unsat = len(sat), unsat
    decided = r.complete or (q == "exists" and holds)
    lines = [f"Test {t.name} {'Required' if q == 'forall' else 'Allowed'}",
             f"States {len(states)}"]
    lines += sorted(_state_line(s, index, t) for s in states)
    lines.append(("Ok" if holds else "No") if decided else "Undecided")
    lines += ["Witnesses", f"Positive: {pos} Negative: {neg}"]
    if r.ub or r.undefined:
        lines.append("Flag undefined-behaviour")
    ctext = herd_cond(shown, index, True, t) if shown is not None else "true"
    lines.append(f"Condition {q} ({ctext})")
    obs = "Never" if obs_sat == 0 else "Always" if obs_unsat == 0 else "Sometimes"
    lines.append(f"Observation {t.name} {obs} {obs_sat} {obs_unsat}")
    if timing:
        lines.append(f"Time {t.name} {r.seconds:.2f}")
    return "\n".join(lines) + "\n"


def to_herd(results: list, timing: bool = True) -> str:
    return "\n".join(herd_block(r, timing) for r in results)
