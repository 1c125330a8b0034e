"""Control flow on one path (docs/semantics.md section 15.4-15.5), written from the text of
that section: a computed register's value from its operands, the branch conditions the path
assumes (an execution whose defined condition disagrees with the path is not an execution of
this path), and a branch on an undef or poison condition as undefined behaviour.

A computed value is the set of values its computation gives over the choices of the undef it
depends on (reading R-cf-undef-sets, docs 15.4): in this engine every read has a concrete value
or is undef, so a register's value is a Python integer, or a bit-vector term over fresh choice
variables, made anew at every use of a register (each use of undef chooses for itself). Z3 is
used here only as a calculator on that value question: "can this term take two values", "can
it be poison", over the choices alone, the execution being concrete."""

from __future__ import annotations

from ..ir import POISON, Reg
from . import choices as Z
from .common import M32, UNKNOWN, Bytes, ReferenceUnsupported, _s32



def _cmp(op: str, a: int, b: int) -> bool:
    sa, sb = _s32(a), _s32(b)
    return {"eq": a == b, "ne": a != b, "slt": sa < sb, "sgt": sa > sb, "sle": sa <= sb,
            "sge": sa >= sb, "ult": a < b, "ugt": a > b, "ule": a <= b, "uge": a >= b}[op]


def _concrete(op: str, a: int, b: int) -> int:
    if op == "ashr":
        return (_s32(a) >> b) & M32 if b < 32 else 0
    if op in ("shl", "lshr") and b >= 32:
        return 0
    return {"add": a + b, "sub": a - b, "mul": a * b, "and": a & b, "or": a | b,
            "xor": a ^ b, "shl": a << b if b < 32 else 0, "lshr": a >> b}[op] & M32


class Control:
    """Mixin of the engine (engine.py): computed registers and branch assumptions."""

    def reg_sym(self, tname: str, name: str, read_value, fresh=None):
        """(poison, value) of one use of register `name` of thread `tname`: poison a bool or a
        z3 Boolean over the choices; value an int or a z3 bit-vector term over fresh choices
        (an undef read gives a fresh choice at each use); or UNKNOWN."""
        if fresh is None:
            fresh = [0]
        key = (tname, name)
        if key in self.reg_event:
            v = read_value(self.reg_event[key])
            if v is UNKNOWN:
                return UNKNOWN
            if v is None:
                fresh[0] += 1
                return False, Z.choice(fresh[0])
            if v == POISON:              # docs 15.4 R-mem-poison: poison loaded back
                fresh[0] += 1
                return True, Z.choice(fresh[0])
            if isinstance(v, Bytes):     # docs 15.4 R-mem-bytes: a choice under the undef bytes
                fresh[0] += 1
                return False, Z.mix(v.bits, v.mask, fresh[0])
            return False, v & M32
        ins = self.elab.comp[key]
        vals = []
        for o in ins.ops:
            v = (False, o & M32) if isinstance(o, int) else \
                self.reg_sym(tname, o.name, read_value, fresh)
            if v is UNKNOWN:
                return UNKNOWN
            vals.append(v)
        if ins.kind == "copy":
            return vals[0]
        if ins.kind == "select":
            # LangRef select: undef conditions "can go either way, but they have to come
            # from one of the two operands": the condition's choice picks the operand
            (cp, c), (ap, a), (bp, b) = vals
            if isinstance(c, int):
                return Z.or_(cp, ap if c & 1 else bp), (a if c & 1 else b)
            pick = Z.low_bit(c)
            return Z.or_(cp, Z.ite_b(pick, ap, bp)), Z.ite(pick, Z.bv(a), Z.bv(b))
        (ap, a), (bp, b) = vals
        p = Z.or_(ap, bp)                  # LangRef: a poison operand gives poison
        if ins.kind == "icmp":
            if isinstance(a, int) and isinstance(b, int):
                return p, int(_cmp(ins.op, a, b))
            return p, Z.bit(Z.pred(ins.op, Z.bv(a), Z.bv(b)))
        if ins.op in ("shl", "lshr", "ashr"):
            # LangRef: "If op2 is (statically or dynamically) equal to or larger than the
            # number of bits in op1, this instruction returns a poison value"
            p = Z.or_(p, (b >= 32) if isinstance(b, int) else Z.uge(b, 32))
        if isinstance(a, int) and isinstance(b, int):
            return p, _concrete(ins.op, a, b)
        return p, Z.binop(ins.op, Z.bv(a), Z.bv(b))

    def store_value(self, tname: str, name: str, read_value):
        """The value a store of register `name` writes (docs 15.4 R-mem-bytes): an int, None
        (every byte undef), Bytes (some bytes undef), POISON (some choice makes it poison,
        R-mem-poison); or UNKNOWN."""
        t = self.reg_sym(tname, name, read_value)
        if t is UNKNOWN:
            return UNKNOWN
        if t[0] is True or (t[0] is not False and Z.one_value(t[0], 0) is None):
            return POISON        # docs 15.4 R-mem-poison: memory keeps poison
        mask, bits = Z.byte_values(*t)
        if mask == 0:
            return bits
        return None if mask == M32 else Bytes((mask, bits))

    def shown_value(self, tname: str, name: str, read_value):
        """The value an outcome shows: POISON when some choice makes it poison (issue 28
        item 3), else as reg_value."""
        t = self.reg_sym(tname, name, read_value)
        if t is UNKNOWN:
            return UNKNOWN
        if t[0] is True or (t[0] is not False and Z.one_value(t[0], 0) is None):
            return POISON
        return Z.one_value(*t)

    def reg_value(self, tname: str, name: str, read_value):
        """The value of register `name` of thread `tname` as memory and outcomes see it:
        None (undef) when it may be poison or can take two values over the choices
        (docs 15.4)."""
        t = self.reg_sym(tname, name, read_value)
        if t is UNKNOWN:
            return UNKNOWN
        return Z.one_value(*t)

    def path_check(self, rval, final: bool = True):
        """'ok', 'off' (a defined branch condition leads elsewhere) or ('ub', thread, line)
        (the first branch on undef or poison on this path; section 15.5)."""
        ub = None
        for ti, ins in self.elab.assumes:
            tname = self.elab.thread_names[ti]
            o = ins.ops[0]
            c = self.reg_value(tname, o.name, rval.__getitem__) if isinstance(o, Reg) else o
            if c is UNKNOWN:
                if not final:       # a candidate not yet known to be consistent
                    continue
                # a value that depends on itself through reads-from, which the branch may
                # pin (`icmp eq %v, 1`): this engine does not solve for such values
                raise ReferenceUnsupported("a branch condition whose value depends on itself "
                                           "through reads-from (out of thin air, possibly "
                                           "pinned by the branch)")
            if c is None:
                ub = ub or ("ub", tname, ins.line)
            elif c != int(ins.op):
                return "off"
        return ub or "ok"
