"""Control flow on one path (docs/semantics.md section 15.4-15.5): the values registers
compute (LangRef icmp, binary operations, select, phi), the branch conditions the path
assumes, and undefined behaviour from branching on undef or poison (LangRef `br`: "If 'cond'
is poison or undef, this instruction has undefined behavior" — docs 15.5).

A computed value is a triple (poison, undef mask, value): a 1 bit of the mask is an undef
bit (any choice of that bit is possible), the value's bits under the mask are 0 (reading
R-cf-undef, docs 15.4: LangRef tracks undef per bit). The rules below are the ones of docs
15.4, written again independently in reference/control.py."""

from __future__ import annotations

import z3

from .logic import AND, IMPLIES, NOT, OR

ZERO = z3.BitVecVal(0, 32)
ONE = z3.BitVecVal(1, 32)
ALL = z3.BitVecVal(0xFFFFFFFF, 32)
SIGN = z3.BitVecVal(0x80000000, 32)
W = z3.BitVecVal(32, 32)


def _por(*ps):
    return OR(*ps)


def _tri_of_pair(u, v):
    """A register with a whole-value undef flag (a read, an isfirst): mask all or nothing."""
    if isinstance(u, bool):
        return False, (ALL if u else ZERO), (ZERO if u else v)
    return False, z3.If(u, ALL, ZERO), v


def _bool_if(c, a, b):
    if isinstance(c, bool):
        return a if c else b
    if isinstance(a, bool) and isinstance(b, bool):
        return c if a and not b else (NOT(c) if b and not a else a)
    return z3.If(c, a if not isinstance(a, bool) else z3.BoolVal(a),
                 b if not isinstance(b, bool) else z3.BoolVal(b))


def _i1(p, defined, result):
    """An i1 result: undef (mask 1) unless `defined`, then 1 / 0 as `result`."""
    return p, z3.If(defined, ZERO, ONE), z3.If(AND(defined, result), ONE, ZERO)


def _icmp(op, a, b):
    """docs 15.4 icmp: defined when every choice of the undef bits gives the same answer."""
    (_, ma, va), (_, mb, vb) = a, b
    if op in ("eq", "ne"):
        m = ma | mb
        differ = (va ^ vb) & ~m != ZERO       # a defined bit differs: never equal
        defined = z3.Or(differ, m == ZERO)
        eq = z3.And(m == ZERO, va == vb)
        return defined, (eq if op == "eq" else z3.Not(eq))
    if op[0] == "s":       # the smallest / largest signed values the undef bits allow
        lo_a, hi_a = va | (ma & SIGN), (va | ma) & ~(ma & SIGN)
        lo_b, hi_b = vb | (mb & SIGN), (vb | mb) & ~(mb & SIGN)
        lt, le = (lambda x, y: x < y), (lambda x, y: x <= y)
    else:
        lo_a, hi_a, lo_b, hi_b = va, va | ma, vb, vb | mb
        lt, le = z3.ULT, z3.ULE
    pred = op[1:]
    if pred in ("gt", "ge"):          # a > b is b < a
        lo_a, hi_a, lo_b, hi_b = lo_b, hi_b, lo_a, hi_a
        pred = "lt" if pred == "gt" else "le"
    if pred == "lt":
        always, never = lt(hi_a, lo_b), z3.Not(lt(lo_a, hi_b))
    else:
        always, never = le(hi_a, lo_b), z3.Not(le(lo_a, hi_b))
    return z3.Or(always, never), always


def _low_defined(m):
    """The bits below the lowest undef bit of mask m (all bits when m has none)."""
    return z3.If(m == ZERO, ALL, (m & -m) - ONE)


