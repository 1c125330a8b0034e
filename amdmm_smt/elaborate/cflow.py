"""Control flow (docs/semantics.md section 15.2): the unrolling of a thread into its finitely
many paths under a bound, and the combinations of paths of a test (the blocks and the static
checks of a thread are frontend/cfg.py).

A path is straight-line code: the memory instructions and computations the thread executes on
it, in order, each register definition renamed to a fresh instance (`r#1`, `r#2`, ...; the last
instance keeps the plain name `r`, which is what an outcome shows), and one `assume` step per
conditional branch taken (the branch condition's instance and the value that leads along the
path). Both engines consume these paths; neither engine's semantics is in this module (it only
states which instructions a thread executes in which order when its branches go a given way).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace
from typing import Optional

from ..errors import LitmusError
from ..frontend.cfg import COMPUTE, blocks_of, has_cflow, test_has_cflow  # noqa: F401
from ..ir import Instr, Reg, Test, Thread

DEFAULT_UNROLL = 2
MAX_PATHS = 4096        # per thread
MAX_COMBOS = 20000      # per test


# ---- unrolling ------------------------------------------------------------------------------

@dataclass
class Path:
    """One path through a thread's control flow."""
    code: list                    # straight-line Instr steps
    bound: Optional[tuple] = None  # (block name, line) where the bound stopped the path
    blocks: tuple = ()            # the blocks it runs, in order (to name the path)

    def describe(self) -> str:
        """`%entry %loop x2 %exit`: the blocks in order, a repeated block counted."""
        out: list = []
        for b in self.blocks:
            if out and out[-1][0] == b:
                out[-1][1] += 1
            else:
                out.append([b, 1])
        return " ".join(f"%{b}" + (f" x{k}" if k > 1 else "") for b, k in out)


def _ren(op, inst: dict):
    if isinstance(op, Reg):
        return Reg(inst[op.name])
    return op


M32 = 0xFFFFFFFF


def _s32(v: int) -> int:
    return v - (1 << 32) if v & 0x80000000 else v


def fold(ins: Instr, consts: dict) -> Optional[int]:
    """The value of a register computation whose operands are all defined constants (or None:
    not known statically). Only whole defined values fold (no undef, no poison: a shift by 32
    or more is poison, LangRef), so a folded branch is one every execution takes: dropping the
    other way drops only paths no execution follows (docs 15.2, reading R-cf-fold)."""
    vals = []
    for o in ins.ops:
        if isinstance(o, Reg):
            if o.name not in consts:
                return None
            vals.append(consts[o.name])
        elif isinstance(o, int):
            vals.append(o & M32)
        else:
            return None
    k, op = ins.kind, ins.op
    if k == "copy" and len(vals) == 1:
        return vals[0]
    if k == "select" and len(vals) == 3:
        return vals[1] if vals[0] & 1 else vals[2]
    if len(vals) != 2:
        return None
    a, b = vals
    if k == "icmp":
        sa, sb = _s32(a), _s32(b)
        r = {"eq": a == b, "ne": a != b, "slt": sa < sb, "sgt": sa > sb, "sle": sa <= sb,
             "sge": sa >= sb, "ult": a < b, "ugt": a > b, "ule": a <= b, "uge": a >= b}.get(op)
        return None if r is None else int(r)
    if k != "binop":
        return None
    if op in ("shl", "lshr", "ashr") and b >= 32:
        return None
    r = {"add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b,
         "and": lambda: a & b, "or": lambda: a | b, "xor": lambda: a ^ b,
         "shl": lambda: a << b, "lshr": lambda: a >> b, "ashr": lambda: _s32(a) >> b}.get(op)
    return None if r is None else r() & M32


