"""`amdmm-smt explain`: why an outcome is allowed (a witness execution read off the Z3 model
of the encoding) or forbidden (a minimal set of named rule families whose constraints
together rule it out: an unsat core over one tracking Boolean per family, minimised).

The encoding is the one `verify` solves (encode/), with every constraint tagged by the family
that added it (encode/logic.py Ctx.family, amdmm_smt/encode/families.py). Only this module tracks
families; `verify` adds the same constraints untracked.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Optional

import z3

from ..encode import families as F
from ..frontend.async_intrinsics import SEED_STAGE, STAGE_NAME
from ..elaborate.events import Elab, Event, compatible, copy_part, elaborate
from ..encode import encode
from ..encode.avvis import av_scope, make_available
from ..encode.execution import Execution
from .cat_explain import describe, family_name, family_order
from .graph import effects
from ..ir import CLUSTER, LEVEL_NAME, SYSTEM, WAVEFRONT, WORKGROUP, Condition, Test
from ..model import Model
from ..outcomes import format_state, projection
from ..ir import POISON, is_acquire, is_release
from ..solve import cond_z3, model_of, refine, set_params, signed, term_z3


@dataclass
class Explanation:
    test: Test
    model: str
    outcome: str
    reachable: Optional[bool]              # None: the solver gave up
    witness: Optional[dict] = None         # reachable: one execution
    core: list = field(default_factory=list)      # unreachable: minimal families
    without: dict = field(default_factory=dict)   # family -> a state reachable without it
    minimal: bool = True                   # every family of the core checked necessary
    seconds: float = 0.0
    limit: Optional[str] = None            # --timeout / --memory stopped it (and where)
    closest: Optional[dict] = None         # unreachable: the closest candidate (closest())
    # path combinations (a straight-line test: the test) whose waves diverge at a barrier:
    # every execution of them is undefined (docs 10.3, 15.9, 15.10): (count, first message)
    divergent: Optional[tuple] = None
    cat: Optional[str] = None              # the model file whose statements are the families

    def record(self, timing: bool = True) -> dict:
        rec = {"name": self.test.name, "file": self.test.file, "model": self.model,
               "outcome": self.outcome,
               "reachable": self.reachable}
        if self.witness is not None:
            rec["witness"] = self.witness
        if self.reachable is False:
            rec["forbidden_by"] = [
                {"family": f, "source": describe(self.cat, f)[0],
                 "sentence": describe(self.cat, f)[1],
                 "without_it_reachable": self.without.get(f)} for f in self.core]
            rec["minimal"] = self.minimal
            if self.closest is not None:
                rec["closest"] = self.closest
        if self.cat:
            rec["model_file"] = self.cat
        if self.divergent is not None:
            rec["wave_divergent"] = {"combinations": self.divergent[0],
                                     "first": self.divergent[1],
                                     "every": len(self.divergent) > 2}
        if self.limit:
            rec["limit"] = self.limit
        if timing:
            rec["seconds"] = round(self.seconds, 4)
        return rec


def parse_outcome(test: Test, text: str) -> Condition:
    """An outcome / condition given on the command line, in the test's own terms."""
    from ..frontend.litmus import parse_test_condition
    return parse_test_condition(test, text)


def _bool(v) -> z3.BoolRef:
    return z3.BoolVal(v) if isinstance(v, bool) else v


class _Tracked:
    """One straight-line test (a control-flow test: one combination of thread paths, docs
    15.2) encoded with a tracking literal per named family, and the condition asserted."""

    def __init__(self, test: Test, model: Model, cond: Condition):
        self.x = x = encode(elaborate(test, model), explaining=True)
        self.s = s = z3.Solver()
        s.undef_forall = x.forall          # docs 15.4 R-cf-undef-sets (solve.refine)
        groups: dict[str, list] = {}
        plain = []
        cat = getattr(model, "cat", None)
        for c, fam in zip(x.ctx.constraints, x.ctx.families):
            if F.untracked(fam):
                plain.append(c)
            else:
                groups.setdefault(family_name(cat, fam), []).append(c)
        if plain:
            s.add(*plain)
        self.groups, self.plain, self.cond = groups, plain, cond
        self.order = family_order(cat, groups)
        self.lits = {f: z3.Bool(f"family: {f}") for f in self.order}
        for f in self.order:
            s.add(z3.Implies(self.lits[f], z3.And(groups[f])))
        s.add(_bool(z3.Not(x.ub) if not isinstance(x.ub, bool) else not x.ub))
        s.add(_bool(cond_z3(x, cond.cond)))
        self.names = {str(v): f for f, v in self.lits.items()}
        keys, terms = projection(test)
        self.keys, self.zterms = keys, [term_z3(x, t) for t in terms]

    def check(self, fams, deadline: float) -> z3.CheckSatResult:
        """Satisfiable with the families `fams` on (a family this test lacks adds nothing)."""
        from .. import limits
        limits.check()
        set_params(self.s,
                   timeout=int(max(0.001, deadline - time.perf_counter()) * 1000))
        lits = [self.lits[f] for f in fams if f in self.lits]
        return refine(self.s, self.s.check(*lits), *lits)

    def core(self) -> set:
        return {self.names[str(v)] for v in self.s.unsat_core()}

    def state(self) -> str:
        return format_state(_state(model_of(self.s), self.keys, self.zterms))


