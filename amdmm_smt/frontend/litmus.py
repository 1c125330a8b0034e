"""Stage 1: parse a litmus file (docs/litmus-format.md) into `ir.Test`.

Every problem raises `LitmusError` naming the file and line. Nothing is silently skipped:
unknown keys, unknown instructions and undeclared names are errors.
"""

from __future__ import annotations

import os
import re
from typing import Any, Optional


from ..errors import LitmusError, one_line, printable, show
from .functions import inline, parse_functions, split_commas, strip_comment
from .yaml_lines import Node, load_yaml
from . import async_intrinsics as asyncops
from .async_intrinsics import is_async_intrinsic
from ..targets import get_target
from .cfg import CF_KINDS, analyse
from ..ir import (POISON, ORDERS, RMW_OPS, SCOPE_LEVEL, SPACES, STORED_AS_GLOBAL, BoolOp, Cmp,
                  Condition, Const, Instr, Location, LocTerm, Not, Reg, RegTerm, Test,
                  Thread)

TOP_KEYS = {"name", "description", "target", "model", "memory", "threads", "metadata",
            "functions", "exists", "expect", "outcomes", "silence", "undefined", "unroll",
            "bound"}
THREAD_KEYS = {"agent", "cluster", "workgroup", "wavefront", "code"}
# a thread group (docs/litmus-format.md "Thread groups"): one code run by `count` threads
GROUP_KEYS = {"count", "lanes", "per_workgroup", "wave_size"}
LOC_KEYS = {"space", "init"}
MAX_THREADS = 64
MAX_INSTRS = 256
I32_MIN, U32_MAX = -(2 ** 31), 2 ** 32 - 1


# ---- instructions -------------------------------------------------------------------------

class _Lazy:
    """A regular expression compiled when first used (start-up: a test compiles only the
    instruction forms it contains; issue 16 item 5)."""

    def __init__(self, pattern: str):
        self.pattern, self._re = pattern, None

    def __getattr__(self, name):          # fullmatch, search, sub, finditer
        if self._re is None:
            self._re = re.compile(self.pattern)
        return getattr(self._re, name)


_PTR = r"ptr(?:\s+addrspace\((?P<as>\d+)\))?\s+@(?P<loc>[A-Za-z_.$][\w.$]*)"
_SCOPE = r'(?:\s+syncscope\("(?P<scope>[^"]*)"\))?'
_VAL = r"(?P<{}>-?(?:0[xX][0-9a-fA-F]+|\d+)|%[\w.$]+)"
_REGDEF = r"%(?P<reg>[\w.$]+)\s*=\s*"

RE_LOAD = _Lazy(
    _REGDEF + r"load(?P<atomic>\s+atomic)?(?P<volatile>\s+volatile)?\s+i32\s*,\s*" + _PTR
    + _SCOPE + r"(?:\s+(?P<order>\w+))?$")
RE_STORE = _Lazy(
    r"store(?P<atomic>\s+atomic)?(?P<volatile>\s+volatile)?\s+i32\s+" + _VAL.format("val")
    + r"\s*,\s*" + _PTR + _SCOPE + r"(?:\s+(?P<order>\w+))?$")
RE_RMW = _Lazy(
    _REGDEF + r"atomicrmw(?P<volatile>\s+volatile)?\s+(?P<op>\w+)\s+" + _PTR + r"\s*,\s*i32\s+"
    + _VAL.format("val") + _SCOPE + r"\s+(?P<order>\w+)$")
RE_CMPXCHG = _Lazy(
    _REGDEF + r"cmpxchg(?:\s+weak)?(?P<volatile>\s+volatile)?\s+" + _PTR + r"\s*,\s*i32\s+"
    + _VAL.format("exp") + r"\s*,\s*i32\s+" + _VAL.format("new") + _SCOPE
    + r"\s+(?P<order>\w+)\s+(?P<fail>\w+)$")
RE_FENCE = _Lazy(r"fence" + _SCOPE + r"\s+(?P<order>\w+)$")
RE_CALL = _Lazy(
    r"(?:%(?P<reg>[\w.$]+)\s*=\s*)?(?:tail\s+)?call\s+(?P<ty>void|i1|i32|i64)\s+"
    r"@(?P<name>llvm\.amdgcn\.[\w.]+)\s*\((?P<args>.*)\)$")
RE_MMRA = _Lazy(r",\s*!mmra\s+(?P<md>!\d+|!\{.*\})\s*$")
RE_ALIGN = _Lazy(r",\s*align\s+\d+\s*$")

AV_STORE = {"llvm.amdgcn.av.global.store.b128", "llvm.amdgcn.av.store.b128.p1",
            "llvm.amdgcn.av.store.b128.p0", "llvm.amdgcn.av.store.b128"}
AV_LOAD = {"llvm.amdgcn.av.global.load.b128", "llvm.amdgcn.av.load.b128.p1",
           "llvm.amdgcn.av.load.b128.p0", "llvm.amdgcn.av.load.b128"}
BARRIER = {"llvm.amdgcn.s.barrier", "llvm.amdgcn.s.barrier.signal",
           "llvm.amdgcn.s.barrier.wait", "llvm.amdgcn.s.barrier.init",
           "llvm.amdgcn.s.barrier.join", "llvm.amdgcn.s.barrier.leave",
           "llvm.amdgcn.s.barrier.signal.var", "llvm.amdgcn.s.barrier.signal.isfirst"}

# UP 2.3 (AMDGPUUsage intrinsic table, verbatim): defined for the memory model only as an RMW
# class, without its operation or value; refused (docs/semantics.md 16.2)
DS_BARRIER_ARRIVE = {
    "llvm.amdgcn.ds.atomic.barrier.arrive.rtn.b64": "For the purposes of the memory model, "
    "this is a monotonic atomic read-modify-write operation in the local address space.",
    "llvm.amdgcn.ds.atomic.async.barrier.arrive.b64": "an asynchronous monotonic atomic "
    "read-modify-write operation in the local address space.",
}

LOAD_ORDERS = {"unordered", "monotonic", "acquire", "seq_cst"}
STORE_ORDERS = {"unordered", "monotonic", "release", "seq_cst"}
RMW_ORDERS = {"monotonic", "acquire", "release", "acq_rel", "seq_cst"}
FAIL_ORDERS = {"monotonic", "acquire", "seq_cst"}
FENCE_ORDERS = {"acquire", "release", "acq_rel", "seq_cst"}


class _Ctx:
    """What the instruction parser needs to know about the test."""

    def __init__(self, file: str, memory: dict[str, Location], metadata: dict[str, tuple],
                 ids: Optional[dict] = None):
        self.file = file
        self.memory = memory
        self.metadata = metadata
        # a thread of a thread group: {"workitem", "workgroup", "lane", "wave_size"} (the
        # values the id intrinsics return); None outside a group
        self.ids = ids

    def err(self, msg: str, line: int) -> LitmusError:
        return LitmusError(msg, self.file, line)


def parse_int(text: str, ctx: _Ctx, line: int, what: str = "value") -> int:
    try:   # LLVM reads 010 as ten; 0x10 is hexadecimal
        t = text.strip()
        neg = t.startswith("-")
        body = t[1:] if neg else t
        v = int(body, 16) if body[:2].lower() == "0x" else int(body, 10)
        v = -v if neg else v
    except ValueError:
        raise ctx.err(f"{what} '{show(text)}' is not an integer", line) from None
    if not I32_MIN <= v <= U32_MAX:
        raise ctx.err(f"{what} {v} does not fit in i32", line)
    return v - 2 ** 32 if v > 2 ** 31 - 1 else v


def _operand(text: str, ctx: _Ctx, line: int) -> Any:
    if text.startswith("%"):
        return Reg(text[1:])
    return parse_int(text, ctx, line)


