"""The AMDGPU availability / visibility model (S000 "Availability and Visibility",
"Ordering", "Location Order"): one function per definition.

For a write W, `avail[W][X]` says X is an availability operation on W; `vis[W][Y][L]` says
Y makes W visible in Y's instance of scope level L (S000: a visibility operation makes W
visible in a scope instance S "and every subscope instance of S that includes Y", so the
instances form a chain up from Y and a level is enough). Both definitions are recursive
through happens-before; they are encoded as definitional variables, whose solution is unique
because happens-before is irreflexive (each step needs a strictly hb-earlier operation).
"""

from __future__ import annotations

from typing import Optional

from . import families as F
from ..elaborate import may
from ..elaborate.events import Event, load_visible, store_available
from ..ir import SYSTEM, WORKGROUP, is_acquire, is_release
from .execution import Execution
from .logic import AND, B, IFF, NOT, OR


def av_scope(x: Execution, e: Event) -> Optional[int]:
    """Scope of e as a store-available / load-visible operation (S000 store-available,
    load-visible); None when it is neither. Options: UP 2.1(2) LDS accesses at workgroup,
    UP 2.1(3) non-atomic volatile accesses at the widest scope of their address space."""
    o = x.elab.model.options
    local = e.loc is not None and x.elab.test.memory[e.loc].space == "local"
    if e.is_init:
        return SYSTEM
    if o.lds_av_workgroup and local:
        return WORKGROUP   # UP 2.1(2): "independent of the syncscope of an atomic access"
    if store_available(e) or load_visible(e):
        return x.elab.av_scope_in(e, x.elab.space_of(e.loc))
    if o.volatile_av and e.volatile:
        return WORKGROUP if local else SYSTEM
    return None


def make_available(x: Execution, e: Event, av_none_too: bool = False) -> B:
    """S000 MakeAvailable: "A synchronization operation with at least release ordering ...
    if it is not marked as !{!"amdgcn-av", !"none"}". (`av_none_too`: as if unmarked.)"""
    if (e.av_none and not av_none_too) or e.is_init:
        return False
    if e.kind == "cmpxchg":
        return AND(x.writes(e), is_release(e.order))
    return e.kind in ("store", "rmw", "fence") and is_release(e.order)


def make_visible(x: Execution, e: Event, av_none_too: bool = False) -> B:
    """S000 MakeVisible: "A synchronization operation with at least acquire ordering ...
    if it is not marked as !{!"amdgcn-av", !"none"}". (`av_none_too`: as if unmarked.)"""
    if (e.av_none and not av_none_too) or e.is_init:
        return False
    if e.kind == "cmpxchg":
        s = x.writes(e)
        return OR(AND(s, is_acquire(e.order)), AND(NOT(s), is_acquire(e.fail_order)))
    return e.kind in ("load", "rmw", "fence") and is_acquire(e.order)


