"""Availability, visibility and location order (docs/semantics.md section 6 "Scopes of the av
roles", "Availability operations", "Visibility operations", "Location order"; S000)."""

from __future__ import annotations

from typing import Optional

from ..ir import SYSTEM, WORKGROUP
from .common import _bits


class AvVis:
    """Mixin of the engine (engine.py): the availability / visibility family."""

    def _avs(self, e) -> Optional[int]:
        """Store-available / load-visible scope (section 6 "Scopes of the av roles")."""
        if e.is_init:
            return SYSTEM
        if e.is_fence or not (e.reads or e.writes):
            return None
        s = None
        if e.atomic or e.kind in ("av_load", "av_store"):
            s = self.cap(e.scope, e.loc, e.id)      # scope_in(e, AS)
        lds = self.loc_space.get(e.loc) == "local"
        if self.opts.volatile_av and e.volatile and not e.atomic \
                and e.kind in ("load", "store", "dma_read", "dma_write"):   # 16.1: a volatile DMA
            s = WORKGROUP if lds else SYSTEM
        if self.opts.lds_av_workgroup and lds:
            s = WORKGROUP if s is None else max(s, WORKGROUP)
        return s

    def cap(self, level: int, loc: str, x: int) -> int:
        """scope_in(x, AS) for event x (scope `level`) and the address space of `loc` (section 6,
        R-lds-scope): a scope above workgroup counts as workgroup when x itself accesses an LDS
        location (`lds_scope: instruction`), or, with `lds_scope: data` or `avvis`, when `loc`
        is LDS (this is only ever asked about availability and visibility; under `avvis` the
        inclusion of synchronization is not narrowed at all)."""
        if level <= WORKGROUP or self.ev[x].is_init:
            return level
        if self.opts.lds_scope == "instruction":
            narrowed = self.loc_space.get(self.ev[x].loc) == "local"
        else:
            narrowed = self.loc_space.get(loc) == "local"
        return WORKGROUP if narrowed else level

    def location_order(self, hap, MA, MV, hb_of):
        """lo as masks (`lo[a] >> b & 1`): for every write that happens, from its availability
        and visibility operations (or hb with `avvis` off); with read_lo also from reads."""
        ev, n, opts = self.ev, self.n, self.opts
        cont = self.cont

        def C(a, lv, b):
            return cont[a][lv] >> b & 1

        # per location, hb of its address space
        lo = [0] * n
        for loc, ws in self.writes_of.items():
            hb = hb_of[loc]

            def HB(a, b, hb=hb):
                return hb[a] >> b & 1

            accm = self.acc_mask.get(loc, 0)
            cands = None
            for w in ws:
                if ev[w].is_init:
                    lo[w] = accm
                    continue
                if not hap[w]:
                    continue
                if not opts.avvis:
                    lo[w] = hb[w] & accm & ~(1 << w)
                    continue
                if cands is None:
                    cands = self.vis_candidates(loc, MV, hb)
                Aw = self.availability(w, MA, HB, C, hb)
                vis = self.visibility(w, Aw, cands, hb)
                m = self.po[w] & hb[w] & accm                      # po_hb(W, Y)
                after_vis = vis                                    # Y itself, or po_hb(Z, Y)
                for z in _bits(vis):
                    after_vis |= self.po[z] & hb[z]
                for y in _bits(accm & ~(1 << w) & ~m):
                    if ev[y].writes and hap[y] and any(
                            HB(z, y) and C(z, sz, y) for (z, sz) in Aw):
                        m |= 1 << y
                    elif ev[y].reads and after_vis >> y & 1:
                        m |= 1 << y
                lo[w] = m
        if opts.read_lo:
            for r in self.reads:
                loc = ev[r].loc
                lo[r] |= hb_of[loc][r] & self.acc_mask.get(loc, 0) & ~(1 << r)
        return lo

    def availability(self, w, MA, HB, C, hb) -> set:
        """A(W): the least set of (X, sX) of section 6 (three clauses); program order in
        clause 2 is po_hb (program order within happens-before); scopes are scope_in."""
        ev = self.ev
        loc = ev[w].loc
        A = set()
        if self.avs[w] is not None:
            A.add((w, self.cap(self.avs[w], loc, w)))
        for x in _bits(self.po[w] & hb[w]):                # po_hb(W, X)
            if MA[x]:
                A.add((x, self.cap(ev[x].scope, loc, x)))
        mas = [(x, self.cap(ev[x].scope, loc, x)) for x in self.thread_ids if MA[x]]
        mas = [(x, sx) for (x, sx) in mas if C(x, sx, w)]
        changed = True
        while changed:
            changed = False
            for p in mas:
                if p in A:
                    continue
                x = p[0]
                if any(z != x and HB(z, x) and C(z, sz, x) for (z, sz) in A):
                    A.add(p)
                    changed = True
        return A

    def vis_candidates(self, loc, MV, hb):
        """The candidates Y for visibility operations on a write to `loc` with their sY (the
        larger scope of the roles Y has: load-visible on loc, MakeVisible), in an order
        compatible with hb (fewer hb-predecessors first: hb is transitive and acyclic)."""
        ev = self.ev
        out = []
        for y in self.thread_ids:
            roles = []
            if ev[y].reads and ev[y].loc == loc and self.avs[y] is not None:
                roles.append(self.avs[y])                  # load-visible
            if MV[y]:
                roles.append(ev[y].scope)                  # MakeVisible
            if roles:
                out.append((y, self.cap(max(roles), loc, y)))
        npred = {y: sum(1 for x in self.thread_ids if hb[x] >> y & 1) for (y, _) in out}
        out.sort(key=lambda p: npred[p[0]])
        return out

    def visibility(self, w, A, cands, hb) -> int:
        """The visibility operations on W, as a mask. V(W, Y) is the highest level at which W
        is visible in Y's instance: the least solution of the two clauses of section 6, in
        one pass over the candidates in hb order (both clauses only look at operations that
        happen before Y)."""
        cont = self.cont
        # S002: OpenCL "requires the memory scopes to exactly match" (scope_inclusion: opencl),
        # also for "X and Y specify inclusive scopes" of clause 1 (encode/avvis.py
        # _inclusive_at)
        opencl = self.opts.scope_inclusion == "opencl"
        V: dict = {}
        vis = 0
        for (y, sy) in cands:
            if y == w:
                continue
            best = -1
            for (x, sx) in A:                              # clause 1
                if x != y and hb[x] >> y & 1 and cont[x][sx] >> y & 1 \
                        and cont[y][sy] >> x & 1 \
                        and not (opencl and not self.ev[x].is_init and sx != sy):
                    best = max(best, min(sx, sy))
            for x, vx in V.items():                        # clause 2
                if vx < 0 or vx <= best or not (hb[x] >> y & 1) or not (cont[y][sy] >> x & 1):
                    continue
                for l1 in range(vx, -1, -1):               # the largest usable L1 ≤ V(W, X)
                    if cont[x][l1] >> y & 1:
                        best = max(best, min(l1, sy))
                        break
            V[y] = best
            if best >= 0:
                vis |= 1 << y
        return vis
