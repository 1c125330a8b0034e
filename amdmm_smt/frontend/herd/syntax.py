"""herd / Dartagnan `.litmus` files: the AST of the C subset (`Program`, `ThreadAst`, statements
`Decl Assign ExprStmt If While Goto Label Block`, expressions `Num Var Deref AddrOf Call BinOp
Unary Cond`). A `for` loop is parsed into its `while` (init; while (cond) { body; step; })."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Union


I32_MIN, I32_MAX = -(2 ** 31), 2 ** 31 - 1
CONTROL_FLOW = ("is not supported yet by import-herd (it lowers if / else, while, for, ?: and "
                "goto; docs/herd-import.md)")
ARITH = ("is not supported yet by import-herd (it maps register arithmetic and comparisons "
         "of registers; docs/herd-import.md)")
BARRIER_FUNCS = {"barrier", "work_group_barrier"}


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


@dataclass
class Cond:
    """C's conditional operator `cond ? then : other`."""
    cond: "Expr"
    then: "Expr"
    other: "Expr"
    line: int


Expr = Union[Num, Var, Deref, AddrOf, Call, BinOp, Unary, Cond]


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
class Break:
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
