"""`verify --decide-only` (issue 13 item 1) gives the same verdicts as listing every outcome,
on the whole shipped corpus; with an `outcomes:` list it finds the same allowed set."""

import glob
import os

import pytest

from amdmm_smt.elaborate.cflow import test_has_cflow as has_cflow
from amdmm_smt.model import get_model
from amdmm_smt.frontend.litmus import parse_file
from amdmm_smt.solve import run_test

LITMUS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "litmus")
FILES = sorted(glob.glob(os.path.join(LITMUS, "**", "*.yaml"), recursive=True))


def _verdicts(r):
    return [(v.kind, v.expected, v.status, v.missing, v.unexpected) for v in r.verdicts]


@pytest.mark.parametrize("path", FILES, ids=[os.path.relpath(f, LITMUS) for f in FILES])
def test_decide_only_agrees_with_listing(path):
    t = parse_file(path)
    m = get_model(t.model)
    full = run_test(t, m, timeout=120)
    dec = run_test(t, m, timeout=120, decide_only=True)
    assert dec.status == full.status
    assert _verdicts(dec) == _verdicts(full)
    if t.outcomes is not None:
        assert dec.states == full.states and dec.listed
    elif t.exists is not None and t.expect in ("allowed", "forbidden") \
            and not has_cflow(t):     # docs 15.7: a control-flow test lists every outcome
        assert not dec.listed and dec.states == []


def test_decide_only_cli_says_outcomes_are_not_listed(tmp_path):
    from click.testing import CliRunner
    from amdmm_smt.cli import main
    f = os.path.join(LITMUS, "classic")
    r = CliRunner().invoke(main, ["verify", "--decide-only", "--json", "--no-timing", f])
    assert r.exit_code == 0, r.output
    assert '"listed": false' in r.output
