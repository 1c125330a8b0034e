"""Stage 3: encode an elaborated test as Z3 constraints over a symbolic execution.

One module per family of axioms, applied in this order:
  barrier                 execution-barrier runs, outcomes, isfirst (S002, S003; only with barriers)
  values.write_values     what writes write (incl. atomicrmw / cmpxchg)
  async_ops.write_values  what an async copy writes (S004; hb edges: sync.happens_before)
  sync.happens_before     release sequences, synchronizes-with, happens-before (LangRef, S002)
  avvis                   availability, visibility, location order (S000)
  values.read_values      may-see and the read-value rule with undef (S000)
  coherence               modification order and RMW atomicity (LangRef)
  sync.seq_cst            the seq_cst order (LangRef, RC11 reading)
  values.final_values     final memory state
"""

from __future__ import annotations

from ..elaborate import Elab
from . import async_ops, avvis, barrier, coherence, sync, values
from .execution import Execution


def encode(elab: Elab) -> Execution:
    x = Execution(elab)
    if elab.barrier is not None:
        barrier.encode_choice(x, barrier.analyse(elab))
    values.write_values(x)
    async_ops.write_values(x)
    sync.happens_before(x)
    if elab.barrier is not None and elab.model.options.barrier_model == "pr170447":
        barrier.hb_consistency(x)
    x.avvis = avvis.encode_location_order(x)
    values.read_values(x)
    coherence.coherence(x)
    coherence.rmw_atomicity(x)
    coherence.no_thin_air(x)
    sync.seq_cst(x)
    values.final_values(x)
    return x
