"""Stage 4: solve. Enumerate every distinct final state the model allows (blocking each
projected state until UNSAT), and decide each expectation with its own solver query, so that
`expect: forbidden` is a proof (UNSAT of model ∧ condition)."""

from __future__ import annotations

import ctypes
import gc
import threading
import time
from dataclasses import replace
from typing import Optional

import z3

# Outcomes at the solver's pace (issue 20 item 2): Z3 compacts every model it builds by default,
# a cost paid once per listed outcome that does not depend on the test (about a fifth of the
# listing time of the 13-thread store-buffering ring); the projection is read through
# model_eval with model completion, which needs no compact model.
z3.set_param("model.compact", False)

from . import limits
from .elaborate.events import elaborate
from .encode import encode
from .encode.execution import Execution
from .encode.logic import AND, NOT, OR
from .ir import POISON, BoolOp, Cmp, Cond, Condition, Const, LocTerm, Not, RegTerm, Test
from .model import Model
from .elaborate.barrier import WaveDivergent
from .elaborate.cflow import (Symmetry, strip_barriers, symmetric_combos, symmetries,
                              test_has_cflow, unroll_bound)
from .outcomes import (WAVE_UNIFORM, FlagUB, PackedStates, Result, bar_ub_record, cf_verdicts,
                       eval_cond, judge, judge_ub, limit_result, pack_values, projection,
                       unpack_values, wanted_states)


# ---- conditions -------------------------------------------------------------------------

def term_z3(x: Execution, t):
    """(undef, value, poison) of a condition's term: poison only for a register that may be
    poison (docs 15.4; undef includes poison)."""
    if isinstance(t, Const):
        if t.value == POISON:
            return True, z3.BitVecVal(0, 32), True
        return (True, z3.BitVecVal(0, 32), False) if t.value is None else (
            False, z3.BitVecVal(t.value, 32), False)
    if isinstance(t, RegTerm):
        return x.reg_term3(t.thread, t.reg)
    return x.final[t.loc] + (False,)


def cond_z3(x: Execution, cond: Cond):
    if isinstance(cond, Cmp):
        (lu, lv, lp), (ru, rv, rp) = term_z3(x, cond.left), term_z3(x, cond.right)
        both_poison = AND(lp, rp)
        both_undef = AND(lu, ru, NOT(lp), NOT(rp))
        both_def_eq = AND(NOT(lu), NOT(ru), lv == rv)
        eq = OR(both_poison, both_undef, both_def_eq)
        return eq if cond.op == "==" else NOT(eq)
    if isinstance(cond, Not):
        return NOT(cond_z3(x, cond.arg))
    parts = [cond_z3(x, a) for a in cond.args]
    return AND(*parts) if cond.op == "and" else OR(*parts)


def signed(v: int) -> int:
    return v - 2 ** 32 if v >= 2 ** 31 else v


# ---- the run ----------------------------------------------------------------------------

def set_params(s: z3.Solver, **kw) -> None:
    """s.set(...) through Z3's C API: z3py's ParamsRef, when Z3 is out of its --memory while
    making it, fails half built and prints a traceback from its __del__ (the failure itself
    is a Z3Exception, which the callers report as the memory limit)."""
    core = z3.z3core
    ctx = s.ctx.ref()
    p = core.Z3_mk_params(ctx)
    core.Z3_params_inc_ref(ctx, p)
    try:
        for k, v in kw.items():
            sym = core.Z3_mk_string_symbol(ctx, k)
            if isinstance(v, bool):
                core.Z3_params_set_bool(ctx, p, sym, v)
            else:
                core.Z3_params_set_uint(ctx, p, sym, int(v))
        core.Z3_solver_set_params(ctx, s.solver, p)
    finally:
        core.Z3_params_dec_ref(ctx, p)


def model_of(s: z3.Solver) -> z3.ModelRef:
    """s.model() with Z3's own error: z3py replaces every failure of the call by "model is
    not available", also the cancel of an interrupt at the deadline (limits.cancel_reason).
    An interrupt that lands between a check and this call discards the check's model ("there
    is no current model"): past the deadline, that is the timeout too."""
    try:
        return z3.ModelRef(z3.z3core.Z3_solver_get_model(s.ctx.ref(), s.solver), s.ctx)
    except z3.Z3Exception:
        limits.check()
        raise


def _solver(x: Execution, timeout_ms: int, deciding: bool = False) -> z3.Solver:
    """deciding: the solver answers one query (_decide_params), set before the assertions."""
    # the SMT core without the tactic front end: as fast on big tests, twice as fast on the
    # small ones, where setting the front end up cost more than solving
    s = z3.SimpleSolver()
    s.undef_forall = x.forall       # docs 15.4 R-cf-undef-sets: refined after each check
    set_params(s, timeout=max(1, int(timeout_ms)))
    if deciding:
        _decide_params(s)
    ctx, sol, assert_ = s.ctx.ref(), s.solver, z3.z3core.Z3_solver_assert
    for c in x.ctx.constraints:   # the C API directly: z3.Solver.add converts every argument
        assert_(ctx, sol, c.as_ast())
    return s


