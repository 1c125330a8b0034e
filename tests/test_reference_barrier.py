"""The reference engine's barrier family (amdmm_smt/reference/barrier.py), against expectations
derived by hand from docs/semantics.md section 10 and seed 002 (each test says which rule):
the operations of a wave, the runs (phases, which wait matches which phase, isfirst),
barrier-executes-before, the UB rules, and the barrier synchronizes-with edges. The litmus
tests in litmus/barrier/ check whole outcomes through `--engine reference` as well
(tests/test_corpus.py, tests/test_differential.py)."""

import os
from dataclasses import replace

from amdmm_smt.elaborate.events import elaborate
from amdmm_smt.model import Model, Options, get_model
from amdmm_smt.frontend.litmus import parse_file, parse_text
from amdmm_smt.reference import run_reference
from amdmm_smt.reference.barrier import BarrierMemory, BarrierProgram, analyse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BAR = os.path.join(ROOT, "litmus", "barrier")
SIG, WAIT = "call void @llvm.amdgcn.s.barrier.signal(i32 -1)", \
    "call void @llvm.amdgcn.s.barrier.wait(i16 -1)"
BARRIER = "call void @llvm.amdgcn.s.barrier()"


def model(**kw) -> Model:
    return Model("t", options=replace(Options(), **kw))


def prog(threads: dict, target="gfx1200", mem="  x: {space: global, init: 0}", **kw):
    body = "".join(
        f"  {n}:\n" + "".join(f"    {k}: {v}\n" for k, v in place.items())
        + "    code: |\n" + "".join(f"      {c}\n" for c in code)
        for n, (place, code) in threads.items())
    text = (f"name: t\ntarget: {target}\nmemory:\n{mem}\nthreads:\n{body}")
    el = elaborate(parse_text(text, "t.yaml"), model(**kw))
    return el, BarrierProgram(el)


def kinds(p: BarrierProgram, w: int):
    return [(p.ops[o].kind, p.ops[o].implicit) for o in p.seq[w]]


def test_s_barrier_is_arrive_then_wait_and_implicit_ops():
    # S002: s.barrier = arrive then wait; the workgroup barrier is initialised with the
    # number of waves, joined at launch, dropped at thread end (10.3)
    el, p = prog({"T0": ({}, [BARRIER]), "T1": ({}, ["%r = load i32, ptr addrspace(1) @x"])})
    assert kinds(p, 0) == [("arrive", ""), ("wait", ""), ("drop", "drop")]
    assert kinds(p, 1) == [("drop", "drop")]       # a wave without barriers still drops
    inits = [p.ops[o] for o in p.launch if p.ops[o].kind == "init"]
    assert [(o.k, o.inst[0]) for o in inits] == [(2, "wg")]
    assert sorted(p.ops[o].wave for o in p.launch if p.ops[o].kind == "join") == [0, 1]


def test_one_phase_two_waves():
    # E = 2: {A0, A1} completes, both waits match it; the two end drops complete {D0, D1}
    # (E 2 -> 1 -> 0 = C), which no wait matches. One run up to the order inside phases.
    el, p = prog({"T0": ({}, [BARRIER]), "T1": ({}, [BARRIER])})
    runs = p.runs(10_000)
    assert len(runs) == 1 and runs[0]["ub"] is None
    a0, w0 = p.seq[0][:2]
    a1, w1 = p.seq[1][:2]
    assert runs[0]["match"][w0] == runs[0]["match"][w1]
    bexec = runs[0]["bexec"]
    assert bexec[a0] >> w1 & 1 and bexec[a1] >> w0 & 1      # participates-in
    assert not bexec[w0] >> a1 & 1


def test_pr170447_keeps_what_bmo_forbids():
    # pr170447 (S003: bmo consistent with hb): bmo(A0, A1) forbids hb(load1, store0) and
    # bmo(A1, A0) forbids hb(load0, store1); the end drops have no event after them, so
    # their order forbids nothing: two distinct runs, one per arrive order
    st, ld = "store i32 1, ptr addrspace(1) @x", "%r = load i32, ptr addrspace(1) @x"
    el, p = prog({"T0": ({}, [st, BARRIER, ld]), "T1": ({}, [st, BARRIER, ld])},
                 barrier_model="pr170447")
    runs = p.runs(10_000)
    s0, l0, s1, l1 = [e.id for e in el.events if not e.is_init]
    assert sorted(sorted(BarrierMemory.hb_forbidden(r)) for r in runs) == sorted(
        [[(l1, s0)], [(l0, s1)]])
    el, p = prog({"T0": ({}, [st, BARRIER, ld]), "T1": ({}, [st, BARRIER, ld])})
    assert len(p.runs(10_000)) == 1          # seed-002: bmo does not matter


