"""`diff --from A.cat --to B.cat` names the definitions that differ (issue 27 item 5): in the
text and markdown reports a section, in the HTML report a side-by-side table, in JSON the field
`definitions_changed`; `include`s are followed (a definition the including file overrides
counts); layout and comments do not count. docs/semantics.md §18 "Definitions that differ"."""

import json
import os

from click.testing import CliRunner

from amdmm_smt.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEED = os.path.join(ROOT, "models", "seed.cat")
MP_WG = os.path.join(ROOT, "litmus", "classic", "MP+rel-acq.wg.same-wg.yaml")
CLAUSE2 = "([Hap \\ I] ; pohb ; [MA])\n            | "
AVO = """let rec avo = ((((avself ; (hb & inAvs)) | (avo ; (hb & inAv))) ; [MA]) & inAv^-1)"""


def _included(tmp_path):
    """The seed with availability clause (2) ("X is a MakeAvailable operation that follows W
    in program order") dropped, by an override after `include`."""
    p = tmp_path / "no-clause2.cat"
    p.write_text('(* no-clause2.cat: the seed without availability clause (2). *)\n'
                 'include "seed.cat"\n\n(* clauses (1) and (3) only *)\n' + AVO + "\n")
    return p


def _copied(tmp_path):
    """A copy of the seed with the same edit, and one other definition re-laid-out with a
    new comment (not a change)."""
    text = open(SEED).read()
    assert CLAUSE2 in text
    text = text.replace(CLAUSE2, "")
    text = text.replace("let MA = Rel \\ AvNone", "(* reformatted *)\nlet MA =\n  Rel\\AvNone")
    p = tmp_path / "my.cat"
    p.write_text(text)
    return p


def _diff(fmt, a, b, *more):
    r = CliRunner().invoke(main, ["diff", "--no-explain", "--format", fmt, "--from", str(a),
                                  "--to", str(b), MP_WG, *more])
    assert r.exit_code == 1, r.output
    return r.output


def test_json_names_exactly_the_edited_definition(tmp_path):
    """Only `avo` differs, in both ways of editing. The outcomes, by hand: without clause
    (2) the plain store of x has no availability operation (it is not store-available, and
    clause (3) needs one before it), so it is never location-ordered before the read of x,
    which may see it and the initial write, one not location-ordered before it: undef. So
    r0 = 1, r1 = 1 goes and r0 = 1, r1 = undef comes."""
    for p in (_included(tmp_path), _copied(tmp_path)):
        rec = json.loads(_diff("json", SEED, p))
        dc = rec["definitions_changed"]
        assert [(c["kind"], c["name"]) for c in dc] == [("definition", "avo")], dc
        c = dc[0]
        assert "pohb ; [MA]" in c["from"] and "pohb" not in c["to"]
        assert c["from"].startswith("let rec avo =") and c["to"].startswith("let rec avo =")
        assert c["from_at"].startswith("seed.cat:") and c["to_at"].startswith(p.name + ":")
        t = rec["tests"][0]
        assert t["only_from"] == ["T1:%r0 == 1 && T1:%r1 == 1"]
        assert t["only_to"] == ["T1:%r0 == 1 && T1:%r1 == undef"]


def test_text_markdown_and_html_show_both_bodies(tmp_path):
    p = _included(tmp_path)
    out = _diff("text", SEED, p)
    assert "definitions that differ: 1" in out
    i = out.index("  definition avo (seed.cat:")
    sec = out[i:out.index("\n\n", i)]
    assert "    seed.cat:\n      let rec avo = ([Hap \\ I] ; pohb ; [MA])" in sec
    assert "    no-clause2.cat:\n      " + AVO in sec
    md = _diff("markdown", SEED, p)
    assert "## Why: the definitions that differ" in md and "### `avo` (definition)" in md
    assert "```text\n" + AVO + "\n```" in md
    h = _diff("html", SEED, p)
    row = h[h.index("<table class='defs'>"):]
    row = row[:row.index("</table>")]
    assert "<th>seed.cat</th><th>no-clause2.cat</th>" in row
    assert row.count("<pre>") == 2 and "pohb ; [MA]" in row     # side by side in one row


def test_a_definition_only_one_file_has_and_identical_files(tmp_path):
    p = tmp_path / "extra.cat"
    p.write_text('include "seed.cat"\nlet unused_here = po\n'
                 'irreflexive (po ; po) as extra_axiom\n')
    r = CliRunner().invoke(main, ["diff", "--no-explain", "--format", "json", "--from", SEED,
                                  "--to", str(p), MP_WG])
    assert r.exit_code == 0, r.output           # po ; po is never reflexive: nothing changes
    assert "unused_here" in r.stderr and "warning" in r.stderr   # the file's warnings, once
    dc = json.loads(r.stdout)["definitions_changed"]
    assert [(c["kind"], c["name"], c["from"]) for c in dc] == [
        ("definition", "unused_here", None), ("axiom", "extra_axiom", None)]
    r = CliRunner().invoke(main, ["diff", "--no-explain", "--from", SEED, "--to", SEED, MP_WG])
    assert "definitions that differ: none" in r.output, r.output
    # a built-in version on one side: no definitions to compare, no section
    r = CliRunner().invoke(main, ["diff", "--no-explain", "--from", "seed", "--to", SEED,
                                  MP_WG])
    assert "definitions that differ" not in r.output, r.output


def test_synth_names_the_definitions_that_differ(tmp_path):
    """Two model files set every option alike: synth's warning says which definitions differ
    (the general vocabulary is searched unless --vocab narrows it)."""
    from amdmm_smt.model import get_model
    from amdmm_smt.synth import default_vocab, warnings_of
    a, b = get_model(SEED), get_model(str(_included(tmp_path)))
    ws = warnings_of(a, b, default_vocab(a, b))
    assert any("they differ in their definitions (avo), so the general vocabulary" in w
               for w in ws), ws
