"""Execution barriers (docs/semantics.md section 10): the options (each flips exactly the test
that pins it, with the hand-derived alternative outcome), the errors on barrier forms the
target or the model version lacks, and the judgement of undefined behaviour (10.6)."""

import json
import os
from dataclasses import replace

import pytest
from click.testing import CliRunner

from amdmm_smt.cli import main
from amdmm_smt.errors import LitmusError
from amdmm_smt.model import Model, Options, get_model
from amdmm_smt.frontend.litmus import parse_file, parse_text
from amdmm_smt.report.table import verdict_text
from amdmm_smt.solve import run_test

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BAR = os.path.join(ROOT, "litmus", "barrier")


def with_options(**kw) -> Model:
    return Model("test-" + "-".join(f"{k}={v}" for k, v in kw.items()),
                 options=replace(Options(), **kw))


def states(name: str, model: Model):
    r = run_test(parse_file(os.path.join(BAR, name + ".yaml")), model, timeout=120)
    return r, [dict(s) for s in r.states]


def test_barrier_scopes_option():
    # R-bar-overlap: inclusive scopes lose the hb from the read to the write; the read still
    # executes before the write (R-bar-hb-exec), so it is undef only without that reading
    r, s = states("bar-LB-wavefront-rel-wg-acq",
                  with_options(barrier_scopes="inclusive", barrier_hb="none"))
    assert s == [{"T0:%r": None}] and r.ub is None
    r, s = states("bar-LB-wavefront-rel-wg-acq", with_options(barrier_scopes="inclusive"))
    assert s == [{"T0:%r": 0}] and r.ub is None
    r, s = states("bar-LB-wavefront-rel-wg-acq", get_model(None))
    assert s == [{"T0:%r": 0}]


def test_drop_race_option():
    # R-bar-drop-race: under `completion` the defined runs are those where the phase with
    # T0's arrive completes before its drop, and they synchronize: r = 1
    r, s = states("bar-signal-then-end", with_options(drop_race="completion"))
    assert s == [{"T1:%r": 1}] and r.ub["rule"] == "drop-race" and not r.ub["all"]
    # the formal rule is a constraint (R-bar-participation): the bmo where T0's arrive
    # joins T1's phase is no execution, nothing is undefined
    r, s = states("bar-signal-then-end", get_model(None))
    assert s == [{"T1:%r": None}] and r.ub is None and r.status == "pass"
    # the run reading (tokens; the formal rule as undefined behaviour), issue 9's default
    r, s = states("bar-signal-then-end", with_options(barrier_participation="run"))
    assert s == [{"T1:%r": None}] and r.ub["rule"] == "drop-race" and not r.ub["all"]


def test_barrier_participation_option():
    # R-bar-participation: every bmo of bar-arrive-twice-no-wait has a participation that
    # keeps phase separation and the drop race: defined; the run reading makes T0's wait
    # take its stale token in some runs: drop race, undefined in some executions
    r, s = states("bar-arrive-twice-no-wait", get_model(None))
    assert s == [{"T0:%z": 0}] and r.ub is None and r.status == "pass"
    r, s = states("bar-arrive-twice-no-wait", with_options(barrier_participation="run"))
    assert s == [{"T0:%z": 0}] and r.ub["rule"] == "drop-race" and not r.ub["all"]


def test_barrier_hb_option():
    # R-bar-hb-exec: with barrier_hb none a read before the barrier may see a write after it
    r, s = states("bar-LB-atomics-acq-rel", with_options(barrier_hb="none"))
    assert s == [{"T0:%r": 0}, {"T0:%r": 1}]
    r, s = states("bar-LB-atomics-acq-rel", get_model(None))
    assert s == [{"T0:%r": 0}]
    r, s = states("bar-LB-no-fences", with_options(barrier_hb="none"))
    assert s == [{"T0:%r": None}]
    r, s = states("bar-LB-chain-other-wg", with_options(barrier_hb="none"))
    assert {"T0:%r": 1, "T2:%a": 1} in s and len(s) == 4
    r, s = states("bar-LB-chain-other-wg", get_model(None))
    assert {"T0:%r": 1, "T2:%a": 1} not in s and len(s) == 3


def test_leave_unjoined_option():
    # R-bar-leave: a leave with no current named barrier drops nothing under `noop`
    r, s = states("bar-named-leave-without-join", with_options(leave_unjoined="noop"))
    assert s == [{}] and r.ub is None
    r, s = states("bar-named-leave-without-join", get_model(None))
    assert s == [] and r.ub["rule"] == "drop-without-join" and r.ub["all"]