def run_test(test: Test, model: Model, timeout: float = 600.0,
             max_outcomes: int = 100000, memory_mb: Optional[int] = None,
             decide_only: bool = False, symmetry: bool = True, encoded=None) -> Result:
    """Enumerate the test's outcomes and decide its expectations. `timeout` seconds and
    `memory_mb` MiB bound the whole test, encoding included (amdmm_smt/limits.py); past
    either the test is reported unknown, with the reason in `Result.limit`.
    decide_only: answer each expectation with its own queries, without listing outcomes.
    symmetry: solve one path combination per orbit of interchangeable threads (docs 15.7,
    R-cf-symmetry); False solves every combination (the differential compares the two).
    encoded: (elab, execution) of this straight-line test under this model, already built
    (amdmm_smt/synth compares two encodings before solving either)."""
    own = not limits.active()
    if own:
        limits.begin(timeout, memory_mb)
    if memory_mb:
        z3.set_param("memory_max_size", int(memory_mb))
    t0 = time.perf_counter()
    try:
        return _run_test(test, model, t0, max_outcomes, decide_only, symmetry, encoded)
    except limits.LimitExceeded as e:
        return limit_result(test, model, e.reason, time.perf_counter() - t0)
    except (z3.Z3Exception, MemoryError) as e:
        timed_out = limits.cancel_reason(e)
        if timed_out is not None:         # the watchdog's interrupt, wherever it landed
            return limit_result(test, model, timed_out, time.perf_counter() - t0)
        if not limits.is_out_of_memory(e):
            raise
        return limit_result(test, model, limits.memory_exceeded().reason,
                            time.perf_counter() - t0)
    finally:
        if limits.passed():     # an interrupt at the deadline may be left in Z3: undo it
            clear_cancel()
        if own:
            limits.end()


def clear_cancel(ctx: Optional[z3.Context] = None) -> None:
    """Undo an interrupt that landed outside a check. Z3 keeps it (every later model
    evaluation or push of the context fails with 'canceled', and simplification stops early)
    until a check ends; a check of an empty solver ends one at once. Without this a worker
    process would carry the cancel into its next test (issue 28 item 4)."""
    z3.SimpleSolver(ctx=ctx or z3.main_ctx()).check()


def refine(s: z3.Solver, r, *assumptions) -> z3.CheckSatResult:
    """docs 15.4 (R-cf-undef-sets): the statements "for every choice of undef, ..." of the
    encoding (encode/control.py may_vary), as instances added where a model breaks one: the
    model's execution is fixed, a counterexample choice is found by a small QF_BV query, and
    its instance (which the model violates) is added; then the solver is asked again. Each
    instance is a consequence of the universal statement, so the answers are exact."""
    stmts = getattr(s, "undef_forall", None)
    while r == z3.sat and stmts:
        m = model_of(s)
        added = False
        for guard, qs, body in stmts:
            if not z3.is_true(m.eval(guard, model_completion=True)):
                continue
            qids = {q.get_id() for q in qs}
            fixed = [(v, m.eval(v, model_completion=True)) for v in _consts(body)
                     if v.get_id() not in qids]
            small = z3.SimpleSolver()
            small.add(z3.Not(z3.substitute(body, *fixed) if fixed else body))
            if small.check() != z3.sat:
                continue
            cm = small.model()
            inst = z3.substitute(body, *[(q, cm.eval(q, model_completion=True)) for q in qs])
            s.add(z3.Implies(guard, inst))
            added = True
        if not added:
            break
        r = _paused_gc(s, *assumptions)
    return r


def _consts(e) -> list:
    """The uninterpreted constants of a term."""
    seen, out, todo = set(), [], [e]
    while todo:
        a = todo.pop()
        if a.get_id() in seen:
            continue
        seen.add(a.get_id())
        if z3.is_const(a) and a.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            out.append(a)
        else:
            todo.extend(a.children())
    return out


def _paused_gc(s: z3.Solver, *assumptions) -> z3.CheckSatResult:
    """s.check(), with Python's cyclic garbage collector paused while a listing propagator is
    attached to s (_Lister): its callbacks run Python inside Z3's check, and a collection there
    could free z3py objects of the same context (Z3_dec_ref while Z3 is mid-check, which is
    not re-entrant); two CI runs ended in a segfault inside a check."""
    if getattr(s, "_amdmm_lister", None) is None or not gc.isenabled():
        return s.check(*assumptions)
    gc.disable()
    try:
        return s.check(*assumptions)
    finally:
        gc.enable()


def _check(s: z3.Solver) -> z3.CheckSatResult:
    """s.check() with the time that is left; Z3 running out of --memory is a limit."""
    left = limits.left()
    if left is not None:
        if left <= 0:
            limits.check()
        set_params(s, timeout=max(1, int(min(left, 4e6) * 1000)))   # an unsigned ms
    r = refine(s, _paused_gc(s))
    if r == z3.unknown:
        why = s.reason_unknown()
        if "memory" in why:
            raise limits.memory_exceeded()
    return r


