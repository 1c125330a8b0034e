"""Hand-derived checks of the reference engine's async family (amdmm_smt/reference/async_ops.py)
on its own: completion, program order, the happens-before edges and the outcomes they give.

Every expectation below is derived by hand from docs/semantics.md section 11 (S004, UP§2.4) and
section 6; none comes from running the Z3 engine."""

from dataclasses import replace

import pytest

from amdmm_smt.elaborate.events import elaborate
from amdmm_smt.model import Model, get_model
from amdmm_smt.frontend.litmus import parse_text
from amdmm_smt.reference import reference_outcomes
from amdmm_smt.reference.engine import _Engine

U = None   # undef
SEED, UPSTREAM = "seed", "upstream-2026"

COPY = ("call void @llvm.amdgcn.load.async.to.lds.p1(ptr addrspace(1) @{src}, "
        "ptr addrspace(3) @{dst}, i32 4, i32 0, i32 0)")
# gfx1250 stage 3 (GLOBAL_STORE_ASYNC_FROM_LDS): LDS -> global
STORE_COPY = ("call void @llvm.amdgcn.global.store.async.from.lds.b32(ptr addrspace(1) @{dst}, "
              "ptr addrspace(3) @{src}, i32 0, i32 0)")
MARK = "call void @llvm.amdgcn.asyncmark({k})"
WAIT = "call void @llvm.amdgcn.wait.asyncmark(i16 {n}{k})"


def copy(src, dst):
    return COPY.format(src=src, dst=dst)


def mark(k=None):
    return MARK.format(k="" if k is None else f"i32 {k}")


def wait(n, k=None):
    return WAIT.format(n=n, k="" if k is None else f", i32 {k}")


def litmus_text(memory: dict, threads: list, target=None) -> str:
    lines = ["name: t"] + ([f"target: {target}"] if target else []) + ["memory:"]
    for name, (space, init) in memory.items():
        lines.append(f"  {name}: {{space: {space}, init: {init}}}")
    lines.append("threads:")
    for i, code in enumerate(threads):
        lines += [f"  T{i}:", "    workgroup: 0", "    code: |"]
        lines += [f"      {c}" for c in code]
    return "\n".join(lines) + "\n"


def engine(text: str, model: str) -> _Engine:
    return _Engine(elaborate(parse_text(text, "t.yaml"), get_model(model)))


def run(text: str, model: str, **options) -> set:
    m = get_model(model)
    if options:
        m = Model(m.name, options=replace(m.options, **options))
    return {tuple(v for _, v in s)
            for s in reference_outcomes(elaborate(parse_text(text, "t.yaml"), m))}


def labels(e: _Engine, done: dict) -> dict:
    """done (instruction id -> wait id) as (instruction position -> wait position)."""
    return {e.ev[i].pos: e.ev[w].pos for i, w in done.items()}


G_L = {"g": ("global", 7), "l": ("local", 0)}
LOAD_L = "%r0 = load i32, ptr addrspace(3) @l"


# ---- completion (docs §11.4) ----------------------------------------------------------------

UNEVEN = [copy("g", "l")] * 3 + [mark()] + [copy("g", "l")] * 5 + [mark()] \
    + [copy("g", "l")] * 2 + [mark(), wait(2)]


@pytest.mark.parametrize("model", [SEED, UPSTREAM])
def test_uneven_blocks_wait_completes_the_first_block(model):
    """S004 "Uneven blocks": three marks executed, wait.asyncmark(2): at most 2 outstanding,
    so the first mark (positions 0-2 before it) is completed at the wait (position 13); the
    other blocks are outstanding. Same under both versions (one stage, mask 0)."""
    e = engine(litmus_text(G_L, [UNEVEN]), model)
    assert labels(e, e.done) == {0: 13, 1: 13, 2: 13}


PIPELINE = [copy("g", "l"), mark(), copy("g", "l"), mark(), copy("g", "l"), mark(),
            wait(2), copy("g", "l"), mark(), wait(2), wait(2), wait(1), wait(0)]


