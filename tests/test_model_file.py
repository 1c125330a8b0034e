"""Model files (issue 27): the language's errors, and the gate -- under `--model
models/seed.cat` both engines give exactly the outcomes and verdicts of the hand-written
encoders, on the corpus in scope and on generated tests; and edits of one definition change
exactly what a hand derivation from the documents says.

`python3 -m pytest -m long tests/test_model_file.py` runs the long gate (the slow
reference-engine corpus tests and more generated tests)."""

import glob
import os
import textwrap

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from amdmm_smt.cat import load
from amdmm_smt.cli import main
from amdmm_smt.errors import LitmusError
from amdmm_smt.frontend.litmus import parse_file, parse_text
from amdmm_smt.model import get_model
from amdmm_smt.reference import run_reference
from amdmm_smt.solve import run_test

from .conftest import sampled
from .gen import litmus, render

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEED = os.path.join(ROOT, "models", "seed.cat")
DIRS = ("classic", "s000", "mmra", "models", "cflow")
# the hand reference engine takes 2 s on these, the file-driven one minutes (every reads-from
# choice with every co order, evaluated): the long gate runs them
SLOW_REFERENCE = {"cflow/CAS-spinlock.agent.diff-wg.yaml", "cflow/ticketlock.agent.diff-wg.yaml",
                  "cflow/swbarrier.agent.diff-wg.yaml"}


def _in_scope() -> list:
    out = []
    for d in DIRS:
        for f in sorted(glob.glob(os.path.join(ROOT, "litmus", d, "*.yaml"))):
            t = parse_file(f)
            if t.model in (None, "seed"):
                out.append(os.path.relpath(f, os.path.join(ROOT, "litmus")))
    return out


CORPUS = _in_scope()


def _async_cases(models) -> list:
    """litmus/async (docs §11), the synchronous LDS DMA of litmus/forms (docs 16.1) and the
    async calls of litmus/calls (R-call-async-seq), minus the tests with an execution barrier
    (the barrier gate below has them)."""
    out = []
    for f in sorted(glob.glob(os.path.join(ROOT, "litmus", "async", "*.yaml"))
                    + glob.glob(os.path.join(ROOT, "litmus", "forms", "sync-dma-*.yaml"))
                    + glob.glob(os.path.join(ROOT, "litmus", "calls", "async-*.yaml"))):
        t = parse_file(f)
        if models is not None and t.model not in models:
            continue
        if any(i.kind == "barrier" for th in t.threads for i in th.code):
            continue
        out.append(os.path.relpath(f, os.path.join(ROOT, "litmus")))
    return out


ASYNC = _async_cases((None, "seed"))
ASYNC_ALL = _async_cases(None)


def _barrier_cases() -> list:
    """Every corpus test with an execution barrier (docs §10, models/barrier.cat) that runs
    under the seed model: litmus/barrier, and the barriers of spmd, async, cflow, mmra."""
    out = []
    for f in sorted(glob.glob(os.path.join(ROOT, "litmus", "**", "*.yaml"), recursive=True)):
        t = parse_file(f)
        if t.model not in (None, "seed"):
            continue
        if any(i.kind == "barrier" for th in t.threads for i in th.code) or any(
                i.kind == "barrier" for fn in (getattr(t, "functions", None) or {}).values()
                for i in getattr(fn, "code", ())):
            out.append(os.path.relpath(f, os.path.join(ROOT, "litmus")))
    return out


BARRIER = _barrier_cases()


def _same(a, b, f):
    assert a.states == b.states, f
    assert a.status == b.status, f
    assert [(v.kind, v.status) for v in a.verdicts] == [(v.kind, v.status) for v in b.verdicts], f


def test_the_corpus_in_scope_is_the_core():
    assert len(CORPUS) > 150 and any(f.startswith("cflow/") for f in CORPUS)


# the fast tier runs every other test through each engine (the SMT gate the even ones, the
# reference gate the odd ones), the long tier the rest
@pytest.mark.parametrize("rel", sampled(CORPUS, 2, 0))
def test_z3_engine_under_the_seed_file_equals_the_hand_encoders(rel):
    f = os.path.join(ROOT, "litmus", rel)
    t = parse_file(f)
    _same(run_test(t, get_model(None)), run_test(t, get_model(SEED)), rel)


# demanded pairs (docs/semantics.md §18 "Speed"): the Z3 algebra builds a pair of an
# intersection, a difference or a composition only where the other side can use it, from
# Z3Algebra.DEMAND_FROM events; forced on for every test here, and off, the answers are equal
@pytest.mark.parametrize("rel", sampled([r for r in CORPUS if r not in SLOW_REFERENCE], 6, 2))
def test_demanded_pairs_change_no_answer(rel, monkeypatch):
    from amdmm_smt.encode import cat_z3
    t = parse_file(os.path.join(ROOT, "litmus", rel))
    monkeypatch.setattr(cat_z3.Z3Algebra, "DEMAND_FROM", 0)
    on = run_test(t, get_model(SEED))
    monkeypatch.setattr(cat_z3.Z3Algebra, "DEMAND_FROM", 10 ** 9)
    _same(on, run_test(t, get_model(SEED)), rel)


def test_demanded_pairs_build_fewer_terms(monkeypatch):
    """The analysis is taken: on the spinlock (a loop unrolled: 40 events), a seventh fewer
    conjunctions are built with it than without (the vis chains' compositions, cut to the
    same-address candidates; a fifth before the level classes and the empty sides of
    docs/semantics.md §18 took some of the same terms away)."""
    from amdmm_smt.encode import cat_z3
    t = parse_file(os.path.join(ROOT, "litmus", "cflow", "CAS-spinlock.agent.diff-wg.yaml"))
    count = {"n": 0}
    real = cat_z3.AND

    def counted(*xs):
        count["n"] += 1
        return real(*xs)
    monkeypatch.setattr(cat_z3, "AND", counted)
    sizes = []
    for on in (0, 10 ** 9):
        monkeypatch.setattr(cat_z3.Z3Algebra, "DEMAND_FROM", on)
        count["n"] = 0
        run_test(t, get_model(SEED))
        sizes.append(count["n"])
    assert sizes[0] < 0.9 * sizes[1], sizes


# guarded recursion (docs/semantics.md §18): a let rec through a relation the axioms make
# acyclic gets one equation per pair, not Kleene rounds; on and off, the answers are equal
def _switch_changes_no_answer(rel: str, flag: str, monkeypatch) -> None:
    """The corpus test's answers with encode/cat_z3.py's `flag` on and off are the same."""
    from amdmm_smt.encode import cat_z3
    t = parse_file(os.path.join(ROOT, "litmus", rel))
    monkeypatch.setattr(cat_z3, flag, True)
    on = run_test(t, get_model(SEED))
    monkeypatch.setattr(cat_z3, flag, False)
    _same(on, run_test(t, get_model(SEED)), rel)


@pytest.mark.parametrize("rel", sampled([r for r in CORPUS if r not in SLOW_REFERENCE], 6, 3))
def test_guarded_recursion_changes_no_answer(rel, monkeypatch):
    _switch_changes_no_answer(rel, "GUARDED", monkeypatch)


def test_guarded_recursion_is_taken(monkeypatch):
    """On the spinlock (vis and avo have cyclic components: hb may go either way between
    the threads' accesses) the guarded encoding substitutes into each pair's term once; the
    Kleene iteration it replaces does so once per round."""
    from amdmm_smt.encode import cat_z3
    t = parse_file(os.path.join(ROOT, "litmus", "cflow", "CAS-spinlock.agent.diff-wg.yaml"))
    count = {"n": 0}
    real = cat_z3.Z3Algebra._subst

    def counted(*a):
        count["n"] += 1
        return real(*a)
    monkeypatch.setattr(cat_z3.Z3Algebra, "_subst", staticmethod(counted))
    sizes = []
    for on in (True, False):
        monkeypatch.setattr(cat_z3, "GUARDED", on)
        count["n"] = 0
        run_test(t, get_model(SEED))
        sizes.append(count["n"])
    assert sizes[0] < 0.5 * sizes[1], sizes


# levels that cannot differ (docs/semantics.md §18): the SMT engine evaluates a level-indexed
# value once per class of levels; on and off, the answers are equal
@pytest.mark.parametrize("rel", sampled([r for r in CORPUS if r not in SLOW_REFERENCE], 6, 4))
def test_level_classes_change_no_answer(rel, monkeypatch):
    _switch_changes_no_answer(rel, "LEVEL_CLASSES", monkeypatch)


def _classes_of(text: str, model: str, monkeypatch) -> list:
    from amdmm_smt.cat import eval as E
    got = []
    real = E.Evaluator._classes

    def seen(self):
        r = real(self)
        got.append(r)
        return r
    monkeypatch.setattr(E.Evaluator, "_classes", seen)
    res = run_test(parse_text(textwrap.dedent(text), "t.yaml"), get_model(model))
    return got, res


ONE_WG = """
    name: MP-one-workgroup
    memory: {x: {space: global}, y: {space: global}}
    threads:
      T0:
        code: |
          store i32 1, ptr addrspace(1) @x
          store atomic i32 1, ptr addrspace(1) @y release
      T1:
        code: |
          %r0 = load atomic i32, ptr addrspace(1) @y acquire
          %r1 = load i32, ptr addrspace(1) @x
"""

UPTO_WG = """
    let upto[L] = union(K >= L, K <= workgroup) (W & T)
    empty upto[agent] as above_workgroup
"""


def test_level_classes_of_a_test(monkeypatch):
    """MP between two workgroups of one cluster (agent-scope atomics; the plain accesses and
    the initial writes at system scope): an instance of singlethread, wavefront or workgroup
    holds one thread, one of cluster, agent or system both (contains); the scopes present
    are agent and system (AvsGe, AvScGe, ScGe). So the classes are {singlethread, wavefront,
    workgroup}, {cluster, agent}, {system}."""
    got, _ = _classes_of(MP, SEED, monkeypatch)
    assert got == [(0, 0, 0, 3, 3, 5)]
    # one workgroup, each thread a wavefront of its own, system scope everywhere: a
    # wavefront instance holds one thread, a workgroup one both; one scope, system
    got, _ = _classes_of(ONE_WG, SEED, monkeypatch)
    assert got == [(0, 0, 2, 2, 2, 2)]


