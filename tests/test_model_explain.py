"""`explain --model FILE.cat` and `diff --from A.cat --to B.cat` with explanations (issue 27
item 5): the rule families of a forbidden outcome are the model file's own statements by their
names, described by the comment above each; an allowed outcome gets a witness from the
file-compiled engine. The expected answers are derived by hand from models/seed.cat and the
seed documents (docs/semantics.md §18 "Explain under a model file")."""

import json
import os

from click.testing import CliRunner

from amdmm_smt.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEED = os.path.join(ROOT, "models", "seed.cat")
MP_WG = os.path.join(ROOT, "litmus", "classic", "MP+rel-acq.wg.same-wg.yaml")
CORR = os.path.join(ROOT, "litmus", "classic", "CoRR+mono.agent.diff-wg.yaml")


def _line_of(path: str, suffix: str) -> int:
    return next(i for i, ln in enumerate(open(path).read().splitlines(), 1)
                if ln.rstrip().endswith(suffix))


def _explain(*args):
    r = CliRunner().invoke(main, ["explain", "--json", "--no-timing", *args])
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def test_mp_workgroup_release_acquire_is_forbidden_by_the_value_rule_alone():
    """Derivation from seed.cat. T0: x = 1 (plain); y = 1 release workgroup. T1 (same
    workgroup): r0 = y acquire workgroup; r1 = x (plain). With r0 = 1 the acquire reads from
    the release: `sw` holds (relw ; rs ; rf ; acqr, ext, inclusive: one workgroup), so `hb`
    orders the store of x before the acquire. The store of x is not store-available (plain),
    but the release is a MakeAvailable (`MA`) after it in program order (`avo` clause 1);
    the acquire is a MakeVisible (`MV`) that it happens-before with inclusive scopes (`vis1`,
    MakeVisible case), and the acquire precedes the read of x in program order: so the store
    is location-ordered before the read (`lo0`, third clause). The initial write of x is
    location-ordered before the store, so the read may not see it (`maysee`'s
    lo ; [Hap] ; lo exception): it may see exactly the store, which is location-ordered
    before it, so it is `definite` (exactlyone, not unordered) and the value statement makes
    it read the store: r1 = 1. r1 = 0 breaks `value_rule` and nothing else can forbid it:
    no coherence axiom speaks of a plain read (they need `Strong`), so without the value
    statement the read may read the initial write. The minimal set is {value_rule}."""
    out = "T1:%r0 == 1 && T1:%r1 == 0"
    rec = _explain("--model", SEED, "--outcome", out, MP_WG)
    assert rec["reachable"] is False and rec["minimal"] is True
    assert os.path.samefile(rec["model_file"], SEED) and rec["model"] == "seed.cat"
    assert [f["family"] for f in rec["forbidden_by"]] == ["value_rule"]
    f = rec["forbidden_by"][0]
    assert f["source"] == f"seed.cat:{_line_of(SEED, 'as value_rule')}"
    assert "returns undef" in f["sentence"]          # the comment above the statement
    assert f["without_it_reachable"] == out
    # the closest candidate breaks the value rule at the read of x
    assert [d["family"] for d in rec["closest"]["dropped"]] == ["value_rule"]
    reads = {r["read"]: r for r in rec["closest"]["witness"]["reads"]}
    rx = next(r for r in reads.values() if r["reads_from"] == "init @x")
    assert rx["may_see"] == ["T0:17"] and "not definite" not in rx["rule"]


def test_mp_workgroup_allowed_outcome_has_a_witness_from_the_file():
    """r0 = 0: the acquire reads the initial write of y, nothing synchronizes, the store of
    x is not location-ordered before the read of x (no hb), which may therefore see the
    initial write and the store, one of them not location-ordered before it: not definite,
    undef (S000 value rule, third case). Final state: x = 1, y = 1."""
    rec = _explain("--model", SEED, "--outcome", "T1:%r0 == 0 && T1:%r1 == undef", MP_WG)
    assert rec["reachable"] is True
    wt = rec["witness"]
    assert wt["rf"] == [["init @y", "T1:23"]]
    assert wt["co"] == {"x": ["init @x", "T0:17"], "y": ["init @y", "T0:18"]}
    assert wt["final"] == {"x": "1", "y": "1"}
    assert wt["sw"] == []
    rx = next(r for r in wt["reads"] if r["read"] == "T1:24")
    assert rx["value"] == "undef" and rx["reads_from"] is None
    assert sorted(rx["may_see"]) == ["T0:17", "init @x"]
    assert rx["location_ordered_before"] == ["init @x"]
    assert "not definite under `value_rule`" in rx["rule"]


