"""The symbolic search (amdmm_smt/synth/symbolic.py, docs/semantics.md §17.9) against the
enumerative one: skeleton by skeleton, the symbolic query finds a difference exactly when some
concrete program of the skeleton (every choice of attributes, every placement) differs under
the hand-written encoders; and the smallest sizes agree."""

from __future__ import annotations

import itertools
import json
import os

import pytest
from click.testing import CliRunner

from amdmm_smt.cli import main
from amdmm_smt.errors import LitmusError
from amdmm_smt.model import get_model
from amdmm_smt.synth import build_models, with_options
from amdmm_smt.synth import programs as P
from amdmm_smt.synth import symbolic as S
from amdmm_smt.synth.search import compare, search

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# small vocabularies with several choices per slot (orders x scopes) and placements
V_SCOPES = P.Vocab(kinds=("st", "ld"), orders=("na", "mono", "rel", "acq"),
                   scopes=("workgroup", "agent"), spaces=("global",),
                   placements=("wg", "agent"))
V_RMW = P.Vocab(kinds=("st", "ld", "rmw", "fence"), orders=("mono", "rel", "acq"),
                scopes=("workgroup", "agent"), spaces=("global",), placements=("agent",),
                flags=("avnone",))
V_CAS = P.Vocab(kinds=("st", "ld", "cas"), orders=("mono", "acq"), scopes=("agent",),
                spaces=("undef", "global"), placements=("agent",))


def concrete_differs(skel, a, b, v) -> bool:
    """Some program of the skeleton differs (hand-written encoders, every instantiation)."""
    ch = S.choices_of(v)
    slots = [ins for th in skel.threads for ins in th]
    lists = [ch[(ins[0], tuple(skel.spaces[x] for x in ins[4]))] for ins in slots]
    for plc in S.placements_of(skel, v):
        for pick in itertools.product(*lists):
            prog = S.instantiate(P.replace(skel, placement=plc), list(pick))
            if compare(prog, a, b).differs:
                return True
    return False


V_LDS = P.Vocab(kinds=("st", "ld"), orders=("na", "rel", "acq"), scopes=("workgroup", "agent"),
                spaces=("global", "local"), placements=("wg",), flags=("avnone",))
V_RMW_AGENT = P.Vocab(kinds=V_RMW.kinds, orders=V_RMW.orders, scopes=("agent",),
                      spaces=V_RMW.spaces, placements=V_RMW.placements, flags=V_RMW.flags)
LONG = pytest.mark.long
CASES = [("scope_inclusion=opencl", V_SCOPES, 2, 2), ("init_in_every_scope=false", V_SCOPES, 2, 2),
         ("coherence=langref", V_SCOPES, 2, 2),
         pytest.param("coherence=langref", V_SCOPES, 2, 3, marks=LONG, id="coherence-2x3"),
         ("cas_undef=fail", V_CAS, 1, 2),
         # the fast tier over V_RMW with its agent scope only (every kind and order of it, a
         # fifth of its concrete programs); the long tier over both scopes
         ("read_lo=true", V_RMW_AGENT, 2, 2),
         pytest.param("read_lo=true", V_RMW, 2, 2, marks=LONG, id="read_lo-both-scopes"),
         ("lds_scope=data", V_SCOPES, 2, 2),
         pytest.param("lds_av_workgroup=true", V_LDS, 2, 3, marks=LONG, id="lds_av-2x3"),
         pytest.param("upstream-2026", V_RMW, 2, 2, marks=LONG, id="upstream-2026"),
         pytest.param("llvm-hsa", V_RMW, 2, 2, marks=LONG, id="llvm-hsa")]


# the events of the smallest difference in docs/synth-options.md (the enumerative table)
FIRST_AT = {"scope_inclusion=opencl": 2, "init_in_every_scope=false": 2, "cas_undef=fail": 1,
            "coherence=langref": 3}


@pytest.mark.parametrize("opt,v,threads,events", CASES)
def test_each_skeleton_agrees_with_its_programs(opt, v, threads, events):
    a, b = (build_models("seed", None, [opt]) if "=" in opt else
            build_models("seed", opt, []))
    fa, fb = S.cat_of(a), S.cat_of(b)
    n = agree_diff = 0
    for ev in range(1, events + 1):
        for th in range(1, min(threads, ev) + 1):
            for skel in S.skeletons(v, th, ev, 2):
                r = S.ask(skel, fa, fb, v)
                assert r.decided and not r.disagreement, (skel, r.disagreement)
                want = concrete_differs(skel, a, b, v)
                assert (r.found is not None) == want, (opt, skel, r.found)
                if r.found is not None:
                    assert compare(r.found, a, b).differs
                n += 1
                agree_diff += want
    assert n > 0
    if opt in FIRST_AT:     # the smallest difference (docs/synth-options.md) is within reach
        assert (agree_diff > 0) == (events >= FIRST_AT[opt])


