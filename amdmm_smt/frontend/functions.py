"""Functions a test defines and calls (issue 18 item 3; docs/semantics.md 15.8): the top-level
key `functions:` holds LLVM `define` blocks, and a thread (or a function) calls them with
`call void @f(ARGS)` / `%r = call i32 @f(ARGS)`. Calls are inlined before anything else reads
the code, the reading S004 and UP 2.4 give as "after inlining" (docs R-call-inline).

    define void @copy(ptr addrspace(1) %src, ptr addrspace(3) %dst, i32 %v) {
      store i32 %v, ptr addrspace(1) %src
      ret void
    }

Inlining is textual and exact: a pointer parameter becomes the `@location` passed, an i32
parameter the constant or caller register passed; every other register and label of the body
is renamed per call site (`%x` -> `%x.f.2`), so two calls never share a name; `ret` ends the
body (a body with branches or several returns gets a return label, and an i32 result a phi).
Each inlined line keeps the line of the function body it came from, and an error in it also
names the call site. Recursion and callees that are not defined are errors with the line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from ..errors import LitmusError

MAX_DEPTH = 16          # nested calls (recursion is refused before this)

RE_DEFINE = re.compile(r"define\s+(?:(?:internal|private|dso_local|hidden)\s+)*(?P<ret>void|i32)\s+"
                       r"@(?P<name>[A-Za-z_.$][\w.$]*)\s*\((?P<params>.*)\)\s*(?:#\d+\s*)*\{$")
RE_DECLARE = re.compile(r"declare\s+.*@(?P<name>[A-Za-z_.$][\w.$]*)\s*\(.*$")
RE_USER_CALL = re.compile(r"(?:%(?P<reg>[\w.$]+)\s*=\s*)?(?:tail\s+|musttail\s+|notail\s+)?call\s+"
                          r"(?P<ty>void|i32)\s+@(?P<name>[A-Za-z_.$][\w.$]*)\s*"
                          r"\((?P<args>.*)\)\s*(?P<rest>,.*)?$")
RE_PARAM = re.compile(r"(?P<ty>ptr(?:\s+addrspace\((?P<as>\d+)\))?|i32)\s+(?:noundef\s+)?"
                      r"%(?P<name>[\w.$]+)")
RE_PTR_ARG = re.compile(r"ptr(?:\s+addrspace\((?P<as>\d+)\))?\s+@(?P<loc>[A-Za-z_.$][\w.$]*)")
RE_I32_ARG = re.compile(r"i32\s+(?:noundef\s+)?(?P<v>-?(?:0[xX][0-9a-fA-F]+|\d+)|%[\w.$]+)")
RE_RET = re.compile(r"ret\s+(?:void|i32\s+(?P<v>-?(?:0[xX][0-9a-fA-F]+|\d+)|%[\w.$]+))$")
RE_LABEL = re.compile(r"(?P<name>[A-Za-z_.$][\w.$]*|\d+):")
RE_NAME = re.compile(r"%(?P<name>[\w.$]+)")
CF_WORDS = re.compile(r"^(?:br|ret|switch)\b|^[A-Za-z_.$\d][\w.$]*:$|=\s*phi\b")


def strip_comment(line: str) -> str:
    """Remove a `;` comment, ignoring `;` inside a quoted string."""
    in_str = False
    for i, ch in enumerate(line):
        if ch == '"':
            in_str = not in_str
        elif ch == ";" and not in_str:
            return line[:i]
    return line


def split_commas(s: str) -> list[str]:
    """Split call arguments at commas outside quoted strings."""
    out, cur, in_str = [], "", False
    for ch in s:
        if ch == '"':
            in_str = not in_str
        if ch == "," and not in_str:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return out


@dataclass
class Param:
    """A parameter of a function."""
    name: str
    kind: str                  # "ptr" | "i32"
    addrspace: Optional[int]   # ptr: the written address space (None: `ptr`, flat)


@dataclass
class Function:
    """A function a test defines."""
    name: str
    ret: str                   # "void" | "i32"
    params: list
    body: list                 # [(line, text)] without comments and blank lines
    line: int


def parse_functions(text: str, first_line: int, literal: bool, file: str) -> dict:
    """The `functions:` block: `define` ... `}` blocks (and `declare` lines, which are refused
    only if called: an unknown callee cannot be verified)."""
    funcs: dict[str, Function] = {}
    cur: Optional[Function] = None
    for off, raw in enumerate(text.splitlines()):
        line = first_line + 1 + off if literal else first_line
        s = strip_comment(raw).strip()
        if not s:
            continue
        if cur is None:
            m = RE_DEFINE.fullmatch(s)
            if m:
                name = m.group("name")
                if name.startswith("llvm."):
                    raise LitmusError(f"'@{name}': a test cannot define an intrinsic", file, line)
                if name in funcs:
                    raise LitmusError(f"function @{name} is defined twice (first at line "
                                      f"{funcs[name].line})", file, line)
                cur = Function(name, m.group("ret"), _params(m.group("params"), file, line), [],
                               line)
                continue
            if RE_DECLARE.fullmatch(s):
                continue
            raise LitmusError(f"expected `define void|i32 @NAME(PARAMS) {{` in functions:, got "
                              f"'{s[:80]}'", file, line)
        if s == "}":
            if not cur.body:
                raise LitmusError(f"function @{cur.name} has no instructions (end it with "
                                  "`ret void`)", file, line)
            funcs[cur.name] = cur
            cur = None
            continue
        cur.body.append((line, s))
    if cur is not None:
        raise LitmusError(f"function @{cur.name} is not closed with `}}`", file, cur.line)
    for f in funcs.values():
        if not any(RE_RET.fullmatch(t) for _, t in f.body):
            raise LitmusError(f"function @{f.name} never returns (no `ret`)", file, f.line)
        for ln, t in f.body:
            r = RE_RET.fullmatch(t)
            if r and (r.group("v") is None) != (f.ret == "void"):
                raise LitmusError(f"@{f.name} returns {f.ret}: `{t}` does not", file, ln)
    return funcs


def _params(text: str, file: str, line: int) -> list:
    out: list[Param] = []
    if not text.strip():
        return out
    for p in split_commas(text):
        m = RE_PARAM.fullmatch(p.strip())
        if not m:
            raise LitmusError(f"parameter '{p.strip()}': expected `ptr addrspace(N) %name` or "
                              "`i32 %name`", file, line)
        if any(q.name == m.group("name") for q in out):
            raise LitmusError(f"parameter %{m.group('name')} appears twice", file, line)
        kind = "i32" if m.group("ty") == "i32" else "ptr"
        out.append(Param(m.group("name"), kind,
                         int(m.group("as")) if m.group("as") is not None else None))
    return out


def is_user_call(text: str) -> Optional[re.Match]:
    """A call of a function that is not an intrinsic (`@llvm.*`): the match, else None."""
    m = RE_USER_CALL.fullmatch(text)
    if m and not m.group("name").startswith("llvm."):
        return m
    return None


def inline(lines: list, funcs: dict, file: str, where: str) -> tuple[list, set]:
    """Thread code [(line, text)] with every call of a defined function replaced by the body.
    Returns ([(line, text, note, frame)], hidden): `note` names the call sites an inlined line
    came through (None for the thread's own lines); `frame` the call numbers it came through
    (() for the thread's own lines); `hidden` the callee-local registers, which an outcome
    does not show (the caller's register of `%r = call` is shown). Each call's body is preceded
    by an entry line whose text is None (docs R-call-async-seq: one execution of a function
    body, with its own asyncmark sequence, begins there)."""
    counter, hidden = [0], set()
    return _expand(lines, funcs, file, where, counter, [], None, hidden, ()), hidden


RE_DEF = re.compile(r"%(?P<name>[\w.$]+)\s*=")


def _expand(lines, funcs, file, where, counter, stack, note, hidden, frame) -> list:
    out = []
    for line, raw in lines:
        s = strip_comment(raw).strip()
        m = is_user_call(s) if s else None
        if not m:
            out.append((line, raw, note, frame))
            continue
        name = m.group("name")
        if name not in funcs:
            raise LitmusError(f"call of @{name}, which the test does not define: an unknown "
                              f"callee cannot be verified (define it under functions:)", file,
                              line)
        if name in stack:
            raise LitmusError(f"recursive call of @{name} ({' -> '.join('@' + n for n in stack)}"
                              f" -> @{name}): calls are inlined, recursion is not supported",
                              file, line)
        if len(stack) >= MAX_DEPTH:
            raise LitmusError(f"calls nest more than {MAX_DEPTH} deep", file, line)
        if m.group("rest"):
            raise LitmusError(f"a call of @{name} takes no metadata or attributes after its "
                              "arguments", file, line)
        f = funcs[name]
        counter[0] += 1
        k = counter[0]
        body = _instance(f, m, k, file, line)
        for _, t in body:
            d = RE_DEF.match(t)
            if d and d.group("name") != m.group("reg"):
                hidden.add(d.group("name"))
        here = f"in @{name}, called at line {line}" + (f"; {note}" if note else "")
        out.append((line, None, s, frame + (k,)))      # the body's execution begins here
        out += _expand(body, funcs, file, where, counter, stack + [name], here, hidden,
                       frame + (k,))
    return out


def _instance(f: Function, call: re.Match, k: int, file: str, line: int) -> list:
    """One call site's copy of f's body, parameters bound, names renamed, `ret` resolved."""
    ty, reg = call.group("ty"), call.group("reg")
    if ty != f.ret:
        raise LitmusError(f"@{f.name} returns {f.ret}, called as {ty}", file, line)
    if reg and f.ret == "void":
        raise LitmusError(f"@{f.name} returns void: its call defines no register", file, line)
    args = [a.strip() for a in split_commas(call.group("args"))] if call.group("args").strip() \
        else []
    if len(args) != len(f.params):
        raise LitmusError(f"@{f.name} takes {len(f.params)} argument(s), {len(args)} given",
                          file, line)
    bind: dict[str, str] = {}
    for i, (p, a) in enumerate(zip(f.params, args), 1):
        if p.kind == "ptr":
            am = RE_PTR_ARG.fullmatch(a)
            if not am:
                raise LitmusError(f"argument {i} of @{f.name} ('{a}'): expected a location "
                                  f"`ptr addrspace({p.addrspace or 0}) @x` for %{p.name}", file,
                                  line)
            got = int(am.group("as")) if am.group("as") is not None else None
            if (got or 0) != (p.addrspace or 0):
                raise LitmusError(f"argument {i} of @{f.name}: a pointer in addrspace("
                                  f"{got or 0}) for %{p.name}, declared addrspace("
                                  f"{p.addrspace or 0})", file, line)
            bind[p.name] = "@" + am.group("loc")
        else:
            im = RE_I32_ARG.fullmatch(a)
            if not im:
                raise LitmusError(f"argument {i} of @{f.name} ('{a}'): expected `i32 V` (a "
                                  f"constant or a register) for %{p.name}", file, line)
            bind[p.name] = im.group("v")
    sfx = f".{f.name}.{k}"

    def rename(text: str) -> str:
        def sub(mm: re.Match) -> str:
            n = mm.group("name")
            return bind[n] if n in bind else f"%{n}{sfx}"
        lab = RE_LABEL.fullmatch(text)
        if lab:
            return lab.group("name") + sfx + ":"
        return RE_NAME.sub(sub, text)

    rets = [i for i, (_, t) in enumerate(f.body) if RE_RET.fullmatch(t)]
    flow = any(CF_WORDS.search(t) for _, t in f.body if not RE_RET.fullmatch(t))
    if not flow and rets == [len(f.body) - 1]:
        # straight-line body: spliced in place; the result, if any, is the returned value
        body = [(ln, rename(t)) for ln, t in f.body[:-1]]
        v = RE_RET.fullmatch(f.body[-1][1]).group("v")
        if reg:
            rv = rename(v) if v.startswith("%") else v
            if rv.startswith("%") and any(re.match(rf"{re.escape(rv)}\s*=", t) for _, t in body):
                # the returned register is defined here: it becomes the caller's register
                body = [(ln, RE_NAME.sub(lambda mm: f"%{reg}" if "%" + mm.group("name") == rv
                                         else mm.group(0), t)) for ln, t in body]
            else:                       # a constant or an argument: copied
                body.append((f.body[-1][0], f"%{reg} = add i32 {rv}, 0"))
        return body
    # with branches: an entry label, every ret a branch to the return label, a phi for i32
    exit_ = f"ret{sfx}"
    first = RE_LABEL.fullmatch(f.body[0][1])
    block = first.group("name") + sfx if first else f"entry{sfx}"
    body = [] if first else [(f.line, f"{block}:")]
    incoming = []
    for ln, t in f.body:
        lab = RE_LABEL.fullmatch(t)
        if lab:
            block = lab.group("name") + sfx
        r = RE_RET.fullmatch(t)
        if r:
            if r.group("v") is not None:
                v = r.group("v")
                incoming.append((rename(v) if v.startswith("%") else v, block))
            body.append((ln, f"br label %{exit_}"))
            continue
        body.append((ln, rename(t)))
    body.append((f.body[rets[-1]][0], f"{exit_}:"))
    if reg:
        body.append((f.body[rets[-1]][0], f"%{reg} = phi i32 "
                     + ", ".join(f"[ {v}, %{b} ]" for v, b in incoming)))
    return body