def _scope(text: Optional[str], ctx: _Ctx, line: int) -> tuple[str, bool]:
    if text is None:
        return "", False
    one_as = False
    s = text
    if s == "one-as":
        return "", True
    if s.endswith("-one-as"):
        s, one_as = s[: -len("-one-as")], True
        if not s:   # the contract spells system-one-as `one-as`; "-one-as" is no scope name
            raise ctx.err('unknown syncscope "-one-as" (system scope, one address space, is '
                          'spelled "one-as")', line)
    if s not in SCOPE_LEVEL:
        raise ctx.err(f'unknown syncscope "{show(text)}" (expected one of: "", agent, cluster, '
                      "workgroup, wavefront, singlethread, optionally with -one-as)", line)
    return s, one_as


def _order(order: Optional[str], allowed: set, what: str, ctx: _Ctx, line: int) -> str:
    if order is None:
        raise ctx.err(f"{what} needs a memory ordering", line)
    if order not in ORDERS:
        raise ctx.err(f"unknown ordering '{order}' (expected one of: {', '.join(ORDERS)})", line)
    if order not in allowed:
        raise ctx.err(f"ordering '{order}' is not allowed on {what} "
                      f"(allowed: {', '.join(o for o in ORDERS if o in allowed)})", line)
    return order


def _location(m: re.Match, ctx: _Ctx, line: int) -> tuple[str, int]:
    name = m.group("loc")
    if name not in ctx.memory:
        raise ctx.err(f"location '@{name}' is not declared under memory:", line)
    loc = ctx.memory[name]
    if loc.space == "barrier":
        raise ctx.err(f"'@{name}' is a barrier object, not memory", line)
    a = int(m.group("as")) if m.group("as") is not None else 0
    space = loc.declared or loc.space
    want = STORED_AS_GLOBAL.get(space) or SPACES[space]
    if a not in (0, want):
        raise ctx.err(f"'@{name}' is in the {space} address space (addrspace("
                      f"{want})), not addrspace({a})", line)
    return name, a


def _private_constant(ins: Instr, ctx: _Ctx, line: int) -> Instr:
    """docs/semantics.md 16: accesses to private and constant memory. S002 (memory model,
    GFX942 notes): private "Since only a single thread is accessing the memory, atomic memory
    orderings are not meaningful, and all accesses are treated as non-atomic"; constant "it is
    not legal to perform stores, and atomic memory orderings are not meaningful, and all
    accesses are treated as non-atomic"."""
    loc = ctx.memory.get(ins.loc) if ins.loc else None
    if loc is None or not loc.declared:
        return ins
    if loc.declared == "constant" and ins.writes:
        raise ctx.err(f"'@{ins.loc}' is in the constant address space: S002 \"it is not legal "
                      "to perform stores\" to it (its contents do not change during a kernel "
                      "dispatch)", line)
    if ins.kind in ("load", "store"):
        ins.atomic, ins.order, ins.scope, ins.one_as = False, None, "", False
    elif ins.kind in ("rmw", "cmpxchg"):       # one thread: a monotonic RMW of its own
        ins.order, ins.scope, ins.one_as = "monotonic", "singlethread", False
        if ins.fail_order:
            ins.fail_order = "monotonic"
    else:
        raise ctx.err(f"'@{ins.loc}' is in the {loc.declared} address space: only load, store"
                      ", atomicrmw and cmpxchg reach it here", line)
    return ins


def resolve_mmra(md: str, nodes: dict, ctx: _Ctx, line: int, depth: int = 0) -> frozenset:
    """A `!N` reference or an inline `!{...}` node, as a set of (prefix, suffix) tags."""
    if depth > 8:
        raise ctx.err("MMRA metadata nests too deeply", line)
    md = md.strip()
    if re.fullmatch(r"!\d+", md):
        if md not in nodes:
            raise ctx.err(f"metadata node {md} is not defined under metadata:", line)
        items = nodes[md]
    else:
        items = parse_md_node(md, ctx, line)
    if not items:
        return frozenset()
    if all(isinstance(i, str) and not i.startswith("!") for i in items):
        if len(items) != 2:
            raise ctx.err(f"malformed MMRA tag {md}: a tag is a pair of strings "
                          '!{!"prefix", !"suffix"}', line)
        return frozenset([(items[0], items[1])])
    if all(isinstance(i, str) and i.startswith("!") for i in items):
        out: set = set()
        for ref in items:
            out |= resolve_mmra(ref, nodes, ctx, line, depth + 1)
        return frozenset(out)
    raise ctx.err(f"malformed MMRA metadata {md}: expected a tag !{{!\"p\", !\"s\"}} or a "
                  "set of tag references", line)


def parse_md_node(text: str, ctx: _Ctx, line: int) -> tuple:
    """`!{!"a", !"b"}` -> ('a', 'b'); `!{!0, !1}` -> ('!0', '!1')."""
    m = re.fullmatch(r"!\{(.*)\}", text.strip())
    if not m:
        raise ctx.err(f"malformed metadata node '{text}'", line)
    body = m.group(1).strip()
    if not body:
        return ()
    items = []
    for part in split_commas(body):
        part = part.strip()
        sm = re.fullmatch(r'!"([^"]*)"', part)
        if sm:
            items.append(sm.group(1))
        elif re.fullmatch(r"!\d+", part):
            items.append(part)
        else:
            raise ctx.err(f"malformed metadata operand '{part}' in '{text}'", line)
    return tuple(items)


def _scope_md(arg: str, ctx: _Ctx, line: int) -> tuple[str, bool]:
    """The scope argument of an av intrinsic: `metadata !"agent"` or `metadata !N`."""
    m = re.fullmatch(r'metadata\s+(!"[^"]*"|!\d+)', arg.strip())
    if not m:
        raise ctx.err(f"expected a scope argument `metadata !\"S\"` or `metadata !N`, got "
                      f"'{arg.strip()}'", line)
    md = m.group(1)
    if md.startswith('!"'):
        return _scope(md[2:-1], ctx, line)
    if md not in ctx.metadata:
        raise ctx.err(f"metadata node {md} is not defined under metadata:", line)
    items = ctx.metadata[md]
    if len(items) != 1 or items[0].startswith("!"):
        raise ctx.err(f'scope metadata {md} must be a single string, e.g. !{{!"agent"}}', line)
    return _scope(items[0], ctx, line)


def _ptr_arg(arg: str, ctx: _Ctx, line: int) -> tuple[str, int]:
    m = re.fullmatch(_PTR, arg.strip())
    if not m:
        raise ctx.err(f"expected a pointer argument `ptr addrspace(N) @x`, got '{arg.strip()}'",
                      line)
    return _location(m, ctx, line)


def _int_arg(arg: str, ctx: _Ctx, line: int) -> int:
    m = re.fullmatch(r"i(?:1|16|32|64)\s+(-?\w+)", arg.strip())
    if not m:
        raise ctx.err(f"expected an integer argument like `i32 0`, got '{arg.strip()}'", line)
    return parse_int(m.group(1), ctx, line, "argument")