def test_a_constant_bound_cuts_the_classes(tmp_path, monkeypatch):
    """`union(K >= L, K <= workgroup) S` is S at levels up to workgroup and empty above, so
    upto[agent] is empty and the axiom changes no answer of the seed (hand derivation). In
    the one-workgroup test workgroup .. system have one value of every base name: only the
    bound cuts cluster from workgroup; without the cut, upto[agent] would be upto[workgroup],
    every write, and the axiom would leave no execution (what dropping the cut gives)."""
    from amdmm_smt.cat import eval as E
    edit = _edit(tmp_path, UPTO_WG)
    got, res = _classes_of(ONE_WG, edit, monkeypatch)
    assert got == [(0, 0, 2, 3, 3, 3)]
    _, seed = _classes_of(ONE_WG, SEED, monkeypatch)
    _same(res, seed, "one-workgroup")
    # the seed's MP: r0 = 1 acquires the release, which makes x's store visible; with r0 = 0
    # the plain read may see the store and the initial write, one not before it: undef
    assert sorted(seed.states) == [(("T1:%r0", 0), ("T1:%r1", None)),
                                   (("T1:%r0", 1), ("T1:%r1", 1))]
    real = E._level_cuts
    monkeypatch.setattr(E, "_level_cuts", lambda m: (frozenset(), real(m)[1]))
    _, uncut = _classes_of(ONE_WG, edit, monkeypatch)
    assert uncut.states != seed.states


def test_a_level_compared_with_a_level_variable_keeps_every_level(tmp_path, monkeypatch):
    """A filter by a level variable (`K <= M`, M bound by an outer union) may tell apart two
    levels of one class: the analysis refuses the model, every level its own."""
    edit = _edit(tmp_path, """
        let below[L] = union(M >= L) (union(K >= L, K <= M) ((W & T) & ScGe[M]))
        empty below[system] \\ (W & T) as below_system
    """)
    got, res = _classes_of(ONE_WG, edit, monkeypatch)
    assert got == [None]
    _, seed = _classes_of(ONE_WG, SEED, monkeypatch)
    _same(res, seed, "one-workgroup")


def test_an_empty_side_ends_its_node(monkeypatch):
    """docs/semantics.md §18 "Empty sides": in MP (no seq_cst operation) `[SC] ; ...` is
    empty, so psc's body past it is not evaluated: fewer nodes, the same answers, in the
    sizes with and without demanded pairs."""
    from amdmm_smt.cat import eval as E
    from amdmm_smt.encode import cat_z3
    t = parse_text(textwrap.dedent(MP), "t.yaml")
    count = {"n": 0}
    real = E.Evaluator._eval

    def counted(self, e, env, sp):
        count["n"] += 1
        return real(self, e, env, sp)
    monkeypatch.setattr(E.Evaluator, "_eval", counted)
    for demand in (0, 10 ** 9):
        monkeypatch.setattr(cat_z3.Z3Algebra, "DEMAND_FROM", demand)
        runs = []
        for falsy in (True, False):
            monkeypatch.setattr(cat_z3.Z3Algebra, "empty_falsy", falsy)
            count["n"] = 0
            runs.append((run_test(t, get_model(SEED)), count["n"]))
        (on, n_on), (off, n_off) = runs
        _same(on, off, "MP")
        assert n_on < 0.9 * n_off, (demand, n_on, n_off)


def _wf_model(tmp_path, text: str):
    p = tmp_path / "m.cat"
    p.write_text(text)
    return load(str(p))


GUARD_BASE = """
let hb = ((po | rf)+ & cross(T, T)) | cross(I, T)
{axiom}
let rec r = ([W] ; po) | {step}
let lo = (r | ([I] ; loc ; [T])) & loc
let maysee = (([Hap] ; loc ; [R]) \\ id) \\ (lo ; [Hap] ; lo)
value maysee definite R
"""


@pytest.mark.parametrize("axiom,step,guarded", [
    ("irreflexive hb as hb_acyclic", "(r ; (hb & loc))", True),
    ("acyclic hb as hb_acyclic", "(r ; [R] ; hb)", True),
    ("irreflexive hb as hb_acyclic", "((r ; [W]) ; (hb & loc) ; [M])", True),
    ("", "(r ; (hb & loc))", False),                        # nothing makes hb acyclic
    ("irreflexive (hb | po^-1) as x", "(r ; (hb & loc))", False),     # not hb itself
    ("irreflexive hb as hb_acyclic", "(r ; (po | rf))", False),      # not within hb
    ("irreflexive hb as hb_acyclic", "(r ; r)", False),              # the group on the right
    ("irreflexive hb as hb_acyclic", "(r^-1 ; hb)", False),          # turned around
    ("irreflexive hb as hb_acyclic", "((hb & loc) ; r)", False),     # guard on the left
    ("flag ~empty (hb & id) as hb_acyclic", "(r ; (hb & loc))", False),
])
def test_guarded_recursion_analysis(tmp_path, axiom, step, guarded):
    """cat/wf.py: a let rec is guarded only when every reference to it is `r ; G` with G
    within a relation an axiom makes acyclic (irreflexive and transitive by its rules)."""
    from amdmm_smt.cat.wf import guarded_groups
    m = _wf_model(tmp_path, GUARD_BASE.format(axiom=axiom, step=step))
    gid = m.defs["r"].group
    assert (gid in guarded_groups(m)) is guarded


SPURIOUS_MODEL = """
let hb = ((po | rf)+ & cross(T, T)) | cross(I, T)
irreflexive hb as hb_acyclic
let lo = ((([W] ; po) | ([I] ; loc ; [T])) & loc) \\ id
let maysee = (([Hap] ; loc ; [R]) \\ id) \\ (lo ; [Hap] ; lo)
value maysee definite R
let rfr = [W] ; rf ; [R]
let c = (loc & cross(R, R)) \\ id
let rec z = rfr | (z ; c)
flag ~empty (z \\ (rfr ; c*)) as spurious
"""

THREE_READERS = """name: three
memory:
  x: {}
threads:
  T0:
    workgroup: 0
    code: |
      store atomic i32 1, ptr addrspace(1) @x syncscope("agent") monotonic
  T1:
    workgroup: 0
    code: |
      %a = load atomic i32, ptr addrspace(1) @x syncscope("agent") monotonic
  T2:
    workgroup: 0
    code: |
      %b = load atomic i32, ptr addrspace(1) @x syncscope("agent") monotonic
"""


def test_unguarded_recursion_keeps_the_least_fixpoint(tmp_path, monkeypatch):
    """`let rec z = rfr | (z ; c)` with c = two reads of one address either way: a cycle
    no axiom breaks. Its least fixpoint is rfr ; c*, so the flag never fires (both engines);
    one equation per pair would let the reads' pairs of a write nobody reads hold each other
    up (z(W, R1) and z(W, R2)), and the flag would fire: the analysis must refuse it, and is
    what keeps the answer right (forced to accept, the SMT engine reports the flag)."""
    from amdmm_smt.cat import wf
    p = tmp_path / "m.cat"
    p.write_text(SPURIOUS_MODEL)
    t = parse_text(THREE_READERS, "three.yaml")
    m = get_model(str(p))
    assert wf.guarded_groups(load(str(p))) == frozenset()
    smt, ref = run_test(t, m), run_reference(t, m)
    assert not smt.ub and not getattr(ref, "ub", None)
    assert set(smt.states) == set(ref.states) and len(smt.states) == 4
    monkeypatch.setattr(wf, "guarded_groups", lambda mm: frozenset(mm.groups))
    forced = run_test(t, get_model(str(p)))
    assert forced.ub and "spurious" in str(forced.ub.get("rule"))


@pytest.mark.parametrize("hb,transitive", [
    ("(po | rf)+", True),
    ("((po | rf)+ & cross(T, T)) | cross(I, T)", True),
    ("((po | rf)+ & cross(T, T)) | cross(T, T)", False),    # T meets T: not shown transitive
    ("((po | rf)+ & cross(T, T)) | cross(I, E)", False),
    ("(po | rf)+ | cross(I, T)", False),
    ("po | rf", False),
    ("(po | rf)+ & (po+ & cross(T, T))", True),
])
def test_transitivity_rules(tmp_path, hb, transitive):
    from amdmm_smt.cat.syntax import Name
    from amdmm_smt.cat.wf import transitive as is_transitive
    m = _wf_model(tmp_path, GUARD_BASE.format(axiom="irreflexive hb as hb_acyclic",
                                              step="(r ; (hb & loc))").replace(
        "let hb = ((po | rf)+ & cross(T, T)) | cross(I, T)", f"let hb = {hb}"))
    assert is_transitive(m, Name(file="", line=0, name="hb")) is transitive


@pytest.mark.parametrize("rel", sampled([r for r in CORPUS if r not in SLOW_REFERENCE], 2, 1))
def test_reference_engine_under_the_seed_file_equals_the_hand_engine(rel):
    f = os.path.join(ROOT, "litmus", rel)
    t = parse_file(f)
    _same(run_reference(t, get_model(None)), run_reference(t, get_model(SEED)), rel)


# cases whose reference runs under a file take 15-70 s: long tier only (cheaper tests of the
# same families stay in the fast tier)
HEAVY = {"async/async-uneven-blocks.yaml", "calls/async-call-nested.yaml",
         "calls/async-call-nested.inlined.yaml", "barrier/bar-4waves-2phases.yaml"}


@pytest.mark.parametrize("rel,engine", sampled([(r, e) for r in ASYNC
                                                for e in ("smt", "reference")], 3, 0, HEAVY,
                                               key=lambda v: v[0]))
def test_async_under_the_seed_file_equals_the_hand_encoders(rel, engine):
    """models/async.cat (included by seed.cat) gives the outcomes of the hand-written async
    rules (encode/async_ops.py, reference/async_ops.py), in both engines."""
    t = parse_file(os.path.join(ROOT, "litmus", rel))
    run = run_test if engine == "smt" else run_reference
    _same(run(t, get_model(None)), run(t, get_model(SEED)), rel)


