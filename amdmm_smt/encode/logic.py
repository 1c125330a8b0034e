"""Boolean helpers that fold Python constants, so statically known facts never reach Z3, and
the encoding context shared by the axiom modules."""

from __future__ import annotations

from typing import Union

import z3

from ..limits import tick

B = Union[bool, z3.BoolRef]


def _mk(kind, out: list) -> z3.BoolRef:
    """z3.And / z3.Or of Boolean terms, built by one call into Z3's C API: the Python wrappers
    coerce and sort-check every argument, which dominated the encoding time."""
    ctx = out[0].ctx
    arr = (z3.Ast * len(out))()
    for i, a in enumerate(out):
        arr[i] = a.as_ast()
    return z3.BoolRef(kind(ctx.ref(), len(out), arr), ctx)


_MK_AND = z3.z3core.Z3_mk_and
_MK_OR = z3.z3core.Z3_mk_or
_BoolRef = z3.BoolRef


def _collect(xs, out: list, absorbing: bool) -> bool:
    """Flatten xs into out, dropping the neutral constant; True when the absorbing constant
    (`absorbing`) occurs."""
    for x in xs:
        if x is absorbing:
            return True
        if x is (not absorbing):
            continue
        if isinstance(x, _BoolRef):
            out.append(x)
        elif isinstance(x, bool):
            if x == absorbing:
                return True
        elif isinstance(x, (list, tuple)) or hasattr(x, "__next__") or type(x).__name__ in (
                "dict_values", "dict_keys"):
            if _collect(x, out, absorbing):
                return True
        else:
            out.append(x)
    return False


def AND(*xs: B) -> B:
    out: list = []
    if _collect(xs, out, False):
        return False
    if not out:
        return True
    if len(out) == 1:
        return out[0]
    if all(type(a) is _BoolRef for a in out):
        return _mk(_MK_AND, out)
    return z3.And(out)


def OR(*xs: B) -> B:
    out: list = []
    if _collect(xs, out, True):
        return True
    if not out:
        return False
    if len(out) == 1:
        return out[0]
    if all(type(a) is _BoolRef for a in out):
        return _mk(_MK_OR, out)
    return z3.Or(out)


def NOT(x: B) -> B:
    if isinstance(x, bool):
        return not x
    return _BoolRef(z3.z3core.Z3_mk_not(x.ctx.ref(), x.as_ast()), x.ctx)


def IMPLIES(a: B, b: B) -> B:
    return OR(NOT(a), b)


class Ctx:
    """Holds the solver constraints and fresh-variable naming for one encoding."""

    def __init__(self):
        self.constraints: list = []
        self._n = 0

    def add(self, c: B, why: str = "") -> None:
        tick()   # the encoding honours --timeout (amdmm_smt/limits.py)
        if c is True:
            return
        if c is False:
            # An unconditional contradiction: keep it, the solver reports UNSAT.
            self.constraints.append(z3.BoolVal(False))
            return
        self.constraints.append(c)

    def define(self, name: str, expr: B) -> B:
        """A fresh Boolean equal to `expr` (constants are returned unchanged). Used for the
        recursive definitions: with happens-before acyclic they have a unique solution."""
        if isinstance(expr, bool):
            return expr
        tick()
        v = z3.Bool(f"{name}#{self._n}")
        self._n += 1
        self.constraints.append(v == expr)
        return v

    def fresh_bool(self, name: str) -> z3.BoolRef:
        tick()
        v = z3.Bool(f"{name}#{self._n}")
        self._n += 1
        return v

    def fresh_int(self, name: str) -> z3.ArithRef:
        v = z3.Int(f"{name}#{self._n}")
        self._n += 1
        return v

    def fresh_bv(self, name: str) -> z3.BitVecRef:
        v = z3.BitVec(f"{name}#{self._n}", 32)
        self._n += 1
        return v


def IFF(a: B, b: B) -> B:
    if isinstance(a, bool) and isinstance(b, bool):
        return a == b
    if isinstance(a, bool):
        return b if a else NOT(b)
    if isinstance(b, bool):
        return a if b else NOT(a)
    return a == b