def _combinations(test: Test):
    """The straight-line tests to explain: the test itself, or for a test with control flow
    every combination of complete thread paths (docs 15.2; paths cut by the unroll bound end
    no execution and are left out)."""
    from ..elaborate.cflow import combos, test_has_cflow, unroll_bound
    if not test_has_cflow(test):
        return [test]
    from .. import limits
    _, _, gen = combos(test, unroll_bound(test, None))
    out = []
    for ct, cut in gen:
        limits.check()          # the enumeration itself honours --timeout
        if not cut:
            out.append(ct)
    return out


def explain(test: Test, model: Model, cond: Condition, timeout: float = 120.0,
            minimise: bool = True, with_closest: bool = False) -> Explanation:
    """A witness of a reachable condition, or a minimal set of named families that forbids
    it. With control flow (docs 15.6) the witness comes from one combination of thread paths,
    and the families must forbid the condition in every combination."""
    from .. import limits
    from ..elaborate.barrier import WaveDivergent
    t0 = time.perf_counter()
    deadline = t0 + timeout
    ex = Explanation(test, model.name, cond.text, None, cat=getattr(model, "cat", None))
    # one combination encoded at a time, under the deadline of --timeout (limits.tick in the
    # encoding): a witness may come from the first, before the others are encoded (issue 22)
    limits.stage("elaboration")
    combos = _combinations(test)
    setups: list = []
    core: set = set()
    for i, ct in enumerate(combos):
        limits.stage("encoding" if len(combos) == 1 else
                     f"encoding (path combination {i + 1} of {len(combos)})")
        try:
            t = _Tracked(ct, model, cond)
        except WaveDivergent as e:
            # docs 15.9: its waves diverge at a barrier, every execution of it is undefined
            # (R-cf-bar-wave): no witness there, and nothing to forbid; said in the answer
            n = ex.divergent[0] + 1 if ex.divergent else 1
            ex.divergent = (n, ex.divergent[1] if ex.divergent else
                            f"line {e.line}: {e.message}")
            continue
        setups.append(t)
        limits.stage("solving")
        r = t.check(t.order, deadline)
        if r == z3.sat:
            ex.reachable = True
            ex.witness = witness(t.x, model_of(t.s))
            ex.seconds = time.perf_counter() - t0
            return ex
        if r != z3.unsat:
            limits.check()       # gave up at the deadline of --timeout: say so, with the stage
            ex.seconds = time.perf_counter() - t0
            return ex                              # the solver gave up: reachable None
        core |= t.core()
    ex.reachable = False
    if ex.divergent is not None and not setups:      # every combination is undefined
        ex.divergent = (ex.divergent[0], ex.divergent[1], True)
    order = family_order(ex.cat, core)
    if minimise:
        limits.stage("minimising")
        # deletion over every combination: a family stays iff without it some combination
        # reaches the condition (then `without` shows that state)
        for f in list(order):
            if f not in order:
                continue
            trial = [g for g in order if g != f]
            results = [(t, t.check(trial, deadline)) for t in setups]
            sat = next((t for t, r in results if r == z3.sat), None)
            if sat is not None:
                ex.without[f] = sat.state()
            elif all(r == z3.unsat for _, r in results):
                got = set().union(*(t.core() for t in setups))
                order = [g for g in trial if g in got]
            else:
                ex.minimal = False
    ex.core = order
    if with_closest and order:
        limits.stage("closest candidate")
        ex.closest = closest(setups, order, deadline)
    ex.seconds = time.perf_counter() - t0
    return ex


# ---- the closest candidate of a forbidden outcome (issue 19.5) ------------------------------

def _preference(fams: tuple) -> tuple:
    """Fewer families first; then fewer definitions (a dropped definition leaves its relation
    free, a dropped restriction keeps every relation as defined); then catalogue order."""
    cat = list(F.CATALOGUE)
    return (len(fams), sum(f not in F.RESTRICTIONS for f in fams),
            [cat.index(f) if f in cat else len(cat) for f in fams])


def closest(setups: list, core: list, deadline: float, max_drop: int = 2) -> Optional[dict]:
    """The closest candidate execution of a forbidden condition: one that produces it while
    satisfying every named family but as few as possible (at most `max_drop`, preferring
    restrictions: `_preference`), and among those executions one that breaks the fewest
    instances (constraints) of the dropped families. None when no such set is found in time.
    docs/semantics.md section 12.4."""
    from itertools import combinations
    cands = sorted((d for k in range(1, max_drop + 1) for d in combinations(core, k)),
                   key=_preference)
    for drop in cands:
        for t in setups:
            if time.perf_counter() >= deadline:
                return None
            if t.check([f for f in t.order if f not in drop], deadline) == z3.sat:
                return _candidate(t, list(drop), deadline)
    return None


