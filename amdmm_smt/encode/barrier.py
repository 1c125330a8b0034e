"""Execution barriers (docs/semantics.md section 10): the runs of the barrier operations,
their UB rules, and the barrier synchronization they feed into happens-before.

Barrier operations do not read memory and the code is straight-line, so under `seed-002` the
barrier part of an execution is independent of the memory part: every run is enumerated here
in Python (Dartagnan-style: compute statically whatever can be), deduplicated by what memory
can observe (which fenced arrives barrier-execute-before which fenced waits, the isfirst
values), and only that goes to Z3: a choice among the defined outcomes, the barrier
synchronizes-with edges each outcome implies, and (pr170447) the happens-before consistency
of its barrier-modification-order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import z3

from ..elaborate.barrier import BarrierInfo
from ..elaborate.events import Elab, may_acquire, may_release
from ..errors import Unsupported
from ..ir import is_acquire, is_release
from .logic import AND, NOT, OR

# UB rule names, in the order docs/semantics.md 10.4 lists them
UNINIT, INIT_COUNT, SIGNAL_VAR, DROP_NEG, DROP_NO_JOIN, DROP_RACE, WAIT_NO_JOIN, PHASE_SEP, \
    CLUSTER_TWICE, NEVER, WIP_SIGNAL = (
        "uninitialised", "init-count", "signal-var-count", "drop-negative",
        "drop-without-join", "drop-race", "wait-without-join", "phase-separation",
        "cluster-arrive-twice", "wait-never-completes", "wip-signal-then-wait")

MAX_STATES = 3_000_000


@dataclass(frozen=True)
class Outcome:
    """One outcome of the barrier analysis."""
    pairs: frozenset          # (arrive id, wait id): bexec(arrive, wait), both fenced
    isfirst: tuple            # ((arrive id, 0|1), ...)
    bmo: tuple = ()           # pr170447: bmo pairs (a, b) that hb could contradict
    xb: frozenset = frozenset()   # barrier_hb executes: (event X, event Y) with X
    #                               program-ordered before A, B before Y, bexec(A, B)


@dataclass
class Analysis:
    """The barrier analysis of a test."""
    info: BarrierInfo
    outcomes: list[Outcome]                  # the defined outcomes, sorted
    ub: dict = field(default_factory=dict)   # rule -> (op label, run trace) of a first run
    runs: int = 0                            # complete or undefined runs explored (states)

    @property
    def all_undefined(self) -> bool:
        return bool(self.ub) and not self.outcomes

    def ub_rule(self) -> Optional[str]:
        order = [UNINIT, INIT_COUNT, SIGNAL_VAR, DROP_NEG, DROP_NO_JOIN, DROP_RACE,
                 WAIT_NO_JOIN, PHASE_SEP, CLUSTER_TWICE, NEVER, WIP_SIGNAL]
        for r in order:
            if r in self.ub:
                return r
        return None


# ---- runs (docs/semantics.md 10.4) -----------------------------------------------------

class _Runs:
    def __init__(self, elab: Elab):
        self.elab = elab
        self.info = info = elab.barrier
        self.opt = elab.model.options
        self.v003 = self.opt.barrier_model == "pr170447"
        self.ops = info.ops
        self.insts = sorted(info.objects, key=repr)
        self.ix = {o: i for i, o in enumerate(self.insts)}
        self.nw = len(info.waves)
        # the workgroup of every wave (cluster-arrive-twice)
        self.wg_of = [info.waves[w][:3] for w in range(self.nw)]
        self.relevant_arrives, self.relevant_waits = self._fenced()
        self.rel_after, self.acq_before = self._may_hb()
        self.alternating = self._alternating()
        self.reduce = True
        self.all_pairs = False
        self.outcomes: set = set()
        self.ub: dict = {}
        # R-bar-participation (docs 10.4): "constraints" (default) lets every wait choose its
        # phase and judges per barrier-modification-order; "run" is the token reading
        self.cons = self.opt.barrier_participation == "constraints"
        self.groups: dict = {}     # constraints: bmo key -> [(status, outcome or ub), ...]
        self.xb_on = self.opt.barrier_hb == "executes"
        self.ev_after, self.ev_before = self._around() if self.xb_on else ({}, {})

    def _around(self):
        """R-bar-hb-exec: for every memory event, the barrier operations of its wave it is
        program-ordered before (the first one suffices: bexec contains program order; after
        a wave's last operation, the per-workgroup cluster drops that follow it) and the last
        one program-ordered before it (S002: "X->A and B->Y in program-order")."""
        info = self.info
        wave_of = {t: w for w, ths in enumerate(info.wave_threads) for t in ths}
        after, before = {}, {}
        for e in self.elab.events:
            if e.is_init or e.thread not in wave_of:
                continue
            w = wave_of[e.thread]
            ids = info.wave_ops[w]
            nxt = [i for i in ids if self.ops[i].tpos.get(e.thread, -2) > e.pos]
            if nxt:
                after[e.id] = [nxt[0]]
            else:
                after[e.id] = [d for d in info.wg_drops if w in self.ops[d].after]
            prv = [i for i in ids if self.ops[i].tpos.get(e.thread, 1 << 30) < e.pos]
            if prv:
                before[e.id] = prv[-1]
        return after, before

    def xb_pairs(self, reach) -> frozenset:
        """R-bar-hb-exec: memory events X, Y of two threads with X program-ordered before a
        barrier operation A, B program-ordered before Y, and A barrier-executes-before B."""
        if not self.xb_on:
            return frozenset()
        ev = self.elab.events
        out = set()
        for x, As in self.ev_after.items():
            for y, b in self.ev_before.items():
                if ev[x].thread != ev[y].thread and any(reach[a] >> b & 1 for a in As):
                    out.add((x, y))
        return frozenset(out)

    def _fenced(self):
        """Arrives with a release fence program-ordered before them in a thread of their wave,
        waits with an acquire fence after them (docs 10.5: BR / BA)."""
        el, info = self.elab, self.info
        rel, acq = set(), set()
        for op in self.ops:
            if op.wave is None:
                continue
            for t, p in op.tpos.items():
                for e in el.events:
                    if e.thread != t or not e.is_fence:
                        continue
                    if op.kind == "arrive" and is_release(e.order) and e.pos < p:
                        rel.add(op.id)
                    if op.kind == "wait" and is_acquire(e.order) and e.pos > p:
                        acq.add(op.id)
        return rel, acq

    def _may_hb(self):
        """Operations with a release-capable event program-ordered after them (in a thread of
        their wave) / an acquire-capable event before them: only between those can
        happens-before relate two barrier operations (pr170447's bmo consistency)."""
        el = self.elab
        after, before = set(), set()
        if not self.v003:
            return after, before
        for op in self.ops:
            for t, p in op.tpos.items():
                for e in el.events:
                    if e.thread != t:
                        continue
                    if e.pos > p and may_release(e):
                        after.add(op.id)
                    if e.pos < p and may_acquire(e):
                        before.add(op.id)
        return after, before

    # state: (pcs, wgdone, inst, joined, waiting, tokens, matched, isfirst, trace-free)
    def initial(self):
        info = self.info
        pcs = []
        joined = set()
        for w, ids in enumerate(info.wave_ops):
            k = 0
            while k < len(ids) and self.ops[ids[k]].implicit == "join":
                joined.add((w, self.ix[self.ops[ids[k]].obj]))     # S002: join at launch
                k += 1
            pcs.append(k)
        inst = []
        for o in self.insts:
            hw = info.objects[o]["hw"]
            # (initialised, E, C, current phase, discarded) — hardware init at launch (S002)
            inst.append((hw is not None, hw or 0, 0, frozenset(), frozenset()))
        return (tuple(pcs), frozenset(), tuple(inst), frozenset(joined), frozenset(),
                frozenset(), frozenset(), frozenset(), ())

    def enabled(self, st):
        pcs, wgdone, _, _, waiting = st[0], st[1], st[2], st[3], st[4]
        out = []
        for w in range(self.nw):
            if w in waiting or pcs[w] >= len(self.info.wave_ops[w]):
                continue
            out.append(self.info.wave_ops[w][pcs[w]])
        for d in self.info.wg_drops:
            if d in wgdone:
                continue
            if all(pcs[w] >= len(self.info.wave_ops[w]) and w not in waiting
                   for w in self.ops[d].after):
                out.append(d)
        return out

    def successors(self, st, opid) -> list:
        """The states after one step of `opid`: one, or under R-bar-participation
        constraints one per phase a wait may take (S002: a completed phase of its object,
        none of whose operations follows W in thread-barrier-order, not taken by another
        wait of the same wave: "X does not barrier-participate-in another distinct barrier
        wait W' in the same thread as W"); none when no phase is available yet."""
        op = self.ops[opid]
        if not (self.cons and op.kind == "wait"):
            return [self.step(st, opid)]
        if op.obj is None:
            return []                       # waits on nothing: never completes
        pcs, wgdone, inst, joined, waiting, tokens, matched, isfirst, bmo = st
        i = self.ix[op.obj]
        phases = dict(tokens).get(("done", i), ())
        mine = {P for (W, P) in matched if self.ops[W].wave == op.wave}
        out = []
        for P in phases:
            if not isinstance(P, frozenset) or P in mine:
                continue
            npcs = list(pcs)
            npcs[op.wave] += 1
            out.append((tuple(npcs), wgdone, inst, joined, waiting, tokens,
                        matched | {(opid, P)}, isfirst, bmo))
        return out

    def step(self, st, opid):
        """Execute one operation: the new state, or ("UB", rule)."""
        pcs, wgdone, inst, joined, waiting, tokens, matched, isfirst, bmo = st
        op = self.ops[opid]
        pcs = list(pcs)
        if op.wave is not None:
            pcs[op.wave] += 1
        else:
            wgdone = wgdone | {opid}
        tokens = dict(tokens)
        joined = set(joined)
        waiting = set(waiting)
        matched = set(matched)
        isfirst = set(isfirst)
        inst = list(inst)
        if op.kind == "join":
            if op.ends is not None:
                joined.discard((op.wave, self.ix[op.ends]))   # S002 mutual exclusion
            if op.obj is not None:
                joined.add((op.wave, self.ix[op.obj]))
        elif op.kind == "wait":
            if op.obj is None:
                pcs[op.wave] -= 1
                waiting.add(op.wave)          # waits on nothing: never completes
            else:
                key = (op.wave, self.ix[op.obj])
                if key in tokens:             # S003 note: "Skip the next barrier wait"
                    matched.add((opid, tokens.pop(key)))
                else:
                    pcs[op.wave] -= 1
                    waiting.add(op.wave)      # "sleeping because of a barrier wait"
        else:
            if op.obj is None:
                return ("UB", DROP_NO_JOIN)   # S002: a drop needs a join joined-before it
            i = self.ix[op.obj]
            init, E, C, cur, disc = inst[i]
            if op.kind == "init":
                if op.count is None or op.count <= 0:
                    return ("UB", INIT_COUNT)   # S002: "unsigned positive integer k"
                inst[i] = (True, op.count, 0, frozenset(), disc | cur)
                if self.cons:      # the bmo key records where an init discarded a phase
                    tokens[("done", i)] = tokens.get(("done", i), ()) + (("init", opid),)
            else:
                if not init:
                    if (op.kind == "arrive" and op.count is not None
                            and self.opt.named_init == "signal-var"):
                        init, E, C = True, op.count, 0     # R-bar-named-init signal-var
                    else:
                        return ("UB", UNINIT)   # S002: first element of bmo must be an init
                if op.kind == "arrive":
                    if op.count is not None:
                        # S002 arrive: "cannot be less than or equal to the arrive count";
                        # signal_var_count table: "must be greater than or equal to" (10.7)
                        if (op.count < C if self.opt.signal_var_count == "table"
                                else op.count <= C):
                            return ("UB", SIGNAL_VAR)
                        E = op.count
                    if op.regs:
                        isfirst.add((opid, 1 if C == 0 else 0))   # R-bar-isfirst
                    if op.obj[0] == "cluster" and any(
                            self.ops[a].kind == "arrive" and self.ops[a].wave is not None
                            and self.wg_of[self.ops[a].wave] == self.wg_of[op.wave]
                            for a in cur):
                        return ("UB", CLUSTER_TWICE)   # S002: one wave per workgroup
                    C += 1
                else:   # drop
                    drops_for = (op.wave,) if op.wave is not None else op.after
                    if self.opt.drop_race == "completion" and not self.v003:
                        # R-bar-drop-race completion: "unless the barrier completes before
                        # the barrier drop"
                        for a in cur | disc:
                            ao = self.ops[a]
                            if ao.kind == "arrive" and ao.wave in drops_for:
                                return ("UB", DROP_RACE)
                    E -= 1
                    if E < 0:
                        return ("UB", DROP_NEG)   # S002: expected count negative
                    for w in drops_for:
                        joined.discard((w, i))
                cur = cur | {opid}
                if self.v003:
                    bmo = bmo + (opid,)
                if C == E:                        # S002: the barrier is completed
                    phase = cur
                    C, cur = 0, frozenset()
                    if self.cons:
                        # R-bar-participation: the phase is closed; which waits it
                        # participates in is chosen when they step (successors)
                        tokens[("done", i)] = tokens.get(("done", i), ()) + (phase,)
                    for (w, j) in (() if self.cons else sorted(joined)):
                        if j != i:
                            continue
                        if w in waiting:
                            wop = self.info.wave_ops[w][pcs[w]]
                            if self.ops[wop].obj == op.obj:
                                matched.add((wop, phase))
                                waiting.discard(w)
                                pcs[w] += 1
                                continue
                        tokens[(w, i)] = phase
                inst[i] = (init, E, C, cur, disc)
        return (tuple(pcs), wgdone, tuple(inst), frozenset(joined), frozenset(waiting),
                frozenset(tokens.items()), frozenset(matched), frozenset(isfirst), bmo)

    def _alternating(self) -> set:
        """Workgroup barriers on which every wave alternates arrive, wait (each arrive is
        followed on that instance by a wait before its next arrive or its drop). There a wait
        step may be explored alone (partial-order reduction): while a wave that arrived sits
        before its wait, no second completion can happen (E counts it, the other waves arrive
        at most once before their own waits), so waiting now or after the completion (a token
        consumed later) matches the same phase."""
        out = set()
        for o in self.insts:
            if o[0] != "wg":
                continue
            ok = True
            for ids in self.info.wave_ops:
                seq = [self.ops[i].kind for i in ids if self.ops[i].obj == o
                       and not self.ops[i].implicit]
                if len(seq) % 2 or any(seq[k] != ("arrive", "wait")[k % 2]
                                       for k in range(len(seq))):
                    ok = False
            if ok:
                out.add(o)
        return out

    def _quiet(self, st, en):
        if self.cons:
            return self._quiet_ops(st, en)
        return self._quiet_all(st, en)

    def _quiet_all(self, st, en):
        """Partial-order reduction (waits on alternating workgroup barriers: _alternating); an enabled arrive (no isfirst, no count) or drop on a
        workgroup barrier that no wave will wait on again (none blocked on it, no wait on it
        left in any wave) is independent of every other step: its only effects are E and C
        of that instance (order-independent: E only decreases, C's completions are delivered
        to nobody who waits) and the formal drop-race rule reads participation, which no
        longer changes. So one such step is explored alone (seed-002, drop_race formal)."""
        for opid in en:
            op = self.ops[opid]
            if op.kind == "wait" and op.obj in self.alternating:
                return [opid]
        return self._quiet_ops(st, en)

    def _quiet_ops(self, st, en):
        """The arrive / drop reduction alone (R-bar-participation constraints: a wait that
        steps at once could take only the phases completed so far, so waits are not
        reduced)."""
        pcs, waiting = st[0], st[4]
        if self.v003 or self.opt.drop_race != "formal":
            return None
        for opid in en:
            op = self.ops[opid]
            if op.kind not in ("arrive", "drop") or op.regs or op.count is not None \
                    or op.obj is None or op.obj[0] != "wg":
                continue
            if any(w in waiting and self.ops[self.info.wave_ops[w][pcs[w]]].obj == op.obj
                   for w in range(self.nw)):
                continue
            if any(self.ops[i].kind == "wait" and self.ops[i].obj == op.obj
                   for w in range(self.nw) for i in self.info.wave_ops[w][pcs[w]:]):
                continue
            return [opid]
        return None

    def explore(self):
        start = self.initial()
        seen = {start: None}
        stack = [start]
        parent: dict = {start: None}
        while stack:
            st = stack.pop()
            en = self.enabled(st)
            if self.reduce:
                en = self._quiet(st, en) or en
            moved = False
            for opid in en:
                for nxt in self.successors(st, opid):
                    moved = True
                    if nxt[0] == "UB":
                        if nxt[1] not in self.ub:
                            self.ub[nxt[1]] = (self.ops[opid].label,
                                               self._trace(st, parent)
                                               + [self.ops[opid].label])
                        continue
                    if nxt not in seen:
                        seen[nxt] = None
                        parent[nxt] = (st, opid)
                        if len(seen) > MAX_STATES:
                            raise Unsupported(f"more than {MAX_STATES} states of the barrier "
                                              "operations: too many waves for the "
                                              "enumeration of runs (docs/semantics.md 10.4)",
                                              self.elab.test.file, self.elab.test.line)
                        stack.append(nxt)
            if not moved:
                self._finish(st, parent)
        self.states = len(seen)
        if self.cons:
            self._judge_groups()

    def _judge_groups(self):
        """R-bar-participation: a barrier-modification-order (its phases, in order, per
        object, and what the isfirst registers read) is defined when some participation
        satisfies every constraint and every rule; only when none does and some participation
        that satisfies the constraints breaks a rule saying "otherwise, the behavior is
        undefined" is it undefined; when every participation breaks a constraint (drop race,
        phase separation) it is no execution (S002 footnote [0])."""
        invalid: dict = {}
        for key in sorted(self.groups, key=repr):
            runs = self.groups[key]
            defined = [o for (k, o) in runs if k == "ok"]
            if defined:
                self.outcomes.update(defined)
                continue
            for (k, o) in runs:
                if k == "ub" and o[0] not in self.ub:
                    self.ub[o[0]] = o[1]
                if k == "no":
                    invalid.setdefault(o[0], o[1])
        if not self.outcomes and not self.ub:
            # no barrier-modification-order has a participation that keeps the constraints:
            # the documents give the program no execution, so no defined behaviour (S002:
            # arriving then dropping "may cause undefined behavior"); the rules it breaks
            self.ub.update(invalid)

    def _trace_ids(self, st, parent) -> list[int]:
        out = []
        while parent.get(st) is not None:
            st, opid = parent[st]
            out.append(opid)
        return out[::-1]

    def _trace(self, st, parent) -> list[str]:
        out = []
        while parent.get(st) is not None:
            st, opid = parent[st]
            out.append(self.ops[opid].label)
        return out[::-1]

    # ---- the checks on a finished run (docs 10.4) ----
    def _finish(self, st, parent):
        pcs, wgdone, inst, joined, waiting, tokens, matched, isfirst, bmo = st
        if self.cons:
            # the bmo key: per object the closed phases and init markers in order, the open
            # phase; the isfirst values (docs 10.4, R-bar-participation)
            key = (tuple(sorted(((k[1], v) for k, v in tokens if k[0] == "done"),
                                key=repr)),
                   tuple((x[3], x[4]) for x in inst), tuple(sorted(isfirst)), bmo)
            stuck = [w for w in range(self.nw) if pcs[w] < len(self.info.wave_ops[w])]
            if stuck:
                wop = self.info.wave_ops[stuck[0]][pcs[stuck[0]]]
                self.groups.setdefault(key, []).append(
                    ("ub", (NEVER, (self.ops[wop].label, self._trace(st, parent)))))
                return
            pw = {W: P for (W, P) in matched}
            reach = self._bexec(pw)
            rule = self._check(pw, reach, (DROP_RACE, PHASE_SEP))
            if rule:
                self.groups.setdefault(key, []).append(
                    ("no", (rule[0], (self.ops[rule[1]].label, self._trace(st, parent)))))
                return
            rule = self._check(pw, reach, (WAIT_NO_JOIN, WIP_SIGNAL))
            if rule:
                self.groups.setdefault(key, []).append(
                    ("ub", (rule[0], (self.ops[rule[1]].label, self._trace(st, parent)))))
                return
            self.groups.setdefault(key, []).append(("ok", self._outcome(pw, reach, isfirst,
                                                                         bmo)))
            return
        if waiting:
            w = min(waiting)
            wop = self.info.wave_ops[w][pcs[w]]
            self._ub(NEVER, wop, st, parent)      # S002: a wait that never completes
            return
        pw = {W: P for (W, P) in matched}
        reach = self._bexec(pw)
        rule = self._check(pw, reach)
        if rule:
            self._ub(rule[0], rule[1], st, parent)
            return
        self.outcomes.add(self._outcome(pw, reach, isfirst, bmo))

    def _outcome(self, pw, reach, isfirst, bmo) -> Outcome:
        pairs = frozenset((a, w) for w in pw if w in self.relevant_waits
                          for a in self.relevant_arrives if reach[a] >> w & 1)
        bm = ()
        if self.v003:
            # only the bmo pairs (a before b) that happens-before could contradict: b's wave
            # has a release-capable event after b, a's wave an acquire-capable one before a
            # (otherwise hb(b, a) is impossible and the order is invisible)
            bm = tuple(sorted((a, b) for i, a in enumerate(bmo) for b in bmo[i + 1:]
                              if self.ops[a].obj == self.ops[b].obj
                              and self.ops[a].wave is not None and self.ops[b].wave is not None
                              and self.ops[a].wave != self.ops[b].wave
                              and (self.all_pairs or (b in self.rel_after
                                                      and a in self.acq_before))))
        return Outcome(pairs, tuple(sorted(isfirst)), bm, self.xb_pairs(reach))

    def _ub(self, rule, opid, st, parent):
        if rule not in self.ub:
            self.ub[rule] = (self.ops[opid].label, self._trace(st, parent))

    def _bexec(self, pw) -> dict:
        """barrier-executes-before as reachability bitsets: program order of each wave,
        participation, hardware init / launch join before every operation of the instance,
        every operation of a workgroup before its per-workgroup drop (S002)."""
        succ: dict[int, set] = {op.id: set() for op in self.ops}
        for ids in self.info.wave_ops:
            for a, b in zip(ids, ids[1:]):
                succ[a].add(b)
        for W, P in pw.items():
            for x in P:
                succ[x].add(W)
        for op in self.ops:
            if op.implicit in ("init", "join") and op.obj is not None:
                for o2 in self.ops:
                    if o2.obj == op.obj and o2.id != op.id and o2.implicit not in (
                            "init", op.implicit):
                        succ[op.id].add(o2.id)
            if op.wave is None and op.kind == "drop":
                for w in op.after:
                    if self.info.wave_ops[w]:
                        succ[self.info.wave_ops[w][-1]].add(op.id)
        reach: dict[int, int] = {}
        order = self._topo(succ)
        for n in reversed(order):
            r = 1 << n
            for m in succ[n]:
                r |= reach[m]
            reach[n] = r
        # strict: remove self
        return {n: r & ~(1 << n) for n, r in reach.items()}

    @staticmethod
    def _topo(succ) -> list[int]:
        indeg = {n: 0 for n in succ}
        for n, ms in succ.items():
            for m in ms:
                indeg[m] += 1
        ready = [n for n, d in indeg.items() if d == 0]
        out = []
        while ready:
            n = ready.pop()
            out.append(n)
            for m in succ[n]:
                indeg[m] -= 1
                if indeg[m] == 0:
                    ready.append(m)
        assert len(out) == len(succ), "barrier-executes-before has a cycle"
        return out

    def _check(self, pw, reach, only=None):
        """The first rule of 10.4's order the run breaks (of `only`, when given)."""
        ops = self.ops
        want = set(only) if only is not None else None

        def on(rule):
            return want is None or rule in want
        phase_of: dict[int, frozenset] = {}
        waits_of: dict[frozenset, list] = {}
        for W, P in pw.items():
            waits_of.setdefault(P, []).append(W)
            for x in P:
                phase_of[x] = P
        if self.v003:
            # S003 WIP: "The immediate successor of S in thread-barrier-order<BO> is a barrier
            # wait" (R-bar-wip: undefined behaviour)
            if not on(WIP_SIGNAL):
                return None
            for ids in self.info.wave_ops:
                for k, a in enumerate(ids):
                    if ops[a].kind != "arrive":
                        continue
                    nxt = next((b for b in ids[k + 1:] if ops[b].obj == ops[a].obj), None)
                    if nxt is None or ops[nxt].kind != "wait":
                        return (WIP_SIGNAL, a)
            return None
        # S002 drop races (formal): A -> D in tbo, A participates in some wait, none of which
        # barrier-executes-before D
        if self.opt.drop_race == "formal" and on(DROP_RACE):
            for d in ops:
                if d.kind != "drop" or d.obj is None:
                    continue
                ws = (d.wave,) if d.wave is not None else d.after
                for a in ops:
                    if a.kind != "arrive" or a.obj != d.obj or a.wave not in ws:
                        continue
                    if d.wave is not None and a.seq > d.seq:
                        continue
                    P = phase_of.get(a.id)
                    if P is None:
                        continue
                    if not any(reach[W] >> d.id & 1 for W in waits_of[P]):
                        return (DROP_RACE, d.id)
        # S002 wait rule: a join barrier-joined-before W that barrier-executes-before some
        # participant (launch joins execute before everything on the instance)
        for W, P in (pw.items() if on(WAIT_NO_JOIN) else ()):
            J = ops[W].join
            if J is None:
                return (WAIT_NO_JOIN, W)
            if ops[J].implicit != "join" and not any(reach[J] >> x & 1 for x in P):
                return (WAIT_NO_JOIN, W)
        # S002 phase separation
        for W, P in (pw.items() if on(PHASE_SEP) else ()):
            cls = P | frozenset(waits_of[P])
            for a in P:
                for x in ops:
                    if x.obj != ops[W].obj or x.id in cls:
                        continue
                    px = phase_of.get(x.id) if x.kind != "wait" else pw.get(x.id)
                    if px is None or px not in waits_of:
                        continue       # phase-with nothing
                    if reach[a] >> x.id & 1 and reach[x.id] >> W & 1:
                        return (PHASE_SEP, W)
        return None


def _uniform_phases(r: _Runs) -> Optional[dict]:
    """The static fast path: every object is a workgroup barrier (hardware
    init with E = the number of waves, every wave joined at launch), there are no isfirst
    registers and no count updates, and every wave of a workgroup performs the same number n
    of arrive-then-wait pairs (s.barrier, or signal then wait). Then every run has the same
    structure (docs 10.4): phase k is the set of k-th arrives (a wave's (k+1)-th arrive
    follows its k-th wait, which needs phase k complete; E counts every wave until its drop,
    which follows its last wait), every wave's k-th wait matches phase k (no later phase can
    complete before it), and no UB rule is broken (each arrive participates in its own
    wave's next wait, which is program-ordered before the drop; phase k's operations reach
    only waits of phases >= k). Returns the wait -> phase map, or None when the pattern does
    not apply (tests/test_barrier.py checks it against the enumeration). Under pr170447 the
    same holds (the WIP rule "a signal's successor is a wait" holds) when no bmo order between
    two waves could be contradicted by happens-before (see _may_hb)."""
    info = r.info
    if info.isfirst_regs or info.wg_drops or any(o[0] != "wg" for o in r.insts):
        return None
    if r.v003 and any(a.obj == b.obj and a.wave != b.wave and b.id in r.rel_after
                      and a.id in r.acq_before for a in r.ops for b in r.ops
                      if a.modifies and b.modifies and a.wave is not None
                      and b.wave is not None):
        return None    # pr170447: the bmo order could matter (hb consistency)
    pw: dict = {}
    by_inst: dict = {}
    for w, ids in enumerate(info.wave_ops):
        core = [r.ops[i] for i in ids if not r.ops[i].implicit]
        if len(core) % 2 or any(op.count is not None for op in core):
            return None
        pairs = list(zip(core[::2], core[1::2]))
        if any(a.kind != "arrive" or b.kind != "wait" or a.obj != b.obj for a, b in pairs):
            return None
        by_inst.setdefault(info.waves[w][:3], []).append(pairs)
    for o in r.insts:
        members = by_inst.get(o[1:], [])
        if len(members) != info.objects[o]["hw"] or len({len(m) for m in members}) != 1:
            return None    # a wave of the workgroup without barriers, or unequal counts
        for k in range(len(members[0])):
            phase = frozenset(m[k][0].id for m in members)
            for m in members:
                pw[m[k][1].id] = phase
    return pw


def analyse(elab: Elab, enumerate_only: bool = False, reduce: bool = True,
            all_pairs: bool = False) -> Analysis:
    """`enumerate_only`: no static fast path; `reduce`: partial-order reduction (both only
    for tests/test_barrier.py, which checks that they change nothing). `all_pairs`: the
    outcomes' (arrive, wait) pairs over every arrive and wait a thread performs, not only the
    fenced ones (a model file decides which events pair: models/barrier.cat, `barSig`)."""
    r = _Runs(elab)
    r.reduce = reduce
    r.all_pairs = all_pairs
    if all_pairs:
        r.relevant_arrives = {o.id for o in r.ops if o.kind == "arrive" and o.tpos
                              and o.obj is not None}
        r.relevant_waits = {o.id for o in r.ops if o.kind == "wait" and o.tpos
                            and o.obj is not None}
    pw = None if enumerate_only else _uniform_phases(r)
    if pw is not None:
        reach = r._bexec(pw)
        assert r._check(pw, reach) is None
        pairs = frozenset((a, w) for w in pw if w in r.relevant_waits
                          for a in r.relevant_arrives if reach[a] >> w & 1)
        a = Analysis(elab.barrier, [Outcome(pairs, (), (), r.xb_pairs(reach))], {}, 1)
        a.relevant = (r.relevant_arrives, r.relevant_waits)
        return a
    r.explore()
    a = Analysis(elab.barrier, sorted(r.outcomes, key=repr), r.ub, r.states)
    a.relevant = (r.relevant_arrives, r.relevant_waits)
    return a


# ---- the encoding (docs/semantics.md 10.5) ------------------------------------------------

def encode_choice(x, an: Analysis) -> None:
    """A choice among the defined outcomes; isfirst registers; the active (arrive, wait)
    pairs. Sets x.bar_pair[(a, w)] and x.bar_regs."""
    outs = an.outcomes
    x.bar = an
    x.bar_regs = {}
    info = an.info
    for key, v in info.const_regs.items():
        x.bar_regs[key] = (False, z3.BitVecVal(v, 32))
    if not outs:
        x.ctx.add(False, "no defined barrier run: every execution is undefined")
        x.bar_pick = []
        x.bar_pair = {}
        x.bar_xb = {}
        for key in info.isfirst_regs:
            x.bar_regs[key] = (False, z3.BitVecVal(0, 32))
        return
    if len(outs) == 1:
        picks = [True]
    else:
        ch = x.ctx.fresh_int("barrier_outcome")
        x.ctx.add(AND(ch >= 0, ch < len(outs)), "barrier outcome")
        picks = [ch == k for k in range(len(outs))]
    x.bar_pick = picks
    pair: dict = {}
    for k, o in enumerate(outs):
        for p in o.pairs:
            pair.setdefault(p, []).append(picks[k])
    x.bar_pair = {p: OR(v) for p, v in pair.items()}
    xb: dict = {}
    for k, o in enumerate(outs):
        for p in o.xb:
            xb.setdefault(p, []).append(picks[k])
    x.bar_xb = {p: OR(v) for p, v in xb.items()}
    for key, opid in info.isfirst_regs.items():
        val = None
        for k, o in enumerate(outs):
            v = dict(o.isfirst).get(opid, 0)
            val = z3.BitVecVal(v, 32) if val is None else z3.If(picks[k], z3.BitVecVal(v, 32),
                                                                 val) if picks[k] is not True \
                else z3.BitVecVal(v, 32)
        x.bar_regs[key] = (False, val)


def barrier_sw(x) -> dict:
    """bsw_AS(F, G) (docs 10.5): release fence F before a fenced arrive A, acquire fence G
    after a wait W, A barrier-executes-before W (S002 / UP 2.3 "A barrier-executes-before W"),
    scopes overlap (R-bar-overlap), no -one-as, AS in both fences' address spaces."""
    el = x.elab
    info = el.barrier
    out: dict[str, dict] = {sp: {} for sp in el.spaces}
    fences = [e for e in el.events if e.is_fence]
    for (a, w), on in x.bar_pair.items():
        A, W = info.ops[a], info.ops[w]
        rels = [f for f in fences if is_release(f.order) and f.thread in A.tpos
                and f.pos < A.tpos[f.thread]]
        acqs = [g for g in fences if is_acquire(g.order) and g.thread in W.tpos
                and g.pos > W.tpos[g.thread]]
        for f in rels:
            for g in acqs:
                if f.thread == g.thread or f.one_as or g.one_as:
                    continue               # UP 2.3: "they cannot have one-as"
                for sp in el.spaces:
                    if sp not in el.sync_spaces(f) or sp not in el.sync_spaces(g):
                        continue           # UP 2.3: "address spaces both include AS"
                    if el.model.options.barrier_scopes == "inclusive":
                        ok = el.inclusive(f, g, sp)
                    else:                  # R-bar-overlap: the scope instances intersect
                        ok = (el.contains(f, el.scope_in(f, sp), g)
                              or el.contains(g, el.scope_in(g, sp), f))
                    if ok:
                        k = (f.id, g.id)
                        out[sp][k] = OR(out[sp].get(k, False), on)
    return out


def hb_consistency(x) -> None:
    """pr170447 (S003): "Barrier-modification-order<BO> is consistent with happens-before".
    An outcome whose bmo puts a before b is excluded when b happens-before a (some memory
    event after b in b's wave happens-before some memory event before a in a's wave)."""
    el = x.elab
    info = el.barrier
    memo: dict = {}

    def hb_ops(b, a):
        """some event after barrier operation b happens-before some event before a"""
        if (b, a) not in memo:
            A, Bo = info.ops[a], info.ops[b]
            memo[(b, a)] = OR(x.hb(e, f, sp) for e in el.events
                              if not e.is_init and e.thread in Bo.tpos
                              and e.pos > Bo.tpos[e.thread]
                              for f in el.events
                              if not f.is_init and f.thread in A.tpos
                              and f.pos < A.tpos[f.thread]
                              for sp in el.spaces)
        return memo[(b, a)]
    for k, o in enumerate(x.bar.outcomes):
        bad = [hb_ops(b, a) for (a, b) in o.bmo]
        if bad:
            x.ctx.add(OR(NOT(x.bar_pick[k]), NOT(OR(bad))))
