"""Properties the documents promise, checked on generated tests."""

import os

from hypothesis import HealthCheck, given

from amdmm_smt.model import get_model
from amdmm_smt.frontend.litmus import parse_text
from amdmm_smt.solve import run_test

from .conftest import tiered
from .gen import covered, litmus, render, strip_tags

SEED = get_model(None)
# AMDMM_EXAMPLES=N runs N examples per property with fresh randomness (a deep run); the
# default suite runs 150 fixed ones.
_N = int(os.environ.get("AMDMM_EXAMPLES", "0"))
# the fast tier runs 20 of them (tests/conftest.py `tiered`)
FAST = tiered(_N or 150, 20, deadline=None, derandomize=not _N,
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


# ---- metamorphic properties (issue 5) -------------------------------------------------------

import dataclasses  # noqa: E402

import z3  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from amdmm_smt.elaborate.events import elaborate  # noqa: E402
from amdmm_smt.encode import encode  # noqa: E402
from amdmm_smt.encode.logic import AND, NOT, OR  # noqa: E402

from .gen import ORDER_STRENGTH, Gen, Thr  # noqa: E402

PLAIN = get_model("llvm-hsa")
STRONGER = {"monotonic": ["acquire", "release", "acq_rel", "seq_cst"],
            "acquire": ["acq_rel", "seq_cst"], "release": ["acq_rel", "seq_cst"],
            "acq_rel": ["seq_cst"]}
WIDER = {"singlethread": ["wavefront", "workgroup", "agent", ""],
         "wavefront": ["workgroup", "agent", ""], "workgroup": ["agent", ""], "agent": [""]}
LOAD_OK = {"monotonic", "acquire", "seq_cst"}
STORE_OK = {"monotonic", "release", "seq_cst"}


def _ops(g: Gen):
    return [(ti, oi, op) for ti, t in enumerate(g.threads) for oi, op in enumerate(t.ops)]


def _with_op(g: Gen, ti: int, oi: int, op) -> Gen:
    ts = list(g.threads)
    ops = list(ts[ti].ops)
    ops[oi] = op
    ts[ti] = dataclasses.replace(ts[ti], ops=tuple(ops))
    return dataclasses.replace(g, threads=tuple(ts))


@st.composite
def strengthened(draw):
    """A generated test and a copy with one ordering strengthened, one scope widened, or one
    plain access made atomic."""
    g = draw(litmus(tags=False, lds=False))
    cands = []
    for ti, oi, op in _ops(g):
        if op.order in STRONGER:
            for o in STRONGER[op.order]:
                if (op.kind == "load" and o not in LOAD_OK) or (op.kind == "store"
                                                                and o not in STORE_OK):
                    continue
                cands.append(_with_op(g, ti, oi, dataclasses.replace(op, order=o)))
        if (op.atomic or op.kind in ("fence", "avload", "avstore")) and op.scope in WIDER:
            for s in WIDER[op.scope]:
                cands.append(_with_op(g, ti, oi, dataclasses.replace(op, scope=s)))
        if op.kind in ("load", "store") and not op.atomic:
            cands.append(_with_op(g, ti, oi, dataclasses.replace(
                op, atomic=True, order="monotonic", scope="agent")))
    if not cands:
        return g, g
    return g, draw(st.sampled_from(cands))


@FAST
@given(strengthened())
def test_strengthening_never_adds_an_outcome(pair):
    """Strengthening an ordering, widening a scope or making an access atomic never adds an
    outcome (undef in the weaker test matches any value)."""
    weak, strong = pair
    assert covered(outcomes(render(weak)), outcomes(render(strong))), render(strong)


def _no_av_optouts(g: Gen) -> bool:
    return all(op.kind not in ("avload", "avstore") and not op.tags for _, _, op in _ops(g))


@FAST
@given(litmus(tags=False, avops=False))
def test_amdgpu_and_plain_llvm_agree_on_defined_states(g):
    """Without av opt-outs, the AMDGPU model and the plain LLVM/HSA model allow the same final
    states among those where no register is undef."""
    assert _no_av_optouts(g)
    text = render(g)
    defined = lambda ss: {s for s in ss if all(v is not None for _, v in s)}  # noqa: E731
    assert defined(outcomes(text)) == defined(outcomes(text, PLAIN)), text


@FAST
@given(litmus(tags=True, lds=True))
def test_happens_before_is_necessary_for_location_order(g):
    """S000 property 1: a write is location-ordered before an access only if it
    happens-before it — in every execution the solver can build (one query per test)."""
    el = elaborate(parse_text(render(g), "gen.yaml"), SEED)
    x = encode(el)
    bad = []
    for (a, b), lo in x.lo_rel.items():
        ea, eb = x.ev[a], x.ev[b]
        if ea.is_init:
            continue
        bad.append(AND(lo, NOT(x.hb(ea, eb, x.space(ea)))))
    assert never(x, bad), render(g)


def never(x, bad: list) -> bool:
    """No execution the encoding allows makes any of `bad` true."""
    q = OR(bad)
    if q is False:
        return True
    s = z3.Solver()
    s.add(*x.ctx.constraints)
    s.add(q)
    return s.check() == z3.unsat


@FAST
@given(litmus(tags=True, lds=True))
def test_never_available_outside_a_scope_containing_the_write(g):
    """S000 property 2: "A write cannot be made available in a scope that does not contain
    it": every operation the encoding may treat as an availability operation on W acts in a
    scope instance that contains W; and no solver model makes an availability operation
    happen with a scope instance excluding W."""
    _check_avail_scopes(parse_text(render(g), "gen.yaml"))


def test_never_available_outside_a_scope_containing_the_write_corpus():
    """The same on every shipped litmus test (they contain the chains random tests rarely
    build)."""
    import glob
    from amdmm_smt.frontend.litmus import parse_file
    root = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "litmus")
    from amdmm_smt.elaborate.barrier import WaveDivergent
    from amdmm_smt.elaborate.cflow import combos, test_has_cflow as has_control_flow
    for f in sorted(glob.glob(os.path.join(root, "**", "*.yaml"), recursive=True)):
        t = parse_file(f)
        if has_control_flow(t):      # each path combination is straight-line (§15.2)
            for ct, _ in combos(t, t.unroll or 2)[2]:
                try:
                    _check_avail_scopes(ct)
                except WaveDivergent:    # §15.9 R-cf-bar-wave: no execution to check
                    continue
            continue
        try:
            _check_avail_scopes(t)
        except WaveDivergent:    # §10.3: undefined in every execution, nothing to check
            continue


def _check_avail_scopes(test):
    el = elaborate(test, get_model(test.model))
    x = encode(el)
    bad = []
    for wid, cands in x.avvis.avail.items():
        w = x.ev[wid]
        for xid, (var, sx) in cands.items():
            if not el.contains(x.ev[xid], sx, w):
                bad.append(var)
    assert never(x, bad), test.file
