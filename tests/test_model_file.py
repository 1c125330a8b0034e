"""Model files (issue 27): the language's errors, and the gate -- under `--model
models/seed.cat` both engines give exactly the outcomes and verdicts of the hand-written
encoders, on the corpus in scope and on generated tests; and edits of one definition change
exactly what a hand derivation from the documents says.

`python3 -m pytest -m long tests/test_model_file.py` runs the long gate (the slow
reference-engine corpus tests and more generated tests)."""

import glob
import os
import textwrap

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from amdmm_smt.cat import load
from amdmm_smt.cli import main
from amdmm_smt.errors import LitmusError
from amdmm_smt.frontend.litmus import parse_file, parse_text
from amdmm_smt.model import get_model
from amdmm_smt.reference import run_reference
from amdmm_smt.solve import run_test

from .gen import litmus, render

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEED = os.path.join(ROOT, "models", "seed.cat")
DIRS = ("classic", "s000", "mmra", "models", "cflow")
# the hand reference engine takes 2 s on these, the file-driven one minutes (every reads-from
# choice with every co order, evaluated): the long gate runs them
SLOW_REFERENCE = {"cflow/CAS-spinlock.agent.diff-wg.yaml", "cflow/ticketlock.agent.diff-wg.yaml",
                  "cflow/swbarrier.agent.diff-wg.yaml"}


def _in_scope() -> list:
    out = []
    for d in DIRS:
        for f in sorted(glob.glob(os.path.join(ROOT, "litmus", d, "*.yaml"))):
            t = parse_file(f)
            if t.model in (None, "seed"):
                out.append(os.path.relpath(f, os.path.join(ROOT, "litmus")))
    return out


CORPUS = _in_scope()


def _same(a, b, f):
    assert a.states == b.states, f
    assert a.status == b.status, f
    assert [(v.kind, v.status) for v in a.verdicts] == [(v.kind, v.status) for v in b.verdicts], f


def test_the_corpus_in_scope_is_the_core():
    assert len(CORPUS) > 150 and any(f.startswith("cflow/") for f in CORPUS)


@pytest.mark.parametrize("rel", CORPUS)
def test_z3_engine_under_the_seed_file_equals_the_hand_encoders(rel):
    f = os.path.join(ROOT, "litmus", rel)
    t = parse_file(f)
    _same(run_test(t, get_model(None)), run_test(t, get_model(SEED)), rel)


@pytest.mark.parametrize("rel", [r for r in CORPUS if r not in SLOW_REFERENCE])
def test_reference_engine_under_the_seed_file_equals_the_hand_engine(rel):
    f = os.path.join(ROOT, "litmus", rel)
    t = parse_file(f)
    _same(run_reference(t, get_model(None)), run_reference(t, get_model(SEED)), rel)


@pytest.mark.long
@pytest.mark.parametrize("rel", sorted(SLOW_REFERENCE))
def test_reference_engine_gate_slow_tests(rel):
    t = parse_file(os.path.join(ROOT, "litmus", rel))
    _same(run_reference(t, get_model(None)), run_reference(t, get_model(SEED)), rel)


# ---- generated tests: hand Z3, file Z3, file reference ----------------------------------------

def _three(text: str):
    t = parse_text(text, "gen.yaml")
    hand = run_test(t, get_model(None), timeout=120)
    cat = run_test(t, get_model(SEED), timeout=120)
    assume(hand.complete and cat.complete and not hand.thin_air)
    ref = run_reference(t, get_model(SEED), limit=3_000)
    assert hand.states == cat.states, text
    if ref.complete:
        assert ref.states == hand.states, text


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(litmus(tags=True, lds=True, max_threads=3, max_ops=3))
def test_generated_tests_agree(g):
    _three(render(g))


