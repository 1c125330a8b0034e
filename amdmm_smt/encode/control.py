"""Control flow on one path (docs/semantics.md section 15.4-15.5): the values registers
compute (LangRef icmp, binary operations, select, phi), the branch conditions the path
assumes, and undefined behaviour from branching on undef (LangRef `br`: "Branching on poison
/ undef is immediate undefined behaviour" — docs 15.5)."""

from __future__ import annotations

import z3

from .logic import IMPLIES, NOT, OR

ZERO = z3.BitVecVal(0, 32)
ONE = z3.BitVecVal(1, 32)
W = z3.BitVecVal(32, 32)


def _icmp(op, a, b):
    return {"eq": lambda: a == b, "ne": lambda: a != b, "slt": lambda: a < b,
            "sgt": lambda: a > b, "sle": lambda: a <= b, "sge": lambda: a >= b,
            "ult": lambda: z3.ULT(a, b), "ugt": lambda: z3.UGT(a, b),
            "ule": lambda: z3.ULE(a, b), "uge": lambda: z3.UGE(a, b)}[op]()


def _binop(op, a, b):
    return {"add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b,
            "and": lambda: a & b, "or": lambda: a | b, "xor": lambda: a ^ b,
            "shl": lambda: a << b, "lshr": lambda: z3.LShR(a, b), "ashr": lambda: a >> b}[op]()


def compute(x, thread: str, ins):
    """(undef, value) of a computed register. docs 15.4: a result is undef when an operand
    is (LangRef: undef propagates through these operations; we do not track partial
    undefinedness), and a shift by 32 or more is undef (LangRef shl/lshr/ashr: "If op2 is
    (statically or dynamically) equal to or larger than the number of bits in op1, this
    instruction returns a poison value"). i1 values are 0 / 1. Undef values are pinned to 0."""
    vals = [x.value_of(thread, o) for o in ins.ops]
    if ins.kind == "copy":                       # a phi resolved on the path
        return vals[0]
    if ins.kind == "select":
        (cu, cv), (au, av), (bu, bv) = vals
        u = OR(cu, z3.If(cv == ONE, au, bu) if not (isinstance(au, bool) and au == bu)
               else au)
        v = z3.If(cv == ONE, av, bv)
    else:
        (au, av), (bu, bv) = vals
        u = OR(au, bu)
        if ins.kind == "icmp":
            v = z3.If(_icmp(ins.op, av, bv), ONE, ZERO)
        else:
            v = _binop(ins.op, av, bv)
            if ins.op in ("shl", "lshr", "ashr"):
                u = OR(u, z3.UGE(bv, W))
    u = x.ctx.define(f"cu_{thread}_{ins.reg}", u) if not isinstance(u, bool) else u
    return u, z3.simplify(z3.If(u, ZERO, v)) if not isinstance(u, bool) else (ZERO if u else v)


def control(x) -> None:
    """The path's branch conditions hold (a defined condition has the value that leads along
    the path); a branch on an undef condition is undefined behaviour (docs 15.5)."""
    for ti, ins in x.elab.assumes:
        thread = x.elab.thread_names[ti]
        cu, cv = x.value_of(thread, ins.ops[0])
        want = ONE if ins.op == "1" else ZERO
        x.ctx.add(IMPLIES(NOT(cu), cv == want))
        if cu is not False:
            x.cf_ub.append((cu, thread, ins.line))
    if x.cf_ub:
        x.ub = OR(x.ub, *[u for u, _, _ in x.cf_ub])