def _binop(op, a, b):
    """(poison, mask, value) of OP a, b without the operands' poison (docs 15.4)."""
    (_, ma, va), (_, mb, vb) = a, b
    if op == "and":
        zeros = (~va & ~ma) | (~vb & ~mb)             # a defined 0 bit of either operand
        return False, (ma | mb) & ~zeros, va & vb
    if op == "or":
        ones = va | vb                                # a defined 1 bit of either operand
        return False, (ma | mb) & ~ones, ones
    if op == "xor":
        m = ma | mb
        return False, m, (va ^ vb) & ~m
    if op == "add":                                   # carries propagate undef upward
        s = va + vb
        m = ((va + ma) + (vb + mb)) ^ s | ma | mb
        return False, m, s & ~m
    if op == "sub":
        d = va - vb
        m = ((d + ma) ^ (d - mb)) | ma | mb
        return False, m, d & ~m
    if op == "mul":
        ka, kb = va | ma, vb | mb                     # the bits that may be 1
        zeros = (ka & -ka) * (kb & -kb) - ONE         # below the sum of trailing zeros
        defined = (_low_defined(ma) & _low_defined(mb)) | zeros
        return False, ~defined, (va * vb) & defined
    # shifts: an amount of 32 or more is poison (LangRef shl / lshr / ashr)
    big = z3.UGE(vb | mb, W)
    zero_a = z3.And(ma == ZERO, va == ZERO)
    if op == "shl":
        m, v = ma << vb, va << vb
    elif op == "lshr":
        m, v = z3.LShR(ma, vb), z3.LShR(va, vb)
    else:
        m = ma >> vb
        v = (va >> vb) & ~m
    m = z3.If(mb == ZERO, m, z3.If(zero_a, ZERO, ALL))      # an undef amount: all undef bits
    v = z3.If(mb == ZERO, v, ZERO)
    return big, m, v


def _norm(x, key, t):
    """Simplify the parts of a computed value. No definitions are added: a value may be
    first asked for after the encoding is handed over (the projection of `explain`), and
    Z3 shares equal terms anyway."""
    p, m, v = t
    if not isinstance(p, bool):
        p = z3.simplify(p)
        p = True if z3.is_true(p) else (False if z3.is_false(p) else p)
    return p, z3.simplify(m), z3.simplify(v)


def tri(x, thread: str, op):
    """(poison, undef mask, value) of an operand: a constant, a read, or a computation."""
    if isinstance(op, int):
        return False, ZERO, z3.BitVecVal(op, 32)
    key = (thread, op.name)
    cache = x.__dict__.setdefault("_tri", {})
    if key in cache:
        return cache[key]
    # docs 15.4 R-mem-poison: a read of a poison write is poison
    rp = getattr(x, "rpoison", {}).get(x.elab.regs.get(key), False)
    if key in x.elab.regs and x.elab.regs[key] in getattr(x, "rmask", {}):
        i = x.elab.regs[key]         # docs 15.4 R-mem-bytes: a read of some undef bytes
        t = (rp, x.rmask[i], x.rval[i])
    elif key in x.bar_regs or key in x.elab.regs:
        t = (rp,) + _tri_of_pair(*x.regval(thread, op.name))[1:]
    else:
        t = _norm(x, f"{thread}_{op.name}", _compute_tri(x, thread, x.elab.comp[key]))
    cache[key] = t
    return t


def _compute_tri(x, thread: str, ins):
    vals = [tri(x, thread, o) for o in ins.ops]
    if ins.kind == "copy":                       # a phi resolved on the path
        return vals[0]
    a, b = vals
    p = OR(a[0], b[0])                  # LangRef: poison operands give poison
    if ins.kind == "icmp":
        defined, result = _icmp(ins.op, a, b)
        return _i1(p, defined, result)
    bp, m, v = _binop(ins.op, a, b)
    return OR(p, bp), m, v


# ---- exact sets of values (docs 15.4, reading R-cf-undef-sets) ---------------------------
#
# A register's value is the set of values its computation gives over the choices of the undef
# it depends on; each *use* of a register chooses an element of that set anew (LangRef: "two
# 'undef' operands are not necessarily the same"; "%C = xor %B, %B" with %B undef is undef),
# and the correlation a computation carries between its bits stays (a carry out of undef bits
# depends on those bits). Statically, a register is one of three kinds:
#   whole  its set is one value or every value (a read, a constant; add / sub of wholes);
#   cube   its set is every completion of its undef bits (the per-bit mask (poison, mask,
#          bits) above describes it exactly): and / or / xor / icmp of non-`any` operands,
#          mul of wholes, shl / lshr of one by a constant amount;
#   any    anything else: the value is a bit-vector term over fresh choice variables, one per
#          use of a cube operand (the cube's undef bits), and the questions "can it be poison",
#          "can it take two values" are existential over those choices, their negation a
#          universal (a quantifier over the choices only, never over the execution).

