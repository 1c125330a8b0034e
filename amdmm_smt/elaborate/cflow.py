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
    code: list                    # straight-line Instr steps
    bound: Optional[tuple] = None  # (block name, line) where the bound stopped the path


def _ren(op, inst: dict):
    if isinstance(op, Reg):
        return Reg(inst[op.name])
    return op


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
    todo: list = [(0, None, tuple(0 for _ in blocks), [], {}, {})]

    def run(bi: int, pred: Optional[int], counts: tuple, code: list, inst: dict, count: dict):
        todo.append((bi, pred, counts, code, inst, count))

    def step(bi: int, pred: Optional[int], counts: tuple, code: list, inst: dict, count: dict):
        if len(out) > MAX_PATHS:
            raise LitmusError(f"thread {t.name} has more than {MAX_PATHS} paths under unroll "
                              f"{bound}; lower the bound", file, t.line)
        b = blocks[bi]
        if counts[bi] >= bound:
            out.append(Path(rename_final(code, count), (b.name, b.line)))
            return
        counts = counts[:bi] + (counts[bi] + 1,) + counts[bi + 1:]
        code, inst, count = list(code), dict(inst), dict(count)

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
            code.append(replace(ph, kind="copy", reg=define(ph.reg), ops=(v,), targets=()))
        for ins in b.body:
            new = replace(ins, value=_ren(ins.value, inst), expected=_ren(ins.expected, inst),
                          ops=tuple(_ren(o, inst) for o in ins.ops))
            if ins.reg:
                new.reg = define(ins.reg)
            code.append(new)
        term = b.term
        if term is None or term.kind == "ret":
            if term is None and bi + 1 < len(blocks):
                run(bi + 1, bi, counts, code, inst, count)
            else:
                out.append(Path(rename_final(code, count)))
            return
        if not term.ops:
            run(index[term.targets[0]], bi, counts, code, inst, count)
            return
        c = _ren(term.ops[0], inst)
        nxt = []
        for val, tg in ((1, term.targets[0]), (0, term.targets[1])):
            if isinstance(c, int):
                if c == val:
                    nxt.append((index[tg], bi, counts, code, inst, count))
                continue
            assume = Instr("assume", term.line, term.text, ops=(c,), op=str(val))
            nxt.append((index[tg], bi, counts, code + [assume], inst, count))
        todo.extend(reversed(nxt))
    while todo:
        step(*todo.pop())
    return out


def unroll_bound(test: Test, default: Optional[int]) -> int:
    return test.unroll if test.unroll is not None else (
        default if default is not None else DEFAULT_UNROLL)


def combos(test: Test, bound: int):
    """(paths per thread, iterator over combinations) — each combination a straight-line Test
    plus the list of (thread, block, line) where a path was cut by the bound."""
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

    def gen():
        for choice in itertools.product(*per):
            threads = [replace(t, code=p.code) for t, p in zip(test.threads, choice)]
            cut = [(t.name,) + p.bound for t, p in zip(test.threads, choice) if p.bound]
            yield replace(test, threads=threads), cut
    return per, total, gen()