def test_signal_var_count_option():
    # R-bar-signal-var: K = C is undefined by the model's text, allowed by the table's; then
    # E = 1 < C = 2 after the increment: the phase never completes, the wait never does
    r, s = states("bar-named-signal-var-count-ub", with_options(signal_var_count="table"))
    assert s == [] and r.ub["rule"] == "wait-never-completes" and r.ub["all"]
    r, s = states("bar-named-signal-var-count-ub", get_model(None))
    assert s == [] and r.ub["rule"] == "signal-var-count" and r.ub["all"]


def test_named_init_option():
    r, s = states("bar-named-no-init", with_options(named_init="signal-var"))
    assert s == [{}] and r.ub is None
    r, s = states("bar-named-no-init", get_model(None))
    assert s == [] and r.ub["rule"] == "uninitialised" and r.ub["all"]


def test_null_wait_option():
    r, s = states("bar-null-wait-after-join", with_options(null_wait="noop"))
    assert s == [{"T1:%r": None}]
    r, s = states("bar-null-wait-after-join", get_model(None))
    assert s == [{"T1:%r": 1}]


def test_cluster_drop_option():
    r, s = states("bar-cluster-two-waves-per-wg", with_options(cluster_drop="wave"))
    assert s == [] and r.ub["rule"] == "drop-negative" and r.ub["all"]
    r, s = states("bar-cluster-two-waves-per-wg", get_model(None))
    assert s == [{"T1:%r": 1, "T2:%r": 1}] and r.ub is None


def test_versions_differ_where_the_twins_say(tmp_path):
    """`diff` between seed and pr170447 reports exactly the v003 tests (and nothing else of
    the barrier corpus that both versions accept)."""
    files = [os.path.join(BAR, f) for f in sorted(os.listdir(BAR))
             if f.startswith("bar-v003") and not f.endswith(".pr170447.yaml")]
    for f in files:
        t = parse_file(f)
        a = run_test(t, get_model("seed"), timeout=120)
        b = run_test(t, get_model("pr170447"), timeout=120)
        assert (a.states, a.ub is None) != (b.states, b.ub is None), f


SPLIT = """
name: t
target: {target}
memory:
  x: {{space: global}}
threads:
  T0:
    code: |
      call void @llvm.amdgcn.s.barrier.signal(i32 {id})
      call void @llvm.amdgcn.s.barrier.wait(i16 {id})
outcomes: []
"""


@pytest.mark.parametrize("target,bid,msg", [
    ("gfx942", -1, "no split barriers"),
    ("gfx1200", -2, "not accessible to the shader"),
    ("gfx1250", -4, "not accessible to the shader"),
    ("gfx1200", -3, "needs GFX12.5"),
    ("gfx1250", 5, "refer to named barriers using pointers"),
    ("gfx1250", 17, "there is no barrier ID 17"),
])
def test_barrier_ids_the_target_lacks_are_errors(target, bid, msg):
    t = parse_text(SPLIT.format(target=target, id=bid), "f.yaml")
    with pytest.raises(LitmusError, match=msg) as e:
        run_test(t, get_model(None))
    assert e.value.line == 9


NAMED = """
name: t
target: {target}
{model}
memory:
  nb: {{space: barrier}}
  x: {{space: global}}
threads:
  T0:
    code: |
      call void @llvm.amdgcn.s.barrier.init(ptr addrspace(3) @nb, i32 1)
outcomes: []
"""


def test_named_barriers_need_gfx1250_and_seed_002():
    t = parse_text(NAMED.format(target="gfx1200", model=""), "f.yaml")
    with pytest.raises(LitmusError, match="needs GFX12.5"):
        run_test(t, get_model(None))
    t = parse_text(NAMED.format(target="gfx1250", model="model: pr170447"), "f.yaml")
    with pytest.raises(LitmusError, match="not part of barrier_model pr170447"):
        run_test(t, get_model("pr170447"))


DIVERGE = """
name: t
target: gfx1250
memory:
  x: {space: global}
threads:
  T0:
    wavefront: 0
    code: |
      call void @llvm.amdgcn.s.barrier()
  T1:
    wavefront: 0
    code: |
      store i32 1, ptr addrspace(1) @x
outcomes: []
"""


