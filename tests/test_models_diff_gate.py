"""Model versions as data, outcome diffs between them, and the CI gate (JUnit, --jobs)."""

import json
import xml.etree.ElementTree as ET

import pytest
from click.testing import CliRunner

from amdmm_smt.cli import main
from amdmm_smt.errors import LitmusError
from amdmm_smt.model import get_model, list_models, load_model_file

MP = """
name: {name}
description: test
memory: {{x: {{}}, y: {{}}}}
metadata: |
  !0 = !{{!"amdgcn-av", !"none"}}
threads:
  T0:
    workgroup: 0
    code: |
      store i32 1, ptr addrspace(1) @x
      store atomic i32 1, ptr addrspace(1) @y syncscope("agent") release{tag}
  T1:
    workgroup: 1
    code: |
      %r0 = load atomic i32, ptr addrspace(1) @y syncscope("agent") acquire{tag}
      %r1 = load i32, ptr addrspace(1) @x
"""


def run(*args):
    r = CliRunner().invoke(main, list(args))
    return r.exit_code, r.output


@pytest.fixture
def corpus(write, tmp_path):
    write(MP.format(name="mp-av", tag=""), "a.yaml")
    write(MP.format(name="mp-avnone", tag=", !mmra !0"), "b.yaml")
    return str(tmp_path)


def test_shipped_models():
    names = {m.name for m in list_models()}
    assert {"seed", "upstream-2026", "llvm-hsa", "opencl"} <= names
    assert get_model(None).name == "seed"


def test_unknown_model_option_is_an_error(tmp_path):
    p = tmp_path / "m.yaml"
    p.write_text("name: bad\noptions:\n  frobnicate: true\n")
    with pytest.raises(LitmusError, match="unknown model option 'frobnicate'"):
        load_model_file(str(p))
    code, _ = run("verify", "--model", str(p), str(p))
    assert code == 2


def test_diff_lists_exactly_the_av_dependent_tests(corpus):
    code, out = run("diff", "--from", "llvm-hsa", "--to", "seed", "--format", "json", corpus)
    assert code == 1
    rep = json.loads(out)
    changed = {t["name"]: t for t in rep["tests"] if t["changed"]}
    assert set(changed) == {"mp-avnone"}
    d = changed["mp-avnone"]
    assert d["only_from"] == ["T1:%r0 == 1 && T1:%r1 == 1"]
    assert d["only_to"] == ["T1:%r0 == 1 && T1:%r1 == undef"]
    assert rep["summary"] == {"tests": 2, "changed": 1, "newly_allowed": 1,
                              "newly_forbidden": 1, "verdict_changes": 0, "errors": 0}


def test_diff_same_model_exit_0(corpus):
    code, out = run("diff", "--from", "seed", "--to", "seed", corpus)
    assert code == 0
    assert "0 changed" in out


@pytest.mark.parametrize("fmt,needle", [("markdown", "### mp-avnone"),
                                        ("html", "<h3 id='mp-avnone'>mp-avnone</h3>")])
def test_diff_report_files(corpus, tmp_path, fmt, needle):
    out = tmp_path / f"report.{fmt}"
    code, _ = run("diff", "--from", "llvm-hsa", "--to", "seed", "--format", fmt, "-o",
                  str(out), corpus)
    assert code == 1
    text = out.read_text()
    assert needle in text
    # why: the option that differs, the changed test's description and code; the unchanged
    # test is listed as such, after the changed ones (issue 8 item 15)
    changed, unchanged = text.split("Unchanged tests (1)")
    assert "avvis" in changed and "!mmra !0" in changed and "Legend" in changed
    assert "mp-av" not in changed.replace("mp-avnone", "")
    assert "mp-av" in unchanged