_CUBE_OPS = ("and", "or", "xor")


def kind(x, thread: str, op) -> str:
    if isinstance(op, int):
        return "whole"
    key = (thread, op.name)
    cache = x.__dict__.setdefault("_kind", {})
    if key in cache:
        return cache[key]
    if key in x.bar_regs or key in x.elab.regs:
        k = "whole" if not _partial_read(x, key) else "cube"
    else:
        ins = x.elab.comp[key]
        ks = [kind(x, thread, o) for o in ins.ops]
        if ins.kind == "copy":
            k = ks[0]
        elif ins.kind == "select" or "any" in ks:
            k = "any"
        elif ins.kind == "icmp" or ins.op in _CUBE_OPS:
            k = "cube"
        elif ins.op == "mul":
            # the mask rule of mul is exact for wholes (every value times c: the multiples
            # of c's lowest set bit), not for a cube ({0, 1} * 256 = {0, 256}, the rule
            # makes bits 8-31 undef)
            k = "cube" if ks == ["whole", "whole"] else "any"
        elif ins.op in ("add", "sub"):
            k = "whole" if ks == ["whole", "whole"] else "any"
        elif ins.op in ("shl", "lshr"):   # a cube shifted by a constant stays a cube
            k = "cube" if isinstance(ins.ops[1], int) else "any"
        else:       # ashr copies one sign bit: correlated bits ({0, -1}), not a cube
            k = "any"
    cache[key] = k
    return k


def _partial_read(x, key) -> bool:
    """Can the read defining register `key` return a value with some but not all bytes
    undef (memory holds bytes, docs 15.4 R-mem-bytes)? Then its set is a cube (the undef
    bytes), not a whole."""
    i = x.elab.regs.get(key)
    return i is not None and i in getattr(x, "rpartial", ())


def _fresh_bv(x, tag: str):
    n = x.__dict__.setdefault("_nchoice", [0])
    n[0] += 1
    return z3.BitVec(f"ch_{tag}#{n[0]}", 32)


def _fresh_bool_const(x, tag: str):
    n = x.__dict__.setdefault("_nchoice", [0])
    n[0] += 1
    return z3.Bool(f"chp_{tag}#{n[0]}")


def _sub(t, pairs):
    if not pairs or isinstance(t, bool):
        return t
    return z3.substitute(t, *pairs)


def _use(x, thread: str, op):
    """(poison, term, choices) of one use of operand `op`: a constant; a whole or cube value
    with a fresh choice for its undef bits; an `any` register's term with its choices
    renamed fresh (each use chooses anew)."""
    if isinstance(op, int):
        return False, z3.BitVecVal(op & 0xFFFFFFFF, 32), ()
    if kind(x, thread, op) != "any":
        p, m, v = tri(x, thread, op)
        m = z3.simplify(m)
        if z3.is_bv_value(m) and m.as_long() == 0:
            return p, v, ()
        u = _fresh_bv(x, f"{thread}_{op.name}")
        x.__dict__.setdefault("_chmask", {})[u.get_id()] = m
        return p, v | (u & m), (u,)
    p, t, us = template(x, thread, op.name)
    fresh = tuple(_fresh_bv(x, f"{thread}_{op.name}") for _ in us)
    cm = x.__dict__.setdefault("_chmask", {})
    for u, f in zip(us, fresh):
        cm[f.get_id()] = cm[u.get_id()]
    pairs = list(zip(us, fresh))
    return _sub(p, pairs), _sub(t, pairs), fresh


