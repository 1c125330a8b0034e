"""Execution barriers, explicitly (docs/semantics.md section 10; S002 ~3760-4180 the
execution-barrier model and its memory-model notes, S003 = PR 170447, UP§2.3).

Written from section 10 and the seed documents, not from `encode/barrier.py`, and computed
from the instructions themselves (`ir.Instr`: intrinsic names and arguments); the shared
elaboration gives only threads, placement (`Elab.paths`), memory events and `contains`.
Convergence within a wave (10.3, 15.10) is checked again here, on its own
(`BarrierProgram._convergent`).

1. `BarrierProgram` turns each wavefront's barrier instructions into barrier operations
   (10.3: per wave, one operation per instruction, `s.barrier` = arrive then wait, NULL
   no-ops, the current named object, the implicit hardware init / launch join / end drop).
2. `BarrierProgram.runs` enumerates every run (10.4: any non-blocked wave steps; object
   state E, C, current phase; tokens), depth first with memoisation on the state together
   with what the run has decided so far (phases as sets, which wait matched which phase,
   isfirst values), so that runs differing only in the order of arrives inside a phase are
   explored once (under pr170447 the state also carries what bmo forbids of hb).
3. For every distinct run it derives barrier-participates-in, barrier-executes-before, the
   phase classes, checks the S002 "must" properties that hold by construction (bexec acyclic
   and consistent with every bmo, one wait per phase per wave) and every undefined-behaviour
   rule of 10.4, and produces the barrier synchronizes-with edges of 10.5 per address space
   (consumed by sync.hbs_per_space) and the isfirst register values.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..elaborate.barrier import WaveDivergent
from ..ir import WAVEFRONT, WORKGROUP, CLUSTER, is_acquire, is_release
from .common import ReferenceTooBig, _bits

P = "llvm.amdgcn.s.barrier"

# docs/semantics.md 10.4: the UB rules in the order the report names the first one found
RUN_STATES = 1_000_000          # most barrier run states explored (ReferenceTooBig beyond)

RULES = ("uninitialised", "init-count", "signal-var-count", "drop-negative",
         "drop-without-join", "drop-race", "wait-without-join", "phase-separation",
         "cluster-arrive-twice", "wip-signal-then-wait", "wait-never-completes")


@dataclass
class Op:
    id: int
    kind: str                    # init | join | drop | arrive | wait
    inst: Optional[tuple]        # instance key; None: a wait on nothing / a leave with nothing
    wave: Optional[int]          # None: hardware init or launch join (see `implicit`)
    line: int
    k: int = 0                   # init: k; arrive: signal.var K (0: no update)
    implicit: str = ""           # "" | "init" | "join" | "drop"
    pos: dict = field(default_factory=dict)    # thread index -> code position
    regs: list = field(default_factory=list)   # isfirst: (thread name, register)
    text: str = ""

    @property
    def modifies(self) -> bool:      # S002 "Barrier modification operations": init drop arrive
        return self.kind in ("init", "drop", "arrive")


class BarrierProgram:
    """The barrier operations of one elaborated test (docs/semantics.md 10.2-10.3)."""

    def __init__(self, elab):
        self.elab = elab
        self.opts = elab.model.options
        test = elab.test
        self.v003 = self.opts.barrier_model == "pr170447"
        # R-bar-participation (docs 10.4): "constraints" lets each wait choose the phase it
        # takes and judges the runs per barrier-modification-order; "run": tokens decide
        self.cons = self.opts.barrier_participation == "constraints"
        paths = elab.paths
        # S002 "Barrier operations are convergent within a wave": group threads by wavefront
        wave_keys: list = []
        self.wave_threads: list[list[int]] = []
        for ti in range(len(test.threads)):
            k = paths[ti][WAVEFRONT]
            if k not in wave_keys:
                wave_keys.append(k)
                self.wave_threads.append([])
            self.wave_threads[wave_keys.index(k)].append(ti)
        for ts in self.wave_threads:
            self._convergent(test, ts)
        self.wave_wg = [paths[ts[0]][WORKGROUP] for ts in self.wave_threads]
        self.wave_cl = [paths[ts[0]][CLUSTER] for ts in self.wave_threads]
        self.ops: list[Op] = []
        self.seq: list[list[int]] = []          # wave (and pseudo-wave) -> op ids in order
        self.const_regs: dict = {}              # isfirst on NULL: 0 (10.3)
        for w, ts in enumerate(self.wave_threads):
            self.seq.append(self._expand(w, ts))
        self._implicit()
        self._events_around()
        self._eager_waits()

    @staticmethod
    def _convergent(test, ts: list) -> None:
        """S002 "Barrier operations are convergent within a wave ... Thus, barrier operations
        can only be performed in wave-uniform control flow" (docs 10.3, 15.9, 15.10): every
        thread of the wave performs the same barrier instructions (intrinsic and arguments),
        and two threads that run one group's code perform them at the same places of that
        code (R-spmd-site: the parser's `site`, the instruction's place in the group's code
        after inlining). Checked here on its own, every pair of the wave, after the shared
        elaboration: a difference raises WaveDivergent, judged by the driver as undefined."""
        def seq(ti, with_site):
            return [(ins.intrinsic, ins.args) + ((ins.site,) if with_site else ())
                    for ins in test.threads[ti].code if ins.kind == "barrier"]
        for a in ts:
            for b in ts:
                if b <= a:
                    continue
                ga, gb = test.threads[a].group, test.threads[b].group
                same = ga is not None and ga == gb
                if seq(a, same) != seq(b, same):
                    line = next((i.line for i in test.threads[a].code if i.kind == "barrier"),
                                test.threads[a].line)
                    na, nb = test.threads[a].name, test.threads[b].name
                    raise WaveDivergent(f"threads {na} and {nb} share a wavefront but perform "
                                        "different barrier operations (reference engine)",
                                        test.file, line, (na, nb))

    def _eager_waits(self):
        """Partial-order reduction (clarified by the reference engine author; sound, not a
        reading). On a hardware-initialised workgroup barrier I whose every wave performs
        (arrive wait)* then its end drop, the expected count is the number of waves that
        have not dropped, and each wave adds at most one operation to a phase before its
        wait. So between a wave's arrive and its wait at most one completion of I happens
        (the next phase needs this wave's next arrive), and executing the wait at once
        (blocked, then woken by that completion) or later (a token, then consumed) gives the
        same match and the same state; the wait touches nothing any other wave reads. The
        runs therefore explore such a wait alone, as soon as it is the wave's next step."""
        self.eager = set()
        if self.cons:
            return        # a wait stepping at once could take only the phases closed so far
        for inst in self.hw:
            if inst[0] != "wg":
                continue
            waits, ok = [], True
            for w in range(len(self.wave_threads)):
                if self.wave_wg[w] != inst[1]:
                    continue
                mine = [o for o in self.seq[w] if self.ops[o].inst == inst]
                kinds = [self.ops[o].kind for o in mine]
                if kinds[-1:] != ["drop"] or kinds[:-1] != ["arrive", "wait"] * (
                        (len(kinds) - 1) // 2) or any(self.ops[o].k for o in mine):
                    ok = False
                    break
                waits += [o for o in mine if self.ops[o].kind == "wait"]
            if ok:
                self.eager.update(waits)

    def _events_around(self):
        by_pos = {}
        for e in self.elab.events:
            if not e.is_init:
                by_pos.setdefault(e.thread, []).append(e)
        # pr170447: bmo consistent with happens-before (10.5): for mod ops b (before) and a,
        # hb(b', a') between events po-after one and po-before the other
        self.after_ev = {}
        self.before_ev = {}
        for op in self.ops:
            if not op.modifies:
                continue
            if op.implicit == "init":
                self.after_ev[op.id], self.before_ev[op.id] = [], []
                continue
            ths = (self.wave_threads[op.wave] if op.wave < len(self.wave_threads)
                   else [t for v in self.after[op.wave] for t in self.wave_threads[v]])
            evs = [e for t in ths for e in by_pos.get(t, [])]
            if op.implicit == "drop":
                self.after_ev[op.id] = []
                self.before_ev[op.id] = [e.id for e in evs]
            else:
                self.after_ev[op.id] = [e.id for e in evs if e.pos > op.pos[e.thread]]
                self.before_ev[op.id] = [e.id for e in evs if e.pos < op.pos[e.thread]]

    # ---- 10.3: expansion --------------------------------------------------------------

    def _new(self, kind, inst, wave, line, **kw) -> int:
        op = Op(len(self.ops), kind, inst, wave, line, **kw)
        self.ops.append(op)
        return op.id

    def _target(self, arg, w):
        """The object an argument names (S002 IDs table): -1 the workgroup barrier, -3 the
        cluster barrier, 0 / null the NULL named barrier, a pointer a named barrier."""
        kind, v = arg
        if kind == "null" or (kind == "int" and v == 0):
            return "null"
        if kind == "ptr":
            return ("named", v, self.wave_wg[w])
        if v == -1:
            return ("wg", self.wave_wg[w])
        if v == -3:
            return ("cluster", self.wave_cl[w])
        return ("id", v)          # rejected by the elaboration (10.2); never reached

    def _expand(self, w: int, ts: list[int]) -> list[int]:
        test = self.elab.test
        per_thread = [[(pos, ins) for pos, ins in enumerate(test.threads[ti].code)
                       if ins.kind == "barrier"] for ti in ts]
        out: list[int] = []
        cur = None                # the wave's current named object: None | "null" | key
        wg = ("wg", self.wave_wg[w])
        for i, (_, ins) in enumerate(per_thread[0]):
            pos = {ti: per_thread[j][i][0] for j, ti in enumerate(ts)}
            regs = [(test.threads[ti].name, per_thread[j][i][1].reg) for j, ti in enumerate(ts)
                    if per_thread[j][i][1].reg]
            name, args, line = ins.intrinsic, ins.args, ins.line

            def add(kind, inst, **kw):
                out.append(self._new(kind, inst, w, line, pos=pos, text=ins.text, **kw))
            if name == P:
                # S002 "Performs a barrier arrive operation immediately followed by a barrier
                # wait operation on the workgroup barrier object"
                add("arrive", wg)
                add("wait", wg)
            elif name in (P + ".signal", P + ".signal.isfirst", P + ".signal.var"):
                t = self._target(args[0], w)
                if t == "null":
                    # S002 table: arrive "is a no-op on the NULL named barrier object"
                    for r in regs:
                        self.const_regs[r] = 0
                    continue
                k = 0
                if name == P + ".signal.var" and t[0] == "named":
                    # S002 signal.var: "only set when the argument is not zero, and when the
                    # barrier object is a named barrier object"
                    k = args[1][1]
                add("arrive", t, k=k, regs=regs)
            elif name == P + ".wait":
                a = args[0]
                if a == ("int", -1) or a == ("int", -3):
                    add("wait", self._target(a, w))
                    continue
                # R-bar-null: named waits wait on the last named object joined
                if self.opts.null_wait == "noop" and self._target(a, w) == "null":
                    continue
                if cur == "null":
                    continue          # S002: wait "is a no-op on the NULL named barrier"
                if cur is None:
                    if self._target(a, w) == "null":
                        continue      # 10.3: wait(0) with nothing joined names NULL: no-op
                    add("wait", None)  # waits on nothing: never completes
                    continue
                add("wait", cur)
            elif name == P + ".init":
                t = self._target(args[0], w)
                if t == "null":
                    continue          # S002: on NULL "all operations other than join are no-ops"
                add("init", t, k=args[1][1])
            elif name == P + ".join":
                t = self._target(args[0], w)
                # S002: NULL is barrier-mutually-exclusive with [1,16]: joining it "unjoins"
                add("join", ("null", self.wave_wg[w]) if t == "null" else t)
                cur = t
            elif name == P + ".leave":
                # S002 s_barrier_leave: drops BO iff a join is barrier-joined-before it
                if cur == "null":
                    continue          # all operations on NULL other than join are no-ops
                if cur is None and self.opts.leave_unjoined == "noop":
                    continue          # R-bar-leave noop: "if and only if" a join: no drop
                add("drop", cur)      # cur None: drop-without-join (UB, checked in the run)
                cur = None
        return out

    def _implicit(self):
        """S002 tables: hardware init (k = waves of the workgroup / workgroups of the
        cluster), join at launch, drop at thread end; none for named barriers and NULL."""
        used = {self.ops[i].inst for s in self.seq for i in s}
        self.launch: list[int] = []            # hardware inits and launch joins
        self.hw = {}                           # instance -> k of its hardware init
        nwaves = len(self.wave_threads)
        for inst in sorted((u for u in used if u and u[0] in ("wg", "cluster")), key=repr):
            if inst[0] == "wg":
                members = [w for w in range(nwaves) if self.wave_wg[w] == inst[1]]
                k = len(members)
            else:
                members = [w for w in range(nwaves) if self.wave_cl[w] == inst[1]]
                k = len({self.wave_wg[w] for w in members})
            self.hw[inst] = k
            self.launch.append(self._new("init", inst, None, self.elab.test.line, k=k,
                                         implicit="init"))
            for w in members:
                self.launch.append(self._new("join", inst, w, self.elab.test.line,
                                             implicit="join"))
        # drops at thread end: the workgroup barrier per wave, then the cluster barrier per
        # wave (cluster_drop: wave) or per workgroup (default, R-bar-cluster-drop)
        self.after: dict[int, list[int]] = {}  # pseudo-wave -> waves that must have ended
        line = self.elab.test.line
        for w in range(nwaves):
            for inst in sorted(self.hw, key=repr):
                if inst[0] == "wg" and inst[1] == self.wave_wg[w]:
                    self.seq[w].append(self._new("drop", inst, w, line, implicit="drop"))
            for inst in sorted(self.hw, key=repr):
                if (inst[0] == "cluster" and inst[1] == self.wave_cl[w]
                        and self.opts.cluster_drop == "wave"):
                    self.seq[w].append(self._new("drop", inst, w, line, implicit="drop"))
        if self.opts.cluster_drop != "wave":
            for inst in sorted(self.hw, key=repr):
                if inst[0] != "cluster":
                    continue
                for g in sorted({self.wave_wg[w] for w in range(nwaves)
                                 if self.wave_cl[w] == inst[1]}):
                    pw = len(self.seq)
                    d = self._new("drop", inst, pw, line, implicit="drop")
                    self.seq.append([d])
                    self.after[pw] = [w for w in range(nwaves) if self.wave_wg[w] == g]
        self.insts = sorted({op.inst for op in self.ops if op.inst is not None}, key=repr)
        self.iidx = {inst: i for i, inst in enumerate(self.insts)}
        self.wave_of_op_wg = {}   # op -> workgroup of its wave (cluster-arrive-twice)
        for op in self.ops:
            if op.wave is not None and op.wave < nwaves:
                self.wave_of_op_wg[op.id] = self.wave_wg[op.wave]
        # program order over the barrier operations (incl. the pseudo-waves' drops, which
        # follow every operation of every wave of their workgroup)
        self.po_pred: dict[int, list[int]] = {}
        for w, s in enumerate(self.seq):
            for j, o in enumerate(s):
                self.po_pred[o] = list(s[:j])
            if w in self.after:
                self.po_pred[s[0]] = [o for v in self.after[w] for o in self.seq[v]]

    def name(self, op: Op) -> str:
        if op.implicit:
            who = "hw" if op.wave is None else self._wave_name(op.wave)
            return f"{who}:{op.implicit}({self._inst_name(op.inst)})"
        return f"{self._wave_name(op.wave)}:{op.kind}({self._inst_name(op.inst)})@{op.line}"

    def _wave_name(self, w: int) -> str:
        if w < len(self.wave_threads):
            return "+".join(self.elab.test.threads[t].name for t in self.wave_threads[w])
        return "wg" + ".".join(map(str, self.wave_wg[self.after[w][0]]))

    @staticmethod
    def _inst_name(inst) -> str:
        if inst is None:
            return "none"
        return {"wg": "workgroup", "cluster": "cluster", "null": "NULL"}.get(
            inst[0], "@" + str(inst[1]))

    # ---- 10.4: runs ------------------------------------------------------------------

    def runs(self, limit: int):
        """Every distinct run: a list of dicts (see `_finish`)."""
        ops, seq, iidx = self.ops, self.seq, self.iidx
        nw = len(seq)
        ninst = len(self.insts)
        # initial state: hardware-initialised instances start initialised with E = k
        istate0 = []
        for inst in self.insts:
            if inst in self.hw:
                istate0.append((True, self.hw[inst], 0, frozenset(), 0, None))
            else:
                istate0.append((False, 0, 0, frozenset(), 0, None))
        joined0 = frozenset((self.ops[j].wave, iidx[self.ops[j].inst]) for j in self.launch
                            if self.ops[j].kind == "join")
        start = (tuple([0] * nw), tuple([None] * nw), tuple(istate0), joined0, frozenset(),
                 frozenset(), frozenset(), frozenset(), (),
                 (tuple(frozenset() for _ in range(ninst)), frozenset()))
        seen = set()
        results = {}
        path: list[str] = []
        budget = [0]

        def finish(state, ub):
            key = (state, ub)
            if key not in results:
                results[key] = list(path)

        def dfs(state):
            if state in seen:
                return
            seen.add(state)
            budget[0] += 1
            if budget[0] > limit:
                raise ReferenceTooBig(f"more than {limit} barrier run states")
            pcs, blocked = state[0], state[1]
            moved = False
            order = range(nw)
            for w in range(nw):
                # partial-order reduction (see `_eager`): such a wait is explored alone
                if (blocked[w] is None and pcs[w] < len(seq[w])
                        and seq[w][pcs[w]] in self.eager):
                    order = (w,)
                    break
            for w in order:
                if blocked[w] is not None or pcs[w] >= len(seq[w]):
                    continue
                if w in self.after and any(pcs[v] < len(seq[v]) or blocked[v] is not None
                                           for v in self.after[w]):
                    continue          # the workgroup's drop comes at its last thread's end
                o = seq[w][pcs[w]]
                if self.cons and ops[o].kind == "wait":
                    # R-bar-participation: W takes any closed phase of its object that no
                    # other wait of its wave took (S002 "X does not barrier-participate-in
                    # another distinct barrier wait W' in the same thread as W"; the phase
                    # closed before W steps, so "W->X not in thread-barrier-order<BO>")
                    if ops[o].inst is None:
                        continue      # waits on nothing
                    i = iidx[ops[o].inst]
                    taken = {pid for (x, pid) in state[5] if ops[x].wave == w}
                    for (pid, _) in sorted(state[6], key=repr):
                        if pid[0] != i or pid in taken:
                            continue
                        moved = True
                        nxt = ((pcs[:w] + (pcs[w] + 1,) + pcs[w + 1:]),) + state[1:5] + (
                            state[5] | {(o, pid)},) + state[6:]
                        path.append(self.name(ops[o]))
                        dfs(nxt)
                        path.pop()
                    continue
                moved = True
                nxt, ub = self._step(state, w)
                path.append(self.name(ops[seq[w][pcs[w]]]))
                if ub is not None:
                    finish(nxt, (ub[0], ub[1].id))
                else:
                    dfs(nxt)
                path.pop()
            if not moved:
                finish(state, None)

        dfs(start)
        self.states = budget[0]
        return [self._finish(state, ub, run) for (state, ub), run in results.items()]

    def _step(self, state, w):
        """One step of wave w (10.4). Returns (new state, step UB rule or None)."""
        (pcs, blocked, ist, joined, tokens, matches, phases, firsts, drc, bmo) = state
        o = self.seq[w][pcs[w]]
        op = self.ops[o]
        pcs = pcs[:w] + (pcs[w] + 1,) + pcs[w + 1:]
        if op.inst is None:
            if op.kind == "drop":
                # S002: a drop needs a join barrier-joined-before it (a leave with nothing)
                return (pcs, blocked, ist, joined, tokens, matches, phases, firsts, drc,
                        bmo), ("drop-without-join", op)
            # a wait on nothing never completes
            blocked = blocked[:w] + (o,) + blocked[w + 1:]
            return (pcs, blocked, ist, joined, tokens, matches, phases, firsts, drc, bmo), None
        i = self.iidx[op.inst]
        init, E, C, cur, nph, first = ist[i]
        tok = dict(tokens)
        newstate = None

        def mk(ist_i, joined_=joined, tokens_=None, blocked_=blocked, matches_=matches,
               phases_=phases, firsts_=firsts, drc_=drc):
            nist = ist[:i] + (ist_i,) + ist[i + 1:]
            nbmo = bmo
            if self.v003 and op.modifies:
                # pr170447: bmo so far as what it forbids of hb: every earlier modification
                # a of I, bmo(a, o), forbids hb(e, f) for e po-after o, f po-before a
                U, forb = bmo
                forb = forb | {(e, f) for e in self.after_ev[o] for f in U[i]}
                nbmo = (U[:i] + (U[i] | frozenset(self.before_ev[o]),) + U[i + 1:], forb)
            return (pcs, blocked_, nist, joined_,
                    frozenset(tok.items()) if tokens_ is None else tokens_, matches_,
                    phases_, firsts_, drc_, nbmo)

        if op.kind == "join":
            # S002 join; mutual exclusion of [0,16]: a join there ends the wave's other
            # named join (barrier-joined-before)
            j = set(joined)
            if op.inst[0] in ("named", "null"):
                j = {(v, x) for (v, x) in j if not (v == w and self.insts[x][0] in
                                                    ("named", "null"))}
            j.add((w, i))
            return mk(ist[i], joined_=frozenset(j)), None
        if op.kind == "wait":
            if (w, i) in tok:
                # a token: the wait matches the phase delivered while the wave was not waiting
                pid = tok.pop((w, i))
                return mk(ist[i], matches_=matches | {(o, pid)}), None
            return mk(ist[i], blocked_=blocked[:w] + (o,) + blocked[w + 1:]), None
        if op.kind == "init":
            # S002 init: "Sets the expected count ... to k. Resets the arrive count"
            if op.k <= 0:
                return mk(ist[i]), ("init-count", op)
            if self.cons:
                # the bmo record: this init discards the open phase of I (before phase nph)
                return mk((True, op.k, 0, frozenset(), nph, None),
                          drc_=drc + ((i, nph, o),)), None
            return mk((True, op.k, 0, frozenset(), nph, None)), None
        # modification operations arrive / drop
        if op.kind == "arrive" and not init and self.opts.named_init == "signal-var" \
                and op.inst[0] == "named" and op.k != 0:
            init, E, C = True, op.k, 0     # R-bar-named-init signal-var
        if not init:
            # S002 "It is undefined behavior to operate on an uninitialized barrier object"
            return mk(ist[i]), ("uninitialised", op)
        jset = joined
        if op.kind == "arrive":
            if op.k != 0:
                # S002 arrive: "the new expected count cannot be less than or equal to the
                # arrive count, otherwise the behavior is undefined" (R-bar-signal-var)
                # (signal_var_count table: the table's "must be greater than or equal to
                # the arrive count", R-bar-signal-var)
                if op.k < C or (op.k == C and self.opts.signal_var_count != "table"):
                    return mk(ist[i]), ("signal-var-count", op)
                E = op.k
            if op.inst[0] == "cluster":
                # S002 cluster: "only one wave per workgroup may arrive ... on behalf of its
                # entire workgroup"
                g = self.wave_of_op_wg[o]
                if any(self.ops[x].kind == "arrive" and self.wave_of_op_wg.get(x) == g
                       for x in cur):
                    return mk(ist[i]), ("cluster-arrive-twice", op)
            if op.regs:
                # R-bar-isfirst: first arrive of the current phase (C = 0 before it)
                firsts = firsts | {(o, 1 if C == 0 else 0)}
            C += 1
        else:
            # S002 drop: "Decrements expected count ... by one"
            E -= 1
            if E < 0:
                return mk(ist[i]), ("drop-negative", op)
            if self.opts.drop_race == "completion" and not self.v003:
                # R-bar-drop-race completion: every arrive of this thread before D on BO must
                # be in a phase completed before D; decided at D's step, so it ends the run
                # like the other step rules (10.4, clarified)
                done = set()
                for (_, mem) in phases:
                    done |= mem
                if any(self.ops[a].kind == "arrive" and self.ops[a].inst == op.inst
                       and a not in done for a in self.po_pred[o]):
                    return mk(ist[i]), ("drop-race", op)
            if op.wave in self.after:
                members = set(self.after[op.wave])
                jset = frozenset(x for x in joined if not (x[0] in members and x[1] == i))
            else:
                jset = frozenset(x for x in joined if x != (w, i))
        cur = cur | {o}
        if C == E:
            # completion: the phase closes, joined waves blocked on I wake and match it,
            # every other joined wave gets a token (replacing an older one)
            pid = (i, nph)
            phases = phases | {(pid, cur)}
            bl = list(blocked)
            for (v, x) in (() if self.cons else jset):
                if x != i:
                    continue
                if bl[v] is not None and self.ops[bl[v]].inst == op.inst:
                    matches = matches | {(bl[v], pid)}
                    bl[v] = None
                else:
                    tok[(v, i)] = pid
            return mk((True, E, 0, frozenset(), nph + 1, None), joined_=jset,
                      blocked_=tuple(bl), matches_=matches, phases_=phases,
                      firsts_=firsts, drc_=drc), None
        return mk((True, E, C, cur, nph, None), joined_=jset, firsts_=firsts, drc_=drc), None

    def _finish(self, state, step_ub, run) -> dict:
        """The relations of one run and the UB rules it breaks (10.4)."""
        (pcs, blocked, ist, joined, tokens, matches, phases, firsts, drc, bmo) = state
        ops = self.ops
        n = len(ops)
        out = {"run": run, "ub": None, "ub_op": None, "firsts": dict(firsts), "bmo": bmo}
        if step_ub is not None:
            out["ub"], out["ub_op"] = step_ub[0], self.name(ops[step_ub[1]])
            return out
        phase_of = {}                              # op -> phase id (closed phases)
        members = dict(phases)
        for pid, mem in phases:
            for x in mem:
                phase_of[x] = pid
        match = dict(matches)                      # wait -> phase id
        waits_of: dict = {}
        for wt, pid in matches:
            waits_of.setdefault(pid, []).append(wt)
        # barrier-participates-in: X -> W for X in the phase W matched (S = the phase)
        part = [0] * n
        for wt, pid in matches:
            for x in members[pid]:
                part[x] |= 1 << wt
        # S002 "X does not barrier-participate-in another distinct barrier wait W' in the
        # same thread as W": a phase is matched by at most one wait of each wave
        for pid, ws in waits_of.items():
            assert len({ops[x].wave for x in ws}) == len(ws), "two waits of a wave, one phase"
        # barrier-executes-before: (program order ∪ participates-in ∪ init/launch-join ->
        # every operation of the instance)+ (S002; 10.4)
        succ = [0] * n
        for o, preds in self.po_pred.items():
            for p in preds:
                succ[p] |= 1 << o
        for j in self.launch:
            for op in ops:
                if op.inst == ops[j].inst and op.id not in self.launch:
                    succ[j] |= 1 << op.id
        for x in range(n):
            succ[x] |= part[x]
        bexec = _closure(succ)
        for x in range(n):
            # S002 "Barriers do not complete out-of-thin-air"; bexec is a strict order
            assert not bexec[x] >> x & 1, "barrier-executes-before has a cycle"
        # S002 "Barrier-executes-before is consistent with barrier-modification-order<BO>":
        # holds by construction (a step follows its program-order predecessors, a wait
        # resumes after its phase completed)
        out["bexec"] = bexec
        out["match"] = match
        ub = None

        def hit(rule, op):
            nonlocal ub
            if ub is None or RULES.index(rule) < RULES.index(ub[0]):
                ub = (rule, op)

        if self.cons:
            # the runs are judged per barrier-modification-order (analyse): its key is what
            # bmo decides of the relations, the closed phases of every object in order, the
            # inits between them, the open phases, the isfirst values (and, pr170447, what
            # bmo forbids of happens-before)
            out["key"] = (phases, tuple(x[3] for x in ist), drc, firsts, bmo[1])
            nreal = len(self.wave_threads)
            stuck = [w for w in range(nreal) if pcs[w] < len(self.seq[w])]
            if stuck:
                blocked = tuple(self.seq[w][pcs[w]] if w in stuck else None
                                for w in range(len(self.seq)))
        if any(b is not None for b in blocked):
            # S002 "It is undefined behavior for a barrier wait to never complete". The
            # relations of a deadlocked run are unfinished (its blocked waits have no
            # participants), so it is judged by this rule alone (10.4, clarified)
            hit("wait-never-completes", ops[next(b for b in blocked if b is not None)])
            out["ub"], out["ub_op"] = ub[0], self.name(ub[1])
            return out
        if self.v003:
            # S003 WIP (R-bar-wip): "The immediate successor of S in thread-barrier-order<BO>
            # is a barrier wait"
            for w, s in enumerate(self.seq):
                for j, o in enumerate(s[:pcs[w]]):      # the arrives the run performed
                    if ops[o].kind != "arrive":
                        continue
                    nxt = [x for x in s[j + 1:] if ops[x].inst == ops[o].inst]
                    if not nxt or ops[nxt[0]].kind != "wait":
                        hit("wip-signal-then-wait", ops[o])
        else:
            # the rules concern the operations the run performed (a deadlocked run never
            # performs what follows the blocked waits)
            done = {o for w, s in enumerate(self.seq) for o in s[:pcs[w]]}
            if self.cons:
                # drop races and phase separation are constraints ("must be true", "There is
                # no ..."), not undefined behaviour: a run breaking one is no execution
                self._s002_rules(hit, bexec, phase_of, match, waits_of, members, done,
                                 ("drop-race", "phase-separation"))
                if ub is not None:
                    out["invalid"], out["ub_op"] = ub[0], self.name(ub[1])
                    return out
            self._s002_rules(hit, bexec, phase_of, match, waits_of, members, done,
                             None if not self.cons else ("wait-without-join",))
        if ub is not None:
            out["ub"], out["ub_op"] = ub[0], self.name(ub[1])
        return out

    def _s002_rules(self, hit, bexec, phase_of, match, waits_of, members, done, rules=None):
        ops = self.ops
        if rules is not None:
            inner = hit

            def hit(rule, op):      # noqa: F811 - only the rules asked for
                if rule in rules:
                    inner(rule, op)
        # drop races (R-bar-drop-race): for A -> D in thread-barrier-order<BO>
        if self.opts.drop_race != "completion":     # completion: a step rule (_step)
            for d in ops:
                if d.kind != "drop" or d.inst is None or d.id not in done:
                    continue
                for a in self.po_pred.get(d.id, []):
                    if ops[a].kind != "arrive" or ops[a].inst != d.inst:
                        continue
                    ws = waits_of.get(phase_of.get(a), [])
                    # S002: "A does not barrier-participates-in any barrier wait", or "A
                    # barrier-participates-in at least one barrier wait W such that W->D in
                    # barrier-executes-before"
                    if ws and not any(bexec[wt] >> d.id & 1 for wt in ws):
                        hit("drop-race", d)
        # waits (S002): a join J barrier-joined-before W that barrier-executes-before some X
        # participating in W
        for wt, pid in match.items():
            w = ops[wt]
            j = self._joined_before(w)
            if j is None or not any(bexec[j] >> x & 1 for x in members[pid]):
                hit("wait-without-join", w)
        # phase separation (S002): for A participating in W, no X on BO with A -> X -> W in
        # barrier-executes-before and X barrier-phase-with a non-empty set without W
        cls = {}
        for pid, ws in waits_of.items():
            for x in list(members[pid]) + ws:
                cls[x] = pid
        for wt, pid in match.items():
            for a in members[pid]:
                for x in _bits(bexec[a]):
                    if (x != wt and ops[x].inst == ops[wt].inst and bexec[x] >> wt & 1
                            and x in cls and cls[x] != pid):
                        hit("phase-separation", ops[wt])

    def _joined_before(self, w: Op) -> Optional[int]:
        """S002 barrier-joined-before: the join J on W's object with J -> W in tbo, no join or
        drop on it in between, no join on a mutually exclusive object in between (named
        objects and NULL: [0,16]). Launch joins for the workgroup and cluster barriers."""
        for j in self.launch:
            if self.ops[j].kind == "join" and self.ops[j].inst == w.inst \
                    and self.ops[j].wave == w.wave:
                return j
        s = self.seq[w.wave]
        for o in reversed(s[:s.index(w.id)]):
            op = self.ops[o]
            if op.kind == "drop" and op.inst == w.inst:
                return None
            if op.kind == "join":
                if op.inst == w.inst:
                    return o
                if op.inst[0] in ("named", "null") and w.inst[0] == "named":
                    return None
        return None


def _closure(succ: list[int]) -> list[int]:
    n = len(succ)
    r = list(succ)
    for k in range(n):
        bk, rk = 1 << k, r[k]
        if not rk:
            continue
        for i in range(n):
            if r[i] & bk:
                r[i] |= rk
    return r


# ---- 10.5: the barrier memory model ------------------------------------------------------

class BarrierMemory:
    """Barrier-arrive-release / barrier-wait-acquire pairs over the memory events of the
    elaborated test (events are memory events only: barrier instructions are not events)."""

    def __init__(self, prog: BarrierProgram, elab, spaces):
        self.prog = prog
        ev = elab.events
        by_pos = {}
        for e in ev:
            if not e.is_init:
                by_pos.setdefault(e.thread, []).append(e)
        self.by_thread = by_pos
        opts = elab.model.options
        ops = prog.ops
        every = frozenset(spaces)
        # static part of bsw_AS(F, G) for each (arrive A, wait W): conditions 2-4
        self.pairs = {}
        for a in ops:
            if a.kind != "arrive" or a.implicit:
                continue
            # S002: "A barrier arrive operation A can pair with a release fence
            # program-ordered before it"
            Fs = [e for t in prog.wave_threads[a.wave] for e in by_pos.get(t, [])
                  if e.is_fence and is_release(e.order) and e.pos < a.pos[t]]
            if not Fs:
                continue
            for w in ops:
                if w.kind != "wait" or w.inst is None:
                    continue
                # "A barrier wait operation W can pair with an acquire fence program-ordered
                # after it"
                Gs = [e for t in prog.wave_threads[w.wave] for e in by_pos.get(t, [])
                      if e.is_fence and is_acquire(e.order) and e.pos > w.pos[t]]
                edges = []
                for f in Fs:
                    for g in Gs:
                        if f.id == g.id or f.one_as or g.one_as:
                            continue      # 3. "they cannot have one-as"
                        both = (frozenset(elab.sync_spaces(f)) & frozenset(elab.sync_spaces(g))
                                & every)  # 4. "BA and BR's address spaces both include AS"
                        for sp in sorted(both):
                            if opts.barrier_scopes == "inclusive":
                                ok = elab.inclusive(f, g, sp)
                            else:
                                # 2. R-bar-overlap: the scope instances intersect
                                ok = (elab.contains(f, elab.scope_in(f, sp), g)
                                      or elab.contains(g, elab.scope_in(g, sp), f))
                            if ok:
                                edges.append((sp, f.id, g.id))
                if edges:
                    self.pairs[(a.id, w.id)] = edges

        # R-bar-hb-exec (docs 10.7): per memory event, the barrier operations of its wave
        # after it (the first; after the wave's last one, its workgroup's cluster drop) and
        # the last one before it
        self.xb_on = opts.barrier_hb == "executes"
        self.ev_after, self.ev_before = {}, {}
        wave_of = {t: w for w, ts in enumerate(prog.wave_threads) for t in ts}
        for t, es in (by_pos.items() if self.xb_on else ()):
            w = wave_of[t]
            s = prog.seq[w]
            for e in es:
                aft = [o for o in s if ops[o].implicit == "drop"
                       or (not ops[o].implicit and ops[o].pos[t] > e.pos)]
                self.ev_after[e.id] = aft[:1] or [prog.seq[v][0] for v, ws in
                                                  prog.after.items() if w in ws]
                bef = [o for o in s if not ops[o].implicit and ops[o].pos[t] < e.pos]
                if bef:
                    self.ev_before[e.id] = bef[-1]

    def xb(self, run) -> frozenset:
        """R-bar-hb-exec: (X, Y) memory events of two threads, X program-ordered before a
        barrier operation A, B program-ordered before Y, A barrier-executes-before B (S002:
        "X->A and B->Y in program-order ... the execution of X completes before the
        execution of Y does")."""
        if not self.xb_on:
            return frozenset()
        bexec, ev = run["bexec"], self.prog.elab.events
        out = set()
        for x, As in self.ev_after.items():
            for y, b in self.ev_before.items():
                if ev[x].thread != ev[y].thread and any(bexec[a] >> b & 1 for a in As):
                    out.add((x, y))
        return frozenset(out)

    def bsw(self, run) -> frozenset:
        """bsw_AS edges (sp, F, G) of a run: condition 1, bexec(A, W), and 2-4 (static)."""
        bexec = run["bexec"]
        out = set()
        for (a, w), edges in self.pairs.items():
            if bexec[a] >> w & 1:
                out.update(edges)
        return frozenset(out)

    @staticmethod
    def hb_forbidden(run) -> frozenset:
        """pr170447: pairs (e, f) of memory events such that hb(e, f) contradicts the run's
        bmo (bmo(a, b) with e po-after b and f po-before a), collected by the run."""
        return run["bmo"][1]


@dataclass
class BarrierAnalysis:
    """What the judgement needs (docs/semantics.md 10.6): the UB rules found (rule -> (op,
    run)), whether every run is undefined, and the defined runs grouped by what they give the
    memory model (bsw edges, isfirst registers) with, under pr170447, the hb pairs each
    run forbids."""
    ub: dict
    all_undefined: bool
    groups: dict                 # (bsw, regs) -> list of forbidden-hb sets

    def ub_rule(self) -> Optional[str]:
        for r in RULES:
            if r in self.ub:
                return r
        return None


def bar_sig(prog: BarrierProgram, run) -> frozenset:
    """The base relation barSig of a model file (docs/model-language.md): memory events (X, Y)
    with X program-ordered before an arrive A in a thread of A's wave, Y after a wait W in a
    thread of W's wave, and bexec(A, W) in the run (S002 "A barrier-executes-before W")."""
    bexec, ev = run["bexec"], prog.elab.events
    by_thread: dict = {}
    for e in ev:
        if not e.is_init:
            by_thread.setdefault(e.thread, []).append(e)
    out = set()
    for a in prog.ops:
        if a.kind != "arrive" or a.implicit or a.inst is None:
            continue
        xs = [e.id for t, p in a.pos.items() for e in by_thread.get(t, ()) if e.pos < p]
        for w in _bits(bexec[a.id]):
            W = prog.ops[w]
            if W.kind != "wait" or W.inst is None:
                continue
            ys = [e.id for t, p in W.pos.items() for e in by_thread.get(t, ()) if e.pos > p]
            out.update((x, y) for x in xs for y in ys if x != y)
    return frozenset(out)


def analyse(elab, spaces, limit: int, sig=None) -> BarrierAnalysis:
    """`sig`: under a model file, the memory part of a run's group key is the run's barSig
    (bar_sig), which the file turns into synchronizes-with, instead of the hand-written bsw."""
    prog = BarrierProgram(elab)
    # the runs are explored state by state; a test with more barrier states than this is
    # refused (ReferenceTooBig: 12 waves of one phase already need about 10^6)
    runs = prog.runs(min(limit, RUN_STATES))
    mem = BarrierMemory(prog, elab, spaces)
    ub: dict = {}
    groups: dict = {}
    defined = 0
    if prog.cons:
        # R-bar-participation: a bmo is defined if one of its runs (participations) is; it
        # is undefined only if none is and one that keeps the constraints breaks a rule; a
        # step rule (no "key") depends on bmo alone
        per: dict = {}
        for r in runs:
            per.setdefault(r.get("key", ("step", id(r))), []).append(r)
        keep = []
        for k in sorted(per, key=repr):
            rs = per[k]
            ok = [r for r in rs if r["ub"] is None and "invalid" not in r]
            keep += ok if ok else [r for r in rs if r["ub"] is not None]
        if not keep:
            # no bmo keeps the constraints: no execution, no defined behaviour (10.7
            # R-bar-participation); the constraints the runs break are the rules reported
            keep = [dict(r, ub=r["invalid"]) for r in runs if "invalid" in r]
        runs = keep
    for r in runs:
        if r["ub"] is not None:
            if r["ub"] not in ub:
                ub[r["ub"]] = (r["ub_op"], r["run"])
            continue
        defined += 1
        regs = dict(prog.const_regs)
        for o, v in r["firsts"].items():
            for key in prog.ops[o].regs:
                regs[key] = v
        key = (mem.bsw(r) if sig is None else bar_sig(prog, r), tuple(sorted(regs.items())),
               mem.xb(r))
        hbf = mem.hb_forbidden(r) if prog.v003 else frozenset()
        groups.setdefault(key, set()).add(hbf)
    return BarrierAnalysis(ub, defined == 0, groups)