@pytest.mark.parametrize("model", [SEED, UPSTREAM])
def test_software_pipeline_one_block_per_wait(model):
    """S004 "Software pipeline" unrolled once: marks after copies 0, 2, 4; wait(2) at 6
    completes the first block (3 marks, 2 may stay outstanding); the loop copy 7 and its mark
    at 8 make 3 outstanding, wait(2) at 9 completes the block of copy 2; the flushes: wait(2)
    at 10 completes nothing more (2 outstanding), wait(1) at 11 completes the block of 4, and
    wait(0) at 12 the block of 7."""
    e = engine(litmus_text(G_L, [PIPELINE]), model)
    assert labels(e, e.done) == {0: 6, 2: 9, 4: 11, 7: 12}


@pytest.mark.parametrize("model", [SEED, UPSTREAM])
def test_inlined_call_waits_for_the_later_mark(model):
    """S004's inlining example, inlined: marks B (after copy 0), C (after copy 2) and A (from
    foo, no copy): wait(1) completes B and C (3 marks, at most 1 outstanding), so both copies
    are completed there ("waits for asyncmark C to complete, which is longer than
    necessary")."""
    code = [copy("g", "l"), mark(), copy("g", "l"), mark(), mark(), wait(1)]
    e = engine(litmus_text(G_L, [code]), model)
    assert labels(e, e.done) == {0: 5, 2: 5}


def test_no_mark_no_completion():
    """A copy with no asyncmark after it is never completed (S004: completion needs a mark M
    program-ordered after X); a wait before the copy completes nothing."""
    for model in (SEED, UPSTREAM):
        e = engine(litmus_text(G_L, [[mark(), wait(0), copy("g", "l"), wait(0)]]), model)
        assert e.done == {}


INTERLEAVED = [copy("g", "l"), mark(45), STORE_COPY.format(src="m", dst="h"), mark(39),
               wait(0, 45)]
GLM = {"g": ("global", 7), "h": ("global", 0), "l": ("local", 0), "m": ("local", 5)}


def test_interleaved_stages_versions_differ():
    """UP§2.4 "Interleaved stages" (gfx1250): the load copy is stage 1 (generic load on
    gfx1250), the store copy stage 3. mask 45 = only(GLOBAL_LOAD), 39 = only(GLOBAL_STORE).
    [upstream-stages] the wait (position 4) ignores stage 3, so only the load copy is
    completed; [seed-004] masks are ignored (R-async-seed-mask): one sequence of 2 marks,
    wait(0) completes both."""
    e = engine(litmus_text(GLM, [INTERLEAVED]), UPSTREAM)
    assert labels(e, e.done) == {0: 4}
    e = engine(litmus_text(GLM, [INTERLEAVED]), SEED)
    assert labels(e, e.done) == {0: 4, 2: 4}


def test_multi_stage_mark_completes_per_stage():
    """R-async-stage-multi: asyncmark(0) places a mark in every stage; wait(0, 39) empties only
    the GLOBAL_STORE sequence, so the load copy (stage 1) is not completed; wait(0, 45) then
    completes it."""
    code = [copy("g", "l"), STORE_COPY.format(src="m", dst="h"), mark(0), wait(0, 39),
            wait(0, 45)]
    e = engine(litmus_text(GLM, [code]), UPSTREAM)
    assert labels(e, e.done) == {1: 3, 0: 4}


def test_mark_omitting_a_stage_does_not_track_it():
    """UP§2.4: asyncmark(K) "Produces an asyncmark in every stage that the mask K does not
    omit": asyncmark(2) omits stage 1, so the load copy has no mark and wait(0) does not
    complete it; [seed-004] the mark is a mark (mask ignored) and completes it."""
    code = [copy("g", "l"), mark(2), wait(0)]
    assert engine(litmus_text(G_L, [code]), UPSTREAM).done == {}
    e = engine(litmus_text(G_L, [code]), SEED)
    assert labels(e, e.done) == {0: 2}


