"""Loading a model file: includes, name resolution, the type checker (docs/model-language.md
"Typing rules"). Every error is a LitmusError with the file and line of the offending text."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Optional

from ..errors import LitmusError, show
from .names import BASE
from .syntax import (LEVEL_NAMES, Axiom, Bin, Binding, Cross, Include, Let, LevelUnion, Name,
                     Option,
                     Un, Value, parse)

MAX_BYTES = 1 << 20
MAX_CHAIN = 200


@dataclass
class Def:
    b: Binding
    group: int                 # the let statement it belongs to
    rec: bool
    sort: str = "?"
    space: bool = False        # depends on the address space at hand


@dataclass
class CatModel:
    file: str
    files: list = field(default_factory=list)
    defs: dict = field(default_factory=dict)          # name -> Def (the last definition wins)
    groups: dict = field(default_factory=dict)        # group id -> [names] of a let rec
    axioms: list = field(default_factory=list)
    value: Optional[Value] = None
    warnings: list = field(default_factory=list)      # "FILE:LINE: warning: ..."
    bases: set = field(default_factory=set)           # base names the axioms / value use
    # `option NAME = VALUE` (docs/model-language.md "Engine options"): name -> (value as
    # written, file, line), the last one wins; checked by model.engine_options
    options: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        return os.path.splitext(os.path.basename(self.file))[0]


def _read(path: str, file: str, line: Optional[int]) -> str:
    try:
        if not os.path.isfile(path):
            raise LitmusError(f"model file '{show(path)}' does not exist or is not a regular "
                              "file", file, line)
        with open(path, "rb") as f:
            data = f.read(MAX_BYTES + 1)
    except OSError as e:
        raise LitmusError(f"cannot read model file '{show(path)}': {e.strerror}", file,
                          line) from None
    if len(data) > MAX_BYTES:
        raise LitmusError("model file is larger than 1 MiB", path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise LitmusError(f"model file is not UTF-8 text (byte 0x{data[e.start]:02x})", path,
                          data.count(b"\n", 0, e.start) + 1) from None


def _shipped_dir() -> Optional[str]:
    """The shipped model files: the package's models/ (package data when installed, a link
    to the repository's models/ in the source tree; model.shipped_models_dir finds the same)."""
    d = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "models")
    return d if os.path.isdir(d) else None


_PARSED: dict = {}      # path -> (its text, Program): _parsed


def _parsed(text: str, p: str):
    """parse(text, p), once per file content: every option file includes seed.cat, which
    `amdmm-smt models` read 33 times. One entry per path, its latest content (a process that
    reads many versions of a file, an editor's or the model fuzzer's, keeps one). The syntax
    tree is immutable (frozen dataclasses), and whatever a model computes from it is kept per
    model (keyed by node, on the CatModel)."""
    hit = _PARSED.get(p)
    if hit is not None and hit[0] == text:
        return hit[1]
    prog = parse(text, p)
    _PARSED[p] = (text, prog)
    return prog


def load(path: str) -> CatModel:
    """Parse and check a model file and everything it includes."""
    m = CatModel(path)
    gid = [0]

    def visit(p: str, stack: list, file: str, line: Optional[int]):
        real = os.path.realpath(p)
        if real in stack:
            raise LitmusError(f"include cycle: {show(os.path.basename(p))} includes itself "
                              "(through " + " -> ".join(os.path.basename(s) for s in stack)
                              + ")", file, line)
        if len(stack) > 32:
            raise LitmusError("includes nested more than 32 deep", file, line)
        text = _read(p, file, line)
        m.files.append(p)
        prog = _parsed(text, p)
        for st in prog.stmts:
            if isinstance(st, Include):
                cand = os.path.join(os.path.dirname(p), st.path)
                if not os.path.isfile(cand) and not os.path.isabs(st.path):
                    d = _shipped_dir()
                    if d and os.path.isfile(os.path.join(d, st.path)):
                        cand = os.path.join(d, st.path)
                visit(cand, stack + [real], st.file, st.line)
            elif isinstance(st, Let):
                gid[0] += 1
                names = []
                for b in st.bindings:
                    if b.name in BASE:
                        raise LitmusError(f"'{b.name}' is a base name; it cannot be redefined",
                                          b.file, b.line)
                    if b.name in names:
                        raise LitmusError(f"'{b.name}' is defined twice in one let", b.file,
                                          b.line)
                    names.append(b.name)
                    m.defs[b.name] = Def(b, gid[0], st.rec)
                m.groups[gid[0]] = names
            elif isinstance(st, Axiom):
                m.axioms.append(st)
            elif isinstance(st, Value):
                m.value = st
            elif isinstance(st, Option):
                m.options[st.name] = (_option_value(st), st.file, st.line)
    try:
        visit(path, [], path, None)
        _check(m)
    except RecursionError:
        raise LitmusError("the model nests too deeply", path, 1) from None
    return m


