"""Asynchronous operations (docs/semantics.md §11): the version-independent tests of
litmus/async/ hold under both async model versions, the version-specific ones hold only under
their own version, and malformed async forms are one-line errors naming file and line."""

import glob
import os

import pytest

from amdmm_smt.errors import LitmusError
from amdmm_smt.model import get_model
from amdmm_smt.frontend.litmus import parse_file, parse_text
from amdmm_smt.report.table import verdict_text
from amdmm_smt.solve import run_test
from amdmm_smt.elaborate.events import elaborate

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "litmus",
                    "async")
FILES = sorted(glob.glob(os.path.join(ROOT, "*.yaml")))
SHARED = [f for f in FILES if not f.endswith((".seed.yaml", ".upstream.yaml"))]
SPECIFIC = [f for f in FILES if f not in SHARED]


def test_async_corpus_present():
    assert len(SHARED) >= 15 and len(SPECIFIC) >= 6


@pytest.mark.parametrize("model", ["seed", "upstream-2026"])
@pytest.mark.parametrize("path", SHARED, ids=[os.path.basename(f) for f in SHARED])
def test_shared_tests_hold_under_both_versions(path, model):
    t = parse_file(path)
    r = run_test(t, get_model(model), timeout=120)
    assert r.status == "pass", verdict_text(r)


@pytest.mark.parametrize("path", SPECIFIC, ids=[os.path.basename(f) for f in SPECIFIC])
def test_version_specific_tests_fail_under_the_other_version(path):
    """Each `.seed` / `.upstream` test pins a difference: under the other version it fails."""
    other = "upstream-2026" if path.endswith(".seed.yaml") else "seed"
    t = parse_file(path)
    if os.path.basename(path) == "async-stage-generic-gfx1250.upstream.yaml":
        # the seed version ignores the mask and completes the copy too: same outcome
        assert run_test(t, get_model(other), timeout=120).status == "pass"
        return
    r = run_test(t, get_model(other), timeout=120)
    assert r.status == "fail", verdict_text(r)


BASE = """name: t
target: {target}
memory:
  g: {{space: global, init: 7}}
  l: {{space: local}}
threads:
  T0:
    code: |
      {code}
outcomes:
  - "@l == 7"
"""


def _load(code, target="gfx1250", model="seed"):
    t = parse_text(BASE.format(code=code, target=target), "bad.yaml")
    return elaborate(t, get_model(model))


@pytest.mark.parametrize("code,target,msg", [
    ("call void @llvm.amdgcn.asyncmark(i32 16)", "gfx1250", "bit 4 (reserved)"),
    ("call void @llvm.amdgcn.asyncmark(i32 11)", "gfx942", "not a stage of gfx942"),
    ("call void @llvm.amdgcn.asyncmark(i32 17)", "gfx942", "invalid stage mask 17"),
    ("call void @llvm.amdgcn.wait.asyncmark(i16 0, i32 15)", "gfx942", "invalid stage mask"),
    ("call void @llvm.amdgcn.asyncmark(i32 4)", "gfx942", "invalid stage mask 4"),
    ("call void @llvm.amdgcn.asyncmark(i32 6)", "gfx942", "invalid stage mask 6"),
    ("call void @llvm.amdgcn.asyncmark(i32 2048)", "gfx1250", "11-bit"),
    ("call void @llvm.amdgcn.wait.asyncmark(i16 -1)", "gfx1250", "non-negative i16"),
    ("call void @llvm.amdgcn.wait.asyncmark()", "gfx1250", "expected"),
    ("call void @llvm.amdgcn.asyncmark(i32 0, i32 0)", "gfx1250", "expected"),
    ("call void @llvm.amdgcn.load.async.to.lds.p1(ptr addrspace(1) @g, ptr addrspace(1) @g, "
     "i32 4, i32 0, i32 0)", "gfx1250", "one pointer must be to a global"),
    ("call void @llvm.amdgcn.load.async.to.lds.p1(ptr addrspace(1) @g, ptr addrspace(3) @l, "
     "i32 2, i32 0, i32 0)", "gfx1250", "only 4-byte"),
    ("call void @llvm.amdgcn.load.async.to.lds.p1(ptr addrspace(1) @g, ptr addrspace(3) @l, "
     "i32 4, i32 8, i32 0)", "gfx1250", "offset 8"),
    ("call void @llvm.amdgcn.load.async.to.lds.p7(ptr addrspace(1) @g, ptr addrspace(3) @l, "
     "i32 4, i32 0, i32 0)", "gfx1250", "buffer resource"),
    ("call void @llvm.amdgcn.global.load.async.to.lds.b64(ptr addrspace(1) @g, "
     "ptr addrspace(3) @l, i32 0, i32 0)", "gfx1250", "only 32-bit"),
    ("call void @llvm.amdgcn.global.load.async.to.lds.b32(ptr addrspace(1) @g, "
     "ptr addrspace(3) @l, i32 0, i32 0)", "gfx942", "GFX12.5 instruction"),
    ("call void @llvm.amdgcn.load.async.to.lds.p1(ptr addrspace(1) @g)", "gfx1250",
     "takes a global and an LDS pointer"),
    ("call void @llvm.amdgcn.load.async.to.lds.p1(ptr addrspace(1) @g, ptr addrspace(1) @l, "
     "i32 4, i32 0, i32 0)", "gfx1250", "is in the local address space"),
    ("%r = call i32 @llvm.amdgcn.load.async.to.lds.p1(ptr addrspace(1) @g, ptr addrspace(3) "
     "@l, i32 4, i32 0, i32 0)", "gfx1250", "returns void"),
])
@pytest.mark.parametrize("model", ["seed", "upstream-2026"])
def test_async_errors_name_file_and_line(code, target, msg, model):
    with pytest.raises(LitmusError) as e:
        _load(code, target, model)
    assert str(e.value).startswith("bad.yaml:9: "), str(e.value)
    assert msg in str(e.value), str(e.value)


