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


MIXED = """name: direct-mixed
memory:
  x: {}
  f: {}
threads:
  T0:
    workgroup: 0
    code: |
      store atomic i32 1, ptr addrspace(1) @x syncscope("workgroup") monotonic
      fence syncscope("agent") release
      store atomic i32 1, ptr addrspace(1) @f syncscope("agent") monotonic
  T1:
    workgroup: 1
    code: |
      %a = load atomic i32, ptr addrspace(1) @f syncscope("agent") monotonic
      fence syncscope("agent") acquire
      %b = load atomic i32, ptr addrspace(1) @x syncscope("agent") monotonic
exists: "T1:%a == 1 && T1:%b == 0"
expect: forbidden
"""


def _family_sizes(text: str) -> dict:
    from collections import Counter
    x = encode(elaborate(parse_text(text, "x.yaml"), get_model(None)))
    return Counter(x.ctx.families)


def test_direct_visibility_needs_no_availability_variables():
    # docs §14 "Availability and visibility through W itself": every write of the stress
    # shape is an atomic agent-scope store read by agent-scope loads, so each visibility
    # definition is the term "role ∧ W writes ∧ W hb Y" itself (no variable, no
    # constraint), and no availability operation needs a variable
    sizes = _family_sizes(ops_per_thread(6))
    assert sizes["availability"] == 0 and sizes["visibility"] == 0
    assert sizes["location order"] > 0
    # T0's store of x is at workgroup scope: its instance does not include T1, so T1's
    # operations need the availability chain through the agent release fence (S000
    # Availability Operation (2)); hand derivation: T1 reading f == 1 synchronizes the
    # release fence with the acquire fence (LangRef fence), the release fence is an
    # availability operation on the store (it follows it in program order), the acquire
    # fence a visibility operation at agent scope (inclusive, clause (1)), before T1's load
    # of x in program order: the store is location-ordered before the load (Location Order
    # (3)) and shadows the initial write, so %b == 0 is forbidden
    sizes = _family_sizes(MIXED)
    assert sizes["availability"] > 0 and sizes["visibility"] > 0
    r = run_test(parse_text(MIXED, "x.yaml"), get_model(None), timeout=120)
    assert r.status == "pass"


AVNONE = """name: direct-avnone
metadata: |
  !0 = !{!"amdgcn-av", !"none"}
memory:
  x: {}
  f: {}
threads:
  T0:
    workgroup: 0
    code: |
      store atomic i32 1, ptr addrspace(1) @x syncscope("SCOPE") monotonic
      store atomic i32 1, ptr addrspace(1) @f syncscope("agent") release, !mmra !0
  T1:
    workgroup: 1
    code: |
      %a = load atomic i32, ptr addrspace(1) @f syncscope("agent") acquire
      %b = load atomic i32, ptr addrspace(1) @x syncscope("agent") monotonic
exists: "T1:%a == 1 && T1:%b == undef"
expect: EXPECT
"""


@pytest.mark.parametrize("scope,expect", [("workgroup", "allowed"), ("agent", "forbidden")])
def test_visibility_through_the_write_itself_needs_its_scope(scope, expect):
    # Hand derivation (S000). The release is amdgcn-av:none: no MakeAvailable, so the only
    # availability operation on T0's store of x is the store itself (store-available at its
    # scope). T1 reading f == 1 synchronizes (sw is kept), so the store happens-before T1's
    # acquire load. At workgroup scope the store's instance (workgroup 0) does not include
    # T1: no visibility operation, the store is not location-ordered before T1's load of x,
    # the load may see it and the initial write, they are not inclusive (value rule (b)
    # fails) and the store is not lo-before the load: (c), undef — allowed. At agent scope
    # the acquire load is a visibility operation (clause (1), inclusive): the store is
    # lo-before the load, shadows the initial write, and is the one write it may see: 1,
    # never undef — forbidden. (docs §14: the second uses `direct`, the first must not.)
    text = AVNONE.replace("SCOPE", scope).replace("EXPECT", expect)
    r = run_test(parse_text(text, "x.yaml"), get_model(None), timeout=120)
    assert r.status == "pass", (r.status, r.states)
