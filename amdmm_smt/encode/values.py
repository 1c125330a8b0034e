"""Values: what each write writes, which writes a read may see, and the value the read
returns (S000 Location Order: the may-see exceptions and the value rule, incl. `undef`), and
the final value of each location (docs R-final)."""

from __future__ import annotations

import z3

from . import families as F
from ..elaborate import may
from ..elaborate.events import Event
from .execution import Execution
from .logic import AND, AT_MOST_ONE, B, IFF, IMPLIES, NOT, OR

ZERO = z3.BitVecVal(0, 32)
ALL = z3.BitVecVal(0xFFFFFFFF, 32)


def _rmw_result(op: str, old: z3.BitVecRef, v: z3.BitVecRef) -> z3.BitVecRef:
    """LangRef atomicrmw operations on i32."""
    return {
        "xchg": lambda: v, "add": lambda: old + v, "sub": lambda: old - v,
        "and": lambda: old & v, "or": lambda: old | v, "xor": lambda: old ^ v,
        "max": lambda: z3.If(old >= v, old, v), "min": lambda: z3.If(old <= v, old, v),
        "umax": lambda: z3.If(z3.UGE(old, v), old, v),
        "umin": lambda: z3.If(z3.ULE(old, v), old, v),
    }[op]()


def _partial_reads(x: Execution) -> None:
    """docs 15.4 (R-mem-bytes): the reads that may return a value with some but not all bytes
    undef — reads of a location that a write may write partly undef: a store, an xchg, a
    cmpxchg's new value of a register that is not `whole` (control.kind), an RMW whose
    result may have some bytes undef (`_rmw_may_partial`), an LDS DMA copy of such a location
    (docs 11.3). A fixpoint: such a read makes its register a cube, which may make another
    write partial."""
    from .control import kind
    x.rpartial = set()
    writes = [e for e in x.ev if e.writes and not e.is_init]
    while True:
        x.__dict__.pop("_kind", None)
        locs = set()
        for e in writes:
            thread = x.elab.thread_names[e.thread] if e.kind in ("store", "av_store",
                                                                 "cmpxchg", "rmw") else None
            if e.kind in ("store", "av_store", "cmpxchg") or (e.kind == "rmw"
                                                              and e.instr.op == "xchg"):
                if kind(x, thread, e.instr.value) != "whole":
                    locs.add(e.loc)
            elif e.kind == "rmw":
                if _rmw_may_partial(x, e, thread):
                    locs.add(e.loc)
            elif e.kind == "dma_write" and e.id - 1 in x.rpartial:
                locs.add(e.loc)             # docs 11.3: A.w writes the bytes A.r returned
        new = {r.id for r in x.ev if r.reads and r.loc in locs and r.kind in (
            "load", "rmw", "cmpxchg", "dma_read")}
        new = {i for i in new if i in x.elab.regs.values() or x.ev[i].kind == "dma_read"}
        if new <= x.rpartial:
            break
        x.rpartial |= new
    x.__dict__.pop("_kind", None)
    x.__dict__.pop("_tri", None)


def may_poison(x: Execution, thread: str, op) -> bool:
    """Can operand `op` be poison in some execution (a static over-approximation)? A read
    that may read a poison write (x.rpois), a shift whose amount is not a constant below 32
    (LangRef shl / lshr / ashr: an amount of 32 or more is poison), or anything computed from
    such a value (docs 15.4 R-mem-poison)."""
    if isinstance(op, int):
        return False
    key = (thread, op.name)
    if key in x.bar_regs:
        return False
    if key in x.elab.regs:
        return x.elab.regs[key] in x.rpois
    cache = x.__dict__.setdefault("_maypoison", {})     # cleared as x.rpois grows
    if key not in cache:
        ins = x.elab.comp[key]
        cache[key] = (ins.kind == "binop" and ins.op in ("shl", "lshr", "ashr") and not (
            isinstance(ins.ops[1], int) and 0 <= ins.ops[1] < 32)) or any(
            may_poison(x, thread, o) for o in ins.ops)
    return cache[key]