@pytest.mark.parametrize("engine", ["smt", "reference"])
def test_wavefront_divergence_is_undefined(engine):
    """docs 10.3 / 15.9 (R-cf-bar-wave, issue 28 item 2): straight-line threads of one wave
    whose barrier instructions differ stand for a divergent branch around the barrier; S002
    "barrier operations can only be performed in wave-uniform control flow": every execution
    is undefined (it was an input error before), reported at T0's barrier (line 10)."""
    from amdmm_smt.reference import run_reference
    t = parse_text(DIVERGE, "f.yaml")
    r = (run_test if engine == "smt" else run_reference)(t, get_model(None))
    assert r.ub and r.ub["rule"] == "wave-divergent" and r.ub["all"] is True
    assert r.ub["op"] == "line 10" and "share a wavefront" in r.ub["run"][0]
    assert r.status == "fail"          # `outcomes: []` without expect: undefined
    r = (run_test if engine == "smt" else run_reference)(
        parse_text(DIVERGE.replace("outcomes: []", "expect: undefined"), "f.yaml"),
        get_model(None))
    assert r.status == "pass"


def test_partial_ub_fails_without_key(tmp_path):
    """R-bar-ub: a partially undefined test is never a clean pass."""
    # (bar-signal-then-end served here before issue 17: its drop race is now a constraint)
    text = open(os.path.join(BAR, "bar-cluster-arrive-twice.yaml")).read()
    text = text.replace("undefined: some\n", "")
    r = run_test(parse_text(text, "f.yaml"), get_model(None))
    assert r.status == "fail"
    assert any("undefined behaviour in some executions: cluster-arrive-twice" in v.detail
               for v in r.verdicts)
    # the key on a test with no undefined execution fails too
    text = open(os.path.join(BAR, "bar-MP-fences-wg.yaml")).read() + "undefined: some\n"
    r = run_test(parse_text(text, "g.yaml"), get_model(None))
    assert r.status == "fail"


def test_every_execution_undefined_without_expect_fails():
    text = open(os.path.join(BAR, "bar-deadlock-split-order.yaml")).read()
    text = text.replace("expect: undefined", "outcomes: []")
    r = run_test(parse_text(text, "f.yaml"), get_model(None))
    assert r.status == "fail" and r.ub["rule"] == "wait-never-completes"


def test_json_and_table_report_the_rule_and_a_run():
    f = os.path.join(BAR, "bar-deadlock-split-order.yaml")
    res = CliRunner().invoke(main, ["verify", "--json", f])
    rec = json.loads(res.output.strip().splitlines()[-1])
    assert rec["ub"]["rule"] == "wait-never-completes" and rec["ub"]["all"]
    assert rec["ub"]["run"], rec
    r = run_test(parse_file(f), get_model(None))
    assert "wait-never-completes at T0:wait" in verdict_text(r) and r.status == "pass"


def test_undefined_key_is_validated():
    with pytest.raises(LitmusError, match="undefined must be 'some'"):
        parse_text(SPLIT.format(target="gfx1200", id=-1) + "undefined: all\n", "f.yaml")


@pytest.mark.parametrize("waves,phases,split", [
    pytest.param(w, p, s, marks=[pytest.mark.long] if w * p > 6 else [])   # the long tier:
    for w in (1, 2, 3, 4) for p in (1, 2, 3) for s in (False, True)         # the largest
    if w * p <= 9])
@pytest.mark.parametrize("model", ["seed", "pr170447"])
def test_static_fast_path_equals_the_enumeration(waves, phases, split, model):
    """encode/barrier.py's static fast path for uniform workgroup barriers gives exactly what
    enumerating every run gives (docs 10.4)."""
    import sys
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    from barrier_scaling import family
    from amdmm_smt.elaborate.events import elaborate
    from amdmm_smt.encode import barrier as bar
    t = parse_text(family(waves, phases, split), "f.yaml")
    el = elaborate(t, get_model(model))
    fast, full = bar.analyse(el), bar.analyse(el, enumerate_only=True)
    assert fast.runs == 1 < full.runs or waves == 1
    assert fast.outcomes == full.outcomes and full.ub == {} and fast.ub == {}