@pytest.mark.parametrize("rel,version,engine", sampled(
    [(r, v, e) for r in ASYNC_ALL for v, e in (("upstream-2026", "smt"),
                                               ("upstream-2026", "reference"), ("opencl", "smt"))],
    4, 1, HEAVY, key=lambda v: v[0]))
def test_async_under_the_upstream_file_equals_the_built_in_version(rel, version, engine):
    """upstream-2026.cat (async.cat's `pov` and `asyncDone` replaced: UP 2.4) gives the
    outcomes of the built-in version upstream-2026 (async_model: upstream-stages) on every
    test of litmus/async, whatever model the test names, in both engines; opencl.cat (the
    seed's async rules) those of the built-in opencl, in the SMT engine."""
    t = parse_file(os.path.join(ROOT, "litmus", rel))
    run = run_test if engine == "smt" else run_reference
    path = os.path.join(ROOT, "models", VERSIONS[version])
    _same(run(t, get_model(version)), run(t, get_model(path)), rel)


# the fast tier runs each barrier test through one engine, alternating (the SMT engine for
# the even ones, the reference engine for the odd ones), the long tier through the other
@pytest.mark.parametrize("rel,engine", sampled(
    [(r, e) for k, r in enumerate(BARRIER)
     for e in (("smt", "reference") if k % 2 == 0 else ("reference", "smt"))], 2, 0))
def test_barriers_under_the_seed_file_equal_the_hand_encoders(rel, engine):
    """models/barrier.cat (included by seed.cat: bsw into hb, hbx) over the engines' own runs
    gives the outcomes, statuses and verdicts (undefined behaviour included) of the hand-written
    barrier memory model (encode/barrier.py, reference/barrier.py), in both engines."""
    t = parse_file(os.path.join(ROOT, "litmus", rel))
    run = run_test if engine == "smt" else run_reference
    _same(run(t, get_model(None)), run(t, get_model(SEED)), rel)


def _ub_key(r):
    u = getattr(r, "ub", None) or {}
    return (bool(u), u.get("all"), u.get("rule"), tuple(u.get("rules", ())))


def barrier_generated(n: int, model_path: str = SEED, hand=None, offset: int = 0) -> int:
    """Generated barrier tests (tests/gen.py barrier_test, barrier_choice_test, and the
    control-flow barrier / async tests cflow_bar_async_test): the hand SMT encoder (`hand`: the
    built-in model, by default the seed), the file's SMT encoding and the file's reference
    engine give the same outcomes and the same undefined behaviour. Returns how many the
    reference engine compared."""
    import random
    from .gen import barrier_choice_test, barrier_test, cflow_bar_async_test
    from amdmm_smt.reference import ReferenceTooBig
    gens = (barrier_test, barrier_choice_test, cflow_bar_async_test)
    hand = hand or get_model(None)
    cat = get_model(model_path)
    compared = 0
    for s in range(offset, offset + n):
        gen = gens[s % len(gens)]
        text = gen(random.Random(s), f"gen-catbar-{s}")
        t = parse_text(text, "gen.yaml")
        try:
            a = run_test(t, hand, timeout=120)
        except LitmusError as e:      # GFX12.5 forms do not exist in pr170447: the same error
            with pytest.raises(LitmusError) as f:
                run_test(t, cat, timeout=120)
            assert str(f.value) == str(e), text
            continue
        b = run_test(t, cat, timeout=120)
        assert a.error is None and b.error is None and a.status == b.status, text
        if not a.complete:        # bound: assume left no execution: unknown in both (15.2)
            assert not b.complete, text
            continue
        assert set(a.states) == set(b.states) and _ub_key(a) == _ub_key(b), \
            f"{text}\nhand {a.states} {a.ub}\nfile {b.states} {b.ub}"
        try:
            c = run_reference(t, cat, limit=3_000)     # the file-driven reference engine
            #                                         evaluates every candidate (§18 speed)
        except ReferenceTooBig:
            continue
        if not c.complete:
            continue
        compared += 1
        assert set(c.states) == set(a.states) and _ub_key(c) == _ub_key(a), \
            f"{text}\nhand {a.states} {a.ub}\nfile reference {c.states} {c.ub}"
    return compared


def test_generated_barrier_tests_agree(tier):
    # the fast tier from seed 4 (seed 3's test, whose file-driven reference run gives up after
    # 6 s, is in the long tier's 90): six tests, two of each generator
    n, offset = (6, 4) if tier == "fast" else (90, 0)
    assert barrier_generated(n, offset=offset) >= n // 3


def test_generated_barrier_tests_agree_under_pr170447(tier):
    n = 9 if tier == "fast" else 60
    barrier_generated(n, os.path.join(ROOT, "models", "pr170447.cat"),
                      hand=get_model("pr170447"), offset=2000)


def _pr170447_cases() -> list:
    """The barrier tests pr170447 (S003's runs) can run: the GFX12.5 forms (named, cluster,
    NULL barriers) and the seed-002 operations it does not have are input errors there."""
    from amdmm_smt.elaborate.events import elaborate
    out = []
    m = get_model("pr170447")
    for f in sorted(glob.glob(os.path.join(ROOT, "litmus", "**", "*.yaml"), recursive=True)):
        t = parse_file(f)
        if not any(i.kind == "barrier" for th in t.threads for i in th.code):
            continue
        try:
            elaborate(t, m)
        except LitmusError:
            continue
        except Exception:        # control flow and the like: let the gate run it
            pass
        out.append(os.path.relpath(f, os.path.join(ROOT, "litmus")))
    return out


PR170447 = _pr170447_cases()


@pytest.mark.parametrize("rel,engine", sampled([(r, e) for r in PR170447
                                                for e in ("smt", "reference")], 3, 0, HEAVY,
                                               key=lambda v: v[0]))
def test_barriers_under_the_pr170447_file_equal_the_built_in_version(rel, engine):
    """models/pr170447.cat (the seed, `option barrier_model = pr170447`, and S003's "bmo is
    consistent with happens-before" as `empty barBmo & hb`) gives the outcomes, statuses and
    verdicts of the built-in version pr170447 on every barrier test it can run, in both
    engines, whatever model the test names."""
    t = parse_file(os.path.join(ROOT, "litmus", rel))
    run = run_test if engine == "smt" else run_reference
    path = os.path.join(ROOT, "models", "pr170447.cat")
    _same(run(t, get_model("pr170447")), run(t, get_model(path)), rel)


def test_edit_drop_the_pr170447_bmo_hb_rule(tmp_path):
    """bar-v003-isfirst-hb.pr170447 (derived in its description): when T1 reads the flag 1,
    the release store synchronizes with the acquire load, so T0's signal (before the store)
    happens-before T1's signal (after the load); S003's "Barrier-modification-order<BO> is
    consistent with happens-before" then puts T0's arrive first in bmo: f0 = 1, f1 = 0, and
    r = 1 with f1 = 1 is forbidden. Without the rule (pr170447.cat's option file less its
    `bmo_hb` axiom)
    nothing ties bmo to happens-before: that outcome (f0 = 0, r = 1, f1 = 1) is allowed again,
    in both engines, and the other three stay."""
    text = open(os.path.join(ROOT, "models", "options", "barrier_model-pr170447.cat"),
                encoding="utf-8").read()
    line = next(ln for ln in text.splitlines() if ln.endswith("as bmo_hb"))
    p = tmp_path / "no-bmo-hb.cat"
    p.write_text(text.replace(line, ""))
    t = parse_file(os.path.join(ROOT, "litmus", "barrier", "bar-v003-isfirst-hb.pr170447.yaml"))
    with_rule = set(run_test(t, get_model(os.path.join(ROOT, "models", "pr170447.cat"))).states)
    a, b = run_test(t, get_model(str(p))), run_reference(t, get_model(str(p)))
    assert set(a.states) == set(b.states)
    extra = (("T0:%f0", 0), ("T1:%r", 1), ("T1:%f1", 1))
    assert len(with_rule) == 3 and extra not in with_rule
    assert set(a.states) == with_rule | {extra}


def test_the_barrier_gate_covers_the_directory():
    assert len(BARRIER) >= 60 and sum(r.startswith("barrier/") for r in BARRIER) >= 50


def test_the_async_gate_covers_the_directory():
    assert len(ASYNC) >= 30 and len(ASYNC_ALL) >= 40


@pytest.mark.long
@pytest.mark.parametrize("rel", sorted(SLOW_REFERENCE))
def test_reference_engine_gate_slow_tests(rel):
    t = parse_file(os.path.join(ROOT, "litmus", rel))
    _same(run_reference(t, get_model(None)), run_reference(t, get_model(SEED)), rel)


# ---- generated tests: hand Z3, file Z3, file reference ----------------------------------------

def _three(text: str):
    t = parse_text(text, "gen.yaml")
    hand = run_test(t, get_model(None), timeout=120)
    cat = run_test(t, get_model(SEED), timeout=120)
    assume(hand.complete and cat.complete and not hand.thin_air)
    ref = run_reference(t, get_model(SEED), limit=3_000)
    assert hand.states == cat.states, text
    if ref.complete:
        assert ref.states == hand.states, text


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(litmus(tags=True, lds=True, max_threads=3, max_ops=3))
def test_generated_tests_agree(g):
    _three(render(g))


