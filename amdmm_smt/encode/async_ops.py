"""Asynchronous operations (S004; UP 2.4; docs/semantics.md §11). Completion is static
(`elaborate.async_hb_edges`), so all that reaches the solver is:
  - the value an async write writes: the value its read returned (S004 "a non-atomic read on
    the source and a non-atomic write on the destination");
  - the constant happens-before edges E-init / E-done, added to every address space's hb.
Everything else (availability, visibility, location order, may-see, the value rule, final
values) treats A.r / A.w as plain non-atomic accesses (docs §11.6)."""

from __future__ import annotations

from .execution import Execution


def write_values(x: Execution) -> None:
    """docs §11.3: A.w always happens and writes what A.r returned (undef if A.r is undef)."""
    for e in x.ev:
        if e.kind == "dma_write":
            r = e.id - 1                     # A.r is created just before A.w
            assert x.ev[r].kind == "dma_read" and x.ev[r].async_of == e.async_of
            x.wr[e.id] = True
            x.wundef[e.id], x.wval[e.id] = x.rundef[r], x.rval[r]


def hb_edges(x: Execution) -> dict:
    """UP 2.4 "When an instruction I initiates an async operation A, I happens-before A. If A
    is completed-at a wait.asyncmark() operation Y, then A happens-before Y"; S004 H1 / H2
    (docs §11.5 R-async-sufficient, R-async-hb-from-a)."""
    return {(a, b): True for (a, b) in x.elab.async_hb}


def porf_edges(x: Execution) -> list:
    """Option no_thin_air (docs R-no-thin-air): an async operation's write depends on its read,
    and E-init / E-done order it like program order (docs §11.5), so they join po ∪ rf."""
    out = list(x.elab.async_hb)
    out += [(e.id - 1, e.id) for e in x.ev if e.kind == "dma_write"]
    return out
