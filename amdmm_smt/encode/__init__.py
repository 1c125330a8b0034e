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
  control.control         branch conditions of the path, UB from branching on undef (§15)

Each call runs inside `ctx.family(NAME)` (amdmm_smt/encode/families.py), the named rule family its
constraints are reported under by `amdmm-smt explain`; a module that encodes several families
sets finer ones inside. A new module: `with x.ctx.family(families.NEW): new.encode(x)`.
"""

from __future__ import annotations

from . import families as F
from ..elaborate.events import Elab
from . import async_ops, avvis, barrier, coherence, control, sync, values
from .execution import Execution


def encode(elab: Elab, explaining: bool = False) -> Execution:
    """`explaining`: also name what rules statically exclude (encode/logic.py Ctx)."""
    if getattr(elab.model, "cat", None) is not None:      # a model file: docs §18
        from .cat_z3 import encode_model_file
        return encode_model_file(elab, explaining)
    x = Execution(elab, explaining)   # declarations: STRUCTURE
    fam = x.ctx.family
    if elab.barrier is not None:   # docs/semantics.md §10: the run chosen among the defined ones
        with fam(F.BARRIER):
            barrier.encode_choice(x, barrier.analyse(elab))
    with fam(F.WRITE_VALUES):
        values.write_values(x)
    with fam(F.ASYNC):             # completion edges: sync.happens_before
        async_ops.write_values(x)
    with fam(F.HB):                # synchronizes-with inside: F.SYNC, F.BARRIER
        sync.happens_before(x)
    if elab.barrier is not None and elab.model.options.barrier_model == "pr170447":
        with fam(F.BARRIER):       # S003: bmo consistent with happens-before
            barrier.hb_consistency(x)
    with fam(F.LO):                # availability, visibility inside: F.AVAIL, F.VIS
        x.avvis = avvis.encode_location_order(x)
    with fam(F.READ_VALUE):
        values.read_values(x)
    with fam(F.COHERENCE):         # co extends lo inside: F.CO_LO
        coherence.coherence(x)
    with fam(F.RMW):
        coherence.rmw_atomicity(x)
    with fam(F.NO_THIN_AIR):
        coherence.no_thin_air(x)
    with fam(F.SEQ_CST):
        sync.seq_cst(x)
    with fam(F.STRUCTURE):
        values.final_values(x)
    with fam(F.CONTROL):           # docs §15: the path's branch conditions
        control.control(x)
    return x