def _poison_reads(x: Execution) -> None:
    """docs 15.4 (R-mem-poison): the reads that may return poison — reads of a location that
    a write may write poison to: a store, an xchg, a cmpxchg's new value of a value that may
    be poison, an RMW whose old value or operand may be (LangRef: "An instruction that
    *depends* on a poison value, produces a poison value itself"), an LDS DMA copy of such
    a read. A fixpoint, as _partial_reads."""
    x.rpois = set()
    writes = [e for e in x.ev if e.writes and not e.is_init]
    while True:
        x.__dict__.pop("_maypoison", None)
        locs = set()
        for e in writes:
            if e.kind in ("store", "av_store", "cmpxchg", "rmw"):
                t = x.elab.thread_names[e.thread]
                if may_poison(x, t, e.instr.value) or (
                        e.kind == "rmw" and e.instr.op != "xchg" and e.id in x.rpois):
                    locs.add(e.loc)
            elif e.kind == "dma_write" and e.id - 1 in x.rpois:
                locs.add(e.loc)
        new = {r.id for r in x.ev if r.reads and r.loc in locs and r.kind in (
            "load", "rmw", "cmpxchg", "dma_read")}
        if new <= x.rpois:
            break
        x.rpois |= new


def _rmw_may_partial(x: Execution, e: Event, thread) -> bool:
    """Can `atomicrmw OP` write a value with some but not all bytes undef (docs 15.4
    R-mem-bytes, RMW)? Yes when its operand is not whole or its read may return some undef
    bytes; with a whole old value and a whole operand, add / sub / xor never (an undef operand
    makes every byte vary), and / or / min / max with a constant operand when the bytes
    `_whole_rmw_mask` gives are neither none nor all, and with a register operand maybe."""
    from .control import kind
    op, v = e.instr.op, e.instr.value
    if e.id in x.rpartial or kind(x, thread, v) != "whole":
        return True
    if op in ("add", "sub", "xor"):
        return False
    if not isinstance(v, int):
        return True
    vv = z3.BitVecVal(v & 0xFFFFFFFF, 32)
    m = z3.simplify(_whole_rmw_mask(op, z3.BoolVal(True), False, ZERO, vv)[0])
    return m.as_long() not in (0, 0xFFFFFFFF)


def _range_mask(a, b, signed: bool):
    """The bytes that vary over the contiguous range [a, b] (signed or unsigned order): byte
    k is constant iff a and b agree above bit 8k (consecutive quotients by 2^8k differ in
    their low byte; a signed range across 0 holds -1 and 0)."""
    sh = (lambda t, k: t >> k) if signed else z3.LShR
    return z3.Concat(*[z3.If(sh(a, 8 * k) == sh(b, 8 * k), z3.BitVecVal(0, 8),
                             z3.BitVecVal(0xFF, 8)) for k in range(3, -1, -1)])


def _one_side(op: str, v):
    """(bytes that vary, value) of `OP(u, v)` over every u, v one defined value: the set is
    {v & u}, {v | u}, [v, max] or [min, v] (each holds v: u = -1, 0, v)."""
    if op == "and":
        return byte_mask(v), v
    if op == "or":
        return byte_mask(~v), v
    lim = {"umax": (v, ALL, False), "umin": (ZERO, v, False),
           "max": (v, z3.BitVecVal(0x7FFFFFFF, 32), True),
           "min": (z3.BitVecVal(0x80000000, 32), v, True)}[op]
    return _range_mask(*lim), v