def thread_paths(t: Thread, bound: int, file: str) -> list:
    """Every path of thread t in which no block runs more than `bound` times, and every path
    cut where a block would run for the (bound+1)-th time (docs section 15.2)."""
    blocks = blocks_of(t.code)
    index = {b.name: k for k, b in enumerate(blocks)}
    out: list = []

    def rename_final(code: list, count: dict) -> list:
        last = {r: f"{r}#{k}" for r, k in count.items()}
        m = {v: r for r, v in last.items()}

        def f(op):
            return Reg(m.get(op.name, op.name)) if isinstance(op, Reg) else op
        res = []
        for ins in code:
            res.append(replace(ins, reg=m.get(ins.reg, ins.reg) if ins.reg else ins.reg,
                               value=f(ins.value), expected=f(ins.expected),
                               ops=tuple(f(o) for o in ins.ops)))
        return res

    # an explicit stack, not recursion: a path is as long as the blocks it runs (a loop of 16
    # blocks at unroll 64 is 1024 steps deep, issue 22 item 8); successors are visited in the
    # order the recursive walk visited them, so the paths come out in the same order
    todo: list = []
    nxt: list = []

    def run(bi: int, pred: Optional[int], counts: tuple, code: list, inst: dict, count: dict,
            consts: dict, trail: tuple = ()):
        nxt.append((bi, pred, counts, code, inst, count, consts, trail))

    def step(bi: int, pred: Optional[int], counts: tuple, code: list, inst: dict, count: dict,
             consts: dict, trail: tuple = ()):
        if len(out) > MAX_PATHS:
            raise LitmusError(f"thread {t.name} has more than {MAX_PATHS} paths under unroll "
                              f"{bound}; lower the bound", file, t.line)
        b = blocks[bi]
        if counts[bi] >= bound:
            out.append(Path(rename_final(code, count), (b.name, b.line), trail))
            return
        trail = trail + (b.name or "entry",)
        counts = counts[:bi] + (counts[bi] + 1,) + counts[bi + 1:]
        code, inst, count, consts = list(code), dict(inst), dict(count), dict(consts)

        def define(reg: str) -> str:
            count[reg] = count.get(reg, 0) + 1
            inst[reg] = f"{reg}#{count[reg]}"
            return inst[reg]
        # phis read their operands at the edge, all at once (LLVM phi semantics)
        incoming = []
        for ph in b.phis:
            k = ph.targets.index(blocks[pred].name)
            incoming.append((ph, _ren(ph.ops[k], inst)))
        for ph, v in incoming:
            new = replace(ph, kind="copy", reg=define(ph.reg), ops=(v,), targets=())
            code.append(new)
            c = fold(new, consts)
            if c is not None:
                consts[new.reg] = c
        for ins in b.body:
            new = replace(ins, value=_ren(ins.value, inst), expected=_ren(ins.expected, inst),
                          ops=tuple(_ren(o, inst) for o in ins.ops))
            if ins.reg:
                new.reg = define(ins.reg)
                if ins.kind in COMPUTE:
                    c = fold(new, consts)
                    if c is not None:
                        consts[new.reg] = c
            code.append(new)
        term = b.term
        if term is None or term.kind == "ret":
            if term is None and bi + 1 < len(blocks):
                run(bi + 1, bi, counts, code, inst, count, consts, trail)
            else:
                out.append(Path(rename_final(code, count), None, trail))
            return
        if not term.ops:
            run(index[term.targets[0]], bi, counts, code, inst, count, consts, trail)
            return
        c = _ren(term.ops[0], inst)
        if isinstance(c, Reg) and c.name in consts:
            c = consts[c.name] & 1
        for val, tg in ((1, term.targets[0]), (0, term.targets[1])):
            if isinstance(c, int):
                if c == val:
                    run(index[tg], bi, counts, code, inst, count, consts, trail)
                continue
            assume = Instr("assume", term.line, term.text, ops=(c,), op=str(val),
                           frame=term.frame)      # docs R-call-async-seq: the branch's body
            run(index[tg], bi, counts, code + [assume], inst, count, consts, trail)
    todo.append((0, None, tuple(0 for _ in blocks), [], {}, {}, {}, ()))
    while todo:
        nxt.clear()
        step(*todo.pop())
        todo.extend(reversed(nxt))    # the first successor is walked first, as recursion did
    return out


