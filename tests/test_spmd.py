"""Thread groups: one code run by N threads that diverge by their ids (issue 28 item 2;
docs/litmus-format.md "Thread groups", docs/semantics.md 15.10). The parser expands a group
into threads NAME0..NAME(N-1) whose id intrinsics are constants, so both engines see plain
per-thread code; a barrier is judged per wave (S002 "barrier operations can only be
performed in wave-uniform control flow")."""

import glob
import os

import pytest

from amdmm_smt.errors import LitmusError
from amdmm_smt.frontend.litmus import mbcnt, parse_text
from amdmm_smt.model import get_model
from amdmm_smt.reference import run_reference
from amdmm_smt.report.table import verdict_text
from amdmm_smt.solve import run_test

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPMD = sorted(glob.glob(os.path.join(ROOT, "litmus", "spmd", "*.yaml"))) + [
    os.path.join(ROOT, "litmus", "barrier", "bar-straight-wave-divergent.yaml")]
ENGINES = {"smt": run_test, "reference": run_reference}


def run(text: str, engine: str = "smt"):
    t = parse_text(text, "g.yaml")
    return ENGINES[engine](t, get_model(t.model))


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("path", SPMD, ids=[os.path.basename(p) for p in SPMD])
def test_corpus_both_engines(path, engine):
    r = run(open(path).read(), engine)
    assert r.status == "pass", verdict_text(r)


GROUP = """\
name: g
target: {target}
memory:
  x: {{space: global}}
threads:
  T:
{keys}
    code: |
      %a = call i32 @llvm.amdgcn.workitem.id.x()
      %b = call i32 @llvm.amdgcn.workgroup.id.x()
      %lo = call i32 @llvm.amdgcn.mbcnt.lo(i32 -1, i32 0)
      %c = call i32 @llvm.amdgcn.mbcnt.hi(i32 -1, i32 %lo)
      %d = call i32 @llvm.amdgcn.workitem.id.y()
"""


def ids(text):
    """Each thread's (name, placement, folded id values) as the parser gives them."""
    t = parse_text(text, "g.yaml")
    out = []
    for th in t.threads:
        vals = {}
        for i in th.code:
            a, b = i.ops
            vals[i.reg] = a + b if isinstance(a, int) else ("+", a.name, b)
        out.append((th.name, th.workgroup, th.wavefront, th.group, vals["a"], vals["b"],
                    vals["lo"], vals["c"], vals["d"]))
    return out


def test_layout_and_ids():
    """count 6, per_workgroup 3, lanes 2, wave size 32: workgroups 1 and 2 (from the group's
    workgroup: 1), waves 0 and 1 in each; workitem.id.x = 32 * wave + lane; the mbcnt pair
    is the lane; id.y is 0 (groups are one-dimensional)."""
    keys = "    count: 6\n    per_workgroup: 3\n    lanes: 2\n    workgroup: 1"
    got = ids(GROUP.format(target="gfx1250", keys=keys))
    assert [g[:4] for g in got] == [("T0", 1, 0, "T"), ("T1", 1, 0, "T"), ("T2", 1, 1, "T"),
                                    ("T3", 2, 0, "T"), ("T4", 2, 0, "T"), ("T5", 2, 1, "T")]
    assert [g[4] for g in got] == [0, 1, 32, 0, 1, 32]
    assert [g[5] for g in got] == [1, 1, 1, 2, 2, 2]
    assert [g[6] for g in got] == [0, 1, 0, 0, 1, 0]          # lane = mbcnt.lo(-1, 0)
    assert [g[7] for g in got] == [("+", "lo", 0)] * 6         # mbcnt.hi adds 0 below 32
    assert [g[8] for g in got] == [0] * 6


def test_wave_size_default_follows_the_target():
    """gfx9 has wave64 only: ids 64 * wave + lane; gfx10 and later default to wave32."""
    keys = "    count: 2\n    lanes: 1"
    assert [g[4] for g in ids(GROUP.format(target="gfx942", keys=keys))] == [0, 64]
    assert [g[4] for g in ids(GROUP.format(target="gfx1200", keys=keys))] == [0, 32]
    keys += "\n    wave_size: 64"
    assert [g[4] for g in ids(GROUP.format(target="gfx1200", keys=keys))] == [0, 64]


def test_mbcnt_counts_the_mask_bits_below_the_lane():
    """v_mbcnt_lo / hi: bits set in the mask among the lanes below this one, lanes 0-31 in
    the low word, 32-63 in the high word."""
    assert [mbcnt("lo", -1, l) for l in (0, 1, 5, 31, 32, 40, 63)] == [0, 1, 5, 31, 32, 32, 32]
    assert [mbcnt("hi", -1, l) for l in (0, 31, 32, 33, 63)] == [0, 0, 0, 1, 31]
    assert mbcnt("lo", 0b1010, 4) == 2 and mbcnt("lo", 0b1010, 3) == 1
    assert mbcnt("hi", 0b1, 33) == 1 and mbcnt("hi", 0b10, 33) == 0