def template(x, thread: str, reg: str):
    """(poison, term, choices) of an `any` register, built once; its uses rename it."""
    key = (thread, reg)
    cache = x.__dict__.setdefault("_tmpl", {})
    if key in cache:
        return cache[key]
    ins = x.elab.comp[key]
    vals = [_use(x, thread, o) for o in ins.ops]
    us = tuple(u for v in vals for u in v[2])
    if ins.kind == "copy":
        res = vals[0]
    elif ins.kind == "select":
        # LangRef select: an undef condition "can go either way, but [the value has] to come
        # from one of the two operands": the condition's own choice picks the operand
        (cp, ct, _), (ap, at, _), (bp, bt, _) = vals
        pick = z3.Extract(0, 0, ct) == 1
        res = (OR(cp, _bool_if(pick, ap, bp)), z3.If(pick, at, bt), us)
    else:
        (ap, at, _), (bp, bt, _) = vals
        p = OR(ap, bp)                     # LangRef: poison operands give poison
        if ins.kind == "icmp":
            res = (p, z3.If(_pred(ins.op, at, bt), ONE, ZERO), us)
        else:
            big = False
            if ins.op in ("shl", "lshr", "ashr"):
                big = z3.UGE(bt, W)        # LangRef: an amount of 32 or more is poison
            res = (OR(p, big), _op(ins.op, at, bt), us)
    p, t, us = res
    if not isinstance(p, bool):
        p = z3.simplify(p)
        p = True if z3.is_true(p) else (False if z3.is_false(p) else p)
    res = (p, z3.simplify(t), us)
    cache[key] = res
    return res


def _pred(op, a, b):
    return {"eq": lambda: a == b, "ne": lambda: a != b, "slt": lambda: a < b,
            "sgt": lambda: a > b, "sle": lambda: a <= b, "sge": lambda: a >= b,
            "ult": lambda: z3.ULT(a, b), "ugt": lambda: z3.UGT(a, b),
            "ule": lambda: z3.ULE(a, b), "uge": lambda: z3.UGE(a, b)}[op]()


def _op(op, a, b):
    return {"add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b,
            "and": lambda: a & b, "or": lambda: a | b, "xor": lambda: a ^ b,
            "shl": lambda: a << b, "lshr": lambda: z3.LShR(a, b),
            "ashr": lambda: a >> b}[op]()


def may_vary(x, name: str, p, t, us, mask=None):
    """(poison?, varies?) of a term over choices `us`: poison for some choice; two choices
    giving values that differ (in the bits of `mask`, all when None). Each is existential over
    the choices: a fresh Boolean that implies a witness (two fresh choices), and whose
    negation implies the universal statement over the choices (the execution's variables
    stay free: a quantifier over the choices of undef only). The universal statements are
    kept in x.forall, (guard, choices, body), and given to the solver as the instances a
    model breaks (solve.refine): the SMT core does not decide such quantifiers itself."""
    if not us:
        return p, False
    if p is True or (not isinstance(p, bool) and z3.is_true(z3.simplify(p))):
        return True, False
    n = x.__dict__.setdefault("_nchoice", [0])
    n[0] += 1
    k = n[0]

    # the witnesses are this call's own: two calls over the same choices (the bytes of one
    # stored value, a register's value and its store) must not share a witness pair, nor the
    # poison witness the pair (one pair for every byte over-constrained: no execution)
    def copy(tag):
        return [(u, z3.BitVec(f"{tag}{k}_{u}", 32)) for u in us]
    c0, c1, c2 = copy("w0_"), copy("w1_"), copy("w2_")
    b1, b2 = copy("q1_"), copy("q2_")
    t_ = t if mask is None else t & mask
    pp: object = False
    if p is not False:
        pp = x.ctx.fresh_bool(f"maypoison_{name}")
        x.ctx.add(IMPLIES(pp, _sub(p, c0)))
        x.forall.append((NOT(pp), [v for _, v in b1], z3.Not(_sub(p, b1))))
    # where every choice's mask is 0 in the execution, the term has one value: the universal
    # statement is needed only where some mask is not (fewer quantifier checks)
    cm = x.__dict__.get("_chmask", {})
    some = OR(*[cm[u.get_id()] != ZERO for u in us])
    vr = x.ctx.fresh_bool(f"mayvary_{name}")
    x.ctx.add(IMPLIES(vr, AND(some, _sub(t_, c1) != _sub(t_, c2))))
    x.forall.append((z3.And(z3.Not(vr), some) if not isinstance(some, bool) else
                     (z3.Not(vr) if some else z3.BoolVal(False)),
                     [v for _, v in b1 + b2], _sub(t_, b1) == _sub(t_, b2)))
    n[0] += 1
    return pp, vr


