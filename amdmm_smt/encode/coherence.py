"""Atomic ordering constraints per location (UP§4 LangRef "monotonic"), between
monotonic-or-stronger atomic accesses with inclusive scopes (S002: they participate in the
modification order only then), and the coherence order of all writes (docs R-final)."""

from __future__ import annotations

from . import families as F
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
        # CoRR — "If one atomic read happens before another atomic read of the same address
        # ..., the later read must not see an earlier value in the modification order."
        for r1 in ar:
            for r2 in ar:
                if r1.id == r2.id or not el.inclusive(r1, r2, sp):
                    continue
                for w1 in aw:
                    for w2 in aw:
                        if w1.id != w2.id and el.inclusive(w1, w2, sp):
                            x.ctx.add(NOT(AND(x.hb(r1, r2, sp), x.rf(w1, r1), x.rf(w2, r2),
                                              x.co(w2, w1))))
        if not cxx:
            continue
        # CoWR (docs R-coherence): a read must not read a write that is mo-before a write
        # that happens-before it.
        for r in ar:
            for w2 in aw:
                if w2.id == r.id or not el.inclusive(w2, r, sp):
                    continue
                for w1 in aw:
                    if w1.id not in (w2.id, r.id) and el.inclusive(w1, w2, sp):
                        x.ctx.add(NOT(AND(x.hb(w2, r, sp), x.writes(w2), x.rf(w1, r),
                                          x.co(w1, w2))))
        # CoRW: a write that a read happens-before is mo-after the write the read reads.
        for r in ar:
            for w2 in aw:
                if w2.id == r.id or not el.inclusive(r, w2, sp):
                    continue
                for w1 in aw:
                    if w1.id not in (w2.id, r.id) and el.inclusive(w1, w2, sp):
                        x.ctx.add(IMPLIES(AND(x.hb(r, w2, sp), x.writes(w2), x.rf(w1, r)),
                                          x.co(w1, w2)))


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
    for (a, b) in async_ops.porf_edges(x):       # docs §11.5: async operations
        x.ctx.add(rank[a] < rank[b])