class AvVis:
    def __init__(self, x: Execution):
        self.x = x
        self.el = x.elab
        # per write W: {X: (expr, scope of X as availability op)}
        self.avail: dict[int, dict[int, tuple[B, int]]] = {}
        # per write W: {Y: (scope of Y, [expr for level 0..scope])}
        self.vis: dict[int, dict[int, tuple[int, list]]] = {}
        self._excl: dict = {}      # explain only: non-inclusive pairs, see _inclusive
        # docs §14 "Availability and visibility where they may matter": per write, the
        # operations that may be availability / visibility operations on it and whose being
        # so may reach a location-order edge (None: every operation)
        self._static: dict = {}    # static scope facts per pair, shared by every write
        self.may_avail: dict[int, set] = {}
        self.may_vis: dict[int, set] = {}
        self._cands: dict[int, dict] = {}

    def restrict(self, writes: list) -> None:
        """The candidates worth a variable, per write W (each set is closed under what the
        definitions of its members refer to, so the values of the kept variables, and the
        location order, are those of the full definition):
        forward  an availability or visibility operation on W is W, after W in program order,
                 or happens-before-after one of those (every clause needs an hb-earlier
                 availability or visibility operation, or W before it in program order), so
                 outside that set the definition's unique solution is false;
        backward location order reads a visibility operation that is R or before R in
                 program order (R a read of W's location), and an availability operation that
                 happens-before a write to it; visibility clauses refer to operations
                 happens-before the operation defined, availability clause (3) too, so the
                 operations neither those nor happens-before them are never read.
        "May happen-before" is the happens-before relation's set of pairs that have a
        variable or are constant true (encode/sync.py builds it as the closure of the
        program-order and possible synchronizes-with edges, so it is transitive)."""
        x, el = self.x, self.el
        pred_succ: dict[int, tuple[dict, dict]] = {}
        demand: dict[str, tuple[set, set]] = {}
        for w in writes:
            sp = x.space(w)
            rel = x.hb_by_space[sp]
            if id(rel) not in pred_succ:
                pred: dict[int, set] = {}
                succ: dict[int, set] = {}
                for (a, b) in rel:
                    pred.setdefault(b, set()).add(a)
                    succ.setdefault(a, set()).add(b)
                pred_succ[id(rel)] = (pred, succ)
            pred, succ = pred_succ[id(rel)]
            if (w.loc, sp) not in demand:
                reads = [e for e in x.ev if e.loc == w.loc and e.reads and not e.is_init]
                seed = {r.id for r in reads} | {e.id for e in x.ev for r in reads
                                                 if el.po(e, r)}
                bvis = set(seed)
                for s_ in seed:
                    bvis |= pred.get(s_, set())
                wr = [e.id for e in x.ev if e.loc == w.loc and e.writes and not e.is_init]
                bav = set(bvis) | set(wr)
                for s_ in wr:
                    bav |= pred.get(s_, set())
                demand[(w.loc, sp)] = (bvis, bav)
            bvis, bav = demand[(w.loc, sp)]
            start = {w.id} | {e.id for e in x.ev if el.po(w, e)}
            fwd = set(start)
            for s_ in start:
                fwd |= succ.get(s_, set())
            self.may_avail[w.id] = (fwd & bav) | {w.id}
            self.may_vis[w.id] = fwd & bvis

    def availability_operations(self, w: Event) -> dict[int, tuple[B, int]]:
        """S000 "Availability Operation": X is an availability operation on W if
        (1) X is W itself and W is store-available, or (2) X is a MakeAvailable that follows W
        in program order, or (3) X is a MakeAvailable whose scope instance includes W and some
        availability operation Z on W happens-before X with Z's scope instance including X."""
        x, el = self.x, self.el
        sp = x.space(w)
        cands: dict[int, tuple[B, int]] = {}
        may = self.may_avail.get(w.id)
        sw_ = av_scope(x, w)
        if sw_ is not None:
            cands[w.id] = (x.writes(w), sw_)
        for e in x.ev:
            # explain: an amdgcn-av:none release gets a variable too, fixed false by the
            # definition below, so that a core can name availability as what the tag removes
            if e.id == w.id or e.is_init or (may is not None and e.id not in may) \
                    or make_available(x, e, av_none_too=x.ctx.explaining) is False:
                continue
            if el.po(w, e) or el.contains(e, el.av_scope_in(e, sp), w):
                cands[e.id] = (x.ctx.fresh_bool(f"avail_{w.label}_{e.label}"),
                               el.av_scope_in(e, sp))
        for xid, (var, sx) in cands.items():
            if xid == w.id:
                continue
            e = x.ev[xid]
            base = AND(make_available(x, e), x.writes(w), x.po_hb(w, e, sp))          # (2)
            chain: B = False
            if el.contains(e, el.av_scope_in(e, sp), w):                                 # (3)
                chain = AND(make_available(x, e), OR(
                    AND(zv, x.hb(x.ev[zid], e, sp), el.contains(x.ev[zid], sz, e))
                    for zid, (zv, sz) in cands.items() if zid != xid))
            x.ctx.add(IFF(var, OR(base, chain)))
        return cands

    def vis_candidates(self, w: Event) -> dict[int, tuple[int, B]]:
        """The operations that may be visibility operations on W: {Y: (Y's top level, its
        role: true for a load-visible to W's address, else when it is a MakeVisible)}."""
        if w.id in self._cands:
            return self._cands[w.id]
        x, el = self.x, self.el
        sp = x.space(w)
        cands: dict[int, tuple[int, B]] = {}
        kept = self.may_vis.get(w.id)
        for y in x.ev:
            if y.id == w.id or y.is_init or (kept is not None and y.id not in kept):
                continue
            # a load-visible to the same address (S000), or any read with an av scope under
            # the upstream options (LDS, volatile)
            lv = y.reads and y.loc == w.loc and av_scope(x, y) is not None
            mv = make_visible(x, y)
            mv_none = make_visible(x, y, av_none_too=x.ctx.explaining)   # as for avail.
            if not lv and mv_none is False:
                continue
            scopes = []
            if lv:
                scopes.append(av_scope(x, y))
            if mv is not False or not lv:
                scopes.append(el.av_scope_in(y, sp))
            sy = max(scopes)        # docs: an operation with both roles acts at the wider one
            cands[y.id] = (sy, True if lv else mv)
        self._cands[w.id] = cands
        return cands

    def direct(self, w: Event, y: Event, sy: Optional[int] = None) -> bool:
        """docs §14 "Availability and visibility through W itself": W is an availability
        operation on itself (store-available, clause (1)) whenever it writes, and every other
        availability operation on W happens-after W (clause (2) needs W before it in program
        order within happens-before, clause (3) an availability operation happens-before it:
        induction). So when W's own scope instance includes Y (and, for a visibility
        candidate Y at top level sy, W's scope reaches sy with inclusive scopes), every term
        that W's definitions give Y implies the term of W itself: "Y is a visibility
        operation on W at every level" is "Y's role ∧ W writes ∧ W happens-before Y", and
        location order (2) towards a write Y is "W writes ∧ W happens-before Y". Not when
        explaining (a core names availability and visibility by their own variables)."""
        if self.x.ctx.explaining or not may.ENABLED:
            return False
        sw_ = av_scope(self.x, w)
        if sw_ is None:
            return False
        if sy is None:      # location order (2): Y a write in W's scope instance
            return self.el.contains(w, sw_, y)
        key = ("direct", w.id, y.id, sy)
        ok = self._static.get(key)
        if ok is None:
            ok = self._static[key] = sw_ >= sy and self._inclusive_at(w, sw_, y, sy)
        return ok

    def needs_availability(self, w: Event) -> bool:
        """Whether some definition reads W's availability operations other than through
        `direct` (else they get no variables: nothing would read them)."""
        x = self.x
        if any(not self.direct(w, x.ev[yid], sy)
               for yid, (sy, _) in self.vis_candidates(w).items()):
            return True
        return any(not self.direct(w, y) for y in x.ev
                   if y.id != w.id and y.loc == w.loc and y.writes and not y.is_init)

    def visibility_operations(self, w: Event) -> dict[int, tuple[int, list]]:
        """S000 "Visibility Operation": Y (a load-visible to the same address or a MakeVisible)
        is a visibility operation on W if (1) an availability operation X on W happens-before
        Y with inclusive scopes: W visible in their common scope instance and below, towards Y;
        or (2) a visibility operation X on W happens-before Y, X made W visible in S1 including
        Y, X is in Y's scope instance S2: W visible in S1 ∩ S2 and below, towards Y."""
        x, el = self.x, self.el
        sp = x.space(w)
        avail = self.avail[w.id]
        cands = self.vis_candidates(w)
        direct = {yid for yid, (sy, _) in cands.items() if self.direct(w, x.ev[yid], sy)}
        # the terms of each candidate's definition whose static part is not false, per Y:
        # (1) availability operations X: (X's availability expr ∧ inclusion, hb(X, Y), top
        # level of their common scope); (2) visibility candidates X: (hb(X, Y), lowest level
        # m at which X's instance includes Y, X's top level)
        terms1: dict[int, list] = {}
        terms2: dict[int, list] = {}
        # the availability operations that may ground a visibility operation: inclusive with
        # some candidate they may happen-before (clause (1)); every other one makes W visible
        # to no candidate, directly or through a chain
        grounds = {zid for zid, (_, sz) in avail.items() if any(
            xid != zid and x.hb(x.ev[zid], x.ev[xid], sp) is not False
            and self._inclusive(x.ev[zid], sz, x.ev[xid], sx2, w) is not False
            for xid, (sx2, _) in cands.items())}
        for yid, (sy, _) in cands.items():
            terms1[yid], terms2[yid] = [], []
            if yid in direct:
                continue
            y = x.ev[yid]
            avs = []
            whole = may.ENABLED         # every availability term reaches Y's top level
            for xid, (av, sx) in avail.items():
                if xid == yid:
                    continue
                h = x.hb(x.ev[xid], y, sp)
                if h is False:
                    continue
                inc = self._inclusive(x.ev[xid], sx, y, sy, w)
                whole = whole and (xid not in grounds or (inc is True and sx >= sy))
                if inc is not False:    # a non-inclusive pair is False (explaining: a
                    avs.append((AND(av, inc), h, min(sx, sy)))    # variable fixed false)
            vs = []
            terms1[yid], terms2[yid] = avs, vs
            if whole:
                # docs §14 "Visibility through availability alone": every visibility
                # operation X on W has an availability operation Z in `grounds` happens-
                # before it (induction on happens-before over the two clauses); X happens-
                # before Y makes Z happen-before Y, and Z's term in (1) already makes W
                # visible at every level of Y, so (2) adds nothing for Y
                continue
            for xid, (sx2, _) in cands.items():
                if xid == yid:
                    continue
                h = x.hb(x.ev[xid], y, sp)
                if h is False:
                    continue
                m = self._lowest_including(x.ev[xid], sx2, y, sy)
                if m is not None and m <= sx2:
                    vs.append((xid, h, m, sx2))
        levels = self._levels(w, {y: c for y, c in cands.items() if y not in direct},
                              terms1, terms2)
        for yid in direct:      # docs §14 (`direct`): the definition itself, no variable
            sy, role = cands[yid]
            levels[yid] = [AND(role, x.writes(w), x.hb(w, x.ev[yid], sp))] * (sy + 1)
        # "visible at some level l1 >= lvl" of candidate X, as nested ORs shared by every
        # level (no new variables): up[X][l] = levels[l] ∨ up[X][l + 1]
        up: dict[int, list] = {}
        for xid, (sx2, _) in cands.items():
            levs = levels[xid]
            u: list = [False] * (sx2 + 2)
            for l1 in range(sx2, -1, -1):
                u[l1] = u[l1 + 1] if l1 < sx2 and levs[l1] is levs[l1 + 1] \
                    else OR(levs[l1], u[l1 + 1])
            up[xid] = u
        for yid, (sy, role) in cands.items():
            avs, lvls = terms1[yid], levels[yid]
            if yid in direct:
                continue
            vs = [(h, m, sx2, up[xid]) for xid, h, m, sx2 in terms2[yid]]
            # (1) as a chain over levels: the terms whose common scope reaches lvl are those
            # reaching exactly lvl plus those reaching lvl + 1 (each AND built once)
            c1_at: list = [False] * (sy + 2)
            for lvl in range(sy, -1, -1):
                c1_at[lvl] = OR([AND(av, h) for av, h, top in avs if min(top, sy) == lvl]
                                + [c1_at[lvl + 1]])
            # (2) as a chain too: X contributes "visible at some l1 >= max(lvl, m)"; for the
            # levels lvl < m that is one term, up[X][m] (shared down the chain below m), for
            # m <= lvl <= top(X) the term up[X][lvl]
            at_m = [AND(u[m], h) for h, m, sx2, u in vs]     # built once per X
            c2_below: list = [False] * (sy + 1)     # X with m > lvl
            c2_below[sy] = OR([a for a, (h, m, sx2, u) in zip(at_m, vs) if m > sy])
            for lvl in range(sy - 1, -1, -1):
                c2_below[lvl] = OR([a for a, (h, m, sx2, u) in zip(at_m, vs) if m == lvl + 1]
                                   + [c2_below[lvl + 1]])
            for lvl in range(sy + 1):
                if lvl < sy and lvls[lvl] is lvls[lvl + 1]:
                    continue          # the same definition as lvl + 1 (_levels)
                c2 = OR([a if m == lvl else AND(u[lvl], h)
                         for a, (h, m, sx2, u) in zip(at_m, vs) if m <= lvl <= sx2]
                        + [c2_below[lvl]])
                x.ctx.add(IFF(lvls[lvl], AND(role, OR(c1_at[lvl], c2))))
        return {yid: (sy, levels[yid]) for yid, (sy, _) in cands.items()}

    def _levels(self, w: Event, cands: dict, terms1: dict, terms2: dict) -> dict[int, list]:
        """Per candidate Y, its variables for levels 0..sy, one per run of levels whose
        definitions are the same (docs §14, "Visibility levels that cannot differ"). The
        definition at lvl < sy differs from the one at lvl + 1 only through a term that is in
        one and not the other, or a term that reads a visibility candidate X at lvl and
        lvl + 1 where X's own levels differ there. So lvl is a *break* of Y when (1) an
        availability term's common scope is lvl, or (2) a visibility term's X, with m <= lvl,
        has its top level at lvl, or has a break at lvl below its top: the least solution of
        these rules (a fixpoint, breaks only added). Every other level shares the variable of
        the level above it: the definitions' unique solution gives the two the same value."""
        breaks: dict[int, set] = {}
        for yid, (sy, _) in cands.items():
            b = {min(top, sy) for _, _, top in terms1[yid] if min(top, sy) < sy}
            b |= {sx2 for _, _, m, sx2 in terms2[yid] if sx2 < sy}
            breaks[yid] = b
        changed = True
        while changed:
            changed = False
            for yid, (sy, _) in cands.items():
                b = breaks[yid]
                for xid, _, m, sx2 in terms2[yid]:
                    for lvl in breaks.get(xid, ()):   # a direct X: one value
                        if m <= lvl < min(sx2, sy) and lvl not in b:
                            b.add(lvl)
                            changed = True
        out: dict[int, list] = {}
        wl, ev = w.label, self.x.ev
        for yid, (sy, _) in cands.items():
            levs: list = [None] * (sy + 1)
            for lvl in range(sy, -1, -1):   # may.ENABLED off: one variable per level
                levs[lvl] = (self.x.ctx.fresh_bool(f"vis_{wl}_{ev[yid].label}_{lvl}")
                             if lvl == sy or lvl in breaks[yid] or not may.ENABLED
                             else levs[lvl + 1])
            out[yid] = levs
        return out

    def _lowest_including(self, ex: Event, sx2: int, y: Event, sy: int):
        """For X made visible at levels up to sx2 and Y at sy: None unless Y's instance at sy
        contains X; else the lowest level m at which X's instance includes Y (contains is
        monotone in the level: scope instances nest), None if none up to sx2. Static, so
        cached across writes."""
        key = (ex.id, sx2, y.id, sy)
        c = self._static.get(key, 0)
        if c == 0:
            el = self.el
            c = None
            if el.contains(y, sy, ex):
                c = next((l1 for l1 in range(sx2 + 1) if el.contains(ex, l1, y)), None)
            self._static[key] = c
        return c

    def _inclusive(self, a: Event, sa: int, b: Event, sb: int, w: Event) -> B:
        """_inclusive_at; when explaining, a non-inclusive pair is a variable fixed false by
        the family "scope inclusion" (encode/logic.py Ctx.excluded)."""
        key = ("inc", a.id, sa, b.id, sb)
        ok = self._static.get(key)
        if ok is None:
            ok = self._static[key] = self._inclusive_at(a, sa, b, sb)
        if ok or not self.x.ctx.explaining:
            return ok
        key = (a.id, sa, b.id, sb)
        if key not in self._excl:
            self._excl[key] = self.x.ctx.excluded(f"incl_{a.label}_{b.label}", F.SCOPE)
        return self._excl[key]

    def _inclusive_at(self, a: Event, sa: int, b: Event, sb: int) -> bool:
        el = self.el
        ok = el.contains(a, sa, b) and el.contains(b, sb, a)
        if ok and el.model.options.scope_inclusion == "opencl" and not a.is_init:
            return sa == sb
        return ok

    def location_order(self, w: Event) -> None:
        """S000 "Location Order" for a write W and an access Y to the same address:
        (1) W is program-ordered before Y; (2) Y a write W1 and an availability operation Z on
        W happens-before W1 with W1 in Z's scope instance; (3) Y a read R and a visibility
        operation Z on W is R itself or precedes R in program order."""
        x, el = self.x, self.el
        sp = x.space(w)
        for y in x.ev:
            if y.id == w.id or y.loc != w.loc or y.is_init:
                continue
            parts: list = [x.po_hb(w, y, sp)]                                           # (1)
            if y.writes and self.direct(w, y):                                          # (2)
                parts.append(AND(x.writes(y), x.hb(w, y, sp)))      # docs §14, `direct`
            elif y.writes:
                parts.append(AND(x.writes(y), OR(
                    AND(av, x.hb(x.ev[zid], y, sp), el.contains(x.ev[zid], sz, y))
                    for zid, (av, sz) in self.avail[w.id].items())))
            if y.reads:                                                                 # (3)
                parts.append(OR(AND(levels[0], True if zid == y.id
                                    else x.po_hb(x.ev[zid], y, sp))
                                for zid, (sz, levels) in self.vis[w.id].items()
                                if zid == y.id or el.po(x.ev[zid], y)))
            e = AND(x.writes(w), OR(parts))
            if e is not False:
                x.lo_rel[(w.id, y.id)] = x.ctx.define(f"lo_{w.label}_{y.label}", e)


