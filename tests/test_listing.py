"""Issue 20 item 2: the listing inside one search (amdmm_smt/solve.py `_enumerate`, `_Lister`;
docs/semantics.md section 14) lists exactly the states of the plain loop (one check and one
blocking clause per outcome), in one check where the encoding is bit-level; the fallback to
a model, the outcome cap, the deadline and an error inside a callback behave as in the loop."""

import os
import sys
import time

import pytest
import z3
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from amdmm_smt import solve
from amdmm_smt.frontend.litmus import parse_text
from amdmm_smt.model import get_model, list_models

from .gen import litmus, render

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
from families import iriw, mp_chain, ops_per_thread, sb_ring  # noqa: E402

MODELS = [m.name for m in list_models()]
AFTER = solve.LIST_INSIDE_AFTER      # the default


def _run(t, inside: bool, monkeypatch, after: int = 0, proof: list = None, **kw):
    """The result and the number of solver checks, with the listing inside one search (from
    `after` outcomes on) or the plain loop; `proof` gets the number of checks made by
    solve._bit_classes (how the bits vary) in each listing."""
    monkeypatch.setattr(solve, "LIST_INSIDE", inside)
    monkeypatch.setattr(solve, "LIST_INSIDE_AFTER", after)
    checks = []
    real = z3.Solver.check
    real_fixed = solve._bit_classes

    def check(self, *a):
        checks.append(1)
        return real(self, *a)

    def fixed_bits(*a):
        before = len(checks)
        try:
            return real_fixed(*a)
        finally:
            if proof is not None:
                proof.append(len(checks) - before)
    monkeypatch.setattr(z3.Solver, "check", check)
    monkeypatch.setattr(solve, "_bit_classes", fixed_bits)
    try:
        r = solve.run_test(t, get_model(t.model), timeout=kw.pop("timeout", 120), **kw)
    finally:
        monkeypatch.setattr(z3.Solver, "check", real)
        monkeypatch.setattr(solve, "_bit_classes", real_fixed)
    return r, len(checks)


def _bit_classes(states) -> int:
    """Into how many classes the bits of the packed states fall that some state flips from
    the first one, two bits in one class when every state flips both or neither (computed
    column by column, not as solve._bit_classes splits them)."""
    n0 = states.ints[0]
    columns = set()
    for j in range(max(n.bit_length() for n in states.ints) + 1):
        col = tuple((n ^ n0) >> j & 1 for n in states.ints)
        if any(col):
            columns.add(col)
    return len(columns)


def _same(a, b) -> None:
    assert (a.status, a.complete, a.states) == (b.status, b.complete, b.states)


@pytest.mark.parametrize("text", [sb_ring(6), iriw(3), mp_chain(6)],
                         ids=["sb-ring-6", "iriw-3", "mp-chain-6"])
def test_one_search_lists_the_loops_states_in_one_check(text, monkeypatch):
    t = parse_text(text, "f.yaml")
    plain, n_plain = _run(t, False, monkeypatch)
    assert len(plain.states) > 20
    # the loop: one check per outcome and one to end; inside: the whole listing is one,
    # after the proof of how the bits of the projection vary (solve._bit_classes, p checks):
    # a check that finds a first state, one per state that splits the classes further (at
    # most one per class), and the UNSAT one; the p - 1 states those find are blocked
    vary = _bit_classes(plain.states)
    assert 0 < vary < len(plain.states)
    proof: list = []
    inside, n_inside = _run(t, True, monkeypatch, proof=proof)
    _same(inside, plain)
    (p,) = proof
    assert 2 <= p <= vary + 2
    assert n_plain - n_inside == len(plain.states) - p
    # by default the first outcomes come from the loop (as fast for a few), then one search
    assert 0 < AFTER < 20
    proof = []
    inside, n_inside = _run(t, True, monkeypatch, after=AFTER, proof=proof)
    _same(inside, plain)
    (p,) = proof
    assert 1 <= p <= vary + 1
    assert n_plain - n_inside == len(plain.states) - AFTER - p


def test_only_bit_level_encodings_are_listed_inside():
    s = z3.SimpleSolver()
    b, v = z3.Bool("b"), z3.BitVec("v", 8)
    s.add(z3.Or(b, v * v == 4))
    assert solve._bit_level(s)
    s.add(z3.Int("i") > 0)       # an integer: the arithmetic's final check could refuse
    assert not solve._bit_level(s)


def test_integer_ranks_keep_the_loop(monkeypatch):
    # several writes per location: coherence ranks are integers, the listing is the loop
    t = parse_text(ops_per_thread(2), "ops.yaml")
    inside, n_inside = _run(t, True, monkeypatch)
    plain, n_plain = _run(t, False, monkeypatch)
    _same(inside, plain)
    assert n_inside == n_plain


