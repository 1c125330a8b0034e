"""Values: what writes write and reads return, may-see and the read-value rule
(docs/semantics.md section 6 "Write values", "May see", "Value rule"; S000)."""

from __future__ import annotations

from ..ir import POISON, Reg
from . import choices as Z
from .common import (M32, NOWRITE, UNKNOWN, Bytes, ReferenceUnsupported, _Guess, _Pending,
                     _s32)


def _mask_bits(v):
    """(undef-byte mask, bits) of a value as memory holds it: int, None (undef) or Bytes."""
    if v is None:
        return M32, 0
    if isinstance(v, Bytes):
        return v.mask, v.bits
    return 0, v


def cas_compare(old, exp):
    """docs 15.4 R-mem-bytes (cmpxchg), written from its text: compare the bytes read with
    the expected value's bytes. True / False when decided (a byte defined in both that differs:
    False; every byte defined in both and equal: True), None when open (an undef byte and no
    defined byte that differs: R-cas-undef decides)."""
    if old == POISON or exp == POISON:
        return None              # poison relaxed to undef (LangRef): open, R-cas-undef
    om, ob = _mask_bits(old)
    em, eb = _mask_bits(exp)
    if (ob ^ eb) & ~(om | em) & M32:
        return False
    if om | em:
        return None
    return ob == eb


def _rmw_value(op: str, old, v):
    """`atomicrmw OP`: the value written, from the value read `old` and the operand `v`
    (None = undef). xchg writes its operand whatever was read."""
    if op == "xchg":
        return v
    if old is UNKNOWN or v is UNKNOWN:
        return UNKNOWN
    if old is None or v is None:
        return None
    if op == "add":
        return (old + v) & M32
    if op == "sub":
        return (old - v) & M32
    if op == "and":
        return old & v
    if op == "or":
        return old | v
    if op == "xor":
        return old ^ v
    if op == "max":
        return old if _s32(old) >= _s32(v) else v
    if op == "min":
        return old if _s32(old) <= _s32(v) else v
    if op == "umax":
        return max(old, v)
    if op == "umin":
        return min(old, v)
    raise ReferenceUnsupported(f"unknown atomicrmw operation {op}")


