"""Import herd / Dartagnan `.litmus` tests in their C11 / OpenCL dialect into the YAML contract
(docs/litmus-format.md). The mapping, and where verdicts may legitimately differ, is
documented in docs/herd-import.md.

Three stages, so that control flow (issue 11) can be added later without rewriting:

1. `lex` + `_Parser`: the file -> an AST of the C subset (`Program`, `ThreadAst`, statements
   `Decl Assign ExprStmt Barrier If While Goto Label Block`, expressions `Num Var Deref AddrOf
   Call BinOp Unary`). The parser accepts `if` / `else`, `while`, `goto` and labels into the
   AST; it rejects only what no later stage could map.
2. `_Lower`: the AST of one thread -> LLVM IR lines, each with its .litmus line: `if` /
   `else`, `while`, `goto` and labels become blocks, `br`, `icmp` and `phi`
   (docs/herd-import.md "Control flow"); `for` is parsed into its `while`, `?:` becomes a
   `select` or a branch and a `phi`; `do`, `continue`, `break` are refused.
3. `_emit`: the YAML text, with a map from each YAML line to the .litmus line it came from, so
   that every later error (parser, elaborator, solver) names the .litmus file and line.

Every problem is a `LitmusError` naming the .litmus file and line; nothing is skipped silently.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Optional

from ...errors import LitmusError, one_line, show
from .lower import ConstV, FlagV, RegV, UninitV, _Lower
from .parser import parse_program
from .syntax import ARITH, CONTROL_FLOW, CondOp, Program
from ..litmus import parse_text



# ---- the YAML -----------------------------------------------------------------------------

@dataclass
class Imported:
    yaml: str
    linemap: dict          # YAML line -> .litmus line
    name: str
    quantifier: Optional[str] = None    # exists | ~exists | forall (None: no condition)


def convert_text(text: str, file: str) -> Imported:
    """The .litmus text -> YAML text (and its line map). Raises only LitmusError."""
    return one_line(_convert, text, file, "importing")


def _convert(text: str, file: str) -> Imported:
    prog = parse_program(text, file)
    lowered = [_Lower(th, prog, file).run() for th in prog.threads]

    # placement: all threads placed, or none
    placed = [bool(th.place) for th in prog.threads]
    if any(placed) and not all(placed):
        th = prog.threads[placed.index(False)]
        raise LitmusError(f"{th.name} has no placement (@wg N, dev N) while other threads have "
                          "one", file, th.line)
    for th in prog.threads:
        if th.place and "wg" not in th.place:
            raise LitmusError(f"the placement of {th.name} names no wg", file, th.line)

    # memory: every location, its space, its initial value
    spaces: dict[str, tuple] = {}
    for th in prog.threads:
        for p in th.params.values():
            if p.name in spaces and spaces[p.name][0] != p.space:
                raise LitmusError(f"location '{p.name}' is {p.space} in {th.name} but "
                                  f"{spaces[p.name][0]} in {spaces[p.name][1]}", file, p.line)
            spaces.setdefault(p.name, (p.space, th.name, p.line))
    for name, (_, line, sp) in prog.init.items():
        if sp and name in spaces and spaces[name][0] != sp:
            raise LitmusError(f"location '{name}' is {sp} here but {spaces[name][0]} in "
                              f"{spaces[name][1]}", file, line)
    memory: dict[str, tuple] = {}
    for name in sorted(set(spaces) | set(prog.init)):
        sp = spaces[name][0] if name in spaces else (prog.init[name][2] or "global")
        init = prog.init[name][0] if name in prog.init else 0
        line = prog.init[name][1] if name in prog.init else spaces[name][2]
        memory[name] = (sp, init, line)
    for (ti, reg), (_, line) in prog.reg_init.items():
        if ti >= len(prog.threads):
            raise LitmusError(f"register {ti}:{reg} initialised for a thread that does not "
                              "exist", file, line)
        if reg in memory and reg in prog.threads[ti].params:
            raise LitmusError(f"'{reg}' is both a register of P{ti} and a location", file, line)

    # a compare-exchange's expected location must be private to its thread (the write-back
    # is unconditional, which is value-faithful only when no other thread can see it)
    for ti, lo in enumerate(lowered):
        for loc, line in lo.cas_private.items():
            for tj, other in enumerate(lowered):
                if tj != ti and loc in other.uses:
                    raise LitmusError(
                        f"the expected-value location '{loc}' of a compare-exchange in "
                        f"P{ti} is also accessed by P{tj} (line {other.uses[loc]}); writing the "
                        f"observed value back only on failure {CONTROL_FLOW}", file, line)

    # barrier ids (Dartagnan `B0: barrier(...)`) must agree within a work-group
    by_wg: dict = {}
    for th, lo in zip(prog.threads, lowered):
        key = (th.place.get("dev", 0), th.place.get("wg", th.index))
        labels = [lab for lab, _ in lo.barrier_labels]
        if any(lab is not None for lab in labels):
            if key in by_wg and by_wg[key][0] != labels:
                raise LitmusError(f"barrier ids {labels} of {th.name} differ from {by_wg[key][0]} "
                                  f"of {by_wg[key][1]} in the same work-group: barriers match in "
                                  "program order here", file, lo.barrier_labels[0][1])
            by_wg.setdefault(key, (labels, th.name))

    y: list[str] = []
    lmap: dict[int, int] = {}

    def put(s: str, src: Optional[int] = None) -> None:
        y.append(s)
        if src is not None:
            lmap[len(y)] = src

    put(f"name: {_yq(prog.name)}", prog.name_line)
    notes = [n for lo in lowered for n in lo.notes]
    desc = _description(prog, file, notes, lowered)
    put("description: |")
    for d in desc:
        put("  " + d if d else "")
    if any(lo.loops for lo in lowered):
        # docs/herd-import.md "Control flow": herd7 unrolls loops (-unroll, default 2) and
        # drops the executions that need more iterations: the await reading
        put("bound: assume")
    mds = set().union(*(lo.md for lo in lowered))
    if mds:
        put("metadata: |")
        put('  !0 = !{!"amdgpu-synchronize-as", !"global"}')
        put('  !1 = !{!"amdgpu-synchronize-as", !"local"}')
        put("  !2 = !{!0, !1}")
    put("memory:")
    for name, (sp, init, line) in memory.items():
        put(f"  {_yq(name)}: {{space: {sp}, init: {init}}}", line)
    put("threads:")
    for th, lo in zip(prog.threads, lowered):
        put(f"  {th.name}:", th.line)
        if th.place:
            put(f"    agent: {th.place.get('dev', 0)}", th.line)
            put(f"    workgroup: {th.place['wg']}", th.line)
            if "sg" in th.place:
                put(f"    wavefront: {th.place['sg']}", th.line)
        else:
            put(f"    workgroup: {th.index}", th.line)   # no placement: a work-group each
        put("    code: |", th.line)
        if not lo.code:
            raise LitmusError(f"{th.name} performs no memory operation (the YAML contract needs "
                              "at least one instruction per thread)", file, th.line)
        for ir in lo.code:
            put("      " + ir.text, ir.line)
    if prog.cond is not None:
        cond = _cond_text(prog, lowered, file)
        if prog.quantifier == "forall":
            cond = f"!({cond})"
        put(f"exists: {_yq(cond)}", prog.cond_line)
    return Imported("\n".join(y) + "\n", lmap, prog.name, prog.quantifier)


def _yq(text: str) -> str:
    """A YAML double-quoted scalar holding exactly `text` (issue 22 item 9). json.dumps wrote a
    character outside the BMP as a surrogate pair, `"\\ud83d\\ude00"`, which YAML reads as two
    lone surrogates (an emoji name then crashed the output); here printable characters stay
    as they are and the rest is escaped the way YAML reads it back."""
    out = ['"']
    for c in text:
        o = ord(c)
        if c in '"\\':
            out.append("\\" + c)
        elif c.isprintable() and not 0xd800 <= o < 0xe000 and o != 0xfeff:
            out.append(c)
        else:
            out.append(f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}" if o < 0x10000
                       else f"\\U{o:08x}")
    return "".join(out) + '"'


def _description(prog: Program, file: str, notes: list, lowered: list) -> list[str]:
    base = os.path.basename(file)
    out = [f"Imported by amdmm-smt import-herd from {show(base, 200)} ({prog.lang} litmus test "
           f"{show(prog.name, 60)}); mapping: docs/herd-import.md.",
           "A .litmus file claims no verdict, so this test has no expect: verify reports "
           "whether the condition is reachable."]
    if any(lo.loops for lo in lowered):
        out.append("Its loops (while, backward goto) are unrolled (verify --unroll N, default 2) with bound: "
                   "assume, as herd7 does: executions needing more iterations are not "
                   "considered (docs/semantics.md 15.2).")
    q = prog.quantifier
    if q is None:
        out.append("The .litmus file has no final condition.")
    else:
        src = show(prog.cond_text, 200)
        if q == "exists":
            out.append(f"Final condition: `{src}`. herd's exists holds iff the condition "
                       "below is reachable.")
        elif q == "~exists":
            out.append(f"Final condition: `{src}`. herd's ~exists holds iff the condition "
                       "below (the same, without ~) is unreachable.")
        else:
            out.append(f"Final condition: `{src}`. herd's forall holds iff the condition "
                       "below, its negation !(...), is unreachable.")
    if prog.locations_clause is not None:
        out.append(f"The locations [{show(prog.locations_clause, 80)}] clause only selects what "
                   "herd prints; it is not part of the test.")
    if not any(th.place for th in prog.threads):
        out.append("No thread placement given: each thread runs in a work-group of its own "
                   "(P<n> in work-group n of agent 0).")
    if any(lo.cas_private for lo in lowered):
        out.append("compare-exchange: %<r>.expected = load of the expected location; %<r>.old "
                   "= cmpxchg; the old value stored back to the (thread-private) expected "
                   "location, which on success holds that value already; herd's result r is "
                   "1 iff %<r>.old == %<r>.expected.")
    out += notes
    return [show(x, 1000) for x in out]


def _cond_text(prog: Program, lowered: list, file: str) -> str:
    def term(t: tuple) -> tuple:
        if t[0] == "num":
            return ("c", str(t[1]))
        if t[0] == "loc":
            name, line = t[1], t[2]
            if name not in {p for th in prog.threads for p in th.params} | set(prog.init):
                raise LitmusError(f"in the final condition: unknown location '{name}'", file,
                                  line)
            return ("c", f"@{name}")
        ti, reg, line = t[1], t[2], t[3]
        if ti >= len(prog.threads):
            raise LitmusError(f"in the final condition: no thread P{ti}", file, line)
        env = lowered[ti].env
        if reg not in env:
            raise LitmusError(f"in the final condition: P{ti} has no variable '{reg}'", file,
                              line)
        v = env[reg]
        if isinstance(v, ConstV):
            return ("c", str(v.value))
        if isinstance(v, RegV):
            return ("c", f"P{ti}:%{v.reg}")
        if isinstance(v, FlagV):
            return ("flag", f"P{ti}:%{v.old}", f"P{ti}:%{v.exp}")
        if isinstance(v, UninitV) and v.why:
            raise LitmusError(f"in the final condition: P{ti}:{reg} has no value at the end of "
                              f"the thread: {v.why}", file, line)
        raise LitmusError(f"in the final condition: P{ti}:{reg} is never assigned", file, line)

    def walk(c) -> str:
        if isinstance(c, CondOp):
            if c.op == "not":
                return f"!({walk(c.args[0])})"
            sep = " && " if c.op == "and" else " || "
            return "(" + sep.join(walk(a) for a in c.args) + ")"
        a, b = term(c.left), term(c.right)
        if a[0] == "flag" and b[0] == "flag":
            raise LitmusError("in the final condition: comparing two compare-exchange results "
                              f"{ARITH}", file, c.line)
        if b[0] == "flag":
            a, b = b, a
        if a[0] == "flag":
            if not re.fullmatch(r"-?\d+", b[1]):
                raise LitmusError("in the final condition: a compare-exchange result compared "
                                  f"with a register or location {ARITH}", file, c.line)
            k = int(b[1])
            eq = (k == 1) if c.op == "==" else (k != 1)
            if k not in (0, 1):       # the flag is 0 or 1: == k is false, != k true
                return "0 == 0" if c.op == "!=" else "0 != 0"
            return f"{a[1]} {'==' if eq else '!='} {a[2]}"
        return f"{a[1]} {c.op} {b[1]}"

    s = walk(prog.cond)
    return s[1:-1] if s.startswith("(") and _balanced(s[1:-1]) else s


def _balanced(s: str) -> bool:
    d = 0
    for ch in s:
        d += 1 if ch == "(" else -1 if ch == ")" else 0
        if d < 0:
            return False
    return d == 0


# ---- entry points -------------------------------------------------------------------------

def read_litmus(path: str) -> str:
    try:
        with open(path, "rb") as f:
            data = f.read()
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise LitmusError(f"not a UTF-8 text file (byte 0x{data[e.start]:02x})", path,
                          data.count(b"\n", 0, e.start) + 1) from None
    except OSError as e:
        raise LitmusError(f"cannot read: {e.strerror}", path, None) from None


def import_text(text: str, file: str):
    """The .litmus text -> (Imported, ir.Test), every line pointing into the .litmus file."""
    imp = convert_text(text, file)

    def src(line: Optional[int]) -> Optional[int]:
        """The .litmus line of a YAML line: its own, else the nearest mapped one above."""
        if line is None:
            return None
        while line > 0 and line not in imp.linemap:
            line -= 1
        return imp.linemap.get(line, 1)

    try:
        test = parse_text(imp.yaml, file)
    except LitmusError as e:
        raise LitmusError(e.message + " (in the imported test)", file, src(e.line)) from None
    test.line = src(test.line) or 1
    test.target_line = test.model_line = None
    for t in test.threads:
        t.line = src(t.line) or t.line
        t.place_lines = {k: src(v) or v for k, v in t.place_lines.items()}
        for ins in t.code:
            ins.line = src(ins.line) or ins.line
    if test.exists is not None:
        test.exists.line = src(test.exists.line) or test.exists.line
    for name, loc in list(test.memory.items()):
        test.memory[name] = type(loc)(loc.name, loc.space, loc.init, src(loc.line) or loc.line)
    return imp, test


def load_litmus(path: str):
    """A .litmus file as an `ir.Test` (for `verify`); `quantifier` keeps the file's own
    (exists / ~exists / forall) for `verify --format herd`."""
    imp, test = import_text(read_litmus(path), path)
    test.quantifier = imp.quantifier
    return test