def encode_location_order(x: Execution) -> AvVis:
    """Build lo for every pair. The initial write is location-ordered before every other
    access to its location (S000 Location Order)."""
    el = x.elab
    o = el.model.options
    av = AvVis(x)
    for e in x.ev:
        if e.is_init:
            for y in x.ev:
                if y.loc == e.loc and not y.is_init:
                    x.lo_rel[(e.id, y.id)] = True
    if not o.avvis:
        # Plain LLVM model (UP§4): the may-see and value rules use happens-before.
        for a, b, v in _same_loc_hb(x):
            if x.ev[a].writes:
                x.lo_rel[(a, b)] = AND(x.writes(x.ev[a]), v) if not x.ev[a].is_init else True
        return av
    writes = [e for e in x.ev if e.writes and not e.is_init]
    if may.ENABLED:
        av.restrict(writes)
    with x.ctx.family(F.AVAIL):
        for w in writes:
            if av.needs_availability(w):
                av.avail[w.id] = av.availability_operations(w)
            else:   # docs §14: read only through W itself (AvVis.direct), if at all
                sw_ = av_scope(x, w)
                av.avail[w.id] = {} if sw_ is None else {w.id: (x.writes(w), sw_)}
    with x.ctx.family(F.VIS):
        for w in writes:
            av.vis[w.id] = av.visibility_operations(w)
    for w in writes:
        av.location_order(w)
    if o.read_lo:
        # UP 2.1(7): "A read R is location-ordered before an access X to the same address if
        # it happens-before X."
        for a, b, v in _same_loc_hb(x):
            ea = x.ev[a]
            if ea.reads and not ea.is_init:
                x.lo_rel[(a, b)] = OR(x.lo_rel.get((a, b), False), v)
    return av


def _same_loc_hb(x: Execution):
    """(a, b, hb(a, b)) for events on one location, in that location's address space."""
    for sp, rel in x.hb_by_space.items():
        for (a, b), v in rel.items():
            ea, eb = x.ev[a], x.ev[b]
            if ea.loc is not None and ea.loc == eb.loc and x.space(ea) == sp:
                yield a, b, v