def _whole_rmw_mask(op: str, ou, vu, old, v):
    """docs 15.4 R-mem-bytes (RMW): (byte mask, value) of `OP(old, v)` for a whole old value
    (undef flag ou: any value) and a whole operand (vu), exactly the bytes that can take two
    values over the choices: add / sub / xor of an undef operand take every value; and / or /
    min / max of one undef and one defined operand `_one_side`; both undef: every value."""
    if op in ("add", "sub", "xor"):
        u = OR(ou, vu)
        m = ALL if u is True else (ZERO if u is False else z3.If(u, ALL, ZERO))
        return m, _rmw_result(op, old, v)
    mo, vo = _one_side(op, v)       # old undef, v defined
    mv, vv = _one_side(op, old)     # v undef, old defined (these operations commute)

    def ite(c, a, b):
        return a if c is True else (b if c is False else z3.If(c, a, b))
    m = ite(ou, ite(vu, ALL, mo), ite(vu, mv, ZERO))
    val = ite(ou, ite(vu, ZERO, vo), ite(vu, vv, _rmw_result(op, old, v)))
    return m, val


def byte_mask(m) -> z3.BitVecRef:
    """The bits of the bytes that have an undef bit in mask m (a byte is undef as a whole)."""
    bs = [z3.If(z3.Extract(8 * k + 7, 8 * k, m) == 0, z3.BitVecVal(0, 8), z3.BitVecVal(0xFF, 8))
          for k in range(3, -1, -1)]
    return z3.simplify(z3.Concat(*bs))


def operand_bytes(x: Execution, e: Event, op, tag: str):
    """(byte mask, value) of operand `op` of e as memory keeps it (docs 15.4 R-mem-bytes):
    byte k is undef iff it can take two values over the choices of the undef the value
    depends on (or the value may be poison: every byte); the other bytes are the value's,
    undef bytes 0 in the value."""
    return operand_pbytes(x, e, op, tag)[1:]


def operand_pbytes(x: Execution, e: Event, op, tag: str):
    """(poison, byte mask, value) of operand `op` of e (operand_bytes): poison when some
    choice of undef makes it poison (docs 15.4 R-mem-poison: memory keeps it); every byte is
    undef then."""
    from . import control
    thread = x.elab.thread_names[e.thread]
    k = control.kind(x, thread, op)
    if k == "whole":
        u, v = x.operand(e, op)
        m = ALL if u is True else (ZERO if u is False else z3.If(u, ALL, ZERO))
        p = control.tri(x, thread, op)[0] if not isinstance(op, int) else False
        return p, m, v
    if k == "cube":
        p, m, v = control.tri(x, thread, op)
        bm = byte_mask(m)
    else:
        p, t, us = control.template(x, thread, op.name)
        bm, v, p = _term_bytes(x, tag, p, t, us)
    if p is not False:
        bm = z3.If(p, ALL, bm) if not isinstance(p, bool) else ALL
    bm = z3.simplify(bm)
    return p, bm, z3.simplify(v & ~bm)


def _term_bytes(x: Execution, tag: str, p, t, us):
    """(byte mask, term) of a term over choices `us`: byte k undef iff some choice is poison
    (every byte) or two choices give it different values (control.may_vary, exact)."""
    from . import control
    bs = []
    p_any = p
    for b in range(3, -1, -1):
        pp, vr = control.may_vary(x, f"{tag}_b{b}", p if b == 3 else False, t, us,
                                  mask=z3.BitVecVal(0xFF << (8 * b), 32))
        if b == 3:
            p_any = pp
        bs.append(z3.If(vr, z3.BitVecVal(0xFF, 8), z3.BitVecVal(0, 8))
                  if not isinstance(vr, bool) else z3.BitVecVal(0xFF if vr else 0, 8))
    bm = z3.Concat(*bs)
    if p_any is not False:
        bm = z3.If(p_any, ALL, bm) if not isinstance(p_any, bool) else ALL
    return bm, t, p_any


def _set_pbytes(x: Execution, e: Event, p, bm, v):
    """A write of a value that may be poison (docs 15.4 R-mem-poison): x.wpoison, then its
    bytes (_set_bytes)."""
    if p is not False:
        x.wpoison[e.id] = p
        bm = ALL if p is True else z3.If(p, ALL, bm)
    return _set_bytes(x, e, bm, v)