def test_runs_satisfy_the_axioms():
    """R-bar-run is a reading of S002's axioms, not a new model: every defined run the Z3
    engine enumerates satisfies them as written — bmo extends thread-barrier-order; the set S
    of a wait is a contiguous interval of bmo with arrive count 0 before it, C = E after its
    last operation and nowhere else inside it; W -> X is never in thread-barrier-order for X
    in S; X participates in at most one wait per wave; barrier-executes-before is consistent
    with bmo. Checked on generated barrier tests."""
    import random
    from amdmm_smt.elaborate.events import elaborate
    from amdmm_smt.encode import barrier as bar
    from tests.gen import barrier_test
    checked = 0
    for s in range(80):
        t = parse_text(barrier_test(random.Random(s), f"g{s}"), "g.yaml")
        el = elaborate(t, get_model(None))
        r = bar._Runs(el)
        finished = []
        orig = r._finish

        def spy(st, parent, orig=orig, r=r):
            if not st[4]:
                finished.append((st, r._trace_ids(st, parent)))
            orig(st, parent)
        r._finish = spy
        r.explore()
        for st, order in finished:
            pw = {W: P for (W, P) in st[6]}
            reach = r._bexec(pw)
            if r._check(pw, reach):
                continue                     # an undefined run: no claim
            checked += 1
            _check_axioms(r, order, pw, reach)
    assert checked > 100


def _check_axioms(r, order, pw, reach):
    ops = r.ops
    hw = [op.id for op in ops if op.implicit in ("init", "join")]
    seq = hw + [i for i in order if ops[i].implicit != "join"]
    pos = {i: k for k, i in enumerate(seq)}
    bmo: dict = {}
    for i in seq:
        if ops[i].modifies:
            bmo.setdefault(ops[i].obj, []).append(i)
    for o, lst in bmo.items():
        assert ops[lst[0]].kind == "init" or ops[lst[0]].count is not None
        for a in lst:                          # bmo extends thread-barrier-order
            for b in lst:
                if ops[a].wave is not None and ops[a].wave == ops[b].wave \
                        and ops[a].seq < ops[b].seq:
                    assert pos[a] < pos[b]
        for a in lst:                          # bexec consistent with bmo
            for b in lst:
                if reach[a] >> b & 1:
                    assert pos[a] < pos[b]
    seen: dict = {}
    for W, P in pw.items():
        lst = bmo[ops[W].obj]
        idx = sorted(lst.index(x) for x in P)
        assert idx == list(range(idx[0], idx[-1] + 1))          # contiguous interval
        E = C = None
        for k, x in enumerate(lst):                              # replay the counts
            op = ops[x]
            if op.kind == "init":
                E, C = op.count, 0
            elif op.kind == "arrive":
                if E is None:
                    E, C = op.count, 0
                if op.count is not None:
                    E = op.count
                C += 1
            else:
                E -= 1
            if k == idx[0] - 1 or (k < idx[0] and idx[0] == 0):
                pass
            if idx[0] <= k <= idx[-1]:
                if k == idx[0]:
                    assert C - (1 if op.kind == "arrive" else 0) == 0   # zero before S
                assert (C == E) == (k == idx[-1])                       # equal only at end
            if C == E:
                C = 0
        for x in P:
            assert not (ops[x].wave == ops[W].wave and ops[x].seq > ops[W].seq)
            key = (x, ops[W].wave)
            assert key not in seen, "participates in two waits of one wave"
            seen[key] = W


def test_reductions_change_nothing(tier):
    """The partial-order reductions of encode/barrier.py (_quiet) and its static fast path
    give the same defined outcomes and the same set of broken UB rules as the plain
    enumeration of every interleaving, on the corpus and on generated barrier tests."""
    import glob
    import random
    from amdmm_smt.elaborate.events import elaborate
    from amdmm_smt.encode import barrier as bar
    from tests.gen import barrier_test
    from .conftest import count
    files = sorted(glob.glob(os.path.join(BAR, "*.yaml")))
    # the fast tier takes every corpus file but bar-4waves-2phases (whose plain enumeration of
    # every interleaving alone costs 10 s; the others cost milliseconds): the long tier has it
    heavy = os.path.join(BAR, "bar-4waves-2phases.yaml")
    assert heavy in files
    tests = [parse_file(f) for f in files if tier == "long" or f != heavy]
    tests += [parse_text(barrier_test(random.Random(s), f"g{s}"), "g.yaml")
              for s in range(count(tier, 60, 10))]
    for t in tests:
        for m in ("seed", "pr170447"):
            try:
                el = elaborate(t, get_model(m))
            except LitmusError:
                continue
            a = bar.analyse(el)
            b = bar.analyse(el, enumerate_only=True, reduce=False)
            assert a.outcomes == b.outcomes and set(a.ub) == set(b.ub), (t.name, m)
