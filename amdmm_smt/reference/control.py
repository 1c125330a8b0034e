"""Control flow on one path (docs/semantics.md section 15.4-15.5), written from the text of
that section: a computed register's value from its operands (undef if an operand is undef,
and a shift by 32 or more is undef; i1 is 0 / 1), the branch conditions the path assumes
(an execution whose defined condition disagrees with the path is not an execution of this
path), and a branch on an undef condition as undefined behaviour."""

from __future__ import annotations

from ..ir import Reg
from .common import M32, UNKNOWN, ReferenceUnsupported, _s32


def _icmp(op: str, a: int, b: int) -> int:
    sa, sb = _s32(a), _s32(b)
    return int({"eq": a == b, "ne": a != b, "slt": sa < sb, "sgt": sa > sb, "sle": sa <= sb,
                "sge": sa >= sb, "ult": a < b, "ugt": a > b, "ule": a <= b,
                "uge": a >= b}[op])


def _binop(op: str, a: int, b: int):
    if op in ("shl", "lshr", "ashr") and b >= 32:
        return None                          # section 15.4: poison, read as undef
    return {"add": lambda: (a + b) & M32, "sub": lambda: (a - b) & M32,
            "mul": lambda: (a * b) & M32, "and": lambda: a & b, "or": lambda: a | b,
            "xor": lambda: a ^ b, "shl": lambda: (a << b) & M32, "lshr": lambda: a >> b,
            "ashr": lambda: (_s32(a) >> b) & M32}[op]()


class Control:
    """Mixin of the engine (engine.py): computed registers and branch assumptions."""

    def reg_value(self, tname: str, name: str, read_value):
        """The value of register `name` of thread `tname` (None = undef)."""
        key = (tname, name)
        if key in self.reg_event:
            return read_value(self.reg_event[key])
        ins = self.elab.comp[key]
        vals = [o & M32 if isinstance(o, int) else self.reg_value(tname, o.name, read_value)
                for o in ins.ops]
        if any(v is UNKNOWN for v in vals):
            return UNKNOWN
        if ins.kind == "copy":
            return vals[0]
        if ins.kind == "select":
            c, a, b = vals
            return None if c is None else (a if c == 1 else b)
        a, b = vals
        if a is None or b is None:
            return None
        if ins.kind == "icmp":
            return _icmp(ins.op, a, b)
        return _binop(ins.op, a, b)

    def path_check(self, rval, final: bool = True):
        """'ok', 'off' (a defined branch condition leads elsewhere) or ('ub', thread, line)
        (the first branch on undef on this path; section 15.5)."""
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