def _candidate(t: "_Tracked", drop: list, deadline: float) -> dict:
    s = z3.Solver()
    if t.plain:
        s.add(*t.plain)
    inst = []
    for f in t.order:
        if f in drop:
            for c in t.groups[f]:
                b = z3.Bool(f"instance {len(inst)}")
                inst.append((f, b, c))
                s.add(z3.Implies(b, c))
        else:
            s.add(*t.groups[f])
    x = t.x
    s.add(_bool(z3.Not(x.ub) if not isinstance(x.ub, bool) else not x.ub))
    s.add(_bool(cond_z3(x, t.cond.cond)))

    def broken(m):
        return [(f, c) for f, _, c in inst if not _true(m, c)]
    set_params(s, timeout=int(max(0.001, deadline - time.perf_counter()) * 1000))
    r = s.check()
    if r == z3.unknown:            # the deadline came first: no candidate in time
        from .. import limits
        limits.check()
        return None
    if r != z3.sat:                # cannot happen: t.check said sat with the same constraints
        raise AssertionError("closest candidate: the relaxed encoding is not satisfiable")
    m = model_of(s)
    bad = broken(m)
    minimal = True
    for _ in range(8):               # fewest broken instances: bound the count and re-solve
        if len(bad) <= 1:
            break
        s.add(z3.PbLe([(z3.Not(b), 1) for _, b, _ in inst], len(bad) - 1))
        set_params(s,
                   timeout=int(max(0.001, deadline - time.perf_counter()) * 1000))
        r = s.check()
        if r == z3.sat:
            m = model_of(s)
            bad = broken(m)
        else:
            minimal = r == z3.unsat
            break
    else:
        minimal = False
    wt = witness(x, m)
    labels = sorted({e["id"] for e in wt["events"]} |
                    {o["id"] for o in wt.get("barrier_ops", [])}, key=len, reverse=True)
    events: set = set()
    pairs: set = set()
    for _, c in bad:
        one, two = _mentions(c, labels)
        events |= one
        pairs |= two
    may_rec = []
    if F.READ_VALUE in drop:
        # issue 28.6: with the read-value rule dropped its may-see variables are free; say for
        # each read the broken instances are about which writes it may see by S000's
        # definition (on this candidate's location order and happens-before, which hold as
        # defined), and mark them: the writes whose values the rule would allow instead
        from ..encode.values import may_see
        wm = _W(x, m)
        by_label = {e.label: e for e in x.ev}
        for k, rec in enumerate(wt["reads"]):
            r = by_label[rec["read"]]
            if r.label not in events:
                continue
            ms = [e for e in x.elab.writes_to(r.loc)
                  if e.id != r.id and wm.t(may_see(x, r, e))]
            wt["reads"][k] = _read(x, wm, r, ms)
            may_rec += [[e.label, r.label] for e in ms]
    broken_rec = {"instances": len(bad), "fewest": minimal,
                  "events": sorted(events),
                  "edges": sorted(sorted(p) for p in pairs)}
    if may_rec:
        broken_rec["may_see"] = may_rec
    wt["broken"] = broken_rec
    cat = getattr(x.elab.model, "cat", None)
    return {"dropped": [{"family": f, "source": describe(cat, f)[0],
                         "sentence": describe(cat, f)[1]} for f in drop],
            "witness": wt}


def _mentions(c, labels: list) -> tuple:
    """The events a constraint is about (the labels in its variables' names, e.g.
    `rf_T0:17_T1:23#12`), and the pairs of them the picture marks: every pair when the
    constraint is about a few events (a coherence instance names its cycle), else the pairs
    one variable relates (rf, hb, lo ...)."""
    from z3.z3util import get_vars
    one: set = set()
    pairs: set = set()
    for v in get_vars(c):
        found = _labels_in(str(v).rsplit("#", 1)[0], labels)
        one |= set(found)
        if len(found) == 2 and found[0] != found[1]:
            pairs.add(frozenset(found))
    if len(one) <= 6:
        pairs = {frozenset((a, b)) for a in one for b in one if a < b}
    return one, pairs


def _labels_in(name: str, labels: list) -> list:
    """Event labels occurring in a variable name as whole `_`-separated parts (longest first,
    so `T0:19` is not found inside `T0:19#2`)."""
    found = []
    rest = name
    for lab in labels:
        i = rest.find(lab)
        while i >= 0:
            end = i + len(lab)
            if (i == 0 or rest[i - 1] == "_") and (end == len(rest) or rest[end] == "_"):
                found.append((i, lab))
                rest = rest[:i] + "\0" * len(lab) + rest[end:]
                break
            i = rest.find(lab, i + 1)
    return [lab for _, lab in sorted(found)]


def _state(m: z3.ModelRef, keys, zterms) -> tuple:
    vals = []
    for (u, v, p) in zterms:
        if _true(m, p):
            vals.append(POISON)
        elif _true(m, u):
            vals.append(None)
        else:
            vals.append(signed(m.eval(v, model_completion=True).as_long()))
    return tuple(zip(keys, vals))


def _true(m: z3.ModelRef, e) -> bool:
    if isinstance(e, bool):
        return e
    return bool(z3.is_true(m.eval(e, model_completion=True)))


# ---- the witness --------------------------------------------------------------------------

def instance(el: Elab, e: Event, level: int) -> str:
    """The name of e's instance of scope `level`, e.g. `workgroup 0.0.1` (agent.cluster.wg)."""
    name = LEVEL_NAME[level]
    if e.is_init or level == SYSTEM:
        return name
    key = el.paths[e.thread][level]
    parts = []
    for k in key:
        parts.append(f"own{k[1]}" if isinstance(k, tuple) else str(k))
    return f"{name} {'.'.join(parts)}"


class _W:
    """Reads one execution off a Z3 model."""

    def __init__(self, x: Execution, m: z3.ModelRef):
        self.x, self.m, self.el = x, m, x.elab

    def t(self, e) -> bool:
        return _true(self.m, e)

    def val(self, undef, v) -> Optional[int]:
        if self.t(undef):
            return None
        return signed(self.m.eval(v, model_completion=True).as_long())


def _fmt(v: Optional[int]) -> str:
    return "undef" if v is None else str(v)