@pytest.mark.long
@settings(max_examples=400, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(litmus(tags=True, lds=True))
def test_generated_tests_agree_long(g):
    _three(render(g))


# ---- refusals ----------------------------------------------------------------------------------

@pytest.mark.parametrize("rel", ["barrier/bar-MP-fences-wg.yaml",
                                 "async/async-read-after-wait.yaml"])
def test_a_family_the_file_does_not_define_is_refused(rel):
    r = CliRunner().invoke(main, ["verify", "--model", SEED,
                                  os.path.join(ROOT, "litmus", rel)])
    assert r.exit_code == 2
    fam = "barrier" if rel.startswith("barrier") else "async"
    assert f"does not define the family '{fam}'" in r.output
    line = [ln for ln in r.output.splitlines() if "does not define" in ln][0]
    assert line.split(":")[1].isdigit()         # FILE:LINE: problem


# ---- the language's errors: one line, FILE:LINE, exit 2 ----------------------------------------

BAD = [
    ("let a = po ;\n", 2, "expected a name"),
    ("let a = po ; W\nvalue a definite R\n", 1, "composes relations"),
    ("let a = nothere\nvalue a definite R\n", 1, "unknown name 'nothere'"),
    ("let a = contains\nvalue a definite R\n", 1, "indexed by a scope level"),
    ("let a = po[L]\nvalue a definite R\n", 1, "takes no scope level"),
    ("let rec a = po \\ a\nvalue a definite R\n", 1, "not monotone"),
    ("let a = po\nlet b = a & R\nvalue a definite R\n", 2, "between a rel and a set"),
    ("let a = b\nlet b = a\nvalue a definite R\n", 2, "recursion needs let rec"),
    ("let a = po\n(* never closed\n", 2, "unterminated comment"),
    ("let a = po\n", 1, "no value statement"),
    ("acyclic R as x\nvalue po definite R\n", 1, "acyclic needs a relation"),
    ("let a = po\nvalue a definite po\n", 2, "definite part must be a set"),
    ("let po = id\n", 1, "base name"),
    ("let a = po $ po\n", 1, "unexpected character"),
    ("let a = " + "(" * 70 + "po" + ")" * 70 + "\nvalue a definite R\n", 1, "nested too deeply"),
    ("let a = " + "~" * 300 + "po\nvalue a definite R\n", 1, "nested too deeply"),
    ("let a = " + " | ".join(["po"] * 400) + "\nvalue a definite R\n", 1, "nested more than"),
    ("let a0 = po\n" + "".join(f"let a{i} = (a{i - 1} | po) ; id\n" for i in range(1, 90))
     + "value a89 definite R\n", 68, "build on each other more than 200 deep"),
]


@pytest.mark.parametrize("text,line,msg", BAD)
def test_model_check_errors(tmp_path, text, line, msg):
    p = tmp_path / "m.cat"
    p.write_text(text)
    r = CliRunner().invoke(main, ["model", "check", str(p)])
    assert r.exit_code == 2, r.output
    assert r.output.strip().count("\n") == 0, r.output
    assert r.output.startswith(f"{p}:{line}: ") and msg in r.output, r.output


def test_include_cycle_is_an_error(tmp_path):
    (tmp_path / "a.cat").write_text('include "b.cat"\nvalue po definite R\n')
    (tmp_path / "b.cat").write_text('include "a.cat"\n')
    r = CliRunner().invoke(main, ["model", "check", str(tmp_path / "a.cat")])
    assert r.exit_code == 2 and "include cycle" in r.output
    assert r.output.startswith(f"{tmp_path / 'b.cat'}:1: ")


def test_unused_definition_is_a_warning_and_the_seed_is_clean(tmp_path):
    p = tmp_path / "m.cat"
    p.write_text("let unused = po\nvalue po definite R\n")
    r = CliRunner().invoke(main, ["model", "check", str(p)])
    assert r.exit_code == 0
    assert f"{p}:1: warning: 'unused' is defined but no axiom" in r.output
    r = CliRunner().invoke(main, ["model", "check", SEED])
    assert r.exit_code == 0 and "warning:" not in r.output and "0 warning(s)" in r.output
    assert len(open(SEED).read().splitlines()) < 600


_TOKENS = ["let", "rec", "and", "=", "po", "rf", "W", "R", "[", "]", "(", ")", "|", "&", "\\",
           ";", "^-1", "+", "*", "?", "~", "acyclic", "empty", "irreflexive", "flag", "as",
           "value", "definite", "include", '"x.cat"', "union", "(K)", "contains[K]", "K",
           "domain", "range", "cross", ",", "(*", "*)", "\n", "a", "b", "hb", "spaces", ">="]


@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(_TOKENS), max_size=30))
def test_the_parser_never_raises_anything_but_a_located_error(tmp_path_factory, toks):
    p = tmp_path_factory.mktemp("fz") / "m.cat"
    p.write_text(" ".join(toks))
    try:
        load(str(p))
    except LitmusError as e:
        assert e.line is None or e.line >= 1