def parse_instr(raw: str, ctx: _Ctx, line: int) -> Instr:
    text = strip_comment(raw).strip()
    mmra: frozenset = frozenset()
    m = RE_MMRA.search(text)
    if m:
        mmra = resolve_mmra(m.group("md"), ctx.metadata, ctx, line)
        text = text[: m.start()].rstrip()
    text = RE_ALIGN.sub("", text).strip()
    if RE_MMRA.search(text):
        raise ctx.err("more than one !mmra attachment", line)
    src = strip_comment(raw).strip()

    if (m := RE_LOAD.fullmatch(text)):
        loc, a = _location(m, ctx, line)
        atomic = bool(m.group("atomic"))
        ins = Instr("load", line, src, reg=m.group("reg"), loc=loc, addrspace=a, atomic=atomic,
                    volatile=bool(m.group("volatile")), mmra=mmra)
        _atomic_attrs(ins, m, LOAD_ORDERS, "an atomic load", ctx, line)
        return _private_constant(ins, ctx, line)
    if (m := RE_STORE.fullmatch(text)):
        loc, a = _location(m, ctx, line)
        ins = Instr("store", line, src, loc=loc, addrspace=a, atomic=bool(m.group("atomic")),
                    volatile=bool(m.group("volatile")),
                    value=_operand(m.group("val"), ctx, line), mmra=mmra)
        _atomic_attrs(ins, m, STORE_ORDERS, "an atomic store", ctx, line)
        return _private_constant(ins, ctx, line)
    if (m := RE_RMW.fullmatch(text)):
        loc, a = _location(m, ctx, line)
        if m.group("op") not in RMW_OPS:
            raise ctx.err(f"unknown atomicrmw operation '{m.group('op')}' (expected one of: "
                          f"{', '.join(RMW_OPS)})", line)
        scope, one_as = _scope(m.group("scope"), ctx, line)
        return _private_constant(Instr("rmw", line, src, reg=m.group("reg"), loc=loc,
                                       addrspace=a, atomic=True,
                     volatile=bool(m.group("volatile")), op=m.group("op"),
                     value=_operand(m.group("val"), ctx, line),
                     order=_order(m.group("order"), RMW_ORDERS, "atomicrmw", ctx, line),
                     scope=scope, one_as=one_as, mmra=mmra), ctx, line)
    if (m := RE_CMPXCHG.fullmatch(text)):
        loc, a = _location(m, ctx, line)
        scope, one_as = _scope(m.group("scope"), ctx, line)
        return _private_constant(Instr("cmpxchg", line, src, reg=m.group("reg"), loc=loc,
                                       addrspace=a,
                     atomic=True, volatile=bool(m.group("volatile")),
                     expected=_operand(m.group("exp"), ctx, line),
                     value=_operand(m.group("new"), ctx, line),
                     order=_order(m.group("order"), RMW_ORDERS, "cmpxchg (success)", ctx, line),
                     fail_order=_order(m.group("fail"), FAIL_ORDERS, "cmpxchg (failure)", ctx,
                                       line),
                     scope=scope, one_as=one_as, mmra=mmra), ctx, line)
    if (m := RE_FENCE.fullmatch(text)):
        scope, one_as = _scope(m.group("scope"), ctx, line)
        return Instr("fence", line, src, order=_order(m.group("order"), FENCE_ORDERS, "fence",
                                                      ctx, line),
                     scope=scope, one_as=one_as, mmra=mmra)
    if (m := RE_CALL.fullmatch(text)):
        return _call(m, src, mmra, ctx, line)
    cf = _control(text, src, ctx, line)
    if cf is not None:
        if mmra:
            raise ctx.err(f"'{cf.kind}' takes no !mmra attachment", line)
        return cf
    raise ctx.err(_diagnose(text), line)


# ---- control flow (docs/semantics.md section 15) -------------------------------------------

_LBL = r"[A-Za-z_.$][\w.$]*|\d+"
_OPD = r"-?(?:0[xX][0-9a-fA-F]+|\d+)|%[\w.$]+"
ICMP_PREDS = ("eq", "ne", "slt", "sgt", "sle", "sge", "ult", "ugt", "ule", "uge")
BINOPS = ("add", "sub", "mul", "and", "or", "xor", "shl", "lshr", "ashr")
RE_LABEL = _Lazy(rf"(?P<name>{_LBL}):")
RE_BR = _Lazy(rf"br\s+label\s+%(?P<t>{_LBL})")
RE_CBR = _Lazy(rf"br\s+i1\s+(?P<c>%[\w.$]+|true|false)\s*,\s*label\s+%(?P<a>{_LBL})\s*,"
                    rf"\s*label\s+%(?P<b>{_LBL})")
RE_ICMP = _Lazy(_REGDEF + rf"icmp\s+(?P<op>\w+)\s+i32\s+(?P<a>{_OPD})\s*,\s*(?P<b>{_OPD})")
RE_BINOP = _Lazy(_REGDEF + rf"(?P<op>\w+)(?P<flags>(?:\s+(?:nsw|nuw|exact))*)\s+i32\s+"
                      rf"(?P<a>{_OPD})\s*,\s*(?P<b>{_OPD})")
RE_SELECT = _Lazy(_REGDEF + rf"select\s+i1\s+(?P<c>%[\w.$]+|true|false)\s*,\s*i32\s+"
                       rf"(?P<a>{_OPD})\s*,\s*i32\s+(?P<b>{_OPD})")
RE_PHI = _Lazy(_REGDEF + r"phi\s+i32\s+(?P<rest>\[.*\])")
RE_PHI_IN = _Lazy(rf"\[\s*(?P<v>{_OPD})\s*,\s*%(?P<l>{_LBL})\s*\]")


def _bool(text: str) -> Any:
    return {"true": 1, "false": 0}.get(text, Reg(text[1:]) if text.startswith("%") else text)


def _control(text: str, src: str, ctx: _Ctx, line: int) -> Optional[Instr]:
    """Labels, br, icmp, i32 arithmetic, select, phi, ret void (docs section 15.1)."""
    if (m := RE_LABEL.fullmatch(text)):
        return Instr("label", line, src, targets=(m.group("name"),))
    if text == "ret void":
        return Instr("ret", line, src)
    if (m := RE_BR.fullmatch(text)):
        return Instr("br", line, src, targets=(m.group("t"),))
    if (m := RE_CBR.fullmatch(text)):
        return Instr("br", line, src, ops=(_bool(m.group("c")),),
                     targets=(m.group("a"), m.group("b")))
    if (m := RE_ICMP.fullmatch(text)):
        if m.group("op") not in ICMP_PREDS:
            raise ctx.err(f"unknown icmp predicate '{m.group('op')}' (expected one of: "
                          f"{', '.join(ICMP_PREDS)})", line)
        return Instr("icmp", line, src, reg=m.group("reg"), op=m.group("op"),
                     ops=(_operand(m.group("a"), ctx, line), _operand(m.group("b"), ctx, line)))
    if (m := RE_SELECT.fullmatch(text)):
        return Instr("select", line, src, reg=m.group("reg"),
                     ops=(_bool(m.group("c")), _operand(m.group("a"), ctx, line),
                          _operand(m.group("b"), ctx, line)))
    if (m := RE_PHI.fullmatch(text)):
        rest = m.group("rest")
        items = list(RE_PHI_IN.finditer(rest))
        if not items or RE_PHI_IN.sub("", rest).replace(",", "").strip():
            raise ctx.err(f"malformed phi '{show(text)}' (form: %r = phi i32 [ V, %L1 ], "
                          "[ V, %L2 ] ...)", line)
        return Instr("phi", line, src, reg=m.group("reg"),
                     ops=tuple(_operand(i.group("v"), ctx, line) for i in items),
                     targets=tuple(i.group("l") for i in items))
    if (m := RE_BINOP.fullmatch(text)):
        if m.group("op") not in BINOPS:
            return None
        if m.group("flags").strip():
            raise ctx.err(f"'{m.group('op')}': the poison-generating flags "
                          f"({m.group('flags').strip()}) are not supported", line)
        return Instr("binop", line, src, reg=m.group("reg"), op=m.group("op"),
                     ops=(_operand(m.group("a"), ctx, line), _operand(m.group("b"), ctx, line)))
    word = text.split()[2] if len(text.split()) > 2 and text.split()[1] == "=" else text.split()[0]
    forms = {"br": "br label %L | br i1 %c, label %A, label %B",
             "icmp": "%c = icmp PRED i32 A, B", "select": "%r = select i1 %c, i32 A, i32 B",
             "phi": "%r = phi i32 [ V, %L1 ], [ V, %L2 ]", "ret": "ret void"}
    forms.update({b: f"%r = {b} i32 A, B" for b in BINOPS})
    if word in forms:
        ty = re.search(r"\b(i(?:8|16|64|128)|float|double|half|<[^>]*>)\s", text)
        extra = f": only i32 values (and i1 conditions) are supported (got {ty.group(1)})" \
            if ty else ""
        raise ctx.err(f"malformed {word} '{show(text)}'{extra} (form: {forms[word]})", line)
    return None