@settings(max_examples=30, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(litmus(tags=True, lds=True), st.sampled_from(MODELS))
def test_one_search_on_generated_tests(g, model_name):
    t = parse_text(render(g), "gen.yaml")
    m = get_model(model_name)
    old = solve.LIST_INSIDE, solve.LIST_INSIDE_AFTER
    try:
        solve.LIST_INSIDE = False
        plain = solve.run_test(t, m, timeout=120)
        solve.LIST_INSIDE, solve.LIST_INSIDE_AFTER = True, 0     # inside from the first
        inside = solve.run_test(t, m, timeout=120)
    finally:
        solve.LIST_INSIDE, solve.LIST_INSIDE_AFTER = old
    _same(inside, plain)


def test_a_projection_the_propagator_cannot_read_falls_back_to_a_model(monkeypatch):
    # the final check never sees the projection fixed: every state comes from a model
    monkeypatch.setattr(solve._Lister, "_fixed", lambda self, *a: None)
    t = parse_text(sb_ring(4), "sb4.yaml")
    inside, n_inside = _run(t, True, monkeypatch)
    plain, n_plain = _run(t, False, monkeypatch)
    _same(inside, plain)
    # each check finds one state, as in the loop; one more proves which bits vary
    assert n_inside == n_plain + 1 and len(plain.states) == 16


def test_the_outcome_cap_stops_both_alike(monkeypatch):
    t = parse_text(sb_ring(5), "sb5.yaml")
    full, _ = _run(t, False, monkeypatch)
    for inside in (True, False):
        r, _ = _run(t, inside, monkeypatch, max_outcomes=7)
        assert not r.complete and r.why == "stopped at 7 outcomes"
        assert len(r.states) == 7 and set(r.states) <= set(full.states)
    r, _ = _run(t, True, monkeypatch, max_outcomes=32)     # exactly as many: complete
    _same(r, full)


def test_an_error_in_a_callback_is_raised_after_the_check(monkeypatch):
    def broken(self, n):
        raise ValueError("record failed")
    monkeypatch.setattr(solve._Lister, "_record", broken)
    with pytest.raises(ValueError, match="record failed"):
        _run(parse_text(sb_ring(3), "sb3.yaml"), True, monkeypatch)


def test_the_watchdog_stops_the_search_at_the_deadline(monkeypatch):
    real = solve._Lister._record
    decoded = []

    def slow(self, n):
        decoded.append(1)
        time.sleep(0.005)          # a slow listing: the deadline comes inside the one check
        return real(self, n)
    monkeypatch.setattr(solve._Lister, "_record", slow)
    t0 = time.monotonic()
    r, n = _run(parse_text(sb_ring(10), "sb10.yaml"), True, monkeypatch, timeout=1.5)
    assert r.status == "unknown" and "timeout after 1.5 s" in r.limit, r.limit
    assert 0 < len(decoded) < 1024          # stopped inside the listing, not run to the end
    assert time.monotonic() - t0 < 30


@pytest.mark.parametrize("text,bits", [(sb_ring(6), 6), (iriw(3), 6), (mp_chain(6), 6),
                                       (sb_ring(6).replace("i32 1,", "i32 305419896,"), 6)],
                         ids=["sb-ring-6", "iriw-3", "mp-chain-6", "sb-ring-6-wide"])
def test_the_propagator_watches_one_bit_per_class(text, bits, monkeypatch):
    # issue 30 item 2 (docs/semantics.md section 14): the conflict that excludes a state, and
    # the clause Z3 learns from it and keeps, is over the watched variable's bits. Derived
    # from outcomes.pack_values (33 bits a key: undef bit 32, value xor 2^31): a register
    # that reads 0 or 1 (0x80000000 or 0x80000001) varies in bit 0 only: six registers in
    # SB-ring-6 and IRIW-3 (every location has an initial write: never undef), each on its
    # own (every combination is allowed: 64 states). MP-chain-6's T1..T5:%r read 0 or 1 (5
    # bits); T5:%d is undef or 1 (2^32 or 0x80000001): its bits 32, 31 and 0 flip together,
    # one class, and not with any one register (undef unless all five read 1): 6. With
    # 0x12345678 stored instead of 1 (13 bits set), each register's 13 bits flip together:
    # still 6. Instead of 33 bits per key (198)
    widths = []
    real = solve._Lister.watch

    def watch(self, *a):
        real(self, *a)
        widths.append(self.var.size())
    monkeypatch.setattr(solve._Lister, "watch", watch)
    r, _ = _run(parse_text(text, "f.yaml"), True, monkeypatch, after=AFTER)
    plain, _ = _run(parse_text(text, "f.yaml"), False, monkeypatch)
    _same(r, plain)
    assert widths == [bits] == [_bit_classes(r.states)]
    assert len(r.states[0]) * 33 == 198