def witness(x: Execution, m: z3.ModelRef) -> dict:
    w = _W(x, m)
    el = x.elab
    ev = x.ev
    happens = {e.id: w.t(x.writes(e)) for e in ev if e.writes}
    events = []
    for e in ev:
        d = {"id": e.label, "thread": None if e.is_init else el.thread_names[e.thread],
             "pos": e.pos, "kind": e.kind, "loc": e.loc,
             "text": f"initial write of @{e.loc}" if e.is_init else _text(e),
             "line": None if e.is_init else e.instr.line, "short": _short(e),
             "scope": instance(el, e, el.scope_in(e, x.space(e)) if e.loc else e.scope)}
        if e.reads:
            d["read"] = _fmt(w.val(x.rundef[e.id], x.rval[e.id]))
        if e.writes:
            d["writes"] = happens[e.id]
            if happens[e.id]:
                d["wrote"] = _fmt(w.val(x.wundef[e.id], x.wval[e.id]))
        events.append(d)
    rf = sorted([ev[a].label, ev[b].label] for (a, b), v in x.rf_var.items() if w.t(v))
    co = {}
    for loc in el.locs:
        ws = [e for e in el.writes_to(loc) if happens[e.id]]
        ws.sort(key=lambda e: (0, 0) if e.is_init else (
            1, m.eval(x.co_rank[e.id], model_completion=True).as_long()))
        co[loc] = [e.label for e in ws]
    sw = {}
    for sp, rel in getattr(x, "sw_by_space", {}).items():
        for (a, b), v in rel.items():
            if w.t(v):
                sw.setdefault((ev[a].label, ev[b].label), []).append(sp)
    bar_pairs, via = _barrier_pairs(x, w)
    sw_list = [dict({"from": a, "to": b, "spaces": sps},
                    **({"barrier": via[(a, b)]} if (a, b) in via else {}))
               for (a, b), sps in sorted(sw.items())]
    hb = _hb_reduced(x, w)
    cat = getattr(el.model, "cat", None)      # a model file: its own relations, below
    reads = [] if cat else [_read(x, w, r) for r in ev if r.reads]
    final = {loc: _fmt(w.val(*x.final[loc])) for loc in el.locs}
    keys, terms = projection(el.test)
    state = format_state(_state(m, keys, [term_z3(x, t) for t in terms]))
    out = {"threads": el.thread_names, "events": events, "rf": rf, "co": co, "sw": sw_list,
           "hb": hb, "reads": reads, "final": final, "state": state,
           "placement": {el.thread_names[i]: placement(el, i)
                         for i in range(len(el.thread_names))}}
    if cat:
        from .cat_explain import add_file_relations
        add_file_relations(out, x, happens)
    if bar_pairs:
        out["barrier"] = bar_pairs
    note = _barrier_memory_note(x, bar_pairs, sw_list)
    if note:
        out["barrier_memory"] = note
    unspec = _unspecified(x, w)
    if unspec:
        out["unspecified_completion"] = unspec
    ops = _barrier_ops(x)
    if ops:
        out["barrier_ops"] = ops
    return out


def _text(e: Event) -> str:
    """An event's instruction text; the two halves of a copy (an async copy's A.r / A.w, a
    synchronous LDS DMA's .r / .w, docs 11.3, 16.1) say which half they are (issue 28.6)."""
    half = {"dma_read": "read", "dma_write": "write"}.get(e.kind) or {
        ".r": "read", ".w": "write"}.get(copy_part(e.instr), "")
    if half:
        return f"copy {half} of @{e.loc}: {e.instr.text}"
    return e.instr.text


def _unspecified(x: Execution, w: _W) -> list:
    """docs R-call-async-seq: for each asyncmark whose completion at the waits of other body
    executions is unspecified, the choice this execution made (the first such wait at which
    it is completed, or none)."""
    choice = getattr(x, "_async_choice", None) or {}
    by_pos = {(e.thread, e.pos): e for e in x.ev if e.thread is not None and e.async_of is None}
    out = []
    for ch in x.elab.async_chains:
        ti, m = ch[0][0], ch[0][1]
        first = next((k for k in ch if k in choice and w.t(choice[k])), None)
        stage = "" if ch[0][2] == SEED_STAGE else f" (stage {STAGE_NAME.get(ch[0][2])})"
        out.append({"mark": by_pos[(ti, m)].label + stage,
                    "completed_at": None if first is None else by_pos[(ti, first[3])].label})
    return out


def placement(el: Elab, ti: int) -> str:
    """Where thread `ti` runs: its workgroup and wavefront instances (and cluster, on a target
    with clusters), as `instance` names them."""
    levels = [WORKGROUP, WAVEFRONT]
    if el.target.clusters:
        levels.insert(0, CLUSTER)
    out = []
    for lv in levels:
        key = el.paths[ti][lv]
        parts = [f"own{k[1]}" if isinstance(k, tuple) else str(k) for k in key]
        out.append(f"{LEVEL_NAME[lv]} {'.'.join(parts)}")
    return ", ".join(out)


def _barrier_ops(x: Execution) -> list:
    """The explicit barrier operations (arrive, wait, init, join, drop of a wave's own
    instructions; not the implicit ones of launch and end), each placed in the first thread of
    its wave at its instruction's position, for the pictures (issue 18.5)."""
    info = x.elab.barrier
    if info is None:
        return []
    el = x.elab
    out = []
    for op in info.ops:
        if op.implicit or op.wave is None:
            continue
        ths = [t for t in info.wave_threads[op.wave] if op.tpos.get(t, -1) >= 0]
        if not ths:
            continue
        t = ths[0]
        out.append({"id": op.label, "thread": el.thread_names[t], "pos": op.tpos[t],
                    "kind": "barrier_" + op.kind, "line": op.line,
                    "iteration": op.iteration,
                    "object": info.inst_name(op.obj)})
    return out