def test_deadlock_every_run():
    # T1 waits before it signals; T0's wait needs T1's arrive: wait-never-completes
    el, p = prog({"T0": ({}, [SIG, WAIT]), "T1": ({}, [WAIT, SIG])})
    an = analyse(el, ["global"], 10_000)
    assert an.all_undefined and set(an.ub) == {"wait-never-completes"}
    # pr170447: T1's signal (followed by its end drop, not a wait) is never performed, and a
    # deadlocked run is judged by wait-never-completes alone (10.4, clarified)
    el, p = prog({"T0": ({}, [SIG, WAIT]), "T1": ({}, [WAIT, SIG])}, barrier_model="pr170447")
    an = analyse(el, ["global"], 10_000)
    assert an.all_undefined and set(an.ub) == {"wait-never-completes"}


def test_isfirst_exactly_one():
    # R-bar-isfirst: the first arrive of the phase (C = 0 before it) returns 1
    isf = "%f = call i1 @llvm.amdgcn.s.barrier.signal.isfirst(i32 -1)"
    el, p = prog({"T0": ({}, [isf, WAIT]), "T1": ({}, [isf, WAIT])})
    got = sorted(tuple(sorted(r["firsts"].values())) for r in p.runs(10_000))
    assert got == [(0, 1), (0, 1)]
    assert sorted(sorted(r["firsts"].items())[0][1] for r in p.runs(10_000)) == [0, 1]


def test_stale_token_phase_separation():
    # bar-arrive-twice-no-wait under barrier_participation run (the token reading): some runs
    # break phase separation, some are defined. In the
    # run A1a, W1a (blocked), A0a (P1 = {A1a, A0a} wakes W1a, token P1 to T0), A0b, W0 (takes
    # the stale P1), A1b (P2 = {A0b, A1b}), W1b (token P2), D1, D0: phase
    # separation for W0 (A0a -> A0b -> W0, A0b phase-with W1b), and A0b -> D0 in
    # thread-barrier-order with A0b participating only in W1b, not bexec-before D0: a drop
    # race as well (the report names the first rule of 10.4, drop-race)
    threads = {"T0": ({}, [SIG, SIG, WAIT]), "T1": ({}, [SIG, WAIT, SIG, WAIT])}
    el, p = prog(threads, barrier_participation="run")
    an = analyse(el, ["global"], 10_000)
    assert set(an.ub) == {"drop-race", "phase-separation"} and not an.all_undefined
    assert an.ub_rule() == "drop-race"
    # R-bar-participation constraints (default): W0 takes the stale P1 only in runs whose bmo
    # also has a participation where W0 takes P2 (or, bmo A0a A0b | A1a A1b, P1 is right):
    # every bmo is defined, nothing is undefined
    el, p = prog(threads)
    an = analyse(el, ["global"], 10_000)
    assert an.ub == {} and not an.all_undefined and an.groups


def test_drop_race_formal_and_completion():
    # bar-signal-then-end: T0 signals and ends; formal rule: the runs where A0 is in T1's
    # phase are drop races; completion: the runs where A0's phase is not complete at D0
    threads = {"T0": ({}, [SIG]), "T1": ({}, [SIG, WAIT])}
    el, p = prog(threads, barrier_participation="run")
    an = analyse(el, ["global"], 10_000)
    assert set(an.ub) == {"drop-race"} and not an.all_undefined
    # constraints (default): the formal rule excludes those bmo (no participation keeps it);
    # bmo A0, D0, A1 with W1 <- {A1} remains, defined, nothing undefined
    el, p = prog(threads)
    an = analyse(el, ["global"], 10_000)
    assert an.ub == {} and not an.all_undefined
    el, p = prog(threads, drop_race="completion")
    an = analyse(el, ["global"], 10_000)
    assert set(an.ub) == {"drop-race"} and not an.all_undefined


def test_cluster_barrier_objects():
    # S002 -3: one instance per cluster, k = number of workgroups; the end drop is per
    # workgroup (R-bar-cluster-drop) unless cluster_drop: wave
    cs, cw = "call void @llvm.amdgcn.s.barrier.signal(i32 -3)", \
        "call void @llvm.amdgcn.s.barrier.wait(i16 -3)"
    threads = {"T0": ({"workgroup": 0}, [cs, cw]), "T1": ({"workgroup": 1}, [cs, cw]),
               "T2": ({"workgroup": 1}, [cw])}
    el, p = prog(threads, target="gfx1250")
    inits = [p.ops[o] for o in p.launch if p.ops[o].kind == "init"]
    assert [(o.k, o.inst[0]) for o in inits] == [(2, "cluster")]
    assert len(p.seq) == 3 + 2                     # two per-workgroup drops
    an = analyse(el, ["global"], 10_000)
    assert an.ub == {} and len(an.groups) >= 1
    el, p = prog(threads, target="gfx1250", cluster_drop="wave")
    an = analyse(el, ["global"], 10_000)
    assert "drop-negative" in an.ub                # three drops, expected count 2


