"""Boolean helpers that fold Python constants, so statically known facts never reach Z3, and
the encoding context shared by the axiom modules."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Optional, Union

import z3

from .families import STRUCTURE
from ..limits import tick

B = Union[bool, z3.BoolRef]


def raw_c(api):
    """The ctypes function behind a z3core wrapper, without the wrapper's error check (one C
    call less per term). Used here for And / Or / Not / == of Boolean terms built here, and
    by encode/cat_z3.py to inspect terms; a call that makes no term is caught by `_wrap`. A
    wrapper around z3core's own (a test's call counter) is seen through by the standard
    `__wrapped__` protocol, so the import order does not matter."""
    while hasattr(api, "__wrapped__"):     # inspect.unwrap, without importing inspect
        api = api.__wrapped__
    return api.__defaults__[0].f


_AND_F = raw_c(z3.z3core.Z3_mk_and)
_OR_F = raw_c(z3.z3core.Z3_mk_or)
_NOT_F = raw_c(z3.z3core.Z3_mk_not)
_INC_F = raw_c(z3.z3core.Z3_inc_ref)
_EQ_F = raw_c(z3.z3core.Z3_mk_eq)
_SYM_F = raw_c(z3.z3core.Z3_mk_string_symbol)
_CONST_F = raw_c(z3.z3core.Z3_mk_const)
_BOOL_SORT_F = raw_c(z3.z3core.Z3_mk_bool_sort)
_new = object.__new__
_Arr = [z3.Ast * n for n in range(9)]


def _fail(ctx) -> None:
    core = z3.z3core
    code = core.Z3_get_error_code(ctx.ref())
    raise z3.Z3Exception(core.Z3_get_error_msg(ctx.ref(), code).encode()
                         if code else b"out of memory (a Z3 call made no term)")


def _wrap(ctx, ast) -> z3.BoolRef:
    """z3.BoolRef(ast, ctx) without the Python wrapper's call chain (the reference it takes
    is released by AstRef.__del__ as usual)."""
    if not ast:         # a raw call that failed (Z3 past its memory_max_size): what the
        _fail(ctx)      # z3py wrapper would have raised, not a NULL term
    r = _new(_BoolRef)
    r.ctx = ctx
    r.ast = ast
    _INC_F(ctx.ref(), ast)
    return r


def _mk(f, out: list) -> z3.BoolRef:
    """z3.And / z3.Or of Boolean terms, built by one call into Z3's C API: the Python wrappers
    coerce and sort-check every argument, which dominated the encoding time."""
    ctx = out[0].ctx
    n = len(out)
    arr = (_Arr[n] if n < 9 else z3.Ast * n)(*[a.ast for a in out])
    return _wrap(ctx, f(ctx.ref(), n, arr))


_MK_AND = _AND_F
_MK_OR = _OR_F
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


_Arr2 = _Arr[2]


def AND(*xs: B) -> B:
    if len(xs) == 2:
        a, b = xs
        ta, tb = type(a), type(b)
        if ta is _BoolRef and tb is _BoolRef:   # the common case, directly
            ctx = a.ctx
            return _wrap(ctx, _AND_F(ctx.ref(), 2, _Arr2(a.ast, b.ast)))
        if ta is bool and (tb is _BoolRef or tb is bool):     # a constant and a term
            return b if a else False
        if tb is bool and ta is _BoolRef:
            return a if b else False
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
    if len(xs) == 2:
        a, b = xs
        ta, tb = type(a), type(b)
        if ta is _BoolRef and tb is _BoolRef:
            ctx = a.ctx
            return _wrap(ctx, _OR_F(ctx.ref(), 2, _Arr2(a.ast, b.ast)))
        if ta is bool and (tb is _BoolRef or tb is bool):
            return True if a else b
        if tb is bool and ta is _BoolRef:
            return True if b else a
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
    return _wrap(x.ctx, _NOT_F(x.ctx.ref(), x.ast))


def AT_MOST_ONE(xs) -> list:
    """Terms whose conjunction says at most one of xs holds, linear in len(xs): "x_i and one
    of x_1..x_{i-1}" is false, the prefix disjunctions nested (shared, no new variable),
    instead of one term per pair (issue 20: the pairwise form was quadratic per read)."""
    out, prefix = [], False
    for v in xs:
        if v is False:
            continue
        out.append(NOT(AND(prefix, v)))
        prefix = OR(prefix, v)
    return out


def IMPLIES(a: B, b: B) -> B:
    return OR(NOT(a), b)


class Ctx:
    """Holds the solver constraints and fresh-variable naming for one encoding.

    Every constraint is tagged with the named rule family it belongs to (`families`, parallel
    to `constraints`): an encoding module sets it with `with ctx.family(NAME):` around what it
    adds. `verify` ignores the tags (plain `s.add`); `explain` tracks one Boolean per family
    to name the rules behind an unsat core (amdmm_smt/explain/witness.py, amdmm_smt/encode/families.py).
    STRUCTURE (the default) is what a candidate execution is, never reported."""

    def __init__(self, explaining: bool = False):
        self.constraints: list = []
        self.families: list[str] = []
        self.current: str = STRUCTURE
        # explain only: an operation a rule statically excludes (a non-inclusive or other-
        # address-space sw, an MMRA-dropped po edge, an amdgcn-av:none MakeAvailable) gets a
        # variable fixed false under that rule's family, so that a core can name the rule.
        # Same outcomes; verify never pays for the extra variables.
        self.explaining = explaining
        self._n = 0

    def excluded(self, name: str, family: str) -> z3.BoolRef:
        """A fresh Boolean fixed false by `family` (only when explaining)."""
        v = self.fresh_bool(name)
        with self.family(family):
            self.add(z3.Not(v))
        return v

    def included(self, name: str, family: str) -> z3.BoolRef:
        """A fresh Boolean fixed true by `family`: a static fact a rule adds (explaining)."""
        v = self.fresh_bool(name)
        with self.family(family):
            self.add(v)
        return v

    @contextmanager
    def family(self, name: Optional[str]):
        """Tag the constraints added inside with family `name` (STRUCTURE when None)."""
        prev = self.current
        self.current = name or STRUCTURE
        try:
            yield
        finally:
            self.current = prev

    def add(self, c: B, why: str = "") -> None:
        tick()   # the encoding honours --timeout (amdmm_smt/limits.py)
        if c is True:
            return
        if c is False:
            # An unconditional contradiction: keep it, the solver reports UNSAT.
            c = z3.BoolVal(False)
        self.constraints.append(c)
        self.families.append(self.current)

    def define(self, name: str, expr: B) -> B:
        """A fresh Boolean equal to `expr` (constants are returned unchanged). Used for the
        recursive definitions: with happens-before acyclic they have a unique solution."""
        if isinstance(expr, bool):
            return expr
        tick()
        v = _bool(f"{name}#{self._n}")
        self._n += 1
        self.constraints.append(_eq(v, expr) if type(expr) is _BoolRef and expr.ctx is v.ctx
                                else v == expr)
        self.families.append(self.current)
        return v

    def fresh_bool(self, name: str) -> z3.BoolRef:
        tick()
        v = _bool(f"{name}#{self._n}")
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


def _eq(a: z3.BoolRef, b: z3.BoolRef) -> z3.BoolRef:
    """a == b of two Boolean terms of one context, by one C call (z3py's __eq__ coerces and
    sort-checks both sides: a tenth of building a dense test's encoding)."""
    ctx = a.ctx
    return _wrap(ctx, _EQ_F(ctx.ref(), a.ast, b.ast))


def _bool(name: str) -> z3.BoolRef:
    """z3.Bool(name) in the main context by two C calls (the same constant)."""
    ctx = z3.main_ctx()
    r = ctx.ref()
    return _wrap(ctx, _CONST_F(r, _SYM_F(r, name.encode()), _BOOL_SORT_F(r)))


def IFF(a: B, b: B) -> B:
    if type(a) is _BoolRef and type(b) is _BoolRef and a.ctx is b.ctx:
        return _eq(a, b)
    if isinstance(a, bool) and isinstance(b, bool):
        return a == b
    if isinstance(a, bool):
        return b if a else NOT(b)
    if isinstance(b, bool):
        return a if b else NOT(a)
    return a == b