@pytest.mark.long
@settings(max_examples=400, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(litmus(tags=True, lds=True))
def test_generated_tests_agree_long(g):
    _three(render(g))


@pytest.mark.long
@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(litmus(tags=True, lds=True))
def test_generated_tests_agree_with_demanded_pairs_on_long(g):
    """Demanded pairs (docs/semantics.md §18) forced on below their 12-event threshold: the
    file SMT engine still lists the hand encoders' outcomes on generated tests."""
    from amdmm_smt.encode import cat_z3
    old, cat_z3.Z3Algebra.DEMAND_FROM = cat_z3.Z3Algebra.DEMAND_FROM, 0
    try:
        t = parse_text(render(g), "gen.yaml")
        hand = run_test(t, get_model(None), timeout=120)
        cat = run_test(t, get_model(SEED), timeout=120)
    finally:
        cat_z3.Z3Algebra.DEMAND_FROM = old
    assume(hand.complete and cat.complete and not hand.thin_air)
    assert hand.states == cat.states, render(g)


# ---- generated async tests: hand Z3, file Z3, file reference -----------------------------------

def _async_generated(n: int, rich: int) -> None:
    """tests/gen.py `async_examples` and tests/gen_async_rich.py (copies, marks, waits with
    masks, MMRA tags, a second wave after a release / acquire): under seed.cat and
    upstream-2026.cat the SMT engine gives the hand encoders' outcomes, and the reference
    engine the same whenever it finishes within its limit."""
    from .gen import async_examples
    from .gen_async_rich import async_rich_examples
    cases = ([render(g, f"gen-async-{i}") for i, g in enumerate(async_examples(n))]
             + async_rich_examples(rich))
    compared = 0
    for text in cases:
        for version, f in (("seed", SEED),
                           ("upstream-2026", os.path.join(ROOT, "models", "upstream-2026.cat"))):
            t = parse_text(text, "gen.yaml")
            hand = run_test(t, get_model(version), timeout=120)
            cat = run_test(t, get_model(f), timeout=120)
            assert hand.complete and cat.complete, text
            assert hand.states == cat.states, f"{version}\n{text}"
            ref = run_reference(t, get_model(f), limit=3_000)
            if ref.complete:
                assert ref.states == hand.states, f"{version}\n{text}"
                compared += 1
    assert compared >= len(cases)          # the reference engine finished on half of them


def test_generated_async_tests_agree():
    _async_generated(3, 2)


@pytest.mark.long
def test_generated_async_tests_agree_long():
    _async_generated(40, 20)


# ---- refusals ----------------------------------------------------------------------------------

@pytest.mark.parametrize("rel", ["barrier/bar-MP-fences-wg.yaml",
                                 "async/async-pipeline-2waves-war-barrier.yaml"])
def test_a_family_the_file_does_not_define_is_refused(rel, tmp_path):
    """A file that says nothing of what a barrier run gives memory (neither barSig nor
    barExec: the seed without barrier.cat) refuses a test with barriers, never answers it."""
    (tmp_path / "async.cat").write_text(open(os.path.join(ROOT, "models", "async.cat")).read())
    (tmp_path / "barrier.cat").write_text("let bsw = id \\ id\nlet xb = id \\ id\n")
    m = tmp_path / "nobarrier.cat"
    m.write_text(open(SEED, encoding="utf-8").read())
    r = CliRunner().invoke(main, ["verify", "--model", str(m),
                                  os.path.join(ROOT, "litmus", rel)])
    assert r.exit_code == 2
    assert "does not define the family 'barrier'" in r.output
    line = [ln for ln in r.output.splitlines() if "does not define" in ln][0]
    assert line.split(":")[1].isdigit()         # FILE:LINE: problem


@pytest.mark.parametrize("engine", ["smt", "reference"])
def test_async_is_refused_by_a_file_that_does_not_say_when_an_operation_completes(tmp_path,
                                                                                    engine):
    """A model without async.cat's rules (no `completedAt` / `completedAtStage`) would treat
    the copy as two plain accesses at their instruction's position: refused, one line."""
    text = open(SEED).read().replace('include "async.cat"\n', "").replace(
        "let pohb = pov & hb", "let pohb = po & hb").replace("pocHb | sw | asyncHb", "poc | sw")
    text = text.replace("let pol = pov", "let pol = po").replace("(pov | (pol", "(po | (pol")
    p = tmp_path / "noasync.cat"
    p.write_text(text)
    t = os.path.join(ROOT, "litmus", "async", "async-read-after-wait.yaml")
    r = CliRunner().invoke(main, ["verify", "--engine", engine, "--model", str(p), t])
    assert r.exit_code == 2, r.output
    assert f"{t}:" in r.output and "does not define the family 'async'" in r.output, r.output


def test_async_completion_unspecified_across_bodies_is_the_executions_choice():
    """docs R-call-async-seq: a mark made in another function body than the wait's is
    completed there or not (UP 2.4 "it is unspecified whether B and C in bar() are
    completed-at Y"); under the file `completedAt` takes either, per mark, monotone along its
    later waits. async-call-wait-in-callee (derived in its description): neither B nor C
    completed at Y gives (undef, undef, 7), B only (7, undef, 7), C (7, 7, 7); both file
    engines give exactly these three, as the hand encoders do."""
    t = parse_file(os.path.join(ROOT, "litmus", "calls", "async-call-wait-in-callee.yaml"))
    want = {(("T0:%r0", None), ("T0:%r1", None), ("T0:%r2", 7)),
            (("T0:%r0", 7), ("T0:%r1", None), ("T0:%r2", 7)),
            (("T0:%r0", 7), ("T0:%r1", 7), ("T0:%r2", 7))}
    assert set(run_test(t, get_model(SEED)).states) == want
    assert set(run_reference(t, get_model(SEED)).states) == want


# ---- the language's errors: one line, FILE:LINE, exit 2 ----------------------------------------

BAD = [
    ("let a = po ;\n", 2, "expected a name"),
    ("let a = po ; W\nvalue a definite R\n", 1, "composes relations"),
    ("let a = nothere\nvalue a definite R\n", 1, "unknown name 'nothere'"),
    ("let a = contains\nvalue a definite R\n", 1, "indexed by a scope level"),
    ("let a = po[L]\nvalue a definite R\n", 1, "takes no scope level"),
    ("let rec a = po \\ a\nvalue a definite R\n", 1, "not monotone"),
    ("let a = po\nlet b = a & R\nvalue a definite R\n", 2, "between a rel and a set"),
    ("let a = b\nlet b = a\nvalue a definite R\n", 2, "recursion needs let rec"),
    ("let a = po\n(* never closed\n", 2, "unterminated comment"),
    ("let a = po\n", 1, "no value statement"),
    ("option avvis = false\nvalue po definite R\n", 1, "is a rule of the model"),
    ("option barrier_model = foo\nvalue po definite R\n", 1, "one of seed-002, pr170447"),
    ("value po definite R\noption nothere = x\n", 2, "unknown engine option"),
    ("option default_target = gfx9\nvalue po definite R\n", 1, "unknown target"),
    ("acyclic R as x\nvalue po definite R\n", 1, "acyclic needs a relation"),
    ("let a = po\nvalue a definite po\n", 2, "definite part must be a set"),
    ("let po = id\n", 1, "base name"),
    ("let a = po $ po\n", 1, "unexpected character"),
    ("let a = " + "(" * 70 + "po" + ")" * 70 + "\nvalue a definite R\n", 1, "nested too deeply"),
    ("let a = " + "~" * 300 + "po\nvalue a definite R\n", 1, "nested too deeply"),
    ("let a = " + " | ".join(["po"] * 400) + "\nvalue a definite R\n", 1, "nested more than"),
    ("let a0 = po\n" + "".join(f"let a{i} = (a{i - 1} | po) ; id\n" for i in range(1, 90))
     + "value a89 definite R\n", 68, "build on each other more than 200 deep"),
]


@pytest.mark.parametrize("text,line,msg", BAD)
def test_model_check_errors(tmp_path, text, line, msg):
    p = tmp_path / "m.cat"
    p.write_text(text)
    r = CliRunner().invoke(main, ["model", "check", str(p)])
    assert r.exit_code == 2, r.output
    assert r.output.strip().count("\n") == 0, r.output
    assert r.output.startswith(f"{p}:{line}: ") and msg in r.output, r.output


def test_include_cycle_is_an_error(tmp_path):
    (tmp_path / "a.cat").write_text('include "b.cat"\nvalue po definite R\n')
    (tmp_path / "b.cat").write_text('include "a.cat"\n')
    r = CliRunner().invoke(main, ["model", "check", str(tmp_path / "a.cat")])
    assert r.exit_code == 2 and "include cycle" in r.output
    assert r.output.startswith(f"{tmp_path / 'b.cat'}:1: ")


def test_unused_definition_is_a_warning_and_the_seed_is_clean(tmp_path):
    p = tmp_path / "m.cat"
    p.write_text("let unused = po\nvalue po definite R\n")
    r = CliRunner().invoke(main, ["model", "check", str(p)])
    assert r.exit_code == 0
    assert f"{p}:1: warning: 'unused' is defined but no axiom" in r.output
    r = CliRunner().invoke(main, ["model", "check", SEED])
    assert r.exit_code == 0 and "warning:" not in r.output and "0 warning(s)" in r.output
    assert len(open(SEED).read().splitlines()) < 600


_TOKENS = ["let", "rec", "and", "=", "po", "rf", "W", "R", "[", "]", "(", ")", "|", "&", "\\",
           ";", "^-1", "+", "*", "?", "~", "acyclic", "empty", "irreflexive", "flag", "as",
           "value", "definite", "include", '"x.cat"', "union", "(K)", "contains[K]", "K",
           "domain", "range", "cross", ",", "(*", "*)", "\n", "a", "b", "hb", "spaces", ">="]


@settings(max_examples=300, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(_TOKENS), max_size=30))
def test_the_parser_never_raises_anything_but_a_located_error(tmp_path_factory, toks):
    p = tmp_path_factory.mktemp("fz") / "m.cat"
    p.write_text(" ".join(toks))
    try:
        load(str(p))
    except LitmusError as e:
        assert e.line is None or e.line >= 1


# ---- edits of one definition, derived by hand ---------------------------------------------------

def _edit(tmp_path, body: str) -> str:
    p = tmp_path / "edit.cat"
    p.write_text('include "seed.cat"\n' + textwrap.dedent(body))
    return str(p)


def _outcomes(path_or_none, text: str):
    t = parse_text(textwrap.dedent(text), "t.yaml")
    m = get_model(path_or_none)
    a, b = run_test(t, m), run_reference(t, m)
    assert a.states == b.states
    return sorted(a.states)


MP = """
    name: MP
    memory: {x: {space: global}, y: {space: global}}
    threads:
      T0:
        workgroup: 0
        code: |
          store i32 1, ptr addrspace(1) @x
          store atomic i32 1, ptr addrspace(1) @y syncscope("agent") release
      T1:
        workgroup: 1
        code: |
          %r0 = load atomic i32, ptr addrspace(1) @y syncscope("agent") acquire
          %r1 = load i32, ptr addrspace(1) @x
"""