def _set_bytes(x: Execution, e: Event, bm, v):
    bm = z3.simplify(bm)
    x.wmask[e.id] = bm
    u = z3.simplify(bm != ZERO)
    u = True if z3.is_true(u) else (False if z3.is_false(u) else u)
    return u, z3.simplify(v & ~bm)


def _bytes_of(x: Execution, e: Event, op, tag: str):
    """(undef, value) of a write of operand `op` (a store, an xchg, a cmpxchg's new value):
    a whole value as it is (no byte mask), else its bytes (operand_bytes)."""
    from . import control
    thread = x.elab.thread_names[e.thread]
    if control.kind(x, thread, op) == "whole":
        if not isinstance(op, int) and (thread, op.name) not in x.bar_regs:
            p = control.tri(x, thread, op)[0]
            if p is not False:          # docs 15.4 R-mem-poison
                x.wpoison[e.id] = p
        return x.operand(e, op)
    return _set_pbytes(x, e, *operand_pbytes(x, e, op, tag))


def store_value(x: Execution, e: Event):
    """(undef, value) of a store, and its mask of undef bytes in x.wmask (docs 15.4
    R-mem-bytes): the bytes of its operand (operand_bytes)."""
    return _bytes_of(x, e, e.instr.value, e.label)


def _old_bytes(x: Execution, e: Event):
    """(byte mask, value) of the value an RMW / cmpxchg read: the bytes it read (UP 4 "R
    returns the value composed of the series of bytes it read"), docs 15.4 R-mem-bytes."""
    if e.id in x.rmask:
        return x.rmask[e.id], x.rval[e.id]
    u = x.rundef[e.id]
    return (ALL if u is True else (ZERO if u is False else z3.If(u, ALL, ZERO))), x.rval[e.id]


def rmw_value(x: Execution, e: Event):
    """(undef, value) an `atomicrmw OP` writes, its undef bytes in x.wmask (docs 15.4
    R-mem-bytes, RMW): LangRef atomicrmw "the original value at the location is loaded,
    modified and stored": `OP(old, v)` with old the bytes it read (UP 4), stored byte by byte
    as a store is: byte k undef iff it can take two values over the choices of the undef
    bytes of old and of the undef v depends on. xchg writes its operand's bytes."""
    from . import control
    thread = x.elab.thread_names[e.thread]
    op, o = e.instr.op, e.instr.value
    if op == "xchg":
        return _bytes_of(x, e, o, e.label)
    # LangRef "An instruction that *depends* on a poison value, produces a poison value
    # itself": a poison old value or operand writes poison (docs 15.4 R-mem-poison)
    op_p = control.tri(x, thread, o)[0] if control.kind(x, thread, o) != "any" else False
    old_p = x.rpoison.get(e.id, False)
    if e.id not in x.rmask and control.kind(x, thread, o) == "whole":
        vu, vv = x.operand(e, o)
        p = OR(old_p, op_p)
        if op in ("add", "sub", "xor"):     # an undef operand: every value (every byte)
            if p is not False:
                x.wpoison[e.id] = p
            return OR(x.rundef[e.id], vu), _rmw_result(op, x.rval[e.id], vv)
        return _set_pbytes(x, e, p, *_whole_rmw_mask(op, x.rundef[e.id], vu, x.rval[e.id],
                                                     vv))
    om, ov = _old_bytes(x, e)
    if op in ("and", "or", "xor") and control.kind(x, thread, o) != "any":
        # the result of a cube operation on two cubes is the cube its per-bit mask gives
        # (docs 15.4 R-cf-undef-sets: the mask rules are exact for cubes)
        vp, vm, vv = control.tri(x, thread, o)
        _, m, v = control._binop(op, (False, om, ov), (vp, vm, vv))
        return _set_pbytes(x, e, OR(old_p, vp), byte_mask(m), v)
    # otherwise a term over fresh choices: one for the old value's undef bytes, the
    # operand's own (control._use), and the bytes that vary, exactly (control.may_vary)
    u = control._fresh_bv(x, f"{e.label}_old")
    x.__dict__.setdefault("_chmask", {})[u.get_id()] = om
    vp, vt, us = control._use(x, thread, o)
    t = z3.simplify(_rmw_result(op, ov | (u & om), vt))
    bm, v, p = _term_bytes(x, e.label, vp, t, tuple(us) + (u,))
    return _set_pbytes(x, e, OR(old_p, p), bm, v)


