"""The base sets and relations a model file starts from (docs/model-language.md "Base names").

Static ones are computed here from the elaborated test (`elaborate/events.py`); the dynamic
ones (what a candidate execution chooses: `rf`, `co`, which writes happen and the roles that
depend on it) are terms the engine hands over (`Dynamic`). Values are plain dicts: a set maps
an event id to a term, a relation maps an (id, id) pair to a term; a missing key is false.
Terms are whatever the engine's term operations (`Terms`) build: Python bools for the
reference engine, Z3 Booleans folded with constants for the SMT engine.
"""

from __future__ import annotations

from ..elaborate import async_ops as asyncops
from ..elaborate.events import (Elab, body_executions, compatible, load_visible, may_acquire,
                                may_release, store_available, strong_atomic)
from ..ir import SYSTEM, is_acquire, is_release

from .names import ASYNC_COMPLETION, BARRIER_RUN, BASE, DYNAMIC, LEVELS  # noqa: F401

# The sentence each base name rests on: docs/model-language.md "Base names".


class Terms:
    """Term operations of one engine."""
    def and_(self, *xs): raise NotImplementedError
    def or_(self, *xs): raise NotImplementedError
    def not_(self, x): raise NotImplementedError


class Dynamic:
    """What one candidate execution (or the solver) decides."""
    def hap(self, e): raise NotImplementedError            # e writes in this execution
    def rf(self, w, r): raise NotImplementedError
    def co(self, a, b): raise NotImplementedError           # both happen, a first

    def async_choice(self, keys: list):
        """R-call-async-seq: the term "one of these unspecified completions is chosen"."""
        raise NotImplementedError

    def bar_sig(self) -> dict:      # (X, Y) -> term: barSig of the chosen barrier run
        return {}

    def bar_exec(self) -> dict:     # (X, Y) -> term: barExec of the chosen barrier run
        return {}

    def bar_bmo(self) -> dict:      # (E, F) -> term: barBmo of the chosen barrier run
        return {}


def _atomic(e) -> bool:
    return e.is_init or bool(e.atomic)


def _async_op(el: Elab, e) -> bool:
    """A.r / A.w of an async instruction (kind `dma`, docs §11.3)."""
    return e.async_of is not None and el.events[e.async_of].kind == "dma"


def completed_at(el: Elab, staged: bool) -> dict:
    """(A.r, Y), (A.w, Y) for every wait.asyncmark Y that A is completed-at (docs §11.4, the
    static completion of `elaborate/async_ops.py`, R-async-done-every: the first such wait and
    every later one that does not ignore A's stage). staged: UP 2.4, one sequence per stage;
    else S004, one sequence, masks ignored (R-async-seed-mask). Completion left unspecified
    across function bodies (R-call-async-seq) is in `completion_unspecified`."""
    return completion_facts(el, staged)[0]


def completion_unspecified(el: Elab, staged: bool):
    """docs R-call-async-seq (UP 2.4: "it is unspecified whether B and C in bar() are
    completed-at Y, because they are not included in the sequence that can be examined at
    Y"): ({(A.r | A.w, Y): [choice keys]}, chains). A is completed-at Y iff one of its keys is
    chosen; a key is (staged, thread, mark, stage, wait), one per mark and wait of another
    body execution; each chain lists one mark's keys in program order of the waits, and a
    mark chosen completed at a wait is completed at every later wait of its chain (S004: a
    completed mark stays so)."""
    f = completion_facts(el, staged)
    return f[1], f[2]


def completion_facts(el: Elab, staged: bool):
    cache = el.__dict__.setdefault("_cat_completion", {})
    if staged not in cache:
        cache[staged] = _completion_facts(el, staged)
    return cache[staged]


def _completion_facts(el: Elab, staged: bool):
    out: dict = {}
    maybe: dict = {}
    chains: list = []
    for ti, t in enumerate(el.test.threads):
        ev = {e.pos: e for e in el.events if e.thread == ti and e.async_of is None}
        stage_of, masks = {}, {}
        for pos, ins in enumerate(t.code):
            if ins.kind == "dma":
                stage_of[pos] = asyncops.dma_stage(ins.args[0], el.target)
            elif ins.kind in ("asyncmark", "wait_asyncmark"):
                masks[pos] = ins.args
        if not stage_of:
            continue
        # R-call-async-seq: one sequence per body execution, unless the model's engine option
        # async_calls is `inlined` (the calls' marks in the caller's one sequence)
        per_function = el.model.options.async_calls == "per-function"
        comp = asyncops.completion(t.code, stage_of, masks, staged,
                                   body_executions(t.code) if per_function else None)
        waits = comp.waits()
        for e in el.events:
            if e.thread == ti and _async_op(el, e):
                for q in waits:
                    if q <= e.pos:
                        continue
                    if comp.definite(e.pos, q):
                        out[(e.id, ev[q].id)] = True
                    else:
                        ks = [(staged, ti) + k for k in comp.unspecified(e.pos, q)]
                        if ks:
                            maybe[(e.id, ev[q].id)] = ks
        chains += [[(staged, ti) + k for k in ch] for ch in comp.chains()]
    return out, maybe, chains


