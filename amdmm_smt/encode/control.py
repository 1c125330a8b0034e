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
    if key in x.bar_regs or key in x.elab.regs:
        t = _tri_of_pair(*x.regval(thread, op.name))
    else:
        t = _norm(x, f"{thread}_{op.name}", _compute_tri(x, thread, x.elab.comp[key]))
    cache[key] = t
    return t


def _compute_tri(x, thread: str, ins):
    vals = [tri(x, thread, o) for o in ins.ops]
    if ins.kind == "copy":                       # a phi resolved on the path
        return vals[0]
    if ins.kind == "select":
        # LangRef select: an undef condition "can go either way, but [the value has] to come
        # from one of the two operands": a choice of this execution (docs 15.4)
        (cp, cm, cv), a, b = vals
        pick = z3.If(cm == ZERO, cv == ONE, x.ctx.fresh_bool(f"sel_{thread}_{ins.reg}"))
        return (OR(cp, _bool_if(pick, a[0], b[0])), z3.If(pick, a[1], b[1]),
                z3.If(pick, a[2], b[2]))
    a, b = vals
    p = OR(a[0], b[0])                  # LangRef: poison operands give poison
    if ins.kind == "icmp":
        defined, result = _icmp(ins.op, a, b)
        return _i1(p, defined, result)
    bp, m, v = _binop(ins.op, a, b)
    return OR(p, bp), m, v


def compute(x, thread: str, ins):
    """(undef, value) of a computed register, as the rest of the encoding sees a register:
    undef when it is poison or has an undef bit (memory holds whole values: docs 15.4),
    pinned to 0 then."""
    from ..ir import Reg
    p, m, v = tri(x, thread, Reg(ins.reg))
    u = OR(p, m != ZERO) if not (isinstance(p, bool) and z3.is_bv_value(m)) else \
        (p or m.as_long() != 0)
    if isinstance(u, bool):
        return u, (ZERO if u else v)
    u = z3.simplify(u)
    return u, z3.If(u, ZERO, v)


def control(x) -> None:
    """The path's branch conditions hold (a defined condition has the value that leads along
    the path); a branch on an undef or poison condition is undefined behaviour (docs 15.5)."""
    for ti, ins in x.elab.assumes:
        thread = x.elab.thread_names[ti]
        cp, cm, cv = tri(x, thread, ins.ops[0])
        cu = OR(cp, cm != ZERO)
        if not isinstance(cu, bool):
            cu = z3.simplify(cu)
            cu = z3.is_true(cu) or (False if z3.is_false(cu) else x.ctx.define(
                f"bu_{thread}_{ins.line}", cu))
        want = ONE if ins.op == "1" else ZERO
        x.ctx.add(IMPLIES(NOT(cu), cv == want))
        if cu is not False:     # (a z3 term: the solver evaluates it in a model)
            x.cf_ub.append((z3.BoolVal(True) if cu is True else cu, thread, ins.line))
    if x.cf_ub:
        x.ub = OR(x.ub, *[u for u, _, _ in x.cf_ub])
