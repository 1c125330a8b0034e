"""`amdmm-smt synth` (issue 21, docs/semantics.md section 17): the enumeration covers every
program once up to symmetry, the minimiser shrinks, every reported test is 1-minimal and
verifies differently under the two versions by `verify` (independently of the search), the
smallest seed vs upstream-2026 witness is the hand-derived one, nothing found is an
exhaustive claim, and `diff --synth` appends the tests."""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import re
import subprocess
import sys

import pytest
from click.testing import CliRunner

from amdmm_smt.cli import main
from amdmm_smt.model import get_model
from amdmm_smt.outcomes import format_state
from amdmm_smt.synth import build_models, claim, run, to_markdown, to_text
from amdmm_smt.synth import programs as P
from amdmm_smt.synth.search import compare, minimise

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ASYNC = P.Vocab(kinds=("st", "ld", "async"), orders=("na",), spaces=("global", "local"),
                placements=("wg",))


def _model_file(tmp_path, m) -> str:
    """A model file for a version with changed options (verify --model takes a file)."""
    path = tmp_path / f"{m.name.replace('=', '-').replace('+', '_')}.yaml"
    opts = "".join(f"  {k}: {str(v).lower() if isinstance(v, bool) else v}\n"
                   for k, v in m.changed_options())
    path.write_text(f"name: {m.name.replace('=', '-').replace('+', '_')}\n"
                    + (f"options:\n{opts}" if opts else ""))
    return str(path)


# ---- the enumeration --------------------------------------------------------------------

def _raw_programs(v: P.Vocab, threads: int, events: int, locations: int):
    """Every program without symmetry reduction: every shape sequence, every assignment of
    locations (any numbering), every placement (any numbering)."""
    alpha = P.shapes(v)
    for comp in P._compositions(events, threads):
        for seq in itertools.product(alpha, repeat=events):
            needs = [s[4] for s in seq]
            slots = [n for need in needs for n in need]
            for locs in itertools.product(range(locations), repeat=len(slots)):
                spaces: dict = {}
                ok = True
                k = 0
                ins = []
                for s in seq:
                    chosen = tuple(locs[k:k + len(s[4])])
                    for loc, sp in zip(chosen, s[4]):
                        if spaces.setdefault(loc, sp) != sp:
                            ok = False
                    if len(set(chosen)) != len(chosen):
                        ok = False
                    k += len(s[4])
                    ins.append(s[:4] + (chosen,))
                if not ok:
                    continue
                th, k = [], 0
                for n in comp:
                    th.append(tuple(ins[k:k + n]))
                    k += n
                sp = tuple(spaces.get(i, "global") for i in range(locations))
                for plc in itertools.product(range(2), repeat=4 * threads):
                    p = tuple(tuple(plc[4 * t:4 * t + 4]) for t in range(threads))
                    prog = P.Program(p, tuple(th), sp)
                    # drop unused locations the way the canonical form does
                    prog = P._gc(prog)
                    rel = {P.relation(prog.placement, i, j) for i in range(threads)
                           for j in range(i + 1, threads)}
                    if rel <= set(v.placements) and P.lds_ok(prog) and P.flow_ok(prog) \
                            and P.wave_ok(prog) and P.observable(prog):
                        yield prog


# issue 29: cmpxchg, undef locations, the diamond, placements across clusters and agents
WIDE = P.Vocab(kinds=("st", "ld", "cas", "if"), orders=("mono",), scopes=("cluster",),
               spaces=("global", "undef"), placements=("wg", "xcluster", "system"))
# split barriers: programs with no location, waves that must agree on their barriers
SPLIT = P.Vocab(kinds=("st", "split"), orders=("na",), bar_ids=("-1", "-3"),
                placements=("wave", "wg", "agent"))


# threads of unequal length (2 x 3): the fast tier over global locations only (a third of the
# programs; local ones are renamed and canonicalised in the fast tier by 1 x 3 and 2 x 2), the
# long tier over both spaces
GLOBAL = P.Vocab(kinds=("st", "ld"), orders=("na",), scopes=("agent",), spaces=("global",),
                 placements=("wg", "agent"))


@pytest.mark.parametrize("threads,events,orders,v", [
    (1, 3, ("na", "rel"), None), (2, 2, ("na", "rel"), None),
    pytest.param(2, 3, ("na",), None, marks=pytest.mark.long), (2, 3, None, GLOBAL),
    pytest.param(2, 3, None, WIDE, marks=pytest.mark.long),    # 30 s; (2, 2) in the fast tier
    (2, 2, None, WIDE), (1, 3, None, WIDE),
    pytest.param(2, 3, None, SPLIT, marks=pytest.mark.long), (2, 2, None, SPLIT)])
def test_enumeration_is_every_program_once_up_to_symmetry(threads, events, orders, v):
    v = v or P.Vocab(kinds=("st", "ld"), orders=orders, scopes=("agent",),
                     spaces=("global", "local"), placements=("wg", "agent"))
    got = [p.key() for p in P.programs(v, threads, events, 2)]
    assert len(got) == len(set(got))                      # once
    want = {P.canonical(p).key() for p in _raw_programs(v, threads, events, 2)}
    assert set(got) == want                               # every class, canonical


def test_canonical_is_invariant_under_thread_and_location_renaming():
    st = ("st", "na", "", (), (0,))
    ld = ("ld", "rel", "agent", (), (1,))
    a = P.Program(((0, 0, 0, 0), (0, 0, 1, 0)), ((st,), (ld, st)), ("global", "local"))
    swapped = P.Program(((0, 0, 0, 0), (0, 0, 1, 0)),
                        ((ld[:4] + ((0,),), st[:4] + ((1,),)), (st[:4] + ((1,),),)),
                        ("local", "global"))
    assert P.canonical(a).key() == P.canonical(swapped).key()