def wmask(x: Execution, w: Event):
    m = x.wmask.get(w.id)
    if m is None:
        u = x.wundef[w.id]
        m = ALL if u is True else (ZERO if u is False else z3.If(u, ALL, ZERO))
    return m


def write_values(x: Execution) -> None:
    """What each write writes, and whether it writes at all (a cmpxchg writes only when the
    value it reads equals the expected value, docs 15.4 R-mem-bytes and R-cas-undef)."""
    from . import control
    x.wmask = {}
    x.wpoison = {}
    _partial_reads(x)
    _poison_reads(x)
    x.rmask = {e.id: x.ctx.fresh_bv(f"undefbytes_{e.label}") for e in x.ev
               if e.reads and e.id in x.rpartial}
    x.rpoison = {e.id: x.ctx.fresh_bool(f"poison_{e.label}") for e in x.ev
                 if e.reads and e.id in x.rpois}
    for e in x.ev:
        if not e.writes:
            continue
        if e.is_init:
            x.wr[e.id] = True
            x.wundef[e.id] = False
            x.wval[e.id] = z3.BitVecVal(x.elab.test.memory[e.loc].init, 32)
        elif e.kind in ("store", "av_store"):
            x.wr[e.id] = True
            x.wundef[e.id], x.wval[e.id] = store_value(x, e)
        elif e.kind == "rmw":
            x.wr[e.id] = True
            x.wundef[e.id], x.wval[e.id] = rmw_value(x, e)
        elif e.kind == "cmpxchg":
            # docs 15.4 R-mem-bytes (cmpxchg): the bytes read against the expected value's
            # bytes; a byte defined in both that differs decides failure, all bytes defined
            # and equal decide success, otherwise (an undef byte) the comparison is open,
            # R-cas-undef
            if e.id not in x.rmask and control.kind(
                    x, x.elab.thread_names[e.thread], e.instr.expected) == "whole":
                eu, evv = x.operand(e, e.instr.expected)
                both = AND(NOT(x.rundef[e.id]), NOT(eu))
                open_ = NOT(both)
                ov = x.rval[e.id]
            else:
                om, ov = _old_bytes(x, e)
                em, evv = operand_bytes(x, e, e.instr.expected, f"{e.label}_exp")
                m = om | em
                both = z3.simplify(m == ZERO)
                open_ = AND(NOT(both), (ov ^ evv) & ~m == ZERO)
            ok = AND(both, ov == evv)
            if x.elab.model.options.cas_undef == "either":   # docs R-cas-undef
                ok = OR(ok, AND(open_, x.ctx.fresh_bool(f"cas_undef_ok_{e.label}")))
            x.wr[e.id] = x.ctx.define(f"cas_ok_{e.label}", ok)
            x.wundef[e.id], x.wval[e.id] = _bytes_of(x, e, e.instr.value, f"{e.label}_new")
    with x.ctx.family(F.STRUCTURE):
        for e in x.ev:
            if e.reads and e.id in x.rmask:
                # docs 15.4 R-mem-bytes: the read's undef bytes; undef iff some byte is
                m = x.rmask[e.id]
                x.ctx.add(IFF(x.rundef[e.id], m != ZERO))
                x.ctx.add((x.rval[e.id] & m) == ZERO)
            elif e.reads:   # an undef register holds no particular bits: pin them
                x.ctx.add(IMPLIES(x.rundef[e.id], x.rval[e.id] == ZERO))


