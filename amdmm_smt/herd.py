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
   (docs/herd-import.md "Control flow"); `for`, `do`, `?:` are refused ("needs control flow,
   not supported yet (issue 11)").
3. `_emit`: the YAML text, with a map from each YAML line to the .litmus line it came from, so
   that every later error (parser, elaborator, solver) names the .litmus file and line.

Every problem is a `LitmusError` naming the .litmus file and line; nothing is skipped silently.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Optional, Union

from .errors import LitmusError
from .parse import parse_text, show

I32_MIN, I32_MAX = -(2 ** 31), 2 ** 31 - 1
CONTROL_FLOW = "needs control flow, not supported yet (issue 11)"
ARITH = "needs register arithmetic / icmp in the IR, not supported yet (issue 11)"


# ---- lexing -------------------------------------------------------------------------------

@dataclass
class Tok:
    kind: str      # id num op str eof
    val: object
    line: int
    pos: int = 0   # offset of its first character (after the header line)
    end: int = 0


_OPS3 = ("<<=", ">>=")
_OPS2 = ("/\\", "\\/", "==", "!=", "<=", ">=", "&&", "||", "<<", ">>", "->", "++", "--",
         "+=", "-=", "*=", "/=", "&=", "|=", "^=", "%=")
_OPS1 = "{}()[];,:@*&=+-/^|~!<>%?."


def lex(text: str, file: str, first_line: int) -> list[Tok]:
    """Tokens of `text` (the file after its header line; `first_line` is its line number).
    Comments: `// ...`, `/* ... */`, and herd's `(* ... *)` outside braces (inside a thread
    body `(*x)` is a dereference)."""
    toks: list[Tok] = []
    i, n, line, depth = 0, len(text), first_line, 0
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
            continue
        if c in " \t\r\f\v":
            i += 1
            continue
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        for opener, closer in (("/*", "*/"), ("(*", "*)")):
            if text.startswith(opener, i) and (opener == "/*" or depth == 0):
                j = text.find(closer, i + 2)
                if j < 0:
                    raise LitmusError(f"unterminated comment {opener} (never closed)", file, line)
                line += text.count("\n", i, j)
                i = j + 2
                break
        else:
            if c == '"':
                j = text.find('"', i + 1)
                if j < 0 or "\n" in text[i:j]:
                    raise LitmusError("unterminated string", file, line)
                toks.append(Tok("str", text[i + 1:j], line, i, j + 1))
                i = j + 1
                continue
            if c.isalpha() or c == "_":
                j = i
                while j < n and (text[j].isalnum() or text[j] == "_"):
                    j += 1
                toks.append(Tok("id", text[i:j], line, i, j))
                i = j
                continue
            if c.isdigit():
                m = re.match(r"0[xX][0-9a-fA-F]+|\d+", text[i:])
                j = i + m.end()
                if (j < n and (text[j].isalnum() or text[j] == "_")) or re.fullmatch(
                        r"0\d*[89]\d*", m.group(0)):
                    raise LitmusError(f"malformed number '{show(text[i:j + 1])}' (a leading 0 "
                                      "means octal in C)" if text[i] == "0" and j - i > 1 else
                                      f"malformed number '{show(text[i:j + 1])}'", file, line)
                toks.append(Tok("num", int(m.group(0), 0) if not re.fullmatch(r"0\d+", m.group(0))
                                else int(m.group(0), 8), line, i, j))
                i = j
                continue
            for op in _OPS3 + _OPS2:
                if text.startswith(op, i):
                    toks.append(Tok("op", op, line, i, i + len(op)))
                    i += len(op)
                    break
            else:
                if c in _OPS1:
                    toks.append(Tok("op", c, line, i, i + 1))
                    depth += 1 if c == "{" else -1 if c == "}" else 0
                    i += 1
                else:
                    raise LitmusError(f"unexpected character {c!r}", file, line)
            continue
    toks.append(Tok("eof", None, line, n, n))
    return toks


# ---- the AST ------------------------------------------------------------------------------

@dataclass
class Num:
    value: int
    line: int


@dataclass
class Var:
    name: str
    line: int


@dataclass
class Deref:
    arg: "Expr"
    line: int


@dataclass
class AddrOf:
    arg: "Expr"
    line: int


@dataclass
class Call:
    name: str
    args: list
    line: int
    label: Optional[str] = None     # Dartagnan's barrier id: `B0: barrier(...)`


@dataclass
class BinOp:
    op: str
    left: "Expr"
    right: "Expr"
    line: int


@dataclass
class Unary:
    op: str
    arg: "Expr"
    line: int


Expr = Union[Num, Var, Deref, AddrOf, Call, BinOp, Unary]


@dataclass
class Decl:
    name: str
    init: Optional[Expr]
    line: int


@dataclass
class Assign:
    target: Expr          # Var (a local) or Deref (a store through a pointer)
    value: Expr
    line: int


@dataclass
class ExprStmt:
    expr: Expr
    line: int


@dataclass
class If:
    cond: Expr
    then: list
    other: Optional[list]
    line: int


@dataclass
class While:
    cond: Expr
    body: list
    line: int


@dataclass
class Goto:
    label: str
    line: int


@dataclass
class Label:
    name: str
    line: int


@dataclass
class Block:
    body: list
    line: int


@dataclass
class Param:
    name: str
    space: str            # global | local
    volatile: bool
    atomic: bool
    unsigned: bool
    line: int


@dataclass
class ThreadAst:
    index: int
    name: str
    place: dict           # wg / dev / sg -> int
    params: dict          # name -> Param
    body: list
    line: int


@dataclass
class CondAtom:
    left: tuple           # ("reg", thread, name) | ("loc", name) | ("num", value)
    op: str               # == or !=
    right: tuple
    line: int


@dataclass
class CondOp:
    op: str               # and | or | not
    args: list


@dataclass
class Program:
    lang: str
    name: str
    name_line: int
    init: dict            # location -> (value, line, space-or-None)
    reg_init: dict        # (thread index, reg) -> (value, line)
    threads: list
    quantifier: Optional[str]      # exists | ~exists | forall
    cond: object
    cond_text: str
    cond_line: int
    locations_clause: Optional[str] = None


# ---- parsing ------------------------------------------------------------------------------

TYPE_WORDS = {"int", "unsigned", "uint", "signed", "atomic_int", "atomic_uint", "volatile",
              "const", "global", "__global", "local", "__local", "restrict", "long", "short",
              "char", "float", "double", "atomic_long", "atomic_ulong", "atomic_t", "intptr_t",
              "size_t", "bool", "_Bool", "atomic_bool", "atomic_flag", "spinlock_t", "struct",
              "private", "__private", "constant", "__constant", "generic", "__generic"}
INT_TYPES = {"int", "unsigned", "uint", "signed", "atomic_int", "atomic_uint"}
SPACE_WORDS = {"global": "global", "__global": "global", "local": "local", "__local": "local"}
LANGS = {"c": "C", "opencl": "OpenCL"}


class _Parser:
    def __init__(self, toks: list[Tok], file: str, src: str = ""):
        self.toks, self.i, self.file, self.src = toks, 0, file, src

    # helpers
    def err(self, msg: str, line: Optional[int] = None) -> LitmusError:
        return LitmusError(msg, self.file, self.peek().line if line is None else line)

    def peek(self, k: int = 0) -> Tok:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def take(self) -> Tok:
        t = self.peek()
        if t.kind != "eof":
            self.i += 1
        return t

    def at(self, val, k: int = 0) -> bool:
        t = self.peek(k)
        return t.kind in ("op", "id") and t.val == val

    def expect(self, val, what: str = "") -> Tok:
        t = self.peek()
        if not (t.kind in ("op", "id") and t.val == val):
            raise self.err(f"expected '{val}'{what}, got {self.desc(t)}")
        return self.take()

    @staticmethod
    def desc(t: Tok) -> str:
        if t.kind == "eof":
            return "the end of the file"
        if t.kind == "str":
            return f'"{show(str(t.val), 30)}"'
        return f"'{show(str(t.val), 30)}'"

    def ident(self, what: str) -> Tok:
        t = self.peek()
        if t.kind != "id":
            raise self.err(f"expected {what}, got {self.desc(t)}")
        return self.take()

    def number(self, what: str = "an integer") -> int:
        neg = False
        if self.at("-"):
            self.take()
            neg = True
        t = self.peek()
        if t.kind != "num":
            raise self.err(f"expected {what}, got {self.desc(t)}")
        self.take()
        v = -t.val if neg else t.val
        return _check_i32(v, self.file, t.line)

    # the file
    def program(self, lang: str, name: str, name_line: int) -> Program:
        while self.peek().kind == "str":     # herd's optional doc string
            self.take()
        if not self.at("{"):
            raise self.err(f"expected the initial state '{{ ... }}', got {self.desc(self.peek())}")
        init, reg_init = self.init_block()
        threads: list[ThreadAst] = []
        while self.peek().kind == "id" and re.fullmatch(r"P\d+", str(self.peek().val)):
            threads.append(self.thread(len(threads)))
        if not threads:
            raise self.err(f"expected a thread `P0 (...) {{ ... }}`, got {self.desc(self.peek())}")
        loc_clause = None
        if self.at("locations"):
            start = self.take()
            self.expect("[", " after locations")
            first = self.peek()
            while not self.at("]"):
                if self.peek().kind == "eof":
                    raise self.err("unclosed 'locations [' (never closed)", start.line)
                self.take()
            loc_clause = self.src[first.pos:self.peek().pos].strip()
            self.take()
        if self.peek().kind == "id" and self.peek().val in ("scopes", "regions", "levels") \
                and self.at(":", 1):
            raise self.err(f"herd's '{self.peek().val}:' clause is not supported: give each "
                           "thread its placement in its header (P0@wg 0, dev 0)")
        if self.at("filter"):
            raise self.err("a 'filter' clause restricts the executions considered; the YAML "
                           "contract has no equivalent, so it cannot be mapped")
        quant, cond, ctext, cline = None, None, "", self.peek().line
        t = self.peek()
        if t.kind != "eof":
            start = self.i
            if self.at("exists"):
                quant = "exists"
                self.take()
            elif (self.at("~") or self.at("not")) and self.at("exists", 1):
                quant = "~exists"
                self.take()
                self.take()
            elif self.at("forall"):
                quant = "forall"
                self.take()
            else:
                raise self.err(f"expected the final condition (exists / ~exists / forall), got "
                               f"{self.desc(t)}")
            cline = t.line
            cond = self.cond_or()
            ctext = self.src[self.toks[start].pos:self.toks[self.i - 1].end]
            if self.peek().kind != "eof":
                raise self.err(f"unexpected {self.desc(self.peek())} after the final condition")
        return Program(lang, name, name_line, init, reg_init, threads, quant, cond, ctext, cline,
                       loc_clause)

    def init_block(self):
        start = self.expect("{")
        init: dict = {}
        reg_init: dict = {}
        while not self.at("}"):
            if self.peek().kind == "eof":
                raise self.err("unclosed initial state '{' (never closed)", start.line)
            if self.at(";"):
                self.take()
                continue
            line = self.peek().line
            space = None
            words = []
            while self.peek().kind == "id" and self.peek().val in TYPE_WORDS:
                w = self.take().val
                words.append(w)
                space = SPACE_WORDS.get(w, space)
            bad = [w for w in words if w not in INT_TYPES and w not in SPACE_WORDS
                   and w not in ("volatile", "const")]
            if bad:
                raise self.err(f"type '{bad[0]}' in the initial state: only int locations are "
                               "supported", line)
            if self.at("*"):
                raise self.err("pointer-valued locations are not supported", line)
            thread = None
            if self.peek().kind == "num" and self.at(":", 1):
                thread = self.take().val
                self.take()
            elif (self.peek().kind == "id" and re.fullmatch(r"P\d+", str(self.peek().val))
                  and self.at(":", 1)):
                thread = int(str(self.take().val)[1:])
                self.take()
            bracket = False
            if self.at("["):
                self.take()
                bracket = True
            name = self.ident("a location name").val
            if bracket:
                self.expect("]")
            value = 0
            if self.at("="):
                self.take()
                if self.at("&") or (self.peek().kind == "id" and not self.at("(", 1)):
                    raise self.err(f"'{name}' is initialised with an address: pointer-valued "
                                   "locations are not supported", line)
                if self.peek().kind == "id" and self.peek().val in ("ATOMIC_VAR_INIT",
                                                                    "atomic_init"):
                    self.take()
                    self.expect("(")
                    value = self.number()
                    self.expect(")")
                else:
                    value = self.number("an integer initial value")
            if thread is not None:
                if (thread, name) in reg_init:
                    raise self.err(f"register {thread}:{name} is initialised twice", line)
                reg_init[(thread, name)] = (value, line)
            else:
                if name in init:
                    raise self.err(f"location '{name}' is initialised twice", line)
                init[name] = (value, line, space)
            if not self.at("}"):
                self.expect(";", " between initialisations")
        self.take()
        if self.at(";"):
            self.take()
        return init, reg_init

    def thread(self, index: int) -> ThreadAst:
        t = self.take()
        if t.val != f"P{index}":
            raise self.err(f"thread {t.val} out of order: expected P{index}", t.line)
        place: dict = {}
        if self.at("@"):
            self.take()
            while True:
                kt = self.ident("a scope level (wg, dev)")
                key = str(kt.val).lower()     # Dartagnan forks spell them WG / DEV too
                if key not in ("wg", "dev", "sg"):
                    raise self.err(f"scope level '{key}' in the placement of {t.val}: the "
                                   "OpenCL scope tree has wg (work-group), dev (device) and sg "
                                   "(sub-group)", kt.line)
                if key in place:
                    raise self.err(f"'{key}' given twice in the placement of {t.val}", kt.line)
                v = self.number(f"the {key} number")
                if v < 0:
                    raise self.err(f"{key} {v}: placement numbers are non-negative", kt.line)
                place[key] = v
                if not self.at(","):
                    break
                self.take()
        self.expect("(", f" (the parameter list of {t.val})")
        params: dict = {}
        while not self.at(")"):
            p = self.param()
            if p.name in params:
                raise self.err(f"parameter '{p.name}' declared twice", p.line)
            params[p.name] = p
            if not self.at(")"):
                self.expect(",", " between parameters")
        self.take()
        body = self.block_body()
        return ThreadAst(index, t.val, place, params, body, t.line)

    def param(self) -> Param:
        line = self.peek().line
        words = []
        while self.peek().kind == "id" and self.peek().val in TYPE_WORDS:
            words.append(self.take().val)
        stars = 0
        while self.at("*"):
            self.take()
            stars += 1
        name = self.ident("a parameter name").val
        base = [w for w in words if w in INT_TYPES]
        other = [w for w in words if w not in INT_TYPES and w not in SPACE_WORDS
                 and w not in ("volatile", "const", "restrict")]
        if other or not base:
            raise self.err(f"parameter '{name}': type '{' '.join(words) or '?'}' is not a "
                           "pointer to int / atomic_int / uint / atomic_uint", line)
        if stars != 1:
            raise self.err(f"parameter '{name}' must be a pointer to one int location (got "
                           f"{stars} '*')", line)
        spaces = {SPACE_WORDS[w] for w in words if w in SPACE_WORDS}
        if len(spaces) > 1:
            raise self.err(f"parameter '{name}' is both global and local", line)
        return Param(name, spaces.pop() if spaces else "global", "volatile" in words,
                     any(w.startswith("atomic") for w in base),
                     any(w in ("unsigned", "uint", "atomic_uint") for w in base), line)

    # statements
    def block_body(self) -> list:
        start = self.expect("{")
        out = []
        while not self.at("}"):
            if self.peek().kind == "eof":
                raise self.err("unclosed '{' (never closed)", start.line)
            out.append(self.stmt())
        self.take()
        return out

    def stmt(self):
        t = self.peek()
        line = t.line
        if self.at("{"):
            return Block(self.block_body(), line)
        if self.at(";"):
            self.take()
            return Block([], line)
        if t.kind == "id":
            if t.val == "if":
                self.take()
                self.expect("(", " after if")
                c = self.expr()
                self.expect(")", " closing the if condition")
                then = self.sub_stmt()
                other = None
                if self.at("else"):
                    self.take()
                    other = self.sub_stmt()
                return If(c, then, other, line)
            if t.val == "while":
                self.take()
                self.expect("(", " after while")
                c = self.expr()
                self.expect(")", " closing the while condition")
                return While(c, self.sub_stmt(), line)
            if t.val == "goto":
                self.take()
                lab = self.ident("a label").val
                self.expect(";")
                return Goto(lab, line)
            if t.val in ("for", "do", "switch", "return", "break", "continue"):
                raise self.err(f"'{t.val}' {CONTROL_FLOW}")
            if self.at(":", 1) and not re.fullmatch(r"B\d+", t.val):
                self.take()
                self.take()
                return Label(t.val, line)
            if self.at(":", 1):        # Dartagnan barrier id: `B0: barrier(...)`
                self.take()
                self.take()
                e = self.expr()
                if not (isinstance(e, Call) and e.name in BARRIER_FUNCS):
                    raise self.err(f"label {t.val}: a barrier id must label a barrier call", line)
                e.label = t.val
                self.expect(";", " after the statement")
                return ExprStmt(e, line)
            if t.val in TYPE_WORDS:
                return self.decl()
        lhs = self.expr()
        if self.peek().kind == "op" and self.peek().val in ("=", "+=", "-=", "*=", "/=", "&=",
                                                            "|=", "^=", "%=", "<<=", ">>="):
            op = self.take().val
            rhs = self.expr()
            if op != "=":
                rhs = BinOp(op[:-1], lhs, rhs, line)
            self.expect(";", " after the statement")
            return Assign(lhs, rhs, line)
        if self.peek().kind == "op" and self.peek().val in ("++", "--"):
            op = self.take().val
            self.expect(";", " after the statement")
            return Assign(lhs, BinOp(op[0], lhs, Num(1, line), line), line)
        self.expect(";", " after the statement")
        return ExprStmt(lhs, line)

    def sub_stmt(self) -> list:
        s = self.stmt()
        return s.body if isinstance(s, Block) else [s]

    def decl(self):
        line = self.peek().line
        words = []
        while self.peek().kind == "id" and self.peek().val in TYPE_WORDS:
            words.append(self.take().val)
        if self.at("*"):
            raise self.err("local pointer variables are not supported", line)
        if any(w.startswith("atomic") for w in words):
            raise self.err("a local atomic variable would be a memory location private to the "
                           "thread; declare it as a parameter instead", line)
        bad = [w for w in words if w not in INT_TYPES and w not in ("const", "volatile")]
        if bad or not words:
            raise self.err(f"local variable of type '{' '.join(words)}': only int locals are "
                           "supported", line)
        out = []
        while True:
            nt = self.ident("a variable name")
            init = None
            if self.at("["):
                raise self.err("local arrays are not supported", nt.line)
            if self.at("="):
                self.take()
                init = self.expr()
            out.append(Decl(nt.val, init, nt.line))
            if not self.at(","):
                break
            self.take()
        self.expect(";", " after the declaration")
        return out[0] if len(out) == 1 else Block(out, line)

    # expressions (C precedence)
    _BIN = [("||",), ("&&",), ("|",), ("^",), ("&",), ("==", "!="), ("<", ">", "<=", ">="),
            ("<<", ">>"), ("+", "-"), ("*", "/", "%")]

    def expr(self, level: int = 0, depth: int = 0):
        if depth > 64:
            raise self.err("expression nests too deeply")
        if level == len(self._BIN):
            return self.unary(depth)
        left = self.expr(level + 1, depth + 1)
        while self.peek().kind == "op" and self.peek().val in self._BIN[level]:
            op = self.take()
            right = self.expr(level + 1, depth + 1)
            left = BinOp(op.val, left, right, op.line)
        if level == 0 and self.at("?"):
            raise self.err(f"the conditional operator '?:' {CONTROL_FLOW}")
        return left

    def unary(self, depth: int):
        t = self.peek()
        if depth > 64:
            raise self.err("expression nests too deeply")
        if t.kind == "op" and t.val in ("-", "!", "~", "+"):
            self.take()
            return Unary(t.val, self.unary(depth + 1), t.line)
        if t.kind == "op" and t.val == "*":
            self.take()
            return Deref(self.unary(depth + 1), t.line)
        if t.kind == "op" and t.val == "&":
            self.take()
            return AddrOf(self.unary(depth + 1), t.line)
        if t.kind == "op" and t.val in ("++", "--"):
            raise self.err(f"'{t.val}' inside an expression is not supported; write it as a "
                           "statement")
        return self.postfix(depth)

    def postfix(self, depth: int):
        t = self.peek()
        if t.kind == "num":
            self.take()
            e = Num(_check_i32(t.val, self.file, t.line), t.line)
        elif t.kind == "id":
            self.take()
            if t.val in TYPE_WORDS:
                raise self.err(f"unexpected type '{t.val}' here", t.line)
            if self.at("("):
                self.take()
                args = []
                while not self.at(")"):
                    args.append(self.expr(0, depth + 1))
                    if not self.at(")"):
                        self.expect(",", f" between the arguments of {t.val}")
                self.take()
                e = Call(t.val, args, t.line)
            else:
                e = Var(t.val, t.line) if t.val not in ("true", "false") else Num(
                    int(t.val == "true"), t.line)
        elif t.kind == "op" and t.val == "(":
            self.take()
            if self.peek().kind == "id" and self.peek().val in TYPE_WORDS:
                raise self.err("casts are not supported")
            e = self.expr(0, depth + 1)
            self.expect(")")
        else:
            raise self.err(f"expected an expression, got {self.desc(t)}")
        while self.at("[") or self.at("->") or self.at("."):
            raise self.err(f"'{self.peek().val}' (arrays, structures) is not supported")
        if self.peek().kind == "op" and self.peek().val in ("++", "--"):
            raise self.err(f"'{self.peek().val}' inside an expression is not supported; write "
                           "it as a statement")
        return e

    # the final condition: herd syntax
    def cond_or(self, depth: int = 0):
        if depth > 64:
            raise self.err("condition nests too deeply")
        args = [self.cond_and(depth + 1)]
        while self.at("\\/") or self.at("||"):
            self.take()
            args.append(self.cond_and(depth + 1))
        return args[0] if len(args) == 1 else CondOp("or", args)

    def cond_and(self, depth: int):
        args = [self.cond_not(depth + 1)]
        while self.at("/\\") or self.at("&&"):
            self.take()
            args.append(self.cond_not(depth + 1))
        return args[0] if len(args) == 1 else CondOp("and", args)

    def cond_not(self, depth: int):
        if depth > 64:
            raise self.err("condition nests too deeply")
        if self.at("~") or self.at("not") or self.at("!"):
            self.take()
            return CondOp("not", [self.cond_not(depth + 1)])
        if self.at("("):
            self.take()
            c = self.cond_or(depth + 1)
            self.expect(")", " closing the condition")
            return c
        if self.at("true") or self.at("false"):
            t = self.take()
            return CondAtom(("num", 0), "==" if t.val == "true" else "!=", ("num", 0), t.line)
        line = self.peek().line
        left = self.cond_term()
        t = self.peek()
        if not (t.kind == "op" and t.val in ("=", "==", "!=")):
            raise self.err(f"expected = or != in the condition, got {self.desc(t)}")
        self.take()
        right = self.cond_term()
        return CondAtom(left, "!=" if t.val == "!=" else "==", right, line)

    def cond_term(self) -> tuple:
        t = self.peek()
        if t.kind == "num" or self.at("-"):
            return ("num", self.number())
        if self.at("["):
            self.take()
            name = self.ident("a location").val
            self.expect("]")
            return ("loc", name, t.line)
        if self.at("*"):
            self.take()
            return ("loc", self.ident("a location").val, t.line)
        if t.kind == "id":
            self.take()
            if self.at(":"):
                if not re.fullmatch(r"P\d+", t.val):
                    raise self.err(f"'{t.val}:' is not a thread (P0, P1, ... or 0, 1, ...)",
                                   t.line)
                self.take()
                return ("reg", int(t.val[1:]), self.ident("a register").val, t.line)
            return ("loc", t.val, t.line)
        raise self.err(f"expected a register, a location or a value in the condition, got "
                       f"{self.desc(t)}")


def _check_i32(v: int, file: str, line: int) -> int:
    if not I32_MIN <= v <= 2 ** 32 - 1:
        raise LitmusError(f"value {v} does not fit in 32 bits", file, line)
    return v


def parse_program(text: str, file: str) -> Program:
    lines = text.split("\n")
    hl = 0
    while hl < len(lines) and not lines[hl].strip():
        hl += 1
    if hl == len(lines):
        raise LitmusError("empty file: expected a header line like `OPENCL name`", file, 1)
    m = re.fullmatch(r"\s*(\S+)\s+(\S.*?)\s*", lines[hl])
    if not m or m.group(1).lower() not in LANGS:
        word = lines[hl].split()[0] if lines[hl].split() else ""
        raise LitmusError(f"header '{show(lines[hl].strip(), 60)}': expected `C NAME` or "
                          f"`OPENCL NAME` (an architecture '{show(word, 20)}' litmus test cannot "
                          "be imported)", file, hl + 1)
    # diy-generated files carry info lines (`Cycle=...`, `Generator=...`) before the initial
    # state; they describe how the test was made, not what it does
    for k in range(hl + 1, len(lines)):
        if "{" in lines[k]:
            break
        if re.match(r"\s*[A-Za-z][\w-]*\s*=", lines[k]):
            lines[k] = ""
    rest = "\n".join(lines[hl + 1:])
    toks = lex(rest, file, hl + 2)
    # `1:r0` in the final condition: the thread number becomes P1
    for k in range(len(toks) - 2):
        if toks[k].kind == "num" and toks[k + 1].kind == "op" and toks[k + 1].val == ":" \
                and toks[k + 2].kind == "id" and (k == 0 or not (toks[k - 1].kind == "op"
                                                                 and toks[k - 1].val == "?")):
            toks[k] = Tok("id", f"P{toks[k].val}", toks[k].line, toks[k].pos, toks[k].end)
    return _Parser(toks, file, rest).program(LANGS[m.group(1).lower()], m.group(2), hl + 1)


# ---- lowering one thread to LLVM IR -------------------------------------------------------

@dataclass(frozen=True)
class RegV:
    reg: str                 # IR register name (without %)


@dataclass(frozen=True)
class ConstV:
    value: int


@dataclass(frozen=True)
class FlagV:
    """The success flag of a compare-exchange: 1 iff the old value equals the expected one."""
    old: str
    exp: str
    line: int


@dataclass(frozen=True)
class UninitV:
    line: int
    why: str = ""            # set when a goto / label edge left it without a value


Value = Union[RegV, ConstV, FlagV, UninitV]

ORDERS = {"memory_order_relaxed": "monotonic", "memory_order_acquire": "acquire",
          "memory_order_release": "release", "memory_order_acq_rel": "acq_rel",
          "memory_order_seq_cst": "seq_cst"}
SCOPES = {"memory_scope_work_item": "singlethread", "memory_scope_sub_group": "wavefront",
          "memory_scope_work_group": "workgroup", "memory_scope_device": "agent",
          "memory_scope_all_svm_devices": "", "memory_scope_all_devices": ""}
DEFAULT_SCOPE = "agent"       # OpenCL C 2.0 6.13.11: the default memory scope is device
FLAGS = {"CLK_GLOBAL_MEM_FENCE": "global", "CLK_LOCAL_MEM_FENCE": "local"}
RMW = {"add": "add", "sub": "sub", "and": "and", "or": "or", "xor": "xor", "min": "min",
       "max": "max"}
BARRIER_FUNCS = {"barrier", "work_group_barrier"}
MD_GLOBAL, MD_LOCAL, MD_BOTH = "!0", "!1", "!2"


@dataclass
class IRLine:
    text: str
    line: int


@dataclass
class Lowered:
    code: list = field(default_factory=list)       # IRLine
    env: dict = field(default_factory=dict)        # local variable -> Value (final)
    uses: dict = field(default_factory=dict)       # location -> first line accessed
    cas_private: dict = field(default_factory=dict)   # expected location -> line
    notes: list = field(default_factory=list)
    barrier_labels: list = field(default_factory=list)
    md: set = field(default_factory=set)
    loops: bool = False                  # a while loop or backward goto (bound: assume)


def _as_list(body) -> list:
    if body is None:
        return []
    return body if isinstance(body, list) else [body]


def _has_flow(body: list) -> bool:
    for st in body:
        if isinstance(st, (If, While, Goto, Label)):
            return True
        if isinstance(st, Block) and _has_flow(st.body):
            return True
    return False


def _assigned(body: list) -> set:
    """The variables a statement list assigns (at any depth)."""
    out: set = set()
    for st in body:
        if isinstance(st, Assign) and isinstance(st.target, Var):
            out.add(st.target.name)
        elif isinstance(st, Block):
            out |= _assigned(st.body)
        elif isinstance(st, If):
            out |= _assigned(_as_list(st.then)) | _assigned(_as_list(st.other))
        elif isinstance(st, While):
            out |= _assigned(_as_list(st.body))
    return out


def _jumps(body: list, labels: list, gotos: list) -> None:
    """The labels and gotos of a statement list (at any depth), in source order."""
    for st in body:
        if isinstance(st, Label):
            labels.append(st)
        elif isinstance(st, Goto):
            gotos.append(st)
        elif isinstance(st, Block):
            _jumps(st.body, labels, gotos)
        elif isinstance(st, If):
            _jumps(_as_list(st.then), labels, gotos)
            _jumps(_as_list(st.other), labels, gotos)
        elif isinstance(st, While):
            _jumps(_as_list(st.body), labels, gotos)


class _Retry(Exception):
    """A variable has no value on a backward goto edge into a label that gave it a phi."""
    def __init__(self, missing: dict):
        super().__init__("retry")
        self.missing = missing          # (label, variable) -> line of the edge


class _Lower:
    def __init__(self, th: ThreadAst, prog: Program, file: str):
        self.th, self.prog, self.file = th, prog, file
        self.out = Lowered()
        self.regs: set[str] = set()
        self.versions: dict[str, int] = {}
        self.tmp = 0
        self.taken: set[str] = set()
        for (ti, name), (v, line) in prog.reg_init.items():
            if ti == th.index:
                self.out.env[name] = ConstV(v)

    def err(self, msg: str, line: int) -> LitmusError:
        return LitmusError(msg, self.file, line)

    def run(self) -> Lowered:
        """Lower the thread; when a backward goto turns out to carry a variable without a
        value into a label that gave it a phi, lower again with that variable unassigned at
        the label (the set only grows, so this ends)."""
        hint: dict = {}
        while True:
            lo = _Lower(self.th, self.prog, self.file)
            lo.no_value = hint
            try:
                return lo.run_once()
            except _Retry as r:
                grew = False
                for key, line in r.missing.items():
                    if key not in hint:
                        hint[key] = line
                        grew = True
                if not grew:     # pragma: no cover - a retry always learns something
                    raise self.err("internal: goto lowering did not converge", self.th.line)

    def run_once(self) -> Lowered:
        self.labels = 0
        self.block = "entry"
        self.dead = False        # after a goto, until the next label: no block to emit into
        self.goto_setup()
        if _has_flow(self.th.body):      # docs/herd-import.md "Control flow" (issue 11)
            self.emit("entry:", self.th.line)
        self.stmts(self.th.body)
        self.goto_finish()
        return self.out

    # goto and labels (docs/herd-import.md "goto and labels")
    def goto_setup(self) -> None:
        labels: list = []
        gotos: list = []
        _jumps(self.th.body, labels, gotos)
        self.user_labels: dict = {}          # name -> Label
        for lab in labels:
            if lab.name in self.user_labels:
                raise self.err(f"label '{lab.name}' is defined twice in {self.th.name} (first at "
                               f"line {self.user_labels[lab.name].line})", lab.line)
            self.user_labels[lab.name] = lab
        self.pending: dict = {}              # label -> gotos to it not lowered yet
        for g in gotos:
            if g.label not in self.user_labels:
                elsewhere = []
                for th in self.prog.threads:
                    if th is not self.th:
                        ls: list = []
                        _jumps(th.body, ls, [])
                        if any(x.name == g.label for x in ls):
                            elsewhere.append(th.name)
                if elsewhere:
                    raise self.err(f"goto {g.label}: the label is in {elsewhere[0]}, not in "
                                   f"{self.th.name} (a goto cannot leave its thread)", g.line)
                raise self.err(f"goto {g.label}: no label '{g.label}' in {self.th.name}",
                               g.line)
            self.pending[g.label] = self.pending.get(g.label, 0) + 1
        self.incoming: dict = {}             # label -> [(block, env, line)] of the edges so far
        self.lab_phis: dict = {}             # label -> [(var, reg, IRLine)] placeholders
        self.lab_ir: dict = {}               # label -> IR block name
        self.assigned_all = _assigned(self.th.body)

    def ir_label(self, name: str) -> str:
        # C identifiers never contain '.', the generated labels all do except `entry`
        return "entry.label" if name == "entry" else name

    def edge(self, name: str, line: int) -> None:
        """Leave the current block for user label `name` (a goto or the fallthrough)."""
        self.settle(self.out.env, line)
        self.incoming.setdefault(name, []).append((self.block, dict(self.out.env), line))
        self.emit(f"br label %{self.ir_label(name)}", line)

    def goto_stmt(self, s: Goto) -> None:
        if s.label in self.lab_ir:       # backward: a loop, read with herd7's unrolling
            self.out.loops = True
        self.pending[s.label] -= 1
        self.edge(s.label, s.line)
        self.dead, self.dead_line = True, s.line

    def label_stmt(self, s: Label) -> None:
        if not self.dead:
            self.edge(s.name, s.line)
        name, ir = s.name, self.ir_label(s.name)
        edges = self.incoming.get(name, [])
        keys = set(self.out.env)
        self.start(ir, s.line)
        self.lab_ir[name] = ir
        self.dead = False
        env: dict = {}
        if not self.pending.get(name):
            # every edge is known: merge as at the end of an if / else
            if not edges:
                raise self.err(f"label '{name}:' cannot be reached (it follows a goto and no "
                               "goto names it)", s.line)
            for var in sorted(keys):
                vals = [e[var] if var in e else UninitV(ln) for _, e, ln in edges]
                miss = [ln for v, (_, _, ln) in zip(vals, edges) if isinstance(v, UninitV)]
                if miss:
                    env[var] = UninitV(s.line, f"it has no value on the way into label "
                                               f"'{name}' from line {miss[0]}")
                elif all(v == vals[0] for v in vals):
                    env[var] = vals[0]
                else:
                    ops = [self.operand(v, s.line, f"'{var}'") for v in vals]
                    r = self.fresh(var)
                    inc = ", ".join(f"[ {o}, %{b} ]" for o, (b, _, _) in zip(ops, edges))
                    self.emit(f"%{r} = phi i32 {inc}", s.line)
                    env[var] = RegV(r)
            self.lab_phis[name] = []
        else:
            # a goto below comes back here: a phi placeholder for every variable that may
            # change, patched in goto_finish once every edge is known
            phis = []
            for var in sorted(keys):
                vals = [e.get(var, UninitV(ln)) for _, e, ln in edges]
                miss = [ln for v, (_, _, ln) in zip(vals, edges) if isinstance(v, UninitV)]
                if (name, var) in self.no_value:
                    miss.append(self.no_value[(name, var)])
                if miss:
                    env[var] = UninitV(s.line, f"it has no value on the way into label "
                                               f"'{name}' from line {miss[0]}")
                elif edges and var not in self.assigned_all and all(v == vals[0] for v in vals):
                    env[var] = vals[0]
                else:
                    r = self.fresh(var)
                    ir_line = IRLine("", s.line)
                    self.out.code.append(ir_line)
                    phis.append((var, r, ir_line))
                    env[var] = RegV(r)
            self.lab_phis[name] = phis
        self.out.env = env

    def goto_finish(self) -> None:
        missing: dict = {}
        for name, phis in self.lab_phis.items():
            edges = self.incoming.get(name, [])
            for var, r, ir_line in phis:
                inc = []
                for b, e, ln in edges:
                    v = e.get(var)
                    if v is None or isinstance(v, UninitV):
                        missing.setdefault((name, var), ln)
                        continue
                    inc.append(f"[ {self.operand(v, ln, repr(var))}, %{b} ]")
                ir_line.text = f"%{r} = phi i32 {', '.join(inc)}"
        if missing:
            raise _Retry(missing)

    # control flow (docs/semantics.md §15; docs/herd-import.md "Control flow")
    def label(self, hint: str) -> str:
        self.labels += 1
        return f"{hint}{self.labels}"

    def start(self, lab: str, line: int) -> None:
        self.emit(f"{lab}:", line)
        self.block = lab

    def branch(self, e, t: str, f: str, line: int) -> None:
        """Branch to t if the C condition e holds, else to f (&&, || short-circuit)."""
        if isinstance(e, BinOp) and e.op in ("&&", "||"):
            mid = self.label("cond")
            if e.op == "&&":
                self.branch(e.left, mid, f, line)
            else:
                self.branch(e.left, t, mid, line)
            self.start(mid, line)
            self.branch(e.right, t, f, line)
            return
        if isinstance(e, Unary) and e.op == "!":
            self.branch(e.arg, f, t, line)
            return
        preds = {"==": "eq", "!=": "ne", "<": "slt", ">": "sgt", "<=": "sle", ">=": "sge"}
        if isinstance(e, BinOp) and e.op in preds:
            a, b = self.value(e.left, None), self.value(e.right, None)
            if isinstance(a, ConstV) and isinstance(b, ConstV):
                hold = _fold(e.op, a.value, b.value, self.file, e.line)
                self.emit(f"br label %{t if hold else f}", e.line)
                return
            what = "a compare-exchange result in a comparison"
            pa = self.operand(a, e.line, what)
            pb = self.operand(b, e.line, what)
            c = self.fresh(None, temp="c")
            self.emit(f"%{c} = icmp {preds[e.op]} i32 {pa}, {pb}", e.line)
            self.emit(f"br i1 %{c}, label %{t}, label %{f}", e.line)
            return
        v = self.value(e, None)
        ln = getattr(e, "line", line)
        if isinstance(v, ConstV):
            self.emit(f"br label %{t if v.value != 0 else f}", ln)
            return
        c = self.fresh(None, temp="c")
        if isinstance(v, FlagV):      # C11: the exchange succeeded iff old == expected
            self.emit(f"%{c} = icmp eq i32 %{v.old}, %{v.exp}", ln)
        else:
            self.emit(f"%{c} = icmp ne i32 {self.operand(v, ln, 'a condition')}, 0", ln)
        self.emit(f"br i1 %{c}, label %{t}, label %{f}", ln)

    def settle(self, names, line: int) -> None:
        """Before leaving a block: a variable holding a compare-exchange success flag becomes
        an i32 register (1 iff old == expected), so that a phi can carry it."""
        for var in sorted(names):
            v = self.out.env.get(var)
            if isinstance(v, FlagV):
                c, r = self.fresh(None, temp="c"), self.fresh(var)
                self.emit(f"%{c} = icmp eq i32 %{v.old}, %{v.exp}", line)
                self.emit(f"%{r} = select i1 %{c}, i32 1, i32 0", line)
                self.out.env[var] = RegV(r)

    def merge(self, before: dict, arms: list, line: int) -> None:
        """After a join: each variable (declared before the branch) whose value differs
        between the arms gets a phi; a variable assigned on one arm only, with no value
        before, stays unassigned."""
        env = {}
        for var in before:
            vals = [a[var] for a, _ in arms]
            if all(v == vals[0] for v in vals):
                env[var] = vals[0]
            elif any(isinstance(v, UninitV) for v in vals):
                env[var] = UninitV(line)
            else:
                ops = [self.operand(v, line, f"'{var}' (a compare-exchange result) at a join")
                       for v in vals]
                r = self.fresh(var)
                inc = ", ".join(f"[ {o}, %{b} ]" for o, (_, b) in zip(ops, arms))
                self.emit(f"%{r} = phi i32 {inc}", line)
                env[var] = RegV(r)
        self.out.env = env

    def if_stmt(self, s) -> None:
        t, e, j = self.label("if.then"), self.label("if.else"), self.label("if.end")
        self.branch(s.cond, t, e, s.line)
        before = dict(self.out.env)
        arms = []
        for lab, body in ((t, s.then), (e, s.other or [])):
            self.out.env = dict(before)
            self.dead = False
            self.start(lab, s.line)
            self.stmts(_as_list(body))
            if self.dead:            # the arm ended in a goto: it does not reach the join
                continue
            self.settle(before, s.line)
            arms.append(({k: self.out.env.get(k) for k in before}, self.block))
            self.emit(f"br label %{j}", s.line)
        if not arms:                 # both arms end in a goto: nothing reaches the join
            self.dead = True
            return
        self.dead = False
        self.start(j, s.line)
        self.merge(before, arms, s.line)

    def while_stmt(self, s) -> None:
        h, b, x = self.label("while.cond"), self.label("while.body"), self.label("while.end")
        self.out.loops = True
        self.settle(_assigned(_as_list(s.body)) & set(self.out.env), s.line)
        pre = self.block
        self.emit(f"br label %{h}", s.line)
        self.start(h, s.line)
        before = dict(self.out.env)
        phis = []
        for var in sorted(_assigned(_as_list(s.body)) & set(before)):
            v = before[var]
            if isinstance(v, UninitV):
                raise self.err(f"variable '{var}' is assigned in the loop but has no value "
                               "before it (initialise it: its value after the loop must be "
                               "defined on every path)", s.line)
            op = self.operand(v, s.line, f"'{var}' (a compare-exchange result) in a loop")
            r = self.fresh(var)
            ir = IRLine("", s.line)
            self.out.code.append(ir)
            phis.append((var, r, op, ir))
            self.out.env[var] = RegV(r)
        self.branch(s.cond, b, x, s.line)
        head = dict(self.out.env)
        self.start(b, s.line)
        self.stmts(_as_list(s.body))
        if self.dead:                # the body ends in a goto: no edge back to the header
            for var, r, op, ir in phis:
                ir.text = f"%{r} = phi i32 [ {op}, %{pre} ]"
        else:
            self.settle([v for v, _, _, _ in phis], s.line)
            latch = self.block
            self.emit(f"br label %{h}", s.line)
            for var, r, op, ir in phis:
                nv = self.operand(self.out.env[var], s.line,
                                  f"'{var}' at the end of the loop body")
                ir.text = f"%{r} = phi i32 [ {op}, %{pre} ], [ {nv}, %{latch} ]"
        self.dead = False
        self.out.env = {k: head[k] for k in before}
        self.start(x, s.line)

    # registers
    def fresh(self, hint: Optional[str], suffixes: tuple = ("",), temp: str = "t") -> str:
        """A register name for a new value of variable `hint` (`r0`, then `r0.1`, ...) or a
        temporary (`t.1`, ...); never one already taken, with any of `suffixes` appended."""
        while True:
            if hint is None:
                self.tmp += 1
                cand = f"{temp}.{self.tmp}"
            else:
                n = self.versions.get(hint, 0)
                self.versions[hint] = n + 1
                cand = hint if n == 0 else f"{hint}.{n}"
            names = [cand + sfx for sfx in suffixes]
            if not any(x in self.taken for x in names):
                self.taken.update(names)
                return cand

    def emit(self, text: str, line: int) -> None:
        self.out.code.append(IRLine(text, line))

    # statements
    def stmts(self, body: list) -> None:
        for s in body:
            if self.dead and not isinstance(s, Label) and not (
                    isinstance(s, Block) and not s.body):
                raise self.err(f"this statement cannot be reached: it follows a goto (line "
                               f"{self.dead_line}) and is not labelled", s.line)
            self.stmt(s)

    def stmt(self, s) -> None:
        if isinstance(s, Block):
            self.stmts(s.body)
        elif isinstance(s, If):
            self.if_stmt(s)
        elif isinstance(s, While):
            self.while_stmt(s)
        elif isinstance(s, Goto):
            self.goto_stmt(s)
        elif isinstance(s, Label):
            self.label_stmt(s)
        elif isinstance(s, Decl):
            if s.name in self.th.params:
                raise self.err(f"local variable '{s.name}' shadows the parameter '{s.name}'",
                               s.line)
            if s.name in self.out.env and not (
                    (self.th.index, s.name) in self.prog.reg_init and s.name not in self.regs):
                raise self.err(f"variable '{s.name}' is declared twice", s.line)
            self.regs.add(s.name)
            self.out.env[s.name] = (self.value(s.init, s.name) if s.init is not None
                                    else UninitV(s.line))
        elif isinstance(s, Assign):
            tgt = s.target
            if isinstance(tgt, Var):
                if tgt.name in self.th.params:
                    raise self.err(f"assigning to the pointer parameter '{tgt.name}' is not "
                                   f"supported (did you mean *{tgt.name} = ...?)", s.line)
                if tgt.name not in self.out.env:
                    raise self.err(f"variable '{tgt.name}' is not declared", s.line)
                self.out.env[tgt.name] = self.value(s.value, tgt.name)
            elif isinstance(tgt, Deref):
                p = self.pointer(tgt.arg, s.line)
                v = self.operand(self.value(s.value, None), s.line,
                                 f"the value stored to *{p.name}")
                self.use(p, s.line)
                self.emit(f"store{' volatile' if p.volatile else ''} i32 {v}, "
                          f"{self.ptr(p)}", s.line)
            else:
                raise self.err("the left side of an assignment must be a variable or *pointer",
                               s.line)
        elif isinstance(s, ExprStmt):
            e = s.expr
            if isinstance(e, Call):
                self.call(e, None, statement=True)
            else:
                self.value(e, None)      # e.g. a discarded load: still an access
        else:   # pragma: no cover - the parser builds nothing else
            raise self.err(f"unsupported statement {type(s).__name__}", getattr(s, "line", 0))

    # values
    def operand(self, v: Value, line: int, what: str) -> str:
        if isinstance(v, ConstV):
            return str(v.value)
        if isinstance(v, RegV):
            return f"%{v.reg}"
        if isinstance(v, FlagV):
            raise self.err(f"{what} is the success flag of a compare-exchange: {ARITH}", line)
        if v.why:
            raise self.err(f"{what} is a variable with no value here: {v.why}", line)
        raise self.err(f"{what} is a variable that was never assigned (declared at line "
                       f"{v.line})", line)

    def pointer(self, e, line: int) -> Param:
        if isinstance(e, Var) and e.name in self.th.params:
            return self.th.params[e.name]
        if isinstance(e, AddrOf):
            raise self.err("'&' (taking an address) is not supported: pass the parameter "
                           "itself", line)
        if isinstance(e, Var) and e.name in self.out.env:
            raise self.err(f"an access through the register-dependent address '{e.name}' "
                           f"{CONTROL_FLOW}", line)
        if isinstance(e, Var):
            raise self.err(f"'{e.name}' is not a parameter of {self.th.name}", line)
        raise self.err(f"an access through a computed address {CONTROL_FLOW}", line)

    def ptr(self, p: Param) -> str:
        return f"ptr addrspace({1 if p.space == 'global' else 3}) @{p.name}"

    def use(self, p: Param, line: int) -> None:
        self.out.uses.setdefault(p.name, line)

    def value(self, e, hint: Optional[str]) -> Value:
        if isinstance(e, Num):
            return ConstV(e.value)
        if isinstance(e, Var):
            if e.name in self.th.params:
                raise self.err(f"'{e.name}' is a pointer; read the location with *{e.name} or "
                               "atomic_load", e.line)
            if e.name not in self.out.env:
                raise self.err(f"variable '{e.name}' is not declared", e.line)
            v = self.out.env[e.name]
            if isinstance(v, UninitV) and v.why:
                raise self.err(f"variable '{e.name}' is read here but {v.why}", e.line)
            if isinstance(v, UninitV):
                raise self.err(f"variable '{e.name}' is read before it is assigned (declared at "
                               f"line {v.line})", e.line)
            return v
        if isinstance(e, Deref):
            p = self.pointer(e.arg, e.line)
            r = self.fresh(hint)
            self.use(p, e.line)
            self.emit(f"%{r} = load{' volatile' if p.volatile else ''} i32, {self.ptr(p)}",
                      e.line)
            return RegV(r)
        if isinstance(e, Call):
            v = self.call(e, hint, statement=False)
            assert v is not None
            return v
        if isinstance(e, AddrOf):
            raise self.err("'&' (taking an address) is not supported", e.line)
        if isinstance(e, Unary):
            a = self.value(e.arg, None)
            if not isinstance(a, ConstV) and e.op in ("-", "+", "~", "!"):
                pa = self.operand(a, e.line, f"the operand of '{e.op}'")   # issue 11: IR ops
                if e.op == "+":
                    return a
                r = self.fresh(hint, temp="t")
                if e.op == "!":
                    c = self.fresh(None, temp="c")
                    self.emit(f"%{c} = icmp eq i32 {pa}, 0", e.line)
                    self.emit(f"%{r} = select i1 %{c}, i32 1, i32 0", e.line)
                else:
                    self.emit(f"%{r} = sub i32 0, {pa}" if e.op == "-" else
                              f"%{r} = xor i32 {pa}, -1", e.line)
                return RegV(r)
            if not isinstance(a, ConstV):
                raise self.err(f"'{e.op}' on a value read from memory {ARITH}", e.line)
            x = a.value
            r = {"-": -x, "+": x, "~": ~x, "!": int(x == 0)}[e.op]
            return ConstV(_wrap(r))
        if isinstance(e, BinOp):
            a = self.value(e.left, None)
            b = self.value(e.right, None)
            ir_ops = {"+": "add", "-": "sub", "*": "mul", "&": "and", "|": "or", "^": "xor",
                      "<<": "shl", ">>": "ashr"}
            cmps = {"==": "eq", "!=": "ne", "<": "slt", ">": "sgt", "<=": "sle", ">=": "sge"}
            if not (isinstance(a, ConstV) and isinstance(b, ConstV)) and (
                    e.op in ir_ops or e.op in cmps):      # issue 11: IR arithmetic / icmp
                pa = self.operand(a, e.line, f"an operand of '{e.op}'")
                pb = self.operand(b, e.line, f"an operand of '{e.op}'")
                r = self.fresh(hint, temp="t")
                if e.op in ir_ops:
                    self.emit(f"%{r} = {ir_ops[e.op]} i32 {pa}, {pb}", e.line)
                else:
                    c = self.fresh(None, temp="c")
                    self.emit(f"%{c} = icmp {cmps[e.op]} i32 {pa}, {pb}", e.line)
                    self.emit(f"%{r} = select i1 %{c}, i32 1, i32 0", e.line)
                return RegV(r)
            if not (isinstance(a, ConstV) and isinstance(b, ConstV)):
                what = ("a comparison" if e.op in ("==", "!=", "<", ">", "<=", ">=") else
                        "a logical operator" if e.op in ("&&", "||") else f"'{e.op}'")
                raise self.err(f"{what} on a value read from memory {ARITH}", e.line)
            return ConstV(_fold(e.op, a.value, b.value, self.file, e.line))
        raise self.err(f"unsupported expression {type(e).__name__}", getattr(e, "line", 0))

    # calls
    def order(self, e, line: int, fn: str) -> str:
        if isinstance(e, Var) and e.name in ORDERS:
            return ORDERS[e.name]
        if isinstance(e, Var) and e.name == "memory_order_consume":
            raise self.err("memory_order_consume has no LLVM ordering (clang strengthens it to "
                           "acquire); write memory_order_acquire if that is meant", line)
        raise self.err(f"{fn}: expected a memory_order_* argument, got {_show_expr(e)}", line)

    def scope(self, e, line: int, fn: str) -> str:
        if isinstance(e, Var) and e.name in SCOPES:
            return SCOPES[e.name]
        raise self.err(f"{fn}: expected a memory_scope_* argument, got {_show_expr(e)}", line)

    def flags(self, e, line: int, fn: str) -> set:
        if isinstance(e, Var) and e.name in FLAGS:
            return {FLAGS[e.name]}
        if isinstance(e, BinOp) and e.op == "|":
            return self.flags(e.left, line, fn) | self.flags(e.right, line, fn)
        if isinstance(e, Var) and e.name == "CLK_IMAGE_MEM_FENCE":
            raise self.err(f"{fn}: CLK_IMAGE_MEM_FENCE (images) cannot be mapped", line)
        raise self.err(f"{fn}: expected CLK_GLOBAL_MEM_FENCE and/or CLK_LOCAL_MEM_FENCE, got "
                       f"{_show_expr(e)}", line)

    def mmra(self, spaces: set) -> str:
        md = MD_BOTH if len(spaces) == 2 else MD_GLOBAL if "global" in spaces else MD_LOCAL
        self.out.md.add(md)
        return md

    @staticmethod
    def ss(scope: str) -> str:
        return f' syncscope("{scope}")' if scope else ""

    def call(self, e: Call, hint: Optional[str], statement: bool) -> Optional[Value]:
        name, args, line = e.name, e.args, e.line
        explicit = name.endswith("_explicit")
        base = name[: -len("_explicit")] if explicit else name

        def nargs(lo: int, hi: int):
            if not lo <= len(args) <= hi:
                want = str(lo) if lo == hi else f"{lo} to {hi}"
                raise self.err(f"{name} takes {want} arguments, got {len(args)}", line)

        def mo_scope(first: int, n_orders: int) -> tuple:
            """The orders and scope of an explicit call, or the short form's defaults."""
            if not explicit:
                return ("seq_cst",) * n_orders, DEFAULT_SCOPE
            orders = tuple(self.order(args[first + k], line, name) for k in range(n_orders))
            sc = (self.scope(args[first + n_orders], line, name)
                  if len(args) > first + n_orders else DEFAULT_SCOPE)
            return orders, sc

        def no_side_effects(*exprs):
            for x in exprs:
                if _has_access(x):
                    raise self.err(f"{name}: an argument that accesses memory (evaluation order "
                                   "among arguments is unspecified in C); read it into a "
                                   "variable first", line)

        if name in BARRIER_FUNCS:
            nargs(1, 2)
            if not statement:
                raise self.err(f"{name} returns nothing", line)
            spaces = self.flags(args[0], line, name)
            sc = self.scope(args[1], line, name) if len(args) == 2 else "workgroup"
            md = self.mmra(spaces)
            # OpenCL barrier = release fence, execution barrier, acquire fence (the AMDGPU
            # lowering; S002 "Fence and Address Spaces": the fence tags name the spaces)
            self.emit(f"fence{self.ss(sc)} release, !mmra {md}", line)
            self.emit("call void @llvm.amdgcn.s.barrier()", line)
            self.emit(f"fence{self.ss(sc)} acquire, !mmra {md}", line)
            self.out.barrier_labels.append((e.label, line))
            return None
        if name == "atomic_work_item_fence":
            nargs(3, 3)
            if not statement:
                raise self.err(f"{name} returns nothing", line)
            spaces = self.flags(args[0], line, name)
            order = self.order(args[1], line, name)
            sc = self.scope(args[2], line, name)
            if order == "monotonic":
                self.out.notes.append(f"line {line}: atomic_work_item_fence with "
                                      "memory_order_relaxed has no effect (OpenCL C 6.13.11) and "
                                      "is left out")
                return None
            self.emit(f"fence{self.ss(sc)} {order}, !mmra {self.mmra(spaces)}", line)
            return None
        if name in ("atomic_thread_fence", "atomic_signal_fence"):
            nargs(1, 1)
            order = self.order(args[0], line, name)
            if order == "monotonic":
                self.out.notes.append(f"line {line}: {name}(memory_order_relaxed) has no effect "
                                      "and is left out")
                return None
            sc = DEFAULT_SCOPE if name == "atomic_thread_fence" else "singlethread"
            self.emit(f"fence{self.ss(sc)} {order}", line)
            return None
        if name == "atomic_init":
            # C11 7.17.2.2: initialises the object with a non-atomic store
            nargs(2, 2)
            p = self.pointer(args[0], line)
            v = self.operand(self.value(args[1], None), line, f"the value stored to {p.name}")
            if not statement:
                raise self.err(f"{name} returns nothing", line)
            self.use(p, line)
            self.emit(f"store{' volatile' if p.volatile else ''} i32 {v}, {self.ptr(p)}", line)
            return None
        if base == "atomic_load":
            nargs(1, 1) if not explicit else nargs(2, 3)
            p = self.pointer(args[0], line)
            (order,), sc = mo_scope(1, 1)
            if order in ("release", "acq_rel"):
                raise self.err(f"{name}: memory_order_{_c_order(order)} is not a load ordering",
                               line)
            r = self.fresh(hint)
            self.use(p, line)
            self.emit(f"%{r} = load atomic{' volatile' if p.volatile else ''} i32, "
                      f"{self.ptr(p)}{self.ss(sc)} {order}", line)
            return RegV(r)
        if base == "atomic_store":
            nargs(2, 2) if not explicit else nargs(3, 4)
            p = self.pointer(args[0], line)
            no_side_effects(*args[2:])
            v = self.operand(self.value(args[1], None), line, f"the value stored to {p.name}")
            (order,), sc = mo_scope(2, 1)
            if order in ("acquire", "acq_rel"):
                raise self.err(f"{name}: memory_order_{_c_order(order)} is not a store ordering",
                               line)
            if not statement:
                raise self.err(f"{name} returns nothing", line)
            self.use(p, line)
            self.emit(f"store atomic{' volatile' if p.volatile else ''} i32 {v}, "
                      f"{self.ptr(p)}{self.ss(sc)} {order}", line)
            return None
        m = re.fullmatch(r"atomic_(exchange|fetch_(add|sub|and|or|xor|min|max))", base)
        if m:
            nargs(2, 2) if not explicit else nargs(3, 4)
            p = self.pointer(args[0], line)
            v = self.operand(self.value(args[1], None), line, f"the operand of {name}")
            (order,), sc = mo_scope(2, 1)
            op = "xchg" if m.group(1) == "exchange" else RMW[m.group(2)]
            if op in ("min", "max") and p.unsigned:
                op = "u" + op      # atomic_uint: unsigned comparison (OpenCL C 6.13.11.7.5)
            r = self.fresh(hint)
            self.use(p, line)
            self.emit(f"%{r} = atomicrmw{' volatile' if p.volatile else ''} {op} {self.ptr(p)}, "
                      f"i32 {v}{self.ss(sc)} {order}", line)
            return RegV(r)
        m = re.fullmatch(r"atomic_compare_exchange_(strong|weak)", base)
        if m:
            nargs(3, 3) if not explicit else nargs(5, 6)
            p = self.pointer(args[0], line)
            if not (isinstance(args[1], Var) and args[1].name in self.th.params):
                raise self.err(f"{name}: the expected value must be a pointer parameter (the "
                               f"location holding it), got {_show_expr(args[1])}", line)
            ep = self.th.params[args[1].name]
            if ep.name == p.name:
                raise self.err(f"{name}: the expected value is held in the location the "
                               "exchange operates on", line)
            no_side_effects(*args[3:])
            v = self.operand(self.value(args[2], None), line, f"the desired value of {name}")
            (succ, fail), sc = mo_scope(3, 2)
            if fail in ("release", "acq_rel"):
                raise self.err(f"{name}: memory_order_{_c_order(fail)} is not a failure "
                               "ordering", line)
            weak = m.group(1) == "weak"
            base_reg = self.fresh(hint, (".expected", ".old"), "cas")
            exp, old = f"{base_reg}.expected", f"{base_reg}.old"
            self.use(ep, line)
            self.use(p, line)
            # C11 7.17.7.4: reads *expected; on failure writes the value read back to it
            self.emit(f"%{exp} = load{' volatile' if ep.volatile else ''} i32, {self.ptr(ep)}",
                      line)
            self.emit(f"%{old} = cmpxchg{' weak' if weak else ''}"
                      f"{' volatile' if p.volatile else ''} {self.ptr(p)}, i32 %{exp}, i32 {v}"
                      f"{self.ss(sc)} {succ} {fail}", line)
            self.emit(f"store{' volatile' if ep.volatile else ''} i32 %{old}, {self.ptr(ep)}",
                      line)
            self.out.cas_private.setdefault(ep.name, line)
            if weak and not statement:
                raise self.err(f"{name}: the success flag of a weak compare-exchange (which may "
                               "fail spuriously) cannot be expressed without control flow; use "
                               "it as a statement or use _strong", line)
            return FlagV(old, exp, line)
        if name.startswith("atomic_") or name.startswith("__"):
            raise self.err(f"'{name}' is not supported (see docs/herd-import.md for the mapped "
                           "functions)", line)
        raise self.err(f"unknown function '{name}'", line)


def _c_order(order: str) -> str:
    return {v: k for k, v in ORDERS.items()}[order][len("memory_order_"):]


def _has_access(e) -> bool:
    if isinstance(e, (Deref, Call)):
        return True
    if isinstance(e, (BinOp,)):
        return _has_access(e.left) or _has_access(e.right)
    if isinstance(e, (Unary, AddrOf)):
        return _has_access(e.arg)
    return False


def _show_expr(e) -> str:
    if isinstance(e, Num):
        return str(e.value)
    if isinstance(e, Var):
        return f"'{show(e.name, 40)}'"
    return f"a {type(e).__name__.lower()} expression"


def _wrap(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - 2 ** 32 if v > I32_MAX else v


def _fold(op: str, a: int, b: int, file: str, line: int) -> int:
    """C int arithmetic on constants (32-bit two's complement)."""
    if op in ("/", "%"):
        if b == 0:
            raise LitmusError(f"division by zero ('{op}')", file, line)
        q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)   # C truncates toward zero
        return _wrap(q if op == "/" else a - q * b)
    if op in ("<<", ">>") and not 0 <= b < 32:
        raise LitmusError(f"shift by {b} is undefined in C", file, line)
    r = {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "&": lambda: a & b,
         "|": lambda: a | b, "^": lambda: a ^ b, "<<": lambda: a << b, ">>": lambda: a >> b,
         "==": lambda: int(a == b), "!=": lambda: int(a != b), "<": lambda: int(a < b),
         ">": lambda: int(a > b), "<=": lambda: int(a <= b), ">=": lambda: int(a >= b),
         "&&": lambda: int(bool(a) and bool(b)), "||": lambda: int(bool(a) or bool(b))}[op]()
    return _wrap(r)


# ---- the YAML -----------------------------------------------------------------------------

@dataclass
class Imported:
    yaml: str
    linemap: dict          # YAML line -> .litmus line
    name: str


def convert_text(text: str, file: str) -> Imported:
    """The .litmus text -> YAML text (and its line map). Raises only LitmusError."""
    try:
        return _convert(text, file)
    except LitmusError:
        raise
    except RecursionError:
        raise LitmusError("input nests too deeply", file, None) from None
    except Exception as e:   # a bug of ours: still one line, never a traceback
        raise LitmusError(f"internal error while importing ({type(e).__name__}: "
                          f"{show(str(e))})", file, None) from None


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

    put(f"name: {json.dumps(prog.name)}", prog.name_line)
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
        put(f"  {json.dumps(name)}: {{space: {sp}, init: {init}}}", line)
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
        put(f"exists: {json.dumps(cond)}", prog.cond_line)
    return Imported("\n".join(y) + "\n", lmap, prog.name)


def _description(prog: Program, file: str, notes: list, lowered: list) -> list[str]:
    base = os.path.basename(file)
    out = [f"Imported by amdmm-smt import-herd from {base} ({prog.lang} litmus test "
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
    """A .litmus file as an `ir.Test` (for `verify`)."""
    return import_text(read_litmus(path), path)[1]