def test_vocab_spec_and_errors():
    v = P.parse_vocab("kinds=st,ld,rmw;orders=na,mono;scopes=agent;only=rmw.mono.agent,st.na")
    assert v.kinds == ("st", "ld", "rmw") and v.only == ("rmw.mono.agent", "st.na")
    assert {s[0] for s in P.shapes(v)} == {"st", "rmw"}
    w = P.parse_vocab("+kinds=fence", ASYNC)
    assert w.kinds == ("st", "ld", "fence", "async")
    for bad in ("kinds=st,frob", "colour=red", "only=st", "targets=gfx9zz", "bar_ids=-2"):
        with pytest.raises(ValueError):
            P.parse_vocab(bad)
    # issue 29: every field of the whole vocabulary is reachable by --vocab
    x = P.parse_vocab("kinds=cas,split,named,async,if;bar_ids=-1,-3,0,1;counts=0,2;"
                      "wait_counts=0,1;targets=none,gfx942;placements=wave,xcluster;"
                      "spaces=global,local,undef;flags=mmra-global,user;scopes=cluster")
    assert x.targets == ("", "gfx942") and x.bar_ids == ("-1", "-3", "0", "1")
    kinds = {s[0] for s in P.shapes(x)}
    assert kinds == {"cas", "bsig", "bwait", "bfirst", "binit", "bjoin", "bleave", "bsigvar",
                     "async", "mark", "wait", "if"}
    assert {s[2] for s in P.shapes(x) if s[0] == "wait"} == {"0", "1"}
    assert {f for s in P.shapes(x) for f in s[3]} == {"user"}       # cas: user tag only


# ---- the search, minimality, independent check -----------------------------------------

@pytest.fixture(scope="module")
def async_run():
    a, b = build_models("seed", None, ["async_model=upstream-stages"])
    return run(a, b, P.Bound(2, 2, 2, ASYNC), jobs=1, max_found=3)


def test_seed_vs_upstream_async_smallest_is_the_hand_derived_one(async_run):
    """docs/semantics.md 17.6: `store x; copy x -> y (LDS)` in one thread. seed-004 orders the
    copy at its instruction, so the store happens-before the DMA read and is location-ordered
    before it (S000 clause 1): the read sees 1 and y ends 1. Under UP 2.4 the copy is in no
    program order and neither access is available / visible: the DMA read may see the
    initial write and the store, neither location-ordered before it: undef, and y ends undef.
    The states are written here by hand, not taken from the tool."""
    r = async_run
    first = r.tests[0]
    assert first.found.prog == P.Program(
        ((0, 0, 0, 0),), ((("st", "na", "", (), (0,)), ("async", "", "", (), (0, 1))),),
        ("global", "local"))
    assert first.found.only_a == [(("@x", 1), ("@y", 1))]
    assert first.found.only_b == [(("@x", 1), ("@y", None))]
    assert first.verdict_a == "allowed" and first.verdict_b == "forbidden"
    assert "read-value rule" in first.families


def test_reported_tests_are_one_minimal(async_run):
    a, b = async_run.a, async_run.b
    assert async_run.tests
    for t in async_run.tests:
        prog = t.found.prog
        assert compare(prog, a, b, prune=False).differs
        for what, red in P.reductions(prog):
            assert not compare(red, a, b, prune=False).differs, what


def test_minimiser_shrinks_a_padded_witness():
    a, b = build_models("seed", None, ["async_model=upstream-stages"])
    st = ("st", "sc", "agent", ("avnone",), (0,))           # an order to weaken, a flag to drop
    cp = ("async", "", "", (), (0, 1))
    ld = ("ld", "acq", "agent", (), (2,))                   # an instruction to remove
    padded = P.Program(((0, 0, 0, 0), (0, 0, 0, 1)), ((st, cp), (ld,)),
                       ("global", "local", "global"))
    assert compare(padded, a, b).differs
    small = minimise(padded, a, b)
    assert small.events == 2 and len(small.threads) == 1
    assert small.threads[0][0][:4] == ("st", "na", "", ())
    for _, red in P.reductions(small):
        assert not compare(red, a, b, prune=False).differs


def test_synthesized_tests_verify_differently(async_run, tmp_path):
    """Each test written to a file: `verify --model A` passes (its expectation is A's verdict)
    and `verify --model B` fails, by the CLI, not by the search."""
    fb = _model_file(tmp_path, async_run.b)
    for t in async_run.tests:
        path = tmp_path / f"{t.name}.yaml"
        path.write_text(t.yaml)
        ra = CliRunner().invoke(main, ["verify", "--model", "seed", str(path)])
        rb = CliRunner().invoke(main, ["verify", "--model", fb, str(path)])
        assert ra.exit_code == 0, ra.output
        assert rb.exit_code == 1, rb.output


def test_nothing_found_is_an_exhaustive_claim():
    """async_done_edges differs only where MMRA tags cut program order (docs
    R-async-done-every): without tags, no program distinguishes the two readings."""
    a, b = build_models("seed", None, ["async_done_edges=first"])
    bd = P.Bound(2, 2, 2, ASYNC)
    r = run(a, b, bd, jobs=1)
    assert not r.tests and r.search.exhaustive
    n = sum(P.count_programs(ASYNC, t, e, 2) for e in (1, 2) for t in (1, 2) if t <= e)
    assert r.search.programs == n
    text = claim(r)
    assert text.startswith("no program up to 2 threads × 2 events (2 locations) distinguishes "
                           "seed from seed+async_done_edges=first")
    assert f"{n} programs" in text and "vocabulary: kinds st,ld,async" in text


def test_jobs_give_the_same_result():
    a, b = build_models("seed", None, ["async_model=upstream-stages"])
    r1 = run(a, b, P.Bound(1, 2, 2, ASYNC), jobs=1, explain_it=False)
    r2 = run(a, b, P.Bound(1, 2, 2, ASYNC), jobs=2, explain_it=False)
    assert to_text(r1) == to_text(r2)