BAD = [
    ("    count: 0", 7, "T.count must be between 1 and 64 (got 0)"),
    ("    count: 65", 7, "T.count must be between 1 and 64 (got 65)"),
    ("    count: -1", 7, "T.count must be between 1 and 64 (got -1)"),
    ("    count: two", 7, "T.count must be an integer"),
    ("    count: 4\n    lanes: 0", 8, "T.lanes must be between 1 and 32 (got 0)"),
    ("    count: 4\n    lanes: 33", 8, "T.lanes must be between 1 and 32 (got 33)"),
    ("    count: 4\n    per_workgroup: 5", 8, "T.per_workgroup must be between 1 and 4"),
    ("    count: 4\n    wave_size: 16", 8, "T.wave_size must be 32 or 64 (got 16)"),
    ("    lanes: 2", 7, "`lanes` belongs to a thread group, which needs `count: N`"),
    ("    count: 2\n    size: 2", 8, "unknown key 'size' for thread 'T'"),
]


@pytest.mark.parametrize("keys,line,msg", BAD, ids=[b[2][:30] for b in BAD])
def test_bad_group_keys(keys, line, msg):
    with pytest.raises(LitmusError) as e:
        parse_text(GROUP.format(target="gfx1250", keys=keys), "g.yaml")
    assert e.value.line == line and msg in e.value.message, str(e.value)


def test_too_many_threads_in_all():
    text = GROUP.format(target="gfx1250", keys="    count: 60").replace(
        "threads:\n", "threads:\n  U:\n    count: 5\n    code: |\n      fence acquire\n")
    with pytest.raises(LitmusError, match="brings the test to 65 threads"):
        parse_text(text, "g.yaml")


def test_names_may_not_collide():
    text = GROUP.format(target="gfx1250", keys="    count: 2") + \
        "  T1:\n    code: |\n      fence acquire\n"
    with pytest.raises(LitmusError) as e:
        parse_text(text, "g.yaml")
    assert "thread name T1 is used twice" in e.value.message


@pytest.mark.parametrize("call", [
    "%a = call i32 @llvm.amdgcn.workitem.id.x()",
    "%a = call i32 @llvm.amdgcn.workgroup.id.x()",
    "%a = call i32 @llvm.amdgcn.mbcnt.lo(i32 -1, i32 0)",
])
def test_id_intrinsic_outside_a_group(call):
    text = f"name: g\nmemory:\n  x: {{}}\nthreads:\n  T0:\n    code: |\n      {call}\n"
    with pytest.raises(LitmusError) as e:
        parse_text(text, "g.yaml")
    assert e.value.line == 7 and "declare the thread as a group" in e.value.message


@pytest.mark.parametrize("call,msg", [
    ("%a = call i32 @llvm.amdgcn.workitem.id.x(i32 0)", "takes no arguments"),
    ("call void @llvm.amdgcn.workitem.id.x()", "expected `%r = call i32"),
    ("%a = call i32 @llvm.amdgcn.mbcnt.lo(i32 %m, i32 0)", "the mask must be an integer"),
    ("%a = call i32 @llvm.amdgcn.mbcnt.lo(i32 -1)", "expected `%r = call i32"),
])
def test_bad_id_calls(call, msg):
    text = (f"name: g\nmemory:\n  x: {{}}\nthreads:\n  T:\n    count: 2\n    code: |\n"
            f"      {call}\n")
    with pytest.raises(LitmusError) as e:
        parse_text(text, "g.yaml")
    assert e.value.line == 8 and msg in e.value.message, e.value.message


def test_errors_are_one_line_exit_2(tmp_path):
    from click.testing import CliRunner
    from amdmm_smt.cli import main
    f = tmp_path / "bad.yaml"
    f.write_text(GROUP.format(target="gfx1250", keys="    count: 0"))
    r = CliRunner().invoke(main, ["verify", str(f)])
    assert r.exit_code == 2
    assert f"{f}:7: T.count must be between 1 and 64 (got 0)" in r.output
    assert "Traceback" not in r.output


def _spmd(name):
    return open(os.path.join(ROOT, "litmus", "spmd", name)).read()


@pytest.mark.parametrize("engine", ENGINES)
def test_mutant_lane_branch_makes_the_uniform_test_undefined(engine):
    """The wave-uniform MP test branches on the wave number (id >> 5); branching on the
    id's lowest bit instead sends the lanes of each wave different ways around the
    barriers: undefined in every execution (a test that can fail)."""
    text = _spmd("spmd-wave-uniform-branch-MP.yaml").replace(
        "%w = lshr i32 %tid, 5", "%w = and i32 %tid, 1")
    r = run(text, engine)
    assert r.status == "fail" and r.ub["rule"] == "wave-divergent" and r.ub["all"]


