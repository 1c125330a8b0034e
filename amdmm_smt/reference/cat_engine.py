"""The reference engine driven by a model file (`--model FILE.cat`, docs/semantics.md §18).

The engine's machinery stays: the reads-from choices, the values of reads, registers and
writes (values.py, control.py), the final states (engine.py). What a consistent execution is
comes from the file: for every candidate (a reads-from choice, its values, and one `co` order
per location of the writes that happen) the definitions are evaluated on the concrete
execution (cat/eval.py MaskAlgebra), every axiom is checked, and the value statement decides
whether every read's choice is the one the model gives it: a definite read chose a write it
may see, a read that is not definite chose undef. Nothing of the hand-written rules is used,
not even to prune choices: every read may choose undef or any other write to its location.
"""

from __future__ import annotations

import itertools

from ..cat.base import Base, Dynamic, Terms
from ..cat.eval import Evaluator, MaskAlgebra, TriAlgebra, TriTerms
from .common import NOWRITE
from .engine import _Engine


class _BoolTerms(Terms):
    def and_(self, *xs):
        return all(xs)

    def or_(self, *xs):
        return any(xs)

    def not_(self, x):
        return not x


NO_BARRIER = (frozenset(), frozenset(), frozenset())


class _Barrier(Dynamic):
    """The barrier relations of the group of runs being enumerated (run_barrier enumerates
    each group with its own, so they are known in every execution of it): `bar` is (barSig,
    barExec, barBmo) as sets of pairs."""
    def __init__(self, bar=NO_BARRIER):
        self.bar = bar

    def bar_sig(self):
        return dict.fromkeys(self.bar[0], True)

    def bar_exec(self):
        return dict.fromkeys(self.bar[1], True)

    def bar_bmo(self):
        return dict.fromkeys(self.bar[2], True)


class _Unknown(_Barrier):
    """Any execution: a cmpxchg may or may not write, any write may be read, any two writes
    that happen are in either order but the initial write first; the barrier relations are
    those of the group at hand."""
    def async_choice(self, keys):
        return None             # perhaps: every alternative of unspecified completion

    def hap(self, e):
        return None if e.kind == "cmpxchg" else True

    def rf(self, w, r):
        return None

    def co(self, a, b):
        if b.is_init:
            return False
        if a.is_init:
            return self.hap(b)
        return None


class _Dyn(_Barrier):
    def __init__(self, hap, rf, pos, bar=NO_BARRIER, chosen=frozenset()):
        super().__init__(bar)
        self._hap, self._rf, self._pos = hap, rf, pos
        self.chosen = chosen    # R-call-async-seq: the unspecified completions chosen

    def async_choice(self, keys):
        return any(k in self.chosen for k in keys)

    def hap(self, e):
        return self._hap[e.id]

    def rf(self, w, r):
        return self._rf.get(r.id) == w.id

    def co(self, a, b):
        pa, pb = self._pos.get(a.id), self._pos.get(b.id)
        return pa is not None and pb is not None and pa < pb