# ---- edits of one definition, derived by hand ---------------------------------------------------

def _edit(tmp_path, body: str) -> str:
    p = tmp_path / "edit.cat"
    p.write_text('include "seed.cat"\n' + textwrap.dedent(body))
    return str(p)


def _outcomes(path_or_none, text: str):
    t = parse_text(textwrap.dedent(text), "t.yaml")
    m = get_model(path_or_none)
    a, b = run_test(t, m), run_reference(t, m)
    assert a.states == b.states
    return sorted(a.states)


MP = """
    name: MP
    memory: {x: {space: global}, y: {space: global}}
    threads:
      T0:
        workgroup: 0
        code: |
          store i32 1, ptr addrspace(1) @x
          store atomic i32 1, ptr addrspace(1) @y syncscope("agent") release
      T1:
        workgroup: 1
        code: |
          %r0 = load atomic i32, ptr addrspace(1) @y syncscope("agent") acquire
          %r1 = load i32, ptr addrspace(1) @x
"""


def test_edit_availability_clause_2(tmp_path):
    """Without S000 availability clause (2) ("X is a MakeAvailable operation that follows W in
    program order"), T0's plain store of x has no availability operation: the release store
    follows it but no longer makes it available. Nothing makes it visible to T1's read, so it
    is not location-ordered before the read; the read may see it (no exception applies) and
    the initial write (which nothing shadows), one of them not location-ordered before it:
    undef (S000 value rule). With r0 = 0 the read is undef in the seed as well."""
    seed = _outcomes(None, MP)
    assert seed == [(("T1:%r0", 0), ("T1:%r1", None)), (("T1:%r0", 1), ("T1:%r1", 1))]
    edit = _edit(tmp_path, """
        let rec avo = (((avself ; (hb & inAvs)) | (avo ; (hb & inAv))) ; [MA]) & inAv^-1
    """)
    assert _outcomes(edit, MP) == [(("T1:%r0", 0), ("T1:%r1", None)),
                                   (("T1:%r0", 1), ("T1:%r1", None))]


CORW1 = """
    name: read-then-write
    memory: {x: {space: global}}
    threads:
      T0:
        code: |
          %r0 = load i32, ptr addrspace(1) @x
          store i32 1, ptr addrspace(1) @x
"""


def test_edit_the_may_see_exception_for_later_writes(tmp_path):
    """S000: "If a read R happens-before a write W3, then R may not see W3." With it the plain
    read may see only the initial write, location-ordered before it: exactly one write, 0.
    Without it the read may also see the store after it in program order, which is not
    location-ordered before it: undef."""
    assert _outcomes(None, CORW1) == [(("T0:%r0", 0),)]
    edit = _edit(tmp_path, """
        let maysee = (([Hap] ; loc ; [R]) \\ id) \\ (lo ; lo)
    """)
    assert _outcomes(edit, CORW1) == [(("T0:%r0", None),)]


# ---- option files: the built-in versions as a seed plus overrides --------------------------------

VERSIONS = {"upstream-2026": "upstream-2026.cat", "opencl": "opencl.cat"}
VERSION_CASES = [(v, os.path.relpath(f, os.path.join(ROOT, "litmus")))
                 for v in VERSIONS for d in ("s000", "models", "mmra", "classic")
                 for f in sorted(glob.glob(os.path.join(ROOT, "litmus", d, "*.yaml")))]