def test_edit_availability_clause_2(tmp_path):
    """Without S000 availability clause (2) ("X is a MakeAvailable operation that follows W in
    program order"), T0's plain store of x has no availability operation: the release store
    follows it but no longer makes it available. Nothing makes it visible to T1's read, so it
    is not location-ordered before the read; the read may see it (no exception applies) and
    the initial write (which nothing shadows), one of them not location-ordered before it:
    undef (S000 value rule). With r0 = 0 the read is undef in the seed as well."""
    seed = _outcomes(None, MP)
    assert seed == [(("T1:%r0", 0), ("T1:%r1", None)), (("T1:%r0", 1), ("T1:%r1", 1))]
    edit = _edit(tmp_path, """
        let rec avo = (((avself ; (hb & inAvs)) | (avo ; (hb & inAv))) ; [MA]) & inAv^-1
    """)
    assert _outcomes(edit, MP) == [(("T1:%r0", 0), ("T1:%r1", None)),
                                   (("T1:%r0", 1), ("T1:%r1", None))]


CORW1 = """
    name: read-then-write
    memory: {x: {space: global}}
    threads:
      T0:
        code: |
          %r0 = load i32, ptr addrspace(1) @x
          store i32 1, ptr addrspace(1) @x
"""


def test_edit_the_may_see_exception_for_later_writes(tmp_path):
    """S000: "If a read R happens-before a write W3, then R may not see W3." With it the plain
    read may see only the initial write, location-ordered before it: exactly one write, 0.
    Without it the read may also see the store after it in program order, which is not
    location-ordered before it: undef."""
    assert _outcomes(None, CORW1) == [(("T0:%r0", 0),)]
    edit = _edit(tmp_path, """
        let maysee = (([Hap] ; loc ; [R]) \\ id) \\ (lo ; lo)
    """)
    assert _outcomes(edit, CORW1) == [(("T0:%r0", None),)]


# ---- option files: the built-in versions as a seed plus overrides --------------------------------

VERSIONS = {"upstream-2026": "upstream-2026.cat", "opencl": "opencl.cat", "llvm-hsa": "llvm-hsa.cat"}
VERSION_CASES = [(v, os.path.relpath(f, os.path.join(ROOT, "litmus")))
                 for v in VERSIONS for d in ("s000", "models", "mmra", "classic")
                 for f in sorted(glob.glob(os.path.join(ROOT, "litmus", d, "*.yaml")))]


@pytest.mark.parametrize("version,rel", sampled(VERSION_CASES, 6))
def test_option_files_equal_the_built_in_versions(version, rel):
    """upstream-2026.cat (avsGe, lo, the may-see exception replaced), opencl.cat (the
    inclusive relations replaced) and llvm-hsa.cat (location order replaced by
    happens-before) give the outcomes of the built-in versions, in the SMT
    engine, on every test of these directories (whatever model the test names)."""
    t = parse_file(os.path.join(ROOT, "litmus", rel))
    path = os.path.join(ROOT, "models", VERSIONS[version])
    _same(run_test(t, get_model(version)), run_test(t, get_model(path)), rel)


def test_an_included_file_is_parsed_once(monkeypatch):
    """Two option files both include seed.cat (which includes async.cat and barrier.cat):
    loading both parses five files, not eight (cat/check.py _parsed), and the two models
    are the seed with each option's definitions replaced, as loaded apart."""
    from amdmm_smt.cat import check
    parsed = []
    real = check.parse

    def counted(text, p):
        parsed.append(os.path.basename(p))
        return real(text, p)
    monkeypatch.setattr(check, "parse", counted)
    monkeypatch.setattr(check, "_PARSED", {})
    opts = os.path.join(ROOT, "models", "options")
    a = check.load(os.path.join(opts, "coherence-langref.cat"))
    b = check.load(os.path.join(opts, "final_co-hb.cat"))
    assert sorted(parsed) == sorted(["coherence-langref.cat", "final_co-hb.cat", "seed.cat",
                                     "async.cat", "barrier.cat"]), parsed
    def where(m, name):
        return os.path.basename(m.defs[name].b.file)
    assert (where(a, "CoWR"), where(a, "cofinal")) == ("coherence-langref.cat", "seed.cat")
    assert (where(b, "CoWR"), where(b, "cofinal")) == ("seed.cat", "final_co-hb.cat")
    assert a.defs["hb"].b is b.defs["hb"].b


def test_models_lists_the_model_files():
    r = CliRunner().invoke(main, ["models"])
    assert r.exit_code == 0
    for f in ("seed.cat", "upstream-2026.cat", "opencl.cat", "llvm-hsa.cat"):
        assert f"\n{f}: " in r.output
    assert "opencl.cat: the seed with OpenCL scope matching" in r.output


RACE = """include "seed.cat"
(* a data race (LangRef "Memory Model for Concurrent Operations": two accesses to one
   address from different threads, one a write, not both atomic, neither happening before the
   other) is undefined behaviour *)
let conflict = ((cross(W, M) | cross(M, W)) & loc & ext & cross(T, T)) \\ id
let race = (conflict \\ cross(Atomic, Atomic)) \\ (hb | hb^-1)
flag ~empty race as data_race
"""


def test_a_data_race_flag_makes_mp_undefined_in_some_executions(tmp_path):
    """MP+rel-acq.agent.diff-wg under the seed plus a data-race flag. With r0 = 1 the acquire
    reads the release (inclusive agent scopes): synchronizes-with, the plain store of x
    happens-before the plain load, no race. With r0 = 0 nothing orders them: the flag holds,
    that execution is undefined (docs/semantics.md §18, judged as 10.6). So the defined
    outcomes are r0 = 1, r1 = 1 only; the test, which does not declare `undefined: some`,
    fails with "undefined behaviour in some executions: flag data_race at FILE:LINE", in both
    engines."""
    p = tmp_path / "race.cat"
    p.write_text(RACE)
    t = parse_file(os.path.join(ROOT, "litmus", "classic", "MP+rel-acq.agent.diff-wg.yaml"))
    m = get_model(str(p))
    for r in (run_test(t, m), run_reference(t, m)):
        assert set(r.states) == {(("T1:%r0", 1), ("T1:%r1", 1))}
        assert r.ub["rule"] == "flag data_race" and r.ub["all"] is False
        assert r.status == "fail"
        v = [v for v in r.verdicts if v.kind == "undefined"]
        assert len(v) == 1 and v[0].status == "fail"
        assert "undefined behaviour in some executions: flag data_race at race.cat:7" \
            in v[0].detail
    r = CliRunner().invoke(main, ["verify", "--model", str(p), os.path.join(
        ROOT, "litmus", "classic", "MP+rel-acq.agent.diff-wg.yaml")])
    assert r.exit_code == 1 and "flag data_race" in r.output, r.output


RACY = """
    name: plain-race
    memory: {x: {space: global, init: 0}}
    threads:
      T0:
        workgroup: 0
        code: |
          store i32 1, ptr addrspace(1) @x
      T1:
        workgroup: 1
        code: |
          %r0 = load i32, ptr addrspace(1) @x
    expect: undefined
"""


def test_a_data_race_flag_in_every_execution_passes_expect_undefined(tmp_path):
    """A plain store and a plain load of x in two threads with nothing between them: no
    execution orders them by happens-before, so every consistent execution races and is
    undefined: `expect: undefined` passes (docs 10.6), in both engines; without the flag the
    seed has defined executions and the same test fails."""
    p = tmp_path / "race.cat"
    p.write_text(RACE)
    t = parse_text(textwrap.dedent(RACY), "t.yaml")
    for r in (run_test(t, get_model(str(p))), run_reference(t, get_model(str(p)))):
        assert r.status == "pass" and r.ub["all"] is True and not r.states
    for r in (run_test(t, get_model(SEED)), run_reference(t, get_model(SEED))):
        assert r.status == "fail"


def test_diff_between_two_model_files_and_explain_runs_one():
    """`diff --from A.cat --to B.cat` lists what changes (the file under litmus/models pins
    the upstream volatile rule by hand); explain runs a model file (tests/test_model_explain.py
    derives its answers)."""
    t = os.path.join(ROOT, "litmus", "models", "volatile-avnone-flags.seed.yaml")
    r = CliRunner().invoke(main, ["diff", "--from", SEED, "--to",
                                  os.path.join(ROOT, "models", "upstream-2026.cat"), t])
    assert "only upstream-2026.cat allows: T1:%r0 == 1 && T1:%r1 == 1" in r.output, r.output
    assert "only seed.cat allows: T1:%r0 == 1 && T1:%r1 == undef" in r.output
    r = CliRunner().invoke(main, ["explain", "--model", SEED, "--outcome",
                                  "T1:%r0 == 1 && T1:%r1 == 1", t])
    assert r.exit_code == 0 and "FORBIDDEN" in r.output and "value_rule" in r.output, r.output


def test_edit_delete_the_corr_axiom(tmp_path):
    """A copy of the seed without CoRR ("If one atomic read happens before another atomic
    read of the same address, the later read must not see an earlier value in the
    modification order"). In CoRR+mono the store is monotonic, so nothing synchronizes and
    nothing makes it visible to T1: it is not location-ordered before the second read, which
    therefore may see the initial write (not shadowed) and the store, both atomic and
    inclusive (agent, one agent): the value of either. Only CoRR forbade r0 = 1, r1 = 0 (CoWR
    and CoRW need a write that happens-before or after a read; only the initial write
    happens-before the reads, and it is first in co)."""
    text = open(SEED).read()
    line = next(ln for ln in text.splitlines() if ln.endswith("as CoRR"))
    p = tmp_path / "no-corr.cat"
    p.write_text(text.replace(line + "\n", ""))
    t = parse_file(os.path.join(ROOT, "litmus", "classic", "CoRR+mono.agent.diff-wg.yaml"))
    m = get_model(str(p))
    a, b = run_test(t, m), run_reference(t, m)
    assert a.states == b.states == [
        (("T1:%r0", 0), ("T1:%r1", 0)), (("T1:%r0", 0), ("T1:%r1", 1)),
        (("T1:%r0", 1), ("T1:%r1", 0)), (("T1:%r0", 1), ("T1:%r1", 1))]