class CatEngine(_Engine):
    def __init__(self, elab, cat, analyse: bool = False):
        super().__init__(elab)
        self.cat = cat
        # warning[model-inconsistent] (docs/semantics.md §18): every candidate, unpruned, with
        # the set of rules (cat.rules indices) it breaks; nothing is recorded
        self.analyse = analyse
        self.fail_sets: set = set()
        # `flag ~empty e as NAME` (docs/semantics.md §18, reported as 10.6): the first flag
        # found not empty in a consistent execution, and whether some execution is defined
        self.flags = [ax for ax in cat.axioms if ax.flag]
        self.axioms = [ax for ax in cat.axioms if not ax.flag]
        self.flag_hit = None
        self.any_defined = False
        self.alg = MaskAlgebra(self.n)
        self.static: dict = {}
        self.shared: dict = {}
        sp_of = {loc: elab.space_of(loc) for loc in elab.locs}
        self.reads_in = {sp: [r for r in self.reads if sp_of[self.ev[r].loc] == sp]
                         for sp in self.spaces}
        # execution barriers (models/barrier.cat): the (barSig, barExec) of the group of runs
        # being enumerated; set by run_barrier
        self.bar = NO_BARRIER
        self.chosen = frozenset()

    def run(self, limit: int) -> set:
        """The final states over every alternative of the completions the documents leave
        unspecified across function bodies (docs R-call-async-seq: per mark, the first of its
        later waits of other body executions at which it is completed, or none; completed
        stays completed), the model's base names `completedAt` / `completedAtStage` taking
        them (cat/base.py completion_unspecified)."""
        from ..cat.base import completion_unspecified
        chains = [c for staged in (False, True) for c in
                  completion_unspecified(self.elab, staged)[1]]
        n = 1
        for c in chains:
            n *= len(c) + 1
        if n > 4096:
            from .common import ReferenceUnsupported
            raise ReferenceUnsupported(f"{n} alternatives of unspecified completion")
        self.limit = limit
        self.count = 0
        self.out = set()
        for pick in itertools.product(*[range(len(c) + 1) for c in chains]):
            self.chosen = frozenset(k for c, t in zip(chains, pick) for k in c[t:])
            self._run_one(limit)
        return self.out

    def choices(self):
        if self.analyse:      # every choice: a rule the file drops may be what excluded it
            return [[None] + [w for w in self.writes_of[self.ev[r].loc] if w != r]
                    for r in self.reads]
        return self._choices()

    def _choices(self):
        """Undef or any write to the read's location but itself (R-rmw-self), minus what the
        file's own definitions exclude in every execution: the model evaluated once with
        every choice unknown (cat/eval.py TriAlgebra) gives the writes a read may see in
        some execution, and the reads that are definite in every one (never undef)."""
        tri = TriAlgebra(self.n)
        ev = Evaluator(self.cat, tri, Base(self.elab, TriTerms(), _Unknown(self.bar)),
                       self.spaces)
        v = self.cat.value
        may: dict = {}
        sure: set = set()
        for sp in self.spaces:
            if not self.reads_in[sp]:
                continue
            ms = ev.eval(v.maysee, {}, sp)
            df = ev.eval(v.definite, {}, sp)
            for r in self.reads_in[sp]:
                may[r] = {w for (w, r2) in ms if r2 == r}
                if df.get(r) is True:
                    sure.add(r)
        out = []
        for r in self.reads:
            ws = [w for w in self.writes_of[self.ev[r].loc] if w != r and w in may[r]]
            out.append(ws if r in sure else [None] + ws)
        return out

    def assignments(self, choices):
        """Every combination, dropping one where a read chose a cmpxchg already known to fail
        (it does not write, so nothing can read from it)."""
        reads = self.reads
        for combo in itertools.product(*choices):
            rf = dict(zip(reads, combo))
            targets = [c for c in rf.values() if c is not None and self.ev[c].kind == "cmpxchg"]
            if any(self.cas_fails(t, rf) for t in targets):
                continue
            yield rf

    def explore(self, rf, rval, wval):
        ev = self.ev
        if self.elab.assumes and self.path_check(rval, False) == "off":
            return            # section 15.4: not an execution of this path
        if self.analyse and self.elab.assumes and self.path_check(rval) != "ok":
            return            # a branch on undef: undefined, not an execution (as x.ub)
        hap = [bool(e.writes) and wval[e.id] is not NOWRITE for e in ev]
        if any(w is not None and not hap[w] for w in rf.values()):
            return            # a read cannot take its value from a write that did not happen
        locs = list(self.writes_of)
        per_loc = []
        for loc in locs:
            ws = [w for w in self.writes_of[loc] if hap[w]]
            init = [w for w in ws if ev[w].is_init]
            rest = [w for w in ws if not ev[w].is_init]
            per_loc.append([tuple(init) + p for p in itertools.permutations(rest)])
        held: dict = {}       # what does not depend on co: the same for every order below
        for cos in itertools.product(*per_loc):
            self.tick()
            pos = {}
            for order in cos:
                for k, w in enumerate(order):
                    pos[w] = k
            if self.consistent(hap, rf, pos, held):
                self.record(rval, wval, {loc: (order[-1] if order else None)
                                         for loc, order in zip(locs, cos)})

    def consistent(self, hap, rf, pos, held=None) -> bool:
        """Is the candidate (which writes happen, reads-from, the coherence positions) an
        execution of the file? `held`: the values that do not depend on co, kept across the
        candidates of one (hap, rf) that differ in co alone (docs/semantics.md §18)."""
        base = Base(self.elab, _BoolTerms(), _Dyn(hap, rf, pos, self.bar, self.chosen))
        base._static = self.static          # the static base names once per test
        ev = Evaluator(self.cat, self.alg, base, self.spaces, self.shared,
                       held=held if HOLD else None)
        if self.analyse:
            # flagged executions are undefined, not executions (the SMT engine's x.ub)
            if not any(not self.alg.holds("empty", ev.eval(ax.expr, {}, sp))
                       for ax in self.flags for sp in ev.spaces_of(ax.expr, self.spaces)):
                self.fail_sets.add(self._broken(ev, rf))
            return False
        if not self._value_holds(ev, rf):
            return False
        for ax in self.axioms:
            for sp in ev.spaces_of(ax.expr, self.spaces):
                if not self.alg.holds(ax.kind, ev.eval(ax.expr, {}, sp)):
                    return False
        for ax in self.flags:
            for sp in ev.spaces_of(ax.expr, self.spaces):
                if not self.alg.holds("empty", ev.eval(ax.expr, {}, sp)):
                    self.flag_hit = self.flag_hit or ax
                    return False      # undefined: not a defined execution
        self.any_defined = True
        return True

    def _value_holds(self, ev, rf) -> bool:
        """The value statement: a definite read chose a write it may see, another chose undef."""
        v = self.cat.value
        for sp in self.spaces:
            if not self.reads_in[sp]:
                continue
            ms = ev.eval(v.maysee, {}, sp)
            df = ev.eval(v.definite, {}, sp)
            for r in self.reads_in[sp]:
                w = rf.get(r)
                if df >> r & 1:
                    if w is None or not ms[w] >> r & 1:
                        return False
                elif w is not None:
                    return False
        return True

    def _broken(self, ev, rf) -> frozenset:
        """The rules (indices into cat.rules) this candidate breaks."""
        from ..cat import rules
        idx = {ax.name: i for i, ax in enumerate(rules(self.cat)) if i}
        out = set() if self._value_holds(ev, rf) else {0}
        for ax in self.axioms:
            if idx[ax.name] in out:
                continue
            for sp in ev.spaces_of(ax.expr, self.spaces):
                if not self.alg.holds(ax.kind, ev.eval(ax.expr, {}, sp)):
                    out.add(idx[ax.name])
                    break
        return frozenset(out)

    def conflict(self):
        return conflict(self.cat, self.fail_sets)

    def flag_analysis(self):
        """The flag that holds in some consistent execution, as outcomes.judge_ub reads it,
        or None."""
        from ..outcomes import FlagUB
        ax = self.flag_hit
        if ax is None:
            return None
        return FlagUB(ax.name, ax.file, ax.line, not self.any_defined)