@pytest.mark.parametrize("version,rel", VERSION_CASES)
def test_option_files_equal_the_built_in_versions(version, rel):
    """upstream-2026.cat (avsGe, lo, the may-see exception replaced) and opencl.cat (the
    inclusive relations replaced) give the outcomes of the built-in versions, in the SMT
    engine, on every test of these directories (whatever model the test names)."""
    t = parse_file(os.path.join(ROOT, "litmus", rel))
    path = os.path.join(ROOT, "models", VERSIONS[version])
    _same(run_test(t, get_model(version)), run_test(t, get_model(path)), rel)


def test_models_lists_the_model_files():
    r = CliRunner().invoke(main, ["models"])
    assert r.exit_code == 0
    for f in ("seed.cat", "upstream-2026.cat", "opencl.cat"):
        assert f"\n{f}: " in r.output
    assert "opencl.cat: the seed with OpenCL scope matching" in r.output


def test_a_flag_axiom_is_refused_by_both_engines_with_its_line(tmp_path):
    p = tmp_path / "flagged.cat"
    p.write_text('include "seed.cat"\nflag ~empty (rf & ext) as racy\n')
    t = os.path.join(ROOT, "litmus", "classic", "MP+rel-acq.agent.diff-wg.yaml")
    for engine in ("smt", "reference"):
        r = CliRunner().invoke(main, ["verify", "--engine", engine, "--model", str(p), t])
        assert r.exit_code == 2, r.output
        assert f"{p}:2: flag axioms" in r.output, r.output


def test_diff_between_two_model_files_and_explain_runs_one():
    """`diff --from A.cat --to B.cat` lists what changes (the file under litmus/models pins
    the upstream volatile rule by hand); explain runs a model file (tests/test_model_explain.py
    derives its answers)."""
    t = os.path.join(ROOT, "litmus", "models", "volatile-avnone-flags.seed.yaml")
    r = CliRunner().invoke(main, ["diff", "--from", SEED, "--to",
                                  os.path.join(ROOT, "models", "upstream-2026.cat"), t])
    assert "only upstream-2026.cat allows: T1:%r0 == 1 && T1:%r1 == 1" in r.output, r.output
    assert "only seed.cat allows: T1:%r0 == 1 && T1:%r1 == undef" in r.output
    r = CliRunner().invoke(main, ["explain", "--model", SEED, "--outcome",
                                  "T1:%r0 == 1 && T1:%r1 == 1", t])
    assert r.exit_code == 0 and "FORBIDDEN" in r.output and "value_rule" in r.output, r.output


def test_edit_delete_the_corr_axiom(tmp_path):
    """A copy of the seed without CoRR ("If one atomic read happens before another atomic
    read of the same address, the later read must not see an earlier value in the
    modification order"). In CoRR+mono the store is monotonic, so nothing synchronizes and
    nothing makes it visible to T1: it is not location-ordered before the second read, which
    therefore may see the initial write (not shadowed) and the store, both atomic and
    inclusive (agent, one agent): the value of either. Only CoRR forbade r0 = 1, r1 = 0 (CoWR
    and CoRW need a write that happens-before or after a read; only the initial write
    happens-before the reads, and it is first in co)."""
    text = open(SEED).read()
    line = next(ln for ln in text.splitlines() if ln.endswith("as corr"))
    p = tmp_path / "no-corr.cat"
    p.write_text(text.replace(line + "\n", ""))
    t = parse_file(os.path.join(ROOT, "litmus", "classic", "CoRR+mono.agent.diff-wg.yaml"))
    m = get_model(str(p))
    a, b = run_test(t, m), run_reference(t, m)
    assert a.states == b.states == [
        (("T1:%r0", 0), ("T1:%r1", 0)), (("T1:%r0", 0), ("T1:%r1", 1)),
        (("T1:%r0", 1), ("T1:%r1", 0)), (("T1:%r0", 1), ("T1:%r1", 1))]


def test_the_language_document_lists_every_base_name():
    from amdmm_smt.cat.base import BASE
    doc = open(os.path.join(ROOT, "docs", "model-language.md"), encoding="utf-8").read()
    table = doc[doc.index("## Base names"):doc.index("## Typing rules")]
    for name, (_, indexed, _) in BASE.items():
        assert f"`{name}[L]`" in table if indexed else f"`{name}`" in table, name