class Base:
    """The base names of one elaborated test, for one engine."""

    def __init__(self, elab: Elab, terms: Terms, dyn: Dynamic):
        self.el, self.T, self.dyn = elab, terms, dyn
        self.ev = elab.events
        self._static: dict = {}

    def value(self, name: str, level, sp):
        """dict of terms; level an int (indexed names), sp the address space at hand."""
        sort, indexed, spdep = BASE[name]
        key = (name, level, sp if spdep else None)
        if name in DYNAMIC:
            return self._dynamic(name)
        if key not in self._static:
            self._static[key] = self._compute(name, level, sp)
        return self._static[key]

    # ---- static ----
    def _set(self, pred) -> dict:
        return {e.id: True for e in self.ev if pred(e)}

    def _rel(self, pred, domain=None) -> dict:
        evs = domain if domain is not None else self.ev
        return {(a.id, b.id): True for a in evs for b in evs if pred(a, b)}

    # contains / incl from the elaboration's rows (Elab.contains_rows): the same pairs as the
    # pairwise definitions, without a call per pair; each event's level for AvsGe / ScGe /
    # AvScGe kept across the levels; level classes told apart by rows. A base whose events are
    # not one elaboration's (synth/symbolic.py TemplateBase: a slot's variants, swapped in)
    # asks pair by pair and keeps nothing
    BY_ROWS = True

    def signature(self, name: str, level, sp):
        """What tells a level-indexed static base name's values apart (cat/eval.py
        Evaluator._classes): equal signatures, equal values; None when the value is not
        every key to True (a template's terms)."""
        if name == "contains" and self.BY_ROWS:
            rows = self.el.contains_rows(level)
            return tuple(rows[e.id] for e in self.ev)
        if name in ("AvsGe", "ScGe", "AvScGe") and self.BY_ROWS:    # the keys _compute gives
            return frozenset(i for i, s in self._levels_of(name, sp) if s >= level)
        d = self.value(name, level, sp)
        if any(t is not True for t in d.values()):
            return None
        return frozenset(d)

    def _levels_of(self, name: str, sp) -> list:
        """(event id, level) for AvsGe / ScGe / AvScGe: the level an event's L is compared
        with (`name`[L] holds for every L up to it), computed once for every level."""
        key = ("levels of", name, sp if BASE[name][2] else None)
        r = self._static.get(key) if self.BY_ROWS else None
        if r is not None:
            return r
        el = self.el
        if name == "AvsGe":
            def level(e):
                if e.is_init:
                    return SYSTEM
                if store_available(e) or load_visible(e):
                    return el.av_scope_in(e, el.space_of(e.loc))
                return None
        elif name == "ScGe":
            def level(e):
                return SYSTEM if e.is_init else el.scope_in(e, sp)
        else:
            def level(e):
                return SYSTEM if e.is_init else el.av_scope_in(e, sp)
        r = [(e.id, s) for e in self.ev if (s := level(e)) is not None]
        if self.BY_ROWS:
            self._static[key] = r
        return r

    def _rows(self, rows: dict, irreflexive: bool = False) -> dict:
        """A relation from its rows (id -> a set of ids), keyed in the order _rel keys it."""
        return {(a, b): True for a in [e.id for e in self.ev] for b in sorted(rows[a])
                if not (irreflexive and a == b)}

    def _compute(self, name: str, lv, sp) -> dict:
        el = self.el
        local = {loc for loc in el.locs if el.test.memory[loc].space == "local"}
        S = self._set
        if name == "E":
            return S(lambda e: True)
        if name == "I":
            return S(lambda e: e.is_init)
        if name == "T":
            return S(lambda e: not e.is_init)
        if name == "W":
            return S(lambda e: bool(e.writes))
        if name == "R":
            return S(lambda e: bool(e.reads))
        if name == "F":
            return S(lambda e: e.is_fence)
        if name == "M":
            return S(lambda e: e.loc is not None)
        if name == "Atomic":
            return S(_atomic)
        if name == "Strong":
            return S(strong_atomic)
        if name == "RMW":
            return S(lambda e: e.kind in ("rmw", "cmpxchg"))
        if name == "AvNone":
            return S(lambda e: bool(e.av_none))
        if name == "RelOrd":
            return S(lambda e: not e.is_init and may_release(e))
        if name == "AcqOrd":
            return S(lambda e: not e.is_init and may_acquire(e))
        if name == "Volatile":
            return S(lambda e: bool(getattr(e, "volatile", False)))
        if name == "Lds":
            return S(lambda e: e.loc in local)
        if name == "AvIntr":
            return S(lambda e: e.kind in ("av_load", "av_store"))
        if name == "LV":
            return S(lambda e: not e.is_init and load_visible(e))
        if name == "SA":
            return S(store_available)
        if name in ("AvsGe", "ScGe", "AvScGe"):    # an event's level, then the threshold
            return {i: True for i, s in self._levels_of(name, sp) if s >= lv}
        if name == "Sync":
            return S(lambda e: e.is_init or sp in el.sync_spaces(e))
        if name == "Here":
            return S(lambda e: e.loc is not None and el.space_of(e.loc) == sp)
        R = self._rel
        if name == "id":
            return {(e.id, e.id): True for e in self.ev}
        if name == "po":
            return R(lambda a, b: el.po(a, b))
        if name == "poc":
            # S001 over the instructions' program order; an async operation's halves carry
            # their instruction's tags (docs §11.3) and are cut by the model (async.cat)
            return R(lambda a, b: el.po(a, b) and compatible(a.tags, b.tags))
        if name == "loc":
            return R(lambda a, b: a.loc is not None and a.loc == b.loc)
        if name == "ext":
            return R(lambda a, b: a.is_init or b.is_init or a.thread != b.thread)
        if name == "int":
            return R(lambda a, b: not a.is_init and not b.is_init and a.thread == b.thread)
        if name == "contains":
            if self.BY_ROWS:
                return self._rows(el.contains_rows(lv))
            return R(lambda a, b: el.contains(a, lv, b))
        if name == "incl":
            if self.BY_ROWS:
                return self._rows(el.inclusive_rows(sp), irreflexive=True)
            return R(lambda a, b: a.id != b.id and el.inclusive(a, b, sp))
        if name == "samescope":
            return R(lambda a, b: a.id != b.id and (a.is_init or b.is_init or
                                                     el.scope_in(a, sp) == el.scope_in(b, sp)))
        if name == "OneAs":
            return S(lambda e: not e.is_init and bool(e.one_as))
        if name == "Async":
            return S(lambda e: _async_op(el, e))
        if name == "DmaSync":          # docs 16.1: the two events (.r, .w) of one line
            return S(lambda e: e.async_of is None and e.instr is not None
                     and bool(e.instr.intrinsic) and e.kind in ("load", "store"))
        if name == "initiates":
            return {(e.async_of, e.id): True for e in self.ev if _async_op(el, e)}
        raise KeyError(name)

    # ---- dynamic ----
    def _dynamic(self, name: str) -> dict:
        T, d, ev = self.T, self.dyn, self.ev
        if name == "Hap":
            out = {}
            for e in ev:
                if e.writes:
                    t = d.hap(e)
                    if t is not False:
                        out[e.id] = t
            return out
        if name in ("Rel", "Acq", "SC"):
            test = {"Rel": is_release, "Acq": is_acquire,
                    "SC": lambda o: o == "seq_cst"}[name]
            out = {}
            for e in ev:
                if e.is_init:
                    continue
                if e.kind == "cmpxchg":
                    s = d.hap(e)
                    if name == "Rel":
                        t = T.and_(s, test(e.order))
                    else:
                        t = T.or_(T.and_(s, test(e.order)),
                                  T.and_(T.not_(s), test(e.fail_order)))
                elif name == "Rel":
                    t = may_release(e)
                elif name == "Acq":
                    t = may_acquire(e)
                else:
                    t = e.order == "seq_cst"
                if t is not False:
                    out[e.id] = t
            return out
        if name == "rf":
            out = {}
            for r in ev:
                if not r.reads:
                    continue
                for w in self.el.writes_to(r.loc):
                    if w.id != r.id:
                        t = d.rf(w, r)
                        if t is not False:
                            out[(w.id, r.id)] = t
            return out
        if name in ("completedAt", "completedAtStage"):
            staged = name == "completedAtStage"
            key = ("static", name)
            if key not in self._static:
                self._static[key] = completed_at(self.el, staged)
            out = dict(self._static[key])
            for pair, ks in completion_unspecified(self.el, staged)[0].items():
                t = d.async_choice(ks)
                if t is not False:
                    out[pair] = t
            return out
        if name == "barSig":
            return {k: t for k, t in d.bar_sig().items() if t is not False}
        if name == "barExec":
            return {k: t for k, t in d.bar_exec().items() if t is not False}
        if name == "barBmo":
            return {k: t for k, t in d.bar_bmo().items() if t is not False}
        if name == "co":
            out = {}
            for loc in self.el.locs:
                ws = self.el.writes_to(loc)
                for a in ws:
                    for b in ws:
                        if a.id != b.id:
                            t = d.co(a, b)
                            if t is not False:
                                out[(a.id, b.id)] = t
            return out
        raise KeyError(name)