def unroll_bound(test: Test, default: Optional[int]) -> int:
    return test.unroll if test.unroll is not None else (
        default if default is not None else DEFAULT_UNROLL)


def combos(test: Test, bound: int):
    """(paths per thread, iterator over combinations) — each combination a straight-line Test
    plus the list of (thread, block, line) where a path was cut by the bound."""
    per, total, gen = described_combos(test, bound)
    return per, total, ((ct, cut) for ct, cut, _ in gen)


def strip_barriers(test: Test) -> Test:
    """The combination without its barrier operations (an isfirst register reads 0): the
    memory part alone, to ask whether the combination has an execution at all (docs 15.9,
    reading R-cf-bar-feasible) and to judge a path cut by the bound (R-cf-bar-cut)."""
    def strip(code):
        out = []
        for ins in code:
            if ins.kind == "barrier":
                if ins.reg:
                    out.append(Instr("copy", ins.line, ins.text, reg=ins.reg, ops=(0,)))
                continue
            out.append(ins)
        return out
    return replace(test, threads=[replace(t, code=strip(t.code)) for t in test.threads])


def described_combos(test: Test, bound: int):
    """Like combos, each combination also with the paths it takes in words
    (`T0: %entry %loop x2 %exit`), for undefined behaviour reported with its path."""
    per = []
    for t in test.threads:
        if has_cflow(t):
            per.append(thread_paths(t, bound, test.file))
        else:
            per.append([Path(list(t.code))])
    total = 1
    for p in per:
        total *= len(p)
    if total > MAX_COMBOS:
        raise LitmusError(f"{total} combinations of thread paths under unroll {bound} (at most "
                          f"{MAX_COMBOS}); lower the bound", test.file, test.line)

    return per, total, (_combination(test, choice) for choice in itertools.product(*per))


def _combination(test: Test, choice) -> tuple:
    """One path per thread: the straight-line test, where the bound cut a path, the paths in
    words."""
    threads = [replace(t, code=p.code) for t, p in zip(test.threads, choice)]
    cut = [(t.name,) + p.bound for t, p in zip(test.threads, choice) if p.bound]
    desc = "; ".join(f"{t.name}: {p.describe()}" for t, p in zip(test.threads, choice)
                     if p.blocks)
    return replace(test, threads=threads), cut, desc


# ---- symmetry (docs/semantics.md 15.7, R-cf-symmetry) -------------------------------------

MAX_CLASS = 6           # threads of one shape beyond this are split into classes of 6
MAX_GROUP = 720         # candidate thread permutations examined
MAX_WORK = 2_000_000    # combinations x symmetries examined for canonical forms


@dataclass(frozen=True)
class Symmetry:
    """An automorphism of a test: thread k does what thread threads[k] does, on location
    locs.get(X, X) where it used X."""
    threads: tuple
    locs: tuple = ()            # sorted (X, image) pairs, identity pairs left out

    def loc_map(self) -> dict:
        return dict(self.locs)


def _instr_key(ins: Instr, rename: Optional[dict] = None) -> tuple:
    """Everything an instruction means, without where it is written (line, text); with
    `rename`, its location through it."""
    out = []
    for f in ins.__dataclass_fields__:
        if f in ("line", "text"):
            continue
        v = getattr(ins, f)
        if f == "loc" and rename is not None and v is not None:
            v = rename.setdefault(v, len(rename))
        out.append((f, v))
    return tuple(out)


def _placement(test: Test) -> list:
    return [(t.agent, t.cluster, t.workgroup,
             t.wavefront if t.wavefront is not None else ("own", i))
            for i, t in enumerate(test.threads)]


