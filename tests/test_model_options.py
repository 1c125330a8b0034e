"""Option files (issue 27 item 2): `models/options/<option>-<value>.cat` is the seed model
with the definitions one option value of `amdmm_smt/model.py:Options` replaces. The gate:
on the corpus the file gate of test_model_file.py runs, the file gives exactly the answers of
the hand encoders run with that option, in the SMT engine and in the reference engine; and
each file changes, against the seed file, exactly the answers a hand derivation from the
documents says (so a file that changed nothing would fail)."""

import dataclasses
import os
import textwrap

import pytest
from hypothesis import HealthCheck, assume, given, settings

from amdmm_smt.frontend.litmus import parse_file, parse_text
from amdmm_smt.model import get_model
from amdmm_smt.reference import run_reference
from amdmm_smt.solve import run_test

from .conftest import count, sampled
from .gen import litmus, render
from .test_model_file import (ASYNC, BARRIER, CORPUS, PR170447, SLOW_REFERENCE, _same,
                              barrier_generated)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPTS = os.path.join(ROOT, "models", "options")
SEED = os.path.join(ROOT, "models", "seed.cat")

# option, value, file: every option value of today the language can express
# (docs/semantics.md §8 says which cannot, and why)
OPTION_FILES = [
    ("avvis", False, "avvis-false.cat"),
    ("scope_inclusion", "opencl", "scope_inclusion-opencl.cat"),
    ("lds_av_workgroup", True, "lds_av_workgroup-true.cat"),
    ("volatile_av", True, "volatile_av-true.cat"),
    ("read_lo", True, "read_lo-true.cat"),
    ("coherence", "langref", "coherence-langref.cat"),
    ("final_co", "hb", "final_co-hb.cat"),
    ("no_thin_air", True, "no_thin_air-true.cat"),
    ("barrier_scopes", "inclusive", "barrier_scopes-inclusive.cat"),
    ("barrier_hb", "none", "barrier_hb-none.cat"),
    ("async_done_edges", "first", "async_done_edges-first.cat"),
    ("async_model", "upstream-stages", "async_model-upstream-stages.cat"),
]
# engine options (`option NAME = VALUE`, docs/model-language.md "Engine options"): the
# machinery of the runs, sequences, scope instances and values, set by name in a file
ENGINE_OPTION_FILES = [
    ("init_in_every_scope", False, "init_in_every_scope-false.cat"),
    ("lds_scope", "data", "lds_scope-data.cat"),
    ("lds_scope", "avvis", "lds_scope-avvis.cat"),
    ("cas_undef", "fail", "cas_undef-fail.cat"),
    ("barrier_participation", "run", "barrier_participation-run.cat"),
    ("drop_race", "completion", "drop_race-completion.cat"),
    ("named_init", "signal-var", "named_init-signal-var.cat"),
    ("null_wait", "noop", "null_wait-noop.cat"),
    ("cluster_drop", "wave", "cluster_drop-wave.cat"),
    ("leave_unjoined", "noop", "leave_unjoined-noop.cat"),
    ("signal_var_count", "table", "signal_var_count-table.cat"),
    ("async_scope", "workgroup", "async_scope-workgroup.cat"),
    ("async_calls", "inlined", "async_calls-inlined.cat"),
    ("barrier_model", "pr170447", "barrier_model-pr170447.cat"),
]
OPTION_FILES += ENGINE_OPTION_FILES
# the options of the barrier memory model (models/barrier.cat) and of the barrier runs are
# gated on the tests with barriers, the async ones on the async tests; the others change
# nothing there that the core corpus does not show
BARRIER_OPTIONS = {"barrier_scopes", "barrier_hb", "barrier_participation", "drop_race",
                   "named_init", "null_wait", "cluster_drop", "leave_unjoined",
                   "signal_var_count", "barrier_model"}
ASYNC_OPTIONS = {"async_scope", "async_calls", "async_done_edges", "async_model"}
ENGINE = {o for o, _, _ in ENGINE_OPTION_FILES}


def _hand(option, value):
    m = get_model(None)
    return dataclasses.replace(m, options=dataclasses.replace(m.options, **{option: value}))


def test_every_option_file_is_listed_and_exists():
    listed = {f for _, _, f in OPTION_FILES}
    assert listed == {f for f in os.listdir(OPTS) if f.endswith(".cat")}


# the cases whose reference runs cost tens of seconds under a file: long tier only (each is
# gated under the seed and upstream files in test_model_file.py's long tier too)
HEAVY = {"async/async-uneven-blocks.yaml", "calls/async-call-nested.yaml",
         "calls/async-call-nested.inlined.yaml", "barrier/bar-4waves-2phases.yaml"}


