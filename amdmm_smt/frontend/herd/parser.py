"""herd / Dartagnan `.litmus` files, stage 1b: tokens -> the AST (syntax.py). The parser accepts
`if` / `else`, `while`, `goto` and labels; it rejects only what no later stage could map."""

from __future__ import annotations

import re
from typing import Optional

from ...errors import LitmusError, show
from .lexer import Tok, lex
from .syntax import (BARRIER_FUNCS, CONTROL_FLOW, I32_MIN, AddrOf, Assign, BinOp, Block, Break, Call,
                     Cond, CondAtom, CondOp, Decl, Deref, ExprStmt, Goto, If, Label, Num, Param, Program,
                     ThreadAst, Unary, Var, While)

# ---- parsing ------------------------------------------------------------------------------

TYPE_WORDS = {"int", "unsigned", "uint", "signed", "atomic_int", "atomic_uint", "volatile",
              "const", "global", "__global", "local", "__local", "restrict", "long", "short",
              "char", "float", "double", "atomic_long", "atomic_ulong", "atomic_t", "intptr_t",
              "size_t", "bool", "_Bool", "atomic_bool", "atomic_flag", "spinlock_t", "struct",
              "private", "__private", "constant", "__constant", "generic", "__generic"}
INT_TYPES = {"int", "unsigned", "uint", "signed", "atomic_int", "atomic_uint"}
SPACE_WORDS = {"global": "global", "__global": "global", "local": "local", "__local": "local"}
LANGS = {"c": "C", "opencl": "OpenCL"}


MAX_NEST = 64     # `if` / `while` nested in one another
MAX_BRACES = 128  # the same and `{ }` blocks (bounded: the parser and the importer recurse)


class _Parser:
    def __init__(self, toks: list[Tok], file: str, src: str = ""):
        self.toks, self.i, self.file, self.src = toks, 0, file, src
        self.nest = 0       # `if` / `while` inside one another
        self.braces = 0     # the same and `{ }` blocks

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
            if self.at("["):
                raise self.err(f"'{name}[...]': arrays in the initial state are not supported "
                               "(locations are single ints; give each element a location of "
                               "its own)", line)
            value = 0
            if self.at("="):
                self.take()
                if self.at("{"):
                    raise self.err(f"'{name}' is initialised with a list: arrays in the initial "
                                   "state are not supported (locations are single ints)", line)
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
        if self.at("["):
            raise self.err(f"parameter '{name}[]': arrays are not supported (a parameter is a "
                           "pointer to one int location)", line)
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
        # bounded, with the line (issue 22 item 8: a 1000-deep `if` was a line-less error)
        block = self.at("{")     # a block is not a level of its own: `if (c) { if ...`
        self.nest += not block
        self.braces += 1
        try:
            if self.nest > MAX_NEST:
                raise self.err(f"too deep (statements nest more than {MAX_NEST} levels: "
                               f"`if` and `while` inside one another)")
            if self.braces > MAX_BRACES:
                raise self.err(f"too deep (blocks and statements nest more than {MAX_BRACES} "
                               f"levels)")
            return self._stmt()
        finally:
            self.nest -= not block
            self.braces -= 1

    def _stmt(self):
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
            if t.val == "for":
                return self.for_stmt()
            if t.val == "break":
                self.take()
                self.expect(";", " after break")
                return Break(line)
            if t.val in ("do", "switch", "return", "continue"):
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
        s = self.simple_stmt(line)
        self.expect(";", " after the statement")
        return s

    def simple_stmt(self, line: int):
        """An assignment (`=`, `+=`, ..., `x++`, `++x`) or an expression, without its `;`."""
        if self.peek().kind == "op" and self.peek().val in ("++", "--"):
            op = self.take().val
            lhs = self.unary(0)
            return Assign(lhs, BinOp(op[0], lhs, Num(1, line), line), line)
        if (self.peek().kind == "id" and self.peek(1).kind == "op"
                and self.peek(1).val in ("++", "--")
                and any(self.at(x, 2) for x in (";", ")", ","))):      # `i++;`, `for (...; i++)`
            lhs = Var(self.take().val, line)
            op = self.take().val
            return Assign(lhs, BinOp(op[0], lhs, Num(1, line), line), line)
        lhs = self.expr()
        if self.peek().kind == "op" and self.peek().val in ("=", "+=", "-=", "*=", "/=", "&=",
                                                            "|=", "^=", "%=", "<<=", ">>="):
            op = self.take().val
            rhs = self.expr()
            if op != "=":
                rhs = BinOp(op[:-1], lhs, rhs, line)
            return Assign(lhs, rhs, line)
        if self.peek().kind == "op" and self.peek().val in ("++", "--"):
            op = self.take().val
            return Assign(lhs, BinOp(op[0], lhs, Num(1, line), line), line)
        return ExprStmt(lhs, line)

    def for_stmt(self):
        """`for (init; cond; step) body` is `{ init; while (cond) { body; step; } }` (C11
        6.8.5.3; without `continue`, which stays refused, the two are the same). An empty
        condition is `1`. A variable declared in init belongs to the thread's scope."""
        line = self.take().line
        self.expect("(", " after for")
        init: list = []
        if self.at(";"):
            self.take()
        elif self.peek().kind == "id" and self.peek().val in TYPE_WORDS:
            d = self.decl()          # takes its ';'
            init = d.body if isinstance(d, Block) else [d]
        else:
            init = [self.simple_stmt(self.peek().line)]
            self.expect(";", " after the initialisation of the for loop")
        cond = Num(1, line) if self.at(";") else self.expr()
        self.expect(";", " after the condition of the for loop")
        step: list = []
        if not self.at(")"):
            sline = self.peek().line
            step = [self.simple_stmt(sline)]
            while self.at(","):
                self.take()
                step.append(self.simple_stmt(self.peek().line))
        self.expect(")", " closing the for header")
        body = self.sub_stmt()
        return Block(init + [While(cond, body + step, line)], line)

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
            q = self.take()
            then = self.expr(0, depth + 1)
            self.expect(":", " in the conditional operator '?:'")
            other = self.expr(0, depth + 1)
            return Cond(left, then, other, q.line)
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
    # `1:r0` in the final condition: the thread number becomes P1 (not the `:` of a `?:`)
    open_q = 0
    for k in range(len(toks) - 2):
        if toks[k].kind == "op" and toks[k].val == "?":
            open_q += 1
        elif toks[k].kind == "op" and toks[k].val in (";", "{", "}"):
            open_q = 0
        elif toks[k].kind == "op" and toks[k].val == ":" and open_q:
            open_q -= 1
        if toks[k].kind == "num" and toks[k + 1].kind == "op" and toks[k + 1].val == ":" \
                and toks[k + 2].kind == "id" and not open_q:
            toks[k] = Tok("id", f"P{toks[k].val}", toks[k].line, toks[k].pos, toks[k].end)
    return _Parser(toks, file, rest).program(LANGS[m.group(1).lower()], m.group(2), hl + 1)
