"""A second, independent engine: explicit enumeration of candidate executions.

Written from docs/semantics.md section 6 ("The definitions, precisely"), section 7 (MMRA tags
and address spaces) and seed 000 only; it shares nothing with `amdmm_smt/encode/` but the
elaborated test (`elaborate.py`: events, `po`, `contains`, `inclusive`, and for section 7
`po_in_hb`, `sync_spaces`, `scope_in`) and the key order of a final state
(`solve.projection`).

For one elaborated test it enumerates

* for every read, a choice in {undef} ∪ {writes to its location} (`rf`), minus the choices the
  definitions exclude whatever the rest of the execution is (`_Engine.choices`);
* from those, the values of every read, register and write (an RMW writes `OP(old, v)`; a
  cmpxchg writes only when it succeeds, and one comparing `undef` may do either, a branch);
* for every location, a total order `co` of the writes that happen (initial write first),

and evaluates every definition directly. Only release sequences depend on `co`, so for one
reads-from choice it computes synchronizes-with, happens-before, availability, visibility,
location order, may-see and the value rule once (once per distinct synchronizes-with when a
release sequence runs through RMWs), turns the coherence rules into order constraints, and
lists only the `co` orders that satisfy them (when no seq_cst constraint needs the whole
order, only which write can be last). A candidate is kept iff every read's choice is exactly
what the value rule allows: a definite read chose a write it may see, a read that is not
definite chose `undef`.

Relations are bit masks over event ids: `rel[i] >> j & 1` means `rel(i, j)`.
"""

from __future__ import annotations

import itertools
from typing import Optional

from ..elaborate import Elab
from ..ir import SYSTEM, WORKGROUP, Reg, at_least_monotonic, is_acquire, is_release
from ..outcomes import projection

M32 = 0xFFFFFFFF
LEVELS = range(SYSTEM + 1)         # singlethread .. system


class ReferenceTooBig(Exception):
    """The engine cannot give the complete outcome set: more candidate executions than the
    limit allows (and, as subclasses, the two other reasons below)."""


class ReferenceUnbounded(ReferenceTooBig):
    """A consistent candidate execution whose values depend on themselves through reads-from
    (values "out of thin air", docs R-no-thin-air): any value may then be a solution, so the
    set of final states is not finitely enumerable by this engine."""


class ReferenceUnsupported(ReferenceTooBig):
    """The test uses something the written definitions do not cover."""


class _Guess(Exception):
    """Whether cmpxchg `cid` succeeds is open (it compares undef, or a value that depends on
    itself): the caller tries both."""

    def __init__(self, cid: int):
        super().__init__(cid)
        self.cid = cid


class _Pending(Exception):
    """A value needs a read whose choice is not made yet."""


class _Unknown:
    """A value that depends on itself through reads-from."""

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN = _Unknown()
NOWRITE = object()                 # a cmpxchg that failed writes nothing


def _bits(mask: int):
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def _s32(v: int) -> int:
    return v - (1 << 32) if v >= (1 << 31) else v


def _signed(v):
    return None if v is None else _s32(v)


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


