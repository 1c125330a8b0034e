"""For herd7 users (issue 19 items 1, 2, 4): `verify --format herd`, undefined behaviour in
tests without a claim (`--undefined ok|fail`). docs/herd-import.md "Output in herd's format"."""

from __future__ import annotations

import os
import re

from click.testing import CliRunner

from amdmm_smt.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERD = os.path.join(ROOT, "litmus", "herd")

# herd7's result block, as mcompare7 / msum7 read it (see the module docstring of
# amdmm_smt/report/herd.py for what each line means here)
BLOCK = re.compile(
    r"Test (?P<name>\S+) (?P<kind>Allowed|Required)\n"
    r"States (?P<n>\d+)\n"
    r"(?P<states>(?:(?:\d+:[\w.$]+|[\w.$]+)=-?\w+;(?: (?:\d+:[\w.$]+|[\w.$]+)=-?\w+;)*\n)*)"
    r"(?P<verdict>Ok|No|Undecided)\n"
    r"Witnesses\n"
    r"Positive: (?P<pos>\d+) Negative: (?P<neg>\d+)\n"
    r"(?:Flag (?P<flag>[\w-]+)\n)?"
    r"Condition (?P<q>exists|~exists|forall) \((?P<cond>.*)\)\n"
    r"Observation (?P=name) (?P<obs>Never|Sometimes|Always) (?P<s>\d+) (?P<u>\d+)\n"
    r"(?:Time (?P=name) \d+\.\d\d\n)?")


def run(*args):
    r = CliRunner().invoke(main, list(args))
    return r.exit_code, r.output


def blocks(out: str) -> list:
    parts = [p + "\n" for p in out.rstrip("\n").split("\n\n")]
    got = [BLOCK.fullmatch(p) for p in parts]
    assert all(got), out
    return got


def test_mp_litmus_in_herds_words():
    # hand-derived (litmus/herd/MP+rel-acq.dev.diff-wg.litmus's description): the acquire
    # reads 0 (the data read is undef) or 1 (the data read is 1); 1:r0=1 /\ 1:r1=0 never
    code, out = run("verify", "--format", "herd", "--no-timing",
                    os.path.join(HERD, "MP+rel-acq.dev.diff-wg.litmus"))
    assert code == 0
    assert out == ("Test MP+rel-acq.dev.diff-wg Allowed\n"
                   "States 2\n"
                   "1:r0=0; 1:r1=undef;\n"
                   "1:r0=1; 1:r1=1;\n"
                   "No\n"
                   "Witnesses\n"
                   "Positive: 0 Negative: 2\n"
                   "Condition exists (1:r0=1 /\\ 1:r1=0)\n"
                   "Observation MP+rel-acq.dev.diff-wg Never 0 2\n")


def test_every_block_of_the_corpus_parses_as_herds_format():
    code, out = run("verify", "--format", "herd", os.path.join(ROOT, "litmus"))
    assert code == 0, out[-2000:]
    got = blocks(out)
    assert len(got) > 250
    for m in got:
        n = int(m["n"])
        assert len([ln for ln in m["states"].splitlines() if ln]) == n
        assert int(m["s"]) + int(m["u"]) == n
        assert int(m["pos"]) + int(m["neg"]) == n
        q, obs = m["q"], m["obs"]
        # herd: exists is Ok when some state satisfies; ~exists / forall when none violates
        sat = int(m["s"])
        if q == "exists":
            assert (m["verdict"] == "Ok") == (sat > 0) or m["verdict"] == "Undecided"
        assert obs == ("Never" if sat == 0 else "Always" if int(m["u"]) == 0 else "Sometimes")


def test_a_forbidden_yaml_test_is_not_exists_and_forall_is_required():
    code, out = run("verify", "--format", "herd", "--no-timing",
                    os.path.join(ROOT, "litmus", "classic", "MP+rel-acq.agent.diff-wg.yaml"),
                    os.path.join(HERD, "CAS+weak-and-fetch.forall.litmus"))
    a, b = blocks(out)
    assert a["q"] == "~exists" and a["verdict"] == "Ok" and a["kind"] == "Allowed"
    assert b["q"] == "forall" and b["kind"] == "Required" and b["verdict"] == "Ok"
    assert b["states"] == "c=10;\nc=5;\n"       # only what the condition names, as herd