def may_see(x: Execution, r: Event, w: Event) -> B:
    """S000: "R may see any write to the same byte, except: If a write W1 is location-ordered
    before a write W2, and W2 is location-ordered before a read R, then R may not see W1. If a
    read R happens-before a write W3, then R may not see W3." (UP 2.1(7): "is location-ordered
    before" in the second exception; the same relation for reads, see avvis.read_lo.)"""
    if w.id == r.id:
        return False
    if may.ENABLED and not x.ctx.explaining and not x.may.may_rf(w, r):
        return False          # docs §14: outside may_rf, may-see is false in every execution
    later = x.lo(r, w) if x.elab.model.options.read_lo else x.hb(r, w, x.space(r))
    if x.hbx_by_space:     # docs 10.7 R-bar-hb-exec: nor a write that executes after it
        later = OR(later, x.hbx(r, w, x.space(r)))
    before = _lo_before(x, r)
    lo = x.lo_rel
    shadow = OR([AND(lo.get((w.id, w2), False), lb) for w2, lb in before if w2 != w.id])
    return AND(x.writes(w), NOT(later), NOT(shadow))


def _lo_before(x: Execution, r: Event) -> list:
    """(W2, "W2 writes and is location-ordered before r") for the writes W2 to r's location
    for which that may hold, built once per read (may_see asks it for every write)."""
    c = x._lo_before.get(r.id)
    if c is None:
        c = []
        for w2 in x.elab.writes_to(r.loc):
            if w2.id != r.id:
                lb = AND(x.writes(w2), x.lo(w2, r))
                if lb is not False:
                    c.append((w2.id, lb))
        x._lo_before[r.id] = c
    return c


def read_values(x: Execution) -> None:
    """S000 value rule: (a) no write location-ordered before R: undef; (b) R and every write it
    may see atomic with pairwise inclusive scopes: the value of one of them; (c) R may see a
    write not location-ordered before it: undef; (d) exactly one write: its value;
    (e) otherwise undef. A read reads-from a write only in (b) and (d) (docs R-rf)."""
    el = x.elab
    x.maysee = {}
    for r in x.ev:
        if not r.reads:
            continue
        ws = [w for w in el.writes_to(r.loc) if w.id != r.id]
        sp = x.space(r)
        raw = {w.id: may_see(x, r, w) for w in ws}
        some_lo = OR(x.lo(w, r) for w in ws)                                          # (a)
        if some_lo is True and not x.ctx.explaining and may.ENABLED \
                and _atomic_case_always(x, r, [w for w in ws if raw[w.id] is not False]):
            # docs §14 "A read in the atomic case in every execution": (a) and (b) hold
            # statically, so R is definite and reads from one write it may see; may-see is
            # read only there, as the term itself (no definition)
            x.maysee.update({(w, r.id): v for w, v in raw.items()})
            rfs = [x.rf(w, r) for w in ws]
            for w in ws:
                x.ctx.add(IMPLIES(x.rf(w, r), raw[w.id]))
            x.ctx.add(OR(rfs))
            _reads_from(x, r, ws, rfs)
            continue
        ms = {w.id: x.ctx.define(f"maysee_{w.label}_{r.label}", raw[w.id]) for w in ws}
        x.maysee.update({(w, r.id): v for w, v in ms.items()})
        atomic_case: B = False                                                        # (b)
        if r.atomic:
            bad_single = [ms[w.id] for w in ws if not (w.atomic and el.inclusive(w, r, sp))]
            bad_pairs = [AND(ms[a.id], ms[b.id]) for i, a in enumerate(ws) for b in ws[i + 1:]
                         if not el.inclusive(a, b, sp)]
            atomic_case = AND(NOT(OR(bad_single)), NOT(OR(bad_pairs)))
        unordered_seen = OR(AND(ms[w.id], NOT(x.lo(w, r))) for w in ws)              # (c)
        exactly_one = AND(OR(ms.values()), AT_MOST_ONE(ms.values()))                   # (d)
        definite = x.ctx.define(f"definite_{r.label}", AND(some_lo, OR(
            atomic_case, AND(NOT(unordered_seen), exactly_one))))
        rfs = [x.rf(w, r) for w in ws]
        for w in ws:
            x.ctx.add(IMPLIES(x.rf(w, r), AND(definite, ms[w.id])))
        x.ctx.add(IMPLIES(definite, OR(rfs)))
        x.ctx.add(IMPLIES(NOT(definite), x.rundef[r.id]))
        if r.id in x.rmask:          # undef by the value rule: every byte
            x.ctx.add(IMPLIES(NOT(definite), x.rmask[r.id] == ALL))
        _reads_from(x, r, ws, rfs)