def _rels(option: str) -> tuple:
    """The tests an option's file is gated on, and the name of that list."""
    if option == "barrier_model":
        return "pr170447", PR170447
    if option in BARRIER_OPTIONS:
        return "barrier", BARRIER
    if option in ASYNC_OPTIONS:
        return "async", [r for r in ASYNC if not r.startswith("forms/")]
    return "corpus", CORPUS


def _cases(shift: int = 0) -> list:
    """(file, test) pairs. The fast tier runs every k-th test of each file's gate, k the
    number of files gated on the same tests (at least 8: the 12 files on the corpus take every
    12th, the 9 on the barrier tests every 9th), from an offset that moves by one with each
    such file, so that every test of the corpus and of the barrier tests is still run under
    exactly one option file in each engine (the reference gate from another offset than the
    SMT gate); the long tier runs the rest (each option's own hand-derived tests, below and in
    tests/test_barrier.py, test_async.py, test_calls.py and the corpus, pin what it means)."""
    groups: dict = {}
    for o, _, f in OPTION_FILES:
        groups.setdefault(_rels(o)[0], []).append(f)
    out = []
    for o, _, f in OPTION_FILES:
        name, rels = _rels(o)
        files = groups[name]
        out += sampled([(f, rel) for rel in rels], max(8, len(files)), files.index(f) + shift,
                       HEAVY, key=lambda v: v[1])
    return out


def test_the_fast_tier_runs_each_test_under_some_option_file():
    """What _cases says of its sample: each test of the corpus and of the barrier tests meets
    one option file in the fast tier of each gate, in the SMT and reference gates alike."""
    for shift in (0, 3):
        fast = {c.values for c in _cases(shift) if not c.marks}
        for name, rels in (("corpus", CORPUS), ("barrier", BARRIER)):
            met = {rel for f, rel in fast if f in {g for o, _, g in OPTION_FILES
                                                     if _rels(o)[0] == name}}
            assert met == set(rels) - HEAVY, (name, shift, sorted(set(rels) - HEAVY - met))


CASES = _cases()


@pytest.mark.parametrize("fname,rel", CASES)
def test_option_file_equals_the_hand_encoder_with_the_option_smt(fname, rel):
    option, value = next((o, v) for o, v, f in OPTION_FILES if f == fname)
    t = parse_file(os.path.join(ROOT, "litmus", rel))
    _same(run_test(t, _hand(option, value)), run_test(t, get_model(os.path.join(OPTS, fname))),
          rel)


@pytest.mark.parametrize("fname,rel", [c for c in _cases(3) if c.values[1] not in SLOW_REFERENCE])
def test_option_file_equals_the_hand_engine_with_the_option_reference(fname, rel):
    """The file-driven reference engine against the hand reference engine with the option;
    the hand reference engine does not implement no_thin_air (reference/engine.py), so that
    file is held to the hand SMT encoder's outcomes instead."""
    option, value = next((o, v) for o, v, f in OPTION_FILES if f == fname)
    t = parse_file(os.path.join(ROOT, "litmus", rel))
    got = run_reference(t, get_model(os.path.join(OPTS, fname)))
    if option == "no_thin_air":
        want = run_test(t, _hand(option, value))
        assert want.complete and got.complete, rel
        assert set(got.states) == set(want.states), rel
    else:
        _same(run_reference(t, _hand(option, value)), got, rel)


# ---- each option file changes what a hand derivation says it changes ---------------------------

def _both(model_path, test):
    t = test if not isinstance(test, str) else parse_text(textwrap.dedent(test), "t.yaml")
    m = get_model(model_path)
    a, b = run_test(t, m), run_reference(t, m)
    assert set(a.states) == set(b.states)
    return set(a.states)


def _file(rel):
    return parse_file(os.path.join(ROOT, "litmus", rel))


def test_avvis_false_makes_the_avnone_flag_data_visible():
    """litmus/models/avnone-flags.{seed,llvm-hsa}: the release and acquire are tagged
    amdgcn-av:none, so under the seed nothing makes T0's plain store available or visible, it
    is not location-ordered before T1's read, which may also see the initial write: undef
    (S000 value rule). Without availability and visibility, location order is happens-before:
    with r0 = 1 the store happens-before the read and shadows the initial write: 1."""
    t = _file("models/avnone-flags.seed.yaml")
    assert _both(SEED, t) == {(("T1:%r0", 0), ("T1:%r1", None)),
                              (("T1:%r0", 1), ("T1:%r1", None))}
    assert _both(os.path.join(OPTS, "avvis-false.cat"), t) == {
        (("T1:%r0", 0), ("T1:%r1", None)), (("T1:%r0", 1), ("T1:%r1", 1))}
    assert _both(os.path.join(ROOT, "models", "llvm-hsa.cat"), t) == _both(
        os.path.join(OPTS, "avvis-false.cat"), t)


