"""A second, independent engine: explicit enumeration of candidate executions.

Written from docs/semantics.md section 6 ("The definitions, precisely") and seed 000 only; it
shares nothing with `amdmm_smt/encode/` but the elaborated test (`elaborate.py`: events, `po`,
`contains`, `inclusive`) and the key order of a final state (`solve.projection`).

For one elaborated test it enumerates

* for every read, a choice in {undef} ∪ {writes to its location} (`rf`),
* from those, the values of every read, register and write (program order feeds operands;
  an RMW writes `OP(old, v)`, a cmpxchg writes only when it succeeds),
* for every location, a total order `co` of the writes that happen (initial write first),

and on each candidate evaluates every definition of section 6 directly (synchronizes-with over
release sequences, happens-before, availability and visibility as least fixpoints, location
order, may-see, the value rule, coherence, RMW atomicity, psc acyclicity). A candidate is kept
iff every read's choice is exactly the one the value rule allows: a definite read chose a write
it may see, a read that is not definite chose `undef`.

Relations are bit masks over event ids: `rel[i] >> j & 1` means `rel(i, j)`.
"""

from __future__ import annotations

import itertools
from typing import Optional

from .elaborate import AV_NONE, Elab  # noqa: F401  (AV_NONE: the tag Event.av_none stands for)
from .ir import SYSTEM, WORKGROUP, Reg, at_least_monotonic, is_acquire, is_release

M32 = 0xFFFFFFFF
LEVELS = range(SYSTEM + 1)         # singlethread .. system


class ReferenceTooBig(Exception):
    """More candidate executions than the limit allows."""


class ReferenceUnbounded(ReferenceTooBig):
    """A consistent candidate execution whose values depend on themselves through reads-from
    (values "out of thin air"): any value may then be a solution, so the set of final states is
    not finitely enumerable by this engine."""


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


def _signed(v):
    if v is None:
        return None
    return v - (1 << 32) if v >= (1 << 31) else v


def _s32(v: int) -> int:
    return v - (1 << 32) if v >= (1 << 31) else v


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
    raise ValueError(f"unknown atomicrmw operation {op}")