@pytest.mark.parametrize("code", [
    "call void @llvm.amdgcn.load.async.to.lds.p1(ptr addrspace(1) @g, ptr addrspace(3) @l, "
    "i32 4, i32 0, i32 0)",
    "call void @llvm.amdgcn.load.async.to.lds.p0(ptr addrspace(0) @g, ptr addrspace(0) @l, "
    "i32 4, i32 0, i32 0)",
    "call void @llvm.amdgcn.global.load.async.lds(ptr addrspace(1) @g, ptr addrspace(3) @l, "
    "i32 4, i32 0, i32 0)",
    "call void @llvm.amdgcn.raw.buffer.load.async.lds(ptr addrspace(1) @g, ptr addrspace(3) @l)",
    "call void @llvm.amdgcn.raw.ptr.buffer.load.async.lds(ptr addrspace(1) @g, "
    "ptr addrspace(3) @l)",
    "call void @llvm.amdgcn.struct.buffer.load.async.lds(ptr addrspace(1) @g, "
    "ptr addrspace(3) @l)",
    "call void @llvm.amdgcn.struct.ptr.buffer.load.async.lds(ptr addrspace(1) @g, "
    "ptr addrspace(3) @l)",
    # S004 prints the GFX12 forms (ptr %dst, ptr %src); AMDGPUUsage (src, dst): both accepted
    "call void @llvm.amdgcn.global.load.async.to.lds.b32(ptr addrspace(3) @l, "
    "ptr addrspace(1) @g)",
    "call void @llvm.amdgcn.global.load.async.to.lds(ptr addrspace(1) @g, ptr addrspace(3) @l, "
    "i32 0, i32 0)",
    "call void @llvm.amdgcn.cluster.load.async.to.lds.b32(ptr addrspace(1) @g, "
    "ptr addrspace(3) @l, i32 0, i32 0, i32 0)",
    "call void @llvm.amdgcn.tensor.load.to.lds(ptr addrspace(1) @g, ptr addrspace(3) @l)",
])
@pytest.mark.parametrize("model", ["seed", "upstream-2026"])
def test_every_async_spelling_copies(code, model):
    """Every load-to-LDS spelling copies g (7) into l; after a full wait the final value of l is
    7 (the BASE test's outcome). Under upstream-2026 the copy is still the last write of l."""
    text = BASE.format(code=code + "\n      call void @llvm.amdgcn.asyncmark()\n"
                       "      call void @llvm.amdgcn.wait.asyncmark(i16 0)", target="gfx1250")
    t = parse_text(text, "ok.yaml")
    r = run_test(t, get_model(model), timeout=60)
    assert r.status == "pass", verdict_text(r)


def _complete_every_copy(g):
    """After every copy: asyncmark(i32 0); wait.asyncmark(i16 0, i32 0) — the copy is completed
    right after its instruction (docs §11.4), which only adds happens-before edges (§11.5)."""
    from dataclasses import replace
    from .gen import Op
    th = []
    for t in g.threads:
        ops = []
        for o in t.ops:
            ops.append(o)
            if o.kind == "copy":
                ops += [Op("mark", mask=0, spelling=1), Op("wait", value=0, mask=0, spelling=1)]
        th.append(replace(t, ops=tuple(ops)))
    return replace(g, threads=tuple(th))


@pytest.mark.parametrize("model", ["seed", "upstream-2026"])
def test_waiting_for_every_copy_never_adds_an_outcome(model):
    """Metamorphic (until the reference engine has the async family): completing every copy at
    once can only resolve races; every outcome of the waited program is an outcome of the
    original one, undef in the original matching any value. (Checked to fail the other way
    round: waiting does remove outcomes.)"""
    from .gen import async_examples, covered, render
    m = get_model(model)
    for g in async_examples(25, seed=7):
        weak = run_test(parse_text(render(g), "a.yaml"), m).states
        strong = run_test(parse_text(render(_complete_every_copy(g)), "b.yaml"), m).states
        assert covered(set(weak), set(strong)), render(g)