class _Projector:
    """The projection terms of a test, with what blocking a state needs, built once."""

    def __init__(self, x: Execution, terms: list):
        self.zterms = [term_z3(x, t) for t in terms]
        self.lits: dict = {}
        self.negs: dict = {}
        self.pending: list = []
        # the whole projection as one bit-vector, read with one evaluation per outcome
        # (issue 20 item 2): per term, an undef bit then the value with its sign bit flipped
        # (0 when undef): the packed int of outcomes.pack_values, so that a state is held as
        # that int from the solver to the report (issue 30 item 2)
        parts = []
        sign = z3.BitVecVal(0x80000000, 32)
        for u, v, p in self.zterms:
            vv = (v ^ sign) if isinstance(v, z3.ExprRef) else \
                z3.BitVecVal((v & 0xFFFFFFFF) ^ 0x80000000, 32)
            # a poison term: undef bit set, value 1 (undef: 0), docs 15.4 / issue 28 item 3
            pv = (z3.BitVecVal(int(p), 32) if isinstance(p, bool)
                  else z3.If(p, z3.BitVecVal(1, 32), z3.BitVecVal(0, 32)))
            if isinstance(u, bool):
                parts += [z3.BitVecVal(int(u), 1), pv if u else vv]
            else:
                parts += [z3.If(u, z3.BitVecVal(1, 1), z3.BitVecVal(0, 1)),
                          z3.If(u, pv, vv)]
        self.packed = (z3.Concat(*parts) if len(parts) > 1 else parts[0]) if parts else None

    def read(self, m: z3.ModelRef) -> int:
        """The packed projected state of a model (outcomes.pack_values): one evaluation of
        the packed projection through Z3's C API (model_completion: a term the model leaves
        free evaluates to a default, like m.eval(..., model_completion=True))."""
        if self.packed is None:
            return 0
        ctx = m.ctx.ref()
        out = (z3.Ast * 1)()
        z3.z3core.Z3_model_eval(ctx, m.model, self.packed.as_ast(), True, out)
        return int(z3.z3core.Z3_get_numeral_string(ctx, out[0]))

    def decode(self, n: int) -> tuple:
        """The projected values a packed state stands for."""
        return unpack_values(n, len(self.zterms))

    def _differs_bv(self, vals: tuple):
        """A formula true exactly in the states that differ from vals (False: no projection)."""
        block = []
        for (u, v, p), val in zip(self.zterms, vals):
            if val == POISON:
                block.append(NOT(p))
            elif val is None:
                block.append(OR(NOT(u), p))
            else:
                block.append(OR(u, v != z3.BitVecVal(val & 0xFFFFFFFF, 32)))
        return OR(block)

    def _lit(self, i: int, val):
        """A Boolean standing for `key i == val` (undef a value of its own), defined once: a
        blocking clause of such literals is a plain clause, about a quarter faster to solve
        with than bit-vector disequalities."""
        k = (i, val)
        b = self.lits.get(k)
        if b is None:
            u, v, p = self.zterms[i]
            b = self.lits[k] = z3.Bool(f"proj_{i}_{'u' if val is None else val}")
            e = (p if val == POISON else AND(u, NOT(p)) if val is None
                 else AND(NOT(u), v == z3.BitVecVal(val & 0xFFFFFFFF, 32)))
            self.pending.append(b == e if not isinstance(e, bool) else b == z3.BoolVal(e))
        return b

    def _neg(self, i: int, val):
        k = (i, val)
        n = self.negs.get(k)
        if n is None:
            n = self.negs[k] = NOT(self._lit(i, val))
        return n

    def differs(self, vals: tuple):
        """An assertion (top level only: it carries the definitions of new literals) that
        excludes the state vals; False when there is nothing to project. After a solver pop,
        call reset(): definitions made inside the popped scope are gone."""
        if not self.zterms:
            return False
        blk = OR([self._neg(i, v) for i, v in enumerate(vals)])
        if self.pending:
            blk = AND(self.pending + [blk])
            self.pending = []
        return blk

    def reset(self) -> None:
        self.lits.clear()
        self.negs.clear()
        self.pending = []

    def equals(self, vals: tuple):
        d = self._differs_bv(vals)
        return NOT(d)


def _gave_up(s: z3.Solver, timed_out: bool = False) -> str:
    why = "timeout" if timed_out else s.reason_unknown()
    return f"the solver gave up ({why}) within --timeout {limits.timeout():g} s"


# the listing inside one search (_enumerate); False: one check per outcome everywhere
LIST_INSIDE = True
# ... from this many outcomes on: the loop is as fast for a few (the probe and the
# propagator cost about a millisecond per test, a few outcomes' worth)
LIST_INSIDE_AFTER = 16


def _enumerate(s: z3.Solver, proj: _Projector, keys: list, max_outcomes: int,
               found: set) -> tuple[bool, str]:
    """Add every state the solver still allows to `found` (as its packed int,
    outcomes.pack_values: about 100 bytes a state, issue 30 item 2), blocking each: (True, "")
    when the enumeration completed, else (False, what stopped it): past `max_outcomes` states
    (0: no limit). The time limit is one watchdog
    for the whole listing, which interrupts the solver at the deadline, not a timer that
    every check starts and stops (issue 20 item 2: a sixth of the listing time).

    Where the encoding is bit-level (_bit_level) and LIST_INSIDE is set (issue 20 item 2;
    docs/semantics.md section 14, "The listing inside one search"), the states after the
    first LIST_INSIDE_AFTER are collected by a Z3 user propagator during one check, which
    records the projection of each complete assignment and answers it with a conflict on
    the projection (the blocking clause, learnt instead of asserted), so the search goes on
    from where it is instead of restarting and building a model per outcome. An assignment
    the propagator cannot read (the projection not fixed at the final check) ends that check
    with a model, which is read and blocked as by the plain loop. The plain loop
    (LIST_INSIDE = False) is what tests/test_listing.py compares it with."""
    lister = None
    # not with universal statements over the choices of undef (docs 15.4 R-cf-undef-sets):
    # a model is a state only once solve.refine has checked it, outside the search
    inside = LIST_INSIDE and proj.packed is not None and not getattr(s, "undef_forall", None)
    limit = max_outcomes or float("inf")
    try:
        with _Watchdog(s) as dog:
            while True:
                if inside and lister is None and len(found) >= LIST_INSIDE_AFTER:
                    inside = _bit_level(s)
                    if inside:
                        bits = _bit_classes(s, dog, proj, found, limit)
                        if isinstance(bits, str):
                            return False, bits
                        if bits is None:
                            return True, ""
                        lister = _Lister.attach(s, proj, *bits)
                if lister is not None:
                    lister.start(found, limit)
                r = dog.check()
                if lister is not None:
                    lister.stop()
                if r == z3.unsat:
                    return True, ""
                if r == z3.unknown:
                    return False, _gave_up(s, dog.fired)
                n = proj.read(model_of(s))
                if n not in found:
                    if len(found) >= limit:
                        return False, f"stopped at {max_outcomes} outcomes"
                    found.add(n)
                blk = proj.differs(proj.decode(n))
                if blk is False:      # nothing to project: one state only
                    return True, ""
                s.add(blk)
    finally:
        if lister is not None:
            lister.stop()