def test_junit_loads_and_states_expected_vs_found(write, tmp_path):
    write(MP.format(name="ok", tag="") + 'exists: "T1:%r0 == 1 && T1:%r1 == 0"\n'
          "expect: forbidden\n", "a.yaml")
    write(MP.format(name="bad", tag="") + 'outcomes: ["T1:%r0 == 1 && T1:%r1 == 1"]\n',
          "b.yaml")
    junit = tmp_path / "out" / "j.xml"
    junit.parent.mkdir()
    code, _ = run("verify", "--junit", str(junit), str(tmp_path / "a.yaml"),
                  str(tmp_path / "b.yaml"))
    assert code == 1
    root = ET.parse(str(junit)).getroot()
    suite = root.find("testsuite")
    assert suite.get("tests") == "2" and suite.get("failures") == "1"
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert cases["ok"].find("failure") is None
    f = cases["bad"].find("failure")
    assert "allowed but not expected: T1:%r0 == 0 && T1:%r1 == undef" in f.text


def test_jobs_give_identical_output(corpus):
    _, one = run("verify", "--json", "--no-timing", corpus)
    _, two = run("verify", "--json", "--no-timing", "--jobs", "2", corpus)
    assert one == two and one.count("\n") == 2


def test_test_names_its_model(write):
    p = write(MP.format(name="m", tag=", !mmra !0").replace("description: test",
                                                          "model: llvm-hsa"))
    code, out = run("verify", "--json", p)
    rec = json.loads(out)
    assert rec["model"] == "llvm-hsa"
    assert {"T1:%r0": 1, "T1:%r1": 1} in rec["outcomes"]


def test_final_co_option_changes_final_state(tmp_path):
    """docs R-final: with final_co: hb, a write that happens-before another is older in
    memory even without location order (litmus/s000/s000-final-hb-not-lo pins the default)."""
    import os
    from amdmm_smt.frontend.litmus import parse_file
    from amdmm_smt.solve import run_test
    m = tmp_path / "m.yaml"
    m.write_text("name: final-hb\noptions:\n  final_co: hb\n")
    f = os.path.join(os.path.dirname(__file__), "..", "litmus", "s000", "s000-final-hb-not-lo.yaml")
    states = set(run_test(parse_file(f), load_model_file(str(m))).states)
    assert (("T1:%r0", 1), ("@x", 1)) not in states
    assert (("T1:%r0", 1), ("@x", 2)) in states and (("T1:%r0", 0), ("@x", 1)) in states


def test_cas_undef_fail_option(tmp_path):
    """docs R-cas-undef: with cas_undef: fail, a cmpxchg comparing undef fails, so the two
    non-inclusive cmpxchg of CAS+acq_rel.wg.diff-wg cannot both write."""
    import os
    from amdmm_smt.frontend.litmus import parse_file
    from amdmm_smt.solve import run_test
    m = tmp_path / "m.yaml"
    m.write_text("name: cas-fail\noptions:\n  cas_undef: fail\n")
    f = os.path.join(os.path.dirname(__file__), "..", "litmus", "classic",
                     "CAS+acq_rel.wg.diff-wg.yaml")
    states = set(run_test(parse_file(f), load_model_file(str(m))).states)
    assert states == {(("T0:%r0", 0), ("T1:%r1", None), ("@x", 1)),
                      (("T0:%r0", None), ("T1:%r1", 0), ("@x", 1))}


def test_output_is_byte_identical_across_runs_and_jobs():
    """Determinism (issue 5): the same inputs give the same bytes, table and JSON, with any
    --jobs."""
    import os
    root = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "litmus",
                        "mmra")
    outs = set()
    for args in (["--jobs", "1"], ["--jobs", "2"], ["--jobs", "1"]):
        outs.add(run("verify", "--no-timing", *args, root)[1])
    assert len(outs) == 1
    js = {run("verify", "--no-timing", "--json", *a, root)[1]
          for a in (["--jobs", "1"], ["--jobs", "2"])}
    assert len(js) == 1