UB = """OpenCL UB-branch
{ [x]=0; [f]=0; }
P0@wg 0 (global int* x, global atomic_int* f) {
  *x = 1;
  atomic_store_explicit(f, 1, memory_order_release, memory_scope_work_group);
}
P1@wg 1 (global int* x, global atomic_int* f) {
  int r0 = atomic_load_explicit(f, memory_order_acquire, memory_scope_work_group);
  int r1 = *x;
  if (r1 == 1) { r0 = 2; }
}
exists (1:r0=2)
"""


def test_undefined_behaviour_without_a_claim_is_reported_not_failed(tmp_path):
    # hand-derived: the workgroup-scope flag never synchronizes across work-groups, so the
    # plain read of x races and is undef (S000 value rule); branching on it is undefined
    # behaviour (LangRef br) in every execution
    p = tmp_path / "UB-branch.litmus"
    p.write_text(UB)
    code, out = run("verify", "--no-timing", str(p))
    assert code == 0, out
    assert "undefined: pass (undefined behaviour in every execution: branch on undef" in out
    code, out = run("verify", "--no-timing", "--undefined", "fail", str(p))
    assert code == 1 and "undefined: fail" in out
    code, out = run("verify", "--format", "herd", "--no-timing", str(p))
    (m,) = blocks(out)
    assert m["flag"] == "undefined-behaviour" and m["n"] == "0"


def test_a_claim_still_fails_on_undefined_behaviour(tmp_path):
    # the YAML contract: a test that claims an answer and is undefined in some executions
    # fails unless it declares `undefined: some` (docs 10.6), whatever --undefined says
    from amdmm_smt.frontend.herd.convert import import_text
    imp, _ = import_text(UB, "UB.litmus")
    y = tmp_path / "ub.yaml"
    y.write_text(imp.yaml.replace('exists: "', 'expect: forbidden\nexists: "'))
    code, out = run("verify", "--no-timing", str(y))
    assert code == 1 and "undefined behaviour in every execution" in out


def test_json_and_format_herd_contradict():
    code, out = run("verify", "--json", "--format", "herd",
                    os.path.join(HERD, "MP+rel-acq.dev.diff-wg.litmus"))
    assert code == 2 and "contradict" in out


def test_no_verdict_from_an_empty_set_in_any_format():
    """Issue 28 item 5, hand-derived: tests/herd/cflow/while.litmus spins on x, which nothing
    writes (only its initial 0), so the load reads 0 every time and the loop never exits:
    every execution needs more iterations than any bound and `bound: assume` (herd7's
    unrolling) leaves none. The file has no claim; still nothing may be said of the empty set:
    unknown, exit 1, in the table, in JSON and as herd's `Undecided` (before: `No`, exit 0)."""
    import json
    f = os.path.join(ROOT, "tests", "herd", "cflow", "while.litmus")
    code, out = run("verify", "--format", "herd", "--no-timing", f)
    assert code == 1, out
    assert "\nUndecided\n" in out and "\nNo\n" not in out and "\nOk\n" not in out, out
    code, out = run("verify", "--json", "--no-timing", f)
    assert code == 1, out
    rec = json.loads(out.splitlines()[0])
    assert rec["status"] == "unknown", rec
    assert all(v["status"] == "unknown" for v in rec["verdicts"]), rec
    code, out = run("verify", "--no-timing", f)
    assert code == 1 and "bound-assumed-all" in out, out


def test_loop_at_the_bound_gets_herds_answer():
    """Issue 28 item 5, hand-derived in tests/herd/cflow/while-count.litmus: P0's loop runs
    exactly two iterations (herd7 -unroll 2 allows them), P1 reads 0, 1 or 2: three states,
    one of which has r0 = 2, so herd7's `Sometimes 1 2`, exit 0 (before: States 0, Never)."""
    f = os.path.join(ROOT, "tests", "herd", "cflow", "while-count.litmus")
    code, out = run("verify", "--format", "herd", "--no-timing", f)
    assert code == 0, out
    assert "States 3\n1:r0=0;\n1:r0=1;\n1:r0=2;\nOk\n" in out, out
    assert "Observation while-count Sometimes 1 2" in out, out