@pytest.mark.parametrize("opt,v,bound", [
    ("scope_inclusion=opencl", V_SCOPES, (2, 3)),
    ("coherence=langref", P.Vocab(kinds=("st", "ld"), orders=("mono",), scopes=("agent",),
                                  spaces=("global",), placements=("agent",)), (3, 3)),
    ("final_co=hb", V_SCOPES, (2, 2))])
def test_smallest_size_agrees(opt, v, bound):
    a, b = build_models("seed", None, [opt])
    bd = P.Bound(bound[0], bound[1], 2, v)
    e = search(a, b, bd, max_found=1, minimise_it=False)
    s = S.search(a, b, bd, max_found=1, minimise_it=False)
    size = lambda r: (P.size_of(r.found[0].original)[:2] if r.found else None)   # noqa: E731
    assert size(e) == size(s)
    assert s.exhaustive or s.found
    if s.found:
        assert compare(s.found[0].prog, a, b).differs


def test_no_difference_between_equal_versions():
    a = get_model("seed")
    s = S.search(a, a, P.Bound(2, 2, 2, V_SCOPES))
    assert not s.found and s.exhaustive and s.programs > 0


def test_versions_without_a_model_file_are_refused():
    seed = get_model("seed")
    b = with_options(seed, [("read_lo", True), ("avvis", False)])
    with pytest.raises(LitmusError, match="no model file"):
        S.cat_of(b)
    assert S.cat_of(with_options(seed, [("read_lo", True)])).cat.endswith("read_lo-true.cat")
    assert S.cat_of(with_options(seed, [("cas_undef", "fail")])).cat.endswith("seed.cat")


def test_barrier_vocabulary_is_refused():
    a, b = build_models("seed", None, ["barrier_hb=none"])
    v = P.Vocab(kinds=("st", "ld", "bar"), orders=("na",))
    with pytest.raises(LitmusError, match="memory instructions"):
        S.search(a, b, P.Bound(2, 2, 2, v))


def _cli(*args):
    r = CliRunner().invoke(main, list(args))
    return r.exit_code, r.stdout, r.stderr


def test_cli_symbolic_finds_the_smallest_test():
    code, out, err = _cli("synth", "--from", "seed", "--option", "scope_inclusion=opencl", "--symbolic",
                          "--events", "2", "--vocab",
                          "kinds=st,ld;orders=na,mono;scopes=workgroup,agent;placements=wg",
                          "--json", "--no-explain", "--max", "1")
    assert code == 0, err
    rec = json.loads(out)
    assert rec["search"] == "symbolic" and rec["skeletons"] > 0 and not rec["disagreements"]
    assert len(rec["tests"]) == 1


def test_cli_symbolic_refuses_barriers_exit_2():
    code, out, err = _cli("synth", "--from", "seed", "--option", "barrier_hb=none", "--symbolic", "--events",
                          "2")
    assert code == 2
    assert "memory instructions" in err and "Traceback" not in err + out


def test_docs_symbolic_section_agrees_and_is_what_the_tool_produces():
    """docs/synth-options.md "The symbolic search" (benchmarks/synth_symbolic.py): every row
    agrees with the enumerative table, and a cheap row re-run gives the same counts."""
    from amdmm_smt.synth.table import row_bound
    doc = open(os.path.join(ROOT, "docs", "synth-options.md"), encoding="utf-8").read()
    sec = doc[doc.index("## The symbolic search"):]
    rows = [ln for ln in sec.splitlines() if ln.startswith("| `")]
    assert len(rows) >= 10
    assert all(ln.split(" | ")[3] == "yes" for ln in rows), rows
    a, b = build_models("seed", None, ["scope_inclusion=opencl"])
    bd = row_bound(a, b, what="scope_inclusion=opencl")
    s = S.search(a, b, bd, max_found=1, minimise_it=False)
    p = s.found[0].original
    line = next(ln for ln in rows if ln.startswith("| `scope_inclusion=opencl` |"))
    assert (f"{len(p.threads)} threads × {p.events} events at {bd.threads} threads × "
            f"{bd.events} events: {sum(la.skeletons for la in s.layers)} skeletons for "
            f"{s.programs} programs") in line


def test_cli_symbolic_between_two_model_files():
    """issue 29 item 4: two model files by path, nothing else (their definitions differ)."""
    d = os.path.join(ROOT, "amdmm_smt", "models")
    code, out, err = _cli("synth", "--from", os.path.join(d, "seed.cat"), "--to",
                          os.path.join(d, "options", "coherence-langref.cat"), "--symbolic",
                          "--events", "3", "--vocab",
                          "kinds=st,ld;orders=mono;scopes=agent;placements=agent",
                          "--no-explain", "--max", "1", "--json")
    assert code == 0, err
    rec = json.loads(out)
    assert rec["search"] == "symbolic" and len(rec["tests"]) == 1
    assert rec["tests"][0]["events"] == 3 and rec["tests"][0]["threads"] == 2
