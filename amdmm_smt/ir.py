"""The parsed litmus test: locations, threads, instructions, conditions.

Everything here is plain data. An instruction keeps its source line so that every later
error can name it. `Instr.guard` is reserved for control flow (an instruction executes only
when its guard holds); straight-line code has no guard.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Union

# Scope levels, largest first in the tree: system > agent > cluster > workgroup > wavefront >
# singlethread (S000 "AMDGPU scopes").
SINGLETHREAD, WAVEFRONT, WORKGROUP, CLUSTER, AGENT, SYSTEM = range(6)
SCOPE_LEVEL = {
    "": SYSTEM, "agent": AGENT, "cluster": CLUSTER, "workgroup": WORKGROUP,
    "wavefront": WAVEFRONT, "singlethread": SINGLETHREAD,
}
LEVEL_NAME = {v: (k or "system") for k, v in SCOPE_LEVEL.items()}

ORDERS = ("unordered", "monotonic", "acquire", "release", "acq_rel", "seq_cst")
RMW_OPS = ("xchg", "add", "sub", "and", "or", "xor", "max", "min", "umax", "umin")

SPACES = {"global": 1, "local": 3, "barrier": 3}
# Declared spaces stored as global memory (docs/semantics.md 16): S002 "Private" and "Global
# and Constant". The engines see `space: global`; Location.declared keeps the declared name.
STORED_AS_GLOBAL = {"private": 5, "constant": 4}


def is_release(order: Optional[str]) -> bool:
    return order in ("release", "acq_rel", "seq_cst")


def is_acquire(order: Optional[str]) -> bool:
    return order in ("acquire", "acq_rel", "seq_cst")


def at_least_monotonic(order: Optional[str]) -> bool:
    return order in ("monotonic", "acquire", "release", "acq_rel", "seq_cst")



# the value `poison` in conditions and outcomes (issue 28 item 3, docs/semantics.md 15.4): a
# register that may be poison; prints as `poison`
POISON = "poison"

@dataclass(frozen=True)
class Reg:
    """A register operand `%name`."""
    name: str


Operand = Union[int, Reg]


@dataclass(frozen=True)
class Location:
    """A memory location and its declared attributes."""
    name: str
    space: str                 # global | local | barrier
    init: Optional[int]        # None: no initial write (extension `init: undef`)
    line: int
    declared: str = ""         # private | constant (stored as global, docs 16); "" otherwise


@dataclass
class Instr:
    """One instruction of a thread."""
    kind: str                  # load store rmw cmpxchg fence av_load av_store barrier async
    line: int
    text: str
    reg: Optional[str] = None          # defined register
    loc: Optional[str] = None          # location name
    addrspace: Optional[int] = None
    value: Optional[Operand] = None    # store value / rmw operand / cmpxchg new value
    expected: Optional[Operand] = None  # cmpxchg expected value
    op: Optional[str] = None           # atomicrmw operation
    atomic: bool = False
    volatile: bool = False
    order: Optional[str] = None        # (success) ordering
    fail_order: Optional[str] = None   # cmpxchg failure ordering
    scope: str = ""                    # sync scope name without -one-as ("" = system)
    one_as: bool = False
    mmra: frozenset = frozenset()      # set of (prefix, suffix) tags
    intrinsic: Optional[str] = None    # for barrier / async calls: the intrinsic name
    args: tuple = ()                   # for barrier / async calls: parsed arguments
    guard: Optional[object] = None     # reserved for control flow
    # control flow (docs/semantics.md section 15): icmp / binop / select / phi / br / assume
    ops: tuple = ()                    # operands (int or Reg); phi: one per incoming label
    targets: tuple = ()                # br: successor labels; phi: incoming labels; label: name
    # a barrier instruction of a thread group's code (docs/litmus-format.md "Thread groups"):
    # (group, position in the group's code after inlining), the same in every thread of the
    # group; None elsewhere. Two threads of one wave meet at a barrier only at the same site
    # (docs/semantics.md 15.10, R-spmd-site)
    site: Optional[tuple] = None
    # function calls (docs/semantics.md 15.8, R-call-async-seq): the call sites the instruction
    # was inlined through (a tuple of call numbers, () for the thread's own code); an `enter`
    # instruction (no event) marks where one execution of the body `frame` begins
    frame: tuple = ()

    @property
    def reads(self) -> bool:
        return self.kind in ("load", "rmw", "cmpxchg", "av_load")

    @property
    def writes(self) -> bool:
        return self.kind in ("store", "rmw", "cmpxchg", "av_store")

    def uses(self) -> list[str]:
        return [o.name for o in (self.value, self.expected) + tuple(self.ops)
                if isinstance(o, Reg)]


@dataclass
class Thread:
    """A thread: its place in the scope tree and its code."""
    name: str
    agent: int
    cluster: int
    workgroup: int
    wavefront: Optional[int]   # None: a wavefront of its own
    code: list[Instr]
    line: int
    place_lines: dict = field(default_factory=dict)   # placement key -> its line
    # the i32 registers an outcome shows: defined on every complete path (docs section 15);
    # None: every register the code defines (straight-line code)
    out_regs: Optional[list] = None
    # a thread of a thread group (docs/litmus-format.md "Thread groups"): the group's name
    group: Optional[str] = None


# ---- conditions -------------------------------------------------------------------------

@dataclass(frozen=True)
class RegTerm:
    """A register in a condition (THREAD:%reg)."""
    thread: str
    reg: str


@dataclass(frozen=True)
class LocTerm:
    """A location's final value in a condition (@loc)."""
    loc: str


@dataclass(frozen=True)
class Const:
    """A constant in a condition (None: undef; POISON: poison)."""
    value: Optional[int]       # None = undef; POISON = poison (docs/litmus-format.md)


Term = Union[RegTerm, LocTerm, Const]


@dataclass(frozen=True)
class Cmp:
    """A comparison of two terms in a condition."""
    op: str                    # == or !=
    left: Term
    right: Term


@dataclass(frozen=True)
class Not:
    """A negated condition."""
    arg: "Cond"


@dataclass(frozen=True)
class BoolOp:
    """A conjunction or disjunction in a condition."""
    op: str                    # and | or
    args: tuple


Cond = Union[Cmp, Not, BoolOp]


@dataclass
class Condition:
    """A condition, with its source text and line."""
    text: str
    line: int
    cond: Cond


@dataclass
class Test:
    """A parsed litmus test."""
    name: str
    file: str
    line: int
    description: str
    target: Optional[str]
    model: Optional[str]
    memory: dict[str, Location]
    threads: list[Thread]
    metadata: dict[str, object] = field(default_factory=dict)
    exists: Optional[Condition] = None
    expect: Optional[str] = None       # allowed | forbidden | undefined
    outcomes: Optional[list[Condition]] = None
    target_line: Optional[int] = None
    model_line: Optional[int] = None
    model_written: Optional[str] = None   # `model:` as written (a model file: resolved in model)
    unroll: Optional[int] = None       # docs section 15: loop bound (None: the --unroll default)
    bound: str = "fail"                # fail | assume: executions past the bound
    unroll_line: Optional[int] = None
    silence: list = field(default_factory=list)   # warning names (amdmm_smt/explain/lint.py)
    undefined: Optional[str] = None    # "some": some executions are undefined (docs 10.6)
