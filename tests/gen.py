"""Random well-formed litmus tests (hypothesis strategies), as text in the contract's format.

A generated test is a `Gen` — threads of instruction descriptions — rendered to YAML by
`render`. Keeping the structure lets property tests transform a test (drop tags, strengthen an
ordering, widen a scope, make an access atomic) and compare outcome sets.
"""

from __future__ import annotations

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
