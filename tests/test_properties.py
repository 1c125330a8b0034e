"""Properties the documents promise, checked on generated tests."""

from hypothesis import HealthCheck, given, settings

from amdmm_smt.model import get_model
from amdmm_smt.parse import parse_text
from amdmm_smt.solve import run_test

from .gen import covered, litmus, render, strip_tags

SEED = get_model(None)
FAST = settings(max_examples=250, deadline=None, derandomize=True,
                suppress_health_check=list(HealthCheck))


def outcomes(text: str, model=SEED) -> set:
    r = run_test(parse_text(text, "gen.yaml"), model, timeout=60)
    assert r.complete
    return set(r.states)


@FAST
@given(litmus(tags=True, lds=True))
def test_deleting_mmra_never_relaxes(g):
    """S001: "the memory model cannot be relaxed further by deleting metadata from
    instructions": every outcome without the tags is allowed with them (undef in the tagged
    test matches any value)."""
    tagged = outcomes(render(g))
    plain = outcomes(render(strip_tags(g)))
    assert covered(tagged, plain), render(g)
