"""The model language (docs/model-language.md): lexer, parser and abstract syntax.

A model file is a sequence of statements; every node carries its file and line so that each
error the user can cause is one line `FILE:LINE: problem` (amdmm_smt/errors.py LitmusError).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from ..errors import LitmusError, show

LEVEL_NAMES = ("singlethread", "wavefront", "workgroup", "cluster", "agent", "system")
KEYWORDS = {"let", "rec", "and", "include", "acyclic", "irreflexive", "empty", "flag", "as",
            "value", "option", "union", "domain", "range", "cross", "spaces"}


# ---- abstract syntax ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Node:
    file: str
    line: int


@dataclass(frozen=True)
class Name(Node):
    name: str
    index: Optional[str] = None       # a level: a variable or a level name


@dataclass(frozen=True)
class Bin(Node):
    op: str                           # | & \ ;
    left: "Node"
    right: "Node"


@dataclass(frozen=True)
class Un(Node):
    op: str                           # ~ inv + * ? ident domain range spaces
    arg: "Node"


@dataclass(frozen=True)
class Cross(Node):
    left: "Node"
    right: "Node"


@dataclass(frozen=True)
class LevelUnion(Node):
    var: str
    cmp: Optional[str]                # None, ">=", "<="
    bound: Optional[str]
    body: "Node"


@dataclass(frozen=True)
class Binding(Node):
    name: str
    param: Optional[str]
    expr: Node
    comment: str = ""


@dataclass(frozen=True)
class Let(Node):
    rec: bool
    bindings: tuple


@dataclass(frozen=True)
class Include(Node):
    path: str


@dataclass(frozen=True)
class Axiom(Node):
    kind: str                         # acyclic irreflexive empty
    flag: bool                        # flag ~empty: undefined behaviour when non-empty
    expr: Node
    name: str


@dataclass(frozen=True)
class Value(Node):
    maysee: Node
    definite: Node
    name: str


@dataclass(frozen=True)
class Option(Node):
    """`option NAME = VALUE`: an engine option (the machinery a model version chooses
    besides its definitions: docs/model-language.md "Engine options")."""
    name: str
    value: str


@dataclass
class Program:
    file: str
    stmts: list = field(default_factory=list)


# ---- lexer -------------------------------------------------------------------------------------

_TOKEN = re.compile(r"""
    (?P<ws>[ \t\r\f]+)
  | (?P<nl>\n)
  | (?P<inv>\^-1)
  | (?P<ge>>=)
  | (?P<le><=)
  | (?P<string>"[^"\n]*")
  | (?P<ident>[A-Za-z_][A-Za-z0-9_.\-]*)
  | (?P<punct>[|&\\;+*?~\[\](),=])
