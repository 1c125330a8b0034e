"""Atomic ordering constraints per location (UP§4 LangRef "monotonic"), between
monotonic-or-stronger atomic accesses with inclusive scopes (S002: they participate in the
modification order only then), and the coherence order of all writes (docs R-final)."""

from __future__ import annotations

from . import families as F
from ..elaborate import may
from ..elaborate.events import strong_atomic
from . import async_ops
from .execution import Execution
from .logic import AND, IMPLIES, NOT, OR


def coherence(x: Execution) -> None:
    el = x.elab
    cxx = el.model.options.coherence == "cxx"
    for loc in el.locs:
        ws = el.writes_to(loc)
        sp = el.space_of(loc)
        # docs R-final: co extends location order between writes (option final_co: hb, the
        # other reading, extends happens-before instead).
        by_hb = el.model.options.final_co == "hb"
        with x.ctx.family(F.CO_LO):
            for a in ws:
                for b in ws:
                    if a.id != b.id and not b.is_init:
                        order = OR(x.lo(a, b),
                                   AND(x.writes(a), x.hb(a, b, sp)) if by_hb else False)
                        x.ctx.add(IMPLIES(AND(order, x.writes(b)), x.co(a, b)))
        acc = [e for e in x.ev if e.loc == loc and strong_atomic(e)]
        aw = [e for e in acc if e.writes]
        ar = [e for e in acc if e.reads]
        # CoWW — "All modification orders must be compatible with the happens-before order."
        for a in aw:
            for b in aw:
                if a.id != b.id and not b.is_init and el.inclusive(a, b, sp):
                    x.ctx.add(IMPLIES(AND(x.hb(a, b, sp), x.writes(a), x.writes(b)), x.co(a, b)))
        if may.ENABLED and _ranked_pays(x, ar, aw, sp, cxx) and all(
                el.inclusive(a, b, sp) for i, a in enumerate(aw) for b in aw[i + 1:]):
            _read_rules_ranked(x, ar, aw, sp, cxx)
        else:
            _read_rules_pairwise(x, ar, aw, sp, cxx)


def _ranked_pays(x: Execution, ar: list, aw: list, sp: str, cxx: bool) -> bool:
    """Both forms are exact; the ranked one adds an integer per read, which slows the
    listing of small tests (4 threads x 4 operations: about a quarter), and pays where the
    pairwise form is large (4 x 16: 103,185 constraints). Estimated sizes, pairwise against
    ranked (x4)."""
    n_w = {r.id: sum(1 for w in aw if x.rf(w, r) is not False) for r in ar}
    pairwise = ranked = 0
    for r1 in ar:
        for r2 in ar:
            if r1.id != r2.id and x.hb(r1, r2, sp) is not False:
                pairwise += n_w[r1.id] * n_w[r2.id]
                ranked += 1
        if cxx:
            k = sum(1 for w in aw if x.hb(w, r1, sp) is not False
                    or x.hb(r1, w, sp) is not False)
            pairwise += k * n_w[r1.id]
            ranked += k
        ranked += n_w[r1.id]
    return pairwise > 4 * ranked


def _read_rules_pairwise(x: Execution, ar: list, aw: list, sp: str, cxx: bool) -> None:
    """CoRR (and CoWR, CoRW under `coherence: cxx`), one constraint per pair of reads (or
    read and write) and pair of writes it may read: for locations whose atomic writes are not
    pairwise inclusive."""
    el = x.elab
    # CoRR — "If one atomic read happens before another atomic read of the same address
    # ..., the later read must not see an earlier value in the modification order."
    for r1 in ar:
        for r2 in ar:
            if r1.id == r2.id or not el.inclusive(r1, r2, sp) or x.hb(r1, r2, sp) is False:
                continue
            for w1 in aw:
                if x.rf(w1, r1) is False:
                    continue
                for w2 in aw:
                    if w1.id != w2.id and el.inclusive(w1, w2, sp):
                        x.ctx.add(NOT(AND(x.hb(r1, r2, sp), x.rf(w1, r1), x.rf(w2, r2),
                                          x.co(w2, w1))))
    if not cxx:
        return
    # CoWR (docs R-coherence): a read must not read a write that is mo-before a write
    # that happens-before it.
    for r in ar:
        for w2 in aw:
            if w2.id == r.id or not el.inclusive(w2, r, sp) or x.hb(w2, r, sp) is False:
                continue
            for w1 in aw:
                if w1.id not in (w2.id, r.id) and el.inclusive(w1, w2, sp):
                    x.ctx.add(NOT(AND(x.hb(w2, r, sp), x.writes(w2), x.rf(w1, r),
                                      x.co(w1, w2))))
    # CoRW: a write that a read happens-before is mo-after the write the read reads.
    for r in ar:
        for w2 in aw:
            if w2.id == r.id or not el.inclusive(r, w2, sp) or x.hb(r, w2, sp) is False:
                continue
            for w1 in aw:
                if w1.id not in (w2.id, r.id) and el.inclusive(w1, w2, sp):
                    x.ctx.add(IMPLIES(AND(x.hb(r, w2, sp), x.writes(w2), x.rf(w1, r)),
                                      x.co(w1, w2)))


