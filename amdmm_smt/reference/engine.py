"""The driver of the reference engine: the static relations, the enumeration of candidate
executions (reads-from choices, values, co orders) and the final states (docs/semantics.md
section 6 "Candidate execution", "Final state", "Outcome"); each family of definitions is a
mixin in its own module."""

from __future__ import annotations

import itertools

from ..elaborate.events import Elab
from ..ir import WORKGROUP, at_least_monotonic
from ..outcomes import projection
from .async_ops import ASYNC_KINDS, AsyncOps
from .avvis import AvVis
from .control import Control
from .coherence import Coherence
from .common import (LEVELS, NOWRITE, UNKNOWN, ReferenceTooBig, ReferenceUnbounded,
                     ReferenceUnsupported, _bits, _Guess, _signed)
from .barrier import _closure, analyse
from .seq_cst import SeqCst
from .sync import Sync
from .values import Values


class _Engine(Values, Sync, AvVis, Coherence, SeqCst, AsyncOps, Control):
    """One elaborated test. The state every family reads: `ev`, `n`, `opts`, the static
    relations below (bit masks over event ids), `spaces` and `loc_space`."""

    def __init__(self, elab: Elab):
        self.elab = elab
        self.opts = elab.model.options
        ev = self.ev = elab.events
        n = self.n = len(ev)
        assert all(e.id == i for i, e in enumerate(ev))
        # execution barriers (barrier.py, docs/semantics.md 10.5): for one group of runs,
        # the barrier synchronizes-with edges per space (masks), the isfirst registers and,
        # under pr170447, the alternative sets of hb pairs the runs' bmo forbid
        self.bsw: dict = {}
        self.bar_xb: list = []        # R-bar-hb-exec: event -> mask of events it executes before
        self.bar_regs: dict = {}
        self.hb_alts = None
        for e in ev:
            if e.kind not in ("init", "load", "store", "rmw", "cmpxchg", "fence", "av_load",
                              "av_store") + ASYNC_KINDS:
                raise ReferenceUnsupported(f"{e.label}: event kind {e.kind}")
            if getattr(e, "instr", None) is not None and e.instr.guard is not None:  # unused
                raise ReferenceUnsupported(f"{e.label}: guarded instruction")
        self.thread_ids = [e.id for e in ev if not e.is_init]
        self.thread_mask = sum(1 << i for i in self.thread_ids)
        self.init_of = {e.loc: e.id for e in ev if e.is_init}
        mem = elab.test.memory
        self.loc_space = {name: mem[name].space for name in elab.locs}
        self.spaces = sorted(set(self.loc_space.values()))

        # static relations
        # program order (async operations: docs §11.5, async_ops.py)
        self.po = [sum(1 << j for j in range(n) if self.program_order(i, j)) for i in range(n)]
        # program order between MMRA-compatible instructions, none of them A.r / A.w (section
        # 6: the po part of hb; po_hb(a, b, AS) = po(a, b) ∧ hb_AS(a, b) contains it)
        self.po_c = [sum(1 << j for j in _bits(self.po[i]) if self.po_in_hb_pair(i, j))
                     for i in range(n)]
        self.init_async()      # completion and the async hb edges E-init / E-done (§11.4-5)
        self.cont = [[sum(1 << j for j in range(n) if elab.contains(ev[i], lv, ev[j]))
                      for lv in LEVELS] for i in range(n)]
        if self.opts.async_scope == "workgroup":    # docs R-async-scope, the cautious reading
            copy = sum(1 << j for j in range(n) if ev[j].async_of is not None)
            for i in range(n):
                for k, lv in enumerate(LEVELS):
                    if lv < WORKGROUP:
                        self.cont[i][k] &= ~(copy & ~(1 << i)) if ev[i].async_of is None \
                            else (1 << i)
        self.incl = [sum(1 << j for j in range(n) if j != i and elab.inclusive(ev[i], ev[j]))
                     for i in range(n)]
        # inclusion for synchronization in each address space (LDS: scope_in)
        self.incl_in = {}
        for sp in self.spaces:
            if hasattr(elab, "scope_in"):
                self.incl_in[sp] = [
                    sum(1 << j for j in range(n)
                        if j != i and elab.inclusive(ev[i], ev[j], sp)) for i in range(n)]
            else:
                self.incl_in[sp] = self.incl
        sync_spaces = getattr(elab, "sync_spaces", None)
        every = frozenset(self.spaces)
        self.sync_sp = [every if (sync_spaces is None or e.is_init)
                        else frozenset(sync_spaces(e)) & every for e in ev]

        self.acc_mask: dict[str, int] = {}
        for e in ev:
            if not e.is_init and (e.reads or e.writes):
                self.acc_mask[e.loc] = self.acc_mask.get(e.loc, 0) | (1 << e.id)
        self.writes_of = {loc: [e.id for e in ev if e.writes and e.loc == loc]
                          for loc in elab.locs}
        self.reads = [e.id for e in ev if e.reads]
        self.rmwlike = [e.kind in ("rmw", "cmpxchg") for e in ev]
        self.strong = [e.is_init or (e.atomic and at_least_monotonic(e.order)) for e in ev]
        self.avs = [self._avs(e) for e in ev]
        self.same_loc = [sum(1 << j for j in range(n)
                             if ev[i].loc is not None and ev[j].loc == ev[i].loc)
                         for i in range(n)]
        # po|≠loc: po between accesses to different locations, or involving a fence
        self.po_nl = [sum(1 << j for j in _bits(self.po[i])
                          if ev[i].is_fence or ev[j].is_fence or ev[i].loc != ev[j].loc)
                      for i in range(n)]
        self.reg_event = dict(elab.regs)
        self.ub = None                 # section 15.5: (thread, line) of a branch on undef
        self.incl_of = {loc: self.incl_in[sp] for loc, sp in self.loc_space.items()}
        self.init_sync()

    def bmo_consistent(self, hbs) -> bool:
        """pr170447 (S003 "Barrier-modification-order<BO> is consistent with
        happens-before"): some run of the group has no bmo pair contradicted by hb."""
        for forbidden in self.hb_alts:
            if not any(hb[e] >> f & 1 for (e, f) in forbidden for hb in hbs.values()):
                return True
        return False

    def analyze(self, rf, hap, roles, sw):
        """Everything of sections 6 and 7 that does not depend on co, for one reads-from
        choice and one synchronizes-with (`sw[sp]` per address space): happens-before per
        address space (each acyclic), availability, visibility, location order, may-see and
        the value rule (must hold), and the coherence rules as constraints on co: `pred[w]`
        (writes that must be before w) and `adj[m] = w` (RMW atomicity: m immediately after
        w). Returns (hbs, pred, adj) or None if the candidate is inconsistent. The checks that
        need only hb and rf come first (they are cheap and reject most candidates)."""
        MA, MV = roles[2], roles[3]
        hbs = self.hbs_per_space(sw)                                       # sync.py
        if hbs is None:
            return None
        if self.hb_alts is not None and not self.bmo_consistent(hbs):      # barrier (10.5)
            return None
        hb_of = {loc: hbs[sp] for loc, sp in self.loc_space.items()}
        hbx_of = hb_of
        if self.bar_xb:
            # docs 10.7 R-bar-hb-exec: (hb ∪ barrier execution order)+ has no cycle, and a
            # read may not see a write it executes before
            hbxs = {}
            for sp in self.spaces:
                h = _closure([a | b for a, b in zip(hbs[sp], self.bar_xb)])
                if any(h[i] >> i & 1 for i in range(self.n)):
                    return None
                hbxs[sp] = h
            hbx_of = {loc: hbxs[sp] for loc, sp in self.loc_space.items()}
        if self.sees_hb_later(rf, hbx_of):                                 # values.py
            return None
        pred, adj = self.coherence_constraints(rf, hap, hb_of)             # coherence.py
        if not self.orderable(pred):
            return None
        lo = self.location_order(hap, MA, MV, hb_of)                       # avvis.py
        if not self.value_rule_holds(rf, hap, hb_of, lo, hbx_of):          # values.py
            return None
        if self.opts.final_co != "hb":
            self.lo_in_co(pred, lo, hap)                                   # coherence.py
        return hbs, pred, adj

    # ---- enumeration -----------------------------------------------------------------------

    def static_hb(self):
        """A lower bound of every hb_AS: the transitive closure of program order between
        compatible instructions and the async edges E-init / E-done (docs §6, §11.5), which
        do not depend on the execution (sw only adds edges)."""
        n = self.n
        hb = [self.po_c[i] | self.async_hb[i] for i in range(n)]
        for k in range(n):
            bk, hk = 1 << k, hb[k]
            if hk:
                for i in range(n):
                    if hb[i] & bk:
                        hb[i] |= hk
        return hb

    def choices(self):
        """For every read, the choices the definitions do not exclude whatever the execution
        is: undef, or a write to its location except
        * itself and writes that happen after it in every execution (static hb: program order
          within happens-before, and the async edges; such a write is hb-after the read, hence
          never seen, also with read_lo where lo(R, ·) ⊇ hb(R, ·));
        * writes W hidden by a write W' that always happens (not a cmpxchg) with W initial or
          W before W', and W' before R, in program order within static happens-before:
          lo(W, W') ∧ lo(W', R) by the program-order clause of location order;
        and undef is dropped when R is always definite: either R atomic, every write to the
        location atomic and inclusive with R and with each other (branch (b) for any may-see
        set), and some write always location-ordered before R (the initial write, or a write
        that always happens before R in program order within happens-before); or (branch (d))
        one write w that always happens is always location-ordered before R and every other
        write to the location is the initial write (nothing is ever hb-before an initial
        write, so it is location-ordered before nothing and hides nothing) or always happens
        after R (a write location-ordered before a read happens before it, S000 property 1):
        then R may see exactly w."""
        ev = self.ev
        hb0 = self.hb_static = self.static_hb()
        poh = [self.po[i] & hb0[i] for i in range(self.n)]      # sure po_hb
        out = []
        for r in self.reads:
            loc = ev[r].loc
            ws = [w for w in self.writes_of[loc] if w != r]
            sure_before = [w for w in ws if poh[w] >> r & 1 and ev[w].kind != "cmpxchg"]
            keep = []
            for w in ws:
                if hb0[r] >> w & 1:
                    continue
                if any(w2 != w and (ev[w].is_init or poh[w] >> w2 & 1)
                       for w2 in sure_before):
                    continue
                keep.append(w)
            inc = self.incl_in[self.loc_space[loc]]
            always_definite = (
                ev[r].atomic
                and all(ev[w].atomic and inc[w] >> r & 1 for w in ws)
                and all(inc[a] >> b & 1 for a in ws for b in ws if a != b)
                and (loc in self.init_of or bool(sure_before)))
            if len(keep) == 1:
                w = keep[0]
                if (ev[w].is_init or w in sure_before) and all(
                        w2 == w or ev[w2].is_init or hb0[r] >> w2 & 1 for w2 in ws):
                    always_definite = True
            out.append(keep if always_definite else [None] + keep)
        return out

    def tick(self):
        self.count += 1
        if self.count > self.limit:
            raise ReferenceTooBig(f"more than {self.limit} candidate executions")

    def run(self, limit: int) -> set:
        self.keys = projection(self.elab.test)[0]
        self.limit = limit
        self.count = 0
        self.out: set = set()
        choices = self.choices()
        total = 1
        for c in choices:
            total *= len(c)
        if total > limit:
            raise ReferenceTooBig(f"{total} reads-from choices (limit {limit})")
        for rf in self.assignments(choices):
            pending = [{}]
            while pending:
                guess = pending.pop()
                self.tick()
                try:
                    vals = self.values(rf, guess)
                except _Guess as g:
                    pending += [{**guess, g.cid: False}, {**guess, g.cid: True}]
                    continue
                if vals is not None:
                    self.explore(rf, *vals)
        return self.out

    def assignments(self, choices):
        """The reads-from choices (one dict per candidate), depth first in event order,
        dropping a partial choice as soon as a read chose a cmpxchg that is already known to
        fail (it would not happen, so nothing can read from it)."""
        reads = self.reads
        self.plain_rmws = [m for m in reads if self.ev[m].kind == "rmw"]
        rf: dict = {}
        targets: list = []             # reads whose chosen cmpxchg may still fail

        def rec(k):
            if k == len(reads):
                yield dict(rf)
                return
            r = reads[k]
            for c in choices[k]:
                if c is not None and self.ev[r].kind == "rmw" and self.strong[c] and any(
                        rf.get(m) == c for m in self.plain_rmws):
                    continue    # RMW atomicity: two RMWs cannot both directly follow c
                rf[r] = c
                added = c is not None and self.ev[c].kind == "cmpxchg"
                if added:
                    targets.append(c)
                if not any(self.cas_fails(t, rf) for t in targets):
                    yield from rec(k + 1)
                if added:
                    targets.pop()
            rf.pop(r, None)     # every choice may have been skipped (RMW atomicity)

        yield from rec(0)

    def explore(self, rf, rval, wval):
        """Every co order for one reads-from choice and its values."""
        ev, n = self.ev, self.n
        if self.elab.assumes and self.path_check(rval, False) == "off":
            return            # section 15.4: not an execution of this path
        hap = [bool(e.writes) and wval[e.id] is not NOWRITE for e in ev]
        order = [e.order for e in ev]
        for e in ev:
            if e.kind == "cmpxchg" and not hap[e.id]:
                order[e.id] = e.fail_order
        rfl = [rf.get(i) for i in range(n)]
        if self.rmw_shares_target(rfl, hap):
            return
        roles = self.roles(hap, order)
        fixed, cond = self.sync_edges(rfl, hap, roles[0], roles[1])
        nodes = {loc: [w for w in ws if hap[w]] for loc, ws in self.writes_of.items()}
        locs = list(nodes)

        if not cond:
            an = self.analyze(rfl, hap, roles, fixed)
            if an is None:
                return
            hbs, pred, adj = an
            if not self.psc_needed(order):
                lasts = []
                for loc in locs:
                    if not nodes[loc]:
                        lasts.append([None])
                        continue
                    ls = self.possible_lasts(nodes[loc], pred, adj)
                    if not ls:
                        return
                    lasts.append(sorted(ls))
                for combo in itertools.product(*lasts):
                    self.tick()
                    self.record(rval, wval, dict(zip(locs, combo)))
                return
            per_loc = [list(self.extensions(nodes[loc], pred, adj)) for loc in locs]
            for cos in itertools.product(*per_loc):
                self.tick()
                co = dict(zip(locs, cos))
                if self.psc_acyclic(rfl, order, hbs, co):
                    self.record(rval, wval, {loc: (lst[-1] if lst else None)
                                             for loc, lst in co.items()})
            return

        # synchronizes-with depends on co (a release sequence through RMWs): list the co
        # orders allowed by what does not depend on sw (initial write first, program order in
        # hb between writes ⊆ lo, or ⊆ hb with final_co: hb, RMW atomicity), group them by
        # the sw they give, and analyse each group once.
        base_pred, base_adj = self.co_base(nodes, rfl, hap)
        per_loc = [list(self.extensions(nodes[loc], base_pred, base_adj)) for loc in locs]
        groups: dict = {}
        for cos in itertools.product(*per_loc):
            self.tick()
            co = dict(zip(locs, cos))
            sw = self.sw_under_co(fixed, cond, co)
            key = tuple(tuple(sw[sp]) for sp in self.spaces)
            groups.setdefault(key, (sw, []))[1].append(co)
        for sw, cos in groups.values():
            an = self.analyze(rfl, hap, roles, sw)
            if an is None:
                continue
            hbs, pred, adj = an
            for co in cos:
                if not all(self.respects(lst, pred) for lst in co.values()):
                    continue
                if self.psc_acyclic(rfl, order, hbs, co):
                    self.record(rval, wval, {loc: (lst[-1] if lst else None)
                                             for loc, lst in co.items()})

    def record(self, rval, wval, last):
        """Add the final state: registers, then the named locations (the value of the co-last
        write that happens; undef if there is none)."""
        if self.elab.assumes:
            chk = self.path_check(rval)
            if chk != "ok":        # section 15.5: a consistent execution branching on undef
                self.ub = self.ub or chk[1:]
                return
        for r, v in rval.items():      # docs R-no-thin-air: a value that depends on itself
            if v is UNKNOWN:
                raise ReferenceUnbounded(
                    f"the read at line {self.ev[r].instr.line}: a consistent execution whose "
                    "value depends on itself through reads-from (out of thin air)")
        state = []
        for k in self.keys:
            if k.startswith("@"):
                w = last.get(k[1:])
                v = None if w is None else wval[w]
            else:
                tname, reg = k.split(":%", 1)
                if (tname, reg) in self.bar_regs:
                    v = self.bar_regs[(tname, reg)]        # isfirst (docs 10.5)
                else:
                    v = self.reg_value(tname, reg, rval.__getitem__)   # control.py (§15.4)
            if v is UNKNOWN:
                raise ReferenceUnbounded(
                    f"{k}: a consistent execution whose value depends on itself through "
                    "reads-from (out of thin air)")
            state.append((k, _signed(v)))
        self.out.add(tuple(state))