# S002 (seed 002, "Barriers only synchronize execution", the note of the execution-barrier
# model) and S003 (seed 003, its note on barrier-executes-before), quoted verbatim
S002_EXEC_ONLY = ("Barriers only synchronize execution and do not affect the visibility of "
                  "memory operations between threads.")
S003_EXEC_ONLY = ("Barriers only synchronize execution, not memory: S -> W in "
                  "barrier-executes-before does not imply S happens-before W")


def _barrier_memory_note(x: Execution, pairs: list, sw: list) -> str:
    """issue 28.6, docs/semantics.md 10.7 R-bar-exec-only: when the test has barrier arrives
    or waits and no synchronizes-with of this execution goes through a barrier, why no fence
    makes the barrier order memory, with the sentences of S002 and S003 that say a barrier
    alone orders none. "" otherwise."""
    info = x.elab.barrier
    if info is None or any("barrier" in s for s in sw):
        return ""
    ops = [op for op in info.ops if not op.implicit and op.wave is not None
           and op.kind in ("arrive", "wait")]
    if not ops:
        return ""
    fences = [e for e in x.ev if e.is_fence]

    def fenced(op) -> bool:           # docs 10.5: BR (release before A) / BA (acquire after W)
        return any(f.thread in op.tpos and (
            (op.kind == "arrive" and is_release(f.order) and f.pos < op.tpos[f.thread]) or
            (op.kind == "wait" and is_acquire(f.order) and f.pos > op.tpos[f.thread]))
            for f in fences)
    br = any(fenced(op) for op in ops if op.kind == "arrive")
    ba = any(fenced(op) for op in ops if op.kind == "wait")
    if not br and not ba:
        why = ("no release fence is program-ordered before any barrier arrive and no acquire "
               "fence after any barrier wait (no barrier-arrive-release, no "
               "barrier-wait-acquire, docs 10.5)")
    elif not br:
        why = ("no release fence is program-ordered before any barrier arrive (no "
               "barrier-arrive-release, docs 10.5)")
    elif not ba:
        why = ("no acquire fence is program-ordered after any barrier wait (no "
               "barrier-wait-acquire, docs 10.5)")
    elif not any(not p.get("po") for p in pairs):
        why = ("no fenced arrive barrier-executes-before a fenced wait of another wave in this "
               "execution")
    else:
        why = ("no barrier-arrive-release synchronizes-with a barrier-wait-acquire: the scopes, "
               "-one-as or address spaces do not allow it (R-bar-sw-conditions, docs 10.5)")
    return (f"the barriers order no memory here: {why}. S002: \"{S002_EXEC_ONLY}\" S003: "
            f"\"{S003_EXEC_ONLY}\" (docs/semantics.md 10.7 R-bar-exec-only; they still order "
            "execution: a read before a barrier cannot see a write after it, R-bar-hb-exec)")


def _barrier_pairs(x: Execution, w: _W) -> tuple:
    """issue 18.5, 28.6: the barrier operations of this execution that order fences: the
    active (arrive A, wait W) with A barrier-executes-before W (docs 10.5), transitively
    reduced as `_hb_reduced` reduces hb: a pair implied by a path of other pairs and the
    program order of barrier operations in a wave (wave_ops) is left out, a pair of one wave
    is marked `po` (program order already orders them); and for every fence pair F -> G that
    A -> W can synchronize (F before A, G after W, as encode.barrier.barrier_sw), which pair
    it is (an immediate one when one qualifies)."""
    info = x.elab.barrier
    if info is None:
        return [], {}
    active = [(a, b) for (a, b), on in sorted(getattr(x, "bar_pair", {}).items()) if w.t(on)]
    succ: dict[int, set] = {}
    for a, b in active:
        succ.setdefault(a, set()).add(b)
    for ids in info.wave_ops:             # program order of one wave's barrier operations
        for a, b in zip(ids, ids[1:]):
            succ.setdefault(a, set()).add(b)

    def reaches(start: int, goal: int) -> bool:
        seen, todo = {start}, [start]
        while todo:
            n = todo.pop()
            if n == goal:
                return True
            for m in succ.get(n, ()):
                if m not in seen:
                    seen.add(m)
                    todo.append(m)
        return False
    pairs, via, reduced = [], {}, []
    for a, b in active:
        # redundant: b is reached from another successor of a (a path of two steps or more)
        if any(reaches(c, b) for c in succ.get(a, ()) if c != b):
            continue
        A, W = info.ops[a], info.ops[b]
        po = A.wave is not None and A.wave == W.wave and A.seq < W.seq
        pairs.append({"arrive": A.label, "wait": W.label, "po": po})
        reduced.append((a, b))
    fences = [e for e in x.ev if e.is_fence]
    for a, b in reduced + [p for p in active if p not in reduced]:
        A, W = info.ops[a], info.ops[b]
        for f in fences:
            if f.thread not in A.tpos or f.pos >= A.tpos[f.thread]:
                continue
            for g in fences:
                if g.thread in W.tpos and g.pos > W.tpos[g.thread] and g.thread != f.thread:
                    via.setdefault((f.label, g.label), f"{A.label} -> {W.label}")
    return pairs, via


ORDER_ABBR = {"unordered": "una", "monotonic": "rlx", "acquire": "acq", "release": "rel",
              "acq_rel": "acq_rel", "seq_cst": "sc"}