# ---- engine options ----------------------------------------------------------------------

def _option_value(st):
    """The value as written; model.py (engine_options) says which names and values exist."""
    return st.value


# ---- typing ------------------------------------------------------------------------------------

def _err(node, msg: str):
    raise LitmusError(msg, node.file, node.line)


class _Checker:
    def __init__(self, m: CatModel):
        self.m = m
        self.used: set = set()
        self.deps: dict = {n: set() for n in m.defs}

    def sort_of(self, name: str, node) -> tuple[str, bool, bool]:
        """(sort, indexed, space-dependent) of a name."""
        if name in BASE:
            return BASE[name]
        d = self.m.defs.get(name)
        if d is None:
            _err(node, f"unknown name '{show(name)}' (not a base set or relation of "
                       "docs/model-language.md, nor defined by let)")
        if d.sort == "?":
            self.define(name)
        if d.sort == "busy":
            _err(node, f"'{name}' is used in its own definition: recursion needs let rec "
                       "... and ...")
        return d.sort, d.b.param is not None, d.space

    def define(self, name: str, stack=()):
        d = self.m.defs[name]
        if d.sort not in ("?", "busy"):
            return
        if d.sort == "busy":
            return
        d.sort = "busy"
        if d.rec:     # the sort of a recursive group: assume relation, check after
            group = self.m.groups[d.group]
            for n in group:
                g = self.m.defs.get(n)
                if g is not None and g.group == d.group and g.sort == "?":
                    g.sort = "busy"
            for n in group:
                g = self.m.defs.get(n)
                if g is None or g.group != d.group:
                    continue
                g.sort = self._guess(g)
            for n in group:
                g = self.m.defs.get(n)
                if g is None or g.group != d.group:
                    continue
                s, sp = self.expr(g.b.expr, {g.b.param} - {None}, owner=n)
                if s != g.sort:
                    _err(g.b, f"'{n}' is a {s} but is used as a {g.sort} in its let rec")
                g.space = g.space or sp
            # space dependence through the recursion: iterate
            changed = True
            while changed:
                changed = False
                for n in group:
                    g = self.m.defs.get(n)
                    if g is None or g.group != d.group:
                        continue
                    _, sp = self.expr(g.b.expr, {g.b.param} - {None}, owner=n)
                    if sp and not g.space:
                        g.space, changed = True, True
            self._monotone(d.group)
            return
        s, sp = self.expr(d.b.expr, {d.b.param} - {None}, owner=name)
        d.sort, d.space = s, sp

    def _guess(self, g: Def) -> str:
        """The sort of a recursive definition, from the shape of its right-hand side."""
        e = g.b.expr
        while isinstance(e, Bin) and e.op in "|&\\":
            e = e.left
        if isinstance(e, Un) and e.op in ("domain", "range"):
            return "set"
        if isinstance(e, Name):
            if e.name in BASE:
                return BASE[e.name][0]
            d = self.m.defs.get(e.name)
            if d is not None and d.sort in ("set", "rel"):
                return d.sort
        return "rel"

    def _monotone(self, group: int):
        names = {n for n in self.m.groups[group] if self.m.defs.get(n) and
                 self.m.defs[n].group == group}

        def walk(e, neg: bool):
            if isinstance(e, Name):
                if neg and e.name in names:
                    _err(e, f"let rec is not monotone: '{e.name}' occurs under a complement "
                            "or on the right of '\\' in its own definition")
            elif isinstance(e, Bin):
                walk(e.left, neg)
                walk(e.right, neg if e.op != "\\" else True)
            elif isinstance(e, Un):
                walk(e.arg, neg or e.op == "~")
            elif isinstance(e, Cross):
                walk(e.left, neg)
                walk(e.right, neg)
            elif isinstance(e, LevelUnion):
                walk(e.body, neg)
        for n in names:
            walk(self.m.defs[n].b.expr, False)

    def level(self, node, idx: str, lvars: set):
        if idx in LEVEL_NAMES or idx in lvars:
            return
        _err(node, f"'{show(idx)}' is not a scope level ({', '.join(LEVEL_NAMES)}) nor a level "
                   "variable in scope")

    def expr(self, e, lvars: set, owner: Optional[str] = None) -> tuple[str, bool]:
        if isinstance(e, Name):
            if e.name in lvars or e.name in LEVEL_NAMES:
                _err(e, f"'{e.name}' is a scope level, not a set or relation")
            s, indexed, sp = self.sort_of(e.name, e)
            self.used.add(e.name)
            if owner is not None and e.name in self.m.defs:
                self.deps[owner].add(e.name)
            if indexed and e.index is None:
                _err(e, f"'{e.name}' is indexed by a scope level: write {e.name}[L]")
            if not indexed and e.index is not None:
                _err(e, f"'{e.name}' takes no scope level")
            if e.index is not None:
                self.level(e, e.index, lvars)
            return s, sp
        if isinstance(e, Bin):
            ls, lsp = self.expr(e.left, lvars, owner)
            rs, rsp = self.expr(e.right, lvars, owner)
            if e.op == ";":
                if ls != "rel" or rs != "rel":
                    _err(e, "';' composes relations (a set S is the relation [S])")
            elif ls != rs:
                _err(e, f"'{e.op}' between a {ls} and a {rs}")
            return ls, lsp or rsp
        if isinstance(e, Un):
            s, sp = self.expr(e.arg, lvars, owner)
            if e.op == "ident":
                if s != "set":
                    _err(e, "[S] needs a set")
                return "rel", sp
            if e.op in ("domain", "range"):
                if s != "rel":
                    _err(e, f"{e.op}(r) needs a relation")
                return "set", sp
            if e.op == "~":
                return s, sp
            if e.op == "spaces":
                return s, False
            if s != "rel":
                op = {"inv": "^-1"}.get(e.op, e.op)
                _err(e, f"'{op}' needs a relation")
            return "rel", sp
        if isinstance(e, Cross):
            a, asp = self.expr(e.left, lvars, owner)
            b, bsp = self.expr(e.right, lvars, owner)
            if a != "set" or b != "set":
                _err(e, "cross(A, B) needs two sets")
            return "rel", asp or bsp
        if isinstance(e, LevelUnion):
            if e.var in LEVEL_NAMES:
                _err(e, f"'{e.var}' is a scope level, not a variable")
            if e.bound is not None:
                self.level(e, e.bound, lvars)
            return self.expr(e.body, lvars | {e.var}, owner)
        raise AssertionError(e)