FORMS = {
    "load": "%r = load [atomic] [volatile] i32, ptr addrspace(A) @x [syncscope(\"S\")] [ORDER]",
    "store": "store [atomic] [volatile] i32 V, ptr addrspace(A) @x [syncscope(\"S\")] [ORDER]",
    "atomicrmw": "%r = atomicrmw OP ptr addrspace(A) @x, i32 V [syncscope(\"S\")] ORDER",
    "cmpxchg": "%r = cmpxchg ptr addrspace(A) @x, i32 E, i32 N [syncscope(\"S\")] SUCC FAIL",
    "fence": "fence [syncscope(\"S\")] ORDER",
    "call": "[%r =] call TYPE @llvm.amdgcn.NAME(ARGS)",
}


def _diagnose(text: str) -> str:
    """Say what is wrong with an instruction none of the forms matched."""
    words = text.split()
    word = words[0] if words else text
    if len(words) > 2 and words[1] == "=":
        word = words[2]
    if word not in FORMS:
        return (f"unknown or malformed instruction '{show(text)}' ('{show(word)}' is not a "
                "supported instruction)")
    ty = re.search(r"\b(i(?:1|8|16|64|128)|float|double|half|<[^>]*>)\s", text)
    if word != "call" and ty:
        return f"{word}: only i32 values are supported (got {ty.group(1)}) in '{show(text)}'"
    if word in ("load", "store", "atomicrmw", "cmpxchg") and not re.search(r"\bptr\b", text):
        return (f"{word}: expected a pointer operand `ptr addrspace(A) @x` in '{show(text)}'"
                f" (form: {FORMS[word]})")
    if word == "store" and re.match(r"store(\s+atomic)?(\s+volatile)?\s+i32\s*,", text):
        return f"store: missing the value to store in '{show(text)}' (form: {FORMS[word]})"
    if word in ("load", "atomicrmw", "cmpxchg") and not text.startswith("%"):
        return f"{word} must define a register: `%r = {word} ...` (form: {FORMS[word]})"
    return f"malformed {word} '{show(text)}' (form: {FORMS[word]})"



def _atomic_attrs(ins: Instr, m: re.Match, allowed: set, what: str, ctx: _Ctx, line: int):
    if ins.atomic:
        ins.order = _order(m.group("order"), allowed, what, ctx, line)
        ins.scope, ins.one_as = _scope(m.group("scope"), ctx, line)
    else:
        if m.group("order") or m.group("scope") is not None:
            raise ctx.err(f"a non-atomic {ins.kind} takes no ordering or syncscope "
                          f"(write `{ins.kind} atomic` for an atomic access)", line)


def _no_declared(loc: str, name: str, ctx: _Ctx, line: int) -> None:
    """The av and DMA intrinsics take global (addrspace(1) / flat) and LDS pointers (S000, S002
    intrinsic signatures); a private or constant location is none of these (docs 16)."""
    d = ctx.memory[loc].declared
    if d:
        raise ctx.err(f"'@{name}' takes a global or LDS pointer; '@{loc}' is in the {d} "
                      "address space", line)


def _call(m: re.Match, src: str, mmra: frozenset, ctx: _Ctx, line: int) -> Instr:
    name, ty, reg = m.group("name"), m.group("ty"), m.group("reg")
    args = [a for a in split_commas(m.group("args"))] if m.group("args").strip() else []
    if name in AV_STORE:
        if reg or ty != "void" or len(args) != 3:
            raise ctx.err(f"expected `call void @{name}(ptr addrspace(1) @x, i32 V, "
                          "metadata !\"S\")`", line)
        loc, a = _ptr_arg(args[0], ctx, line)
        _no_declared(loc, name, ctx, line)
        vm = re.fullmatch(r"i32\s+(-?\d+|%[\w.$]+)", args[1].strip())
        if not vm:
            raise ctx.err(f"expected the stored value `i32 V`, got '{args[1].strip()}'", line)
        scope, one_as = _scope_md(args[2], ctx, line)
        return Instr("av_store", line, src, loc=loc, addrspace=a,
                     value=_operand(vm.group(1), ctx, line), scope=scope, one_as=one_as,
                     mmra=mmra, intrinsic=name)
    if name in AV_LOAD:
        if not reg or ty != "i32" or len(args) != 2:
            raise ctx.err(f"expected `%r = call i32 @{name}(ptr addrspace(1) @x, "
                          "metadata !\"S\")`", line)
        loc, a = _ptr_arg(args[0], ctx, line)
        _no_declared(loc, name, ctx, line)
        scope, one_as = _scope_md(args[1], ctx, line)
        return Instr("av_load", line, src, reg=reg, loc=loc, addrspace=a, scope=scope,
                     one_as=one_as, mmra=mmra, intrinsic=name)
    if name in BARRIER or is_async_intrinsic(name) or asyncops.sync_dma_base(name):
        parsed = []
        for a in args:
            a = a.strip()
            if name in BARRIER and re.fullmatch(r"ptr(?:\s+addrspace\(3\))?\s+null", a):
                parsed.append(("null", None))     # the NULL named barrier (S002: ID 0)
                continue
            if re.fullmatch(_PTR, a):
                pm = re.fullmatch(_PTR, a)
                n = pm.group("loc")
                if n not in ctx.memory:
                    raise ctx.err(f"location '@{n}' is not declared under memory:", line)
                sp = ctx.memory[n].space
                if name in BARRIER and sp != "barrier":
                    raise ctx.err(f"'@{n}' is not a barrier object (declare it with space: "
                                  "barrier)", line)
                if name not in BARRIER:
                    _location(pm, ctx, line)    # memory, in the addrspace the pointer names
                    _no_declared(n, name, ctx, line)
                parsed.append(("ptr", n))
            else:
                parsed.append(("int", _int_arg(a, ctx, line)))
        if name not in BARRIER:
            return _async_call(name, ty, reg, parsed, src, mmra, ctx, line)
        return Instr("barrier", line, src, reg=reg, mmra=mmra, intrinsic=name,
                     args=tuple(parsed))
    if name in ID_INTRINSICS:
        return _id_call(name, ty, reg, args, src, mmra, ctx, line)
    if name in DS_BARRIER_ARRIVE:
        # docs 16.2: UP (AMDGPUUsage intrinsic table) gives the memory-model class only
        raise ctx.err(f"'@{name}' is refused: UP says only \"{DS_BARRIER_ARRIVE[name]}\" and "
                      "neither UP nor the seeds say which operation it performs or what "
                      "value it writes and returns (an i64 barrier state), so no outcome can "
                      "be derived (docs/semantics.md 16.2)", line)
    raise ctx.err(f"unknown intrinsic '@{name}'", line)


ID_INTRINSICS = {"llvm.amdgcn.workitem.id.x", "llvm.amdgcn.workitem.id.y",
                 "llvm.amdgcn.workitem.id.z", "llvm.amdgcn.workgroup.id.x",
                 "llvm.amdgcn.workgroup.id.y", "llvm.amdgcn.workgroup.id.z",
                 "llvm.amdgcn.mbcnt.lo", "llvm.amdgcn.mbcnt.hi"}