def test_the_language_document_lists_every_base_name():
    from amdmm_smt.cat.base import BASE
    doc = open(os.path.join(ROOT, "docs", "model-language.md"), encoding="utf-8").read()
    table = doc[doc.index("## Base names"):doc.index("## Typing rules")]
    for name, (_, indexed, _) in BASE.items():
        assert f"`{name}[L]`" in table if indexed else f"`{name}`" in table, name


# ---- warning[model-inconsistent]: a model that allows no execution names its conflict ----------

def _inconsistent(tmp_path, extra: str, text: str) -> list:
    p = tmp_path / "bad.cat"
    p.write_text('include "seed.cat"\n' + extra + "\n")
    t = parse_text(textwrap.dedent(text), "t.yaml")
    m = get_model(str(p))
    out = []
    for r in (run_test(t, m), run_reference(t, m)):
        assert not r.states and r.complete
        out.append([w.message for w in r.warnings if w.code == "model-inconsistent"])
    assert out[0] == out[1] and len(out[0]) == 1      # both engines, the same set
    return out[0][0]


def test_model_inconsistent_names_the_value_rule_and_an_axiom(tmp_path):
    """CORW1's read may see only the initial write (the store after it happens after it: S000's
    second exception), which is location-ordered before it: exactly one write, so the read is
    definite and reads from it (the value statement). `empty rf` forbids every reads-from:
    no execution. Without the value statement the read may be undef and read from nothing;
    without `empty rf` the seed's execution exists; no other axiom is needed: the minimal set
    is the two."""
    msg = _inconsistent(tmp_path, "empty rf as no_rf", CORW1)
    seed_line = next(i for i, ln in enumerate(open(SEED).read().splitlines(), 1)
                     if ln.startswith("value maysee"))
    assert f"conflict: value_rule (seed.cat:{seed_line}), no_rf (bad.cat:2) (" in msg, msg


def test_model_inconsistent_names_two_axioms(tmp_path):
    """Two plain stores in program order: the first is location-ordered before the second
    (S000 location order, program order), so R-final's `cofinal` puts it first in co; the new
    axiom forbids co in program order between them. co is total on the two writes that happen,
    so no execution; the value statement has no read to constrain: the minimal set is
    `cofinal` and the new axiom (CoWW does not apply to plain stores)."""
    msg = _inconsistent(tmp_path, r"irreflexive [W \ I] ; po ; [W \ I] ; co^-1 as reverse", """
        name: two-stores
        memory: {x: {space: global}}
        threads:
          T0:
            code: |
              store i32 1, ptr addrspace(1) @x
              store i32 2, ptr addrspace(1) @x
    """)
    assert "these of its rules conflict: cofinal (seed.cat:" in msg
    assert msg.endswith("reverse (bad.cat:2) (without any one of them some execution exists)")


def test_no_model_inconsistent_warning_where_an_execution_exists(tmp_path):
    t = parse_text(textwrap.dedent(CORW1), "t.yaml")
    for r in (run_test(t, get_model(SEED)), run_reference(t, get_model(SEED))):
        assert r.states and not [w for w in r.warnings if w.code == "model-inconsistent"]


RACE_BRANCH = """
    name: race-branch
    memory: {x: {space: global, init: 0}, y: {space: global, init: 0}}
    threads:
      T0:
        workgroup: 0
        code: |
          store i32 1, ptr addrspace(1) @x
      T1:
        workgroup: 1
        code: |
          entry:
            %r = load atomic i32, ptr addrspace(1) @y syncscope("agent") monotonic
            %c = icmp eq i32 %r, 0
            br i1 %c, label %yes, label %done
          yes:
            %v = load i32, ptr addrspace(1) @x
            br label %done
          done:
            ret void
      T2:
        workgroup: 2
        code: |
          store atomic i32 1, ptr addrspace(1) @y syncscope("agent") monotonic
    undefined: some
    outcomes:
      - "T1:%r == 1"
"""


def test_a_data_race_flag_on_one_path_combination(tmp_path):
    """Control flow (docs §15, judged as 15.9 judges a combination's barrier undefined
    behaviour): when T1 reads y = 0 it loads x with nothing ordering it against T0's plain
    store (no release / acquire anywhere): a race, undefined; when it reads 1 (T2's store,
    monotonic agent: the atomic case of the value rule) it skips the load: defined. So
    undefined in some executions, the defined outcome r = 1, in both engines."""
    p = tmp_path / "race.cat"
    p.write_text(RACE)
    t = parse_text(textwrap.dedent(RACE_BRANCH), "t.yaml")
    for r in (run_test(t, get_model(str(p))), run_reference(t, get_model(str(p)))):
        assert set(r.states) == {(("T1:%r", 1),)}
        assert r.status == "pass" and r.ub["rule"] == "flag data_race" and not r.ub["all"]


def test_model_inconsistent_over_path_combinations(tmp_path):
    """With control flow the warning is about the test, every path combination: T0 reads y = 0
    (nothing writes y), takes %yes and stores 1 then 2 to x; the `%no` combination has no
    execution whatever the rules (its branch assumption fails), so it says nothing; on %yes
    the two-store conflict of the test above: cofinal and the new axiom."""
    msg = _inconsistent(tmp_path, r"irreflexive [W \ I] ; po ; [W \ I] ; co^-1 as reverse", """
        name: two-stores-branch
        memory: {x: {space: global}, y: {space: global, init: 0}}
        threads:
          T0:
            code: |
              entry:
                %r = load atomic i32, ptr addrspace(1) @y syncscope("agent") monotonic
                %c = icmp eq i32 %r, 0
                br i1 %c, label %yes, label %no
              yes:
                store i32 1, ptr addrspace(1) @x
                store i32 2, ptr addrspace(1) @x
                br label %done
              no:
                store i32 3, ptr addrspace(1) @x
                br label %done
              done:
                ret void
    """)
    assert "these of its rules conflict: cofinal (seed.cat:" in msg
    assert msg.endswith("reverse (bad.cat:2) (without any one of them some execution exists)")


# ---- edits of one rule of async.cat, derived by hand (docs/semantics.md §11, §18) --------------

def _async_edit(tmp_path, base: str, body: str) -> str:
    p = tmp_path / "async-edit.cat"
    p.write_text(f'include "{base}"\n' + textwrap.dedent(body))
    return str(p)


def _file_outcomes(path: str, rel: str):
    t = parse_file(os.path.join(ROOT, "litmus", rel if "/" in rel else os.path.join("async", rel)))
    m = get_model(path)
    a, b = run_test(t, m), run_reference(t, m)
    assert a.states == b.states
    return sorted(a.states)


UP_CAT = os.path.join(ROOT, "models", "upstream-2026.cat")


def test_edit_async_h1_cut(tmp_path):
    """Without S004 H1's cut (pocHb = poc & pov: the program-order edges out of an outstanding
    copy kept), A.w is po-before the store S of 5 and hb it, so location-ordered before it
    (clause 1) and co-before it (R-final): @l is 5 only. The load after the wait has A.w and S
    location-ordered before it, and A.w lo S lo load: it may not see A.w (nor the initial
    write, lo A.w): exactly one write, 5. With the cut: undef, and @l either 5 or 7."""
    rel = "async-store-after-copy-races.yaml"
    assert _file_outcomes(SEED, rel) == [(("T0:%r0", None), ("@l", 5)),
                                         (("T0:%r0", None), ("@l", 7))]
    edit = _async_edit(tmp_path, "seed.cat", "let pocHb = poc & pov\n")
    assert _file_outcomes(edit, rel) == [(("T0:%r0", 5), ("@l", 5))]


def test_edit_async_po_after_done(tmp_path):
    """Without R-async-po-after-done (no program-order edge ever leaves A: pocHb = (poc & pov)
    minus cross(Async, E)), the only edge out of A is to the wait (foo:baz), whose program
    order to %r1 (foo:bar) S001 removes: A.w is not hb, so not location-ordered, before %r1,
    which may see it and the initial write: undef (was 7)."""
    rel = "async-completed-copy-keeps-po.seed.yaml"
    assert _file_outcomes(SEED, rel) == [(("T0:%r0", None), ("T0:%r1", 7))]
    edit = _async_edit(tmp_path, "seed.cat", "let pocHb = (poc & pov) \\ cross(Async, E)\n")
    assert _file_outcomes(edit, rel) == [(("T0:%r0", None), ("T0:%r1", None))]


def test_edit_async_done_edges_seed(tmp_path):
    """Without asyncDone in happens-before (asyncHb = initiates) under the seed: the copy is
    tagged foo:qux, incompatible with both waits' and the loads' foo tags, so no program-order
    edge leaves it (S001), and the edge A -> wait2 (foo:bar, compatible with %r1) was its only
    way to %r1: %r1 undef (was 7)."""
    rel = "async-mmra-tagged-copy-two-waits.yaml"
    assert _file_outcomes(SEED, rel) == [(("T0:%r0", None), ("T0:%r1", 7))]
    edit = _async_edit(tmp_path, "seed.cat", "let asyncHb = initiates\n")
    assert _file_outcomes(edit, rel) == [(("T0:%r0", None), ("T0:%r1", None))]


def test_edit_async_done_edges_upstream(tmp_path):
    """UP 2.4 without "If A is completed-at ... Y, then A happens-before Y": A is in no program
    order, so nothing orders A.w before the load after the wait; the load may see the initial
    0 and A.w, neither location-ordered before it by the other: undef (was 7); @l is still 7
    (A.w happens, co after the initial write)."""
    rel = "async-read-after-wait.yaml"
    assert _file_outcomes(UP_CAT, rel) == [(("T0:%r0", 7), ("@l", 7))]
    edit = _async_edit(tmp_path, "upstream-2026.cat", "let asyncHb = initiates\n")
    assert _file_outcomes(edit, rel) == [(("T0:%r0", None), ("@l", 7))]