""", re.X)


@dataclass(frozen=True)
class Tok:
    kind: str          # ident string punct inv ge le eof
    text: str
    line: int


def lex(text: str, file: str) -> tuple[list, dict]:
    """Tokens, and the comment text that ends on each line (for definitions' documentation)."""
    toks: list[Tok] = []
    comments: dict[int, str] = {}
    i, line, n = 0, 1, len(text)
    while i < n:
        if text.startswith("(*", i):
            depth, j, start = 1, i + 2, line
            while j < n and depth:
                if text.startswith("(*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*)", j):
                    depth, j = depth - 1, j + 2
                else:
                    if text[j] == "\n":
                        line += 1
                    j += 1
            if depth:
                raise LitmusError("unterminated comment (* ... *)", file, start)
            comments[line] = text[i + 2:j - 2].strip()
            i = j
            continue
        m = _TOKEN.match(text, i)
        if not m:
            raise LitmusError(f"unexpected character {show(repr(text[i]))}", file, line)
        k = m.lastgroup
        if k == "nl":
            line += 1
        elif k != "ws":
            s = m.group()
            if k == "ident" and s.endswith(("-", ".")):
                raise LitmusError(f"a name may not end with '{s[-1]}': {show(s)}", file, line)
            toks.append(Tok(k, s, line))
        i = m.end()
    toks.append(Tok("eof", "", line))
    return toks, comments


# ---- parser ------------------------------------------------------------------------------------

class _Parser:
    """Precedence, lowest first: `|`, `;`, `\\`, `&`, then the prefix `~` and the postfix
    `^-1 + * ?` (herd's cat order)."""

    def __init__(self, toks: list, comments: dict, file: str):
        self.t, self.i, self.file, self.comments = toks, 0, file, comments
        self.depth = 0

    def peek(self, k: int = 0) -> Tok:
        return self.t[min(self.i + k, len(self.t) - 1)]

    def next(self) -> Tok:
        t = self.peek()
        self.i += 1
        return t

    def err(self, msg: str, tok: Optional[Tok] = None):
        tok = tok or self.peek()
        got = "end of file" if tok.kind == "eof" else f"'{show(tok.text)}'"
        raise LitmusError(f"{msg} (found {got})", self.file, tok.line)

    def expect(self, text: str) -> Tok:
        if self.peek().text != text or self.peek().kind == "string":
            self.err(f"expected '{text}'")
        return self.next()

    def ident(self, what: str) -> Tok:
        t = self.peek()
        if t.kind != "ident" or t.text in KEYWORDS:
            self.err(f"expected {what}")
        return self.next()

    def program(self) -> Program:
        p = Program(self.file)
        while self.peek().kind != "eof":
            p.stmts.append(self.stmt())
        return p

    def comment_before(self, line: int) -> str:
        for ln in (line, line - 1):
            if ln in self.comments:
                return self.comments[ln]
        return ""

    def stmt(self):
        t = self.peek()
        if t.text == "let" and t.kind == "ident":
            self.next()
            rec = False
            if self.peek().text == "rec":
                self.next()
                rec = True
            bs = [self.binding()]
            while self.peek().text == "and" and self.peek().kind == "ident":
                self.next()
                bs.append(self.binding())
            return Let(self.file, t.line, rec, tuple(bs))
        if t.text == "include":
            self.next()
            s = self.next()
            if s.kind != "string":
                self.err("expected a file name in double quotes after include", s)
            return Include(self.file, t.line, s.text[1:-1])
        if t.text == "option" and t.kind == "ident":
            self.next()
            n = self.ident("an option name after 'option'")
            self.expect("=")
            v = self.next()
            if v.kind != "ident":
                self.err("expected an option value (a name such as pr170447, true or false)", v)
            return Option(self.file, t.line, n.text, v.text)
        if t.text == "value":
            self.next()
            ms = self.expr()
            self.expect("definite")
            d = self.expr()
            return Value(self.file, t.line, ms, d, self.alias("value"))
        flag = False
        if t.text == "flag":
            self.next()
            flag = True
            self.expect("~")
            if self.peek().text != "empty":
                self.err("expected 'empty' after 'flag ~'")
        k = self.peek()
        if k.text in ("acyclic", "irreflexive", "empty") and k.kind == "ident":
            self.next()
            e = self.expr()
            return Axiom(self.file, t.line, k.text, flag, e, self.alias(k.text))
        self.err("expected a statement (let, include, acyclic, irreflexive, empty, flag, value, "
                 "option)")

    def alias(self, default: str) -> str:
        if self.peek().text == "as" and self.peek().kind == "ident":
            self.next()
            return self.ident("a name after 'as'").text
        return default

    def binding(self) -> Binding:
        n = self.ident("a name to define")
        param = None
        if self.peek().text == "[":
            self.next()
            param = self.ident("a level variable").text
            if param in LEVEL_NAMES:
                self.err(f"'{param}' is a scope level, not a variable", self.peek(-1))
            self.expect("]")
        self.expect("=")
        e = self.expr()
        return Binding(self.file, n.line, n.text, param, e, self.comment_before(n.line))

    # expressions
    def expr(self):
        self.depth += 1
        if self.depth > 60:
            self.err("expression nested too deeply (more than 60 parentheses)")
        try:
            return self.binary(0)
        finally:
            self.depth -= 1

    OPS = ("|", ";", "\\", "&")

    def binary(self, lvl: int):
        if lvl == len(self.OPS):
            return self.prefix()
        left = self.binary(lvl + 1)
        while self.peek().kind == "punct" and self.peek().text == self.OPS[lvl]:
            t = self.next()
            right = self.binary(lvl + 1)
            left = Bin(self.file, t.line, t.text, left, right)
        return left

    def prefix(self):
        t = self.peek()
        if t.kind == "punct" and t.text == "~":
            self.next()
            self.depth += 1
            if self.depth > 200:
                self.err("expression nested too deeply")
            try:
                return Un(self.file, t.line, "~", self.prefix())
            finally:
                self.depth -= 1
        return self.postfix(self.atom())

    def postfix(self, e):
        while True:
            t = self.peek()
            if t.kind == "inv":
                self.next()
                e = Un(self.file, t.line, "inv", e)
            elif t.kind == "punct" and t.text in "+*?" and t.text:
                self.next()
                e = Un(self.file, t.line, t.text, e)
            else:
                return e

    def atom(self):
        t = self.peek()
        if t.kind == "punct" and t.text == "(":
            self.next()
            e = self.expr()
            self.expect(")")
            return e
        if t.kind == "punct" and t.text == "[":
            self.next()
            e = self.expr()
            self.expect("]")
            return Un(self.file, t.line, "ident", e)
        if t.kind == "ident" and t.text in ("domain", "range", "spaces"):
            self.next()
            self.expect("(")
            e = self.expr()
            self.expect(")")
            return Un(self.file, t.line, t.text, e)
        if t.kind == "ident" and t.text == "cross":
            self.next()
            self.expect("(")
            a = self.expr()
            self.expect(",")
            b = self.expr()
            self.expect(")")
            return Cross(self.file, t.line, a, b)
        if t.kind == "ident" and t.text == "union":
            self.next()
            self.expect("(")
            v = self.ident("a level variable").text
            cmp = bound = None
            if self.peek().kind in ("ge", "le"):
                cmp = self.next().text
                bound = self.ident("a level").text
            body_line = t.line
            if self.peek().text == "," and cmp is not None:     # a second bound
                self.next()
                v2 = self.ident("the level variable again")
                if v2.text != v:
                    self.err(f"the second bound must be on '{v}' too", v2)
                if self.peek().kind not in ("ge", "le"):
                    self.err("expected >= or <=")
                cmp2 = self.next().text
                bound2 = self.ident("a level").text
                self.expect(")")
                inner = LevelUnion(self.file, body_line, v, cmp2, bound2, self.prefix())
                return LevelUnion(self.file, t.line, v, cmp, bound, inner)
            self.expect(")")
            return LevelUnion(self.file, t.line, v, cmp, bound, self.prefix())
        n = self.ident("a name, '(', '[' or an operator's operand")
        idx = None
        if self.peek().text == "[" and self.peek(1).kind == "ident" and self.peek(2).text == "]":
            self.next()
            idx = self.next().text
            self.next()
        return Name(self.file, n.line, n.text, idx)


MAX_DEPTH = 300


def _children(e) -> tuple:
    if isinstance(e, (Bin, Cross)):
        return (e.left, e.right)
    if isinstance(e, Un):
        return (e.arg,)
    if isinstance(e, LevelUnion):
        return (e.body,)
    return ()


def _check_depth(e) -> None:
    """Every later pass recurses over expressions: a depth past MAX_DEPTH is an error here,
    at the expression's line, not a Python recursion error later (computed without
    recursion)."""
    stack = [(e, 1)]
    while stack:
        n, d = stack.pop()
        if d > MAX_DEPTH:
            raise LitmusError(f"expression nested more than {MAX_DEPTH} deep (operators "
                              "and parentheses)", n.file, n.line)
        stack.extend((c, d + 1) for c in _children(n))


def parse(text: str, file: str) -> Program:
    toks, comments = lex(text, file)
    prog = _Parser(toks, comments, file).program()
    for st in prog.stmts:
        for e in ([b.expr for b in st.bindings] if isinstance(st, Let) else
                  [st.expr] if isinstance(st, Axiom) else
                  [st.maysee, st.definite] if isinstance(st, Value) else []):
            _check_depth(e)
    return prog