def test_generic_load_is_buffer_stage_before_gfx1250():
    """R-async-stage-generic: on gfx942 the generic load is stage 5 (BUFFER_GLOBAL_LOAD); a wait
    with mask 32 ignores stage 5 and completes nothing, wait(0, 0) completes it."""
    code = [copy("g", "l"), mark(), wait(0, 32), wait(0)]
    e = engine(litmus_text(G_L, [code], target="gfx942"), UPSTREAM)
    assert labels(e, e.done) == {0: 3}
    # on gfx1250 it is stage 1: mask 32 does not ignore it
    e = engine(litmus_text(G_L, [code]), UPSTREAM)
    assert labels(e, e.done) == {0: 2}


def test_upstream_removal_keeps_a_suffix():
    """UP§2.4 wait(N): "removing asyncmarks from the start of that sequence": after wait(1)
    removed the first of two marks, a third mark makes the sequence (M2, M3); wait(1) removes
    M2 only, completing the copy before M2 (position 2), not the one before M3 (position 5)."""
    code = [copy("g", "l"), mark(), copy("g", "l"), mark(), wait(1), copy("g", "l"), mark(),
            wait(1)]
    for model in (SEED, UPSTREAM):
        e = engine(litmus_text(G_L, [code]), model)
        assert labels(e, e.done) == {0: 4, 2: 7}


# ---- program order and happens-before edges (docs §11.5) ------------------------------------

def test_program_order_of_async_operations_per_version():
    """[seed-004] A.r / A.w are program-ordered at I's position: after the store before I,
    before the load after I, not ordered with I or each other. [upstream-stages] in no program
    order. I itself is an ordinary event in both. po in hb never involves A.r / A.w."""
    code = ["store i32 1, ptr addrspace(1) @g", copy("g", "l"), LOAD_L]
    for model, inpo in ((SEED, True), (UPSTREAM, False)):
        e = engine(litmus_text(G_L, [code]), model)
        st, i, ar, aw, ld = [x.id for x in e.ev if not x.is_init]
        assert [e.ev[k].kind for k in (i, ar, aw)] == ["dma", "dma_read", "dma_write"]
        for a in (ar, aw):
            assert bool(e.po[st] >> a & 1) == inpo and bool(e.po[a] >> ld & 1) == inpo
            assert not e.po[i] >> a & 1 and not e.po[a] >> i & 1
            assert not e.po_c[st] >> a & 1 and not e.po_c[a] >> ld & 1
        assert not e.po[ar] >> aw & 1 and not e.po[aw] >> ar & 1
        assert e.po[st] >> i & 1 and e.po[i] >> ld & 1


@pytest.mark.parametrize("model", [SEED, UPSTREAM])
def test_hb_edges_init_and_done(model):
    """E-init (I, A.r), (I, A.w) always; E-done (A.r, Y), (A.w, Y) to the completing wait Y;
    [seed-004] the program-order edges from a completed A to what follows its completing wait
    (R-async-po-after-done: here the second copy instruction), [upstream-stages] none; a copy
    never completed has no edge out."""
    code = [copy("g", "l"), mark(), wait(0), copy("g", "l")]
    e = engine(litmus_text(G_L, [code]), model)
    i1, r1, w1, mk, wt, i2, r2, w2 = [x.id for x in e.ev if not x.is_init]
    assert e.async_hb[i1] == (1 << r1) | (1 << w1) and e.async_hb[i2] == (1 << r2) | (1 << w2)
    after = (1 << i2) if model == SEED else 0
    assert e.async_hb[r1] == e.async_hb[w1] == (1 << wt) | after
    assert e.async_hb[r2] == e.async_hb[w2] == 0


@pytest.mark.parametrize("model", [SEED, UPSTREAM])
def test_hb_edges_every_later_wait_and_po_after_done(model):
    """R-async-done-every (default): A -> every later wait that does not ignore its stage,
    whatever the tags; R-async-po-after-done [seed-004]: A -> every later operation whose tags
    are compatible with A's, none before the completing wait."""
    tag = ', !mmra !{!"foo", !"baz"}'
    code = [copy("g", "l") + ', !mmra !{!"foo", !"qux"}', mark(), "%r0 = load i32, ptr "
            "addrspace(3) @l", wait(0), wait(0) + tag, "%r1 = load i32, ptr addrspace(3) @l"
            + tag, "%r2 = load i32, ptr addrspace(3) @l"]
    e = engine(litmus_text(G_L, [code]), model)
    i1, r1, w1, mk, ld0, wt1, wt2, ld1, ld2 = [x.id for x in e.ev if not x.is_init]
    want = (1 << wt1) | (1 << wt2)
    if model == SEED:
        want |= 1 << ld2          # ld1 is tagged foo:baz, incompatible with foo:qux
    assert e.async_hb[r1] == e.async_hb[w1] == want


