"""Control flow on one path (docs/semantics.md section 15.4-15.5), written from the text of
that section: a computed register's value from its operands, the branch conditions the path
assumes (an execution whose defined condition disagrees with the path is not an execution of
this path), and a branch on an undef or poison condition as undefined behaviour.

A computed value is a triple (poison, undef mask, bits): bit i of the mask set means bit i is
undef (every choice of it is possible); the bits under the mask are 0 (reading R-cf-undef,
docs 15.4). Each rule is stated on the sets of values the undef bits allow."""

from __future__ import annotations

from ..ir import Reg
from .common import M32, UNKNOWN, ReferenceUnsupported, _Guess, _s32

SIGN = 0x80000000
POISON = (True, 0, 0)


def _cmp(op: str, a: int, b: int) -> bool:
    sa, sb = _s32(a), _s32(b)
    return {"eq": a == b, "ne": a != b, "slt": sa < sb, "sgt": sa > sb, "sle": sa <= sb,
            "sge": sa >= sb, "ult": a < b, "ugt": a > b, "ule": a <= b, "uge": a >= b}[op]


def _extremes(v: int, m: int, signed: bool):
    """The smallest and largest value (as i32 bits) whose defined bits are v."""
    if not signed:
        return v, v | m
    s = m & SIGN              # an undef sign bit: 1 for the smallest, 0 for the largest
    return v | s, (v | m) & ~s & M32


def _icmp(op: str, a, b):
    """docs 15.4: 1 / 0 when every choice of the undef bits of a and b gives that answer,
    else undef (an i1 with its bit undef)."""
    (_, ma, va), (_, mb, vb) = a, b
    if op in ("eq", "ne"):
        m = ma | mb
        if (va ^ vb) & ~m & M32:           # some defined bit differs: never equal
            eq = False
        elif m:
            return (False, 1, 0)
        else:
            eq = va == vb
        return (False, 0, int(eq == (op == "eq")))
    signed = op[0] == "s"
    lo_a, hi_a = _extremes(va, ma, signed)
    lo_b, hi_b = _extremes(vb, mb, signed)
    # the answer is the same for every choice iff it is the same at the two extreme pairs
    # (each predicate is monotone in each operand)
    r1, r2 = _cmp(op, hi_a, lo_b), _cmp(op, lo_a, hi_b)
    if r1 != r2:
        return (False, 1, 0)
    return (False, 0, int(r1))


def _low_defined(m: int) -> int:
    """Bits below the lowest undef bit of m (all of them when m is 0)."""
    return M32 if m == 0 else (m & -m) - 1


def _binop(op: str, a, b):
    (_, ma, va), (_, mb, vb) = a, b
    if op == "and":      # LangRef: a 0 bit of either operand makes that bit 0
        zeros = (~va & ~ma | ~vb & ~mb) & M32
        return (False, (ma | mb) & ~zeros & M32, va & vb)
    if op == "or":       # a 1 bit of either operand makes that bit 1
        ones = va | vb
        return (False, (ma | mb) & ~ones & M32, ones)
    if op == "xor":
        m = ma | mb
        return (False, m, (va ^ vb) & ~m & M32)
    if op in ("add", "sub"):
        # bit i of a sum is defined iff it is the same for every choice of the undef bits;
        # the carries are what spread undef upward. The smallest and largest completions
        # bound the carry chain (tristate addition, as stated in docs 15.4)
        if op == "add":
            s = (va + vb) & M32
            m = (((va + ma) + (vb + mb)) & M32) ^ s
        else:
            s = (va - vb) & M32
            m = ((s + ma) & M32) ^ ((s - mb) & M32)
        m |= ma | mb
        return (False, m, s & ~m & M32)
    if op == "mul":
        ka, kb = va | ma, vb | mb
        tz = 32 if ka == 0 or kb == 0 else (
            ((ka & -ka).bit_length() - 1) + ((kb & -kb).bit_length() - 1))
        zeros = M32 if tz >= 32 else (1 << tz) - 1          # the product's trailing zeros
        defined = (_low_defined(ma) & _low_defined(mb)) | zeros
        return (False, ~defined & M32, (va * vb) & defined & M32)
    # shifts: LangRef "If op2 is (statically or dynamically) equal to or larger than the
    # number of bits in op1, this instruction returns a poison value"
    if (vb | mb) >= 32:
        return POISON
    if mb:                                   # an undef amount below 32
        return (False, 0, 0) if (ma, va) == (0, 0) else (False, M32, 0)
    if op == "shl":
        return (False, (ma << vb) & M32, (va << vb) & M32)
    if op == "lshr":
        return (False, ma >> vb, va >> vb)
    m = (_s32(ma) >> vb) & M32
    return (False, m, (_s32(va) >> vb) & ~m & M32)


class Control:
    """Mixin of the engine (engine.py): computed registers and branch assumptions."""

    sel_guess: dict = {}

    def reg_tri(self, tname: str, name: str, read_value):
        """(poison, undef mask, bits) of register `name` of thread `tname`, or UNKNOWN."""
        key = (tname, name)
        if key in self.reg_event:
            v = read_value(self.reg_event[key])
            if v is UNKNOWN:
                return UNKNOWN
            return (False, M32, 0) if v is None else (False, 0, v & M32)
        ins = self.elab.comp[key]
        vals = [(False, 0, o & M32) if isinstance(o, int)
                else self.reg_tri(tname, o.name, read_value) for o in ins.ops]
        if any(v is UNKNOWN for v in vals):
            return UNKNOWN
        if ins.kind == "copy":
            return vals[0]
        if ins.kind == "select":
            c, a, b = vals
            if c[0]:
                return POISON
            if c[1]:
                # LangRef select: undef conditions "can go either way, but they have to come
                # from one of the two operands": a choice of the execution
                if key not in self.sel_guess:
                    raise _Guess(("select",) + key)
                return a if self.sel_guess[key] else b
            return a if c[2] == 1 else b
        a, b = vals
        if a[0] or b[0]:                 # LangRef: a poison operand gives poison
            return POISON
        if ins.kind == "icmp":
            return _icmp(ins.op, a, b)
        return _binop(ins.op, a, b)

    def reg_value(self, tname: str, name: str, read_value):
        """The value of register `name` of thread `tname` as memory and outcomes see it:
        None (undef) when it is poison or has an undef bit (docs 15.4)."""
        t = self.reg_tri(tname, name, read_value)
        if t is UNKNOWN:
            return UNKNOWN
        return None if (t[0] or t[1]) else t[2]

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
