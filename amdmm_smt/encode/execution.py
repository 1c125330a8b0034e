"""The symbolic candidate execution: what the solver chooses (values read, reads-from,
coherence order, seq_cst order) and the derived relations the axiom modules share.

Choices (free variables):
  rf[w, r]   the write a read takes its value from, when the value rule gives it one
  co rank    a per-location total order on writes (docs/semantics.md R-final, R-coherence)
  sc rank    a total order witnessing acyclicity of seq_cst constraints
Derived (defined by the modules, each a function of the choices):
  sw, hb     encode/sync.py
  avail, vis, lo   encode/avvis.py
  maysee, read values   encode/values.py
"""

from __future__ import annotations


import z3

from ..elaborate.events import Elab, Event
from ..elaborate import may
from .logic import AND, OR, B, Ctx

RMW_KINDS = ("rmw", "cmpxchg")


class Execution:
    def __init__(self, elab: Elab, explaining: bool = False, all_rf: bool = False):
        self.elab = elab
        self.ev = elab.events
        self.ctx = Ctx(explaining)
        # values: (undef, value) for every read and every write
        self.rundef: dict[int, B] = {}
        self.rval: dict[int, z3.BitVecRef] = {}
        self.wundef: dict[int, B] = {}
        self.wval: dict[int, z3.BitVecRef] = {}
        self.wr: dict[int, B] = {}            # does the event write in this execution
        self.rf_var: dict[tuple[int, int], z3.BoolRef] = {}
        self.co_rank: dict[int, z3.ArithRef] = {}
        # happens-before per address space (S002 "-one-as", amdgpu-synchronize-as): spaces
        # with the same synchronization share one relation object
        self.hb_by_space: dict[str, dict[tuple[int, int], B]] = {}
        self.lo_rel: dict[tuple[int, int], B] = {}
        self.final: dict[str, tuple[B, z3.BitVecRef]] = {}
        self.ub: B = False                    # undefined behaviour (none in the base model)
        # execution barriers (encode/barrier.py): the analysis, isfirst registers, the
        # (arrive, wait) pairs in barrier-executes-before and when each holds
        self.bar = None
        self.bar_regs: dict = {}
        self.bar_pair: dict = {}
        self.bar_pick: list = []
        self.bar_xb: dict = {}                # R-bar-hb-exec: (X, Y) -> when X executes before Y
        self.hbx_by_space: dict = {}          # (hb ∪ xb)+ per space, when there is an xb
        self._fr: dict[tuple[int, int], B] = {}
        self._lo_before: dict[int, list] = {}   # encode/values.py _lo_before
        self._comp: dict = {}
        self.cf_ub: list = []                 # docs §15.5: (branch on undef?, thread, line)
        self.forall: list = []                # docs §15.4: (guard, choices, body) statements
        self._co: dict[tuple[int, int], B] = {}
        # static may / must sets (elaborate/may.py, docs §14): reads-from only where it may
        # hold. When explaining, every same-location pair keeps its variable, so that the
        # read-value rule stays what a core names for a pair it excludes.
        self.may = may.MaySets(elab)
        # a model file (encode/cat_z3.py): every same-location pair keeps its reads-from
        # variable, the static sets above are the hand-written rules' consequences
        self.all_rf = all_rf
        self._declare()

    # ---- declarations ----
    def _declare(self) -> None:
        c = self.ctx
        for e in self.ev:
            if e.reads:
                self.rundef[e.id] = c.fresh_bool(f"undef_{e.label}")
                self.rval[e.id] = c.fresh_bv(f"val_{e.label}")
        for loc in self.elab.locs:
            ws = self.elab.writes_to(loc)
            ranks = []
            for w in ws:
                if not w.is_init:
                    r = c.fresh_int(f"co_{w.label}")
                    self.co_rank[w.id] = r
                    ranks.append(r)
            if len(ranks) > 1:
                c.add(z3.Distinct(ranks))
            for r in self.elab.reads_of(loc):
                for w in ws:
                    if w.id != r.id and (c.explaining or not may.ENABLED or self.all_rf
                                         or self.may.may_rf(w, r)):
                        self.rf_var[(w.id, r.id)] = c.fresh_bool(f"rf_{w.label}_{r.label}")

    # ---- accessors ----
    def operand(self, e: Event, op) -> tuple[B, z3.BitVecRef]:
        """(undef, value) of an instruction operand: a constant or a register."""
        if isinstance(op, int):
            return False, z3.BitVecVal(op, 32)
        return self.regval(self.elab.thread_names[e.thread], op.name)

    def regval(self, thread: str, reg: str) -> tuple[B, z3.BitVecRef]:
        """(undef, value) of a register: a read's, or a computation's (docs §15.4)."""
        key = (thread, reg)
        if key in self.bar_regs:
            return self.bar_regs[key]
        if key in self.elab.regs:
            i = self.elab.regs[key]
            return self.rundef[i], self.rval[i]
        if key not in self._comp:
            from .control import compute       # docs §15.4
            self._comp[key] = compute(self, thread, self.elab.comp[key])
        return self._comp[key]

    def value_of(self, thread: str, op) -> tuple[B, z3.BitVecRef]:
        if isinstance(op, int):
            return False, z3.BitVecVal(op, 32)
        return self.regval(thread, op.name)

    def rf(self, w: Event, r: Event) -> B:
        return self.rf_var.get((w.id, r.id), False)

    def co(self, a: Event, b: Event) -> B:
        """a before b in the location's coherence order (initial write first)."""
        if a.id == b.id or a.loc != b.loc:
            return False
        if a.is_init:
            return True
        if b.is_init:
            return False
        key = (a.id, b.id)
        c = self._co.get(key)
        if c is None:      # built once per pair: the coherence axioms ask for it many times
            c = self._co[key] = self.co_rank[a.id] < self.co_rank[b.id]
        return c

    def hb(self, a: Event, b: Event, space: str) -> B:
        """a happens-before b, for the effects on memory in address space `space`."""
        return self.hb_by_space[space].get((a.id, b.id), False)

    def hbx(self, a: Event, b: Event, space: str) -> B:
        """a is before b in happens-before together with barrier execution order (docs
        10.7 R-bar-hb-exec); hb when the test has no barrier execution order."""
        if not self.hbx_by_space:
            return self.hb(a, b, space)
        return self.hbx_by_space[space].get((a.id, b.id), False)

    def po_hb(self, a: Event, b: Event, space: str) -> B:
        """Program order that is also in happens-before (docs: S000 clauses that name program
        order keep S000 property 1 under MMRA, which can drop po edges from hb)."""
        if not self.elab.po(a, b):
            return False
        return True if self.elab.po_in_hb(a, b) else self.hb(a, b, space)

    def space(self, e: Event) -> str:
        return self.elab.space_of(e.loc)

    def lo(self, a: Event, b: Event) -> B:
        return self.lo_rel.get((a.id, b.id), False)

    def writes(self, e: Event) -> B:
        return self.wr.get(e.id, False)

    def fr(self, r: Event, w: Event) -> B:
        """from-read: r reads from a write that is co-before w (built once per pair: the
        seq_cst encoding asks for it many times)."""
        if r.id == w.id or r.loc != w.loc or not r.reads or not w.writes:
            return False
        key = (r.id, w.id)
        if key not in self._fr:
            self._fr[key] = OR(AND(self.rf(w0, r), self.co(w0, w), self.writes(w))
                               for w0 in self.elab.writes_to(r.loc) if w0.id != r.id)
        return self._fr[key]

    def is_rmw(self, e: Event) -> bool:
        return e.kind in RMW_KINDS

    def reg_term(self, thread: str, reg: str) -> tuple[B, z3.BitVecRef]:
        return self.regval(thread, reg)

    def reg_term3(self, thread: str, reg: str):
        """(undef, value, poison) of a register an outcome shows: poison when some choice of
        undef makes it poison (docs 15.4; issue 28 item 3)."""
        u, v = self.regval(thread, reg)
        p = False
        if (thread, reg) in self.elab.comp:
            from .control import exact
            p = exact(self, thread, reg)[0]
        elif (thread, reg) in self.elab.regs:      # docs 15.4 R-mem-poison: a read of poison
            p = getattr(self, "rpoison", {}).get(self.elab.regs[(thread, reg)], False)
        return u, v, p