KIND_ABBR = {"init": "W", "load": "R", "store": "W", "rmw": "RMW", "cmpxchg": "CAS",
             "fence": "F", "av_load": "R.av", "av_store": "W.av"}


def _short(e: Event) -> str:
    """herd-like: `W @x rel agent`, `R @y acq`, `F sc workgroup`."""
    parts = [KIND_ABBR.get(e.kind, e.kind)]
    if e.kind == "rmw":
        parts[0] = f"RMW.{e.instr.op}"
    if not e.is_init and (e.kind in ("dma_read", "dma_write") or copy_part(e.instr)):
        parts[0] = "R.copy" if e.reads else "W.copy"     # a copy's half (issue 28.6)
    if e.loc:
        parts.append(f"@{e.loc}")
    if e.order and not e.is_init:
        parts.append(ORDER_ABBR.get(e.order, e.order))
    if not e.is_init and (e.atomic or e.is_fence or e.kind.startswith("av_")):
        parts.append(LEVEL_NAME[e.scope] + ("-one-as" if e.one_as else ""))
    if e.tags:
        parts.append("!" + ",".join(f"{p}:{q}" for p, q in sorted(e.tags)))
    return " ".join(parts)


def _hb_reduced(x: Execution, w: _W) -> list:
    """Happens-before per group of address spaces that agree, transitively reduced, without
    the initial writes (they happen-before everything)."""
    groups: dict[frozenset, list] = {}
    for sp, rel in sorted(x.hb_by_space.items()):
        pairs = frozenset((a, b) for (a, b), v in rel.items()
                          if not x.ev[a].is_init and w.t(v))
        groups.setdefault(pairs, []).append(sp)
    out = []
    for pairs, sps in groups.items():
        succ: dict[int, set] = {}
        for a, b in pairs:
            succ.setdefault(a, set()).add(b)
        edges = []
        for a, b in sorted(pairs):
            if any(b in succ.get(c, ()) for c in succ.get(a, ()) if c != b):
                continue
            ea, eb = x.ev[a], x.ev[b]
            edges.append({"from": ea.label, "to": eb.label,
                          "po": x.elab.po(ea, eb)})
        out.append({"spaces": sps, "edges": edges})
    return out


def _read(x: Execution, w: _W, r: Event, ms: Optional[list] = None) -> dict:
    """One read of the witness; `ms`: the writes it may see when not read off the encoding's
    may-see variables (a closest candidate with the read-value rule dropped)."""
    el = x.elab
    sp = x.space(r)
    ws = [e for e in el.writes_to(r.loc) if e.id != r.id]
    if ms is None:
        ms = [e for e in ws if w.t(x.maysee.get((e.id, r.id), False))]
    lo = [e for e in ws if w.t(x.lo(e, r))]
    lo_ids = {e.id for e in lo}
    if not lo:
        rule = "(1) no write is location-ordered before R: undef"
    elif r.atomic and all(e.atomic and el.inclusive(e, r, sp) for e in ms) and all(
            el.inclusive(a, b, sp) for i, a in enumerate(ms) for b in ms[i + 1:]):
        rule = ("(2) R and every write it may see are atomic with inclusive scopes: the value "
                "of one of them")
    elif any(e.id not in lo_ids for e in ms):
        bad = [e.label for e in ms if e.id not in lo_ids]
        rule = (f"(3) R may see {', '.join(bad)}, not location-ordered before R: undef")
    elif len(ms) == 1:
        rule = "(4) R may see exactly one write: its value"
    else:
        rule = "(5) otherwise: undef"
    rf = [e.label for e in ws if w.t(x.rf(e, r))]
    chains = {}
    for e in lo:
        chains[e.label] = lo_chain(x, w, e, r)
    return {"read": r.label, "value": _fmt(w.val(x.rundef[r.id], x.rval[r.id])),
            "reads_from": rf[0] if rf else None,
            "may_see": [e.label for e in ms], "location_ordered_before": [e.label for e in lo],
            "rule": rule, "chains": chains}


# ---- availability / visibility chains ------------------------------------------------------

def lo_chain(x: Execution, w: _W, wr: Event, y: Event) -> list:
    """Why write `wr` is location-ordered before access `y` in this execution: the links of
    the S000 chain, each with the operation, its role and the scope instance it acts in."""
    el = x.elab
    sp = x.space(wr)
    if wr.is_init:
        return [{"op": wr.label, "why": "the initial write is location-ordered before every "
                 "access to its location", "scope": "system"}]
    if w.t(x.po_hb(wr, y, sp)):
        why = "program-ordered before " + y.label
        if not el.po_in_hb(wr, y):      # MMRA: not directly, through compatible operations
            mids = [e.label for e in x.ev if el.po(wr, e) and el.po(e, y)
                    and w.t(x.hb(wr, e, sp)) and w.t(x.hb(e, y, sp))]
            if wr.async_of is not None or y.async_of is not None:
                # docs §11.5: an async copy's read and write are ordered by completion only
                cause = ("an asynchronous copy's read and write are not in happens-before "
                         "through program order, only through its completion (docs §11.5)")
            elif not compatible(wr.tags, y.tags):
                cause = "the MMRA tags are incompatible (S001)"
            else:
                cause = "not directly"
            why += (f" within happens-before ({cause}; through "
                    f"{', '.join(mids) or 'synchronization'})")
        return [{"op": wr.label, "why": why,
                 "scope": instance(el, wr, el.scope_in(wr, sp))}]
    av = getattr(x, "avvis", None)
    if av is None or wr.id not in av.avail:     # plain LLVM model: lo is happens-before
        return [{"op": wr.label, "why": "happens-before " + y.label + " (model without "
                 "availability and visibility)", "scope": "system"}]
    if y.reads:
        for zid, (sz, levels) in sorted(av.vis[wr.id].items()):
            z = x.ev[zid]
            if not w.t(levels[0]):
                continue
            if zid == y.id or (el.po(z, y) and w.t(x.po_hb(z, y, sp))):
                tail = "is R itself" if zid == y.id else f"precedes {y.label} in program order"
                return _vis_chain(x, w, wr, zid, 0, set()) + [
                    {"op": y.label, "why": f"location order: the visibility operation {tail}",
                     "scope": ""}]
    if y.writes:
        for zid, (zv, szl) in sorted(av.avail[wr.id].items()):
            z = x.ev[zid]
            if w.t(zv) and w.t(x.hb(z, y, sp)) and el.contains(z, szl, y):
                return _avail_chain(x, w, wr, zid, set()) + [
                    {"op": y.label, "why": f"location order: the availability operation "
                     f"{z.label} happens-before this write, which is in its scope instance",
                     "scope": instance(el, z, szl)}]
    if el.model.options.read_lo and wr.reads and w.t(x.hb(wr, y, sp)):
        return [{"op": wr.label, "why": "a read happens-before " + y.label + " (read_lo)",
                 "scope": "system"}]
    return [{"op": wr.label, "why": "(no chain found)", "scope": ""}]