def exact(x, thread: str, reg: str):
    """(poison?, undef?, value) of register `reg` as a whole: undef when its set has more than
    one value; value is the term (its one value when defined)."""
    key = (thread, reg)
    cache = x.__dict__.setdefault("_exact", {})
    if key not in cache:
        from ..ir import Reg
        ins = x.elab.comp.get(key)
        if kind(x, thread, Reg(reg)) != "any":
            p, m, v = tri(x, thread, Reg(reg))
            cache[key] = (p, _simp(m != ZERO), v)
        elif ins.kind == "select" and all(kind(x, thread, o) != "any" for o in ins.ops):
            # a select of cubes on a cube condition, without quantifier: a defined condition
            # picks one cube; an undef one gives the union of both (one value only when both
            # are the same defined value)
            (cp, cm, cv), (ap, am, av), (bp, bm, bv) = [
                (False, ZERO, z3.BitVecVal(o & 0xFFFFFFFF, 32)) if isinstance(o, int)
                else tri(x, thread, o) for o in ins.ops]
            cdef = cm == ZERO
            pick = (cv & ONE) == ONE
            p = OR(cp, _bool_if(cdef, _bool_if(pick, ap, bp), OR(ap, bp)))
            u = z3.If(cdef, z3.If(pick, am, bm) != ZERO,
                      z3.Or(am != ZERO, bm != ZERO, av != bv))
            cache[key] = (_simp(p), _simp(u), z3.If(z3.And(cdef, z3.Not(pick)), bv, av))
        else:
            p, t, us = template(x, thread, reg)
            pp, vr = may_vary(x, f"{thread}_{reg}", p, t, us)
            cache[key] = (pp, vr, t)
    return cache[key]


def _simp(b):
    if isinstance(b, bool):
        return b
    b = z3.simplify(b)
    return True if z3.is_true(b) else (False if z3.is_false(b) else b)


def compute(x, thread: str, ins):
    """(undef, value) of a computed register, as the rest of the encoding sees a register:
    undef when it is poison or can take more than one value, pinned to 0 then."""
    p, u, v = exact(x, thread, ins.reg)
    u = _simp(OR(p, u))
    if isinstance(u, bool):
        return u, (ZERO if u else v)
    return u, z3.If(u, ZERO, v)


def control(x) -> None:
    """The path's branch conditions hold (a defined condition has the value that leads along
    the path); a branch on an undef or poison condition is undefined behaviour (docs 15.5).
    A condition is undef when it can take both values over the choices of the undef it
    depends on (docs 15.4 R-cf-undef-sets)."""
    for ti, ins in x.elab.assumes:
        thread = x.elab.thread_names[ti]
        o = ins.ops[0]
        if isinstance(o, int):
            cp, cu, cv = False, False, z3.BitVecVal(o & 1, 32)
        else:
            cp, cu, cv = exact(x, thread, o.name)
        cu = _simp(OR(cp, cu))
        if not isinstance(cu, bool):
            cu = x.ctx.define(f"bu_{thread}_{ins.line}", cu)
        want = ONE if ins.op == "1" else ZERO
        x.ctx.add(IMPLIES(NOT(cu), (cv & ONE) == want))
        if cu is not False:     # (a z3 term: the solver evaluates it in a model)
            x.cf_ub.append((z3.BoolVal(True) if cu is True else cu, thread, ins.line))
    if x.cf_ub:
        x.ub = OR(x.ub, *[u for u, _, _ in x.cf_ub])
    # the registers an outcome may show are built now: their definitions must be in the
    # encoding before it is handed to the solver
    for (thread, reg) in x.elab.comp:
        if "#" not in reg:
            x.regval(thread, reg)
