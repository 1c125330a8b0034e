"""Coherence: the constraints on co and the co orders that satisfy them (docs/semantics.md
section 6 "Coherence" and "Final state"; UP§4 LangRef)."""

from __future__ import annotations

from .common import _bits


class Coherence:
    """Mixin of the engine (engine.py): the coherence family."""

    def coherence_constraints(self, rf, hap, hb_of):
        """The coherence rules that need only hb and rf, as constraints on co: `pred[w]`
        (writes that must be before w) and `adj[m] = w` (RMW atomicity: m immediately after
        w)."""
        ev, n, opts = self.ev, self.n, self.opts
        # inclusion is inclusive(·, ·, AS) for the space of the location (every pair here is
        # one location)
        strong = self.strong
        incl_of = self.incl_of

        def I(a, b):
            return incl_of[ev[a].loc][a] >> b & 1

        pred = [0] * n
        adj = {}
        for loc, ws in self.writes_of.items():
            hb = hb_of[loc]
            hw = [w for w in ws if hap[w]]
            init = self.init_of.get(loc)
            for w2 in hw:
                for w1 in hw:
                    if w1 != w2 and (w1 == init or (strong[w1] and strong[w2]
                                                    and hb[w1] >> w2 & 1 and I(w1, w2))):
                        pred[w2] |= 1 << w1                                # init, CoWW
        sreads = [r for r in self.reads if strong[r] and rf[r] is not None and strong[rf[r]]]
        for r1 in sreads:
            w1 = rf[r1]
            hb = hb_of[ev[r1].loc]
            for r2 in sreads:
                w2 = rf[r2]
                if r1 != r2 and w1 != w2 and ev[r1].loc == ev[r2].loc and hb[r1] >> r2 & 1 \
                        and I(r1, r2) and I(w1, w2):
                    pred[w2] |= 1 << w1                                    # CoRR
        if opts.coherence == "cxx":
            for r in sreads:
                w1 = rf[r]
                hb = hb_of[ev[r].loc]
                for w2 in self.writes_of[ev[r].loc]:
                    if w2 == w1 or w2 == r or not hap[w2] or not strong[w2] or not I(w1, w2):
                        continue
                    if hb[w2] >> r & 1 and I(w2, r):
                        pred[w1] |= 1 << w2                                # CoWR
                    if hb[r] >> w2 & 1 and I(r, w2):
                        pred[w2] |= 1 << w1                                # CoRW
        for m in self.reads:
            if self.rmwlike[m] and hap[m]:
                w = rf[m]
                if w is not None and strong[w]:                            # RMW atomicity
                    adj[m] = w
                    pred[m] |= 1 << w
        if opts.final_co == "hb":                                          # R-final (hb)
            for loc, ws in self.writes_of.items():
                hb = hb_of[loc]
                hw = [w for w in ws if hap[w]]
                for w2 in hw:
                    for w1 in hw:
                        if w1 != w2 and hb[w1] >> w2 & 1:
                            pred[w2] |= 1 << w1
        return pred, adj

    def lo_in_co(self, pred, lo, hap):
        """R-final (lo): location order between writes that happen is in co (adds to pred)."""
        for loc, ws in self.writes_of.items():
            hm = 0
            for w in ws:
                if hap[w]:
                    hm |= 1 << w
            for w1 in ws:
                if hap[w1]:
                    for w2 in _bits(lo[w1] & hm & ~(1 << w1)):
                        pred[w2] |= 1 << w1

    def rmw_shares_target(self, rf, hap) -> bool:
        """RMW atomicity: do two RMWs that happen both read from one strong write (they cannot
        both directly follow it)?"""
        targets = [rf[m] for m in self.reads if self.rmwlike[m] and hap[m]
                   and rf[m] is not None and self.strong[rf[m]]]
        return len(set(targets)) < len(targets)

    def co_base(self, nodes, rf, hap):
        """The constraints on co that do not depend on synchronizes-with: initial write first,
        program order in hb between writes (⊆ lo, or ⊆ hb with final_co: hb), RMW atomicity.
        Returns (pred, adj) as `coherence_constraints` does."""
        base_pred = [0] * self.n
        base_adj = {}
        for loc, ws in nodes.items():
            init = self.init_of.get(loc)
            for w in ws:
                for w1 in ws:
                    if w1 != w and (w1 == init or self.po_c[w1] >> w & 1):
                        base_pred[w] |= 1 << w1
        for m in self.reads:
            if self.rmwlike[m] and hap[m] and rf[m] is not None and self.strong[rf[m]]:
                base_adj[m] = rf[m]
                base_pred[m] |= 1 << rf[m]
        return base_pred, base_adj

    def orderable(self, pred) -> bool:
        """Is the constraint graph `pred` acyclic?"""
        nodes = [i for i in range(self.n) if pred[i]]
        state: dict = {}

        def dfs(a) -> bool:
            state[a] = 1
            for b in _bits(pred[a]):
                s = state.get(b, 0)
                if s == 1 or (s == 0 and not dfs(b)):
                    return False
            state[a] = 2
            return True

        return all(state.get(a, 0) != 0 or dfs(a) for a in nodes)

    @staticmethod
    def _succ(adj):
        succ = {}
        for m, w in adj.items():
            if w in succ:
                return None          # two RMWs cannot both immediately follow one write
            succ[w] = m
        return succ

    def extensions(self, nodes, pred, adj):
        """Every total order of `nodes` (the writes to one location that happen) with every
        write of pred[w] before w, and m immediately after adj[m]."""
        succ = self._succ(adj)
        if succ is None:
            return
        order: list = []
        total = len(nodes)

        def rec(placed):
            if len(order) == total:
                yield list(order)
                return
            last = order[-1] if order else None
            for c in ([succ[last]] if last in succ else nodes):
                if placed >> c & 1 or pred[c] & ~placed or (c in adj and adj[c] != last):
                    continue
                order.append(c)
                yield from rec(placed | (1 << c))
                order.pop()

        yield from rec(0)

    def possible_lasts(self, nodes, pred, adj) -> set:
        """The writes that are last in some order `extensions` would give, without listing
        the orders: a search over (placed set, last placed)."""
        succ = self._succ(adj)
        if succ is None:
            return set()
        full = sum(1 << w for w in nodes)
        memo: dict = {}

        def rec(placed, last):
            key = (placed, last)
            if key in memo:
                return memo[key]
            self.tick()
            if placed == full:
                res = frozenset([last])
            else:
                acc = set()
                for c in ([succ[last]] if last in succ else nodes):
                    if placed >> c & 1 or pred[c] & ~placed or (c in adj and adj[c] != last):
                        continue
                    acc |= rec(placed | (1 << c), c)
                res = frozenset(acc)
            memo[key] = res
            return res

        return set(rec(0, None))

    @staticmethod
    def respects(lst, pred) -> bool:
        placed = 0
        for w in lst:
            if pred[w] & ~placed:
                return False
            placed |= 1 << w
        return True