def mbcnt(which: str, mask: int, lane: int) -> int:
    """v_mbcnt_lo/hi_u32_b32 without the addend: the number of bits set in `mask` among the
    lanes below `lane` (lo: lanes 0-31, bit i of the mask for lane i; hi: lanes 32-63, bit i
    for lane 32 + i)."""
    mask &= 0xFFFFFFFF
    below = min(lane, 32) if which == "lo" else max(lane - 32, 0)
    return bin(mask & ((1 << below) - 1)).count("1")


def _id_call(name, ty, reg, args, src, mmra, ctx: _Ctx, line: int) -> Instr:
    """The id intrinsics of a thread group (docs/litmus-format.md "Thread groups", semantics
    15.10): each thread's value is a constant, so the call becomes `%r = add i32 K, 0` (for
    mbcnt: `%r = add i32 SRC, K`), the control-flow arithmetic both engines already fold."""
    short = name[len("llvm.amdgcn."):]
    if ctx.ids is None:
        raise ctx.err(f"'@{name}' gives a thread's id within a thread group: declare the thread "
                      "as a group (`count: N` under threads:, docs/litmus-format.md \"Thread "
                      "groups\")", line)
    if mmra:
        raise ctx.err(f"'@{name}' takes no !mmra attachment (it is no memory operation)", line)
    if not reg or ty != "i32":
        form = ("%r = call i32 @" + name + ("(i32 MASK, i32 V)" if "mbcnt" in name else "()"))
        raise ctx.err(f"expected `{form}`", line)
    if "mbcnt" not in name:
        if args:
            raise ctx.err(f"'@{name}' takes no arguments (`%r = call i32 @{name}()`)", line)
        kind, dim = short.split(".id.")
        value = ctx.ids[kind] if dim == "x" else 0      # groups are one-dimensional
        return Instr("binop", line, src, reg=reg, op="add", ops=(value, 0))
    if len(args) != 2:
        raise ctx.err(f"expected `%r = call i32 @{name}(i32 MASK, i32 V)`", line)
    mm = re.fullmatch(r"i32\s+(-?(?:0[xX][0-9a-fA-F]+|\d+))", args[0].strip())
    if not mm:
        raise ctx.err(f"'@{name}': the mask must be an integer constant `i32 K` (a mask held in "
                      f"a register is not supported), got '{show(args[0].strip())}'", line)
    mask = parse_int(mm.group(1), ctx, line, "mask")
    vm = re.fullmatch(r"i32\s+(-?(?:0[xX][0-9a-fA-F]+|\d+)|%[\w.$]+)", args[1].strip())
    if not vm:
        raise ctx.err(f"'@{name}': expected the addend `i32 V`, got '{show(args[1].strip())}'",
                      line)
    k = mbcnt(short.rsplit(".", 1)[1], mask, ctx.ids["lane"])
    return Instr("binop", line, src, reg=reg, op="add",
                 ops=(_operand(vm.group(1), ctx, line), k))


def _async_call(name, ty, reg, parsed, src, mmra, ctx: _Ctx, line: int) -> Instr:
    """S004 / UP 2.4 async intrinsics (docs/semantics.md 11.2)."""
    def err(msg):
        return ctx.err(msg, line)
    if reg or ty != "void":
        raise err(f"'@{name}' returns void: `call void @{name}(...)`")
    if name in (asyncops.MARK, asyncops.WAIT):
        kind = "asyncmark" if name == asyncops.MARK else "wait_asyncmark"
        return Instr(kind, line, src, mmra=mmra, intrinsic=name,
                     args=asyncops.parse_mark(name, parsed, err))
    d = asyncops.parse_dma(name, parsed, ctx.memory, err)
    if asyncops.sync_dma_base(name):
        # docs 16.1: S002 "LDS DMA loads ... implement volatile (via aux/cpol bit 31)"
        ints = [v for k, v in parsed if k == "int"]
        vol = len(ints) >= 3 and bool((ints[2] & 0xFFFFFFFF) >> 31)
        return Instr("dma_sync", line, src, mmra=mmra, intrinsic=name, volatile=vol,
                     args=(d.base, d.src, d.dst))
    return Instr("dma", line, src, mmra=mmra, intrinsic=name, args=(d.base, d.src, d.dst))


def lower_sync_dma(ins: Instr, reg: str) -> list:
    """docs/semantics.md 16.1: a synchronous LDS DMA is a non-atomic load of the global
    source into a register of its own and a non-atomic store of it to the LDS destination, by
    the issuing thread, in program order. S002: "They interact with caches as if the loaded
    data were being loaded to registers and not to LDS ... They cannot be performed
    atomically"; "the compiler will automatically ensure that the corresponding operation
    has completed before its side-effects are used"."""
    _, src, dst = ins.args
    common = dict(mmra=ins.mmra, intrinsic=ins.intrinsic, volatile=ins.volatile)
    return [Instr("load", ins.line, ins.text, reg=reg, loc=src, addrspace=1, **common),
            Instr("store", ins.line, ins.text, loc=dst, addrspace=3, value=Reg(reg), **common)]


# ---- conditions ---------------------------------------------------------------------------

_TOKEN = re.compile(r"\s*(?:(?P<op>==|!=|&&|\|\||/\\|\\/|=|!|~|\(|\))|"
                    r"(?P<reg>[\w.$]+:%?[\w.$]+)|(?P<loc>@?[A-Za-z_][\w.$]*)|"
                    r"(?P<int>-?\d+))")


MAX_COND_DEPTH = 64