class _Engine:
    def __init__(self, elab: Elab):
        self.elab = elab
        self.opts = elab.model.options
        ev = self.ev = elab.events
        n = self.n = len(ev)
        assert all(e.id == i for i, e in enumerate(ev))
        for e in ev:
            if e.kind not in ("init", "load", "store", "rmw", "cmpxchg", "fence", "av_load",
                              "av_store"):
                raise ReferenceUnsupported(f"{e.label}: event kind {e.kind}")
            if getattr(e, "instr", None) is not None and e.instr.guard is not None:
                raise ReferenceUnsupported(f"{e.label}: guarded instruction")
        self.thread_ids = [e.id for e in ev if not e.is_init]
        self.thread_mask = sum(1 << i for i in self.thread_ids)
        self.init_of = {e.loc: e.id for e in ev if e.is_init}
        mem = elab.test.memory
        self.loc_space = {name: mem[name].space for name in elab.locs}
        self.spaces = sorted(set(self.loc_space.values()))

        # static relations
        self.po = [sum(1 << j for j in range(n) if elab.po(ev[i], ev[j])) for i in range(n)]
        # program order between MMRA-compatible instructions (section 6: the po part of hb;
        # po_hb(a, b, AS) = po(a, b) ∧ hb_AS(a, b) contains it)
        po_in_hb = getattr(elab, "po_in_hb", None)
        self.po_c = [sum(1 << j for j in _bits(self.po[i])
                         if po_in_hb is None or po_in_hb(ev[i], ev[j])) for i in range(n)]
        self.cont = [[sum(1 << j for j in range(n) if elab.contains(ev[i], lv, ev[j]))
                      for lv in LEVELS] for i in range(n)]
        self.incl = [sum(1 << j for j in range(n) if j != i and elab.inclusive(ev[i], ev[j]))
                     for i in range(n)]
        # inclusion for synchronization in each address space (LDS: scope_in)
        self.incl_in = {}
        for sp in self.spaces:
            if hasattr(elab, "scope_in"):
                self.incl_in[sp] = [
                    sum(1 << j for j in range(n)
                        if j != i and elab.inclusive(ev[i], ev[j], sp)) for i in range(n)]
            else:
                self.incl_in[sp] = self.incl
        sync_spaces = getattr(elab, "sync_spaces", None)
        every = frozenset(self.spaces)
        self.sync_sp = [every if (sync_spaces is None or e.is_init)
                        else frozenset(sync_spaces(e)) & every for e in ev]

        self.acc_mask: dict[str, int] = {}
        for e in ev:
            if not e.is_init and (e.reads or e.writes):
                self.acc_mask[e.loc] = self.acc_mask.get(e.loc, 0) | (1 << e.id)
        self.writes_of = {loc: [e.id for e in ev if e.writes and e.loc == loc]
                          for loc in elab.locs}
        self.reads = [e.id for e in ev if e.reads]
        self.rmwlike = [e.kind in ("rmw", "cmpxchg") for e in ev]
        self.strong = [e.is_init or (e.atomic and at_least_monotonic(e.order)) for e in ev]
        self.avs = [self._avs(e) for e in ev]
        self.same_loc = [sum(1 << j for j in range(n)
                             if ev[i].loc is not None and ev[j].loc == ev[i].loc)
                         for i in range(n)]
        # po|≠loc: po between accesses to different locations, or involving a fence
        self.po_nl = [sum(1 << j for j in _bits(self.po[i])
                          if ev[i].is_fence or ev[j].is_fence or ev[i].loc != ev[j].loc)
                      for i in range(n)]
        self.reg_event = dict(elab.regs)

        # static parts of synchronizes-with: possible releases a with W(a) (strong atomic
        # writes po-after a fence, or a itself), and for each the possible acquires b in
        # another thread with the spaces both synchronize in which they are inclusive, and
        # R(b) (strong atomic reads po-before a fence, or b itself)
        def may_rel(e):
            return e.kind in ("store", "rmw", "cmpxchg", "fence") and is_release(e.order)

        def may_acq(e):
            return ((e.kind in ("load", "rmw", "fence") and is_acquire(e.order))
                    or (e.kind == "cmpxchg" and (is_acquire(e.order)
                                                 or is_acquire(e.fail_order))))
        self.sw_from = []
        self.sw_to = {}
        for a in self.thread_ids:
            if not may_rel(ev[a]):
                continue
            Xs = ([x for x in _bits(self.po[a]) if ev[x].writes and self.strong[x]]
                  if ev[a].is_fence else [a])
            tos = []
            for b in self.thread_ids:
                if not may_acq(ev[b]) or ev[b].thread == ev[a].thread:
                    continue
                sps = [sp for sp in self.spaces if sp in self.sync_sp[a]
                       and sp in self.sync_sp[b] and self.incl_in[sp][a] >> b & 1]
                if not sps:
                    continue
                Ys = ([y for y in self.reads if self.po[y] >> b & 1 and self.strong[y]]
                      if ev[b].is_fence else [b])
                tos.append((b, sps, Ys))
            if Xs and tos:
                self.sw_from.append((a, Xs))
                self.sw_to[a] = tos

    # ---- static roles ----------------------------------------------------------------------

    def _avs(self, e) -> Optional[int]:
        """Store-available / load-visible scope (section 6 "Scopes of the av roles")."""
        if e.is_init:
            return SYSTEM
        if e.is_fence or not (e.reads or e.writes):
            return None
        s = None
        if e.atomic or e.kind in ("av_load", "av_store"):
            s = self.cap(e.scope, e.loc)            # scope_in(e, AS)
        lds = self.loc_space.get(e.loc) == "local"
        if self.opts.volatile_av and e.volatile and not e.atomic \
                and e.kind in ("load", "store"):
            s = WORKGROUP if lds else SYSTEM
        if self.opts.lds_av_workgroup and lds:
            s = WORKGROUP if s is None else max(s, WORKGROUP)
        return s

    def cap(self, level: int, loc: str) -> int:
        """scope_in(·, AS) for the address space of `loc` (section 6): in LDS a scope above
        workgroup counts as workgroup."""
        if self.loc_space.get(loc) == "local" and level > WORKGROUP:
            return WORKGROUP
        return level

    # ---- values ----------------------------------------------------------------------------

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

        def operand(e, o):
            if isinstance(o, Reg):
                tname = self.elab.thread_names[e.thread]
                return read_value(self.reg_event[(tname, o.name)])
            return o & M32

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
            if e.is_init:
                v = self.elab.test.memory[e.loc].init & M32
            elif e.kind in ("store", "av_store"):
                v = operand(e, e.instr.value)
            elif e.kind == "rmw" and e.instr.op == "xchg":
                v = operand(e, e.instr.value)       # does not depend on the value read
            elif e.kind == "rmw":
                v = _rmw_value(e.instr.op, read_value(w), operand(e, e.instr.value))
            else:                                   # cmpxchg
                old = read_value(w)
                exp = operand(e, e.instr.expected)
                if old is UNKNOWN or exp is UNKNOWN or (
                        (old is None or exp is None) and self.opts.cas_undef == "either"):
                    if w not in guess:
                        raise _Guess(w)
                    ok = guess[w]
                else:
                    ok = old is not None and exp is not None and old == exp
                v = operand(e, e.instr.value) if ok else NOWRITE
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

    # ---- one reads-from choice -------------------------------------------------------------

    def roles(self, hap, order):
        """rel, acq (section 6 "Roles") and MakeAvailable / MakeVisible in this execution."""
        ev, n = self.ev, self.n
        rel = [False] * n
        acq = [False] * n
        for i in self.thread_ids:
            e = ev[i]
            if e.kind in ("store", "rmw", "fence") or (e.kind == "cmpxchg" and hap[i]):
                rel[i] = is_release(order[i])
            if e.kind in ("load", "rmw", "fence", "cmpxchg"):
                acq[i] = is_acquire(order[i])
        MA = [rel[i] and not ev[i].av_none for i in range(n)]
        MV = [acq[i] and not ev[i].av_none for i in range(n)]
        return rel, acq, MA, MV

    def sync_edges(self, rf, hap, rel, acq):
        """synchronizes-with in each address space (section 7: a synchronization orders AS iff
        both operations synchronize AS; in LDS a scope above workgroup is workgroup), split
        into the edges that hold whatever co is (the read reads from X itself), as
        `fixed[sp][a]` masks, and the conditional ones `(sp, a, b, X, w)`: they hold iff w, an
        RMW that happens, is in the release sequence of X, which depends on co."""
        ev, n = self.ev, self.n
        fixed = {sp: [0] * n for sp in self.spaces}
        cond = []
        for a, xs_static in self.sw_from:
            if not rel[a]:
                continue
            Xs = [x for x in xs_static if hap[x]]
            if not Xs:
                continue
            for b, sps, Ys in self.sw_to[a]:
                if not acq[b]:
                    continue
                sure = False
                here = []
                for y in Ys:
                    w = rf[y]
                    if w is None:
                        continue
                    for x in Xs:
                        if ev[x].loc != ev[y].loc:
                            continue
                        if w == x:
                            sure = True
                        elif self.rmwlike[w] and hap[w]:
                            here.append((x, w))
                for sp in sps:
                    if sure:
                        fixed[sp][a] |= 1 << b
                    else:
                        cond += [(sp, a, b, x, w) for (x, w) in here]
        return fixed, cond

    def happens_before(self, sw):
        """(po between compatible instructions ∪ sw)+ over thread events, then the initial
        writes before every thread event; None if it has a cycle."""
        ev, n = self.ev, self.n
        hb = [0 if ev[i].is_init else (self.po_c[i] | sw[i]) for i in range(n)]
        for k in range(n):
            bk, hk = 1 << k, hb[k]
            if not hk:
                continue
            for i in range(n):
                if hb[i] & bk:
                    hb[i] |= hk
        for i in range(n):
            if hb[i] >> i & 1:
                return None
        for i in range(n):
            if ev[i].is_init:
                hb[i] = self.thread_mask
        return hb

    def analyze(self, rf, hap, roles, sw):
        """Everything of sections 6 and 7 that does not depend on co, for one reads-from
        choice and one synchronizes-with (`sw[sp]` per address space): happens-before per
        address space (each acyclic), availability, visibility, location order, may-see and
        the value rule (must hold), and the coherence rules as constraints on co: `pred[w]`
        (writes that must be before w) and `adj[m] = w` (RMW atomicity: m immediately after
        w). Returns (hbs, pred, adj) or None if the candidate is inconsistent. The checks that
        need only hb and rf come first (they are cheap and reject most candidates)."""
        ev, n, opts = self.ev, self.n, self.opts
        rel, acq, MA, MV = roles
        hbs = {}
        cache: dict = {}
        for sp in self.spaces:
            key = tuple(sw[sp])
            if key not in cache:
                cache[key] = self.happens_before(sw[sp])
            if cache[key] is None:
                return None
            hbs[sp] = cache[key]
        hb_of = {loc: hbs[sp] for loc, sp in self.loc_space.items()}

        # a read never sees a write that happens after it (may-see; with read_lo,
        # lo(R, W) ⊇ hb(R, W))
        for r in self.reads:
            w = rf[r]
            if w is not None and hb_of[ev[r].loc][r] >> w & 1:
                return None

        # coherence rules that need only hb and rf, as constraints on co; inclusion is
        # inclusive(·, ·, AS) for the space of the location (every pair here is one location)
        strong = self.strong
        incl_of = {loc: self.incl_in[sp] for loc, sp in self.loc_space.items()}

        def I(a, b):
            return incl_of[ev[a].loc][a] >> b & 1

        pred = [0] * n
        adj = {}
        for loc, ws in self.writes_of.items():
            hb = hb_of[loc]
            hw = [w for w in ws if hap[w]]
            init = self.init_of.get(loc)
            for w2 in hw:
                for w1 in hw:
                    if w1 != w2 and (w1 == init or (strong[w1] and strong[w2]
                                                    and hb[w1] >> w2 & 1 and I(w1, w2))):
                        pred[w2] |= 1 << w1                                # init, CoWW
        sreads = [r for r in self.reads if strong[r] and rf[r] is not None and strong[rf[r]]]
        for r1 in sreads:
            w1 = rf[r1]
            hb = hb_of[ev[r1].loc]
            for r2 in sreads:
                w2 = rf[r2]
                if r1 != r2 and w1 != w2 and ev[r1].loc == ev[r2].loc and hb[r1] >> r2 & 1 \
                        and I(r1, r2) and I(w1, w2):
                    pred[w2] |= 1 << w1                                    # CoRR
        if opts.coherence == "cxx":
            for r in sreads:
                w1 = rf[r]
                hb = hb_of[ev[r].loc]
                for w2 in self.writes_of[ev[r].loc]:
                    if w2 == w1 or w2 == r or not hap[w2] or not strong[w2] or not I(w1, w2):
                        continue
                    if hb[w2] >> r & 1 and I(w2, r):
                        pred[w1] |= 1 << w2                                # CoWR
                    if hb[r] >> w2 & 1 and I(r, w2):
                        pred[w2] |= 1 << w1                                # CoRW
        for m in self.reads:
            if self.rmwlike[m] and hap[m]:
                w = rf[m]
                if w is not None and strong[w]:                            # RMW atomicity
                    adj[m] = w
                    pred[m] |= 1 << w
        if opts.final_co == "hb":                                          # R-final (hb)
            for loc, ws in self.writes_of.items():
                hb = hb_of[loc]
                hw = [w for w in ws if hap[w]]
                for w2 in hw:
                    for w1 in hw:
                        if w1 != w2 and hb[w1] >> w2 & 1:
                            pred[w2] |= 1 << w1
        if not self.orderable(pred):
            return None

        cont = self.cont

        def C(a, lv, b):
            return cont[a][lv] >> b & 1

        # availability, visibility, location order (per location, hb of its address space)
        lo = [0] * n
        for loc, ws in self.writes_of.items():
            hb = hb_of[loc]

            def HB(a, b, hb=hb):
                return hb[a] >> b & 1

            accm = self.acc_mask.get(loc, 0)
            cands = None
            for w in ws:
                if ev[w].is_init:
                    lo[w] = accm
                    continue
                if not hap[w]:
                    continue
                if not opts.avvis:
                    lo[w] = hb[w] & accm & ~(1 << w)
                    continue
                if cands is None:
                    cands = self.vis_candidates(loc, MV, hb)
                Aw = self.availability(w, MA, HB, C, hb)
                vis = self.visibility(w, Aw, cands, hb)
                m = self.po[w] & hb[w] & accm                      # po_hb(W, Y)
                after_vis = vis                                    # Y itself, or po_hb(Z, Y)
                for z in _bits(vis):
                    after_vis |= self.po[z] & hb[z]
                for y in _bits(accm & ~(1 << w) & ~m):
                    if ev[y].writes and hap[y] and any(
                            HB(z, y) and C(z, sz, y) for (z, sz) in Aw):
                        m |= 1 << y
                    elif ev[y].reads and after_vis >> y & 1:
                        m |= 1 << y
                lo[w] = m
        if opts.read_lo:
            for r in self.reads:
                loc = ev[r].loc
                lo[r] |= hb_of[loc][r] & self.acc_mask.get(loc, 0) & ~(1 << r)

        def LO(a, b):
            return lo[a] >> b & 1

        # may-see and the value rule
        for r in self.reads:
            e = ev[r]
            hb = hb_of[e.loc]
            ws = [w for w in self.writes_of[e.loc] if w != r and hap[w]]
            M = []
            for w in ws:
                if (LO(r, w) if opts.read_lo else hb[r] >> w & 1):
                    continue
                if any(w2 != w and LO(w, w2) and LO(w2, r) for w2 in ws):
                    continue
                M.append(w)
            some_lo = any(LO(w, r) for w in ws)
            incl = incl_of[e.loc]
            b_ok = (e.atomic and all(ev[w].atomic and incl[w] >> r & 1 for w in M)
                    and all(incl[w1] >> w2 & 1 for w1 in M for w2 in M if w1 != w2))
            d_ok = len(M) == 1 and all(LO(w, r) for w in M)
            if some_lo and (b_ok or d_ok):
                if rf[r] not in M:
                    return None
            elif rf[r] is not None:
                return None

        # R-final (lo): location order between writes that happen is in co
        if opts.final_co != "hb":
            for loc, ws in self.writes_of.items():
                hm = 0
                for w in ws:
                    if hap[w]:
                        hm |= 1 << w
                for w1 in ws:
                    if hap[w1]:
                        for w2 in _bits(lo[w1] & hm & ~(1 << w1)):
                            pred[w2] |= 1 << w1
        return hbs, pred, adj

    def orderable(self, pred) -> bool:
        """Is the constraint graph `pred` acyclic?"""
        nodes = [i for i in range(self.n) if pred[i]]
        state: dict = {}

        def dfs(a) -> bool:
            state[a] = 1
            for b in _bits(pred[a]):
                s = state.get(b, 0)
                if s == 1 or (s == 0 and not dfs(b)):
                    return False
            state[a] = 2
            return True

        return all(state.get(a, 0) != 0 or dfs(a) for a in nodes)

    def availability(self, w, MA, HB, C, hb) -> set:
        """A(W): the least set of (X, sX) of section 6 (three clauses); program order in
        clause 2 is po_hb (program order within happens-before); scopes are scope_in."""
        ev = self.ev
        loc = ev[w].loc
        A = set()
        if self.avs[w] is not None:
            A.add((w, self.cap(self.avs[w], loc)))
        for x in _bits(self.po[w] & hb[w]):                # po_hb(W, X)
            if MA[x]:
                A.add((x, self.cap(ev[x].scope, loc)))
        mas = [(x, self.cap(ev[x].scope, loc)) for x in self.thread_ids if MA[x]]
        mas = [(x, sx) for (x, sx) in mas if C(x, sx, w)]
        changed = True
        while changed:
            changed = False
            for p in mas:
                if p in A:
                    continue
                x = p[0]
                if any(z != x and HB(z, x) and C(z, sz, x) for (z, sz) in A):
                    A.add(p)
                    changed = True
        return A

    def vis_candidates(self, loc, MV, hb):
        """The candidates Y for visibility operations on a write to `loc` with their sY (the
        larger scope of the roles Y has: load-visible on loc, MakeVisible), in an order
        compatible with hb (fewer hb-predecessors first: hb is transitive and acyclic)."""
        ev = self.ev
        out = []
        for y in self.thread_ids:
            roles = []
            if ev[y].reads and ev[y].loc == loc and self.avs[y] is not None:
                roles.append(self.avs[y])                  # load-visible
            if MV[y]:
                roles.append(ev[y].scope)                  # MakeVisible
            if roles:
                out.append((y, self.cap(max(roles), loc)))
        npred = {y: sum(1 for x in self.thread_ids if hb[x] >> y & 1) for (y, _) in out}
        out.sort(key=lambda p: npred[p[0]])
        return out

    def visibility(self, w, A, cands, hb) -> int:
        """The visibility operations on W, as a mask. V(W, Y) is the highest level at which W
        is visible in Y's instance: the least solution of the two clauses of section 6, in
        one pass over the candidates in hb order (both clauses only look at operations that
        happen before Y)."""
        cont = self.cont
        V: dict = {}
        vis = 0
        for (y, sy) in cands:
            if y == w:
                continue
            best = -1
            for (x, sx) in A:                              # clause 1
                if x != y and hb[x] >> y & 1 and cont[x][sx] >> y & 1 \
                        and cont[y][sy] >> x & 1:
                    best = max(best, min(sx, sy))
            for x, vx in V.items():                        # clause 2
                if vx < 0 or vx <= best or not (hb[x] >> y & 1) or not (cont[y][sy] >> x & 1):
                    continue
                for l1 in range(vx, -1, -1):               # the largest usable L1 ≤ V(W, X)
                    if cont[x][l1] >> y & 1:
                        best = max(best, min(l1, sy))
                        break
            V[y] = best
            if best >= 0:
                vis |= 1 << y
        return vis

    # ---- co --------------------------------------------------------------------------------

    @staticmethod
    def _succ(adj):
        succ = {}
        for m, w in adj.items():
            if w in succ:
                return None          # two RMWs cannot both immediately follow one write
            succ[w] = m
        return succ

    def extensions(self, nodes, pred, adj):
        """Every total order of `nodes` (the writes to one location that happen) with every
        write of pred[w] before w, and m immediately after adj[m]."""
        succ = self._succ(adj)
        if succ is None:
            return
        order: list = []
        total = len(nodes)

        def rec(placed):
            if len(order) == total:
                yield list(order)
                return
            last = order[-1] if order else None
            for c in ([succ[last]] if last in succ else nodes):
                if placed >> c & 1 or pred[c] & ~placed or (c in adj and adj[c] != last):
                    continue
                order.append(c)
                yield from rec(placed | (1 << c))
                order.pop()

        yield from rec(0)

    def possible_lasts(self, nodes, pred, adj) -> set:
        """The writes that are last in some order `extensions` would give, without listing
        the orders: a search over (placed set, last placed)."""
        succ = self._succ(adj)
        if succ is None:
            return set()
        full = sum(1 << w for w in nodes)
        memo: dict = {}

        def rec(placed, last):
            key = (placed, last)
            if key in memo:
                return memo[key]
            self.tick()
            if placed == full:
                res = frozenset([last])
            else:
                acc = set()
                for c in ([succ[last]] if last in succ else nodes):
                    if placed >> c & 1 or pred[c] & ~placed or (c in adj and adj[c] != last):
                        continue
                    acc |= rec(placed | (1 << c), c)
                res = frozenset(acc)
            memo[key] = res
            return res

        return set(rec(0, None))

    # ---- seq_cst ---------------------------------------------------------------------------

    def sc_events(self, order):
        return [i for i in self.thread_ids if order[i] == "seq_cst"]

    def psc_needed(self, order) -> bool:
        sc = self.sc_events(order)
        return any(inc[a] >> b & 1 for inc in self.incl_in.values()
                   for a in sc for b in sc if a != b)

    def psc_acyclic(self, rf, order, hbs, co) -> bool:
        """seq_cst (section 6): psc must be acyclic; with several address spaces, the psc of
        every space's hb must fit one total order (section 7), so their union is acyclic.
        `co[loc]`: the writes to loc in order."""
        ev, n = self.ev, self.n
        sc = self.sc_events(order)
        com = [0] * n
        for lst in co.values():
            after = 0
            for w in reversed(lst):
                com[w] = after
                after |= 1 << w
        rfm = [0] * n                                  # rfm[w]: the reads that read from w
        for r in self.reads:
            if rf[r] is not None:
                rfm[rf[r]] |= 1 << r
        fr = [0] * n
        for r in self.reads:
            if rf[r] is not None:
                fr[r] = com[rf[r]] & ~(1 << r)

        def compose(a, b):
            out = [0] * n
            for i in range(n):
                m = 0
                for k in _bits(a[i]):
                    m |= b[k]
                out[i] = m
            return out

        co_rf = compose(com, rfm)
        fr_rf = compose(fr, rfm)
        eco = [rfm[i] | com[i] | fr[i] | co_rf[i] | fr_rf[i] for i in range(n)]
        psc = dict.fromkeys(sc, 0)
        done = set()
        for sp, hb in hbs.items():
            inc = self.incl_in[sp]
            if (id(hb), id(inc)) in done:
                continue
            done.add((id(hb), id(inc)))
            mid = compose(compose(self.po_nl, hb), self.po_nl)
            scb = [self.po[i] | mid[i] | (hb[i] & self.same_loc[i]) | com[i] | fr[i]
                   for i in range(n)]
            hb_eco_hb = compose(compose(hb, eco), hb)
            hb_pred = [0] * n
            for i in range(n):
                for j in _bits(hb[i]):
                    hb_pred[j] |= 1 << i
            for a in sc:
                cs = (1 << a) | (hb[a] if ev[a].is_fence else 0)
                for b in sc:
                    if a == b or not (inc[a] >> b & 1) or psc[a] >> b & 1:
                        continue
                    ds = (1 << b) | (hb_pred[b] if ev[b].is_fence else 0)
                    ok = any(scb[c] & ds & ~(1 << c) for c in _bits(cs))
                    if not ok and ev[a].is_fence and ev[b].is_fence:
                        ok = bool(hb[a] >> b & 1) or bool(hb_eco_hb[a] >> b & 1)
                    if ok:
                        psc[a] |= 1 << b
        state = dict.fromkeys(sc, 0)

        def dfs(a) -> bool:
            state[a] = 1
            for b in _bits(psc[a]):
                if state[b] == 1 or (state[b] == 0 and not dfs(b)):
                    return False
            state[a] = 2
            return True

        return all(state[a] != 0 or dfs(a) for a in sc)

    # ---- enumeration -----------------------------------------------------------------------

    def choices(self):
        """For every read, the choices the definitions do not exclude whatever the execution
        is: undef, or a write to its location except
        * itself and writes after it in program order within happens-before (such a write is
          hb-after the read, hence never seen, also with read_lo where lo(R, ·) ⊇ hb(R, ·));
        * writes W hidden by a write W' that always happens (not a cmpxchg) with W initial or
          W before W', and W' before R, in program order within happens-before:
          lo(W, W') ∧ lo(W', R) by the program-order clause of location order;
        and undef is dropped when R is always definite: R atomic, every write to the location
        atomic and inclusive with R and with each other (branch (b) for any may-see set), and
        some write always location-ordered before R (the initial write, or a write that
        always happens before R in program order within happens-before)."""
        ev = self.ev
        out = []
        for r in self.reads:
            loc = ev[r].loc
            ws = [w for w in self.writes_of[loc] if w != r]
            sure_before = [w for w in ws if self.po_c[w] >> r & 1 and ev[w].kind != "cmpxchg"]
            keep = []
            for w in ws:
                if self.po_c[r] >> w & 1:
                    continue
                if any(w2 != w and (ev[w].is_init or self.po_c[w] >> w2 & 1)
                       for w2 in sure_before):
                    continue
                keep.append(w)
            inc = self.incl_in[self.loc_space[loc]]
            always_definite = (
                ev[r].atomic
                and all(ev[w].atomic and inc[w] >> r & 1 for w in ws)
                and all(inc[a] >> b & 1 for a in ws for b in ws if a != b)
                and (loc in self.init_of or bool(sure_before)))
            out.append(keep if always_definite else [None] + keep)
        return out

    def tick(self):
        self.count += 1
        if self.count > self.limit:
            raise ReferenceTooBig(f"more than {self.limit} candidate executions")

    def run(self, limit: int) -> set:
        self.keys = projection(self.elab.test)[0]
        self.limit = limit
        self.count = 0
        self.out: set = set()
        choices = self.choices()
        total = 1
        for c in choices:
            total *= len(c)
        if total > limit:
            raise ReferenceTooBig(f"{total} reads-from choices (limit {limit})")
        for rf in self.assignments(choices):
            pending = [{}]
            while pending:
                guess = pending.pop()
                self.tick()
                try:
                    vals = self.values(rf, guess)
                except _Guess as g:
                    pending += [{**guess, g.cid: False}, {**guess, g.cid: True}]
                    continue
                if vals is not None:
                    self.explore(rf, *vals)
        return self.out

    def assignments(self, choices):
        """The reads-from choices (one dict per candidate), depth first in event order,
        dropping a partial choice as soon as a read chose a cmpxchg that is already known to
        fail (it would not happen, so nothing can read from it)."""
        reads = self.reads
        self.plain_rmws = [m for m in reads if self.ev[m].kind == "rmw"]
        rf: dict = {}
        targets: list = []             # reads whose chosen cmpxchg may still fail

        def rec(k):
            if k == len(reads):
                yield dict(rf)
                return
            r = reads[k]
            for c in choices[k]:
                if c is not None and self.ev[r].kind == "rmw" and self.strong[c] and any(
                        rf.get(m) == c for m in self.plain_rmws):
                    continue    # RMW atomicity: two RMWs cannot both directly follow c
                rf[r] = c
                added = c is not None and self.ev[c].kind == "cmpxchg"
                if added:
                    targets.append(c)
                if not any(self.cas_fails(t, rf) for t in targets):
                    yield from rec(k + 1)
                if added:
                    targets.pop()
            rf.pop(r, None)     # every choice may have been skipped (RMW atomicity)

        yield from rec(0)

    def cas_fails(self, c, rf) -> bool:
        """Is cmpxchg `c` sure to fail under the partial reads-from choice `rf`?"""
        ev = self.ev
        busy: set = set()
        Pending = _Pending

        def operand(e, o):
            if isinstance(o, Reg):
                tname = self.elab.thread_names[e.thread]
                return read_value(self.reg_event[(tname, o.name)])
            return o & M32

        def read_value(r):
            if r not in rf or r in busy:
                raise Pending
            w = rf[r]
            if w is None:
                return None
            busy.add(r)
            e = ev[w]
            if e.is_init:
                v = self.elab.test.memory[e.loc].init & M32
            elif e.kind in ("store", "av_store") or (e.kind == "rmw" and e.instr.op == "xchg"):
                v = operand(e, e.instr.value)
            elif e.kind == "rmw":
                v = _rmw_value(e.instr.op, read_value(w), operand(e, e.instr.value))
            else:
                raise Pending          # the value written by a cmpxchg: not worth following
            busy.discard(r)
            return v

        try:
            old = read_value(c)
            exp = operand(ev[c], ev[c].instr.expected)
        except Pending:
            return False
        if old is UNKNOWN or exp is UNKNOWN:
            return False
        if old is None or exp is None:
            return self.opts.cas_undef == "fail"
        return old != exp

    def explore(self, rf, rval, wval):
        """Every co order for one reads-from choice and its values."""
        ev, n = self.ev, self.n
        hap = [bool(e.writes) and wval[e.id] is not NOWRITE for e in ev]
        order = [e.order for e in ev]
        for e in ev:
            if e.kind == "cmpxchg" and not hap[e.id]:
                order[e.id] = e.fail_order
        rfl = [rf.get(i) for i in range(n)]
        targets = [rfl[m] for m in self.reads if self.rmwlike[m] and hap[m]
                   and rfl[m] is not None and self.strong[rfl[m]]]
        if len(set(targets)) < len(targets):
            return      # RMW atomicity: two RMWs cannot both directly follow one write
        roles = self.roles(hap, order)
        fixed, cond = self.sync_edges(rfl, hap, roles[0], roles[1])
        nodes = {loc: [w for w in ws if hap[w]] for loc, ws in self.writes_of.items()}
        locs = list(nodes)

        if not cond:
            an = self.analyze(rfl, hap, roles, fixed)
            if an is None:
                return
            hbs, pred, adj = an
            if not self.psc_needed(order):
                lasts = []
                for loc in locs:
                    if not nodes[loc]:
                        lasts.append([None])
                        continue
                    ls = self.possible_lasts(nodes[loc], pred, adj)
                    if not ls:
                        return
                    lasts.append(sorted(ls))
                for combo in itertools.product(*lasts):
                    self.tick()
                    self.record(rval, wval, dict(zip(locs, combo)))
                return
            per_loc = [list(self.extensions(nodes[loc], pred, adj)) for loc in locs]
            for cos in itertools.product(*per_loc):
                self.tick()
                co = dict(zip(locs, cos))
                if self.psc_acyclic(rfl, order, hbs, co):
                    self.record(rval, wval, {loc: (lst[-1] if lst else None)
                                             for loc, lst in co.items()})
            return

        # synchronizes-with depends on co (a release sequence through RMWs): list the co
        # orders allowed by what does not depend on sw (initial write first, program order in
        # hb between writes ⊆ lo, or ⊆ hb with final_co: hb, RMW atomicity), group them by
        # the sw they give, and analyse each group once.
        base_pred = [0] * n
        base_adj = {}
        for loc, ws in nodes.items():
            init = self.init_of.get(loc)
            for w in ws:
                for w1 in ws:
                    if w1 != w and (w1 == init or self.po_c[w1] >> w & 1):
                        base_pred[w] |= 1 << w1
        for m in self.reads:
            if self.rmwlike[m] and hap[m] and rfl[m] is not None and self.strong[rfl[m]]:
                base_adj[m] = rfl[m]
                base_pred[m] |= 1 << rfl[m]
        per_loc = [list(self.extensions(nodes[loc], base_pred, base_adj)) for loc in locs]
        groups: dict = {}
        for cos in itertools.product(*per_loc):
            self.tick()
            co = dict(zip(locs, cos))
            sw = {sp: list(m) for sp, m in fixed.items()}
            for (sp, a, b, x, w) in cond:
                if sw[sp][a] >> b & 1:
                    continue
                lst = co[ev[x].loc]
                i, j = lst.index(x), lst.index(w)
                if i < j and all(self.rmwlike[v] for v in lst[i + 1:j + 1]):
                    sw[sp][a] |= 1 << b
            key = tuple(tuple(sw[sp]) for sp in self.spaces)
            groups.setdefault(key, (sw, []))[1].append(co)
        for sw, cos in groups.values():
            an = self.analyze(rfl, hap, roles, sw)
            if an is None:
                continue
            hbs, pred, adj = an
            for co in cos:
                if not all(self.respects(lst, pred) for lst in co.values()):
                    continue
                if self.psc_acyclic(rfl, order, hbs, co):
                    self.record(rval, wval, {loc: (lst[-1] if lst else None)
                                             for loc, lst in co.items()})

    @staticmethod
    def respects(lst, pred) -> bool:
        placed = 0
        for w in lst:
            if pred[w] & ~placed:
                return False
            placed |= 1 << w
        return True

    def record(self, rval, wval, last):
        """Add the final state: registers, then the named locations (the value of the co-last
        write that happens; undef if there is none)."""
        state = []
        for k in self.keys:
            if k.startswith("@"):
                w = last.get(k[1:])
                v = None if w is None else wval[w]
            else:
                tname, reg = k.split(":%", 1)
                v = rval[self.reg_event[(tname, reg)]]
            if v is UNKNOWN:
                raise ReferenceUnbounded(
                    f"{k}: a consistent execution whose value depends on itself through "
                    "reads-from (out of thin air)")
            state.append((k, _signed(v)))
        self.out.add(tuple(state))


def reference_outcomes(elab: Elab, limit: int = 2_000_000) -> set[tuple]:
    if getattr(elab.model.options, "no_thin_air", False):
        raise ReferenceUnsupported("the no_thin_air option is not implemented by the "
                                   "reference engine")
    return _reference_outcomes(elab, limit)


def _reference_outcomes(elab: Elab, limit: int = 2_000_000) -> set[tuple]:
    """The set of final states over all consistent candidate executions. Raises
    ReferenceTooBig if more than `limit` candidate executions would be examined (subclasses:
    ReferenceUnbounded for values out of thin air, ReferenceUnsupported)."""
    return _Engine(elab).run(limit)