def test_edit_async_initiates_upstream(tmp_path):
    """UP 2.4 without "I happens-before A": the load before the copy reaches A only through I
    (A is in no program order), so it no longer happens-before A.w; neither the may-see
    exception nor read_lo keeps it from seeing A.w, which is not location-ordered before it:
    two writes, undef (was 0)."""
    rel = "async-load-before-copy.yaml"
    assert _file_outcomes(UP_CAT, rel) == [(("T0:%r0", 0), ("@l", 7))]
    edit = _async_edit(tmp_path, "upstream-2026.cat",
                       "let asyncHb = [Async] ; completedAtStage\n")
    assert _file_outcomes(edit, rel) == [(("T0:%r0", None), ("@l", 7))]


def test_edit_async_upstream_program_order(tmp_path):
    """upstream-2026.cat with the seed's program order of async operations (pov = po) gives
    the seed's answer to the keeps-po test: the completed copy keeps its program-order edge to
    %r1 (R-async-po-after-done), A.w is po_hb-before it: 7 (UP 2.4: undef)."""
    rel = "async-completed-copy-keeps-po.upstream.yaml"
    assert _file_outcomes(UP_CAT, rel) == [(("T0:%r0", None), ("T0:%r1", None))]
    edit = _async_edit(tmp_path, "upstream-2026.cat", "let pov = po\n")
    assert _file_outcomes(edit, rel) == [(("T0:%r0", None), ("T0:%r1", 7))]


def test_edit_sync_dma_upstream(tmp_path):
    """upstream-2026.cat without R-dma-sync-upstream's completion at the call (pocHb as
    async.cat has it, which cuts the program order of the DMA's events: pov leaves them out):
    nothing orders the DMA's LDS write before the later load of l, no visibility reaches the
    load (it needs happens-before), so the load may see the initial 0 and the DMA write, which
    is not location-ordered before it: undef (was 7)."""
    rel = "forms/sync-dma-read-after.yaml"
    assert _file_outcomes(UP_CAT, rel) == [(("T0:%r", 7),)]
    edit = _async_edit(tmp_path, "upstream-2026.cat",
                       "let pocHb = (poc & pov) \\ (cross(Async, E) \\ (asyncDone ; po))\n")
    assert _file_outcomes(edit, rel) == [(("T0:%r", None),)]


PRUNE_TEST = textwrap.dedent("""\
    name: prune-rf
    memory:
      x: {}
    threads:
      T0:
        workgroup: 0
        code: |
          store atomic i32 1, ptr addrspace(1) @x syncscope("agent") monotonic
          %r0 = load atomic i32, ptr addrspace(1) @x syncscope("agent") monotonic
          store atomic i32 2, ptr addrspace(1) @x syncscope("agent") monotonic
      T1:
        workgroup: 1
        code: |
          %r0 = load atomic i32, ptr addrspace(1) @x syncscope("agent") monotonic
    exists: "T0:%r0 == 1"
    expect: allowed
    """)


def test_the_file_analysis_drops_reads_from_pairs_its_may_see_excludes():
    """encode/cat_z3.py may_see: T0's read happens-before the write of 2 (the file's maysee
    excludes it) and the write of 1 is location-ordered between the initial write and the
    read (excluded too); T1's read may see every write. The pruned encoding lists what the
    unpruned one and the hand encoders list."""
    from amdmm_smt.elaborate.events import elaborate
    from amdmm_smt.encode import cat_z3
    t = parse_text(PRUNE_TEST, "prune-rf.yaml")
    el = elaborate(t, get_model(SEED))
    full = cat_z3.encode_model_file(el, prune=False)
    cut = cat_z3.encode_model_file(el, prune=True)
    lab = {e.id: e.label for e in el.events}
    dropped = {(lab[w], lab[r]) for (w, r) in set(full.rf_var) - set(cut.rf_var)}
    assert set(cut.rf_var) < set(full.rf_var)
    r0 = next(e for e in el.events if e.reads and el.thread_names[e.thread] == "T0")
    kept_t0 = {w for (w, r) in cut.rf_var if r == r0.id}
    assert len(kept_t0) == 1 and el.events[next(iter(kept_t0))].kind == "store", dropped
    explaining = cat_z3.encode_model_file(el, explaining=True, prune=True)
    assert set(explaining.rf_var) == set(full.rf_var)     # explain keeps every pair


# every third test of classic/ and cflow/, and prune-rf; the fast tier every other one of
# those (prune-rf among them), the long tier the rest
@pytest.mark.parametrize("rel", sampled(
    ["prune-rf"] + [r for r in CORPUS if r.startswith(("classic/", "cflow/"))][::3], 2, 0))
def test_the_pruned_file_encoding_lists_the_same_outcomes(rel, monkeypatch):
    from amdmm_smt.encode import cat_z3
    t = (parse_text(PRUNE_TEST, "prune-rf.yaml") if rel == "prune-rf"
         else parse_file(os.path.join(ROOT, "litmus", rel)))
    plain = run_test(t, get_model(SEED))
    monkeypatch.setattr(cat_z3, "PRUNE_RF", True)
    _same(run_test(t, get_model(SEED)), plain, rel)
    _same(run_test(t, get_model(None)), plain, rel)


# candidates that differ in co alone (docs/semantics.md §18): the file-driven reference engine
# keeps what does not depend on co across a reads-from choice's coherence orders, and each
# let rec group's least fixpoint by the values of its inputs; on and off, the same answers
_MEMO_CASES = ["classic/2+2W+mono.agent.diff-wg.yaml", "classic/CoRR+mono.agent.diff-wg.yaml",
               "classic/RMW+mono.agent.diff-wg.yaml", "classic/CAS+acq_rel.agent.diff-wg.yaml",
               "s000/s000-rmw-release-cmpxchg-acquire.yaml", "barrier/bar-MP-fences-wg.yaml",
               "barrier/bar-LB-atomics-acq-rel.yaml"]


def _memo_cases() -> list:
    out = [c for c in _MEMO_CASES if os.path.exists(os.path.join(ROOT, "litmus", c))]
    assert out == _MEMO_CASES, out
    return out


def _reference_with(t, model: str, on: bool, monkeypatch):
    from amdmm_smt.cat import eval as E
    from amdmm_smt.reference import cat_engine
    monkeypatch.setattr(cat_engine, "HOLD", on)
    monkeypatch.setattr(E, "REUSE", on)
    return run_reference(t, get_model(model))


@pytest.mark.parametrize("rel", _memo_cases())
def test_reference_memos_change_no_answer(rel, monkeypatch):
    t = parse_file(os.path.join(ROOT, "litmus", rel))
    for model in ("seed", "pr170447"):
        f = os.path.join(ROOT, "models", f"{model}.cat")
        on = _reference_with(t, f, True, monkeypatch)
        off = _reference_with(t, f, False, monkeypatch)
        assert on.complete and off.complete, rel
        assert on.states == off.states, (rel, model)
        assert bool(getattr(on, "ub", None)) == bool(getattr(off, "ub", None)), (rel, model)


def test_reference_memos_are_taken(monkeypatch):
    """On 2+2W (two writes to each location in each thread: 2 x 2 coherence orders per
    reads-from choice, no RMW) the let rec groups are solved once per distinct input, not once
    per candidate: fewer fixpoints with the memos, the same answer; and what does not depend
    on co is evaluated once per reads-from choice (fewer evaluated nodes)."""
    from amdmm_smt.cat import eval as E
    t = parse_file(os.path.join(ROOT, "litmus", _memo_cases()[0]))
    counts = {}
    real_fix, real_eval = E.MaskAlgebra.fixpoint, E.Evaluator._eval
    for on in (True, False):
        n = {"fix": 0, "eval": 0}

        def fix(self, *a, **k):
            n["fix"] += 1
            return real_fix(self, *a, **k)

        def ev(self, *a, **k):
            n["eval"] += 1
            return real_eval(self, *a, **k)
        monkeypatch.setattr(E.MaskAlgebra, "fixpoint", fix)
        monkeypatch.setattr(E.Evaluator, "_eval", ev)
        r = _reference_with(t, SEED, on, monkeypatch)
        counts[on] = (dict(n), r.states)
    assert counts[True][1] == counts[False][1]
    assert counts[True][0]["fix"] < counts[False][0]["fix"] / 2, counts
    assert counts[True][0]["eval"] < counts[False][0]["eval"], counts


@pytest.mark.parametrize("d", ["classic", "s000", "mmra", "async", "barrier"])
def test_filters_build_the_same_encoding(d, monkeypatch):
    """`[S] ; r` and `r ; [S]` as filters (cat/eval.py Evaluator._filter, the Z3 algebra's
    restrict_rows / restrict_cols) instead of composing with S's identity relation: the
    same constraints, term for term and in the same order, on every test of the directory
    that elaborates as one straight-line execution below the demanded pairs' size (from
    Z3Algebra.DEMAND_FROM events the demands differ: test_filters_change_no_answer)."""
    from amdmm_smt.cat import eval as E
    from amdmm_smt.elaborate.events import elaborate
    from amdmm_smt.encode import cat_z3, encode
    taken = {"n": 0}
    real = cat_z3.Z3Algebra.restrict_rows

    def counted(self, s, b):
        taken["n"] += 1
        return real(self, s, b)
    monkeypatch.setattr(cat_z3.Z3Algebra, "restrict_rows", counted)
    seen = 0
    for f in sorted(glob.glob(os.path.join(ROOT, "litmus", d, "*.yaml"))):
        t = parse_file(f)
        if t.model not in (None, "seed"):
            continue
        try:
            el = elaborate(t, get_model(SEED))
        except LitmusError:
            continue
        if len(el.events) >= cat_z3.Z3Algebra.DEMAND_FROM:
            continue
        got = []
        for on in (True, False):
            monkeypatch.setattr(E, "FILTERS", on)
            got.append([c.sexpr() for c in encode(el).ctx.constraints])
        assert got[0] == got[1], f
        seen += 1
    assert seen >= 5 and taken["n"] > 10 * seen