def test_scope_inclusion_opencl_breaks_the_wg_agent_pair():
    """litmus/models/scope-mismatch-same-wg.{hsa,opencl}: a workgroup release and an agent
    acquire in one workgroup are inclusive under HSA (S002 table) and synchronize; OpenCL
    "requires the memory scopes to exactly match": no synchronization, and the flag read and
    its store are atomic but not inclusive, so the read may see two writes (the initial one,
    the store) without the atomic branch: undef; the data read likewise: undef."""
    t = _file("models/scope-mismatch-same-wg.hsa.yaml")
    assert _both(SEED, t) == {(("T1:%r0", 0), ("T1:%r1", None)),
                              (("T1:%r0", 1), ("T1:%r1", 1))}
    assert _both(os.path.join(OPTS, "scope_inclusion-opencl.cat"), t) == {
        (("T1:%r0", None), ("T1:%r1", None))}


@pytest.mark.parametrize("stem,fname", [("lds-avnone-flags", "lds_av_workgroup-true.cat"),
                                        ("volatile-avnone-flags", "volatile_av-true.cat")])
def test_upstream_av_roles_make_the_avnone_data_store_available(stem, fname):
    """litmus/models/{lds,volatile}-avnone-flags.{seed,upstream}: the flags are tagged
    amdgcn-av:none, so only the data store's own store-available role (UP 2.1(2): every LDS
    access at workgroup; UP 2.1(3): a plain volatile access at the widest scope of its space)
    and the data load's load-visible role can make it visible; under the seed the plain
    accesses have no role: undef with r0 = 1; with the option file the store is an
    availability operation on itself that happens-before the load, inclusive with it: 1."""
    t = _file(f"models/{stem}.seed.yaml")
    assert _both(SEED, t) == {(("T1:%r0", 0), ("T1:%r1", None)),
                              (("T1:%r0", 1), ("T1:%r1", None))}
    assert _both(os.path.join(OPTS, fname), t) == {(("T1:%r0", 0), ("T1:%r1", None)),
                                                   (("T1:%r0", 1), ("T1:%r1", 1))}


def test_read_lo_shadows_the_store_the_rmw_read():
    """litmus/models/read-lo-rmw-shadow.{seed,upstream}: UP 2.1(7) makes the RMW's read
    location-ordered before what it happens-before, which shadows the store it read for T1's
    later read (the description of the .upstream file derives it): %c = 2 instead of undef."""
    t = _file("models/read-lo-rmw-shadow.seed.yaml")
    assert _both(SEED, t) == {(("T0:%a", None), ("T1:%b", 0), ("T1:%c", None)),
                              (("T0:%a", 0), ("T1:%b", 1), ("T1:%c", None))}
    assert _both(os.path.join(OPTS, "read_lo-true.cat"), t) == {
        (("T0:%a", None), ("T1:%b", 0), ("T1:%c", None)),
        (("T0:%a", 0), ("T1:%b", 1), ("T1:%c", 2))}


COWR = """
    name: cowr
    memory:
      x: {space: global, init: 0}
    threads:
      T0:
        workgroup: 0
        code: |
          store atomic i32 1, ptr addrspace(1) @x syncscope("agent") monotonic
          %r0 = load atomic i32, ptr addrspace(1) @x syncscope("agent") monotonic
      T1:
        workgroup: 1
        code: |
          store atomic i32 2, ptr addrspace(1) @x syncscope("agent") monotonic
    exists: "@x == 1"
    expect: allowed
"""


def test_coherence_langref_allows_reading_a_write_older_than_its_own():
    """The read may not see the initial write (W1 = 1 is location-ordered before it by program
    order, and the initial write before W1: S000's first may-see exception); it may see
    W1 and W2 = 2, atomic, agent scope in one agent (inclusive): the value of either. CoWR
    (C++) forbids reading W2 when co(W2, W1), since W1 happens-before the read: final x = 1
    with r0 = 2 is out. LangRef states only CoWW and CoRR, neither of which speaks of a write
    and a read: allowed."""
    assert _both(SEED, COWR) == {(("T0:%r0", 1), ("@x", 1)), (("T0:%r0", 1), ("@x", 2)),
                                 (("T0:%r0", 2), ("@x", 2))}
    assert _both(os.path.join(OPTS, "coherence-langref.cat"), COWR) == {
        (("T0:%r0", 1), ("@x", 1)), (("T0:%r0", 1), ("@x", 2)), (("T0:%r0", 2), ("@x", 2)),
        (("T0:%r0", 2), ("@x", 1))}