# ---- the command ------------------------------------------------------------------------

def test_cli_synth_writes_tests_and_json(tmp_path):
    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["synth", "--from", "seed", "--option",
                                  "async_model=upstream-stages", "--events", "2",
                                  "--threads", "1", "--vocab", "kinds=st,ld,async;orders=na;"
                                  "spaces=global,local;placements=wg", "--jobs", "1",
                                  "--no-explain", "-o", str(out), "--json"])
    assert r.exit_code == 0, r.output
    rec = json.loads(r.output)
    assert rec["tests"] and rec["tests"][0]["events"] == 2
    assert sorted(os.listdir(out)) == sorted(t["name"] + ".yaml" for t in rec["tests"])


@pytest.mark.parametrize("args,msg", [
    (["--from", "seed", "--option", "frob=1"], "--option: expected NAME=VALUE"),
    (["--from", "seed", "--option", "read_lo=maybe"], "must be true or false"),
    (["--from", "nosuch"], "unknown model"),
    (["--from", "seed", "--vocab", "kinds=zz"], "synth: --vocab kinds: unknown zz"),
])
def test_cli_synth_errors_are_one_line(args, msg):
    r = CliRunner().invoke(main, ["synth"] + args)
    assert r.exit_code == 2
    assert msg in r.output and "Traceback" not in r.output
    assert len(r.output.strip().splitlines()) == 1


