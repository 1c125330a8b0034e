"""Control flow as written (docs/semantics.md section 15.1): the blocks of a thread and the
static checks of a thread with labels and branches (labels, SSA dominance of uses, types,
phi incoming labels), and the registers an outcome shows. The unrolling of a thread into
its paths is elaborate/cflow.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..errors import LitmusError
from ..ir import Instr, Reg, Test, Thread

CF_KINDS = ("label", "br", "ret", "icmp", "binop", "select", "phi")
COMPUTE = ("icmp", "binop", "select", "copy")      # register computations, no memory event


def has_cflow(t: Thread) -> bool:
    return any(i.kind in CF_KINDS for i in t.code)


def test_has_cflow(test: Test) -> bool:
    return any(has_cflow(t) for t in test.threads)


@dataclass
class Block:
    """A basic block of a thread."""
    name: Optional[str]          # None: an unlabelled entry block
    line: int
    phis: list
    body: list
    term: Optional[Instr]        # br / ret, or None: falls through (or ends the thread)


def blocks_of(code: list) -> list:
    blocks: list[Block] = []
    cur: Optional[Block] = None
    for ins in code:
        if ins.kind == "label":
            cur = Block(ins.targets[0], ins.line, [], [], None)
            blocks.append(cur)
            continue
        if cur is None or cur.term is not None:
            if cur is not None and cur.term is not None:
                raise LitmusError(f"instruction after a terminator ({cur.term.text}) needs a "
                                  "label: it starts a new block", "", ins.line)
            cur = Block(None, ins.line, [], [], None)
            blocks.append(cur)
        if ins.kind == "phi":
            if cur.body:
                raise LitmusError("phi must come first in its block (before any other "
                                  "instruction)", "", ins.line)
            cur.phis.append(ins)
        elif ins.kind in ("br", "ret"):
            cur.term = ins
        else:
            cur.body.append(ins)
    return blocks


def _succ(blocks: list, i: int) -> list:
    b = blocks[i]
    if b.term is None:
        return [i + 1] if i + 1 < len(blocks) else []
    if b.term.kind == "ret":
        return []
    index = {bb.name: k for k, bb in enumerate(blocks)}
    return [index[t] for t in b.term.targets]


REG_TYPE = {"load": "i32", "rmw": "i32", "cmpxchg": "i32", "av_load": "i32", "binop": "i32",
            "select": "i32", "phi": "i32", "icmp": "i1"}


def analyse(t: Thread, file: str) -> None:
    """Check a thread with control flow and set t.out_regs. Raises LitmusError FILE:LINE."""
    def err(msg, line):
        return LitmusError(msg, file, line)
    try:
        blocks = blocks_of(t.code)
    except LitmusError as e:
        raise err(e.message, e.line) from None
    names: dict = {}
    for b in blocks:
        if b.name is not None:
            if b.name in names:
                raise err(f"label %{b.name} is defined twice in thread {t.name} (first at line "
                          f"{names[b.name]})", b.line)
            names[b.name] = b.line
    for b in blocks:
        if b.term is not None:
            for tg in b.term.targets:
                if tg not in names:
                    raise err(f"unknown label %{tg} in thread {t.name}", b.term.line)
                if blocks[0].name == tg:
                    raise err(f"the entry block %{tg} cannot be a branch target (LLVM: the "
                              "entry block has no predecessors); start the loop with a new "
                              "label", b.term.line)
    n = len(blocks)
    succ = [_succ(blocks, i) for i in range(n)]
    preds: list = [[] for _ in range(n)]
    for i in range(n):
        for j in succ[i]:
            if i not in preds[j]:
                preds[j].append(i)
    # types of registers
    ty: dict = {}
    for ins in t.code:
        if ins.reg:
            if ins.reg in ty:
                raise err(f"register %{ins.reg} is defined twice in thread {t.name} (SSA: one "
                          "definition per register; a phi merges values)", ins.line)
            ty[ins.reg] = REG_TYPE.get(ins.kind, "i32")

    def want(op, typ, ins, what):
        if isinstance(op, Reg):
            if op.name not in ty:
                raise err(f"register %{op.name} is not defined in thread {t.name}", ins.line)
            if ty[op.name] != typ:
                raise err(f"%{op.name} is {ty[op.name]}, but {what} must be {typ}", ins.line)
        elif isinstance(op, str):
            raise err(f"'{op}' is not an i1 value (a register or true / false)", ins.line)
        elif typ == "i1" and op not in (0, 1):
            raise err(f"{op} is not an i1 constant", ins.line)
    for ins in t.code:
        if ins.kind in ("store", "rmw", "av_store"):
            want(ins.value, "i32", ins, "the stored value / operand")
        elif ins.kind == "cmpxchg":
            want(ins.expected, "i32", ins, "the expected value")
            want(ins.value, "i32", ins, "the new value")
        elif ins.kind in ("icmp", "binop", "phi"):
            for o in ins.ops:
                want(o, "i32", ins, f"an operand of {ins.kind}")
        elif ins.kind == "select":
            want(ins.ops[0], "i1", ins, "the select condition")
            want(ins.ops[1], "i32", ins, "a select value")
            want(ins.ops[2], "i32", ins, "a select value")
        elif ins.kind == "br" and ins.ops:
            want(ins.ops[0], "i1", ins, "the branch condition")
    # phi incoming labels: exactly the predecessors
    for i, b in enumerate(blocks):
        pn = {blocks[p].name for p in preds[i]}
        for ph in b.phis:
            seen = set()
            for lb in ph.targets:
                if lb not in names:
                    raise err(f"unknown label %{lb} in phi", ph.line)
                if lb not in pn:
                    raise err(f"phi names %{lb}, which is not a predecessor of this block "
                              f"(predecessors: {', '.join('%' + str(x) for x in sorted(pn, key=str)) or 'none'})",
                              ph.line)
                if lb in seen:
                    raise err(f"phi names %{lb} twice", ph.line)
                seen.add(lb)
            missing = pn - seen
            if missing:
                raise err(f"phi has no value for predecessor %{sorted(missing, key=str)[0]}",
                          ph.line)
    # must-defined registers (dominance): in[b] = ∩ out[p]
    every = set(ty)
    inn = [set() if i == 0 else set(every) for i in range(n)]
    out = [set(every) for _ in range(n)]
    reach = _reachable(succ)
    changed = True
    while changed:
        changed = False
        for i in range(n):
            if i not in reach:
                continue
            new_in = set() if i == 0 else set.intersection(
                *[out[p] for p in preds[i] if p in reach]) if any(
                p in reach for p in preds[i]) else set()
            new_out = new_in | {ins.reg for ins in b_defs(blocks[i])}
            if new_in != inn[i] or new_out != out[i]:
                inn[i], out[i], changed = new_in, new_out, True
    index = {bb.name: k for k, bb in enumerate(blocks)}
    for i in sorted(reach):
        b = blocks[i]
        for ph in b.phis:
            for o, lb in zip(ph.ops, ph.targets):
                if isinstance(o, Reg) and o.name not in out[index[lb]]:
                    raise err(f"register %{o.name} is not defined on every path to the end "
                              f"of %{lb} (phi operand)", ph.line)
        defined = set(inn[i]) | {ph.reg for ph in b.phis}
        for ins in b.body + ([b.term] if b.term else []):
            for u in ins.uses():
                if u not in defined:
                    raise err(f"register %{u} is used where it is not defined on every path "
                              f"(use before definition, or defined only on some branches; "
                              f"merge with a phi) in thread {t.name}", ins.line)
            if ins.reg:
                defined.add(ins.reg)
    exits = [i for i in reach if not succ[i]]
    final = set.intersection(*[out[i] for i in exits]) if exits else set()
    t.out_regs = [ins.reg for ins in t.code if ins.reg and ins.reg in final
                  and ty[ins.reg] == "i32"]


def b_defs(b: Block) -> list:
    return [i for i in b.phis + b.body if i.reg]


def _reachable(succ: list) -> set:
    seen, stack = {0}, [0]
    while stack:
        for j in succ[stack.pop()]:
            if j not in seen:
                seen.add(j)
                stack.append(j)
    return seen