FINAL = """
    name: final
    memory:
      x: {space: global, init: 0}
      y: {space: global, init: 0}
    threads:
      T0:
        workgroup: 0
        code: |
          store i32 1, ptr addrspace(1) @x
          store atomic i32 1, ptr addrspace(1) @y syncscope("agent") release, !mmra !{!"amdgcn-av", !"none"}
      T1:
        workgroup: 1
        code: |
          %r = load atomic i32, ptr addrspace(1) @y syncscope("agent") acquire
          store i32 2, ptr addrspace(1) @x
    exists: "@x == 1"
    expect: allowed
"""


def test_final_co_hb_orders_the_final_value_by_happens_before():
    """With r = 1, x = 1 happens-before x = 2 (synchronizes-with), but the release is tagged
    amdgcn-av:none, so x = 1 has no availability operation and is not location-ordered before
    x = 2 (S000 location order): under R-final's default (co extends lo) either store may be
    last; final_co: hb orders them by happens-before: @x = 1 with r = 1 is gone."""
    every = {(("T1:%r", 0), ("@x", 1)), (("T1:%r", 0), ("@x", 2)),
             (("T1:%r", 1), ("@x", 1)), (("T1:%r", 1), ("@x", 2))}
    assert _both(SEED, FINAL) == every
    assert _both(os.path.join(OPTS, "final_co-hb.cat"), FINAL) == every - {
        (("T1:%r", 1), ("@x", 1))}


def test_no_thin_air_forbids_load_buffering():
    """LB+mono.agent.diff-wg: each monotonic agent load may see the initial write and the
    other thread's store (no happens-before, nothing location-ordered but the initial write;
    atomic, inclusive): the value of either, so r0 = r1 = 1 is allowed by the documents. RC11's
    acyclic (po | rf) forbids it: each load would read from the store program-ordered after
    the other load."""
    t = _file("classic/LB+mono.agent.diff-wg.yaml")
    every = {(("T0:%r0", a), ("T1:%r1", b)) for a in (0, 1) for b in (0, 1)}
    assert _both(SEED, t) == every
    assert _both(os.path.join(OPTS, "no_thin_air-true.cat"), t) == every - {
        (("T0:%r0", 1), ("T1:%r1", 1))}


def test_models_lists_the_option_files_and_marks_the_option_table():
    from click.testing import CliRunner
    from amdmm_smt.cli import main
    r = CliRunner().invoke(main, ["models"])
    assert r.exit_code == 0, r.output
    for option, value, f in OPTION_FILES:
        assert f"\noptions/{f}: the seed" in r.output, f
        v = str(value).lower() if isinstance(value, bool) else value
        assert f"\n        {v} as a model file: options/{f}\n" in r.output, f
    # an option no file expresses is listed without a file (default_target: any target name)
    lines = r.output.splitlines()
    i = next(k for k, ln in enumerate(lines) if ln.startswith("    default_target: "))
    assert not any("as a model file" in ln for ln in lines[i + 1:i + 2])
    assert "upstream-stages as a model file: options/async_model-upstream-stages.cat" in r.output


def test_barrier_scopes_inclusive_drops_the_wavefront_release_pair():
    """Two waves of one workgroup. T0: a workgroup-scope monotonic store of 1 to x, a
    wavefront-scope release fence, the barrier; T1: the barrier, a workgroup-scope acquire
    fence, a workgroup-scope monotonic load of x. A0 barrier-executes-before W1 (one phase).
    Seed (R-bar-overlap): T1's workgroup instance contains T0's fence, the scopes overlap, so
    BR synchronizes-with BA and the store happens-before the load. The store is
    store-available at workgroup scope (S000: an atomic operation that results in a store), the
    load load-visible at workgroup scope, inclusive (one workgroup): by visibility clause (1)
    with X = W itself the load makes the store visible, so it is location-ordered before the
    load; the initial write is location-ordered before the store, so the load may not see it:
    r = 1 only. With barrier_scopes-inclusive.cat the fences are not inclusive (T0's wavefront
    instance does not contain T1's fence, S000 "Inclusive Scopes"): no synchronizes-with,
    nothing else orders the two (barrier execution order only keeps a read from seeing a
    later write), the store is not visible to the load, which may see both writes; both
    are atomic with inclusive scopes (the atomic case of the value rule): 0 or 1."""
    text = """
    name: bar-MP-wave-rel-wg-acq-atomic
    target: gfx1250
    memory: {x: {space: global, init: 0}}
    threads:
      T0:
        wavefront: 0
        code: |
          store atomic i32 1, ptr addrspace(1) @x syncscope("workgroup") monotonic, align 4
          fence syncscope("wavefront") release
          call void @llvm.amdgcn.s.barrier()
      T1:
        wavefront: 1
        code: |
          call void @llvm.amdgcn.s.barrier()
          fence syncscope("workgroup") acquire
          %r = load atomic i32, ptr addrspace(1) @x syncscope("workgroup") monotonic, align 4
    """
    assert _both(SEED, text) == {(("T1:%r", 1),)}
    assert _both(os.path.join(OPTS, "barrier_scopes-inclusive.cat"), text) == {
        (("T1:%r", 0),), (("T1:%r", 1),)}