def _atomic_case_always(x: Execution, r: Event, seen: list) -> bool:
    """Value rule (b) holds statically for r: r is atomic and the writes it may see in some
    execution (`seen`) are atomic, each inclusive with r and with each other."""
    el, sp = x.elab, x.space(r)
    if not r.atomic or not all(w.atomic and el.inclusive(w, r, sp) for w in seen):
        return False
    return all(el.inclusive(a, b, sp) for i, a in enumerate(seen) for b in seen[i + 1:])


def _reads_from(x: Execution, r: Event, ws: list, rfs: list) -> None:
    with x.ctx.family(F.STRUCTURE):
        # What reads-from means: R returns the value of the one write it reads from, and
        # a read with a defined value reads from some write (implied by the value rule
        # above; stated here so that `explain` can drop the value rule and keep it).
        for w in ws:
            if r.id in x.rmask:      # docs 15.4 R-mem-bytes: the bytes it reads
                m = wmask(x, w)
                x.ctx.add(IMPLIES(x.rf(w, r), AND(x.rmask[r.id] == m, (x.rval[r.id] & ~m)
                                                  == (x.wval[w.id] & ~m))))
                continue
            x.ctx.add(IMPLIES(x.rf(w, r), AND(IFF(x.rundef[r.id], x.wundef[w.id]), OR(
                x.wundef[w.id], x.rval[r.id] == x.wval[w.id]))))
        if r.id in x.rpoison:
            # docs 15.4 R-mem-poison (LangRef "store i32 %poison, ptr @g ; Poison value stored
            # to memory. %poison3 = load i32, ptr @g ; Poison value loaded back from memory"):
            # a read returns poison iff it reads from a write of poison (the value rule's
            # undef is not poison)
            p = x.rpoison[r.id]
            for w in ws:
                wp = x.wpoison.get(w.id, False)
                x.ctx.add(IMPLIES(x.rf(w, r), IFF(p, wp)))
            x.ctx.add(IMPLIES(p, OR(rfs)))
        for c in AT_MOST_ONE(rfs):
            x.ctx.add(c)
        x.ctx.add(IMPLIES(NOT(x.rundef[r.id]), OR(rfs)))


def final_values(x: Execution) -> None:
    """docs R-final: a location ends holding the value of the last write in its coherence
    order, or undef when nothing wrote it and it has no initial value."""
    for loc in x.elab.locs:
        ws = x.elab.writes_to(loc)
        fu = x.ctx.fresh_bool(f"final_undef_{loc}")
        fv = x.ctx.fresh_bv(f"final_{loc}")
        for w in ws:
            last = AND(x.writes(w), NOT(OR(AND(x.writes(o), x.co(w, o))
                                            for o in ws if o.id != w.id)))
            x.ctx.add(IMPLIES(last, AND(IFF(fu, x.wundef[w.id]), OR(fu, fv == x.wval[w.id]))))
        x.ctx.add(IMPLIES(NOT(OR(x.writes(w) for w in ws)), fu))
        x.ctx.add(IMPLIES(fu, fv == ZERO))
        x.final[loc] = (fu, fv)