def _bit_classes(s: z3.Solver, dog, proj: _Projector, found: set, limit):
    """How the bits of the packed projection vary over the states the solver allows (issue
    30 item 2; docs/semantics.md section 14, "The propagator watches the bits that vary"):
    (S0, classes): every state is S0 with some of the classes (disjoint bit masks) flipped,
    each whole or not at all; None when `found` holds every state the solver allows (the
    listing is complete: no state, or only one); a string: why the listing stopped.

    From the states in `found` (S0 the first): bits that no state flips from S0 are the
    fixed bits; bits that every state flips together or not at all are one class. The
    solver is asked for a state that breaks this: a fixed bit flipped, or a class flipped in
    part; such a state is new (added to `found` and blocked, as by the loop) and splits the
    classes further; UNSAT proves them. Z3 learns the propagator's conflict as a clause over
    every bit of the variable it watches (the fixed ones too, when the search fixed them: a
    register's 32 value bits are bit-blasted variables), so watching one bit per class
    makes that clause a few literals instead of 33 per key (the 17-thread ring: 17 instead
    of 561)."""
    width = proj.packed.size()
    n0 = next(iter(found), None)       # None: no state yet, any state is a new one
    fixed, classes = (1 << width) - 1, []

    def split(d: int) -> None:         # a state S0 ^ d
        nonlocal fixed, classes
        out = []
        for m in classes:
            a, b = m & d, m & ~d
            out += [a, b] if a and b else [m]
        if fixed & d:
            out.append(fixed & d)
            fixed &= ~d
        classes = out
    for n in found:
        split(n ^ n0)
    while True:
        s.push()
        try:
            if n0 is not None:
                x = proj.packed ^ z3.BitVecVal(n0, width)
                broken = [(x & fixed) != 0] if fixed else []
                broken += [AND((x & m) != 0, (x & m) != m) for m in classes if m & (m - 1)]
                s.add(OR(broken) if broken else z3.BoolVal(False, s.ctx))
            r = dog.check()
            n = proj.read(model_of(s)) if r == z3.sat else None
        finally:
            s.pop()
        if r == z3.unsat:     # no state, or one: n0 (every bit fixed), listed
            return None if n0 is None or not classes else (n0, sorted(classes, reverse=True))
        if r == z3.unknown:
            return _gave_up(s, dog.fired)
        if n not in found:
            if len(found) >= limit:
                return f"stopped at {limit} outcomes"
            found.add(n)
        s.add(proj.differs(proj.decode(n)))   # blocked, as by the loop
        if n0 is None:
            n0 = n
        split(n ^ n0)


def _bit_level(s: z3.Solver) -> bool:
    """Are the solver's assertions Booleans and bit-vectors only (Z3's `is-qfbv` probe), with
    bit-vector operations bit-blasted when internalized (`smt.bv.delay` off, Z3's default)?
    Then no other theory can refuse an assignment at its final check (docs/semantics.md
    section 14, "The listing inside one search"): the user propagator's final check sees
    assignments that are models."""
    if z3.get_param("smt.bv.delay") not in ("false", "0"):
        return False
    g = z3.Goal(ctx=s.ctx)
    ctx, core = s.ctx.ref(), z3.z3core
    for a in s.assertions():
        core.Z3_goal_assert(ctx, g.goal, a.as_ast())
    # the C API: z3py's Probe replaces any failure (the cancel of an interrupt at the
    # deadline too) by "unknown probe"
    p = core.Z3_mk_probe(ctx, "is-qfbv")
    core.Z3_probe_inc_ref(ctx, p)
    try:
        return core.Z3_probe_apply(ctx, p, g.goal) == 1.0
    finally:
        core.Z3_probe_dec_ref(ctx, p)


def _ast(ptr: int) -> z3.Ast:
    """A Z3 term pointer handed to a callback, typed for the C API."""
    a = z3.Ast(ptr)
    ctypes.c_void_p.__init__(a, ptr)
    return a


class _Lister:
    """The listing inside one search (see _enumerate): a user propagator on the packed
    projection (one bit of each class of its bits that flip together: _bit_classes; docs
    section 14), through Z3's C API (a callback per fixed projection and per final check, no
    Python wrapper objects). One per solver, attached to it for the solver's life (Z3 calls
    back into it); outside a listing it only tracks the projection's value and lets every
    final check through."""

    @classmethod
    def attach(cls, s: z3.Solver, proj: _Projector, n0: int, classes: list) -> "_Lister":
        lister = getattr(s, "_amdmm_lister", None)
        if lister is None:
            lister = s._amdmm_lister = cls(s)
        # Z3 takes one propagator per solver: it watches each listing's own variable (its
        # definition may be in a scope popped since)
        lister.watch(proj, n0, classes)
        return lister

    def __init__(self, s: z3.Solver):
        core = z3.z3core
        self.ctx, self.solver, self.zctx = s.ctx.ref(), s.solver, s.ctx
        self.proj = None
        self.val = None          # the projection's value on the current trail, or None
        self.saved: list = []    # the value at each open scope
        self.found = None
        self.limit = 0
        self.error = None
        self._false = z3.BoolVal(False, s.ctx).as_ast()
        # the callbacks live as long as the solver (this object is attached to it)
        self._cbs = (core.Z3_push_eh(self._push), core.Z3_pop_eh(self._pop),
                     core.Z3_fresh_eh(self._fresh), core.Z3_fixed_eh(self._fixed),
                     core.Z3_final_eh(self._final))
        core.Z3_solver_propagate_init(self.ctx, s.solver, None, *self._cbs[:3])
        core.Z3_solver_propagate_fixed(self.ctx, s.solver, self._cbs[3])
        core.Z3_solver_propagate_final(self.ctx, s.solver, self._cbs[4])

    def watch(self, proj: _Projector, n0: int, classes: list) -> None:
        """Watch a fresh variable equal to one bit of the packed projection per class (its
        highest), the first class most significant (_bit_classes: every state is n0 with some
        classes flipped, each whole)."""
        self.proj, self.val = proj, None
        self.saved = [None] * len(self.saved)     # not fixed in any scope open now
        reps = [m.bit_length() - 1 for m in classes]
        # the state whose representative bits are all 0; a 1 in the variable flips its class
        base = n0
        for m, b in zip(classes, reps):
            if n0 >> b & 1:
                base ^= m
        self.base, self.classes = base, classes[::-1]     # least significant first
        bits = [z3.Extract(b, b, proj.packed) for b in reps]
        term = z3.Concat(*bits) if len(bits) > 1 else bits[0]
        self.var = z3.FreshConst(z3.BitVecSort(term.size(), self.zctx), "proj")
        z3.z3core.Z3_solver_assert(self.ctx, self.solver, (self.var == term).as_ast())
        z3.z3core.Z3_solver_propagate_register(self.ctx, self.solver, self.var.as_ast())
        self.ids = (z3.Ast * 1)(self.var.as_ast())
        self.var_ptr = self.var.as_ast().value

    def start(self, found: set, limit) -> None:
        self.found, self.limit = found, limit

    def stop(self) -> None:
        self.found = None
        if self.error is not None:
            e, self.error = self.error, None
            raise e

    # ---- callbacks (an exception must not cross into Z3: it is kept and raised after) ----
    def _push(self, _ctx, _cb):
        self.saved.append(self.val)

    def _pop(self, _ctx, _cb, n):
        self.val = self.saved[-n]
        del self.saved[-n:]

    def _fresh(self, _ctx, _new_ctx):
        self.error = self.error or RuntimeError("the listing's propagator was copied")
        return None

    def _fixed(self, _ctx, _cb, term, value):
        if term != self.var_ptr:
            return               # an earlier listing's variable
        try:
            v = int(z3.z3core.Z3_get_numeral_string(self.ctx, _ast(value)))
            n = self.base        # the packed state: each class whose bit is 1 flipped
            for m in self.classes:
                if v & 1:
                    n ^= m
                v >>= 1
            self.val = n
        except BaseException as e:     # noqa: BLE001 - raised again after the check
            self.error = self.error or e

    def _final(self, _ctx, cb):
        try:
            if self.found is None or self.val is None or self.error is not None:
                return           # not listing, or the projection is not fixed: a model
            if self.val not in self.found:
                if len(self.found) >= self.limit:
                    return       # one more state: the check ends with its model
                self._record(self.val)
            z3.z3core.Z3_solver_propagate_consequence(self.ctx, ctypes.c_void_p(cb), 1,
                                                      self.ids, 0, None, None, self._false)
        except BaseException as e:     # noqa: BLE001
            self.error = self.error or e


    def _record(self, n: int) -> None:
        """A new state, as its packed int (the projection's value)."""
        self.found.add(n)