def _avail_chain(x: Execution, w: _W, wr: Event, xid: int, seen: set) -> list:
    el = x.elab
    sp = x.space(wr)
    av = x.avvis
    e = x.ev[xid]
    var, sx = av.avail[wr.id][xid]
    inst = instance(el, e, sx)
    if xid == wr.id:
        return [{"op": e.label, "why": "availability operation (1): the write itself, "
                 "store-available", "scope": inst}]
    if w.t(make_available(x, e)) and w.t(x.po_hb(wr, e, sp)):
        return [{"op": wr.label, "why": "the write", "scope": instance(
            el, wr, el.scope_in(wr, sp))},
            {"op": e.label, "why": "availability operation (2): MakeAvailable after the "
             "write in program order", "scope": inst}]
    seen = seen | {xid}
    for zid, (zv, sz) in sorted(av.avail[wr.id].items()):
        if zid in seen or not w.t(zv):
            continue
        z = x.ev[zid]
        if w.t(x.hb(z, e, sp)) and el.contains(z, sz, e):
            return _avail_chain(x, w, wr, zid, seen) + [
                {"op": e.label, "why": f"availability operation (3): MakeAvailable including "
                 f"the write, {z.label} happens-before it and its scope instance includes it",
                 "scope": inst}]
    return [{"op": e.label, "why": "availability operation (no chain found)", "scope": inst}]


def _vis_chain(x: Execution, w: _W, wr: Event, yid: int, lvl: int, seen: set) -> list:
    el = x.elab
    sp = x.space(wr)
    av = x.avvis
    y = x.ev[yid]
    sy, levels = av.vis[wr.id][yid]
    top = max(lv for lv in range(sy + 1) if w.t(levels[lv]))
    inst = instance(el, y, top)
    role = "load-visible" if (y.reads and y.loc == wr.loc and av_scope(x, y) is not None) \
        else "MakeVisible"
    seen = seen | {yid}
    for xid, (a, sx) in sorted(av.avail[wr.id].items()):
        if xid == yid or not w.t(a):
            continue
        xe = x.ev[xid]
        if w.t(x.hb(xe, y, sp)) and min(sx, sy) >= lvl and av._inclusive_at(xe, sx, y, sy):
            return _avail_chain(x, w, wr, xid, set()) + [
                {"op": y.label, "why": f"visibility operation (1), {role}: {xe.label} "
                 f"happens-before it with inclusive scopes; visible in their common scope "
                 f"instance and below", "scope": inst}]
    for xid, (sx2, levs) in sorted(av.vis[wr.id].items()):
        if xid in seen:
            continue
        xe = x.ev[xid]
        if not w.t(x.hb(xe, y, sp)) or not el.contains(y, sy, xe):
            continue
        for l1 in range(sx2, lvl - 1, -1):
            if w.t(levs[l1]) and el.contains(xe, l1, y):
                return _vis_chain(x, w, wr, xid, l1, seen) + [
                    {"op": y.label, "why": f"visibility operation (2), {role}: {xe.label} "
                     f"happens-before it, made the write visible in {instance(el, xe, l1)} "
                     f"which includes it, and is in its scope instance", "scope": inst}]
    return [{"op": y.label, "why": "visibility operation (no chain found)", "scope": inst}]


# ---- text ---------------------------------------------------------------------------------