def test_no_thin_air_option(tmp_path):
    """docs R-no-thin-air: with no_thin_air (RC11 po ∪ rf acyclicity), relaxed load buffering
    is forbidden and data-dependent LB has the single outcome 0, 0 (enumerable again)."""
    import os
    from amdmm_smt.frontend.litmus import parse_file
    from amdmm_smt.solve import run_test
    m = tmp_path / "m.yaml"
    m.write_text("name: no-oota\noptions:\n  no_thin_air: true\n")
    model = load_model_file(str(m))
    d = os.path.join(os.path.dirname(__file__), "..", "litmus", "classic")
    r = run_test(parse_file(os.path.join(d, "LB+data+mono.thin-air.yaml")), model)
    assert r.complete and not r.thin_air
    assert set(r.states) == {(("T0:%r0", 0), ("T1:%r1", 0))}
    r = run_test(parse_file(os.path.join(d, "LB+mono.agent.diff-wg.yaml")), model)
    assert (("T0:%r0", 1), ("T1:%r1", 1)) not in set(r.states) and len(r.states) == 3


def test_lds_scope_option_both_directions(tmp_path):
    """docs R-lds-scope: the earlier reading (lds_scope: data) answers the two pinning tests the
    other way: an agent release on LDS makes global data available at agent scope (too
    strong), and agent synchronization on global flags does not order LDS data across
    workgroups (too weak). Both engines must agree on it."""
    import os
    from amdmm_smt.frontend.litmus import parse_file
    from amdmm_smt.solve import run_test
    from amdmm_smt.elaborate.events import elaborate
    from amdmm_smt.reference import reference_outcomes
    m = tmp_path / "m.yaml"
    m.write_text("name: lds-data\noptions:\n  lds_scope: data\n")
    model = load_model_file(str(m))
    d = os.path.join(os.path.dirname(__file__), "..", "litmus", "mmra")
    strong = parse_file(os.path.join(d, "lds-release-agent-is-workgroup-for-global.yaml"))
    weak = parse_file(os.path.join(d, "lds-rel-acq-chain-through-other-wg.yaml"))
    s1 = set(run_test(strong, model).states)
    assert s1 == {(("T1:%r0", 0), ("T1:%r1", None)), (("T1:%r0", 1), ("T1:%r1", 1))}
    s2 = set(run_test(weak, model).states)
    assert (("T1:%a", 1), ("T2:%b", 1), ("T2:%r", None)) in s2
    assert (("T1:%a", 1), ("T2:%b", 1), ("T2:%r", 1)) not in s2
    for t, s in ((strong, s1), (weak, s2)):
        assert set(reference_outcomes(elaborate(t, model))) == s


def test_async_done_edges_option(tmp_path):
    """docs R-async-done-every: by default (async_done_edges: every, UP 2.4's completed-at) the
    tagged copy of async-mmra-tagged-copy-two-waits also happens-before the second,
    differently tagged wait, so the read after it sees the copied 7 (derived by hand in the
    test's description); with the option `first` (edges to the first completing wait only)
    %r1 is undef. Both engines, both async versions."""
    import os
    from amdmm_smt.elaborate.events import elaborate
    from amdmm_smt.frontend.litmus import parse_file
    from amdmm_smt.reference import reference_outcomes
    from amdmm_smt.solve import run_test
    f = os.path.join(os.path.dirname(__file__), "..", "litmus", "async",
                     "async-mmra-tagged-copy-two-waits.yaml")
    t = parse_file(f)
    for extra in ("", "  async_model: upstream-stages\n  lds_av_workgroup: true\n"):
        for value, r1 in (("every", 7), ("first", None)):
            m = tmp_path / "m.yaml"
            m.write_text(f"name: {value}\noptions:\n  async_done_edges: {value}\n" + extra)
            model = load_model_file(str(m))
            want = {(("T0:%r0", None), ("T0:%r1", r1))}
            assert set(run_test(t, model).states) == want, (value, extra)
            assert set(reference_outcomes(elaborate(t, model))) == want, (value, extra)


