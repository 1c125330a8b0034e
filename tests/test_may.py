"""Issue 20 item 1: the static may / must sets (amdmm_smt/elaborate/may.py) and the encoding
restricted to them give exactly the outcomes of the full encoding (docs/semantics.md §14), and
they do restrict it (fewer variables and constraints)."""

import glob
import os
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from amdmm_smt.elaborate import may
from amdmm_smt.elaborate.cflow import test_has_cflow as has_control_flow
from amdmm_smt.elaborate.events import elaborate
from amdmm_smt.encode import coherence, encode
from amdmm_smt.frontend.litmus import parse_file, parse_text
from amdmm_smt.model import get_model, list_models
from amdmm_smt.solve import run_test

from .gen import litmus, render

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
from families import mp_chain, ops_per_thread  # noqa: E402

FILES = sorted(f for f in glob.glob(os.path.join(ROOT, "litmus", "**", "*.yaml"),
                                    recursive=True))
MODELS = [m.name for m in list_models()]


def _outcomes(t, model, enabled: bool, monkeypatch) -> tuple:
    monkeypatch.setattr(may, "ENABLED", enabled)
    r = run_test(t, model, timeout=120)
    return r.complete, set(r.states), r.status


def _straight(path):
    t = parse_file(path)
    return None if has_control_flow(t) else t


# every third straight-line corpus test (the whole corpus runs restricted in test_corpus.py)
CORPUS = [f for f in FILES[::3] if _straight(f) is not None]


@pytest.mark.parametrize("path", CORPUS, ids=[os.path.relpath(f, ROOT) for f in CORPUS])
def test_restricted_encoding_lists_the_full_encodings_outcomes(path, monkeypatch):
    t = parse_file(path)
    m = get_model(t.model)
    full = _outcomes(t, m, False, monkeypatch)
    assert _outcomes(t, m, True, monkeypatch) == full
    # the ranked coherence rules wherever the writes are pairwise inclusive (by default
    # only where they are smaller than the pairwise form)
    monkeypatch.setattr(coherence, "_ranked_pays", lambda *a: True)
    assert _outcomes(t, m, True, monkeypatch) == full


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(litmus(tags=True, lds=True), st.sampled_from(MODELS))
def test_restricted_encoding_on_generated_tests(g, model_name):
    t = parse_text(render(g), "gen.yaml")
    m = get_model(model_name)
    old, pays = may.ENABLED, coherence._ranked_pays
    try:
        may.ENABLED = False
        full = run_test(t, m, timeout=120)
        may.ENABLED = True
        restricted = run_test(t, m, timeout=120)
        coherence._ranked_pays = lambda *a: True
        ranked = run_test(t, m, timeout=120)
    finally:
        may.ENABLED = old
        coherence._ranked_pays = pays
    assert (restricted.complete, set(restricted.states)) == (full.complete,
                                                                set(full.states))
    assert (ranked.complete, set(ranked.states)) == (full.complete, set(full.states))


def _sizes(text: str, enabled: bool, monkeypatch):
    monkeypatch.setattr(may, "ENABLED", enabled)
    x = encode(elaborate(parse_text(text, "x.yaml"), get_model(None)))
    return len(x.rf_var), len(x.ctx.constraints), x.ctx._n


def test_the_sets_restrict_the_encoding(monkeypatch):
    # a read after its own thread's store to the location cannot read the initial write
    # (shadowed) nor a later store of its thread; coherence by ranks is linear per pair
    full = _sizes(ops_per_thread(8), False, monkeypatch)
    restricted = _sizes(ops_per_thread(8), True, monkeypatch)
    assert restricted[0] < full[0]
    assert restricted[1] * 2 < full[1]
    # availability / visibility only towards the reads of the written location: the chain
    # of flags needs a number of variables that grows much slower than without
    full = _sizes(mp_chain(12), False, monkeypatch)
    restricted = _sizes(mp_chain(12), True, monkeypatch)
    assert restricted[2] * 2 < full[2]


def test_must_and_may_sets_by_hand():
    text = """name: t
memory:
  x: {}
threads:
  T0:
    code: |
      store atomic i32 1, ptr addrspace(1) @x syncscope("agent") monotonic
      %a = load atomic i32, ptr addrspace(1) @x syncscope("agent") monotonic
      store atomic i32 2, ptr addrspace(1) @x syncscope("agent") monotonic
  T1:
    workgroup: 1
    code: |
      %b = load atomic i32, ptr addrspace(1) @x syncscope("agent") monotonic
exists: "T0:%a == 0"
expect: forbidden
"""
    el = elaborate(parse_text(text, "t.yaml"), get_model(None))
    ms = may.MaySets(el)
    init, s1, a, s2, b = el.events
    assert (s1.id, a.id) in ms.must_hb and (s1.id, s2.id) in ms.must_hb
    assert (a.id, b.id) not in ms.must_hb
    assert ms.must_lo(init, a) and ms.must_lo(s1, a) and not ms.must_lo(s2, a)
    assert not ms.may_rf(init, a)          # shadowed by s1
    assert not ms.may_rf(s2, a)            # a happens-before s2
    assert ms.may_rf(s1, a)
    assert all(ms.may_rf(w, b) for w in (init, s1, s2))   # another thread: anything
