"""Random well-formed litmus tests (hypothesis strategies), as text in the contract's format.

A generated test is a `Gen` — threads of instruction descriptions — rendered to YAML by
`render`. Keeping the structure lets property tests transform a test (drop tags, strengthen an
ordering, widen a scope, make an access atomic) and compare outcome sets.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Optional

from hypothesis import strategies as st

SCOPES = ["singlethread", "wavefront", "workgroup", "agent", ""]
LOAD_ORDERS = ["monotonic", "acquire", "seq_cst"]
STORE_ORDERS = ["monotonic", "release", "seq_cst"]
RMW_ORDERS = ["monotonic", "acquire", "release", "acq_rel", "seq_cst"]
FENCE_ORDERS = ["acquire", "release", "acq_rel", "seq_cst"]
TAGS = [("amdgcn-av", "none"), ("foo", "bar"), ("foo", "baz")]
FENCE_TAGS = [("amdgpu-synchronize-as", "local"), ("amdgpu-synchronize-as", "global")]
ORDER_STRENGTH = {"unordered": 0, "monotonic": 1, "acquire": 2, "release": 2, "acq_rel": 3,
                  "seq_cst": 4}


@dataclass(frozen=True)
class Op:
    kind: str                      # load store rmw cas fence avload avstore
    loc: str = "x"
    value: int = 0
    atomic: bool = False
    order: Optional[str] = None
    fail: Optional[str] = None
    scope: str = "agent"
    tags: tuple = ()
    src: Optional[str] = None      # copy: the source location (loc is the destination)
    mask: int = 0                  # mark / wait: the stage mask (docs/semantics.md §11)
    spelling: int = 0              # copy: which intrinsic spelling renders it


@dataclass(frozen=True)
class Thr:
    workgroup: int
    wavefront: Optional[int]
    agent: int
    ops: tuple


@dataclass(frozen=True)
class Gen:
    threads: tuple
    lds: bool = False              # location l is LDS (all threads in one workgroup)
    locs: tuple = ("x", "y")


LDS_LOCS = ("l", "m")


def _space(g: Gen, loc: str) -> int:
    return 3 if loc in LDS_LOCS else 1


def render(g: Gen, name: str = "gen") -> str:
    lines = [f"name: {name}", "description: generated", "memory:"]
    for loc in g.locs:
        lines.append(f"  {loc}: {{space: {'local' if loc in LDS_LOCS else 'global'}}}")
    lines.append("threads:")
    regs = 0
    for i, t in enumerate(g.threads):
        lines.append(f"  T{i}:")
        lines.append(f"    agent: {t.agent}")
        lines.append(f"    workgroup: {t.workgroup}")
        if t.wavefront is not None:
            lines.append(f"    wavefront: {t.wavefront}")
        lines.append("    code: |")
        for op in t.ops:
            a = _space(g, op.loc)
            ptr = f"ptr addrspace({a}) @{op.loc}"
            sc = f' syncscope("{op.scope}")' if op.scope else ""
            md = ""
            if len(op.tags) == 1:      # one tag: inline; a set: references to named nodes
                md = f', !mmra !{{!"{op.tags[0][0]}", !"{op.tags[0][1]}"}}'
            elif op.tags:
                md = ", !mmra !{" + ", ".join(f"!{_tag_id(tg)}" for tg in op.tags) + "}"
            if op.kind == "load":
                regs += 1
                at = f"load atomic i32, {ptr}{sc} {op.order}" if op.atomic else f"load i32, {ptr}"
                lines.append(f"      %r{regs} = {at}{md}")
            elif op.kind == "store":
                at = (f"store atomic i32 {op.value}, {ptr}{sc} {op.order}" if op.atomic
                      else f"store i32 {op.value}, {ptr}")
                lines.append(f"      {at}{md}")
            elif op.kind == "rmw":
                regs += 1
                lines.append(f"      %r{regs} = atomicrmw add {ptr}, i32 {op.value}{sc} "
                             f"{op.order}{md}")
            elif op.kind == "cas":
                regs += 1
                lines.append(f"      %r{regs} = cmpxchg {ptr}, i32 0, i32 {op.value}{sc} "
                             f"{op.order} {op.fail}{md}")
            elif op.kind == "fence":
                lines.append(f"      fence{sc} {op.order}{md}")
            elif op.kind == "avstore":
                lines.append(f"      call void @llvm.amdgcn.av.global.store.b128({ptr}, i32 "
                             f"{op.value}, metadata !\"{op.scope}\"){md}")
            elif op.kind == "copy":
                lines.append(f"      {_copy(op)}{md}")
            elif op.kind == "mark":
                lines.append(f"      call void @llvm.amdgcn.asyncmark("
                             f"{'i32 %d' % op.mask if op.mask or op.spelling else ''}){md}")
            elif op.kind == "wait":
                mk = f", i32 {op.mask}" if op.mask or op.spelling else ""
                lines.append(f"      call void @llvm.amdgcn.wait.asyncmark(i16 {op.value}{mk})"
                             f"{md}")
            elif op.kind == "avload":
                regs += 1
                lines.append(f"      %r{regs} = call i32 @llvm.amdgcn.av.global.load.b128("
                             f"{ptr}, metadata !\"{op.scope}\"){md}")
    used = sorted({tg for t in g.threads for op in t.ops for tg in op.tags if len(op.tags) > 1})
    if used:
        lines.insert(2, "metadata: |")
        for j, tg in enumerate(used):
            lines.insert(3 + j, f'  !{_tag_id(tg)} = !{{!"{tg[0]}", !"{tg[1]}"}}')
    return "\n".join(lines) + "\n"


_ALL_TAGS = TAGS + FENCE_TAGS

# ---- asynchronous copies (docs/semantics.md §11), target gfx1250 (the default) -------------

TO_LDS = [  # (name, operands in S004 order dst-first?, immediates)
    ("llvm.amdgcn.load.async.to.lds.p1", False, ", i32 4, i32 0, i32 0"),
    ("llvm.amdgcn.global.load.async.lds", False, ", i32 4, i32 0, i32 0"),
    ("llvm.amdgcn.raw.buffer.load.async.lds", False, ""),
    ("llvm.amdgcn.global.load.async.to.lds.b32", False, ", i32 0, i32 0"),
    ("llvm.amdgcn.global.load.async.to.lds.b32", True, ""),
    ("llvm.amdgcn.cluster.load.async.to.lds.b32", False, ", i32 0, i32 0, i32 0"),
    # synchronous LDS DMA (docs/semantics.md 16.1): a load and a store in program order
    ("llvm.amdgcn.load.to.lds.p1", False, ", i32 4, i32 0, i32 0"),
    ("llvm.amdgcn.global.load.lds", False, ", i32 4, i32 0, i32 0"),
]
FROM_LDS = ("llvm.amdgcn.global.store.async.from.lds.b32", ", i32 0, i32 0")
# gfx1250 masks: 0 (all stages), only(GLOBAL_LOAD) = 45, only(GLOBAL_STORE) = 39,
# only(BUFFER_GLOBAL_LOAD) = 15, and single omitted stages
MASKS = [0, 0, 0, 45, 39, 15, 2, 8, 32]


def _copy(op: Op) -> str:
    g_ptr = lambda n: f"ptr addrspace({3 if n in LDS_LOCS else 1}) @{n}"  # noqa: E731
    if op.src in LDS_LOCS:     # LDS -> global
        name, imm = FROM_LDS
        return f"call void @{name}({g_ptr(op.loc)}, {g_ptr(op.src)}{imm})"
    name, dst_first, imm = TO_LDS[op.spelling % len(TO_LDS)]
    a, b = (op.loc, op.src) if dst_first else (op.src, op.loc)
    return f"call void @{name}({g_ptr(a)}, {g_ptr(b)}{imm})"


def gen_async(pick) -> Gen:
    """A random async test: a producer with copies between x / y (global) and l / m (LDS),
    asyncmarks, waits, plain loads and stores of sources and destinations, and a workgroup
    release of flag f; a second wave of the workgroup that acquires f and reads LDS / global
    data; sometimes a third wave storing to a source or destination. `pick(options)` chooses
    (hypothesis' draw or a seeded random.choice)."""
    counter = [0]

    def val() -> int:
        counter[0] += 1
        return counter[0]
    prod = []
    for _ in range(pick([3, 4, 5, 6, 7])):
        k = pick(["copy", "copy", "copy", "mark", "mark", "wait", "wait", "load", "store"])
        if k == "copy":
            if pick([True, True, True, False]):
                prod.append(Op("copy", pick(["l", "m"]), src=pick(["x", "y"]),
                               spelling=pick(range(len(TO_LDS)))))
            else:
                prod.append(Op("copy", pick(["x", "y"]), src=pick(["l", "m"])))
        elif k == "mark":
            prod.append(Op("mark", mask=pick(MASKS), spelling=pick([0, 1])))
        elif k == "wait":
            prod.append(Op("wait", value=pick([0, 0, 1, 2]), mask=pick(MASKS),
                           spelling=pick([0, 1])))
        elif k == "load":
            prod.append(Op("load", pick(["x", "y", "l", "m"]), scope=""))
        else:
            prod.append(Op("store", pick(["x", "y", "l", "m"]), val(), scope=""))
    if pick([True, True, False]):
        prod.append(Op("store", "f", 1, True, "release", None, pick(["workgroup", "agent"])))
    cons = []
    if pick([True, True, False]):
        cons.append(Op("load", "f", 0, True, "acquire", None, pick(["workgroup", "agent"])))
    for _ in range(pick([1, 2])):
        cons.append(Op("load", pick(["l", "m", "x"]), scope=""))
    threads = [Thr(0, None, 0, tuple(prod)), Thr(0, None, 0, tuple(cons))]
    if pick([False, False, True]):
        threads.append(Thr(0, None, 0, (Op("store", pick(["x", "l"]), val(), scope=""),)))
    return Gen(tuple(threads), True, ("x", "y", "l", "m", "f"))


@st.composite
def async_litmus(draw):
    return gen_async(lambda xs: draw(st.sampled_from(list(xs))))


def async_examples(n: int, seed: int = 0) -> list:
    """n deterministic async tests (for the tests that must run without hypothesis)."""
    import random
    rng = random.Random(seed)
    return [gen_async(lambda xs: rng.choice(list(xs))) for _ in range(n)]


def _tag_id(tag) -> int:
    return _ALL_TAGS.index(tag)


@st.composite
def ops(draw, locs, tags: bool, avops: bool, counter):
    kinds = (["load"] * 4 + ["store"] * 3 + ["rmw", "cas", "fence", "fence"]
             + (["avstore", "avload"] if avops else []))
    kind = draw(st.sampled_from(kinds))
    loc = draw(st.sampled_from(locs))
    scope = draw(st.sampled_from(["agent", "agent", "agent", "", "workgroup", "workgroup",
                                  "wavefront", "singlethread"]))
    counter[0] += 1
    value = counter[0]
    tg: tuple = ()
    if tags and draw(st.booleans()):
        pool = TAGS + (FENCE_TAGS if kind == "fence" else [])
        tg = tuple(sorted(set(draw(st.lists(st.sampled_from(pool), min_size=1, max_size=2)))))
    if kind in ("avstore", "avload") and loc == "l":
        loc = "x"
    if kind == "load":
        atomic = draw(st.sampled_from([True, True, True, False]))
        return Op("load", loc, 0, atomic, draw(st.sampled_from(LOAD_ORDERS)) if atomic else None,
                  None, scope if atomic else "", tg)
    if kind == "store":
        atomic = draw(st.sampled_from([True, True, True, False]))
        return Op("store", loc, value, atomic,
                  draw(st.sampled_from(STORE_ORDERS)) if atomic else None, None,
                  scope if atomic else "", tg)
    if kind == "rmw":
        return Op("rmw", loc, value, True, draw(st.sampled_from(RMW_ORDERS)), None, scope, tg)
    if kind == "cas":
        return Op("cas", loc, value, True, draw(st.sampled_from(RMW_ORDERS)),
                  draw(st.sampled_from(["monotonic", "acquire"])), scope, tg)
    if kind == "fence":
        return Op("fence", "x", 0, False, draw(st.sampled_from(FENCE_ORDERS)), None, scope, tg)
    return Op(kind, loc, value, False, None, None, scope, tg)


@st.composite
def litmus(draw, max_threads: int = 4, max_ops: int = 4, tags: bool = False,
           avops: bool = True, lds: bool = False):
    n = draw(st.integers(2, max_threads))
    use_lds = lds and draw(st.booleans())
    locs = ("x", "y", "l") if use_lds else ("x", "y")
    counter = [0]
    threads = []
    for _ in range(n):
        k = draw(st.integers(1, max_ops))
        body = tuple(draw(ops(locs, tags, avops, counter)) for _ in range(k))
        wg = 0 if use_lds else draw(st.integers(0, 1))
        wave = draw(st.sampled_from([None, 0, 1]))
        agent = 0 if use_lds else draw(st.sampled_from([0, 0, 0, 0, 0, 1]))
        threads.append(Thr(wg, wave, agent, body))
    return Gen(tuple(threads), use_lds, locs)


# ---- transformations ------------------------------------------------------------------------

def strip_tags(g: Gen) -> Gen:
    return replace(g, threads=tuple(replace(t, ops=tuple(replace(o, tags=()) for o in t.ops))
                                    for t in g.threads))


def covered(weak: set, strong: set) -> bool:
    """Every state of `strong` appears in `weak`, where undef in `weak` matches any value."""
    for s in strong:
        if not any(all(wv is None or wv == sv for (_, wv), (_, sv) in zip(w, s)) for w in weak):
            return False
    return True


# ---- execution barriers (docs/semantics.md section 10) ----------------------------------

BAR_SCOPES = ["wavefront", "workgroup", "agent", "cluster"]


def _bar_mem_op(rng, regs: list, tid: int) -> str:
    loc = rng.choice(["x", "y"])
    if rng.random() < 0.5:
        v = rng.randint(1, 2)
        if rng.random() < 0.3:
            return (f"store atomic i32 {v}, ptr addrspace(1) @{loc} "
                    f"syncscope(\"{rng.choice(['workgroup', 'agent'])}\") monotonic, align 4")
        return f"store i32 {v}, ptr addrspace(1) @{loc}"
    r = f"r{len(regs)}"
    regs.append(r)
    if rng.random() < 0.3:
        return (f"%{r} = load atomic i32, ptr addrspace(1) @{loc} "
                f"syncscope(\"{rng.choice(['workgroup', 'agent'])}\") monotonic, align 4")
    return f"%{r} = load i32, ptr addrspace(1) @{loc}"


def _bar_fence(rng, order: str) -> str:
    tag = ""
    if rng.random() < 0.15:
        tag = f", !mmra !{rng.choice([1, 2])}"
    elif rng.random() < 0.1:
        tag = ", !mmra !0"
    sc = rng.choice(BAR_SCOPES)
    if rng.random() < 0.1:
        sc += "-one-as"
    return f"fence syncscope(\"{sc}\") {order}{tag}"


def barrier_test(rng, name: str = "gen-bar") -> str:
    """A random barrier test (workgroup, split, named or cluster barriers, with and without
    fences, sometimes undefined: a missing or misplaced wait, a wrong count), as YAML text."""
    kind = rng.choice(["wg", "split", "named", "cluster"])
    target = {"wg": rng.choice(["gfx942", "gfx1250"]), "split": "gfx1200",
              "named": "gfx1250", "cluster": "gfx1250"}[kind]
    nthreads = rng.randint(2, 3)
    phases = rng.randint(1, 2)
    places = []
    for i in range(nthreads):
        wg = (i % 2) if kind == "cluster" else 0
        wave = 0 if (kind == "wg" and i == 1 and rng.random() < 0.2) else i
        places.append((wg, wave))
    ub = rng.random() < 0.25
    lines = [f"name: {name}", "description: generated", f"target: {target}", "metadata: |",
             '  !0 = !{!"amdgcn-av", !"none"}',
             '  !1 = !{!"amdgpu-synchronize-as", !"global"}',
             '  !2 = !{!"amdgpu-synchronize-as", !"local"}', "memory:",
             "  x: {space: global, init: 0}", "  y: {space: global, init: 0}"]
    if kind == "named":
        lines.append("  nb: {space: barrier}")
    lines.append("threads:")
    waves = sorted({p[1] for p in places})
    arrivers = len(waves)
    for i in range(nthreads):
        regs: list = []
        code: list = []
        wg, wave = places[i]
        lead = wave == i          # first thread of its wave
        same_wave_as = [j for j in range(i) if places[j][1] == wave]
        if kind == "named":
            if i == 0:
                k = arrivers + (1 if ub and rng.random() < 0.5 else 0)
                code.append(f"call void @llvm.amdgcn.s.barrier.init(ptr addrspace(3) @nb, "
                            f"i32 {k})")
            code.append("call void @llvm.amdgcn.s.barrier()")
        for p in range(phases):
            for _ in range(rng.randint(0, 2)):
                code.append(_bar_mem_op(rng, regs, i))
            if rng.random() < 0.6:
                code.append(_bar_fence(rng, rng.choice(["release", "acq_rel", "seq_cst"])))
            code += _bar_ops(rng, kind, p, ub and lead and i == nthreads - 1, same_wave_as)
            if rng.random() < 0.6:
                code.append(_bar_fence(rng, rng.choice(["acquire", "acq_rel", "seq_cst"])))
        for _ in range(rng.randint(0, 2)):
            code.append(_bar_mem_op(rng, regs, i))
        lines += [f"  T{i}:", f"    workgroup: {wg}", f"    wavefront: {wave}",
                  "    code: |"] + [f"      {c}" for c in code]
    text = "\n".join(lines) + "\n"
    # threads of one wavefront must perform the same barrier instructions: copy the lead's
    return _align_waves(text, places)


# issue 17: waves with unequal numbers of signals and waits (the participation is then a
# choice the constraints decide: R-bar-participation) around barrier-ordered atomics
# (R-bar-hb-exec); "S" signal, "W" wait, "B" s.barrier
CHOICE_PATTERNS = [["S", "W"], ["S", "S", "W"], ["S", "W", "S", "W"], ["S"], ["S", "W", "S"],
                   ["B"], ["B", "B"], ["S", "S", "W", "W"], ["W", "S"]]


def _choice_access(rng, regs: list) -> str:
    loc = rng.choice(["x", "y"])
    sc = rng.choice(["workgroup", "agent"])
    if rng.random() < 0.5:
        v = rng.randint(1, 2)
        if rng.random() < 0.6:
            order = rng.choice(["release", "monotonic", "seq_cst"])
            return (f"store atomic i32 {v}, ptr addrspace(1) @{loc} syncscope(\"{sc}\") "
                    f"{order}, align 4")
        return f"store i32 {v}, ptr addrspace(1) @{loc}"
    r = f"r{len(regs)}"
    regs.append(r)
    if rng.random() < 0.6:
        order = rng.choice(["acquire", "monotonic", "seq_cst"])
        return (f"%{r} = load atomic i32, ptr addrspace(1) @{loc} syncscope(\"{sc}\") "
                f"{order}, align 4")
    return f"%{r} = load i32, ptr addrspace(1) @{loc}"


def barrier_choice_test(rng, name: str = "gen-bar-choice") -> str:
    """A random GFX12 test whose waves signal and wait on the workgroup barrier in unequal
    patterns (two signals before a wait, a signal and the end, a wait first), with
    barrier-ordered atomics and plain accesses between the operations, sometimes a third
    wave in another workgroup that only accesses memory (docs/semantics.md 10.7,
    R-bar-participation and R-bar-hb-exec). Some are undefined (a deadlock)."""
    nw = rng.randint(2, 3)
    other = rng.random() < 0.3
    lines = [f"name: {name}", "description: generated", "target: gfx1200", "metadata: |",
             '  !0 = !{!"amdgcn-av", !"none"}',
             '  !1 = !{!"amdgpu-synchronize-as", !"global"}',
             '  !2 = !{!"amdgpu-synchronize-as", !"local"}', "memory:",
             "  x: {space: global, init: 0}", "  y: {space: global, init: 0}", "threads:"]
    for i in range(nw + (1 if other else 0)):
        regs: list = []
        code: list = []
        if i < nw:
            pat = rng.choice(CHOICE_PATTERNS)
            for op in pat:
                for _ in range(rng.randint(0, 1)):
                    code.append(_choice_access(rng, regs))
                if op != "W" and rng.random() < 0.3:
                    code.append(_bar_fence(rng, "release"))
                code.append({"S": "call void @llvm.amdgcn.s.barrier.signal(i32 -1)",
                             "W": "call void @llvm.amdgcn.s.barrier.wait(i16 -1)",
                             "B": "call void @llvm.amdgcn.s.barrier()"}[op])
                if op != "S" and rng.random() < 0.3:
                    code.append(_bar_fence(rng, "acquire"))
        for _ in range(rng.randint(1, 2)):
            code.append(_choice_access(rng, regs))
        lines += [f"  T{i}:", f"    workgroup: {1 if i >= nw else 0}", f"    wavefront: {i}",
                  "    code: |"] + [f"      {c}" for c in code]
    return "\n".join(lines) + "\n"


def _bar_ops(rng, kind: str, phase: int, ub: bool, same_wave: list) -> list:
    if kind == "wg":
        return [] if ub and rng.random() < 0.5 else ["call void @llvm.amdgcn.s.barrier()"]
    if kind == "named":
        ops = []
        if phase == 0:
            ops.append("call void @llvm.amdgcn.s.barrier.join(ptr addrspace(3) @nb)")
        ops.append("call void @llvm.amdgcn.s.barrier.signal.var(ptr addrspace(3) @nb, i32 0)")
        if not (ub and rng.random() < 0.5):
            ops.append(f"call void @llvm.amdgcn.s.barrier.wait(i16 {rng.choice([0, 1])})")
        if rng.random() < 0.15:       # unjoin through NULL, then a leave that is a no-op
            ops += ["call void @llvm.amdgcn.s.barrier.join(ptr addrspace(3) null)",
                    "call void @llvm.amdgcn.s.barrier.leave()"]
        elif rng.random() < 0.15:
            ops.append("call void @llvm.amdgcn.s.barrier.leave()")
        return ops
    bid = -3 if kind == "cluster" else -1
    sig = f"call void @llvm.amdgcn.s.barrier.signal(i32 {bid})"
    if kind == "split" and rng.random() < 0.3:
        sig = f"%f{phase} = call i1 @llvm.amdgcn.s.barrier.signal.isfirst(i32 {bid})"
    wait = f"call void @llvm.amdgcn.s.barrier.wait(i16 {bid})"
    if ub:
        plain = f"call void @llvm.amdgcn.s.barrier.signal(i32 {bid})"
        return rng.choice([[sig], [wait, sig], [sig, plain, wait]])
    return [sig, wait]


def _align_waves(text: str, places: list) -> str:
    """Give every thread of a wavefront the barrier instructions of the wave's first thread
    (S002: barrier operations are per wavefront; divergence is an input error)."""
    import re
    blocks = re.split(r"(?m)^(?=  T\d+:\n)", text)
    head, ths = blocks[0], blocks[1:]
    first: dict = {}
    out = []
    for i, b in enumerate(ths):
        wave = places[i][1]
        bars = [ln for ln in b.splitlines() if "s.barrier" in ln]
        if wave in first and first[wave] != bars:
            lines = [ln for ln in b.splitlines() if "s.barrier" not in ln]
            lines += first[wave]
            b = "\n".join(lines) + "\n"
        first.setdefault(wave, bars)
        out.append(b)
    return head + "".join(out)

# ---- control flow (docs/semantics.md §15) ----------------------------------------------------

CF_PREDS = ["eq", "ne", "slt", "sgt", "ule", "uge"]


def _cf_access(rng, regs: list, tid: int, n: list) -> str:
    """One memory access; loads define a register, stored values may be registers."""
    loc = rng.choice(["x", "y", "f"])
    atomic = rng.choice([True, True, False])
    sc = rng.choice(["agent", "workgroup", ""])
    scs = f' syncscope("{sc}")' if sc else ""
    k = rng.choice(["load", "load", "store", "store", "rmw", "fence"])
    n[0] += 1
    r = f"%v{tid}_{n[0]}"
    if k == "load":
        regs.append(r)
        if atomic:
            return f"{r} = load atomic i32, ptr addrspace(1) @{loc}{scs} " \
                   f"{rng.choice(['monotonic', 'acquire'])}"
        return f"{r} = load i32, ptr addrspace(1) @{loc}"
    val = rng.choice(regs + [str(rng.randint(1, 2))] * 2) if regs else str(rng.randint(1, 2))
    if k == "store":
        if atomic:
            return f"store atomic i32 {val}, ptr addrspace(1) @{loc}{scs} " \
                   f"{rng.choice(['monotonic', 'release'])}"
        return f"store i32 {val}, ptr addrspace(1) @{loc}"
    if k == "rmw":
        regs.append(r)
        return f"{r} = atomicrmw {rng.choice(['add', 'xchg'])} ptr addrspace(1) @{loc}, i32 " \
               f"{val}{scs} {rng.choice(['monotonic', 'acq_rel'])}"
    return f"fence{scs} {rng.choice(['acquire', 'release', 'acq_rel'])}"


def _cf_thread(rng, tid) -> list:
    """One thread's code for cflow_test (registers suffixed with `tid`)."""
    regs: list = []
    n = [0]
    code = ["entry:"]
    for _ in range(rng.choice([0, 1])):
        code.append(_cf_access(rng, regs, tid, n))
    shape = rng.choice(["if", "if", "spin", "count", "ifspin", "hcount"])
    if shape in ("if", "ifspin"):
        n[0] += 1
        r, c, p = f"%a{tid}", f"%c{tid}", f"%p{tid}"
        at = rng.choice([True, True, False])
        loc = rng.choice(["x", "y", "f"])
        code.append(f"{r} = load atomic i32, ptr addrspace(1) @{loc} syncscope(\"agent\") "
                    f"{rng.choice(['monotonic', 'acquire'])}" if at else
                    f"{r} = load i32, ptr addrspace(1) @{loc}")
        code.append(f"{c} = icmp {rng.choice(CF_PREDS)} i32 {r}, {rng.randint(0, 1)}")
        code.append(f"br i1 {c}, label %then, label %join")
        code.append("then:")
        inner: list = list(regs) + [r]
        body = [_cf_access(rng, inner, tid, n) for _ in range(rng.choice([1, 2]))]
        code += body
        code.append("br label %join")
        code.append("join:")
        other = rng.choice([r, "7"])
        code.append(f"{p} = phi i32 [ {other}, %entry ], [ {inner[-1]}, %then ]")
        regs += [r, p]
    if shape in ("spin", "ifspin"):
        code.append("br label %spin")
        code.append("spin:")
        s = f"%s{tid}"
        code.append(f"{s} = load atomic i32, ptr addrspace(1) @{rng.choice(['f', 'x'])} "
                    f"syncscope(\"{rng.choice(['agent', 'workgroup'])}\") "
                    f"{rng.choice(['monotonic', 'acquire'])}")
        code.append(f"%w{tid} = icmp eq i32 {s}, 0")
        code.append(f"br i1 %w{tid}, label %spin, label %out")
        code.append("out:")
        regs.append(s)
    if shape == "count":
        code.append("br label %loop")
        code.append("loop:")
        code.append(f"%i{tid} = phi i32 [ 0, %entry ], [ %n{tid}, %loop ]")
        code.append(f"store atomic i32 %i{tid}, ptr addrspace(1) @{rng.choice(['x', 'y'])} "
                    f"syncscope(\"agent\") {rng.choice(['monotonic', 'release'])}")
        code.append(f"%n{tid} = add i32 %i{tid}, 1")
        code.append(f"%k{tid} = icmp slt i32 %n{tid}, {rng.choice([1, 2])}")
        code.append(f"br i1 %k{tid}, label %loop, label %done")
        code.append("done:")
        regs.append(f"%n{tid}")
    if shape == "hcount":
        # a loop whose exit test is a header block of its own (the un-rotated while shape):
        # the header runs once more than the body, so 1-2 iterations sit at or across the
        # bound's edge under unroll 1-2 (docs 15.2, R-cf-herd-iterations; issue 28 item 5)
        code.append("br label %head")
        code.append("head:")
        code.append(f"%h{tid} = phi i32 [ 0, %entry ], [ %m{tid}, %body ]")
        code.append(f"%k{tid} = icmp slt i32 %h{tid}, {rng.choice([1, 2])}")
        code.append(f"br i1 %k{tid}, label %body, label %done")
        code.append("body:")
        code.append(f"store atomic i32 %h{tid}, ptr addrspace(1) @{rng.choice(['x', 'y'])} "
                    f"syncscope(\"agent\") {rng.choice(['monotonic', 'release'])}")
        code.append(f"%m{tid} = add i32 %h{tid}, 1")
        code.append("br label %head")
        code.append("done:")
        regs.append(f"%h{tid}")
    if regs and rng.choice([True, False]):
        b = rng.choice(regs)
        code.append(f"%q{tid} = {rng.choice(['add', 'xor', 'shl', 'mul'])} i32 {b}, "
                    f"{rng.choice([1, 3])}")
        code.append(f"%e{tid} = icmp ult i32 %q{tid}, 2")
        code.append(f"%z{tid} = select i1 %e{tid}, i32 %q{tid}, i32 {b}")
    code.append(_cf_access(rng, regs, tid, n))
    return code


def cflow_test(rng, name: str = "gen-cf") -> str:
    """A random small test with control flow: 2 threads (sometimes 3) in one or two
    workgroups; each a few accesses, an if (then-block, phi merging a register or a constant)
    and/or a spin loop on a flag or a counted loop, icmp / arithmetic / select on registers,
    registers as stored values; unroll 1-2, bound fail or assume."""
    lines = [f"name: {name}", "description: generated", "memory:",
             "  x: {space: global, init: 0}", "  y: {space: global, init: 0}",
             "  f: {space: global, init: 0}", "threads:"]
    nthreads = rng.choice([2, 2, 3])
    for tid in range(nthreads):
        code = _cf_thread(rng, tid)
        lines.append(f"  T{tid}:")
        lines.append(f"    workgroup: {rng.choice([0, tid % 2])}")
        lines.append("    code: |")
        lines += [f"      {ln}" for ln in code]
    lines.append(f"unroll: {rng.choice([1, 2])}")
    lines.append(f"bound: {rng.choice(['fail', 'assume'])}")
    return "\n".join(lines) + "\n"


UNDEF_OPS = ["and", "or", "xor", "add", "sub", "mul", "shl", "lshr", "ashr"]
UNDEF_CONSTS = [0, -1, 1, 8, 12, 255, 256, 31, 32, 3]
ALL_PREDS = ["eq", "ne", "slt", "sgt", "sle", "sge", "ult", "ugt", "ule", "uge"]
RMW_OPS = ["xchg", "add", "sub", "and", "or", "xor", "max", "min", "umax", "umin"]
BYTE_CONSTS = [0, 1, 5, 255, 256, 257, 0xFF00, 0x1FF, 0xFFFF, -1, -256, 0x7FFFFFFF, -2147483648]


def cflow_undef_test(rng, name: str = "gen-undef") -> str:
    """A random small test exercising undef arithmetic and undef loop conditions (issue 17
    items 5 and 6, docs/semantics.md 15.4-15.5): a thread reads a location another thread
    writes (at workgroup scope from another workgroup, or non-atomically: often undef), runs
    a chain of binary operations with constants that keep or kill undef bits (and 0, or -1,
    mul 0, carries, shifts by 32: poison), an icmp, sometimes a select on an undef condition,
    and branches on it (an if, or a spin loop whose first test may be undef); values are
    stored back to memory; unroll 1-2, bound fail or assume."""
    lines = [f"name: {name}", "description: generated", "memory:",
             "  x: {space: global, init: 0}", "  f: {space: global, init: 0}", "threads:"]
    lines += ["  T0:", f"    workgroup: {rng.choice([0, 1])}", "    code: |"]
    scope = rng.choice(["workgroup", "agent"])
    t0 = [f"store atomic i32 {rng.choice([1, 5])}, ptr addrspace(1) @x syncscope(\"{scope}\") "
          f"{rng.choice(['monotonic', 'release'])}"]
    if rng.choice([True, False]):
        t0.append(f"store atomic i32 1, ptr addrspace(1) @f syncscope(\"{scope}\") release")
    lines += [f"      {ln}" for ln in t0]
    lines += ["  T1:", "    workgroup: 1", "    code: |"]
    code = ["entry:"]
    sc = rng.choice(["workgroup", "workgroup", "agent"])
    load = (f"load atomic i32, ptr addrspace(1) @x syncscope(\"{sc}\") monotonic"
            if rng.random() < 0.8 else "load i32, ptr addrspace(1) @x")
    code.append(f"%r = {load}")
    regs = ["%r"]
    if rng.random() < 0.4:
        # issue 31: correlations through arithmetic (a small undef range moved by a
        # constant, compared near its ends), and a register used twice (xor / sub / add of
        # itself: each use chooses anew, docs 15.4 R-cf-undef-sets)
        code.append(f"%v0 = and i32 %r, {rng.choice([1, 3, 255, 6])}")
        code.append(f"%v1 = {rng.choice(['add', 'sub', 'or', 'mul'])} i32 %v0, "
                    f"{rng.choice([1, 2, 3, 256])}")
        regs += ["%v0", "%v1"]
        if rng.random() < 0.5:
            a = rng.choice(regs)
            code.append(f"%v2 = {rng.choice(['xor', 'sub', 'add', 'and'])} i32 {a}, {a}")
            regs.append("%v2")
        consts = [0, 1, 2, 3, 4, 256, 257, -1]
        if rng.random() < 0.5:
            # issue 31 item 2: memory holds bytes (a partly undef value stored, read back)
            code.append(f"store i32 {rng.choice(regs[1:])}, ptr addrspace(1) @f")
            if rng.random() < 0.4:
                # issue 31 gap 1: an RMW / cmpxchg reads and writes the partly undef bytes
                if rng.random() < 0.6:
                    code.append(f"%v5 = atomicrmw {rng.choice(RMW_OPS)} ptr addrspace(1) @f, "
                                f"i32 {rng.choice(BYTE_CONSTS + regs[1:])} monotonic")
                else:
                    code.append(f"%v5 = cmpxchg ptr addrspace(1) @f, i32 "
                                f"{rng.choice(BYTE_CONSTS + regs[1:])}, i32 9 monotonic "
                                f"monotonic")
                regs.append("%v5")
            code.append(f"%v3 = load i32, ptr addrspace(1) @f")
            code.append(f"%v4 = {rng.choice(['lshr', 'and', 'add'])} i32 %v3, "
                        f"{rng.choice([8, 255, 1])}")
            regs += ["%v3", "%v4"]
    else:
        for k in range(rng.choice([1, 2, 3])):
            op = rng.choice(UNDEF_OPS)
            a = rng.choice(regs)
            b = rng.choice(UNDEF_CONSTS + ([rng.choice(regs)] if rng.random() < 0.2 else []))
            if rng.random() < 0.3 and op not in ("shl", "lshr", "ashr"):
                a, b = b, a
            code.append(f"%v{k} = {op} i32 {a}, {b}")
            regs.append(f"%v{k}")
        consts = UNDEF_CONSTS
    c = rng.choice(regs[1:])
    code.append(f"%c = icmp {rng.choice(ALL_PREDS)} i32 {c}, {rng.choice(consts)}")
    cond = "%c"
    if rng.random() < 0.4:
        arm = rng.choice([("7", "7"), ("1", "2"), (c, "0"), (c, c), (c, rng.choice(regs))])
        code.append(f"%s = select i1 %c, i32 {arm[0]}, i32 {arm[1]}")
        code.append(f"%d = icmp {rng.choice(ALL_PREDS)} i32 %s, {rng.choice([0, 1, 2, 7])}")
        cond = "%d"
    shape = rng.choice(["if", "if", "spin"])
    if shape == "if":
        code.append(f"br i1 {cond}, label %then, label %join")
        code.append("then:")
        code.append(f"store i32 {rng.choice(regs)}, ptr addrspace(1) @f")
        code.append("br label %join")
        code.append("join:")
        code.append(f"%p = phi i32 [ 1, %then ], [ 0, %entry ]")
    else:
        code.append("br label %spin")
        code.append("spin:")
        code.append(f"%g = load atomic i32, ptr addrspace(1) @f syncscope(\"{sc}\") acquire")
        code.append(f"%w = {rng.choice(['and', 'or', 'add', 'mul'])} i32 %g, "
                    f"{rng.choice([0, -1, 1, 256])}")
        code.append(f"%e = icmp {rng.choice(['eq', 'ne', 'ult', 'uge'])} i32 %w, "
                    f"{rng.choice([0, 1, -1])}")
        code.append("br i1 %e, label %spin, label %out")
        code.append("out:")
    code.append(f"store i32 {rng.choice(regs)}, ptr addrspace(1) @x")
    lines += [f"      {ln}" for ln in code]
    lines.append(f"unroll: {rng.choice([1, 2])}")
    lines.append(f"bound: {rng.choice(['fail', 'assume'])}")
    return "\n".join(lines) + "\n"




def cflow_undef_bytes_test(rng, name: str = "gen-bytes") -> str:
    """A random small test of memory holding bytes through the instructions that read and
    write memory at once (issue 31 gap 1, docs/semantics.md 15.4 R-mem-bytes): a thread
    reads @x (often undef: another workgroup's workgroup-scope store), makes a partly undef
    value (`and` with a byte mask, `or` of a defined byte, sometimes an `add` carrying into
    the next byte), stores it to @f, then runs one or two atomicrmw (every operation, with a
    constant or a partly undef register operand) or cmpxchg (expected and new values
    constants or partly undef registers) on @f, sometimes copies @f to LDS @l by an async or
    synchronous LDS DMA, reads the result back and branches on a byte of it; another thread
    sometimes writes @f (an RMW of its own, or a store) so that the values meet."""
    lines = [f"name: {name}", "description: generated", "memory:",
             "  x: {space: global, init: 0}", "  f: {space: global, init: 3}",
             "  l: {space: local, init: 0}", "threads:"]
    lines += ["  T0:", f"    workgroup: {rng.choice([0, 0, 1])}", "    code: |"]
    scope = rng.choice(["workgroup", "agent"])
    t0 = [f"store atomic i32 {rng.choice([1, 5, 0x1234])}, ptr addrspace(1) @x "
          f"syncscope(\"{scope}\") {rng.choice(['monotonic', 'release'])}"]
    if rng.random() < 0.3:
        t0.append(f"%q = atomicrmw {rng.choice(RMW_OPS)} ptr addrspace(1) @f, i32 "
                  f"{rng.choice(BYTE_CONSTS)} syncscope(\"agent\") monotonic")
    lines += [f"      {ln}" for ln in t0]
    lines += ["  T1:", "    workgroup: 1", "    code: |"]
    code = ["entry:"]
    sc = rng.choice(["workgroup", "workgroup", "agent"])
    load = (f"load atomic i32, ptr addrspace(1) @x syncscope(\"{sc}\") monotonic"
            if rng.random() < 0.85 else "load i32, ptr addrspace(1) @x")
    code.append(f"%r = {load}")
    code.append(f"%a = and i32 %r, {rng.choice([1, 3, 255, 0xFF00, 0x1FF, 6, 0xFF0000])}")
    regs = ["%a"]
    if rng.random() < 0.5:
        code.append(f"%b = or i32 %a, {rng.choice([256, 0x10000, 0, 0x1000000])}")
        regs.append("%b")
    if rng.random() < 0.3:
        code.append(f"%c = add i32 {rng.choice(regs)}, {rng.choice([1, 256, 2])}")
        regs.append("%c")
    if rng.random() < 0.25:
        # issue 31 gap 2: poison through memory (a shift by 32, or by an undef amount)
        code.append(f"%s = shl i32 {rng.choice(regs)}, {rng.choice([32, 31, '%a'])}")
        regs.append("%s")
    code.append(f"store i32 {rng.choice(regs)}, ptr addrspace(1) @f")
    for k in range(rng.choice([1, 1, 2])):
        if rng.random() < 0.6:
            opd = rng.choice(regs) if rng.random() < 0.3 else rng.choice(BYTE_CONSTS)
            code.append(f"%o{k} = atomicrmw {rng.choice(RMW_OPS)} ptr addrspace(1) @f, "
                        f"i32 {opd} syncscope(\"{rng.choice(['workgroup', 'agent'])}\") "
                        f"{rng.choice(['monotonic', 'acq_rel'])}")
        else:
            exp = rng.choice(regs) if rng.random() < 0.3 else rng.choice(BYTE_CONSTS)
            new = rng.choice(regs) if rng.random() < 0.3 else rng.choice([9, 0x100, -1])
            code.append(f"%o{k} = cmpxchg ptr addrspace(1) @f, i32 {exp}, i32 {new} "
                        f"syncscope(\"agent\") monotonic monotonic")
        regs.append(f"%o{k}")
    src = "f"
    dma = rng.random()
    if dma < 0.2:
        code += ["call void @llvm.amdgcn.load.async.to.lds.p1(ptr addrspace(1) @f, "
                 "ptr addrspace(3) @l, i32 4, i32 0, i32 0)",
                 "call void @llvm.amdgcn.asyncmark()",
                 "call void @llvm.amdgcn.wait.asyncmark(i16 0)"]
        src = "l"
    elif dma < 0.35:
        code.append("call void @llvm.amdgcn.load.to.lds.p1(ptr addrspace(1) @f, "
                    "ptr addrspace(3) @l, i32 4, i32 0, i32 0)")
        src = "l"
    sp = 3 if src == "l" else 1
    code.append(f"%v = load i32, ptr addrspace({sp}) @{src}")
    regs.append("%v")
    code.append(f"%h = {rng.choice(['lshr', 'and', 'lshr', 'add'])} i32 "
                f"{rng.choice(['%v', '%v', rng.choice(regs)])}, {rng.choice([8, 16, 0xFF00, 1])}")
    code.append(f"%t = icmp {rng.choice(ALL_PREDS)} i32 %h, {rng.choice([0, 1, 2, 256, 255])}")
    code += ["br i1 %t, label %then, label %join", "then:", "br label %join", "join:",
             "%p = phi i32 [ 1, %then ], [ 0, %entry ]"]
    lines += [f"      {ln}" for ln in code]
    lines.append("unroll: 1")
    return "\n".join(lines) + "\n"


# ---- barriers and async copies under control flow (issue 18 items 1-2, docs §15.9) ---------

def _cba_access(rng, tid: int, n: list, regs: list, lds: bool = True) -> str:
    """One small access to global @x / @f or (sometimes) LDS @l0."""
    n[0] += 1
    loc = rng.choice(["x", "x", "f", "l0"] if lds else ["x", "x", "f"])
    sp = 3 if loc == "l0" else 1
    sc = rng.choice(["workgroup", "agent"])
    if rng.random() < 0.5:
        r = f"%v{tid}_{n[0]}"
        regs.append(r)
        if sp == 1 and rng.random() < 0.6:
            return (f"{r} = load atomic i32, ptr addrspace(1) @{loc} syncscope(\"{sc}\") "
                    f"{rng.choice(['monotonic', 'acquire'])}, align 4")
        return f"{r} = load i32, ptr addrspace({sp}) @{loc}"
    v = rng.randint(1, 2)
    if sp == 1 and rng.random() < 0.6:
        return (f"store atomic i32 {v}, ptr addrspace(1) @{loc} syncscope(\"{sc}\") "
                f"{rng.choice(['monotonic', 'release'])}, align 4")
    return f"store i32 {v}, ptr addrspace({sp}) @{loc}"


def _cba_bar(rng, kind: str) -> list:
    """One barrier phase of `kind`, with fences around it sometimes."""
    out = []
    if rng.random() < 0.5:
        out.append('fence syncscope("workgroup") release')
    if kind == "wg":
        out.append("call void @llvm.amdgcn.s.barrier()")
    else:
        bid = -3 if kind == "cluster" else -1
        out += [f"call void @llvm.amdgcn.s.barrier.signal(i32 {bid})",
                f"call void @llvm.amdgcn.s.barrier.wait(i16 {bid})"]
    if rng.random() < 0.5:
        out.append(f'fence syncscope("{"agent" if kind == "cluster" else "workgroup"}") acquire')
    return out


_COPY = ("call void @llvm.amdgcn.load.async.to.lds.p1(ptr addrspace(1) @g{k}, "
         "ptr addrspace(3) @l{k}, i32 4, i32 0, i32 0)")


def cflow_bar_async_test(rng, name: str = "gen-cba") -> str:
    """A random small test with barriers (s.barrier, split signal / wait, the cluster barrier)
    and / or async copies, asyncmark and wait.asyncmark under branches and bounded loops
    (docs/semantics.md 15.9): 2 threads (sometimes 3), each one of the shapes: a barrier
    under an if on a loaded value (one side or both), a counted loop of barrier phases
    (1-2 trips), a spin loop around a barrier phase, a counted loop of copies with a mark and
    a wait, a copy under an if followed by a mark and a wait. Small enough for the reference
    engine (keeps it within its candidate limit most of the time)."""
    kind = rng.choice(["wg", "wg", "split", "cluster"])
    target = {"wg": rng.choice(["gfx942", "gfx1200"]), "split": "gfx1200",
              "cluster": "gfx1250"}[kind]
    nthreads = rng.choice([2, 2, 2, 3])
    lines = [f"name: {name}", "description: generated", f"target: {target}", "memory:",
             "  x: {space: global, init: 0}", "  f: {space: global, init: 0}",
             "  g0: {space: global, init: 10}", "  g1: {space: global, init: 11}",
             "  l0: {space: local, init: 0}", "  l1: {space: local, init: 0}", "threads:"]
    shapes = ["ifbar", "ifbar2", "countbar", "spinbar", "asyncloop", "asyncif", "plain"]
    for tid in range(nthreads):
        regs: list = []
        n = [0]
        code = ["entry:"]
        wg = tid % 2 if kind == "cluster" else 0
        lds = wg == 0           # LDS is per workgroup (one workgroup uses it)
        shape = rng.choice(shapes if lds else shapes[:4] + shapes[6:])
        if rng.random() < 0.5:
            code.append(_cba_access(rng, tid, n, regs, lds))
        if shape in ("ifbar", "ifbar2", "asyncif"):
            code.append(f"%a{tid} = load atomic i32, ptr addrspace(1) @f "
                        f"syncscope(\"agent\") {rng.choice(['monotonic', 'acquire'])}, align 4")
            code.append(f"%c{tid} = icmp eq i32 %a{tid}, {rng.randint(0, 1)}")
            code.append(f"br i1 %c{tid}, label %then, label %else")
            code.append("then:")
            if shape == "asyncif":
                code.append(_COPY.format(k=0))
            else:
                code += _cba_bar(rng, kind)
            code.append("br label %join")
            code.append("else:")
            if shape == "ifbar2":
                code += _cba_bar(rng, kind)
            elif shape == "asyncif" and rng.random() < 0.5:
                code.append(_COPY.format(k=1))
            code.append("br label %join")
            code.append("join:")
            if shape == "asyncif":
                code.append("call void @llvm.amdgcn.asyncmark()")
                code.append(f"call void @llvm.amdgcn.wait.asyncmark(i16 {rng.choice([0, 0, 1])})")
                code.append(f"%u{tid} = load i32, ptr addrspace(3) @l{rng.randint(0, 1)}")
        elif shape in ("countbar", "asyncloop"):
            trips = rng.choice([1, 2])
            code.append("br label %loop")
            code.append("loop:")
            code.append(f"%i{tid} = phi i32 [ 0, %entry ], [ %n{tid}, %loop ]")
            if shape == "countbar":
                code.append(_cba_access(rng, tid, n, regs, lds))
                code += _cba_bar(rng, kind)
            else:
                code.append(_COPY.format(k=rng.randint(0, 1)))
                code.append("call void @llvm.amdgcn.asyncmark()")
                code.append(f"call void @llvm.amdgcn.wait.asyncmark(i16 {rng.choice([0, 1])})")
                code.append(f"%u{tid} = load i32, ptr addrspace(3) @l{rng.randint(0, 1)}")
            code.append(f"%n{tid} = add i32 %i{tid}, 1")
            code.append(f"%k{tid} = icmp slt i32 %n{tid}, {trips}")
            code.append(f"br i1 %k{tid}, label %loop, label %done")
            code.append("done:")
        elif shape == "spinbar":
            code.append("br label %spin")
            code.append("spin:")
            code += _cba_bar(rng, kind)
            code.append(f"%s{tid} = load atomic i32, ptr addrspace(1) @f "
                        f"syncscope(\"{rng.choice(['agent', 'workgroup'])}\") monotonic, align 4")
            code.append(f"%w{tid} = icmp eq i32 %s{tid}, 0")
            code.append(f"br i1 %w{tid}, label %spin, label %out")
            code.append("out:")
        else:
            code += _cba_bar(rng, kind)
            if rng.random() < 0.5:
                code.append(f"store atomic i32 1, ptr addrspace(1) @f syncscope(\"agent\") "
                            f"{rng.choice(['monotonic', 'release'])}, align 4")
        code.append(_cba_access(rng, tid, n, regs, lds))
        wave = 0 if (tid == 1 and kind != "cluster" and rng.random() < 0.15) else tid
        lines += [f"  T{tid}:", f"    workgroup: {wg}", f"    wavefront: {wave}", "    code: |"]
        lines += [f"      {ln}" for ln in code]
    lines.append(f"unroll: {rng.choice([1, 2])}")
    lines.append(f"bound: {rng.choice(['fail', 'assume'])}")
    return "\n".join(lines) + "\n"


def cflow_symmetric_test(rng, name: str = "gen-sym") -> str:
    """A control-flow test whose threads are interchangeable (docs/semantics.md 15.7,
    R-cf-symmetry): one thread of cflow_test's kind copied to 2-3 threads placed alike (each
    in a workgroup of its own, or all in one), sometimes with the locations rotated from
    thread to thread (x -> y -> f), sometimes one thread different; the exists condition
    names one thread's register and a location, so that renaming it matters."""
    nthreads = rng.choice([2, 3, 3])
    code = _cf_thread(rng, "")
    rotate = rng.choice([False, True])
    same_wg = rng.choice([False, True])
    ring = ["x", "y", "f"]
    lines = [f"name: {name}", "description: generated", "memory:",
             "  x: {space: global, init: 0}", "  y: {space: global, init: 0}",
             "  f: {space: global, init: 0}", "threads:"]
    odd = rng.choice([None, None, nthreads - 1])
    for tid in range(nthreads):
        mine = code if tid != odd else _cf_thread(rng, "")
        if rotate:
            mine = [re.sub(r"@([xyf])\b", lambda m: "@" + ring[(ring.index(m.group(1)) + tid) % 3],
                           ln) for ln in mine]
        lines.append(f"  T{tid}:")
        lines.append(f"    workgroup: {0 if same_wg else tid}")
        lines.append("    code: |")
        lines += [f"      {ln}" for ln in mine]
    from amdmm_smt.frontend.litmus import parse_text
    probe = parse_text("\n".join(lines + ["unroll: 1"]) + "\n", "gen-sym.yaml")
    regs = ["%" + r for r in probe.threads[0].out_regs or []]
    if regs:
        lines.append(f'exists: "T0:{rng.choice(regs)} == {rng.choice([0, 1])} && '
                     f'@{rng.choice(ring)} == {rng.choice([0, 1])}"')
    lines.append(f"unroll: {rng.choice([1, 2])}")
    lines.append(f"bound: {rng.choice(['fail', 'assume'])}")
    return "\n".join(lines) + "\n"


# ---- thread groups: one code, threads told apart by their ids (issue 28 item 2, docs §15.10)

SPMD_IDS = [
    ["%id = call i32 @llvm.amdgcn.workitem.id.x()"],
    ["%id = call i32 @llvm.amdgcn.workgroup.id.x()"],
    ["%lo = call i32 @llvm.amdgcn.mbcnt.lo(i32 -1, i32 0)",
     "%id = call i32 @llvm.amdgcn.mbcnt.hi(i32 -1, i32 %lo)"],
    ["%t = call i32 @llvm.amdgcn.workitem.id.x()", "%id = lshr i32 %t, 5"],     # wave number
]


def _spmd_arm(rng, what: str, n: list, kind: str) -> list:
    if what == "bar":
        return _cba_bar(rng, kind)
    if what == "acc":
        return [_cba_access(rng, "g", n, [], lds=False)]
    return []


def _spmd_code(rng, kind: str) -> list:
    """A group's code: an id (workitem, workgroup, the mbcnt lane, the wave number), then a
    branch on it around barriers and accesses (one arm, both arms, or none), sometimes a
    loop whose trip count is the id's (1 or 2 trips), and an access after the join."""
    n = [0]
    code = ["entry:"] + rng.choice(SPMD_IDS)
    if rng.random() < 0.4:
        code.append(_cba_access(rng, "g", n, [], lds=False))
    shape = rng.choice(["if", "if", "ifelse", "loop", "plain"])
    if shape in ("if", "ifelse"):
        other = rng.choice([0, 0, 1, 2, "%a"])
        if other == "%a":       # a loaded value: the branch depends on the execution too
            code.append('%a = load atomic i32, ptr addrspace(1) @f syncscope("agent") '
                        'monotonic, align 4')
        code.append(f"%c = icmp {rng.choice(['eq', 'ne', 'slt', 'ugt'])} i32 %id, {other}")
        code.append("br i1 %c, label %then, label %else")
        code.append("then:")
        code += _spmd_arm(rng, rng.choice(["bar", "bar", "acc"]), n, kind)
        code.append("br label %join")
        code.append("else:")
        code += _spmd_arm(rng, rng.choice(["bar", "acc", "none"]) if shape == "ifelse"
                          else "none", n, kind)
        code.append("br label %join")
        code.append("join:")
        if rng.random() < 0.5:
            code.append("%p = phi i32 [ 1, %then ], [ 2, %else ]")
    elif shape == "loop":
        code.append("%lim = and i32 %id, 1")
        code.append("br label %loop")
        code.append("loop:")
        code.append("%i = phi i32 [ 0, %entry ], [ %nx, %loop ]")
        code += _cba_bar(rng, kind)
        code.append("%nx = add i32 %i, 1")
        code.append("%k = icmp sle i32 %nx, %lim")
        code.append("br i1 %k, label %loop, label %done")
        code.append("done:")
    else:
        code += _cba_bar(rng, kind)
    code.append(_cba_access(rng, "g", n, [], lds=False))
    return code


def spmd_test(rng, name: str = "gen-spmd") -> str:
    """A random small test with thread groups (docs/semantics.md 15.10): one or two groups
    of 2-3 threads (their layout drawn: lanes, per_workgroup), sometimes next to one thread
    written apart in the first group's wave, each group running a code that branches on an
    id around barriers and accesses; the registers are per thread (`%v` + counter), so the
    two engines must agree on the outcomes, the ids and the undefined behaviour
    (wave-divergent where a wave's threads part at a barrier)."""
    kind = rng.choice(["wg", "wg", "split"])
    target = {"wg": rng.choice(["gfx942", "gfx1200"]), "split": "gfx1200"}[kind]
    lines = [f"name: {name}", "description: generated", f"target: {target}", "memory:",
             "  x: {space: global, init: 0}", "  f: {space: global, init: 0}", "threads:"]
    ngroups = rng.choice([1, 1, 2])
    total = 0
    for g in range(ngroups):
        count = rng.choice([2, 2, 3]) if ngroups == 1 else 2
        total += count
        lines.append(f"  {'GH'[g]}:")
        lines.append(f"    count: {count}")
        lanes = rng.choice([1, 2, count])
        lines.append(f"    lanes: {lanes}")
        if rng.random() < 0.3:
            lines.append(f"    per_workgroup: {rng.randint(1, count)}")
        lines.append(f"    workgroup: {g if rng.random() < 0.5 else 0}")
        lines.append(f"    wavefront: {2 * g}")
        lines.append("    code: |")
        lines += [f"      {ln}" for ln in _spmd_code(rng, kind)]
    if total < 4 and rng.random() < 0.3:
        lines += ["  S:", "    workgroup: 0", "    wavefront: 0", "    code: |"]
        lines += [f"      {ln}" for ln in rng.choice([_cba_bar(rng, kind), []])
                  + [_cba_access(rng, "s", [0], [], lds=False)]]
    lines.append("unroll: 2")
    return "\n".join(lines) + "\n"