# ---- outcomes --------------------------------------------------------------------------------

@pytest.mark.parametrize("model", [SEED, UPSTREAM])
def test_outcomes_wait_long_enough_or_not(model):
    """After wait(0) the load sees only the copy (7: A.w is lo-before it, the initial 0 is
    hidden); with no wait, the initial write and A.w may both be seen: undef. Under upstream
    the LDS write is store-available at workgroup (lds_av_workgroup), so visibility gives the
    same."""
    assert run(litmus_text(G_L, [[copy("g", "l"), mark(), wait(0), LOAD_L]]), model) == {(7,)}
    assert run(litmus_text(G_L, [[copy("g", "l"), mark(), LOAD_L]]), model) == {(U,)}
    assert run(litmus_text(G_L, [[copy("g", "l"), mark(), wait(1), LOAD_L]]), model) == {(U,)}


def test_outcome_store_before_copy_versions_differ():
    """The copy reads g after a store of 5 to g in the same thread. [seed-004] po_hb(store,
    A.r): lo, A.r reads 5 (the initial 7 is hidden) and A.w writes 5; [upstream-stages] A.r is
    in no program order and a plain global store is not available: lo(init, A.r) and the store
    is not hb-after it, so A.r may see both: undef, and A.w writes undef (R-async-av)."""
    code = ["store i32 5, ptr addrspace(1) @g", copy("g", "l"), mark(), wait(0), LOAD_L]
    assert run(litmus_text(G_L, [code]), SEED) == {(5,)}
    assert run(litmus_text(G_L, [code]), UPSTREAM) == {(U,)}


@pytest.mark.parametrize("model", [SEED, UPSTREAM])
def test_outcome_handoff_to_another_wave(model):
    """A second wave of the workgroup acquires f after the producer's wait and workgroup
    release: A hb wait hb release sw acquire hb load, so the load sees 7 when it reads f == 1
    (seed: clause 2 / po_hb availability via the release; upstream: store-available LDS write,
    visibility clause 1). Reading f == 0 leaves the load racing with A.w: undef."""
    prod = [copy("g", "l"), mark(), wait(0),
            'store atomic i32 1, ptr addrspace(1) @f syncscope("workgroup") release']
    cons = ['%r1 = load atomic i32, ptr addrspace(1) @f syncscope("workgroup") acquire',
            "%r2 = load i32, ptr addrspace(3) @l"]
    mem = {**G_L, "f": ("global", 0)}
    assert run(litmus_text(mem, [prod, cons]), model) == {(1, 7), (0, U)}


def test_choices_single_write_location_is_definite():
    """The enumeration drops undef for a read that can only see one write (docs §6 value rule
    branch (d)): the copy's read of g, whose only write is the initial one, and a load after
    the completing wait whose other write is the initial one."""
    e = engine(litmus_text(G_L, [[copy("g", "l"), mark(), wait(0), LOAD_L]]), SEED)
    ch = dict(zip(e.reads, e.choices()))
    init_g = e.init_of["g"]
    ar = next(x.id for x in e.ev if x.kind == "dma_read")
    aw = next(x.id for x in e.ev if x.kind == "dma_write")
    ld = next(x.id for x in e.ev if x.kind == "load")
    assert ch[ar] == [init_g] and ch[ld] == [aw]
    e = engine(litmus_text(G_L, [[copy("g", "l"), mark(), LOAD_L]]), SEED)
    ch = dict(zip(e.reads, e.choices()))
    aw = next(x.id for x in e.ev if x.kind == "dma_write")
    ld = next(x.id for x in e.ev if x.kind == "load")
    assert ch[ld] == [None, e.init_of["l"], aw]