class _CondParser:
    def __init__(self, text: str, test: "_TestCtx", line: int, literal: bool = False):
        self.text, self.test, self.line = text, test, line
        self.toks: list[tuple[str, str]] = []
        self.lines: list[int] = []      # the file line of each token
        self.depth = 0
        self.i = 0
        pos = 0
        s = text
        while pos < len(s) and s[pos].isspace():
            pos += 1
        while pos < len(s):
            m = _TOKEN.match(s, pos)
            tline = line + 1 + s.count("\n", 0, pos) if literal else line
            if not m or m.end() == pos:
                self.line = tline
                raise self._stray(s, pos)
            kind = m.lastgroup
            val = m.group(kind)
            if kind == "op":
                val = {"/\\": "&&", "\\/": "||", "~": "!", "=": "=="}.get(val, val)
            self.toks.append((kind, val))
            self.lines.append(line + 1 + s.count("\n", 0, m.start(kind)) if literal else line)
            pos = m.end()
            while pos < len(s) and s[pos].isspace():
                pos += 1
        self.i = 0

    def _stray(self, s: str, pos: int) -> LitmusError:
        """A character no token starts with: name it; for herd's connectives a hint."""
        ch = s[pos]
        text = " ".join(self.text.split())
        msg = f"unexpected '{show(ch)}' in condition \"{show(text, 120)}\""
        if ch in "/\\":
            msg += (" (herd's /\\ and \\/ need single quotes or a block scalar: inside double "
                    "quotes YAML reads the backslash as an escape; or write && and ||)")
        elif ch in "&|":
            msg += " (and is && or /\\, or is || or \\/)"
        return LitmusError(msg, self.test.file, self.line)

    def err(self, msg: str) -> LitmusError:
        if self.toks and 0 < self.i <= len(self.lines):
            self.line = self.lines[self.i - 1]
        text = " ".join(self.text.split())
        return LitmusError(f"in condition \"{show(text, 120)}\": {msg}", self.test.file,
                           self.line)

    def peek(self) -> Optional[tuple[str, str]]:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self) -> tuple[str, str]:
        t = self.peek()
        if t is None:
            raise self.err("unexpected end")
        self.i += 1
        return t

    def parse(self):
        if not self.toks:
            raise self.err("empty condition")
        c = self.or_()
        if self.peek() is not None:
            raise self.err(f"unexpected '{self.peek()[1]}'")
        return c

    def or_(self):
        args = [self.and_()]
        while self.peek() == ("op", "||"):
            self.take()
            args.append(self.and_())
        return args[0] if len(args) == 1 else BoolOp("or", tuple(args))

    def and_(self):
        args = [self.unary()]
        while self.peek() == ("op", "&&"):
            self.take()
            args.append(self.unary())
        return args[0] if len(args) == 1 else BoolOp("and", tuple(args))

    def unary(self):
        t = self.peek()
        self.depth += 1
        if self.depth > MAX_COND_DEPTH:
            raise self.err(f"parentheses or negations nest too deeply (more than "
                           f"{MAX_COND_DEPTH})")
        try:
            if t == ("op", "!"):
                self.take()
                return Not(self.unary())
            if t == ("op", "("):
                self.take()
                c = self.or_()
                if self.peek() is None:
                    raise self.err("missing ')'")
                if self.take() != ("op", ")"):
                    raise self.err(f"expected ')', got '{self.toks[self.i - 1][1]}'")
                return c
        finally:
            self.depth -= 1
        left = self.term()
        if self.peek() is None:
            raise self.err("expected == or != after a term, got the end of the condition")
        op = self.take()
        if op not in (("op", "=="), ("op", "!=")):
            raise self.err(f"expected == or != after a term, got '{op[1]}'")
        return Cmp(op[1], left, self.term())

    def term(self):
        kind, val = self.take()
        if kind == "int":
            return Const(parse_int(val, self.test.ctx, self.line))
        if kind == "reg":
            tname, reg = val.split(":", 1)
            thread = self.test.thread_by_name(tname)
            if thread is None:
                raise self.err(f"unknown thread '{show(tname)}'")
            reg = reg.lstrip("%")
            if reg not in self.test.regs[thread]:
                raise self.err(f"thread {thread} defines no register %{show(reg)}")
            if reg not in self.test.out[thread]:
                raise self.err(f"register {thread}:%{show(reg)} is not an i32 register defined "
                               "on every complete path of its thread (docs/semantics.md 15.3: "
                               "merge it with a phi)")
            return RegTerm(thread, reg)
        if kind == "loc":
            if val == "undef":
                return Const(None)
            if val == "poison":              # docs/litmus-format.md (issue 28 item 3)
                return Const(POISON)
            name = val.lstrip("@")
            if name not in self.test.ctx.memory or self.test.ctx.memory[name].space == "barrier":
                raise self.err(f"unknown location '@{name}'")
            return LocTerm(name)
        raise self.err(f"unexpected '{val}'")


class _TestCtx:
    def __init__(self, file: str, ctx: _Ctx, threads: list[Thread]):
        self.file = file
        self.ctx = ctx
        self.threads = threads
        self.regs = {t.name: {i.reg for i in t.code if i.reg} for t in threads}
        self.out = {t.name: set(t.out_regs) if t.out_regs is not None else self.regs[t.name]
                    for t in threads}

    def thread_by_name(self, name: str) -> Optional[str]:
        for t in self.threads:
            if t.name == name:
                return t.name
        if name.isdigit() and int(name) < len(self.threads):   # herd: 1:r0
            return self.threads[int(name)].name
        if name.startswith("P") and name[1:].isdigit() and int(name[1:]) < len(self.threads):
            return self.threads[int(name[1:])].name
        return None


def parse_condition(text: str, tctx: _TestCtx, line: int, literal: bool = False) -> Condition:
    return Condition(" ".join(text.split()), line,
                     _CondParser(text, tctx, line, literal).parse())


def parse_test_condition(test: Test, text: str, source: str = "--outcome") -> Condition:
    """A condition given outside the file (e.g. `explain --outcome`), in the test's own terms:
    its locations, threads and registers; errors name `source`."""
    ctx = _Ctx(source, test.memory, {})
    return parse_condition(text, _TestCtx(source, ctx, test.threads), 1)


# ---- the test -----------------------------------------------------------------------------

def _want(node: Node, typ, what: str, file: str):
    if not isinstance(node.value, typ) or (typ is int and isinstance(node.value, bool)):
        tname = {str: "a string", int: "an integer", dict: "a mapping", list: "a list"}.get(
            typ, str(typ))
        raise LitmusError(f"{what} must be {tname}", file, node.line)
    return node.value


def _nonneg(node: Node, what: str, file: str) -> int:
    v = _want(node, int, what, file)
    if v < 0:
        raise LitmusError(f"{what} must be a non-negative integer (got {v})", file, node.line)
    if v > 2 ** 20:
        raise LitmusError(f"{what} {v} is too large (at most {2 ** 20})", file, node.line)
    return v


def parse_text(text: str, file: str) -> Test:
    """Parse one litmus file's text. Raises only LitmusError."""
    return one_line(_parse_text, text, file, "parsing")