class Values:
    """Mixin of the engine (engine.py): the values family."""

    def operand(self, e, o, read_value):
        """An operand of e: a constant, or the value of the read that defined the register
        (`read_value(event id)`)."""
        if isinstance(o, Reg):
            tname = self.elab.thread_names[e.thread]
            if (tname, o.name) in self.bar_regs:
                return self.bar_regs[(tname, o.name)]      # isfirst (docs 10.5)
            return self.reg_value(tname, o.name, read_value)      # control.py (§15.4)
        return o & M32

    def plain_write_value(self, e, read_value):
        """The value a write other than a cmpxchg writes: the initial value, a store's
        operand, or `OP(old, v)` for an RMW (xchg does not depend on the value read)."""
        if e.is_init:
            return self.elab.test.memory[e.loc].init & M32
        if e.kind == "dma_write":
            # docs §11.3 (S004 "a non-atomic read on the source and a non-atomic write on the
            # destination"): A.w writes the bytes A.r returns (docs 15.4 R-mem-bytes: an
            # undef byte stays undef)
            return read_value(self.dma_read_of[e.async_of])
        if e.kind in ("store", "av_store") or (e.kind == "rmw" and e.instr.op == "xchg"):
            return self.bytes_operand(e, e.instr.value, read_value)
        return self.rmw_write(e, read_value)

    def bytes_operand(self, e, o, read_value):
        """Operand o of e as memory keeps it (docs 15.4 R-mem-bytes): int, None (every byte
        undef), Bytes, or UNKNOWN."""
        tname = self.elab.thread_names[e.thread]
        if isinstance(o, Reg) and (tname, o.name) not in self.bar_regs:
            return self.store_value(tname, o.name, read_value)
        return self.operand(e, o, read_value)

    def rmw_write(self, e, read_value):
        """docs 15.4 R-mem-bytes (RMW), written from its text: `OP(old, v)`, old the bytes the
        RMW read (an undef byte is a fresh choice), v a use of the operand (its own choices);
        each byte of the result is undef iff it can take two values over the choices (or
        some choice is poison), else its one value."""
        old = read_value(e.id)
        if old is UNKNOWN:
            return UNKNOWN
        o = e.instr.value
        tname = self.elab.thread_names[e.thread]
        fresh = [0]
        if isinstance(o, Reg) and (tname, o.name) not in self.bar_regs:
            t = self.reg_sym(tname, o.name, read_value, fresh)
            if t is UNKNOWN:
                return UNKNOWN
            vp, vt = t
        else:
            vp, vt = False, self.operand(e, o, read_value)
        if isinstance(old, int) and vp is False and isinstance(vt, int):
            return _rmw_value(e.instr.op, old, vt)
        # LangRef "An instruction that *depends* on a poison value, produces a poison value
        # itself" (docs 15.4 R-mem-poison)
        if old == POISON or vp is True or (vp is not False and Z.one_value(vp, 0) is None):
            return POISON
        fresh[0] += 1
        if old is None:
            ot = Z.choice(fresh[0])
        elif isinstance(old, Bytes):
            ot = Z.mix(old.bits, old.mask, fresh[0])
        else:
            ot = Z.bv(old)
        mask, bits = Z.byte_values(vp, Z.rmw(e.instr.op, ot, Z.bv(vt)))
        if mask == 0:
            return bits
        return None if mask == M32 else Bytes((mask, bits))

    def values(self, rf: dict, guess: dict):
        """Values of every read (value returned) and write (value written, NOWRITE for a failed
        cmpxchg) under the reads-from choice `rf`. A value that depends on itself through
        reads-from is UNKNOWN. Whether a cmpxchg comparing undef (cas_undef: either) or
        UNKNOWN succeeds is taken from `guess` (raising _Guess when it is not there). Returns
        (rval, wval), or None when a read chose a write that does not happen."""
        ev = self.ev
        rval: dict = {}
        wval: dict = {}
        busy: set = set()
        bad = [False]

        def read_value(r: int):
            if r in rval:
                return rval[r]
            key = ("r", r)
            if key in busy:
                return UNKNOWN
            busy.add(key)
            w = rf[r]
            v = None if w is None else write_value(w)
            if v is NOWRITE:
                bad[0] = True
                v = None
            busy.discard(key)
            rval[r] = v
            return v

        def write_value(w: int):
            if w in wval:
                return wval[w]
            key = ("w", w)
            if key in busy:
                return UNKNOWN
            busy.add(key)
            e = ev[w]
            if e.kind != "cmpxchg":
                v = self.plain_write_value(e, read_value)
            else:
                old = read_value(w)
                exp = self.bytes_operand(e, e.instr.expected, read_value)
                ok = None if old is UNKNOWN or exp is UNKNOWN else cas_compare(old, exp)
                if ok is None and (old is UNKNOWN or exp is UNKNOWN
                                   or self.opts.cas_undef == "either"):
                    if w not in guess:
                        raise _Guess(w)
                    ok = guess[w]
                v = self.bytes_operand(e, e.instr.value, read_value) if ok else NOWRITE
            busy.discard(key)
            wval[w] = v
            return v

        for r in self.reads:
            read_value(r)
        for ws in self.writes_of.values():
            for w in ws:
                write_value(w)
        if bad[0]:
            return None
        return rval, wval

    def cas_fails(self, c, rf) -> bool:
        """Is cmpxchg `c` sure to fail under the partial reads-from choice `rf`?"""
        ev = self.ev
        busy: set = set()
        Pending = _Pending

        def read_value(r):
            if r not in rf or r in busy:
                raise Pending
            w = rf[r]
            if w is None:
                return None
            busy.add(r)
            e = ev[w]
            if e.kind == "cmpxchg":
                raise Pending          # the value written by a cmpxchg: not worth following
            v = self.plain_write_value(e, read_value)
            busy.discard(r)
            return v

        try:
            old = read_value(c)
            exp = self.bytes_operand(ev[c], ev[c].instr.expected, read_value)
        except (Pending, _Guess):
            return False
        if old is UNKNOWN or exp is UNKNOWN:
            return False
        ok = cas_compare(old, exp)
        if ok is None:
            return self.opts.cas_undef == "fail"
        return not ok

    def sees_hb_later(self, rf, hb_of) -> bool:
        """Does some read see a write that happens after it? (may-see: never; with read_lo,
        lo(R, W) ⊇ hb(R, W).) Cheap, and rejects most candidates, so asked first."""
        ev = self.ev
        for r in self.reads:
            w = rf[r]
            if w is not None and hb_of[ev[r].loc][r] >> w & 1:
                return True
        return False

    def value_rule_holds(self, rf, hap, hb_of, lo, hbx_of=None) -> bool:
        """May-see and the value rule: every read's choice is exactly what the rule allows (a
        definite read chose a write it may see, a read that is not definite chose undef)."""
        ev, opts = self.ev, self.opts

        def LO(a, b):
            return lo[a] >> b & 1

        for r in self.reads:
            e = ev[r]
            hb = hb_of[e.loc]
            hbx = (hbx_of or hb_of)[e.loc]     # docs 10.7 R-bar-hb-exec (hb without barriers)
            ws = [w for w in self.writes_of[e.loc] if w != r and hap[w]]
            M = []
            for w in ws:
                if (LO(r, w) if opts.read_lo else hb[r] >> w & 1) or hbx[r] >> w & 1:
                    continue
                if any(w2 != w and LO(w, w2) and LO(w2, r) for w2 in ws):
                    continue
                M.append(w)
            some_lo = any(LO(w, r) for w in ws)
            incl = self.incl_of[e.loc]
            b_ok = (e.atomic and all(ev[w].atomic and incl[w] >> r & 1 for w in M)
                    and all(incl[w1] >> w2 & 1 for w1 in M for w2 in M if w1 != w2))
            d_ok = len(M) == 1 and all(LO(w, r) for w in M)
            if some_lo and (b_ok or d_ok):
                if rf[r] not in M:
                    return False
            elif rf[r] is not None:
                return False
        return True
