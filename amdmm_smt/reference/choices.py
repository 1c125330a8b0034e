"""The reference engine's calculator for sets of values (docs/semantics.md 15.4,
R-cf-undef-sets): the one module of the reference engine that uses Z3, and only on the value
question — can a term over the choices of undef (the execution being concrete) be poison,
or take two values. It states no rule of the model and shares no code with the Z3 engine
(tests/test_layering.py allows Z3 here alone)."""

from __future__ import annotations

import z3


def choice(k: int):
    """A fresh choice of undef (one per use of an undef read)."""
    return z3.BitVec(f"u{k}", 32)


def low_bit(c):
    return z3.Extract(0, 0, c) == 1


def ite(c, a, b):
    return z3.If(c, a, b)


def bit(b):
    return z3.If(b, z3.BitVecVal(1, 32), z3.BitVecVal(0, 32))


def uge(b, k: int):
    return z3.UGE(b, k)


def binop(op: str, a, b):
    return {"add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b,
            "and": lambda: a & b, "or": lambda: a | b, "xor": lambda: a ^ b,
            "shl": lambda: a << b, "lshr": lambda: z3.LShR(a, b),
            "ashr": lambda: a >> b}[op]()


def rmw(op: str, a, b):
    """LangRef atomicrmw OP on two terms (xchg excluded: it writes its operand)."""
    if op in ("max", "min", "umax", "umin"):
        c = {"max": a >= b, "min": a <= b, "umax": z3.UGE(a, b), "umin": z3.ULE(a, b)}[op]
        return z3.If(c, a, b)
    return binop(op, a, b)


def or_(a, b):
    if a is True or b is True:
        return True
    if a is False:
        return b
    if b is False:
        return a
    return z3.Or(a, b)


def ite_b(c, a, b):
    if a is b or (isinstance(a, bool) and isinstance(b, bool) and a == b):
        return a
    return z3.If(c, z3.BoolVal(a) if isinstance(a, bool) else a,
                 z3.BoolVal(b) if isinstance(b, bool) else b)


def bv(v):
    return z3.BitVecVal(v, 32) if isinstance(v, int) else v


def pred(op, a, b):
    return {"eq": a == b, "ne": a != b, "slt": a < b, "sgt": a > b, "sle": a <= b,
            "sge": a >= b, "ult": z3.ULT(a, b), "ugt": z3.UGT(a, b), "ule": z3.ULE(a, b),
            "uge": z3.UGE(a, b)}[op]


_ONE_CACHE: dict = {}


def one_value(p, v):
    """The one value of (poison, term), or None when it may be poison or can take two values
    over the choices (the choices are the term's free variables: the execution is concrete
    here). Decided by Z3 on the value question alone, cached on the terms' text."""
    if p is True:
        return None
    if p is False and isinstance(v, int):
        return v
    key = (p if isinstance(p, bool) else p.sexpr(), v if isinstance(v, int) else v.sexpr())
    if key in _ONE_CACHE:
        return _ONE_CACHE[key]
    res = None
    s = z3.Solver()
    if p is not False:
        s.add(p)
        poison = s.check() == z3.sat
        s.reset()
    else:
        poison = False
    if not poison:
        if isinstance(v, int):
            res = v
        else:
            s.check()
            v0 = s.model().eval(v, model_completion=True).as_long()
            s.add(v != v0)
            res = v0 if s.check() == z3.unsat else None
    _ONE_CACHE[key] = res
    return res




def mix(bits: int, mask: int, k: int):
    """A use of a value with undef bytes: its defined bits, a fresh choice under the mask."""
    return z3.BitVecVal(bits, 32) | (choice(k) & z3.BitVecVal(mask, 32))


def byte_values(p, v):
    """(mask of the undef bytes, bits) of a stored (poison, term): byte k is undef iff it may be
    poison or take two values over the choices (docs 15.4 R-mem-bytes)."""
    if p is True or (p is not False and one_value(p, 0) is None):
        return 0xFFFFFFFF, 0
    if isinstance(v, int):
        return 0, v
    mask = bits = 0
    for k in range(4):
        b = one_value(False, z3.Extract(8 * k + 7, 8 * k, v))
        if b is None:
            mask |= 0xFF << (8 * k)
        else:
            bits |= b << (8 * k)
    return mask, bits
