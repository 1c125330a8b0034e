"""The model language: a model version as a file its author edits (issue 27).

  syntax.py  lexer, parser, abstract syntax
  check.py   includes, name resolution, the type checker (`amdmm-smt model check`)
  base.py    the base sets and relations elaboration provides
  eval.py    the evaluator, and the concrete algebra of the reference engine
The Z3 algebra is encode/cat_z3.py; the reference engine's driver reference/cat_engine.py.
Language: docs/model-language.md; what is file-driven: docs/semantics.md §18.
"""

from __future__ import annotations

import os

from typing import TYPE_CHECKING

from ..errors import LitmusError

if TYPE_CHECKING:
    from .check import CatModel

__all__ = ["CatModel", "load", "load_cached", "is_cat", "refuse_unsupported", "rules",
           "inconsistent_warning"]

def __getattr__(name):
    """`CatModel` and `load` from check.py on first use: importing this package (for
    `is_cat`) does not load the parser and checker (start-up: issue 30)."""
    if name in ("CatModel", "load"):
        from . import check
        return getattr(check, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def is_cat(name) -> bool:
    return isinstance(name, str) and name.lower().endswith(".cat")


def load_cached(path: str):
    """A model file, parsed and checked once per content version of every file it reads
    (check.py keeps the cache; model.py reads it there, below this package's imports)."""
    from .check import load_cached as cached
    return cached(path)


def refuse_unsupported(elab, model_file: str) -> None:
    """A test that uses a family of rules the model file does not define is refused, never
    answered by hand-written code (docs/semantics.md §18): execution barriers when the file
    says nothing of what a run gives memory (models/barrier.cat does), asynchronous
    operations when the file says nothing of their completion (models/async.cat does)."""
    from ..errors import LitmusError as E
    from .base import ASYNC_COMPLETION, BARRIER_RUN
    t = elab.test
    name = os.path.basename(model_file)
    if getattr(elab, "barrier", None) is not None and not any(
            b in load_cached(model_file).bases for b in BARRIER_RUN):
        line = next((i.line for th in t.threads for i in th.code if i.kind == "barrier"),
                    None)
        raise E(f"the model file {name} does not define the family 'barrier' (execution "
                "barriers); run this test with a built-in model", t.file, line)
    ev = next((e for e in elab.events if e.async_of is not None or e.kind in (
        "dma", "dma_read", "dma_write", "asyncmark", "wait_asyncmark")), None)
    if ev is None:
        return
    line = getattr(getattr(ev, "instr", None), "line", None)
    if not any(b in load_cached(model_file).bases for b in ASYNC_COMPLETION):
        raise E(f"the model file {name} does not define the family 'async' (asynchronous "
                "operations); run this test with a built-in model", t.file, line)


def rules(m: CatModel) -> list:
    """The rules a minimal conflict is looked for among, in a fixed order both engines use:
    the value statement, then every axiom (not the flags) in file order, axioms of one name
    as one rule."""
    out, seen = [m.value], set()
    for ax in m.axioms:
        if not ax.flag and ax.name not in seen:    # one rule per name (the first axiom's line)
            seen.add(ax.name)
            out.append(ax)
    return out


def inconsistent_warning(m: CatModel, keep: list, test):
    """warning[model-inconsistent] (docs/semantics.md §18): the model file allows no execution
    of the test, and `keep` (indices into rules(m)) is a minimal set of its rules that
    conflict: without any one of them some execution exists."""
    from ..errors import Warn
    rs = rules(m)
    names = ", ".join(f"{rs[i].name} ({os.path.basename(rs[i].file)}:{rs[i].line})"
                      for i in keep)
    return Warn("model-inconsistent", f"the model file {os.path.basename(m.file)} allows no "
                f"execution of this test; these of its rules conflict: {names} (without any "
                "one of them some execution exists)", test.file, test.line)


def check_file(path: str) -> CatModel:
    """`amdmm-smt model check`: the model or a LitmusError."""
    if not os.path.exists(path):
        raise LitmusError(f"model file '{path}' does not exist", path)
    from .check import load
    m = load(path)
    from ..model import engine_options
    engine_options(m.options)          # its engine options exist (FILE:LINE otherwise)
    return m


def describe(path: str) -> str:
    """The first sentence of a model file's opening comment, and what it includes."""
    part = False
    try:
        m = load_cached(path)
    except LitmusError as e:
        if "has no value statement" not in e.message:
            return f"(does not load: {e})"
        part = True                  # a part of a model (async.cat): rules other files include
    text = open(path, encoding="utf-8").read()
    head = ""
    if text.lstrip().startswith("(*"):
        body = text.lstrip()[2:text.lstrip().find("*)")]
        head = " ".join(body.split())
        head = head.split(": ", 1)[-1] if head.startswith(os.path.basename(path)) else head
        head = head.split(". ")[0].rstrip(".") + "."
    if part:
        return head + " (a part of a model: other files include it)"
    inc = [os.path.basename(f) for f in m.files[1:]]
    return head + (f" (includes {', '.join(inc)})" if inc else "")
