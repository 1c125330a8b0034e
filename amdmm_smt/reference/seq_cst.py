"""seq_cst: the psc relation per address space and its acyclicity (docs/semantics.md section 6
"seq_cst", section 7 for address spaces; UP§4 LangRef, RC11 reading)."""

from __future__ import annotations

from .common import _bits


class SeqCst:
    """Mixin of the engine (engine.py): the seq_cst family."""

    def sc_events(self, order):
        return [i for i in self.thread_ids if order[i] == "seq_cst"]

    def psc_needed(self, order) -> bool:
        sc = self.sc_events(order)
        return any(inc[a] >> b & 1 for inc in self.incl_in.values()
                   for a in sc for b in sc if a != b)

    def psc_acyclic(self, rf, order, hbs, co) -> bool:
        """seq_cst (section 6): psc must be acyclic; with several address spaces, the psc of
        every space's hb must fit one total order (section 7), so their union is acyclic.
        `co[loc]`: the writes to loc in order."""
        ev, n = self.ev, self.n
        sc = self.sc_events(order)
        com = [0] * n
        for lst in co.values():
            after = 0
            for w in reversed(lst):
                com[w] = after
                after |= 1 << w
        rfm = [0] * n                                  # rfm[w]: the reads that read from w
        for r in self.reads:
            if rf[r] is not None:
                rfm[rf[r]] |= 1 << r
        fr = [0] * n
        for r in self.reads:
            if rf[r] is not None:
                fr[r] = com[rf[r]] & ~(1 << r)

        def compose(a, b):
            out = [0] * n
            for i in range(n):
                m = 0
                for k in _bits(a[i]):
                    m |= b[k]
                out[i] = m
            return out

        co_rf = compose(com, rfm)
        fr_rf = compose(fr, rfm)
        eco = [rfm[i] | com[i] | fr[i] | co_rf[i] | fr_rf[i] for i in range(n)]
        psc = dict.fromkeys(sc, 0)
        done = set()
        for sp, hb in hbs.items():
            inc = self.incl_in[sp]
            if (id(hb), id(inc)) in done:
                continue
            done.add((id(hb), id(inc)))
            mid = compose(compose(self.po_nl, hb), self.po_nl)
            scb = [self.po[i] | mid[i] | (hb[i] & self.same_loc[i]) | com[i] | fr[i]
                   for i in range(n)]
            hb_eco_hb = compose(compose(hb, eco), hb)
            hb_pred = [0] * n
            for i in range(n):
                for j in _bits(hb[i]):
                    hb_pred[j] |= 1 << i
            for a in sc:
                cs = (1 << a) | (hb[a] if ev[a].is_fence else 0)
                for b in sc:
                    if a == b or not (inc[a] >> b & 1) or psc[a] >> b & 1:
                        continue
                    ds = (1 << b) | (hb_pred[b] if ev[b].is_fence else 0)
                    ok = any(scb[c] & ds & ~(1 << c) for c in _bits(cs))
                    if not ok and ev[a].is_fence and ev[b].is_fence:
                        ok = bool(hb[a] >> b & 1) or bool(hb_eco_hb[a] >> b & 1)
                    if ok:
                        psc[a] |= 1 << b
        state = dict.fromkeys(sc, 0)

        def dfs(a) -> bool:
            state[a] = 1
            for b in _bits(psc[a]):
                if state[b] == 1 or (state[b] == 0 and not dfs(b)):
                    return False
            state[a] = 2
            return True

        return all(state[a] != 0 or dfs(a) for a in sc)
