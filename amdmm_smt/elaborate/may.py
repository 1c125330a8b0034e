"""Static may- and must-sets of the execution relations (issue 20 item 1; docs/semantics.md
section 14, "What is computed statically").

Computed once per test from what elaboration knows (program order, locations, MMRA tags), in
plain Python, so that the encoding gives Z3 variables only for pairs that may hold and do not
have to:
  must_hb   pairs in happens-before in every execution: the transitive closure of the
            program-order edges that are in happens-before (S001: po between compatible MMRA
            tags). The encoding's happens-before of such a pair is the constant True.
  must_lo   pairs in location order in every execution: the initial write before every access
            to its location; a write that always writes (not a cmpxchg) before a same-location
            access it is must_hb-before (S000 Location Order (1); hb in the plain model).
  may_rf    (write, read) pairs a read can take its value from: same location, not the read
            itself, not a write the read must happen-before (S000 "If a read R happens-before
            a write W3, then R may not see W3") and not a write shadowed in every execution (a
            write W2 that always writes with W must_lo W2 must_lo R: "If a write W1 is
            location-ordered before a write W2, and W2 is location-ordered before a read R,
            then R may not see W1"). A pair outside may_rf has may-see false in every
            execution, so reads-from is false there too.
Each may-set over-approximates its relation in every execution and each must-set is contained
in it; the encoding's answers are unchanged (tests/test_may.py, the corpus, the differential).
"""

from __future__ import annotations

from .events import Elab, Event

# The encoding uses the sets (and the ranked coherence rules, encode/coherence.py) when true;
# tests turn it off to compare with the full encoding (tests/test_may.py).
ENABLED = True


def always_writes(e: Event) -> bool:
    """Writes in every execution (a cmpxchg writes only when it succeeds)."""
    return e.writes and e.kind != "cmpxchg"


class MaySets:
    def __init__(self, el: Elab):
        self.el = el
        self.must_hb: set[tuple[int, int]] = set()
        self._shadow: dict[int, list] = {}
        by_thread: dict[int, list[Event]] = {}
        for e in el.events:
            if e.thread is not None and e.async_of is None:
                by_thread.setdefault(e.thread, []).append(e)
        for evs in by_thread.values():
            evs.sort(key=lambda e: e.pos)
            if not any(e.tags for e in evs):
                # every program-order edge is in happens-before (no MMRA tag to drop one)
                for i, a in enumerate(evs):
                    for b in evs[i + 1:]:
                        if a.pos < b.pos:
                            self.must_hb.add((a.id, b.id))
                continue
            reach: dict[int, set] = {}
            for i in range(len(evs) - 1, -1, -1):       # closure, latest first
                a, r = evs[i], set()
                for b in evs[i + 1:]:
                    if b.id not in r and el.po_in_hb(a, b):
                        r.add(b.id)
                        r |= reach[b.id]
                reach[a.id] = r
                self.must_hb.update((a.id, b) for b in r)

    def must_lo(self, a: Event, b: Event) -> bool:
        if a.id == b.id or a.loc is None or a.loc != b.loc or b.is_init:
            return False
        if a.is_init:
            return True
        return always_writes(a) and (a.id, b.id) in self.must_hb

    def may_rf(self, w: Event, r: Event) -> bool:
        if w.id == r.id or w.loc != r.loc or not w.writes or not r.reads:
            return False
        if (r.id, w.id) in self.must_hb:
            return False
        for w2 in self._shadowing(r):
            if w2.id != w.id and self.must_lo(w, w2):
                return False
        return True

    def _shadowing(self, r: Event) -> list:
        """The always-writing writes W2 (not r) with W2 must-lo r, once per read."""
        c = self._shadow.get(r.id)
        if c is None:
            c = self._shadow[r.id] = [
                w2 for w2 in self.el.writes_to(r.loc)
                if w2.id != r.id and always_writes(w2) and self.must_lo(w2, r)]
        return c
