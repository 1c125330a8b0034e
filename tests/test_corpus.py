"""Every shipped litmus test holds: each one pins an axiom or a reading (docs/semantics.md),
with an expectation derived by hand from the documents."""

import glob
import os

import pytest

from amdmm_smt.model import get_model
from amdmm_smt.frontend.litmus import parse_file
from amdmm_smt.report.table import verdict_text
from amdmm_smt.solve import run_test

LITMUS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "litmus")

FILES = sorted(glob.glob(os.path.join(LITMUS, "**", "*.yaml"), recursive=True))


def test_corpus_is_not_empty():
    assert len(FILES) >= 50


def test_every_test_has_an_expectation_and_a_reason():
    for f in FILES:
        t = parse_file(f)
        assert t.expect or t.outcomes is not None, f
        assert t.description, f"{f}: description must give the reason for the expectation"


def test_names_are_unique():
    names = [parse_file(f).name for f in FILES]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("path", FILES, ids=[os.path.relpath(f, LITMUS) for f in FILES])
def test_litmus(path):
    t = parse_file(path)
    r = run_test(t, get_model(t.model), timeout=120)
    assert r.status == "pass", verdict_text(r)


def test_semantics_doc_cites_existing_tests():
    """docs/semantics.md pins every rule to litmus tests by name: those names must exist."""
    import re
    from amdmm_smt.frontend.herd.convert import load_litmus
    names = {parse_file(f).name for f in FILES}
    names |= {load_litmus(f).name for f in glob.glob(os.path.join(LITMUS, "**", "*.litmus"),
                                                      recursive=True)}
    doc = open(os.path.join(os.path.dirname(LITMUS), "docs", "semantics.md")).read()
    cited = re.findall(r"`((?:s000|s001|MP|SB|LB|IRIW|WRC|ISA2|2\+2W|R|S|Co[RW][RW]|RMW|CAS|"
                       r"sync-as|one-as|lds|mmra|scope-mismatch|avnone|read-lo|volatile|async|bar|spmd)"
                       r"[A-Za-z0-9+.\-_*]*)`", doc)
    assert len(cited) > 60
    # a definition or axiom of a shipped model file (`let CoWR = ...`, `... as CoWR`) is a
    # name the document may cite too (section 18 names the coherence axioms)
    from amdmm_smt.cat.base import BASE
    defined = set(BASE)                  # the base names of docs/model-language.md
    for f in glob.glob(os.path.join(os.path.dirname(LITMUS), "models", "**", "*.cat"),
                       recursive=True):
        text = open(f, encoding="utf-8").read()
        defined.add(os.path.basename(f))                     # and the file itself
        defined |= set(re.findall(r"\blet\s+(?:rec\s+)?([A-Za-z0-9_]+)", text))
        defined |= set(re.findall(r"\bas\s+([A-Za-z0-9_]+)", text))
    for c in cited:
        if re.fullmatch(r"[A-Z0-9_]+|[a-z_]+", c) or c in defined:   # a document, level,
            continue                                                  # option or definition
        pat = re.compile("^" + re.escape(c).replace("\\*", ".*") + "$")
        assert any(pat.match(n) for n in names), f"docs/semantics.md cites unknown test {c}"
