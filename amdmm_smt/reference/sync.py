"""Synchronization: roles, release sequences, synchronizes-with and happens-before per
address space (docs/semantics.md section 6 "Roles", "Release sequence", "synchronizes-with",
"happens-before"; section 7 for address spaces; UP§4 LangRef, S002 HRF-indirect)."""

from __future__ import annotations

from ..ir import is_acquire, is_release
from .common import _bits


class Sync:
    """Mixin of the engine (engine.py): the synchronization family."""

    def init_sync(self):
        """The static parts of synchronizes-with: possible releases a with W(a) (strong
        atomic writes po-after a fence, or a itself) in `sw_from`, and in `sw_to[a]` the
        possible acquires b in another thread with the spaces both synchronize in which they
        are inclusive, and R(b) (strong atomic reads po-before a fence, or b itself)."""
        ev = self.ev

        def may_rel(e):
            return e.kind in ("store", "rmw", "cmpxchg", "fence") and is_release(e.order)

        def may_acq(e):
            return ((e.kind in ("load", "rmw", "fence") and is_acquire(e.order))
                    or (e.kind == "cmpxchg" and (is_acquire(e.order)
                                                 or is_acquire(e.fail_order))))
        self.sw_from = []
        self.sw_to = {}
        for a in self.thread_ids:
            if not may_rel(ev[a]):
                continue
            Xs = ([x for x in _bits(self.po[a]) if ev[x].writes and self.strong[x]]
                  if ev[a].is_fence else [a])
            tos = []
            for b in self.thread_ids:
                if not may_acq(ev[b]) or ev[b].thread == ev[a].thread:
                    continue
                sps = [sp for sp in self.spaces if sp in self.sync_sp[a]
                       and sp in self.sync_sp[b] and self.incl_in[sp][a] >> b & 1]
                if not sps:
                    continue
                Ys = ([y for y in self.reads if self.po[y] >> b & 1 and self.strong[y]]
                      if ev[b].is_fence else [b])
                tos.append((b, sps, Ys))
            if Xs and tos:
                self.sw_from.append((a, Xs))
                self.sw_to[a] = tos

    def roles(self, hap, order):
        """rel, acq (section 6 "Roles") and MakeAvailable / MakeVisible in this execution."""
        ev, n = self.ev, self.n
        rel = [False] * n
        acq = [False] * n
        for i in self.thread_ids:
            e = ev[i]
            if e.kind in ("store", "rmw", "fence") or (e.kind == "cmpxchg" and hap[i]):
                rel[i] = is_release(order[i])
            if e.kind in ("load", "rmw", "fence", "cmpxchg"):
                acq[i] = is_acquire(order[i])
        MA = [rel[i] and not ev[i].av_none for i in range(n)]
        MV = [acq[i] and not ev[i].av_none for i in range(n)]
        return rel, acq, MA, MV

    def sync_edges(self, rf, hap, rel, acq):
        """synchronizes-with in each address space (section 7: a synchronization orders AS iff
        both operations synchronize AS; in LDS a scope above workgroup is workgroup), split
        into the edges that hold whatever co is (the read reads from X itself), as
        `fixed[sp][a]` masks, and the conditional ones `(sp, a, b, X, w)`: they hold iff w, an
        RMW that happens, is in the release sequence of X, which depends on co."""
        ev, n = self.ev, self.n
        fixed = {sp: [0] * n for sp in self.spaces}
        cond = []
        for a, xs_static in self.sw_from:
            if not rel[a]:
                continue
            Xs = [x for x in xs_static if hap[x]]
            if not Xs:
                continue
            for b, sps, Ys in self.sw_to[a]:
                if not acq[b]:
                    continue
                sure = False
                here = []
                for y in Ys:
                    w = rf[y]
                    if w is None:
                        continue
                    for x in Xs:
                        if ev[x].loc != ev[y].loc:
                            continue
                        if w == x:
                            sure = True
                        elif self.rmwlike[w] and hap[w]:
                            here.append((x, w))
                for sp in sps:
                    if sure:
                        fixed[sp][a] |= 1 << b
                    else:
                        cond += [(sp, a, b, x, w) for (x, w) in here]
        return fixed, cond

    def sw_under_co(self, fixed, cond, co):
        """synchronizes-with per address space once co is known: the fixed edges, and each
        conditional edge `(sp, a, b, X, w)` whose w is in the release sequence of X (X before
        w in co, and every write after X up to w an RMW / cmpxchg)."""
        ev = self.ev
        sw = {sp: list(m) for sp, m in fixed.items()}
        for (sp, a, b, x, w) in cond:
            if sw[sp][a] >> b & 1:
                continue
            lst = co[ev[x].loc]
            i, j = lst.index(x), lst.index(w)
            if i < j and all(self.rmwlike[v] for v in lst[i + 1:j + 1]):
                sw[sp][a] |= 1 << b
        return sw

    def happens_before(self, sw):
        """(po between compatible instructions ∪ sw ∪ the async edges E-init / E-done of
        docs §11.5)+ over thread events, then the initial writes before every thread event;
        None if it has a cycle."""
        ev, n = self.ev, self.n
        hb = [0 if ev[i].is_init else (self.po_c[i] | sw[i] | self.async_hb[i])
              for i in range(n)]
        for k in range(n):
            bk, hk = 1 << k, hb[k]
            if not hk:
                continue
            for i in range(n):
                if hb[i] & bk:
                    hb[i] |= hk
        for i in range(n):
            if hb[i] >> i & 1:
                return None
        for i in range(n):
            if ev[i].is_init:
                hb[i] = self.thread_mask
        return hb

    def hbs_per_space(self, sw):
        """happens-before in each address space (`sw[sp]` per space; spaces with the same sw
        share one closure), or None if any has a cycle."""
        hbs = {}
        cache: dict = {}
        for sp in self.spaces:
            if self.bsw:
                # docs/semantics.md 10.5: bsw_AS is added to sw_AS (barrier.py)
                sw = {**sw, sp: [a | b for a, b in zip(sw[sp], self.bsw[sp])]}
            key = tuple(sw[sp])
            if key not in cache:
                cache[key] = self.happens_before(sw[sp])
            if cache[key] is None:
                return None
            hbs[sp] = cache[key]
        return hbs