def _parse_text(text: str, file: str) -> Test:
    root = load_yaml(text, file)
    top: dict = root.value
    for key, (knode, _) in top.items():
        if key not in TOP_KEYS:
            raise LitmusError(f"unknown key '{key}' (expected one of: "
                              f"{', '.join(sorted(TOP_KEYS))})", file, knode.line)
    for req in ("name", "memory", "threads"):
        if req not in top:
            raise LitmusError(f"missing required key '{req}'", file, 1)
    name = _want(top["name"][1], str, "name", file)
    if not name.strip():
        raise LitmusError("name must not be empty", file, top["name"][1].line)
    desc = top["description"][1].value if "description" in top else ""
    if desc is None:
        desc = ""
    if not isinstance(desc, str):
        raise LitmusError("description must be text", file, top["description"][1].line)
    target = _want(top["target"][1], str, "target", file) if "target" in top else None
    if target is not None:
        try:
            get_target(target)
        except ValueError as e:
            raise LitmusError(str(e), file, top["target"][1].line) from None
    model = _want(top["model"][1], str, "model", file) if "model" in top else None
    model_written = model
    if model and (os.path.sep in model or model.lower().endswith((".yaml", ".yml"))) \
            and not os.path.isabs(model) and os.path.isfile(file):
        # a model file is named relative to the test file (docs/litmus-format.md `model`):
        # resolved here, so that every consumer of the test finds the same file
        model = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(file)), model))

    # metadata nodes
    metadata: dict[str, tuple] = {}
    if "metadata" in top:
        mnode = top["metadata"][1]
        mtext = _want(mnode, str, "metadata", file)
        pre = _Ctx(file, {}, {})
        for off, raw in enumerate(mtext.splitlines()):
            line = mnode.line + 1 + off if mnode.literal else mnode.line
            s = strip_comment(raw).strip()
            if not s:
                continue
            mm = re.fullmatch(r"(!\d+)\s*=\s*(?:distinct\s+)?(!\{.*\})", s)
            if not mm:
                raise LitmusError(f"malformed metadata line '{s}' (expected `!N = !{{...}}`)",
                                  file, line)
            if mm.group(1) in metadata:
                raise LitmusError(f"metadata node {mm.group(1)} defined twice", file, line)
            metadata[mm.group(1)] = parse_md_node(mm.group(2), pre, line)

    # memory
    mem_node = top["memory"][1]
    memory: dict[str, Location] = {}
    for lname, (knode, vnode) in _want(mem_node, dict, "memory", file).items():
        if not re.fullmatch(r"[A-Za-z_.$][\w.$]*", lname):
            raise LitmusError(f"bad location name '{lname}'", file, knode.line)
        spec = _want(vnode, dict, f"memory location '{lname}'", file)
        for k, (kn, _) in spec.items():
            if k not in LOC_KEYS:
                raise LitmusError(f"unknown key '{k}' for location '{lname}' (expected: space, "
                                  "init)", file, kn.line)
        space = spec["space"][1].value if "space" in spec else "global"
        if not isinstance(space, str) or (space not in SPACES
                                           and space not in STORED_AS_GLOBAL):
            raise LitmusError(f"location '{lname}': space must be global, local, private, "
                              f"constant or barrier (got '{space}')", file, vnode.line)
        init: Optional[int] = 0
        if "init" in spec:
            iv = spec["init"][1]
            if iv.value == "undef":
                init = None
            elif isinstance(iv.value, int) and not isinstance(iv.value, bool):
                # the source text, so that 010 is ten as in LLVM IR (not YAML 1.1 octal)
                raw = iv.raw if iv.raw and re.fullmatch(r"-?(0[xX][0-9a-fA-F]+|\d+)",
                                                        iv.raw.strip()) else str(iv.value)
                init = parse_int(raw, _Ctx(file, {}, {}), iv.line, "init")
            else:
                raise LitmusError(f"location '{lname}': init must be an i32 integer or undef",
                                  file, iv.line)
        if space in STORED_AS_GLOBAL:        # docs 16: stored as global memory
            memory[lname] = Location(lname, "global", init, knode.line, declared=space)
            continue
        memory[lname] = Location(lname, space, None if space == "barrier" else init, knode.line)
    if not memory:
        raise LitmusError("memory: declares no location", file, mem_node.line)

    ctx = _Ctx(file, memory, metadata)

    # functions (docs/semantics.md 15.8): inlined into the code that calls them
    funcs: dict = {}
    if "functions" in top:
        fnode = top["functions"][1]
        funcs = parse_functions(_want(fnode, str, "functions", file), fnode.line, fnode.literal,
                                file)

    # threads
    th_node = top["threads"][1]
    tmap = _want(th_node, dict, "threads", file)
    if not tmap:
        raise LitmusError("threads: declares no thread", file, th_node.line)
    if len(tmap) > MAX_THREADS:
        raise LitmusError(f"{len(tmap)} threads: at most {MAX_THREADS} are supported", file,
                          top["threads"][0].line)
    threads: list[Thread] = []
    for tname, (knode, vnode) in tmap.items():
        if not re.fullmatch(r"[A-Za-z_][\w.$]*|\d+", tname):
            raise LitmusError(f"bad thread name '{show(tname)}' (letters, digits, _ . $)", file,
                              knode.line)
        spec = _want(vnode, dict, f"thread '{tname}'", file)
        group = "count" in spec
        allowed = THREAD_KEYS | GROUP_KEYS if group else THREAD_KEYS
        for k, (kn, _) in spec.items():
            if k not in allowed:
                extra = (f"; `{k}` belongs to a thread group, which needs `count: N`"
                         if k in GROUP_KEYS else "")
                raise LitmusError(f"unknown key '{k}' for thread '{tname}' (expected one of: "
                                  f"{', '.join(sorted(allowed))}){extra}", file, kn.line)
        if "code" not in spec:
            raise LitmusError(f"thread '{tname}' has no code:", file, knode.line)
        place = {k: _nonneg(spec[k][1], f"{tname}.{k}", file) for k in
                 ("agent", "cluster", "workgroup", "wavefront") if k in spec}
        plines = {k: spec[k][0].line for k in place}
        members = (_group_members(tname, spec, place, target, file, threads) if group
                   else [(str(tname), place, None)])
        for mname, mplace, ids in members:
            threads.append(_parse_thread(mname, knode, spec["code"][1], mplace, plines, ids,
                                         tname if group else None, memory, metadata, funcs,
                                         file))
    names: dict = {}
    for t in threads:
        if t.name in names:
            raise LitmusError(f"thread name {t.name} is used twice (a thread group names its "
                              f"threads NAME0..NAME(N-1))", file, t.line)
        names[t.name] = t
    if len(threads) > MAX_THREADS:
        raise LitmusError(f"{len(threads)} threads: at most {MAX_THREADS} are supported", file,
                          top["threads"][0].line)

    _check_lds(threads, memory, file)

    tctx = _TestCtx(file, ctx, threads)
    exists = expect = outcomes = None
    if "exists" in top:
        en = top["exists"][1]
        exists = parse_condition(_want(en, str, "exists", file), tctx, en.line, en.literal)
    if "expect" in top:
        xn = top["expect"][1]
        expect = _want(xn, str, "expect", file)
        if expect not in ("allowed", "forbidden", "undefined"):
            raise LitmusError(f"expect must be allowed, forbidden or undefined (got '{expect}')",
                              file, xn.line)
        if expect in ("allowed", "forbidden") and exists is None:
            raise LitmusError(f"expect: {expect} needs an exists: condition", file, xn.line)
    # `exists:` without `expect:` is a question without a claim (an imported .litmus test,
    # docs/herd-import.md): verify reports whether the condition is reachable, never fails on it
    if "outcomes" in top:
        on = top["outcomes"][1]
        outcomes = []
        for item in _want(on, list, "outcomes", file):
            outcomes.append(parse_condition(_want(item, str, "an outcome", file), tctx,
                                            item.line, item.literal))
    unroll, unroll_line, bound = None, None, "fail"
    if "unroll" in top:
        un = top["unroll"][1]
        unroll, unroll_line = _nonneg(un, "unroll", file), un.line
        if not 1 <= unroll <= 64:
            raise LitmusError(f"unroll must be between 1 and 64 (got {unroll})", file, un.line)
    if "bound" in top:
        bn = top["bound"][1]
        bound = _want(bn, str, "bound", file)
        if bound not in ("fail", "assume"):
            raise LitmusError(f"bound must be fail or assume (got '{show(bound)}')", file,
                              bn.line)
    if ("unroll" in top or "bound" in top) and not any(
            i.kind in CF_KINDS for t in threads for i in t.code):
        k = "unroll" if "unroll" in top else "bound"
        raise LitmusError(f"'{k}' needs control flow: no thread has a label or branch", file,
                          top[k][0].line)
    silence = []
    if "silence" in top:   # warnings this test silences by name (amdmm_smt/explain/lint.py)
        from ..errors import ALL_WARNINGS
        for item in _want(top["silence"][1], list, "silence", file):
            wname = _want(item, str, "a warning name in silence", file)
            if wname not in ALL_WARNINGS:
                raise LitmusError(f"unknown warning '{show(wname)}' in silence (known: "
                                  f"{', '.join(sorted(ALL_WARNINGS))})", file, item.line)
            silence.append(wname)
    undefined = None
    if "undefined" in top:
        un = top["undefined"][1]
        undefined = _want(un, str, "undefined", file)
        if undefined != "some":       # docs/semantics.md 10.6 (R-bar-ub)
            raise LitmusError(f"undefined must be 'some' (got '{undefined}'); a test whose every "
                              "execution is undefined says expect: undefined", file, un.line)
        if expect == "undefined":
            raise LitmusError("undefined: some contradicts expect: undefined", file, un.line)
    # shown in tables, logs, JUnit: never a control character or a lone surrogate, whatever
    # the file holds (issue 22 item 9; `"\\e"` is valid YAML)
    name = printable(name)
    return Test(name=name, file=file, line=top["name"][0].line, description=desc.strip(),
                silence=silence, unroll=unroll, unroll_line=unroll_line, bound=bound,
                target_line=top["target"][0].line if "target" in top else None,
                model_line=top["model"][0].line if "model" in top else None,
                model_written=model_written,
                target=target, model=model, memory=memory, threads=threads, metadata=metadata,
                exists=exists, expect=expect, outcomes=outcomes, undefined=undefined)