def test_the_families_are_the_names_in_the_file(tmp_path):
    """CoRR+mono (r0 = 1, r1 = 0): only CoRR forbids it (tests/test_model_file.py
    test_edit_delete_the_corr_axiom derives that deleting it allows the outcome); its name is
    the one in the file (`corr`, or `CoRR` in a seed that names the axiom after its
    definition, whose comment then describes it). Renamed in a copy, with another comment
    above it, explain reports the new name and comment."""
    from amdmm_smt.cat import load
    name = next(a.name for a in load(SEED).axioms if a.name.lower() == "corr")
    rec = _explain("--model", SEED, CORR)
    assert [f["family"] for f in rec["forbidden_by"]] == [name]
    assert "the later read must not see an earlier value" in rec["forbidden_by"][0]["sentence"]
    text = open(SEED).read()
    line = next(ln for ln in text.splitlines() if ln.endswith(f"as {name}"))
    p = tmp_path / "renamed.cat"
    p.write_text(text.replace(line, "(* my read-read rule *)\n"
                              + line.replace(f"as {name}", "as read_read")))
    rec = _explain("--model", str(p), CORR)
    fb = rec["forbidden_by"]
    assert [f["family"] for f in fb] == ["read_read"]
    assert fb[0]["sentence"] == "my read-read rule"
    assert fb[0]["source"] == f"renamed.cat:{_line_of(str(p), 'as read_read')}"


def test_explain_text_names_the_axiom_and_without_it():
    r = CliRunner().invoke(main, ["explain", "--no-timing", "--model", SEED, "--outcome",
                                  "T1:%r0 == 1 && T1:%r1 == 0", MP_WG])
    assert r.exit_code == 0, r.output
    ln = _line_of(SEED, "as value_rule")
    assert f"  - value_rule [seed.cat:{ln}]" in r.output
    assert "      without it, reachable: T1:%r0 == 1 && T1:%r1 == 0" in r.output


def test_diff_between_model_files_explains_each_change():
    """seed.cat vs upstream-2026.cat on the volatile test: the upstream file makes the
    volatile store store-available at system scope and the volatile load load-visible (UP
    2.1(3)), so under it the read of x after the acquire is definite and reads 1; under the
    seed it may see the initial write unordered: undef. Each changed outcome is explained by
    the other file's value statement."""
    t = os.path.join(ROOT, "litmus", "models", "volatile-avnone-flags.seed.yaml")
    r = CliRunner().invoke(main, ["diff", "--from", SEED, "--to",
                                  os.path.join(ROOT, "models", "upstream-2026.cat"), t])
    assert r.exit_code == 1, r.output
    assert ("T1:%r0 == 1 && T1:%r1 == 1: forbidden under seed.cat by value_rule; a witness "
            "under upstream-2026.cat:") in r.output, r.output
    assert ("T1:%r0 == 1 && T1:%r1 == undef: forbidden under upstream-2026.cat by "
            "value_rule; a witness under seed.cat:") in r.output


def _corpus(d: str) -> list:
    import glob
    return sorted(glob.glob(os.path.join(ROOT, "litmus", d, "*.yaml")))


def test_every_witness_is_consistent_for_the_reference_reading_of_the_file():
    """Both engines on every explanation: the witness the SMT encoding of the file gives for an
    allowed outcome is an execution the reference engine's explicit evaluation of the file
    (cat/eval.py MaskAlgebra) finds consistent (every axiom holds, every read as the value
    statement says); a closest candidate of a forbidden outcome breaks, by that evaluation,
    something and only statements it dropped. On each `exists:` of litmus/classic and
    litmus/s000 under seed.cat and upstream-2026.cat."""
    from amdmm_smt.explain.cat_explain import file_families
    from amdmm_smt.explain.witness import explain
    from amdmm_smt.frontend.litmus import parse_file
    from amdmm_smt.model import get_model
    seen = {"allowed": 0, "forbidden": 0}
    for cat in (SEED, os.path.join(ROOT, "models", "upstream-2026.cat")):
        m = get_model(cat)
        for f in _corpus("classic") + _corpus("s000"):
            t = parse_file(f)
            if t.exists is None:
                continue
            ex = explain(t, m, t.exists, timeout=60, with_closest=True)
            if ex.reachable:
                seen["allowed"] += 1
                assert ex.witness["reference_check"] == {"consistent": True, "broken": []}, f
            elif ex.reachable is False and ex.closest is not None:
                seen["forbidden"] += 1
                rc = ex.closest["witness"]["reference_check"]
                dropped = {d["family"] for d in ex.closest["dropped"]}
                assert set(rc["broken"]) <= dropped, (f, rc, dropped)
                # dropping only the file's statements: the candidate must break one of them
                # (the engine's own families, e.g. write values, are not the file's to judge)
                if dropped <= set(file_families(cat)):
                    assert rc["broken"], (f, rc, dropped)
    assert seen["allowed"] > 20 and seen["forbidden"] > 20, seen