@pytest.mark.parametrize("engine", ["z3", "reference"])
def test_pipeline_loop_agrees_with_hand_unrolled(engine):
    """issue 18 item 2: the S004 software pipeline as a loop (litmus/async/async-pipeline-loop)
    gives the hand-unrolled async-pipeline-3stage's final LDS slots (docs 15.9)."""
    from amdmm_smt.frontend.litmus import parse_file as _pf
    from amdmm_smt.model import get_model as _gm
    from amdmm_smt.reference import run_reference as _rr
    from amdmm_smt.solve import run_test as _rt
    run = _rt if engine == "z3" else _rr
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    m = _gm(None)
    loop = run(_pf(os.path.join(root, "litmus/async/async-pipeline-loop.yaml")), m)
    flat = run(_pf(os.path.join(root, "litmus/async/async-pipeline-3stage.yaml")), m)

    def slots(r):
        return {tuple((k, v) for k, v in st if k in ("@l0", "@l1", "@l2")) for st in r.states}
    assert loop.status == flat.status == "pass"
    assert slots(loop) == slots(flat)


# ---- synchronous LDS DMA per model version (issue 31 item 3; docs 16.1) -----------------------

FORMS = os.path.join(os.path.dirname(ROOT), "forms")
SYNC_TWINS = sorted(glob.glob(os.path.join(FORMS, "sync-dma-*.seed.yaml"))
                    + glob.glob(os.path.join(FORMS, "sync-dma-*.upstream.yaml")))


@pytest.mark.parametrize("path", SYNC_TWINS, ids=[os.path.basename(f) for f in SYNC_TWINS])
def test_sync_dma_twins_hold_in_both_engines_and_fail_under_the_other_version(path):
    """docs 16.1: R-dma-sync (seed: a load and a store in program order) and
    R-dma-sync-upstream (upstream-2026: the async operation, outside program order, completed
    at once) each pinned by a twin that fails under the other version."""
    from amdmm_smt.reference import run_reference
    t = parse_file(path)
    own = get_model(t.model or "seed")
    for r in (run_test(t, own, timeout=120), run_reference(t, own)):
        assert r.status == "pass", verdict_text(r)
    other = "upstream-2026" if path.endswith(".seed.yaml") else "seed"
    assert run_test(t, get_model(other), timeout=120).status == "fail"


SYNC_CODES = [
    ["store i32 5, ptr addrspace(1) @g", "{dma}", "%r0 = load i32, ptr addrspace(3) @l"],
    ["{dma}", "%r0 = load i32, ptr addrspace(3) @l", "store i32 5, ptr addrspace(1) @g",
     "{dma}", "%r1 = load i32, ptr addrspace(3) @l"],
    ['{dma}, !mmra !{{!"foo", !"bar"}}',
     '%r0 = load i32, ptr addrspace(3) @l, !mmra !{{!"foo", !"baz"}}',
     "%r1 = load i32, ptr addrspace(3) @l"],
]
SYNC = "call void @llvm.amdgcn.load.to.lds.p1(ptr addrspace(1) @g, ptr addrspace(3) @l, i32 4, " \
       "i32 0, i32 0)"
ASYNC = SYNC.replace("load.to.lds", "load.async.to.lds")


@pytest.mark.parametrize("code", SYNC_CODES)
def test_sync_dma_is_the_async_copy_with_its_own_completion_under_upstream(code):
    """R-dma-sync-upstream: under upstream-2026 a synchronous copy gives what the asynchronous
    one followed by asyncmark + wait.asyncmark(0) with the call's tags gives (in programs with
    no asyncmark of their own, where that wait disturbs no sequence); under the seed model
    too (R-dma-sync's argument: a seed-004 copy completed at once)."""
    from amdmm_smt.reference import run_reference
    text = """name: t
memory:
  g: {{space: global, init: 7}}
  l: {{space: local, init: 0}}
threads:
  T0:
    code: |
{code}
"""
    def prog(dma, tail):
        lines = []
        for c in code:
            line = c.format(dma=dma)
            lines.append(line)
            if c.startswith("{dma}"):
                tags = line[len(dma):]
                lines += [t + tags for t in tail]
        return text.format(code="".join(f"      {ln}\n" for ln in lines))
    sync = parse_text(prog(SYNC, []), "s.yaml")
    asy = parse_text(prog(ASYNC, ["call void @llvm.amdgcn.asyncmark()",
                                  "call void @llvm.amdgcn.wait.asyncmark(i16 0)"]), "a.yaml")
    for name in ("upstream-2026", "seed"):
        # under seed-004 the async copy is program-ordered at its instruction, so the same
        # equality holds with the load + store lowering (docs 16.1, R-dma-sync)
        m = get_model(name)
        want = set(run_test(asy, m).states)
        assert set(run_test(sync, m).states) == want == set(run_reference(sync, m).states)
    want = set(run_test(asy, get_model("upstream-2026")).states)
    # the seed model keeps the copy in program order (R-dma-sync): the first program reads 5
    if code is SYNC_CODES[0]:
        assert set(run_test(sync, get_model("seed")).states) == {(("T0:%r0", 5),)}
        assert want == {(("T0:%r0", None),)}