class _Watchdog:
    """--timeout over a run of checks: the solver has no per-check timeout; a thread
    interrupts it once the deadline has passed (again every 20 ms until the run ends, so that
    a check that begins just after an interrupt is stopped too)."""

    def __init__(self, s: z3.Solver):
        self.s = s
        self.fired = False
        self._stop = threading.Event()
        self._thread = None

    def __enter__(self):
        left = limits.left()
        if left is not None:
            set_params(self.s, timeout=4294967295)        # Z3: UINT_MAX is no timer at all
            # the deadline is read here: limits' state is per thread (the watchdog's is empty)
            self._thread = threading.Thread(target=self._run,
                                            args=(time.perf_counter() + left,), daemon=True)
            self._thread.start()
        return self

    def _run(self, deadline: float) -> None:
        # fire only once the deadline has passed by limits' own clock: a cancel the watchdog
        # causes is then always one after the deadline (limits.cancel_reason)
        left = deadline - time.perf_counter()
        while left > 0:
            if self._stop.wait(left):
                return
            left = deadline - time.perf_counter()
        self.fired = True
        while not self._stop.is_set():
            self.s.ctx.interrupt()
            self._stop.wait(0.02)

    def check(self) -> z3.CheckSatResult:
        if self._thread is None:
            return _check(self.s)
        if self.fired or limits.passed():
            # past the deadline nothing Z3 answers is trusted: an interrupt outside a check
            # may have dropped an assertion (Z3_solver_assert under a cancel does nothing)
            self.fired = True
            return z3.unknown
        r = refine(self.s, _paused_gc(self.s))
        if r == z3.unknown and "memory" in self.s.reason_unknown():
            raise limits.memory_exceeded()
        return r

    def __exit__(self, *exc):
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            if self.fired:      # an interrupt may have landed outside a check: undo it
                clear_cancel(self.s.ctx)
            left = limits.left()      # the checks after this one set their own timeout
            set_params(self.s,
                       timeout=max(1, int(min(max(left or 0, 0.001), 4e6) * 1000)))
        return False


def _key_sources(g: Symmetry, names: list, keys: list) -> list:
    """For the combination a symmetry carries this one onto (R-cf-symmetry), where each key of
    a state comes from: thread k's registers are thread g.threads[k]'s, location X's final
    value is its image's. Computed once per symmetry; a state is then permuted by index."""
    tn = {names[k]: names[g.threads[k]] for k in range(len(names))}
    locs = g.loc_map()

    def image(k: str) -> str:
        if k.startswith("@"):
            return "@" + locs.get(k[1:], k[1:])
        t, _, reg = k.partition(":")
        return tn[t] + ":" + reg
    where = {image(k): i for i, k in enumerate(keys)}
    return [where[k] for k in keys]


def _renamed(cond: Cond, threads: dict, locs: dict) -> Cond:
    if isinstance(cond, Cmp):
        def term(t):
            if isinstance(t, RegTerm):
                return RegTerm(threads.get(t.thread, t.thread), t.reg)
            if isinstance(t, LocTerm):
                return LocTerm(locs.get(t.loc, t.loc))
            return t
        return Cmp(cond.op, term(cond.left), term(cond.right))
    if isinstance(cond, Not):
        return Not(_renamed(cond.arg, threads, locs))
    return BoolOp(cond.op, tuple(_renamed(a, threads, locs) for a in cond.args))


def _orbit_exists(test: Test, orbit: list) -> Test:
    """The combination's exists query standing for its whole orbit (R-cf-symmetry): the
    condition holds in the combination a symmetry carries this one onto iff its inverse
    renaming holds in this one."""
    if test.exists is None or len(orbit) == 1:
        return test
    names = [t.name for t in test.threads]
    conds = []
    for g in orbit:
        back_t = {names[g.threads[k]]: names[k] for k in range(len(names))}
        back_l = {b: a for a, b in g.locs}
        conds.append(_renamed(test.exists.cond, back_t, back_l))
    return replace(test, exists=Condition(test.exists.text, test.exists.line,
                                          BoolOp("or", tuple(conds))))