def _together(p: tuple, q: tuple) -> tuple:
    """Which scope instances two threads share: agent, cluster, workgroup, wavefront (the
    placement's prefixes; any coarser sharing a target defines is a function of these)."""
    return tuple(p[:k] == q[:k] for k in range(1, 5))


def symmetries(test: Test, shown_locs: frozenset = frozenset()) -> list[Symmetry]:
    """The automorphisms of the test among permutations of threads of one shape (docs 15.7,
    R-cf-symmetry): thread k's code, its locations renamed, is thread threads[k]'s code but
    for source lines; the registers shown are the same; every pair of threads shares the
    same scope instances as its image; the renaming of locations is a bijection that keeps
    each location's declaration and whether the final state shows it. The identity first.
    Barrier operations (their elaboration numbers waves and participants) and instructions
    with arguments naming locations (DMA, async copies) keep every location in place, or,
    for barriers, give no symmetry at all."""
    n = len(test.threads)
    ident = Symmetry(tuple(range(n)))
    if any(i.kind == "barrier" for t in test.threads for i in t.code):
        return [ident]
    fixed = any(i.args for t in test.threads for i in t.code)
    place = _placement(test)
    shape = []
    for t in test.threads:
        ren: Optional[dict] = None if fixed else {}
        shape.append((tuple(_instr_key(i, ren) for i in t.code), tuple(t.out_regs or ()),
                      t.out_regs is None))
    classes: dict = {}
    for k, sh in enumerate(shape):
        chunks = classes.setdefault(sh, [[]])
        if len(chunks[-1]) == MAX_CLASS:
            chunks.append([])
        chunks[-1].append(k)
    groups = [c for chunks in classes.values() for c in chunks if len(c) > 1]
    count = 1
    for c in groups:
        count *= math.factorial(len(c))
    if not groups or count > MAX_GROUP:
        return [ident]
    out = [ident]
    for orders in itertools.product(*(itertools.permutations(c) for c in groups)):
        perm = list(range(n))
        for c, order in zip(groups, orders):
            for src, dst in zip(c, order):
                perm[src] = dst
        if perm == list(ident.threads):
            continue
        if any(_together(place[a], place[b]) != _together(place[perm[a]], place[perm[b]])
               for a in range(n) for b in range(a + 1, n)):
            continue
        tau: dict = {}
        ok = True
        for k in range(n):
            for a, b in zip(test.threads[k].code, test.threads[perm[k]].code):
                if a.loc is not None and tau.setdefault(a.loc, b.loc) != b.loc:
                    ok = False
        if not ok or len(set(tau.values())) != len(tau):
            continue
        mem = test.memory
        if any(a not in mem or b not in mem or (a in shown_locs) != (b in shown_locs)
               or (mem[a].space, mem[a].init, mem[a].declared)
               != (mem[b].space, mem[b].init, mem[b].declared) for a, b in tau.items()):
            continue
        out.append(Symmetry(tuple(perm), tuple(sorted((a, b) for a, b in tau.items()
                                                      if a != b))))
    return out


def symmetric_combos(test: Test, bound: int, group: list):
    """Like described_combos, only the canonical combinations (the least, in lexicographic
    order of path indices, of their orbit under the test's symmetries), each with one
    symmetry carrying it onto each combination of its orbit (the identity first). With the
    identity alone (or too much work), every combination with the identity."""
    per, total, _ = described_combos(test, bound)
    if len(group) * total > MAX_WORK:
        group = group[:1]

    def gen():
        for idx in itertools.product(*(range(len(p)) for p in per)):
            orbit: dict = {}
            least = True
            for g in group:
                image = [0] * len(idx)
                for k, i in enumerate(idx):
                    image[g.threads[k]] = i
                image = tuple(image)
                if image < idx:
                    least = False
                    break
                orbit.setdefault(image, g)
            if not least:
                continue
            yield (*_combination(test, [p[i] for p, i in zip(per, idx)]),
                   list(orbit.values()))
    return per, total, gen()