@pytest.mark.parametrize("engine", ENGINES)
def test_mutant_one_lane_per_wave_makes_the_lane_branch_defined(engine):
    """With lanes: 1 the two threads are two waves of one workgroup: the branch on the lane
    id (now 0 in both) is uniform, both take the barrier: defined."""
    text = _spmd("spmd-lane-branch-barrier-ub.yaml").replace(
        "    count: 2\n", "    count: 2\n    lanes: 1\n").replace("expect: undefined", "")
    r = run(text, engine)
    assert r.status == "pass" and r.ub is None, verdict_text(r)


@pytest.mark.parametrize("engine", ENGINES)
def test_both_arms_as_separate_threads_is_defined(engine):
    """R-spmd-site is a reading for one group's code: two threads written apart, each with
    one s.barrier, perform the same barrier operation (docs 10.3, unchanged)."""
    text = """\
name: apart
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
      call void @llvm.amdgcn.s.barrier()
"""
    r = run(text, engine)
    assert r.status == "pass" and r.ub is None


def test_two_groups_in_one_workgroup_do_not_share_a_wave_by_default():
    """A group's first wavefront defaults to the first number no earlier thread of its
    workgroup names; `wavefront:` puts it where the test says."""
    text = """\
name: g
memory:
  x: {space: global}
threads:
  A:
    count: 2
    code: |
      fence acquire
  B:
    count: 3
    lanes: 2
    code: |
      fence acquire
  C:
    count: 2
    wavefront: 0
    code: |
      fence acquire
"""
    t = parse_text(text, "g.yaml")
    assert [(th.name, th.wavefront) for th in t.threads] == [
        ("A0", 0), ("A1", 0), ("B0", 1), ("B1", 1), ("B2", 2), ("C0", 0), ("C1", 0)]


def test_reference_engine_checks_convergence_on_its_own():
    """The reference engine's own check (reference/barrier.py, written apart from the shared
    elaboration's): on the one path combination of the both-arms test, T0 and T1 perform
    s.barrier at two places of the group's code: divergent; at one place (the wave-uniform
    test's waves): not; two threads written apart with one s.barrier each: not."""
    from amdmm_smt.elaborate.barrier import WaveDivergent
    from amdmm_smt.elaborate.cflow import combos
    from amdmm_smt.reference.barrier import BarrierProgram

    def combo(name):
        t = parse_text(_spmd(name), "g.yaml")
        (ct, cut), = list(combos(t, 2)[2])
        return ct
    with pytest.raises(WaveDivergent):
        BarrierProgram._convergent(combo("spmd-lane-branch-both-arms-ub.yaml"), [0, 1])
    ct = combo("spmd-wave-uniform-branch-MP.yaml")
    BarrierProgram._convergent(ct, [0, 1])
    BarrierProgram._convergent(ct, [2, 3])
    with pytest.raises(WaveDivergent):
        BarrierProgram._convergent(ct, [1, 2])      # two waves' paths: two places
    apart = parse_text(open(os.path.join(ROOT, "litmus", "barrier",
                                         "bar-MP-fences-wg.yaml")).read(), "a.yaml")
    BarrierProgram._convergent(apart, [])


@pytest.mark.parametrize("engine", ENGINES)
def test_group_members_compared_with_each_other_beside_a_thread_written_apart(engine):
    """Wave 0 holds S (written apart, first) and the group's G0, G1. S performs one
    s.barrier, so does each of G0 and G1, but in the two arms of a lane-id branch: S agrees
    with each (intrinsics only, 10.3), the members disagree with each other (R-spmd-site):
    every execution is undefined."""
    text = """\
name: mixed
target: gfx1250
memory:
  x: {space: global}
threads:
  S:
    wavefront: 0
    code: |
      call void @llvm.amdgcn.s.barrier()
  G:
    count: 2
    wavefront: 0
    code: |
      entry:
        %id = call i32 @llvm.amdgcn.workitem.id.x()
        %c = icmp eq i32 %id, 0
        br i1 %c, label %a, label %b
      a:
        call void @llvm.amdgcn.s.barrier()
        br label %done
      b:
        call void @llvm.amdgcn.s.barrier()
        br label %done
      done:
        ret void
expect: undefined
"""
    r = run(text, engine)
    assert r.status == "pass" and r.ub["rule"] == "wave-divergent", verdict_text(r)
    assert "G0 and G1" in r.ub["run"][0]


def test_explain_says_undefined_not_forbidden(tmp_path):
    """explain on a test whose every execution is wave-divergent answers UNDEFINED (it said
    "FORBIDDEN by the structure of executions alone" before), text and JSON."""
    import json
    from click.testing import CliRunner
    from amdmm_smt.cli import main
    f = os.path.join(ROOT, "litmus", "spmd", "spmd-lane-branch-barrier-ub.yaml")
    r = CliRunner().invoke(main, ["explain", f, "--outcome", "T0:%lo == 0"])
    assert r.exit_code == 0 and "UNDEFINED: every execution of the test is undefined" in \
        r.output and "FORBIDDEN" not in r.output, r.output
    r = CliRunner().invoke(main, ["explain", "--json", f, "--outcome", "T0:%lo == 0"])
    rec = json.loads(r.output.splitlines()[0])
    assert rec["wave_divergent"]["every"] is True