def _run_cflow(test: Test, model: Model, t0: float, max_outcomes: int,
               decide_only: bool = False, symmetry: bool = True) -> Result:
    """docs/semantics.md section 15: a test with control flow is the union of its path
    combinations (one path per thread, each straight-line code with branch assumptions). An
    outcome is an outcome of some combination; a combination with a path cut by the unroll
    bound that has an execution makes the bound reached (a failure, unless `bound: assume`
    assumes such executions away); an
    execution that branches on undef is undefined. decide_only (docs 15.7): each combination
    answers the expectations with its own queries (the exists query only until some
    combination reaches the condition; one witness of a defined execution only until one is
    found), without listing its outcomes; undefined behaviour and the bound are still asked of
    every combination, so the verdicts are those of the listing."""
    bound = unroll_bound(test, None)
    keys, _ = projection(test)
    wanted = wanted_states(test, keys)
    # docs 15.7 (R-cf-symmetry): one combination per orbit of interchangeable threads; not
    # when deciding an `outcomes:` list (its queries are per state, not per orbit)
    shown = frozenset(k[1:] for k in keys if k.startswith("@"))
    group = (symmetries(test, shown) if symmetry and not (decide_only and wanted)
             else [Symmetry(tuple(range(len(test.threads))))])
    _, _, gen = symmetric_combos(test, bound, group)
    names = [t.name for t in test.threads]
    states: set = set()     # packed states (outcomes.pack_values)
    complete, thin_air, why = True, False, ""
    cut = ub = bar_ub = None
    assumed = False
    listed = True
    reach: list = []        # each complete combination's own exists query (docs §3)
    warnings: list = []

    def has_execution(ct) -> bool:
        """docs 15.9 (R-cf-bar-feasible): does the combination's memory part, without its
        barrier operations, have an execution (its branch assumptions hold)?"""
        x = encode(elaborate(strip_barriers(ct), model))
        return _check(_solver(x, 1000 * min(limits.left() or 600.0, 4e6))) != z3.unsat
    seen: list = []         # every combination's code (warning[model-inconsistent])
    for ct, cutlist, path, orbit in gen:
        if model.cat is not None:
            seen.append(strip_barriers(ct) if cutlist else ct)
        if cutlist:
            # docs 15.9 (R-cf-bar-cut): a cut path is a prefix; its barrier operations are
            # not judged (the waves it meets may be cut too), only whether it has an execution
            ct = strip_barriers(ct)
            # docs 15.2 / 15.5: a cut combination reaches the bound (or, under `bound:
            # assume`, is assumed away) only with an execution that is defined up to the cut;
            # one undefined before the cut is undefined behaviour, whatever the bound
            judge_cut = cut is None and not assumed
            if not judge_cut and ub is not None:
                continue
            limits.stage("bound check")
            x = encode(elaborate(ct, model))
            s = _solver(x, 1000 * min(limits.left() or 600.0, 4e6))
            if judge_cut:
                s.push()
                s.add(NOT(x.ub) if not isinstance(x.ub, bool) else z3.BoolVal(not x.ub))
                r = _check(s)
                s.pop()
                if r == z3.sat:
                    if test.bound == "assume":
                        assumed = True
                    else:
                        cut = cutlist[0]
                elif r == z3.unknown:
                    complete, why = False, "the solver gave up on a bound check"
            if ub is None and x.cf_ub:
                s.add(OR(*[u for u, _, _ in x.cf_ub]))
                if _check(s) == z3.sat:
                    m = model_of(s)
                    ub = next((t, ln) for u, t, ln in x.cf_ub
                              if z3.is_true(m.eval(u, model_completion=True)))
            continue
        try:
            r = _run_straight(_orbit_exists(ct, orbit) if decide_only else ct, model, t0,
                              max_outcomes, decide_only,
                              skip_exists=decide_only and True in reach,
                              witness=decide_only and not states)
        except WaveDivergent as e:
            # docs 15.9: threads of one wave that perform different barrier operations on
            # this path combination (S002 "only in wave-uniform control flow"): every
            # execution of the combination is undefined
            if bar_ub is None and has_execution(ct):
                bar_ub = bar_ub_record({"rule": "wave-divergent", "op": f"line {e.line}",
                                        "run": [e.message + WAVE_UNIFORM]}, path)
            continue
        if bar_ub is None and r.ub is not None and (r.states or has_execution(ct)):
            bar_ub = bar_ub_record(r.ub, path)      # docs 15.9: judged over the test
        if len(orbit) == 1 and isinstance(r.states, PackedStates) and \
                list(r.states.keys) == keys:
            states.update(r.states.ints)
        elif len(orbit) == 1:
            states |= {pack_values(dict(st)[k] for k in keys) for st in r.states}
        else:
            for g in orbit:
                src = _key_sources(g, names, keys)
                states |= {pack_values(st[i][1] for i in src) for st in r.states}
        listed = listed and getattr(r, "listed", True)
        reach.append(getattr(r, "reachable", None))
        warnings += [w for w in r.warnings if w not in warnings]
        thin_air |= r.thin_air
        if not r.complete:
            complete, why = False, r.why or why
        if ub is None and getattr(r, "cf_ub", None):
            ub = r.cf_ub
    states_l = PackedStates(keys, states)
    del states

    def reachable():
        if test.exists is None:
            return None
        if any(eval_cond(test.exists.cond, dict(st)) for st in states_l) or True in reach:
            return True
        return False if complete or (reach and all(v is False for v in reach)) else None
    limits.stage("judging")
    res = judge(test, model, keys, states_l, complete, reachable, t0, wanted)
    res.thin_air, res.why, res.warnings = thin_air, why, warnings
    res.listed = listed
    cf_verdicts(res, test, bound, cut, ub, complete, states_l, assumed, bar_ub)
    if model.cat is not None and complete and listed and not states_l and not thin_air \
            and cut is None and ub is None and bar_ub is None and not assumed:
        _model_inconsistent(test, model, res, seen)
    return res