def _parse_thread(tname: str, knode: Node, cnode: Node, place: dict, plines: dict,
                  ids: Optional[dict], group: Optional[str], memory: dict, metadata: dict,
                  funcs: dict, file: str) -> Thread:
    """One thread's code (a thread group's member: with its ids, docs/litmus-format.md)."""
    ctx = _Ctx(file, memory, metadata, ids)
    ctext = _want(cnode, str, f"code of thread '{tname}'", file)
    code: list[Instr] = []
    defined: dict[str, int] = {}
    flow = False
    # only a literal block (|) keeps the file's lines; other scalars are one place
    lines = [(cnode.line + 1 + off if cnode.literal else cnode.line, raw)
             for off, raw in enumerate(ctext.splitlines())]
    expanded, hidden = inline(lines, funcs, file, tname)
    for line, raw, note, frame in expanded:
        if raw is None:     # docs R-call-async-seq: an execution of a body begins (no event)
            code.append(Instr("enter", line, note, frame=frame))
            continue
        if not strip_comment(raw).strip():
            continue
        try:
            ins = parse_instr(raw, ctx, line)
        except LitmusError as e:
            if note is None:
                raise
            raise type(e)(f"{e.message} ({note})", file, e.line) from None
        ins.frame = frame
        if ins.kind == "dma_sync":          # docs 16.1: lowered to load + store
            reg = f"dma@{line}.{len(code)}"      # '@': no litmus register is named so
            hidden = set(hidden) | {reg}
            lo, st = lower_sync_dma(ins, reg)
            lo.frame = st.frame = frame
            defined[reg] = line
            code.append(lo)
            ins = st
        if ins.kind in CF_KINDS:
            flow = True
        for used in ins.uses() if not flow else ():
            if used not in defined:
                raise LitmusError(f"register %{used} is used before it is defined in "
                                  f"thread {tname}", file, line)
        if ins.reg and not flow:
            if ins.reg in defined:
                raise LitmusError(f"register %{ins.reg} is defined twice in thread {tname} "
                                  f"(first at line {defined[ins.reg]})", file, line)
            defined[ins.reg] = line
        code.append(ins)
    if not code:
        raise LitmusError(f"thread '{tname}' has no instructions", file, cnode.line)
    if len(code) > MAX_INSTRS:
        raise LitmusError(f"thread '{tname}' has {len(code)} instructions: at most "
                          f"{MAX_INSTRS} are supported", file, cnode.line)
    t = Thread(str(tname), place.get("agent", 0), place.get("cluster", 0),
               place.get("workgroup", 0), place.get("wavefront"), code, knode.line, dict(plines),
               group=group)
    if any(i.kind in CF_KINDS for i in code):
        analyse(t, file)      # docs/semantics.md section 15.1
    if hidden:                          # 15.8: a callee's own registers are not shown
        shown = t.out_regs if t.out_regs is not None else [i.reg for i in code if i.reg]
        t.out_regs = [r for r in shown if r not in hidden]
    if group is not None:     # docs/semantics.md 15.10 (R-spmd-site)
        for pos, ins in enumerate(t.code):
            if ins.kind == "barrier":
                ins.site = (group, pos)
    return t


def _group_members(gname: str, spec: dict, place: dict, target: Optional[str], file: str,
                   earlier: list) -> list:
    """A thread group (docs/litmus-format.md "Thread groups"): `count` threads NAME0.. that
    run one code, laid out `per_workgroup` to a workgroup (workgroup numbers from the
    group's `workgroup`, default: all in one) and `lanes` to a wavefront (wavefront numbers
    from the group's `wavefront`; by default, in each workgroup, from the first number no
    `earlier` thread of that workgroup names, so that two groups never share a wave unless
    told to). Returns (name, placement, ids) per thread; ids are the values of the id
    intrinsics."""
    before = len(earlier)
    cnode = spec["count"][1]
    count = _want(cnode, int, f"{gname}.count", file)
    if not 1 <= count <= MAX_THREADS:
        raise LitmusError(f"{gname}.count must be between 1 and {MAX_THREADS} (got {count})",
                          file, cnode.line)
    if before + count > MAX_THREADS:
        raise LitmusError(f"thread group {gname} brings the test to {before + count} threads: "
                          f"at most {MAX_THREADS} are supported", file, cnode.line)

    def key(k: str, default: int, lo: int, hi: int) -> int:
        if k not in spec:
            return default
        n = spec[k][1]
        v = _want(n, int, f"{gname}.{k}", file)
        if not lo <= v <= hi:
            raise LitmusError(f"{gname}.{k} must be between {lo} and {hi} (got {v})", file,
                              n.line)
        return v
    wave_size = 32
    if target is not None and int(re.fullmatch(r"gfx(\d{1,2})..", target).group(1)) < 10:
        wave_size = 64
    if "wave_size" in spec:
        wn = spec["wave_size"][1]
        wave_size = _want(wn, int, f"{gname}.wave_size", file)
        if wave_size not in (32, 64):
            raise LitmusError(f"{gname}.wave_size must be 32 or 64 (got {wave_size})", file,
                              wn.line)
    per_wg = key("per_workgroup", count, 1, count)
    lanes = key("lanes", min(per_wg, wave_size), 1, wave_size)
    out = []
    for i in range(count):
        wg, j = divmod(i, per_wg)
        w, lane = divmod(j, lanes)
        p = dict(place)
        p["workgroup"] = place.get("workgroup", 0) + wg
        if "wavefront" in place:
            base = place["wavefront"]
        else:
            key = (p.get("agent", 0), p.get("cluster", 0), p["workgroup"])
            base = 1 + max((t.wavefront for t in earlier if t.wavefront is not None and
                            (t.agent, t.cluster, t.workgroup) == key), default=-1)
        p["wavefront"] = base + w
        ids = {"workitem": w * wave_size + lane, "workgroup": p["workgroup"], "lane": lane}
        out.append((f"{gname}{i}", p, ids))
    return out


def _check_lds(threads: list[Thread], memory: dict[str, Location], file: str) -> None:
    """LDS lives per workgroup: an LDS location used by two workgroups is an error. Private
    memory per thread (docs 16, S002 "Private": "The memory accessed by a lane of a wavefront
    for any given private address will be different to the memory accessed by another lane"):
    a private location used by two threads is an error."""
    users: dict[str, tuple] = {}
    owner: dict[str, str] = {}
    for t in threads:
        for ins in t.code:
            names = ([ins.loc] if ins.loc else list(ins.args[1:]) if ins.kind == "dma"
                     else [] if ins.kind in ("asyncmark", "wait_asyncmark")
                     else [a[1] for a in ins.args if a[0] == "ptr"])
            for n in names:
                if n is not None and memory[n].declared == "private":
                    if owner.setdefault(n, t.name) != t.name:
                        raise LitmusError(
                            f"private location '@{n}' is used by threads {owner[n]} and "
                            f"{t.name}: each thread has its own private memory (S002 "
                            "\"Private\"); declare one location per thread", file, ins.line)
                if n is None or memory[n].space != "local":
                    continue
                wg = (t.agent, t.cluster, t.workgroup)
                if n in users and users[n][0] != wg:
                    raise LitmusError(
                        f"LDS location '@{n}' is used by threads of different workgroups "
                        f"({users[n][1]} and {t.name}); LDS is per workgroup", file, ins.line)
                users.setdefault(n, (wg, t.name))


def parse_file(path: str, data: Optional[bytes] = None) -> Test:
    """Parse the file at path (its bytes `data` when the caller has read them already, as a
    Dask worker on another machine has)."""
    try:
        if data is None:
            with open(path, "rb") as f:
                data = f.read()
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise LitmusError(f"not a UTF-8 text file (byte 0x{data[e.start]:02x})", path,
                          data.count(b"\n", 0, e.start) + 1) from None
    except OSError as e:
        raise LitmusError(f"cannot read: {e.strerror}", path, None) from None
    return parse_text(text, path)