@pytest.mark.parametrize("rel", sampled([r for r in CORPUS if r not in SLOW_REFERENCE], 6, 5))
def test_filters_change_no_answer(rel, monkeypatch):
    """The filters on the demanded-pairs path (Evaluator._filter, demanded: the relation asked
    for within the rows or columns the set admits), forced on for every test, and the
    filters off: the answers are equal."""
    from amdmm_smt.cat import eval as E
    from amdmm_smt.encode import cat_z3
    t = parse_file(os.path.join(ROOT, "litmus", rel))
    monkeypatch.setattr(cat_z3.Z3Algebra, "DEMAND_FROM", 0)
    monkeypatch.setattr(E, "FILTERS", True)
    on = run_test(t, get_model(SEED))
    monkeypatch.setattr(E, "FILTERS", False)
    _same(on, run_test(t, get_model(SEED)), rel)


@pytest.mark.parametrize("option", [None, "init_in_every_scope-false", "async_scope-workgroup",
                                    "scope_inclusion-opencl", "lds_scope-data",
                                    "lds_scope-avvis"])
def test_contains_and_inclusive_by_rows_equal_them_pair_by_pair(option):
    """The base relations `contains[L]` and `incl` are built from rows (Elab.contains_rows,
    inclusive_rows) instead of a call of Elab.contains / inclusive per pair: on every corpus
    test, at every level and address space, under each option that changes either, the
    rows hold exactly the pairs the pairwise definitions say, and the base relations the
    model files see are the same with rows and pair by pair (cat/base.py Base.BY_ROWS), as
    are the level names' signatures (Base.signature) and their values' keys."""
    from amdmm_smt.cat.base import Base
    from amdmm_smt.cat.names import LEVELS
    from amdmm_smt.elaborate.events import elaborate
    model = get_model(os.path.join(ROOT, "models", "options", f"{option}.cat") if option
                      else None)
    seen = 0
    for f in sorted(glob.glob(os.path.join(ROOT, "litmus", "*", "*.yaml"))):
        t = parse_file(f)
        try:
            el = elaborate(t, model)
        except LitmusError:
            continue
        ev = el.events
        for lv in LEVELS:
            rows = el.contains_rows(lv)
            for x in ev:
                assert rows[x.id] == {y.id for y in ev if el.contains(x, lv, y)}, (f, lv, x)
        for sp in el.spaces + [None]:
            rows = el.inclusive_rows(sp)
            for x in ev:
                assert rows[x.id] == {y.id for y in ev if el.inclusive(x, y, sp)}, (f, sp, x)
        by_rows, pairwise = Base(el, None, None), Base(el, None, None)
        pairwise.BY_ROWS = False
        for name, lvs in (("contains", LEVELS), ("AvsGe", LEVELS), ("ScGe", LEVELS),
                          ("AvScGe", LEVELS), ("incl", [None])):
            for lv in lvs:
                for sp in el.spaces:
                    a, b = by_rows.value(name, lv, sp), pairwise.value(name, lv, sp)
                    assert list(a.items()) == list(b.items()), (f, name, lv, sp)
                    if name != "contains":   # the level names' signatures, from the levels
                        assert by_rows.signature(name, lv, sp) == frozenset(b), (f, name, lv)
        seen += 1
    assert seen > 200


# spaces that cannot differ (docs/semantics.md §18): a value that depends on the address space
# at hand is evaluated once per class of spaces at which the base names it reads are equal
def _two_space_tests() -> list:
    out = []
    for f in sorted(glob.glob(os.path.join(ROOT, "litmus", "mmra", "*.yaml"))):
        t = parse_file(f)
        if t.model in (None, "seed") and len({m.space for m in t.memory.values()}) > 1:
            out.append(os.path.relpath(f, os.path.join(ROOT, "litmus")))
    return out


TWO_SPACES = _two_space_tests()
SPACE_MODELS = [SEED, os.path.join(ROOT, "models", "options", "lds_scope-data.cat"),
                os.path.join(ROOT, "models", "options", "lds_scope-avvis.cat")]


@pytest.mark.parametrize("model", SPACE_MODELS, ids=os.path.basename)
@pytest.mark.parametrize("rel", TWO_SPACES)
def test_space_classes_change_no_answer(rel, model, monkeypatch):
    """Every test of litmus/mmra over two address spaces, under the seed and the two LDS
    readings that make the spaces' scopes differ: the answers of both engines with the
    space classes on equal those with them off."""
    from amdmm_smt.cat import eval as E
    t = parse_file(os.path.join(ROOT, "litmus", rel))
    got = {}
    for on in (True, False):
        monkeypatch.setattr(E, "SPACE_CLASSES", on)
        got[on] = (run_test(t, get_model(model)), run_reference(t, get_model(model)))
    _same(got[True][0], got[False][0], rel)
    _same(got[True][1], got[False][1], rel)
    assert got[True][0].states == got[True][1].states, rel


def _space_reps(rel: str, model: str, names, monkeypatch) -> dict:
    """{definition: {space: the space its value there is had at}} for one SMT encoding."""
    from amdmm_smt.cat import eval as E
    from amdmm_smt.elaborate.events import elaborate
    from amdmm_smt.encode import encode
    seen = {}
    real = E.Evaluator._space

    def spy(self, ns, sp):
        r = real(self, ns, sp)
        seen[(ns, sp)] = r
        return r
    monkeypatch.setattr(E.Evaluator, "_space", spy)
    el = elaborate(parse_file(os.path.join(ROOT, "litmus", rel)), get_model(model))
    encode(el)
    sn = E._space_names(load(model))
    return {n: {sp: seen[(sn[n], sp)] for sp in el.spaces if (sn[n], sp) in seen}
            for n in names}


def test_space_classes_of_tests(monkeypatch):
    """Hand derivations from the tests' texts and docs/semantics.md R-lds-scope:
    * sync-as-both-fences: the fences synchronize both spaces (two synchronize-as tags),
      the atomics are not -one-as, every scope is workgroup: Sync, incl and ScGe are one at
      local and global, so hb (which reads those) is one value; SW reads Here, the accesses
      to the space at hand, which differ: one value per space.
    * sync-as-local-fences: the fences synchronize local only, so Sync differs and hb is
      evaluated at each space.
    * lds-agent-fences-chain-through-other-wg: the agent fences access no memory, so under
      lds_scope: instruction (the seed) they keep agent scope for LDS data: hb is one; under
      lds_scope: data their scope for LDS data is workgroup (ScGe differs): one per space."""
    both = _space_reps("mmra/sync-as-both-fences.yaml", SEED, ("hb", "SW"), monkeypatch)
    assert both["hb"] == {"global": "global", "local": "global"}
    assert both["SW"] == {"global": "global", "local": "local"}
    local = _space_reps("mmra/sync-as-local-fences.yaml", SEED, ("hb",), monkeypatch)
    assert local["hb"] == {"global": "global", "local": "local"}
    chain = "mmra/lds-agent-fences-chain-through-other-wg.yaml"
    assert _space_reps(chain, SEED, ("hb",), monkeypatch)["hb"] == {"global": "global",
                                                                   "local": "global"}
    assert _space_reps(chain, SPACE_MODELS[1], ("hb",), monkeypatch)["hb"] == {
        "global": "global", "local": "local"}


def test_an_axiom_is_asserted_once_per_class_of_spaces(monkeypatch):
    """sync-as-both-fences: hb_acyclic (irreflexive hb) reads no base name that differs
    between the spaces: asserted at one space; cofinal reads Here: at both."""
    from amdmm_smt.cat import eval as E
    from amdmm_smt.elaborate.events import elaborate
    from amdmm_smt.encode import encode
    got = {}
    real = E.Evaluator.spaces_of

    def spy(self, e, spaces):
        r = real(self, e, spaces)
        got[id(e)] = r
        return r
    monkeypatch.setattr(E.Evaluator, "spaces_of", spy)
    el = elaborate(parse_file(os.path.join(ROOT, "litmus", "mmra", "sync-as-both-fences.yaml")),
                   get_model(SEED))
    encode(el)
    axioms = {ax.name: ax for ax in load(SEED).axioms}
    assert got[id(axioms["hb_acyclic"].expr)] == ["global"]
    assert got[id(axioms["cofinal"].expr)] == ["global", "local"]


def test_a_node_that_reads_no_space_is_built_once(monkeypatch):
    """sync-as-local-fences: the fences synchronize local only, so Sync differs between the
    spaces and hb, sw, the chains and maysee are evaluated at each. A node inside them that
    reads no space-dependent name (hb's cross(T, T), maysee's [Hap] ; loc ; [R], ...) is
    memoised under no space: evaluated once per binding of its level variables (outside a
    let rec's rounds, which evaluate their bodies once per round). Keyed by the space, as
    before, several were evaluated twice."""
    from amdmm_smt.cat import eval as E
    from amdmm_smt.elaborate.events import elaborate
    from amdmm_smt.encode import encode
    info = E._analyse(load(SEED))
    count: dict = {}
    spaces = set()
    real = E.Evaluator._eval

    def spy(self, e, env, sp):
        inf = info.get(id(e))
        if inf is not None and sp is not None and self.round is None:
            spaces.add(sp)
            if not inf[3]:
                k = (id(e), tuple(sorted(env.items())))
                count[k] = count.get(k, 0) + 1
        return real(self, e, env, sp)
    monkeypatch.setattr(E.Evaluator, "_eval", spy)
    el = elaborate(parse_file(os.path.join(ROOT, "litmus", "mmra", "sync-as-local-fences.yaml")),
                   get_model(SEED))
    encode(el)
    assert spaces == {"global", "local"} and len(count) > 20
    assert max(count.values()) == 1, sorted(count.values())[-5:]


def test_space_names_agree_with_the_checkers_space_flag():
    """A definition reads a space-dependent base name at the space at hand
    (cat/eval.py _space_names, what the space classes compare) exactly when the checker
    marks it as depending on the space (`space`, which keys its memo): on every model file
    that loads on its own."""
    from amdmm_smt.cat.eval import _space_names
    seen = 0
    for f in sorted(glob.glob(os.path.join(ROOT, "models", "*.cat"))
                    + glob.glob(os.path.join(ROOT, "models", "options", "*.cat"))):
        try:
            m = load(f)
        except LitmusError:
            continue        # async.cat, barrier.cat: parts the seed includes
        names = _space_names(m)
        for n, d in m.defs.items():
            assert d.space == bool(names[n]), (f, n)
        seen += 1
    assert seen >= 25
