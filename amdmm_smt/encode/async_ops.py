"""Asynchronous operations (S004; UP 2.4; docs/semantics.md §11). Completion is static
(`elaborate.async_hb_edges`), so all that reaches the solver is:
  - the value an async write writes: the value its read returned (S004 "a non-atomic read on
    the source and a non-atomic write on the destination");
  - the constant happens-before edges E-init / E-done, added to every address space's hb.
Everything else (availability, visibility, location order, may-see, the value rule, final
values) treats A.r / A.w as plain non-atomic accesses (docs §11.6)."""

from __future__ import annotations

from .execution import Execution
from .logic import IMPLIES, OR


def write_values(x: Execution) -> None:
    """docs §11.3: A.w always happens and writes what A.r returned, byte by byte (docs 15.4
    R-mem-bytes: an undef byte stays undef, a defined one its value)."""
    for e in x.ev:
        if e.kind == "dma_write":
            r = e.id - 1                     # A.r is created just before A.w
            assert x.ev[r].kind == "dma_read" and x.ev[r].async_of == e.async_of
            x.wr[e.id] = True
            x.wundef[e.id], x.wval[e.id] = x.rundef[r], x.rval[r]
            if r in getattr(x, "rmask", {}):
                # docs 15.4 R-mem-bytes / 11.3 (S004 "a non-atomic read on the source and a
                # non-atomic write on the destination"): the bytes A.r read, undef ones undef
                x.wmask[e.id] = x.rmask[r]
            if r in getattr(x, "rpoison", {}):       # docs 15.4 R-mem-poison: poison copied
                x.wpoison[e.id] = x.rpoison[r]


def choices(x: Execution) -> dict:
    """docs R-call-async-seq: one free Boolean per (mark, wait) pair whose completion the
    documents leave unspecified (a mark of another body execution than the wait's), "the mark
    is completed-at the wait"; along each mark's chain a completed mark stays completed."""
    if getattr(x, "_async_choice", None) is None:
        x._async_choice = {}
        for ch in x.elab.async_chains:
            vs = []
            for k in ch:
                v = x.ctx.fresh_bool("async_unspecified_" + "_".join(map(str, k)))
                x._async_choice[k] = v
                vs.append(v)
            for v, w in zip(vs, vs[1:]):
                x.ctx.add(IMPLIES(v, w))
    return x._async_choice


def hb_edges(x: Execution) -> dict:
    """UP 2.4 "When an instruction I initiates an async operation A, I happens-before A. If A
    is completed-at a wait.asyncmark() operation Y, then A happens-before Y"; S004 H1 / H2
    (docs §11.5 R-async-sufficient, R-async-hb-from-a); an edge through a mark whose
    completion is unspecified holds iff that mark's choice does (docs R-call-async-seq)."""
    out: dict = {(a, b): True for (a, b) in x.elab.async_hb}
    if x.elab.async_hb_cond:
        c = choices(x)
        for (a, b, keys) in x.elab.async_hb_cond:
            if out.get((a, b)) is not True:
                out[(a, b)] = OR(out.get((a, b), False), *[c[k] for k in keys])
    return out


def porf_edges(x: Execution) -> list:
    """Option no_thin_air (docs R-no-thin-air): an async operation's write depends on its read,
    and E-init / E-done order it like program order (docs §11.5), so they join po ∪ rf.
    (a, b, condition): the edge when the condition holds."""
    out = [(a, b, v) for (a, b), v in hb_edges(x).items()]
    out += [(e.id - 1, e.id, True) for e in x.ev if e.kind == "dma_write"]
    return out