HOLD = True     # keep what does not depend on co across a reads-from's orders (tests compare)


def run_barrier(eng: CatEngine, limit: int):
    """A test with execution barriers under a model file (models/barrier.cat): the runs are
    the reference engine's own (reference/barrier.py, docs 10.4), grouped by what they give
    the file (barSig, the isfirst registers, barExec); the memory executions of every group
    are enumerated with that group's relations. Returns (final states, the barrier analysis
    that judges undefined behaviour as 10.6 does)."""
    from .barrier import analyse
    an = analyse(eng.elab, eng.spaces, limit, sig=True)
    groups = sorted(an.groups, key=repr)
    out: set = set()
    for sig, regs, xb in groups:
        # pr170447 runs: each barrier-modification-order's forbidden hb pairs (barBmo) apart
        for bmo in sorted(an.groups[(sig, regs, xb)], key=repr):
            eng.bar = (sig, xb, bmo)
            eng.bar_regs = {k: (v if v is None else v & 0xFFFFFFFF) for k, v in regs}
            out |= eng.run(limit)
    return out, an


def conflict(cat, fail_sets):
    """After analysing runs (fail_sets: the rules each candidate breaks, over every path
    combination): a minimal set of rules every candidate breaks one of, by deleting each
    rule in cat.rules order while the rest still exclude every candidate (the SMT engine's
    encode/cat_z3.py conflicting_rules, the same order); None when no candidate exists or one
    breaks nothing."""
    from ..cat import rules
    if not fail_sets or frozenset() in fail_sets:
        return None
    keep = list(range(len(rules(cat))))
    for i in list(keep):
        trial = [k for k in keep if k != i]
        if all(fs & set(trial) for fs in fail_sets):
            keep = trial
    return keep
