"""Differential testing: the Z3 encoding and the independent explicit enumerator
(amdmm_smt/reference/) must give identical outcome sets on generated tests, under every
shipped model. `python3 benchmarks/differential.py --count 10000` is the long run."""

import os

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from amdmm_smt.elaborate import elaborate
from amdmm_smt.model import get_model, list_models
from amdmm_smt.parse import parse_text
from amdmm_smt.reference import ReferenceTooBig, reference_outcomes
from amdmm_smt.solve import run_test

from .gen import litmus, render

MODELS = [m.name for m in list_models()]
_N = int(os.environ.get("AMDMM_EXAMPLES", "0"))


def disagreement(text: str, model_name: str):
    """None when both engines agree, else (smt-only states, reference-only states)."""
    model = get_model(model_name)
    t = parse_text(text, "gen.yaml")
    try:
        ref = reference_outcomes(elaborate(t, model), limit=200_000)
    except ReferenceTooBig:
        return "too big"
    r = run_test(t, model, timeout=120)
    assert r.complete
    smt = set(r.states)
    return None if smt == ref else (smt - ref, ref - smt)


@settings(max_examples=_N or 300, deadline=None, derandomize=not _N,
          suppress_health_check=list(HealthCheck))
@given(litmus(tags=True, lds=True), st.sampled_from(MODELS))
def test_engines_agree(g, model_name):
    d = disagreement(render(g), model_name)
    assume(d != "too big")
    assert d is None, f"model {model_name}\n{render(g)}\nsmt only / reference only: {d}"


def test_engines_agree_on_the_corpus():
    """Every shipped litmus test, under its own model."""
    import glob
    from amdmm_smt.parse import parse_file
    from amdmm_smt.reference import run_reference
    root = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "litmus")
    for f in sorted(glob.glob(os.path.join(root, "**", "*.yaml"), recursive=True)):
        t = parse_file(f)
        m = get_model(t.model)
        a, b = run_test(t, m), run_reference(t, m)
        if a.thin_air:        # unbounded outcomes: neither engine can list them
            assert not b.complete, f
            continue
        assert b.complete and a.states == b.states, f
