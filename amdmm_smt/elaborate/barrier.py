"""Stage 2b: the barrier operations of a test, statically (docs/semantics.md 10.2-10.3).

Straight-line code makes every barrier operation known before solving: which object
instance it acts on (named-barrier waits and leaves act on the wave's current named object,
S002), which wave performs it (S002: "Barrier operations are convergent within a wave"), and
the implicit operations of the S002 tables (hardware init, join at launch, drop at thread
end). Both engines share this; how operations interleave (runs) is each engine's own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..errors import LitmusError
from ..ir import CLUSTER, WAVEFRONT, WORKGROUP, Instr, Test
from ..model import Model
from ..targets import Target, barrier_id_problem

P = "llvm.amdgcn.s.barrier"
BARRIER, SIGNAL, WAIT, INIT, JOIN, LEAVE, SIGNAL_VAR, ISFIRST = (
    P, P + ".signal", P + ".wait", P + ".init", P + ".join", P + ".leave", P + ".signal.var",
    P + ".signal.isfirst")


@dataclass
class BarOp:
    """A barrier operation."""
    id: int
    kind: str                    # init | join | drop | arrive | wait
    obj: Optional[tuple]         # instance key; None: no object (leave / wait with none joined)
    wave: Optional[int]          # index into BarrierInfo.waves; None: hardware init, or the
    #                              per-workgroup drop of a cluster barrier
    seq: int                     # position in the wave's operation sequence
    line: int                    # source line (the test's line for implicit operations)
    count: Optional[int] = None  # init: k; arrive: signal.var K (None: no update)
    regs: dict = field(default_factory=dict)   # isfirst: thread index -> register name
    implicit: str = ""           # "" | "init" (hardware) | "join" (launch) | "drop" (end)
    tpos: dict = field(default_factory=dict)   # thread index -> instruction position
    after: tuple = ()            # per-workgroup drop: waves whose every operation precedes it
    join: Optional[int] = None   # wait / drop: the join barrier-joined-before it (op id)
    ends: Optional[tuple] = None  # join: the named object it stops being joined to (S002
    #                               mutual exclusion of [0,16])
    label: str = ""
    # issue 28.6: the k-th execution of its instruction's line in the wave's first thread
    # when the line repeats (an unrolled loop, an inlined call): the `#k` of event labels
    # (elaborate/events.py, `T:LINE#k`); 0 when the line runs once
    iteration: int = 0

    @property
    def modifies(self) -> bool:
        return self.kind in ("init", "drop", "arrive")


@dataclass
class BarrierInfo:
    """The barrier operations of a test."""
    ops: list[BarOp]
    waves: list[tuple]                       # wave keys (agent, cluster, workgroup, wave)
    wave_threads: list[list[int]]            # wave -> thread indices
    wave_ops: list[list[int]]                # wave -> op ids in program order
    objects: dict[tuple, dict]               # instance key -> {"named": bool, "hw": k or None}
    const_regs: dict[tuple[str, str], int]   # isfirst on the NULL barrier: always 0
    isfirst_regs: dict[tuple[str, str], int]  # (thread, reg) -> arrive op id
    wg_drops: list[int] = field(default_factory=list)   # per-workgroup cluster drops

    @staticmethod
    def inst_name(key: Optional[tuple]) -> str:
        if key is None:
            return "(none)"
        if key[0] == "named":
            return "@" + key[1]
        return {"wg": "workgroup barrier", "cluster": "cluster barrier"}[key[0]]


class WaveDivergent(LitmusError):
    """Threads of one wave whose barrier instructions differ (docs 15.9 R-cf-bar-wave, 15.10):
    every execution of the path combination (of a straight-line test: of the test) is
    undefined (S002: "barrier operations can only be performed in wave-uniform control
    flow"); the engines catch it and judge it so. `op`: where, `threads`: the two names."""

    def __init__(self, message: str, file, line: int, threads: tuple):
        super().__init__(message, file, line)
        self.threads = threads


def _err(test: Test, line: int, msg: str) -> LitmusError:
    return LitmusError(msg, test.file, line)


def elaborate_barriers(test: Test, model: Model, target: Target, paths: list) -> Optional[
        BarrierInfo]:
    """None when the test has no barrier instruction (the hot path stays as it was)."""
    bars = [[(pos, ins) for pos, ins in enumerate(t.code) if ins.kind == "barrier"]
            for t in test.threads]
    if not any(bars):
        return None
    v003 = model.options.barrier_model == "pr170447"
    named_locs = [n for n, loc in test.memory.items() if loc.space == "barrier"]
    if len(named_locs) > 16:
        raise _err(test, test.memory[named_locs[16]].line,
                   "at most 16 named barriers exist (S002: IDs [1,16])")

    # waves, in order of first thread
    waves: list[tuple] = []
    wave_threads: list[list[int]] = []
    for i, p in enumerate(paths):
        key = p[WAVEFRONT]
        if key not in waves:
            waves.append(key)
            wave_threads.append([])
        wave_threads[waves.index(key)].append(i)

    # S002 "Barrier operations are convergent within a wave": same barrier instructions;
    # threads of one thread group meet only at the same instruction of their code (docs
    # 15.10, R-spmd-site)
    for w, ths in enumerate(wave_threads):
        lead: dict = {}        # group -> its first thread in this wave
        pairs = [(ths[0], t) for t in ths[1:]]
        for t in ths:
            g = test.threads[t].group
            if g is not None and lead.setdefault(g, t) != t and lead[g] != ths[0]:
                pairs.append((lead[g], t))
        for first, t in pairs:
            same_code = (test.threads[t].group is not None
                         and test.threads[t].group == test.threads[first].group)

            def key(ins):
                return (ins.intrinsic, ins.args, ins.site if same_code else None)
            ref = [key(ins) for _, ins in bars[first]]
            mine = [key(ins) for _, ins in bars[t]]
            for k in range(max(len(ref), len(mine))):
                if k >= len(ref) or k >= len(mine) or ref[k] != mine[k]:
                    line = (bars[t][k][1].line if k < len(mine) else bars[first][k][1].line)

                    def what(i):
                        return (f"line {bars[i][k][1].line}" if k < len(bars[i]) else "none")
                    a, b = test.threads[first].name, test.threads[t].name
                    raise WaveDivergent(
                        f"threads {a} and {b} share a wavefront but perform different barrier "
                        f"operations: their barrier instruction number {k + 1} is "
                        f"{what(first)} in {a}, {what(t)} in {b} (barrier operations are "
                        "performed per wavefront, S002)",
                        test.file, line, (a, b))

    ops: list[BarOp] = []
    const_regs: dict = {}
    isfirst_regs: dict = {}
    objects: dict[tuple, dict] = {}

    nth = 0                     # the iteration of the instruction being elaborated

    def new(kind, obj, wave, line, **kw) -> BarOp:
        kw.setdefault("iteration", 0 if kw.get("implicit") else nth)
        op = BarOp(len(ops), kind, obj, wave, 0, line, **kw)
        ops.append(op)
        return op

    def check_v003(ins: Instr, what: str):
        if v003:
            raise _err(test, ins.line, f"{what} is not part of barrier_model pr170447 (seed 003 "
                       "\"does not include the new barrier types and instructions added in "
                       "GFX12.5\")")

    def int_id(ins: Instr, bid: int) -> None:
        prob = barrier_id_problem(target, bid)
        if prob:
            raise _err(test, ins.line, prob)
        if bid == -3:
            check_v003(ins, "the cluster barrier (ID -3)")
        if 0 <= bid <= 16:
            check_v003(ins, "a named barrier")

    def need_named(ins: Instr):
        if not target.named_barriers:
            raise _err(test, ins.line, f"'{ins.intrinsic}' on named barriers needs GFX12.5 "
                       f"(gfx1250, gfx1251), not {target.name}")
        check_v003(ins, f"'{ins.intrinsic}'")

    def obj_of(ins: Instr, arg, ti: int, allow_named_int: bool = False):
        """The object an argument names: ("wg"|"cluster"|"named", ...), "null", or "named?"
        (an ID in [1,16] / a pointer for a wait: the wave's current named object)."""
        kind, val = arg
        wg, cl = paths[ti][WORKGROUP], paths[ti][CLUSTER]
        if kind == "null":
            need_named(ins)
            return "null"
        if kind == "ptr":
            need_named(ins)
            return ("named", val) + wg
        int_id(ins, val)
        if val == -1:
            return ("wg",) + wg
        if val == -3:
            return ("cluster",) + cl
        if val == 0:
            return "null"
        if allow_named_int:
            return "named?"
        # docs 16.3: only s.barrier.wait is defined for any argument (S002 "always waits on
        # the last named barrier object that the thread has joined, even if it is different
        # from the argument"); no document maps an integer ID to a named barrier object
        raise _err(test, ins.line, f"named barrier ID {val} is refused: S002 says \"Programs "
                   "in LLVM IR refer to named barriers using pointers\" and no document says "
                   f"which named barrier object ID {val} is (declare `@nb: {{space: barrier}}` "
                   "and pass `ptr addrspace(3) @nb`)")

    wave_ops: list[list[int]] = []
    for w, ths in enumerate(wave_threads):
        t0 = ths[0]
        seq: list[BarOp] = []
        # issue 28.6: each execution of a repeated line is its own instance, numbered as
        # events are (elaborate/events.py: `T:LINE#k`, k-th execution of the line)
        lines = [ins.line for _, ins in bars[t0]]
        repeated = {ln for ln in lines if lines.count(ln) > 1}
        seen_line: dict[int, int] = {}
        current = None          # current named object: None (none), "null", or a key
        current_join: Optional[int] = None
        for k, (_, ins) in enumerate(bars[t0]):
            tpos = {t: bars[t][k][0] for t in ths}
            regs = {t: bars[t][k][1].reg for t in ths if bars[t][k][1].reg}
            name, args = ins.intrinsic, ins.args
            line = ins.line
            if line in repeated:
                seen_line[line] = seen_line.get(line, 0) + 1
            nth = seen_line.get(line, 0)

            def arity(n_min, n_max, form):
                if not n_min <= len(args) <= n_max:
                    raise _err(test, line, f"expected `{form}`")
            if name == BARRIER:
                arity(0, 0, "call void @llvm.amdgcn.s.barrier()")
                o = ("wg",) + paths[t0][WORKGROUP]
                seq.append(new("arrive", o, w, line, tpos=tpos))
                seq.append(new("wait", o, w, line, tpos=tpos))
            elif name in (SIGNAL, ISFIRST):
                arity(1, 1, f"call @{name}(i32 ID)")
                if name == ISFIRST and ins.reg is None:
                    pass
                o = obj_of(ins, args[0], t0)
                if o == "null":       # S002: a no-op on the NULL named barrier; isfirst 0
                    for t, r in regs.items():
                        const_regs[(test.threads[t].name, r)] = 0
                    continue
                if o[0] == "named":
                    check_v003(ins, "a named barrier")
                op = new("arrive", o, w, line, tpos=tpos, regs=regs)
                for t, r in regs.items():
                    isfirst_regs[(test.threads[t].name, r)] = op.id
                seq.append(op)
            elif name == SIGNAL_VAR:
                arity(2, 2, "call void @llvm.amdgcn.s.barrier.signal.var(ptr addrspace(3) "
                      "@nb, i32 K)")
                o = obj_of(ins, args[0], t0)
                if args[1][0] != "int":
                    raise _err(test, line, "signal.var: the expected count must be `i32 K`")
                check_v003(ins, "'llvm.amdgcn.s.barrier.signal.var'")
                if o == "null":
                    continue
                kk = args[1][1]
                # S002: "only set when the argument is not zero, and when the barrier object
                # is a named barrier object"
                cnt = kk if (kk != 0 and o[0] == "named") else None
                seq.append(new("arrive", o, w, line, tpos=tpos, count=cnt))
            elif name == WAIT:
                arity(1, 1, "call void @llvm.amdgcn.s.barrier.wait(i16 ID)")
                o = obj_of(ins, args[0], t0, allow_named_int=True)
                if o in ("null", "named?") or o[0] == "named":
                    # S002: waits on the last named barrier joined (R-bar-null)
                    if o == "null" and model.options.null_wait == "noop":
                        continue
                    if current == "null" or (current is None and o == "null"):
                        continue      # a wait on NULL is a no-op (S002)
                    seq.append(new("wait", current, w, line, tpos=tpos, join=current_join))
                else:
                    seq.append(new("wait", o, w, line, tpos=tpos))
            elif name == INIT:
                arity(2, 2, "call void @llvm.amdgcn.s.barrier.init(ptr addrspace(3) @nb, "
                      "i32 K)")
                check_v003(ins, "'llvm.amdgcn.s.barrier.init'")
                o = obj_of(ins, args[0], t0)
                if args[1][0] != "int":
                    raise _err(test, line, "init: the expected count must be `i32 K`")
                if o == "null":
                    continue
                if o[0] != "named":
                    raise _err(test, line, "the workgroup and cluster barriers are initialised "
                               "by the hardware; s.barrier.init takes a named barrier")
                seq.append(new("init", o, w, line, tpos=tpos, count=args[1][1]))
            elif name == JOIN:
                arity(1, 1, "call void @llvm.amdgcn.s.barrier.join(ptr addrspace(3) @nb)")
                check_v003(ins, "'llvm.amdgcn.s.barrier.join'")
                o = obj_of(ins, args[0], t0)
                if o != "null" and o[0] != "named":
                    raise _err(test, line, "the workgroup and cluster barriers are joined at "
                               "launch; s.barrier.join takes a named barrier")
                # S002 mutual exclusion: a join on [0,16] ends the previous named join
                ends = current if current not in (None, "null") else None
                op = new("join", None if o == "null" else o, w, line, tpos=tpos, count=None)
                op.ends = ends
                seq.append(op)
                current, current_join = o, op.id
            elif name == LEAVE:
                arity(0, 1, "call void @llvm.amdgcn.s.barrier.leave()")
                check_v003(ins, "'llvm.amdgcn.s.barrier.leave'")
                need_named(ins)
                if current == "null":
                    continue          # S002: every operation but join is a no-op on NULL
                if current is None and model.options.leave_unjoined == "noop":
                    continue          # R-bar-leave noop: S002 leave "Drops ... if and only
                    #                   if there is a barrier join J": none, no drop
                seq.append(new("drop", current, w, line, tpos=tpos, join=current_join))
                current, current_join = None, None
            else:
                raise _err(test, line, f"unknown barrier intrinsic '@{name}'")
        wave_ops.append([op.id for op in seq])

    # objects used, and the implicit operations of the S002 tables
    used = sorted({op.obj for op in ops if op.obj is not None}, key=repr)
    for o in used:
        objects[o] = {"named": o[0] == "named", "hw": None}
    wg_drops: list[int] = []
    for o in used:
        if o[0] == "named":
            continue
        if o[0] == "wg":
            members = [w for w, key in enumerate(waves) if key[:3] == o[1:]]
            k = len(members)              # "the number of waves in the workgroup"
        else:
            members = [w for w, key in enumerate(waves) if key[:2] == o[1:]]
            k = len({waves[w][:3] for w in members})   # "the number of workgroups"
        objects[o]["hw"] = k
        hw = new("init", o, None, test.line, count=k, implicit="init")
        objects[o]["init_op"] = hw.id
        for w in members:
            j = new("join", o, w, test.line, implicit="join",
                    tpos={t: -1 for t in wave_threads[w]})
            wave_ops[w].insert(0, j.id)
            for i in wave_ops[w]:
                if ops[i].obj == o and ops[i].kind in ("wait", "drop") and ops[i].join is None:
                    ops[i].join = j.id
        if o[0] == "wg" or model.options.cluster_drop == "wave":
            for w in members:
                end = {t: len(test.threads[t].code) for t in wave_threads[w]}
                d = new("drop", o, w, test.line, implicit="drop", tpos=end,
                        join=next(i for i in wave_ops[w] if ops[i].implicit == "join"
                                  and ops[i].obj == o))
                wave_ops[w].append(d.id)
        else:                               # R-bar-cluster-drop: one drop per workgroup
            for g in sorted({waves[w][:3] for w in members}, key=repr):
                ws = tuple(w for w in members if waves[w][:3] == g)
                d = new("drop", o, None, test.line, implicit="drop", after=ws,
                        join=next(i for i in wave_ops[ws[0]] if ops[i].implicit == "join"
                                  and ops[i].obj == o))
                wg_drops.append(d.id)
    for w, ids in enumerate(wave_ops):
        for s, i in enumerate(ids):
            ops[i].seq = s
    for op in ops:
        who = "hw" if op.wave is None and op.kind == "init" else (
            "wg" + repr(op.after) if op.wave is None else
            test.threads[wave_threads[op.wave][0]].name)
        what = op.kind + (f"({op.implicit})" if op.implicit else "")
        it = f"#{op.iteration}" if op.iteration else ""
        op.label = f"{who}:{what}:{BarrierInfo.inst_name(op.obj)}@{op.line}{it}"
    return BarrierInfo(ops, waves, wave_threads, wave_ops, objects, const_regs, isfirst_regs,
                       wg_drops)