def _check(m: CatModel) -> None:
    c = _Checker(m)
    for n in list(m.defs):
        c.define(n)
    # cycles outside a let rec
    state: dict = {}

    def visit(n, path):
        state[n] = 1
        for d in sorted(c.deps.get(n, ())):
            if state.get(d) == 1:
                if m.defs[d].group != m.defs[n].group or not m.defs[n].rec:
                    b = m.defs[n].b
                    raise LitmusError(f"'{n}' refers to '{d}', which refers back to it: "
                                      "recursion needs let rec ... and ...", b.file, b.line)
            elif d not in state:
                visit(d, path + [d])
        state[n] = 2
    for n in list(m.defs):
        if n not in state:
            visit(n, [n])
    # the evaluators follow definitions recursively: bound the length of a chain of them
    depth: dict = {}
    for n0 in m.defs:
        stack = [(n0, False)]
        while stack:
            n, done = stack.pop()
            if n in depth:
                continue
            ds = [d for d in c.deps.get(n, ()) if m.defs[d].group != m.defs[n].group]
            if done:
                depth[n] = _ast_depth(m.defs[n].b.expr) + max(
                    (depth.get(d, 0) for d in ds), default=0)
                if depth[n] > MAX_CHAIN:
                    b = m.defs[n].b
                    raise LitmusError(f"definitions and their operators build on each other "
                                      f"more than {MAX_CHAIN} deep ('{n}')", b.file, b.line)
                continue
            stack.append((n, True))
            stack.extend((d, False) for d in ds if d not in depth)
    roots: set = set()
    for ax in m.axioms:
        s, _ = c.expr(ax.expr, set())
        if ax.kind in ("acyclic", "irreflexive") and s != "rel":
            _err(ax, f"{ax.kind} needs a relation")
    if m.value is not None:
        s, _ = c.expr(m.value.maysee, set())
        if s != "rel":
            _err(m.value, "value: the may-see part must be a relation (write, read)")
        s, _ = c.expr(m.value.definite, set())
        if s != "set":
            _err(m.value, "value: the definite part must be a set of reads")
    # unused definitions (warnings): not reachable from an axiom or the value statement
    reach = set()
    todo = [n for n in c.used if n in m.defs]
    for ax in m.axioms:
        todo += _names(ax.expr)
    if m.value is not None:
        todo += _names(m.value.maysee) + _names(m.value.definite)
    while todo:
        n = todo.pop()
        if n in reach or n not in m.defs:
            continue
        reach.add(n)
        todo += list(c.deps.get(n, ()))
    roots = set()
    for ax in m.axioms:
        roots |= set(_names(ax.expr))
    if m.value is not None:
        roots |= set(_names(m.value.maysee)) | set(_names(m.value.definite))
    live = set()
    todo = [n for n in roots if n in m.defs]
    while todo:
        n = todo.pop()
        if n in live:
            continue
        live.add(n)
        todo += [d for d in c.deps.get(n, ()) if d in m.defs]
    m.bases = {n for n in roots if n in BASE}
    for n in live:
        m.bases |= {x for x in _names(m.defs[n].b.expr) if x in BASE}
    for n, d in m.defs.items():
        # only the checked file's own definitions: an option file that replaces a definition
        # of the file it includes leaves that file's helpers unused on purpose
        if n not in live and d.b.file == m.file:
            m.warnings.append(f"{d.b.file}:{d.b.line}: warning: '{n}' is defined but no axiom "
                              "nor the value statement uses it")
    if m.value is None:
        raise LitmusError("the model has no value statement (value MAYSEE definite DEFINITE): "
                          "without it no read has a value", m.file, 1)


def _ast_depth(e) -> int:
    from .syntax import _children
    best, stack = 0, [(e, 1)]
    while stack:
        n, d = stack.pop()
        best = max(best, d)
        stack.extend((c, d + 1) for c in _children(n))
    return best


def _names(e) -> list:
    if isinstance(e, Name):
        return [e.name]
    if isinstance(e, Bin):
        return _names(e.left) + _names(e.right)
    if isinstance(e, Un):
        return _names(e.arg)
    if isinstance(e, Cross):
        return _names(e.left) + _names(e.right)
    if isinstance(e, LevelUnion):
        return _names(e.body)
    return []


_CACHE: dict = {}


def load_cached(path: str) -> CatModel:
    """A model file, parsed and checked once per content version of every file it reads."""
    key = os.path.abspath(path)
    hit = _CACHE.get(key)
    if hit is not None:
        m, stamps = hit
        try:
            if all(os.path.getmtime(f) == t for f, t in stamps):
                return m
        except OSError:
            pass
    m = load(path)
    stamps = []
    for f in m.files:
        try:
            stamps.append((f, os.path.getmtime(f)))
        except OSError:
            pass
    _CACHE[key] = (m, stamps)
    return m