class _Engine:
    def __init__(self, elab: Elab):
        self.elab = elab
        self.opts = elab.model.options
        ev = self.ev = elab.events
        n = self.n = len(ev)
        assert all(e.id == i for i, e in enumerate(ev))
        self.thread_ids = [e.id for e in ev if not e.is_init]
        self.thread_mask = sum(1 << i for i in self.thread_ids)
        self.init_of = {e.loc: e.id for e in ev if e.is_init}
        self.space = {name: loc.space for name, loc in elab.test.memory.items()}

        # static relations
        self.po = [sum(1 << j for j in range(n) if elab.po(ev[i], ev[j])) for i in range(n)]
        self.cont = [[sum(1 << j for j in range(n) if elab.contains(ev[i], lv, ev[j]))
                      for lv in LEVELS] for i in range(n)]
        self.incl = [sum(1 << j for j in range(n) if j != i and elab.inclusive(ev[i], ev[j]))
                     for i in range(n)]
        self.is_access = [e.reads or e.writes for e in ev]
        self.acc_mask: dict[str, int] = {}
        for e in ev:
            if not e.is_init and self.is_access[e.id]:
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

    # ---- static roles ----------------------------------------------------------------------

    def _avs(self, e) -> Optional[int]:
        """Store-available / load-visible scope (section 6 "Scopes of the av roles")."""
        if e.is_init:
            return SYSTEM
        if e.is_fence or not (e.reads or e.writes):
            return None
        s = None
        if e.atomic or e.kind in ("av_load", "av_store"):
            s = e.scope
        lds = self.space.get(e.loc) == "local"
        if self.opts.volatile_av and e.volatile and not e.atomic \
                and e.kind in ("load", "store"):
            s = WORKGROUP if lds else SYSTEM
        if self.opts.lds_av_workgroup and lds:
            s = WORKGROUP if s is None else max(s, WORKGROUP)
        return s

    # ---- values ----------------------------------------------------------------------------

    def values(self, rf: dict[int, Optional[int]]):
        """Values of every read (value returned) and write (value written, NOWRITE for a failed
        cmpxchg) under the reads-from choice `rf`. Values that depend on themselves through
        reads-from are UNKNOWN. Returns (rval, wval) or None when a read chose a write that
        does not happen."""
        ev = self.ev
        rval: dict[int, object] = {}
        wval: dict[int, object] = {}
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
            if w is None:
                v = None
            else:
                v = write_value(w)
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
            elif e.kind == "cmpxchg":
                old = read_value(w)
                exp = operand(e, e.instr.expected)
                if old is UNKNOWN or exp is UNKNOWN:
                    raise ReferenceUnbounded(
                        f"{e.label}: whether the cmpxchg succeeds depends on a value that "
                        "depends on itself through reads-from")
                if old is not None and exp is not None and old == exp:
                    v = operand(e, e.instr.value)
                else:
                    v = NOWRITE
            else:  # pragma: no cover
                raise AssertionError(e.kind)
            busy.discard(key)
            wval[w] = v
            return v

        for r in self.reads:
            read_value(r)
        for loc in self.writes_of:
            for w in self.writes_of[loc]:
                write_value(w)
        if bad[0]:
            return None
        return rval, wval

    # ---- one candidate execution -------------------------------------------------------------

    def check(self, rf, rval, wval, hap, order, co) -> Optional[dict]:
        """Evaluate section 6 on one candidate. `hap[i]`: write i happens; `order[i]`: the
        ordering of i in this execution; `co[loc]`: the writes to loc that happen, in order.
        Returns the final values of the locations, or None if the candidate is inconsistent."""
        ev, n, opts = self.ev, self.n, self.opts
        pos = {}
        for lst in co.values():
            for k, w in enumerate(lst):
                pos[w] = k

        def co_rel(a, b):
            return a in pos and b in pos and ev[a].loc == ev[b].loc and pos[a] < pos[b]

        # RMW atomicity (cheap, first)
        for m in self.reads:
            if self.rmwlike[m] and hap[m]:
                w = rf[m]
                if w is not None and self.strong[w]:
                    if ev[w].loc != ev[m].loc or pos[m] != pos[w] + 1:
                        return None

        # roles
        rel = [False] * n
        acq = [False] * n
        for i in self.thread_ids:
            e = ev[i]
            o = order[i]
            if e.kind in ("store", "rmw", "fence") or (e.kind == "cmpxchg" and hap[i]):
                rel[i] = is_release(o)
            if e.kind in ("load", "rmw", "fence", "cmpxchg"):
                acq[i] = is_acquire(o)
        MA = [rel[i] and not ev[i].av_none for i in range(n)]
        MV = [acq[i] and not ev[i].av_none for i in range(n)]

        # release sequences: rs(h) = h followed by the maximal run of RMWs after it in co
        def rs(h):
            lst = co[ev[h].loc]
            out = 1 << h
            for w in lst[pos[h] + 1:]:
                if not self.rmwlike[w]:
                    break
                out |= 1 << w
            return out

        # synchronizes-with
        sw = [0] * n
        for a in self.thread_ids:
            if not rel[a]:
                continue
            if ev[a].is_fence:
                Xs = [x for x in _bits(self.po[a])
                      if ev[x].writes and hap[x] and self.strong[x]]
            else:
                Xs = [a]
            if not Xs:
                continue
            rsx = [(x, ev[x].loc, rs(x)) for x in Xs]
            for b in self.thread_ids:
                if not acq[b] or ev[b].thread == ev[a].thread or not (self.incl[a] >> b & 1):
                    continue
                if ev[b].is_fence:
                    Ys = [y for y in range(n)
                          if self.po[y] >> b & 1 and ev[y].reads and self.strong[y]]
                else:
                    Ys = [b]
                if any(rf[y] is not None and ev[y].loc == loc and rsm >> rf[y] & 1
                       for (_, loc, rsm) in rsx for y in Ys):
                    sw[a] |= 1 << b

        # happens-before: (po ∪ sw)+ over thread events, then the initial writes
        hb = [(self.po[i] | sw[i]) if not ev[i].is_init else 0 for i in range(n)]
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

        def HB(a, b):
            return hb[a] >> b & 1

        cont = self.cont

        def C(a, lv, b):
            return cont[a][lv] >> b & 1

        # availability, visibility, location order
        lo = [0] * n
        A: dict[int, set] = {}
        for loc, ws in self.writes_of.items():
            accm = self.acc_mask.get(loc, 0)
            for w in ws:
                if ev[w].is_init:
                    lo[w] = accm
                    continue
                if not hap[w]:
                    continue
                if not opts.avvis:
                    lo[w] = hb[w] & accm & ~(1 << w)
                    continue
                Aw = self.availability(w, MA, HB, C)
                A[w] = Aw
                V, cands = self.visibility(w, Aw, MV, HB, C)
                m = self.po[w] & accm
                for y in _bits(accm & ~(1 << w)):
                    if ev[y].writes and hap[y] and any(
                            HB(z, y) and C(z, sz, y) for (z, sz) in Aw):
                        m |= 1 << y
                    if ev[y].reads and any(
                            V[z] >= 0 and (z == y or self.po[z] >> y & 1) for z in cands):
                        m |= 1 << y
                lo[w] = m
        if opts.read_lo:
            for r in self.reads:
                if not ev[r].is_init:
                    lo[r] |= hb[r] & self.acc_mask.get(ev[r].loc, 0) & ~(1 << r)

        def LO(a, b):
            return lo[a] >> b & 1

        # may-see and the value rule
        for r in self.reads:
            e = ev[r]
            ws = [w for w in self.writes_of[e.loc] if w != r and hap[w]]
            M = []
            for w in ws:
                if (LO(r, w) if opts.read_lo else HB(r, w)):
                    continue
                if any(w2 != w and LO(w, w2) and LO(w2, r) for w2 in ws):
                    continue
                M.append(w)
            some_lo = any(LO(w, r) for w in ws)
            b_ok = (e.atomic and all(ev[w].atomic and self.incl[w] >> r & 1 for w in M)
                    and all(self.incl[w1] >> w2 & 1 for w1 in M for w2 in M if w1 != w2))
            d_ok = len(M) == 1 and all(LO(w, r) for w in M)
            definite = some_lo and (b_ok or d_ok)
            if definite:
                if rf[r] not in M:
                    return None
            elif rf[r] is not None:
                return None

        # coherence
        for loc, lst in co.items():
            for w1 in lst:
                for w2 in lst:
                    if w1 != w2 and LO(w1, w2) and pos[w1] > pos[w2]:
                        return None
        strong, incl = self.strong, self.incl

        def I(a, b):
            return incl[a] >> b & 1

        for loc, lst in co.items():
            for w1 in lst:
                if not strong[w1]:
                    continue
                for w2 in lst:
                    if w1 != w2 and strong[w2] and HB(w1, w2) and I(w1, w2) \
                            and pos[w1] > pos[w2]:
                        return None                                        # CoWW
        sreads = [r for r in self.reads if strong[r] and rf[r] is not None
                  and strong[rf[r]]]
        for r1 in sreads:
            w1 = rf[r1]
            for r2 in sreads:
                w2 = rf[r2]
                if r1 != r2 and ev[r1].loc == ev[r2].loc and HB(r1, r2) and I(r1, r2) \
                        and w1 != w2 and I(w1, w2) and co_rel(w2, w1):
                    return None                                            # CoRR
        if opts.coherence == "cxx":
            for r in sreads:
                w1 = rf[r]
                for w2 in co[ev[r].loc]:
                    if w2 == w1 or not strong[w2] or not I(w1, w2):
                        continue
                    if HB(w2, r) and I(w2, r) and co_rel(w1, w2):
                        return None                                        # CoWR
                    if w2 != r and HB(r, w2) and I(r, w2) and not co_rel(w1, w2):
                        return None                                        # CoRW

        # seq_cst
        if not self.psc_acyclic(rf, hap, order, hb, co_rel, pos):
            return None

        final = {}
        for loc in self.elab.locs:
            lst = co.get(loc, [])
            final[loc] = wval[lst[-1]] if lst else None
        return final

    def availability(self, w, MA, HB, C) -> set:
        """A(W): least set of (X, sX) (section 6, three clauses)."""
        ev = self.ev
        A = set()
        if self.avs[w] is not None:
            A.add((w, self.avs[w]))
        for x in _bits(self.po[w]):
            if MA[x]:
                A.add((x, ev[x].scope))
        mas = [x for x in self.thread_ids if MA[x] and C(x, ev[x].scope, w)]
        changed = True
        while changed:
            changed = False
            for x in mas:
                p = (x, ev[x].scope)
                if p in A:
                    continue
                if any(z != x and HB(z, x) and C(z, sz, x) for (z, sz) in A):
                    A.add(p)
                    changed = True
        return A

    def visibility(self, w, A, MV, HB, C):
        """V(W, Y) for every candidate Y: the highest level at which W is visible in Y's
        instance (-1: Y is not a visibility operation on W). Least fixpoint of the two
        clauses."""
        ev = self.ev
        loc = ev[w].loc
        sY = {}
        for y in self.thread_ids:
            if y == w:
                continue
            roles = []
            if ev[y].reads and ev[y].loc == loc and self.avs[y] is not None:
                roles.append(self.avs[y])
            if MV[y]:
                roles.append(ev[y].scope)
            if roles:
                sY[y] = max(roles)
        V = {y: -1 for y in sY}
        for y, sy in sY.items():                      # clause 1
            for (x, sx) in A:
                if x != y and HB(x, y) and C(x, sx, y) and C(y, sy, x):
                    V[y] = max(V[y], min(sx, sy))
        changed = True
        while changed:                                 # clause 2
            changed = False
            for y, sy in sY.items():
                best = V[y]
                for x in sY:
                    vx = V[x]
                    if x == y or vx < 0 or not HB(x, y) or not C(y, sy, x):
                        continue
                    for l1 in range(vx, -1, -1):
                        if C(x, l1, y):
                            best = max(best, min(l1, sy))
                            break
                if best > V[y]:
                    V[y] = best
                    changed = True
        return V, list(sY)

    def psc_acyclic(self, rf, hap, order, hb, co_rel, pos) -> bool:
        ev, n = self.ev, self.n
        sc = [i for i in self.thread_ids if order[i] == "seq_cst"]
        if len(sc) < 2:
            return True
        # co, rf, fr as masks
        co = [0] * n
        for a in pos:
            for b in pos:
                if co_rel(a, b):
                    co[a] |= 1 << b
        rfm = [0] * n                                  # rfm[w]: reads that read from w
        for r in self.reads:
            if rf[r] is not None:
                rfm[rf[r]] |= 1 << r
        fr = [0] * n
        for r in self.reads:
            if rf[r] is not None:
                fr[r] = co[rf[r]] & ~(1 << r)

        def compose(a, b):
            out = [0] * n
            for i in range(n):
                m = 0
                for k in _bits(a[i]):
                    m |= b[k]
                out[i] = m
            return out

        hbl = [hb[i] & self.same_loc[i] for i in range(n)]
        mid = compose(compose(self.po_nl, hb), self.po_nl)
        scb = [self.po[i] | mid[i] | hbl[i] | co[i] | fr[i] for i in range(n)]
        co_rf = compose(co, rfm)
        fr_rf = compose(fr, rfm)
        eco = [rfm[i] | co[i] | fr[i] | co_rf[i] | fr_rf[i] for i in range(n)]
        hb_eco_hb = compose(compose(hb, eco), hb)

        hb_pred = [0] * n
        for i in range(n):
            for j in _bits(hb[i]):
                hb_pred[j] |= 1 << i
        psc = {a: 0 for a in sc}
        for a in sc:
            cs = (1 << a) | (hb[a] if ev[a].is_fence else 0)
            for b in sc:
                if a == b or not (self.incl[a] >> b & 1):
                    continue
                ds = (1 << b) | (hb_pred[b] if ev[b].is_fence else 0)
                ok = any(scb[c] & ds & ~(1 << c) for c in _bits(cs))
                if not ok and ev[a].is_fence and ev[b].is_fence:
                    ok = bool(hb[a] >> b & 1) or bool(hb_eco_hb[a] >> b & 1)
                if ok:
                    psc[a] |= 1 << b
        # acyclic?
        state = {a: 0 for a in sc}

        def dfs(a) -> bool:
            state[a] = 1
            for b in _bits(psc[a]):
                if state[b] == 1:
                    return False
                if state[b] == 0 and not dfs(b):
                    return False
            state[a] = 2
            return True

        return all(state[a] != 0 or dfs(a) for a in sc)

    # ---- enumeration -----------------------------------------------------------------------

    def co_orders(self, loc, ws, rf, hap):
        """Orders of the writes `ws` to loc that happen (initial write first) that respect
        program order (po ⊆ location order ⊆ co) and RMW atomicity."""
        init = self.init_of.get(loc)
        rest = [w for w in ws if w != init and hap[w]]
        head = [init] if init is not None else []
        for perm in itertools.permutations(rest):
            lst = head + list(perm)
            p = {w: k for k, w in enumerate(lst)}
            ok = True
            for w in rest:
                if any(p[w2] < p[w] for w2 in _bits(self.po[w]) if w2 in p):
                    ok = False
                    break
                if self.rmwlike[w]:
                    src = rf.get(w)
                    if src is not None and self.strong[src] and p[w] != p[src] + 1:
                        ok = False
                        break
            if ok:
                yield lst

    def run(self, limit: int) -> set:
        from .solve import projection
        ev = self.ev
        keys = projection(self.elab.test)[0]
        choices = []
        for r in self.reads:
            ws = [w for w in self.writes_of[ev[r].loc]
                  if w != r and not (self.po[r] >> w & 1)]   # po ⊆ hb: never seen
            choices.append([None] + ws)
        out: set = set()
        count = 0
        for combo in itertools.product(*choices):
            count += 1
            if count > limit:
                raise ReferenceTooBig(f"more than {limit} candidate executions")
            rf = dict(zip(self.reads, combo))
            vals = self.values(rf)
            if vals is None:
                continue
            rval, wval = vals
            hap = [False] * self.n
            order = [e.order for e in ev]
            for i, e in enumerate(ev):
                if e.writes:
                    hap[i] = wval[i] is not NOWRITE
                if e.kind == "cmpxchg" and not hap[i]:
                    order[i] = e.fail_order
            rfl = [rf.get(i) for i in range(self.n)]
            per_loc = [(loc, list(self.co_orders(loc, ws, rf, hap)))
                       for loc, ws in self.writes_of.items()]
            names = [loc for loc, _ in per_loc]
            for cos in itertools.product(*(lst for _, lst in per_loc)):
                count += 1
                if count > limit:
                    raise ReferenceTooBig(f"more than {limit} candidate executions")
                co = dict(zip(names, cos))
                final = self.check(rfl, rval, wval, hap, order, co)
                if final is None:
                    continue
                state = []
                for k in keys:
                    if k.startswith("@"):
                        v = final.get(k[1:])
                    else:
                        tname, reg = k.split(":%", 1)
                        v = rval[self.reg_event[(tname, reg)]]
                    if v is UNKNOWN:
                        raise ReferenceUnbounded(
                            f"{k}: a consistent execution whose value depends on itself "
                            "through reads-from (out of thin air)")
                    state.append((k, _signed(v)))
                out.add(tuple(state))
        return out


def reference_outcomes(elab: Elab, limit: int = 2_000_000) -> set[tuple]:
    """The set of final states over all consistent candidate executions. Raises
    ReferenceTooBig if more than `limit` candidate executions would be examined."""
    return _Engine(elab).run(limit)