def test_barrier_hb_none_lets_the_read_see_the_write_after_the_barrier():
    """litmus/barrier/bar-LB-no-fences: T0 reads x then arrives and waits, T1 waits then
    stores 1 to x, no fences. Seed: A0 barrier-executes-before W1, so the read executes before
    the store (R-bar-hb-exec: hbx), the read may not see it; it sees only the initial write,
    which is location-ordered before it: r = 0. Without execution order (barrier_hb-none.cat)
    the read may see both the initial write and the store, which is not location-ordered
    before it: undef (S000 value rule)."""
    t = _file("barrier/bar-LB-no-fences.yaml")
    assert _both(SEED, t) == {(("T0:%r", 0),)}
    assert _both(os.path.join(OPTS, "barrier_hb-none.cat"), t) == {(("T0:%r", None),)}


# ---- generated tests under each option file ------------------------------------------------------

@pytest.mark.parametrize("fname", [f for _, _, f in OPTION_FILES])
def test_generated_tests_agree_under_each_option_file(fname, tier):
    """tests/gen.py's generated tests (MMRA tags, LDS): the hand SMT encoder with the option,
    the option file's SMT encoding and the option file's reference engine give one answer."""
    option, value = next((o, v) for o, v, f in OPTION_FILES if f == fname)
    path = os.path.join(OPTS, fname)
    if option in BARRIER_OPTIONS:        # generated barrier tests (test_model_file.py)
        n = int(os.environ.get("AMDMM_OPTION_EXAMPLES", count(tier, 9, 2)))
        barrier_generated(n, path, hand=_hand(option, value), offset=500)
        return
    if option in ASYNC_OPTIONS:          # generated async tests (tests/gen.py async_examples)
        from .gen import async_examples
        n = int(os.environ.get("AMDMM_OPTION_EXAMPLES", count(tier, 9, 2)))
        for i, g in enumerate(async_examples(n, seed=7)):
            text = render(g, f"gen-async-opt-{i}")
            t = parse_text(text, "gen.yaml")
            hand = run_test(t, _hand(option, value), timeout=120)
            cat = run_test(t, get_model(path), timeout=120)
            assert hand.complete and cat.complete and set(hand.states) == set(cat.states), text
            ref = run_reference(t, get_model(path), limit=3_000)
            if ref.complete:
                assert set(ref.states) == set(hand.states), text
        return

    @settings(max_examples=int(os.environ.get("AMDMM_OPTION_EXAMPLES", count(tier, 15, 4))),
              deadline=None,
              derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(litmus(tags=True, lds=True, max_threads=3, max_ops=3))
    def check(g):
        text = render(g)
        t = parse_text(text, "gen.yaml")
        hand = run_test(t, _hand(option, value), timeout=120)
        cat = run_test(t, get_model(path), timeout=120)
        assume(hand.complete and cat.complete and not hand.thin_air)
        assert set(hand.states) == set(cat.states), text
        ref = run_reference(t, get_model(path), limit=3_000)
        if ref.complete:
            assert set(ref.states) == set(hand.states), text
    check()


@pytest.mark.parametrize("rel", ["llvm-hsa.cat", "opencl.cat", "upstream-2026.cat"]
                         + [f"options/{f}" for _, _, f in OPTION_FILES])
def test_option_and_version_files_check_clean(rel):
    """`amdmm-smt model check`: no error, no warning (a file's own definitions are all used)."""
    from click.testing import CliRunner
    from amdmm_smt.cli import main
    r = CliRunner().invoke(main, ["model", "check", os.path.join(ROOT, "models", rel)])
    assert r.exit_code == 0 and "warning" not in r.output.replace("0 warning(s)", ""), r.output