def test_lds_scope_avvis_option(tmp_path):
    """docs R-lds-scope, third reading (issue 17, review class 2): S002's LDS sentence read
    plainly narrows the availability / visibility scope of any operation for LDS data, and
    leaves the inclusion of synchronization alone. Derived by hand from the two pinning tests'
    descriptions: the agent release on LDS f is not narrowed for global data, so it makes x
    available at agent and T1 sees 1 once it reads g == 1 (as under `data`); the chain through
    workgroup 1 on global flags synchronizes at agent (inclusion is not narrowed), so T0's LDS
    store happens-before T2's load and is available / visible in workgroup 0 (as under
    `instruction`). Both engines."""
    import os
    from amdmm_smt.frontend.litmus import parse_file
    from amdmm_smt.solve import run_test
    from amdmm_smt.elaborate.events import elaborate
    from amdmm_smt.reference import reference_outcomes
    m = tmp_path / "m.yaml"
    m.write_text("name: lds-avvis\noptions:\n  lds_scope: avvis\n")
    model = load_model_file(str(m))
    d = os.path.join(os.path.dirname(__file__), "..", "litmus", "mmra")
    strong = parse_file(os.path.join(d, "lds-release-agent-is-workgroup-for-global.yaml"))
    weak = parse_file(os.path.join(d, "lds-rel-acq-chain-through-other-wg.yaml"))
    s1 = set(run_test(strong, model).states)
    assert s1 == {(("T1:%r0", 0), ("T1:%r1", None)), (("T1:%r0", 1), ("T1:%r1", 1))}
    s2 = set(run_test(weak, model).states)
    assert s2 == {(("T1:%a", 0), ("T2:%b", 0), ("T2:%r", None)),
                  (("T1:%a", 0), ("T2:%b", 1), ("T2:%r", None)),
                  (("T1:%a", 1), ("T2:%b", 0), ("T2:%r", None)),
                  (("T1:%a", 1), ("T2:%b", 1), ("T2:%r", 1))}
    for t, s in ((strong, s1), (weak, s2)):
        assert set(reference_outcomes(elaborate(t, model))) == s


def test_async_scope_option(tmp_path):
    """docs R-async-scope (issue 17, review class 2): the cautious reading
    (`async_scope: workgroup`: an async copy, which UP says "executes outside the thread", has
    no scope instance below workgroup) is offered, and gives the default's answers: a
    completed copy is made available by a release program-ordered after it (S000
    availability clause 2 asks no scope instance to contain the write), and its instances
    below workgroup enter no other definition an async copy reaches. Derived by hand for
    litmus/async/async-handoff-wavefront (the wavefront release after the wait makes the
    copied value available through program order: 7 when the acquire reads 1, both
    versions) and checked over every async and forms corpus test, both engines."""
    import glob
    import os
    from dataclasses import replace
    from amdmm_smt.elaborate.events import elaborate
    from amdmm_smt.frontend.litmus import parse_file
    from amdmm_smt.model import get_model
    from amdmm_smt.reference import reference_outcomes
    from amdmm_smt.solve import run_test
    root = os.path.join(os.path.dirname(__file__), "..", "litmus")
    hand = parse_file(os.path.join(root, "async", "async-handoff-wavefront.yaml"))
    want = {(("T1:%r0", 0), ("T1:%r1", None)), (("T1:%r0", 1), ("T1:%r1", 7))}
    files = sorted(glob.glob(os.path.join(root, "async", "*.yaml"))
                   + glob.glob(os.path.join(root, "forms", "*.yaml")))
    assert len(files) > 30
    for name in ("seed", "upstream-2026"):
        base = get_model(name)
        cautious = replace(base, options=replace(base.options, async_scope="workgroup"))
        assert set(run_test(hand, cautious).states) == want
        assert set(reference_outcomes(elaborate(hand, cautious))) == want
        for f in files:
            t = parse_file(f)
            assert set(run_test(t, cautious).states) == set(run_test(t, base).states), f