def _model_inconsistent(test: Test, model: Model, res: Result, combos=None) -> None:
    """warning[model-inconsistent] (docs/semantics.md §18): the model file allows no
    execution of this test (`combos`: its path combinations, when it has control flow); name
    a minimal set of its rules that conflict."""
    from .cat import inconsistent_warning, load_cached
    from .encode.cat_z3 import conflicting_rules
    left = limits.left()
    keep = conflicting_rules([elaborate(t, model) for t in (combos or [test])],
                             1000 * min(left or 60.0, 60.0))
    if keep:
        res.warnings.append(inconsistent_warning(load_cached(model.cat), keep, test))


def _run_test(test: Test, model: Model, t0: float, max_outcomes: int,
              decide_only: bool, symmetry: bool = True, encoded=None) -> Result:
    if test_has_cflow(test):
        return _run_cflow(test, model, t0, max_outcomes, decide_only, symmetry)
    try:
        res = _run_straight(test, model, t0, max_outcomes, decide_only, encoded=encoded)
        if model.cat is not None and res.complete and getattr(res, "listed", True) \
                and not res.states and not res.thin_air and res.ub is None:
            _model_inconsistent(test, model, res)
        return res
    except WaveDivergent:
        # docs 10.3 / 15.9 (R-cf-bar-wave): threads of one wave with different barrier
        # instructions stand for a divergent branch: the test is its one path combination,
        # judged as a combination of a test with control flow is (every execution undefined)
        return _run_cflow(test, model, t0, max_outcomes, decide_only, symmetry)


def _decide_params(s: z3.Solver) -> None:
    """Z3 settings for a query asked once (issue 20: deciding). Case splits follow the
    structure of the assertions (`case_split=3`, relevancy-based; Z3 needs `auto_config`
    off for it) instead of variable activity: the activity heuristic branches on the many
    happens-before definitions' variables and backtracks over them (16 threads x 8
    operations: 7.6 to over 130 s depending on the random seed, 2.7-3.1 s this way). Not for
    listings, which it slows (4 threads x 4 operations: 26 s to over 60 s)."""
    set_params(s, auto_config=False, case_split=3)


def _run_straight(test: Test, model: Model, t0: float, max_outcomes: int,
                  decide_only: bool, skip_exists: bool = False, witness: bool = False,
                  encoded=None) -> Result:
    """One straight-line test (or path combination). decide_only: no listing; skip_exists:
    the exists query is already answered (a control-flow test's earlier combination reached
    it); witness: with decide_only and an exists expectation, also look for one defined
    execution (its state stands for the set: docs 15.7, whether any execution is defined)."""
    if encoded is not None:
        elab, x = encoded
    else:
        limits.stage("elaboration")
        elab = elaborate(test, model)
        limits.stage("encoding")
        x = encode(elab)
    keys, terms = projection(test)
    wanted = wanted_states(test, keys)       # malformed outcomes are an input error, before solving
    proj = _Projector(x, terms)
    limits.stage("solving")
    ask_exists = test.exists is not None and test.expect in ("allowed", "forbidden", None) \
        and not skip_exists
    # deciding with the exists query as the only query: it is asserted at the base level, not
    # in a scope (Z3 searches worse inside one: 16 threads x 8 operations 55 s against 7.6 s),
    # on a solver set up for one query (_decide_params)
    only = ask_exists and decide_only and wanted is None and not witness
    s = _solver(x, 1000 * min(limits.left() or 600.0, 4e6), deciding=only)
    cf_ub = None
    if x.cf_ub:      # docs 15.5: does some execution of this path branch on undef?
        s.push()
        s.add(OR(*[u for u, _, _ in x.cf_ub]))
        if _check(s) == z3.sat:
            m = model_of(s)
            cf_ub = next((t, ln) for u, t, ln in x.cf_ub
                         if z3.is_true(m.eval(u, model_completion=True)))
        s.pop()
    flag_an = None
    if getattr(x, "flags", None):
        # a model file's flags (docs/semantics.md §18): is some consistent execution flagged?
        # then undefined behaviour, reported as 10.6 reports a barrier's; flagged executions
        # are not defined executions (x.ub includes the flags: encode/cat_z3.py)
        s.push()
        s.add(OR(*[u for u, _, _, _ in x.flags]))
        if _check(s) == z3.sat:
            m = model_of(s)
            hit = next(f for f in x.flags if z3.is_true(m.eval(f[0], model_completion=True)))
            s.pop()
            s.push()
            s.add(NOT(x.ub) if not isinstance(x.ub, bool) else z3.BoolVal(not x.ub))
            every = _check(s) == z3.unsat
            flag_an = FlagUB(hit[1], hit[2], hit[3], every)
        s.pop()
    s.add(NOT(x.ub) if not isinstance(x.ub, bool) else z3.BoolVal(not x.ub))
    reachable: Optional[bool] = None
    if ask_exists:
        # `expect: forbidden` is a proof: UNSAT of model ∧ condition. Asked first, on the same
        # solver (push / pop), so the enumeration below reuses what it learnt.
        c = cond_z3(x, test.exists.cond)
        if not only:
            s.push()
        s.add(c if not isinstance(c, bool) else z3.BoolVal(c))
        r = _check(s)
        reachable = None if r == z3.unknown else r == z3.sat
        if not only:
            s.pop()
    found: set = set()      # packed states (outcomes.pack_values)
    complete = True
    listed = True
    why = ""
    thin_air = False
    has_expectation = test.exists is not None or test.expect == "undefined" or wanted is not None
    if decide_only and has_expectation:
        if wanted is not None:
            # outcomes: each expected state by its own query, then every state outside the
            # set by blocking the expected ones: the same allowed set as a full listing
            thin_air = _thin_air(test, x, s, None)
            if not thin_air:
                for w in dict.fromkeys(wanted):
                    s.push()
                    eq = proj.equals(tuple(v for _, v in w))
                    s.add(eq if not isinstance(eq, bool) else z3.BoolVal(eq))
                    r = _check(s)
                    s.pop()
                    if r == z3.unknown:
                        complete, why = False, _gave_up(s)
                        break
                    if r == z3.sat:
                        found.add(pack_values(v for _, v in w))
                if complete:
                    s.push()
                    for w in dict.fromkeys(wanted):
                        d = proj.differs(tuple(v for _, v in w))
                        s.add(d if not isinstance(d, bool) else z3.BoolVal(d))
                    complete, why = _enumerate(s, proj, keys, max_outcomes, found)
                    s.pop()
                    proj.reset()
        elif test.expect == "undefined":
            # one query: is there any defined execution? (a witness stands for the set)
            r = _check(s)
            if r == z3.unknown:
                complete, why = False, _gave_up(s)
            elif r == z3.sat:
                found.add(proj.read(model_of(s)))
            listed = False
        else:
            listed = False
            if witness:
                r = _check(s)
                if r == z3.unknown:
                    complete, why = False, _gave_up(s)
                elif r == z3.sat:
                    found.add(proj.read(model_of(s)))
    else:
        thin_air = _thin_air(test, x, s, None)
        if not thin_air:
            complete, why = _enumerate(s, proj, keys, max_outcomes, found)
    states = PackedStates(keys, found)
    del found
    limits.stage("judging")
    if thin_air:
        complete = False
    res = judge(test, model, keys, states, complete, lambda: reachable, t0, wanted)
    res.thin_air = thin_air
    res.cf_ub = cf_ub
    res.reachable = reachable       # the exists query, decided even when thin_air (docs §3)
    res.listed = listed
    left = limits.left()
    if left is not None and left <= 0 and res.status == "unknown":
        res.limit = limits.timeout_reason(limits.timeout(), "solving")
    res.why = why
    res.warnings = list(elab.warnings)
    if x.bar is not None:
        judge_ub(res, x.bar)
    elif flag_an is not None:
        judge_ub(res, flag_an)
    return res