def format_text(ex: Explanation) -> str:
    out = [f"{ex.test.name} ({ex.test.file}), model {ex.model}", f"outcome: {ex.outcome}"]
    if ex.reachable is None:
        out.append(f"unknown: {ex.limit}" if ex.limit else
                   "unknown: the solver gave up within --timeout")
        return "\n".join(out)
    if ex.reachable:
        out.append("ALLOWED. A witness execution:")
        out += ["  " + ln for ln in format_witness(ex.witness)]
        return "\n".join(out)
    if ex.divergent is not None:
        why = (f"the threads of a wave perform different barrier operations (wave-divergent, "
               f"{ex.divergent[1]}; S002 \"barrier operations can only be performed in "
               "wave-uniform control flow\", docs/semantics.md 10.3, 15.9)")
        if len(ex.divergent) > 2:
            out.append(f"UNDEFINED: every execution of the test is undefined: {why}; no "
                       "execution produces this outcome or any other")
            return "\n".join(out)
        out.append(f"Note: on {ex.divergent[0]} path combination(s) {why}: their executions "
                   "are undefined and give no outcome; the answer below is about the others")
    if not ex.core:
        out.append("FORBIDDEN by the structure of executions alone (no execution of these "
                   "instructions produces these values, whatever the memory model)")
        return "\n".join(out)
    out.append(f"FORBIDDEN. A minimal set of rule families that together rule it out "
               f"({len(ex.core)}{'' if ex.minimal else ', minimality not fully checked'}):")
    for f in ex.core:
        src, sentence = describe(ex.cat, f)
        out.append(f"  - {f}" + (f" [{src}]" if src else ""))
        if sentence:
            out.append(f"      {sentence}")
        if f in ex.without:
            out.append(f"      without it, reachable: {ex.without[f]}")
    if ex.closest is not None:
        out += format_closest(ex.closest)
    return "\n".join(out)


def format_closest(cl: dict) -> list:
    """The closest candidate (closest()): what it breaks, then the execution."""
    wt = cl["witness"]
    br = wt["broken"]
    out = ["The closest candidate execution (it produces this outcome and satisfies every "
           "family except " + ", ".join(d["family"] for d in cl["dropped"]) + "):"]
    for d in cl["dropped"]:
        out.append(f"  forbidden by: {d['family']}" + (f" ({d['source']})" if d["source"] else ""))
    out.append(f"  broken: {br['instances']} instance{'s' if br['instances'] != 1 else ''} of "
               f"the rule{'' if br['fewest'] else ' (fewest not proven)'}, about "
               + (", ".join(br["events"]) or "no event"))
    reads = {r["read"]: r for r in wt["reads"]}
    ms: dict = {}
    for wlab, rlab in br.get("may_see", []):
        ms.setdefault(rlab, []).append(wlab)
    for rlab, ws in ms.items():
        r = reads[rlab]
        got = f"from {r['reads_from']}" if r["reads_from"] else "no write"
        out.append(f"  {rlab} may see {', '.join(ws)} (S000 \"R may see any write to the same "
                   f"byte, except\" the two exceptions; marked), value rule {r['rule']}; "
                   f"the candidate reads {r['value']}, {got}")
    out += ["  " + ln for ln in format_witness(wt)]
    return out


def format_witness(wt: dict) -> list:
    ev = {e["id"]: e for e in wt["events"]}
    out = [f"final state: {wt['state']}"]
    inits = [e for e in wt["events"] if e["thread"] is None]
    if inits:
        out.append("initial writes: " + ", ".join(
            f"@{e['loc']} = {e.get('wrote', 'undef')}" for e in inits))
    for t in wt["threads"]:
        out.append(f"thread {t}:")
        for e in wt["events"]:
            if e["thread"] != t:
                continue
            extra = effects(e)
            out.append(f"  {e['id']:<8} {e['text']}")
            out.append(f"  {'':<8}   [{e['scope']}]" + (f" {'; '.join(extra)}" if extra else ""))
    out.append("reads-from: " + (", ".join(f"{a} -> {b}" for a, b in wt["rf"]) or "none"))
    for loc, ws in sorted(wt["co"].items()):
        out.append(f"modification order @{loc}: " + " < ".join(ws))
    for bp in wt.get("barrier", []):
        if not bp.get("po"):
            out.append(f"barrier: {bp['arrive']} barrier-executes-before {bp['wait']}")
    if wt.get("barrier_memory"):
        out.append("barrier: " + wt["barrier_memory"])
    for u in wt.get("unspecified_completion", []):
        out.append(f"unspecified completion (R-call-async-seq): asyncmark {u['mark']} "
                   + (f"completed at {u['completed_at']} and after" if u["completed_at"]
                      else "not completed at any wait of another function body"))
    out.append("synchronizes-with: " + (", ".join(
        f"{s['from']} -> {s['to']} ({', '.join(s['spaces'])}"
        + (f"; through the barrier {s['barrier']}" if "barrier" in s else "") + ")"
        for s in wt["sw"]) or "none"))
    for g in wt["hb"]:
        cross = [f"{h['from']} -> {h['to']}" for h in g["edges"] if not h["po"]]
        out.append(f"happens-before ({', '.join(g['spaces'])}), transitively reduced, beyond "
                   f"program order: " + (", ".join(cross) or "none"))
    rc = wt.get("reference_check")      # a model file's witness (explain/cat_explain.py)
    if rc is not None:
        out.append("reference engine, the model file evaluated on this execution: " + (
            "consistent" if rc["consistent"] else "breaks " + ", ".join(rc["broken"])))
    for r in wt["reads"]:
        e = ev[r["read"]]
        out.append(f"read {r['read']} ({e['text']}) returns {r['value']}"
                   + (f", reading from {r['reads_from']}" if r["reads_from"] else ""))
        out.append(f"  may see: {', '.join(r['may_see']) or 'nothing'}; location-ordered "
                   f"before it: {', '.join(r['location_ordered_before']) or 'nothing'}")
        out.append(f"  value rule: {r['rule']}")
        for wlab, chain in sorted(r["chains"].items()):
            out.append(f"  {wlab} location-ordered before it:")
            for link in chain:
                sc = f"[{link['scope']}] " if link["scope"] else ""
                out.append(f"    {link['op']:<8} {sc}{link['why']}")
    return out