def test_cli_help_does_not_import_synth():
    code = ("import sys; from amdmm_smt.cli import main\n"
            "try:\n main(['synth', '--help'])\nexcept SystemExit: pass\n"
            "assert 'amdmm_smt.synth' not in sys.modules, 'imported'\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_markdown_section(async_run):
    md = to_markdown(async_run)
    assert md.startswith("## Synthesized minimal tests: `seed` → "
                         "`seed+async_model=upstream-stages`")
    assert md.count("```yaml") == len(async_run.tests)


def test_diff_appends_synthesized_tests(tmp_path):
    t = os.path.join(ROOT, "litmus", "async", "async-global-store-then-copy.seed.yaml")
    mb = _model_file(tmp_path, build_models("seed", None, ["async_model=upstream-stages"])[1])
    r = CliRunner().invoke(main, ["diff", "--from", "seed", "--to", mb, t, "--no-explain",
                                  "--format", "markdown", "--synth", "--synth-events", "2",
                                  "--synth-threads", "1"])
    assert r.exit_code == 1, r.output
    assert "## Synthesized minimal tests" in r.output
    assert re.search(r"1 thread × 2 events: seed allows @x == 1 && @y == 1", r.output)


def test_option_table_rows_are_what_the_tool_produces():
    """docs/synth-options.md is generated (benchmarks/synth_table.py); a cheap row re-run."""
    from amdmm_smt.synth.table import Row, cells, row_bound
    doc = open(os.path.join(ROOT, "docs", "synth-options.md"), encoding="utf-8").read()
    a = get_model("seed")
    b = build_models("seed", None, ["async_model=upstream-stages"])[1]
    row = Row("async_model=upstream-stages", a, b)
    bd = row_bound(a, b)
    line = "| " + " | ".join(c.replace("|", "\\|") for c in cells(row)) + " |"
    assert bd.events == 4
    assert line in doc


def _readme_block(after: str) -> str:
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    i = text.index(after)
    start = text.index("```text\n", i) + len("```text\n")
    return text[start:text.index("```", start)]


def test_readme_examples_are_real_output():
    r = CliRunner().invoke(main, ["synth", "--from", "seed", "--to", "upstream-2026", "--max",
                                  "1"])
    assert r.exit_code == 0
    assert r.output == _readme_block("amdmm-smt synth --from seed --to upstream-2026 --max 1")
    r = CliRunner().invoke(main, ["synth", "--from", "seed", "--option",
                                  "async_done_edges=first", "--events", "2"])
    assert r.exit_code == 0
    want = _readme_block("amdmm-smt synth --from seed --option async_done_edges=first")
    assert r.output.splitlines()[-1] == want.strip()


def test_table_tests_are_not_larger_than_the_corpus_ones():
    """issue 21 item 4: where a hand-written corpus test shows a difference, the table's
    synthesized test is at most as large (the table says so per row, from both sizes)."""
    from amdmm_smt.synth.table import CORPUS, corpus_size
    doc = open(os.path.join(ROOT, "docs", "synth-options.md"), encoding="utf-8").read()
    for what, rel in CORPUS.items():
        line = next(ln for ln in doc.splitlines() if ln.startswith(f"| `{what}` |"))
        m = re.search(r"\| (\d) threads? × (\d) events?: ", line)
        assert m, line
        threads, events = int(m.group(1)), int(m.group(2))
        ct, ce = corpus_size(rel)
        assert (events, threads) <= (ce, ct), what
        assert "not larger" in line


def test_undefined_behaviour_difference_is_a_difference_and_its_test_says_so():
    """A program undefined under one version and defined under the other differs even with
    equal states; the test's expectation is the --from version's verdict."""
    from amdmm_smt.synth import _expectation
    from amdmm_smt.synth.search import Compared, Found, Outcomes
    prog = P.Program(((0, 0, 0, 0),), ((("st", "na", "", (), (0,)),),), ("global",))
    s = frozenset({(("@x", 1),)})
    every = Outcomes(frozenset(), "every", "drop-race")
    some = Outcomes(s, "some", "drop-race")
    clean = Outcomes(s, None)
    assert Compared(prog, False, every, clean).differs
    assert Compared(prog, False, some, clean).differs
    assert not Compared(prog, False, clean, Outcomes(s, None)).differs
    assert not Compared(prog, False, some, Outcomes(s, "every", decided=False)).differs
    assert _expectation(Found(prog, prog, every, clean))[1:3] == ("undefined", None)
    assert _expectation(Found(prog, prog, some, clean))[1:3] == ("allowed", "some")
    assert _expectation(Found(prog, prog, clean, every))[1:3] == ("allowed", None)


def test_two_thread_synthesized_test_verifies_differently(tmp_path):
    """scope_inclusion=opencl at 2 threads × 2 events: written, verified by the CLI under both
    versions, and 1-minimal."""
    a, b = build_models("seed", None, ["scope_inclusion=opencl"])
    v = P.Vocab(kinds=("st", "ld"), orders=("rel", "acq"), scopes=("workgroup", "agent"),
                spaces=("global",), placements=("wave", "wg"))
    r = run(a, b, P.Bound(2, 2, 1, v), jobs=1, max_found=1)
    assert r.tests and len(r.tests[0].found.prog.threads) == 2
    t = r.tests[0]
    path = tmp_path / "t.yaml"
    path.write_text(t.yaml)
    fb = _model_file(tmp_path, b)
    assert CliRunner().invoke(main, ["verify", "--model", "seed", str(path)]).exit_code == 0
    assert CliRunner().invoke(main, ["verify", "--model", fb, str(path)]).exit_code == 1
    for what, red in P.reductions(t.found.prog):
        assert not compare(red, a, b, prune=False).differs, what


# ---- issue 29: the whole vocabulary, claims that say what they cover, any two models -----

def test_reference_engine_agrees_on_every_synthesized_test(async_run):
    """Every test is checked by the explicit-enumeration reference engine under both versions
    (independently of the SMT encoding and solver)."""
    assert async_run.tests
    assert all(t.reference == "agrees" for t in async_run.tests), [t.reference for t in
                                                                   async_run.tests]


def test_every_option_has_a_preset_with_what_it_concerns():
    """issue 29 item 3: each option declares the instruction families it concerns, and its
    preset contains them; no barrier option about split / named / cluster barriers is
    searched with s.barrier alone."""
    from dataclasses import fields
    from amdmm_smt.model import Options
    from amdmm_smt.synth.presets import CONCERNS, PRESETS, UNSEARCHED, reaches, vocab_families
    # every option is searched: async_calls too, since the `call` kind (R-synth-call)
    assert UNSEARCHED == {}
    assert reaches("async_calls", PRESETS["async_calls"])
    for f in fields(Options):
        if f.name in UNSEARCHED:
            assert f.name in CONCERNS and f.name not in PRESETS, f.name
            assert not any(reaches(f.name, v) for v in PRESETS.values()), f.name
            continue
        assert f.name in CONCERNS and f.name in PRESETS, f.name
        assert reaches(f.name, PRESETS[f.name]), f.name
        bars = {"s.barrier", "split", "cluster-barrier", "named", "null-barrier"}
        fam = vocab_families(PRESETS[f.name])
        if fam & bars:
            assert fam & bars != {"s.barrier"}, f.name


# probes: vocabularies without the families an option concerns; on them the two values of
# the option must agree (the CONCERNS table, checked on every program up to 2 × 2)
_BASE = dict(orders=("na", "mono", "rel", "acq"), scopes=("wavefront", "workgroup", "agent"),
             spaces=("global",), placements=("wave", "wg", "agent"))
PROBES = [
    ("lds_av_workgroup=true", P.Vocab(kinds=("st", "ld", "rmw", "fence"), **_BASE)),
    ("volatile_av=true", P.Vocab(kinds=("st", "ld", "fence"), flags=("avnone",), **_BASE)),
    ("cas_undef=fail", P.Vocab(kinds=("st", "ld", "rmw"), orders=("na", "mono"),
                               scopes=("agent",), spaces=("undef",), placements=("wg",))),
    ("barrier_hb=none", P.Vocab(kinds=("st", "ld", "fence"), **_BASE)),
    ("named_init=signal-var", P.Vocab(kinds=("st", "ld", "bar", "split"), orders=("na",),
                                      placements=("wave", "wg"), bar_ids=("-1", "0"))),
    ("cluster_drop=wave", P.Vocab(kinds=("st", "ld", "bar", "split"), orders=("na",),
                                  placements=("wave", "wg", "agent"), bar_ids=("-1",))),
    ("leave_unjoined=noop", P.Vocab(kinds=("st", "bar", "split"), orders=("na",),
                                    placements=("wave", "wg"), bar_ids=("-1",))),
    ("signal_var_count=table", P.Vocab(kinds=("st", "bar", "split"), orders=("na",),
                                       placements=("wave", "wg"), bar_ids=("-1", "0"))),
    ("barrier_participation=run", P.Vocab(kinds=("st", "ld", "bar"), orders=("na",),
                                          placements=("wave", "wg"))),
    ("null_wait=noop", P.Vocab(kinds=("named", "split"), orders=("na",), placements=("wg",),
                               bar_ids=("-1", "1"), counts=("1",))),
    ("async_model=upstream-stages", P.Vocab(kinds=("st", "ld", "fence"), orders=("na", "rel",
                                                                               "acq"),
                                            spaces=("global", "local"), placements=("wg",))),
    ("default_target=gfx942", P.Vocab(kinds=("st", "ld", "split"), orders=("mono",),
                                      scopes=("cluster",), placements=("xcluster",),
                                      targets=("gfx1250", "gfx942"))),
]


# the two probes that take 10 s each run in the long tier
@pytest.mark.parametrize("opt,v", [pytest.param(o, v, id=f"{o}-{i}", marks=pytest.mark.long
                                                if i < 2 else ())
                                   for i, (o, v) in enumerate(PROBES)])
def test_an_option_changes_nothing_outside_what_it_concerns(opt, v):
    from amdmm_smt.synth.presets import reaches
    a, b = build_models("seed", None, [opt])
    assert not reaches(opt.split("=")[0], v)
    r = run(a, b, P.Bound(2, 2, 2, v), jobs=1, explain_it=False)
    assert not r.tests and r.search.exhaustive and r.search.programs > 0
    assert "cannot reach" in claim(r)


def test_unreachable_option_warns():
    r = CliRunner().invoke(main, ["synth", "--from", "seed", "--option",
                                  "named_init=signal-var", "--threads", "1", "--events", "1",
                                  "--vocab", "kinds=st,ld,bar;orders=na", "--jobs", "1"])
    assert r.exit_code == 0, r.output
    assert ("warning: option named_init concerns named; the vocabulary has none of that"
            in r.output)
    assert "differ only in options the vocabulary cannot reach" in r.output
    assert "(it cannot reach named_init: the claim says nothing about it)" in r.output


def test_cas_undef_smallest_is_one_cmpxchg_on_undef(tmp_path):
    """R-cas-undef by hand: `cmpxchg @x, 0, 1` on a location with no initial write compares
    undef with 0. `either`: undef is any bit pattern, so it may succeed (x ends 1) or fail (x
    stays undef; %r0 is undef either way); `fail`: it always fails, x stays undef. So
    @x == 1 is allowed by the default only: 1 thread × 1 event."""
    a, b = build_models("seed", None, ["cas_undef=fail"])
    from amdmm_smt.synth.presets import PRESETS
    r = run(a, b, P.Bound(2, 2, 2, PRESETS["cas_undef"]), jobs=1, max_found=1)
    t = r.tests[0]
    assert t.found.prog.events == 1 and t.found.prog.threads[0][0][0] == "cas"
    assert t.found.prog.spaces == ("undef",)
    assert t.found.only_a == [(("T0:%r0", None), ("@x", 1))] and not t.found.only_b
    assert t.reference == "agrees"
    path = tmp_path / "t.yaml"
    path.write_text(t.yaml)
    assert CliRunner().invoke(main, ["verify", "--model", "seed", str(path)]).exit_code == 0
    fb = _model_file(tmp_path, b)
    assert CliRunner().invoke(main, ["verify", "--model", fb, str(path)]).exit_code == 1


@pytest.mark.parametrize("opt,want", [
    # S002 "It is undefined behavior to operate on an uninitialized barrier object"; with
    # signal-var the signal.var initialises it (R-bar-named-init)
    ("named_init=signal-var", ("bsigvar",)),
    # a leave with no join (no init either): drop-without-join (default) or nothing
    # (R-bar-leave)
    ("leave_unjoined=noop", ("bleave",)),
    # pr170447's WIP rule: a signal that no wait of the wave follows (R-bar-wip)
    ("barrier_model=pr170447", ("bsig",)),
])
def test_barrier_options_have_small_tests_that_verify(opt, want, tmp_path):
    a, b = build_models("seed", None, [opt])
    from amdmm_smt.synth.presets import PRESETS
    r = run(a, b, P.Bound(1, 2, 2, PRESETS[opt.split("=")[0]]), jobs=1, max_found=1)
    t = r.tests[0]
    assert tuple(i[0] for i in t.found.prog.threads[0]) == want
    assert t.reference == "agrees"
    path = tmp_path / "t.yaml"
    path.write_text(t.yaml)
    fb = _model_file(tmp_path, b)
    assert CliRunner().invoke(main, ["verify", "--model", "seed", str(path)]).exit_code == 0
    assert CliRunner().invoke(main, ["verify", "--model", fb, str(path)]).exit_code == 1


def test_synth_between_two_model_files(tmp_path):
    """issue 29 item 4: --from / --to need nothing but two loadable models: a user's model
    files get the same search; two files with the same options are the same model."""
    fa = tmp_path / "mine.yaml"
    fa.write_text("name: mine\n")
    fb = tmp_path / "theirs.yaml"
    fb.write_text("name: theirs\noptions:\n  cas_undef: fail\n")
    r = CliRunner().invoke(main, ["synth", "--from", str(fa), "--to", str(fb), "--threads",
                                  "1", "--events", "1", "--jobs", "1", "--json"])
    assert r.exit_code == 0, r.output
    rec = json.loads(r.output)
    assert rec["tests"] and rec["tests"][0]["events"] == 1
    assert "cmpxchg" in rec["tests"][0]["test"]
    fc = tmp_path / "same.yaml"
    fc.write_text("name: same\n")
    r = CliRunner().invoke(main, ["synth", "--from", str(fa), "--to", str(fc), "--threads",
                                  "1", "--events", "1", "--jobs", "1"])
    assert "they are the same model, nothing can differ" in r.output


# ---- calls (R-synth-call; issue 29: async_calls is searched) -----------------------------

CALLS = P.Vocab(kinds=("st", "ld", "async", "call"), orders=("na",),
                spaces=("global", "local"), placements=("wg",))


def _raw_with_calls(v: P.Vocab, threads: int, events: int, locations: int):
    """_raw_programs, each also with every call the rule allows (docs R-synth-call, written
    out here from the rule, not from P.call_ok): a range of one thread whose body has no
    register-defining instruction and no diamond, makes an asyncmark or waits on one, and is
    not guarded by a diamond."""
    regs = ("ld", "rmw", "cas", "avld", "bfirst", "if")
    for p in _raw_programs(v, threads, events, locations):
        yield p
        for t, th in enumerate(p.threads):
            for s in range(len(th)):
                for e in range(s + 1, len(th) + 1):
                    body = [i[0] for i in th[s:e]]
                    if set(body) & set(regs) or not set(body) & {"mark", "wait"}:
                        continue
                    if s > 0 and th[s - 1][0] == "if":
                        continue
                    yield P.Program(p.placement, p.threads, p.spaces, p.target, (t, s, e))


@pytest.mark.parametrize("threads,events", [(1, 3), pytest.param(2, 3, marks=pytest.mark.long),
                                            (2, 2), pytest.param(1, 4, marks=pytest.mark.long)])
def test_enumeration_with_calls_is_every_program_once(threads, events):
    """A call is part of the program (its key): every program with or without a call, once up
    to symmetry (two equal threads, a call in either, are one program)."""
    got = [p.key() for p in P.programs(CALLS, threads, events, 2)]
    assert len(got) == len(set(got))
    want = {P.canonical(p).key() for p in _raw_with_calls(CALLS, threads, events, 2)}
    assert set(got) == want
    assert any(k[4] for k in got)                         # calls are enumerated
    # without the kind: the same programs without a call
    nocall = P.replace(CALLS, kinds=("st", "ld", "async"))
    assert {p.key() for p in P.programs(nocall, threads, events, 2)} == {k for k in got
                                                                          if not k[4]}


def test_call_ok_and_canonical_call():
    cp, mk, wt = ("async", "", "", (), (0, 1)), ("mark", "", "", (), ()), ("wait", "", "0", (), ())
    ld = ("ld", "na", "", (), (1,))
    th = (cp, mk, wt, ld)
    prog = P.Program(((0, 0, 0, 0),), (th,), ("global", "local"))
    assert sorted(P.call_ranges(prog)) == [(0, 0, 2), (0, 0, 3), (0, 1, 2), (0, 1, 3),
                                           (0, 2, 3)]   # never the load, never the copy alone
    assert not P.call_ok(P.replace(prog, call=(0, 0, 1)))
    assert not P.call_ok(P.replace(prog, call=(0, 2, 4)))
    # two equal threads: the call in T1 is the call in T0 after swapping them
    two = P.Program(((0, 0, 0, 0), (0, 0, 0, 1)), ((cp, mk), (cp[:4] + ((0, 1),), mk)),
                    ("global", "local"))
    assert P.canonical(P.replace(two, call=(1, 0, 2))).key() == \
        P.canonical(P.replace(two, call=(0, 0, 2))).key()


def _witness():
    """S004's per-function sequence against inlining, 1 thread × 4 events:
    define void @f() { copy x -> y; asyncmark X }; call @f(); wait.asyncmark(0) W; store 1 @x."""
    th = (("async", "", "", (), (0, 1)), ("mark", "", "", (), ()), ("wait", "", "0", (), ()),
          ("st", "na", "", (), (0,)))
    return P.Program(((0, 0, 0, 0),), (th,), ("global", "local"), "", (0, 0, 2))


def _calls_search(vocab):
    a, b = build_models("seed", None, ["async_calls=inlined"])
    return run(a, b, P.Bound(2, 4, 2, vocab), jobs=1, max_found=1)


@pytest.fixture(scope="module")
def calls_run_full():
    """The async_calls preset's search (18 s): the long tier."""
    from amdmm_smt.synth.presets import PRESETS
    return _calls_search(PRESETS["async_calls"])


@pytest.fixture(scope="module")
def calls_run_small():
    """The same search over the preset's vocabulary without loads (the witness has none):
    the same layers, a third of the programs (8 s): the fast tier."""
    from amdmm_smt.synth.presets import PRESETS
    v = PRESETS["async_calls"]
    assert "ld" in v.kinds
    return _calls_search(dataclasses.replace(v, kinds=tuple(k for k in v.kinds if k != "ld")))


@pytest.fixture(params=[pytest.param("small", id="fast"),
                        pytest.param("full", id="long", marks=pytest.mark.long)])
def calls_run(request):
    return request.getfixturevalue("calls_run_" + request.param)


# the two tests of each calls_run search share one worker under `--dist loadgroup` (.ci/run),
# so the module's fixture searches once
@pytest.mark.xdist_group("calls_run")
def test_async_calls_smallest_is_the_hand_derived_one(calls_run):
    """Derived by hand (docs/semantics.md 17.10), not taken from the tool. The program
    `f() { copy C: x -> y; asyncmark X }; call f(); wait.asyncmark(0) W; store 1 -> x`.
    seed (async_calls per-function, R-call-async-seq): S004 "wait.asyncmark(i16 %N) Waits
    until there are at most N outstanding asyncmarks in the sequence associated with the
    currently executing function body", and the sequence of the thread's body "excludes any
    asyncmarks produced by calls to other functions": W examines the caller's sequence, which
    is empty; whether X (f's) is completed-at W is unspecified (UP 2.4 "it is unspecified
    whether X is completed-at D"), so both. X completed: C is program-ordered before X, so C
    happens-before W (UP 2.4 async completion), hence before the store; C's read of x cannot
    see a write it happens-before and reads the initial 0: y ends 0. X not completed: C is
    not related to the store by happens-before (UP 2.4: an async operation "is not related in
    program-order with any other operations"), the store is plain (no availability), so
    neither the initial write nor the store is location-ordered before C's read and by the
    S000 read-value rule it returns undef, which C writes to y: y ends undef. x ends 1 either
    way. seed: {x=1 y=0, x=1 y=undef}. inlined (one sequence per thread, S004's "after
    inlining" answer): W examines [X] and N = 0 leaves none outstanding, X is completed at W:
    only x=1 y=0. So @x == 1 && @y == undef is allowed by seed only. Smaller programs cannot
    differ: a call needs a mark or wait in its body (R-synth-call), the difference needs a
    copy, its mark, a wait in another body and an access that observes it (four
    instructions) — the search confirms no program of 3 or fewer instructions differs (in the
    fast tier over the preset's vocabulary without loads, in the long tier over all of it)."""
    assert calls_run.tests
    t = calls_run.tests[0]
    assert t.found.prog.key() == P.canonical(_witness()).key()
    st = {format_state(s) for s in t.found.a.states}
    assert st == {"@x == 1 && @y == 0", "@x == 1 && @y == undef"}
    assert {format_state(s) for s in t.found.b.states} == {"@x == 1 && @y == 0"}
    assert t.verdict_a == "allowed" and t.verdict_b == "forbidden"
    assert t.condition == "@x == 1 && @y == undef"
    assert t.reference == "agrees"
    # the layers before 1 × 4 were searched in full with no difference
    assert all(la.differing == 0 and la.complete for la in calls_run.search.layers
               if (la.events, la.threads) < (4, 1))


@pytest.mark.xdist_group("calls_run")
def test_synthesized_call_test_parses_and_verifies(calls_run, tmp_path):
    """The rendered callee is a `functions:` definition the frontend takes; `verify` (the
    CLI, independently of the search) passes under seed and fails under the inlined reading,
    and the reference engine agrees with the SMT engine under both."""
    t = calls_run.tests[0]
    assert "functions: |\n  define void @f() {\n" in t.yaml and "      call void @f()\n" in t.yaml
    from amdmm_smt.frontend.litmus import parse_text
    test = parse_text(t.yaml, "t.yaml")
    assert sum(len(th.code) for th in test.threads) >= 4
    path = tmp_path / "t.yaml"
    path.write_text(t.yaml)
    fb = _model_file(tmp_path, calls_run.b)
    ra = CliRunner().invoke(main, ["verify", "--model", "seed", str(path)])
    rb = CliRunner().invoke(main, ["verify", "--model", fb, str(path)])
    assert ra.exit_code == 0, ra.output
    assert rb.exit_code == 1, rb.output
    from amdmm_smt.reference import run_reference
    from amdmm_smt.synth.search import _outcomes
    for m, o in ((calls_run.a, t.found.a), (calls_run.b, t.found.b)):
        r = run_reference(test, m)
        assert r.complete and _outcomes(r).states == o.states


def test_minimiser_inlines_a_call():
    """Inlining the call is a one-step reduction (the weaker program); on the witness it loses
    the difference (1-minimal), and a call the difference does not need is inlined away."""
    a, b = build_models("seed", None, ["async_calls=inlined"])
    w = P.canonical(_witness())
    reds = dict(P.reductions(w))
    inl = [r for d, r in reds.items() if d.startswith("inline the call")]
    assert inl == [P.canonical(P.replace(w, call=()))]
    for _, red in P.reductions(w):
        assert not compare(red, a, b, prune=False).differs
    # padded with a load of x before the call: the minimiser removes it and keeps the call
    th = (("ld", "na", "", (), (0,)),) + w.threads[0]
    padded = P.Program(w.placement, (th,), w.spaces, "", (0, 1, 3))
    assert compare(padded, a, b).differs
    assert minimise(padded, a, b).key() == w.key()
    # async_model (seed vs upstream-stages) on `store x; f() { copy x -> y; asyncmark }`:
    # the difference is the store and the copy (17.5), the call goes
    a2, b2 = build_models("seed", None, ["async_model=upstream-stages"])
    st = ("st", "na", "", (), (0,))
    prog = P.Program(((0, 0, 0, 0),), ((st, ("async", "", "", (), (0, 1)),
                                        ("mark", "", "", (), ())),), ("global", "local"), "",
                     (0, 1, 3))
    small = minimise(prog, a2, b2)
    assert not small.call and [i[0] for i in small.threads[0]] == ["st", "async"]


@pytest.mark.long      # the search of the row (20 s); test_async_calls_smallest_is_the_hand_
def test_async_calls_row_is_what_the_tool_produces():      # derived_one runs it in the fast tier
    """docs/synth-options.md: the async_calls row is searched (no "not searched" row is
    left) and is what the tool produces now."""
    from amdmm_smt.synth.table import Row, cells, row_bound
    doc = open(os.path.join(ROOT, "docs", "synth-options.md"), encoding="utf-8").read()
    assert "not searched" not in doc
    a, b = build_models("seed", None, ["async_calls=inlined"])
    row = Row("async_calls=inlined", a, b, row_bound(a, b, what="async_calls=inlined"))
    line = "| " + " | ".join(c.replace("|", "\\|") for c in cells(row)) + " |"
    assert line in doc
    assert "1 thread × 4 events: seed allows @x == 1 && @y == undef" in line


def test_vocab_help_lists_every_kind():
    r = CliRunner().invoke(main, ["synth", "--help"], terminal_width=400)
    assert r.exit_code == 0
    text = " ".join(r.output.split())
    m = re.search(r"kinds \(([a-z ]+)\)", text)
    assert m and m.group(1).split() == list(P.KINDS)
    m = re.search(r"flags \(([a-z -]+)\)", text)
    assert m and m.group(1).split() == list(P.FLAGS)
    assert P.parse_vocab("kinds=st,async,call").kinds == ("st", "async", "call")


def test_engines_agree_on_enumerated_call_programs():
    """The programs with a call that the enumeration writes (a sample of those of 1 thread × 4
    events with a copy, a mark and a wait: every 10th) have the same outcomes and undefined behaviour under the SMT engine and the
    reference engine, under both values of async_calls (calls add no semantics of their own,
    R-synth-call: the check is that the rendered functions mean the same to both)."""
    from amdmm_smt.reference import run_reference
    from amdmm_smt.solve import run_test
    from amdmm_smt.synth.search import _outcomes, test_of
    a, b = build_models("seed", None, ["async_calls=inlined"])
    progs = [p for p in P.programs(CALLS, 1, 4, 2) if p.call and {"async", "mark", "wait"}
             <= {i[0] for i in p.threads[0]}][::10]
    assert len(progs) >= 20
    differ = 0
    for p in progs:
        t = test_of(p)
        got = []
        for m in (a, b):
            smt = _outcomes(run_test(t, m))
            ref = _outcomes(run_reference(t, m))
            assert (smt.states, smt.ub) == (ref.states, ref.ub), (P.render(p, "t"), m.name)
            got.append(smt.states)
        differ += got[0] != got[1]
    print(f"\n{len(progs)} call programs, {differ} differ by async_calls")
    assert differ            # some of them tell the two readings apart


# ---- tag-all: MMRA tags on every instruction that takes metadata (R-synth-tag-all) -------

TAGS = P.Vocab(kinds=("ld", "async"), orders=("na",), spaces=("global", "local"),
               plain_spaces=("local",), placements=("wg",),
               flags=("mmra", "mmra-global", "tag-all"))


def test_tag_all_puts_tags_on_accesses_copies_marks_and_waits():
    sh = P.shapes(TAGS)
    for kind in ("ld", "async", "mark", "wait"):
        assert {s[3] for s in sh if s[0] == kind} == {(), ("mmra",), ("mmra-global",)}, kind
    # without tag-all the tags stay on fences
    plain = P.replace(TAGS, flags=("mmra", "mmra-global"))
    assert all(not s[3] for s in P.shapes(plain))
    fences = P.replace(TAGS, kinds=("fence",), orders=("acq",), flags=("mmra", "tag-all"))
    assert {s[3] for s in P.shapes(fences)} == {(), ("mmra",)}
    got = [p.key() for p in P.programs(TAGS, 1, 3, 2)]
    assert len(got) == len(set(got))
    assert set(got) == {P.canonical(p).key() for p in _raw_programs(TAGS, 1, 3, 2)}
    assert "tag-all" in P.parse_vocab("flags=mmra,tag-all").flags


def _tagged_waits():
    """C: copy x -> y [sync-as:local]; M: asyncmark; W1: wait.asyncmark(0) [local];
    W2: wait.asyncmark(0) [global]; R: load y [global]."""
    L, G = ("mmra",), ("mmra-global",)
    th = (("async", "", "", L, (0, 1)), ("mark", "", "", (), ()), ("wait", "", "0", L, ()),
          ("wait", "", "0", G, ()), ("ld", "na", "", G, (1,)))
    return P.Program(((0, 0, 0, 0),), (th,), ("global", "local"))


def test_async_done_edges_differs_with_tags_on_copy_and_waits(tmp_path):
    """Derived by hand (docs/semantics.md 17.11), not taken from the tool. S001: tag sets
    are compatible iff for every prefix present in one, the other has none of it or shares
    one; "When two instructions' metadata are not compatible, any program order between them
    are not in happens-before": sync-as:local and sync-as:global are incompatible, an empty
    set is compatible with all. M is completed-at W1 (sequence [M], N = 0), so C
    happens-before W1 (E-done, UP 2.4 "If A is completed-at ... Y, then A happens-before Y")
    under both values. `every` (R-async-done-every): M is not in the sequence after W2
    either, so M is completed-at W2 too and C happens-before W2; W2 -> R is program order
    between two global tags (compatible): C.w happens-before R and is program-ordered before
    it (seed-004 R-async-po), location-ordered before R, hiding the initial write: C copied
    x's initial 0, R = 0. `first`: C happens-before W1 only; W1 -> W2 (local, global) is cut,
    and seed-004's program-order edges from a completed copy (E-po, R-async-po-after-done)
    reach only events compatible with C's tag (local): not W2, not R. Nothing orders C.w
    before R: R sees the initial write and C.w, neither location-ordered before it, and by
    the S000 value rule returns undef. So `T0:%r0 == 0` is allowed by seed only, and
    `T0:%r0 == undef` by seed+async_done_edges=first only. (The table's row over fence tags
    only cannot show it; litmus/async/async-mmra-tagged-waits, with an untagged copy, is the
    same under both: E-po reaches its load.)"""
    a, b = build_models("seed", None, ["async_done_edges=first"])
    p = _tagged_waits()
    c = compare(p, a, b, prune=False)
    assert {format_state(s) for s in c.a.states} == {"T0:%r0 == 0 && @y == 0"}
    assert {format_state(s) for s in c.b.states} == {"T0:%r0 == undef && @y == 0"}
    # each tag is needed: dropping any one loses the difference (1-minimal for tags), and
    # so does removing any instruction
    for what, red in P.reductions(p):
        assert not compare(red, a, b, prune=False).differs, what
    # independently: the written test under verify, and the reference engine
    from amdmm_smt.synth.search import Found, reference_check
    f = Found(p, p, c.a, c.b)
    assert reference_check(f, a, b) == "agrees"
    path = tmp_path / "t.yaml"
    path.write_text(P.render(p, "t", exists="T0:%r0 == 0", expect="allowed"))
    fb = _model_file(tmp_path, b)
    assert CliRunner().invoke(main, ["verify", "--model", "seed", str(path)]).exit_code == 0
    assert CliRunner().invoke(main, ["verify", "--model", fb, str(path)]).exit_code == 1


def test_async_done_edges_tag_all_row_is_the_hand_derived_test():
    """docs/synth-options.md's row `async_done_edges=first (1 × 5, tag-all)` (table.EXTRA,
    benchmarks/synth_table.py; the search takes minutes, so it is not re-run here) shows the
    program and the state derived by hand in docs/semantics.md 17.11."""
    from amdmm_smt.synth.table import EXTRA
    doc = open(os.path.join(ROOT, "docs", "synth-options.md"), encoding="utf-8").read()
    line = next(ln for ln in doc.splitlines()
                if ln.startswith("| `async_done_edges=first (1 × 5, tag-all)` |"))
    code = P.code_text(P.canonical(_tagged_waits())).replace("|", "\\|")
    assert (f"1 thread × 5 events: seed allows T0:%r0 == 0 && @y == 0, "
            f"seed+async_done_edges=first forbids it — `{code}`") in line
    assert "tag-all" in EXTRA["async_done_edges=first"].vocab.flags