MAX_THIN_AIR_CYCLES = 4096


def _reads_of_value(elab, thread: str, op, seen=None) -> set:
    """The read events whose values an operand is computed from (through computations and
    phis: docs 15.4), i.e. what it depends on through data."""
    if not hasattr(op, "name"):
        return set()
    key = (thread, op.name)
    if key in elab.regs:
        return {elab.regs[key]}
    ins = elab.comp.get(key)
    seen = set() if seen is None else seen
    if ins is None or key in seen:
        return set()
    seen.add(key)
    out: set = set()
    for o in ins.ops:
        out |= _reads_of_value(elab, thread, o, seen)
    return out


def _value_cycles(x: Execution) -> list:
    """docs R-no-thin-air: the conditions (conjunctions of reads-from) under which a read's
    value depends on itself: a cycle of reads-from (W to R) and data dependencies (R to a
    write whose value is computed from R's value; an RMW's write from its own read, except
    xchg). None when there are too many cycles to list."""
    el = x.elab
    dep: dict = {}          # write event id -> reads its value depends on
    for e in x.ev:
        if not e.writes or e.is_init or e.instr is None:
            continue
        tname = el.thread_names[e.thread]
        d = _reads_of_value(el, tname, e.instr.value) if e.kind != "dma_write" else set()
        if e.kind == "rmw" and e.instr.op != "xchg":
            d.add(e.id)
        if d:
            dep[e.id] = d
    # read r2 -> read r: r reads-from a write whose value depends on r2
    edges: dict = {}
    for w, ds in dep.items():
        for (wi, ri), v in x.rf_var.items():
            if wi == w:
                for r2 in ds:
                    edges.setdefault(r2, {}).setdefault(ri, []).append(v)
    cycles: list = []
    nodes = sorted(edges)
    for start in nodes:           # simple cycles whose smallest node is `start`
        stack = [(start, [start], [])]
        while stack:
            n, path, conds = stack.pop()
            for m, vs in edges.get(n, {}).items():
                c = conds + [OR(*vs)]
                if m == start:
                    cycles.append(AND(*c))
                    if len(cycles) > MAX_THIN_AIR_CYCLES:
                        return None
                elif m > start and m not in path:
                    stack.append((m, path + [m], c))
    return cycles


THIN_AIR_PROBES = (0x5EED1234, 0x0BADF00D)


def _thin_air(test: Test, x: Execution, s: z3.Solver, _unused=None) -> bool:
    """docs R-no-thin-air: is there a (defined) execution in which a read's value depends on
    itself through reads-from and data (a value out of thin air)? Such a value may be any
    value the cycle maps to itself (every value, through an identity; only undef, through
    `sub 1`), so the outcomes are not listed; `exists` is still decided. The reference engine
    detects the same executions (a value that depends on itself: reference/engine.py)."""
    if not any(ins.uses() for t in test.threads for ins in t.code if ins.writes):
        return False
    cycles = _value_cycles(x)
    if cycles is None:     # too many to list: the probe (two arbitrary values both readable)
        return _probe_thin_air(x, s)
    if not cycles:
        return False
    s.push()
    s.add(OR(*cycles) if len(cycles) > 1 else cycles[0])
    r = _check(s)
    s.pop()
    return r == z3.sat


def _probe_thin_air(x: Execution, s: z3.Solver) -> bool:
    reads = [e for e in x.ev if e.reads]
    for probe in THIN_AIR_PROBES:
        s.push()
        s.add(z3.Or([z3.And(z3.Not(x.rundef[e.id]) if not isinstance(x.rundef[e.id], bool)
                            else z3.BoolVal(not x.rundef[e.id]),
                            x.rval[e.id] == z3.BitVecVal(probe, 32)) for e in reads]))
        r = _check(s)
        s.pop()
        if r != z3.sat:
            return False
    return True