def _read_rules_ranked(x: Execution, ar: list, aw: list, sp: str, cxx: bool) -> None:
    """The same rules when every pair of the location's atomic writes is inclusive (docs §14
    "Coherence through the rank of the write read"): each read that may read an atomic write
    gets the coherence rank of the write it reads (the initial write ranks below every other
    write), so that "r1 reads w1, r2 reads w2, w1 ≠ w2, not co(w2, w1)" is "rank(r1) ≤
    rank(r2)": one constraint per pair of events instead of one per pair of events and pair
    of writes. Exact: a read reads from at most one write, and distinct writes have distinct
    ranks (execution structure)."""
    el = x.elab
    c = x.ctx
    init = next((w for w in aw if w.is_init), None)
    rank: dict[int, object] = {}
    reads_atomic: dict[int, object] = {}      # r reads from some atomic write of aw
    for r in ar:
        ws = [w for w in aw if x.rf(w, r) is not False]
        if ws:
            reads_atomic[r.id] = OR(x.rf(w, r) for w in ws)

    def rank_of(r):
        """The rank of the write r reads, declared only for the reads a rule names (an
        integer per read costs the solver even where nothing compares it)."""
        if r.id not in rank:
            v = rank[r.id] = c.fresh_int(f"corank_{r.label}")
            for w in aw:
                if x.rf(w, r) is not False:
                    c.add(IMPLIES(x.rf(w, r), v == (-1 if w.is_init else x.co_rank[w.id])))
        return rank[r.id]
    # CoRR — "If one atomic read happens before another atomic read of the same address
    # ..., the later read must not see an earlier value in the modification order."
    for r1 in ar:
        if r1.id not in reads_atomic:
            continue
        for r2 in ar:
            if r2.id == r1.id or r2.id not in reads_atomic or not el.inclusive(r1, r2, sp):
                continue
            h = x.hb(r1, r2, sp)
            if h is not False:
                c.add(IMPLIES(AND(h, reads_atomic[r1.id], reads_atomic[r2.id]),
                              rank_of(r1) <= rank_of(r2)))
    for r in ar if cxx else ():
        if r.id not in reads_atomic:
            continue
        for w2 in aw:
            if w2.id == r.id or w2.is_init:
                continue
            # CoWR (docs R-coherence): a read must not read a write that is mo-before a
            # write that happens-before it.
            if el.inclusive(w2, r, sp):
                h = x.hb(w2, r, sp)
                if h is not False:
                    c.add(IMPLIES(AND(h, x.writes(w2), reads_atomic[r.id]),
                                  rank_of(r) >= x.co_rank[w2.id]))
            # CoRW: a write that a read happens-before is mo-after the write the read reads
            # (not a constraint when the read reads that write itself).
            if el.inclusive(r, w2, sp):
                h = x.hb(r, w2, sp)
                if h is not False:
                    c.add(IMPLIES(AND(h, x.writes(w2), reads_atomic[r.id]),
                                  OR(x.rf(w2, r), rank_of(r) < x.co_rank[w2.id])))
    if rank and init is not None:     # the initial write (rank -1) is first
        for w in aw:
            if not w.is_init:
                c.add(x.co_rank[w.id] >= 0)


def rmw_atomicity(x: Execution) -> None:
    """UP§4: "If the read in an atomic read-modify-write operation M ... reads from a monotonic
    (or stronger) write W, W must be immediately before M in the address's modification
    order." """
    for m in x.ev:
        if not x.is_rmw(m):
            continue
        ws = x.elab.writes_to(m.loc)
        for w in ws:
            if w.id == m.id or not strong_atomic(w):
                continue
            between = OR(AND(x.writes(o), x.co(w, o), x.co(o, m))
                         for o in ws if o.id not in (w.id, m.id))
            x.ctx.add(IMPLIES(AND(x.rf(w, m), x.writes(m)), AND(x.co(w, m), NOT(between))))


def no_thin_air(x: Execution) -> None:
    """Option no_thin_air (docs R-no-thin-air): RC11's acyclicity of po ∪ rf, witnessed by
    integer ranks. Not in the documents; off by default."""
    if not x.elab.model.options.no_thin_air:
        return
    rank = {e.id: x.ctx.fresh_int(f"porf_{e.label}") for e in x.ev}
    for a in x.ev:
        for b in x.ev:
            if x.elab.po(a, b):
                x.ctx.add(rank[a.id] < rank[b.id])
    for (w, r), v in x.rf_var.items():
        x.ctx.add(IMPLIES(v, rank[w] < rank[r]))
    for (a, b, v) in async_ops.porf_edges(x):    # docs §11.5: async operations
        x.ctx.add(IMPLIES(v, rank[a] < rank[b]))