def reference_outcomes(elab: Elab, limit: int = 2_000_000) -> set[tuple]:
    """The final states of the defined candidate executions (docs/semantics.md 10.6)."""
    return reference_analysis(elab, limit)[0]


def reference_analysis(elab: Elab, limit: int = 2_000_000):
    """(final states of the defined executions, barrier analysis or None)."""
    out, an, _ = reference_analysis_ub(elab, limit)
    return out, an


def reference_analysis_ub(elab: Elab, limit: int = 2_000_000):
    """(final states of the defined executions, barrier analysis or None, first branch on
    undef or None) — a path combination of section 15 with barrier operations (15.9)."""
    if getattr(elab.model.options, "no_thin_air", False):
        raise ReferenceUnsupported("the no_thin_air option is not implemented by the "
                                   "reference engine")
    if getattr(elab, "barrier", None) is None:
        eng = _Engine(elab)
        return eng.run(limit), None, eng.ub
    eng = _Engine(elab)
    an = analyse(elab, eng.spaces, limit)                              # barrier.py
    # runs whose bsw give the same (po ∪ bsw)+ in every space give the same happens-before
    # for every reads-from choice (hb = (po ∪ sw ∪ bsw)+): analyse the memory once for them
    merged: dict = {}
    for (bsw, regs, xb), alts in sorted(an.groups.items(), key=repr):
        masks = {sp: [0] * eng.n for sp in eng.spaces}
        for (sp, f, g) in bsw:
            masks[sp][f] |= 1 << g
        xmask = [0] * eng.n
        for (a, b) in xb:
            xmask[a] |= 1 << b
        key = (tuple(tuple(_closure([a | b for a, b in zip(eng.po_c, masks[sp])]))
                     for sp in eng.spaces), regs, tuple(xmask))
        if key not in merged:
            merged[key] = (masks, set())
        merged[key][1].update(alts)
    out: set = set()
    for (_, regs, xmask), (masks, alts) in merged.items():
        eng.bsw = masks
        eng.bar_xb = list(xmask) if any(xmask) else []
        eng.bar_regs = {k: (v if v is None else v & 0xFFFFFFFF) for k, v in regs}
        eng.hb_alts = None if alts == {frozenset()} else list(alts)
        out |= eng.run(limit)
    return out, an, eng.ub


def _reference_outcomes(elab: Elab, limit: int = 2_000_000) -> set[tuple]:
    """The set of final states over all consistent candidate executions. Raises
    ReferenceTooBig if more than `limit` candidate executions would be examined (subclasses:
    ReferenceUnbounded for values out of thin air, ReferenceUnsupported)."""
    return _Engine(elab).run(limit)


def reference_outcomes_ub(elab: Elab, limit: int = 2_000_000):
    """(final states, first branch on undef found or None) — section 15."""
    if getattr(elab.model.options, "no_thin_air", False):
        raise ReferenceUnsupported("the no_thin_air option is not implemented by the "
                                   "reference engine")
    eng = _Engine(elab)
    out = eng.run(limit)
    return out, eng.ub