def test_named_leave_without_join_and_no_init():
    nb = "  x: {space: global, init: 0}\n  nb: {space: barrier}"
    leave = "call void @llvm.amdgcn.s.barrier.leave()"
    el, p = prog({"T0": ({}, [leave])}, target="gfx1250", mem=nb)
    assert set(analyse(el, ["global"], 100).ub) == {"drop-without-join"}
    join = "call void @llvm.amdgcn.s.barrier.join(ptr addrspace(3) @nb)"
    sv = "call void @llvm.amdgcn.s.barrier.signal.var(ptr addrspace(3) @nb, i32 1)"
    w1 = "call void @llvm.amdgcn.s.barrier.wait(i16 1)"
    el, p = prog({"T0": ({}, [join, sv, w1])}, target="gfx1250", mem=nb)
    assert set(analyse(el, ["global"], 100).ub) == {"uninitialised"}
    # R-bar-named-init signal-var: K = 1 initialises, the wave's own arrive completes
    el, p = prog({"T0": ({}, [join, sv, w1])}, target="gfx1250", mem=nb,
                 named_init="signal-var")
    an = analyse(el, ["global"], 100)
    assert an.ub == {} and not an.all_undefined


def test_bsw_conditions():
    # 10.5: a release fence before the arrive, an acquire fence after the wait, bexec(A, W);
    # a -one-as fence never pairs (condition 3); sync-as tags restrict the spaces (4)
    mem = "  x: {space: global, init: 0}\n  l: {space: local, init: 0}"
    rel = 'fence syncscope("workgroup") release'
    acq = 'fence syncscope("workgroup") acquire'
    el, p = prog({"T0": ({}, [rel, BARRIER]), "T1": ({}, [BARRIER, acq])}, mem=mem)
    runs = p.runs(100)
    bm = BarrierMemory(p, el, ["global", "local"])
    f, g = [e.id for e in el.events if e.is_fence]
    assert bm.bsw(runs[0]) == {("global", f, g), ("local", f, g)}
    el, p = prog({"T0": ({}, ['fence syncscope("workgroup-one-as") release', BARRIER]),
                  "T1": ({}, [BARRIER, acq])}, mem=mem)
    assert BarrierMemory(p, el, ["global", "local"]).bsw(p.runs(100)[0]) == frozenset()
    el, p = prog({"T0": ({}, [rel + ', !mmra !{!"amdgpu-synchronize-as", !"local"}', BARRIER]),
                  "T1": ({}, [BARRIER, acq])}, mem=mem)
    f, g = [e.id for e in el.events if e.is_fence]
    assert BarrierMemory(p, el, ["global", "local"]).bsw(p.runs(100)[0]) == {("local", f, g)}


def test_option_litmus_tests_reference_engine():
    # the option tests of tests/test_barrier.py, decided by the reference engine
    def st(name, m):
        r = run_reference(parse_file(os.path.join(BAR, name + ".yaml")), m)
        return r, [dict(s) for s in r.states]
    r, s = st("bar-LB-wavefront-rel-wg-acq", model(barrier_scopes="inclusive",
                                                   barrier_hb="none"))
    assert s == [{"T0:%r": None}] and r.ub is None
    r, s = st("bar-LB-wavefront-rel-wg-acq", model(barrier_scopes="inclusive"))
    assert s == [{"T0:%r": 0}] and r.ub is None
    # issue 17: R-bar-participation, R-bar-hb-exec, R-bar-leave, R-bar-signal-var
    r, s = st("bar-arrive-twice-no-wait", model(barrier_participation="run"))
    assert s == [{"T0:%z": 0}] and r.ub["rule"] == "drop-race" and not r.ub["all"]
    r, s = st("bar-signal-then-end", get_model(None))
    assert s == [{"T1:%r": None}] and r.ub is None
    r, s = st("bar-LB-atomics-acq-rel", model(barrier_hb="none"))
    assert s == [{"T0:%r": 0}, {"T0:%r": 1}]
    r, s = st("bar-LB-no-fences", model(barrier_hb="none"))
    assert s == [{"T0:%r": None}]
    r, s = st("bar-LB-chain-other-wg", model(barrier_hb="none"))
    assert {"T0:%r": 1, "T2:%a": 1} in s and len(s) == 4
    r, s = st("bar-named-leave-without-join", model(leave_unjoined="noop"))
    assert s == [{}] and r.ub is None
    r, s = st("bar-named-signal-var-count-ub", model(signal_var_count="table"))
    assert s == [] and r.ub["rule"] == "wait-never-completes" and r.ub["all"]
    r, s = st("bar-LB-wavefront-rel-wg-acq", get_model(None))
    assert s == [{"T0:%r": 0}]
    r, s = st("bar-signal-then-end", model(drop_race="completion"))
    assert s == [{"T1:%r": 1}] and r.ub["rule"] == "drop-race" and not r.ub["all"]
    r, s = st("bar-named-no-init", model(named_init="signal-var"))
    assert s == [{}] and r.ub is None
    r, s = st("bar-null-wait-after-join", model(null_wait="noop"))
    assert s == [{"T1:%r": None}]
    r, s = st("bar-cluster-two-waves-per-wg", model(cluster_drop="wave"))
    assert r.ub["rule"] == "drop-negative"
