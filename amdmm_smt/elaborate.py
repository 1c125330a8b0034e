"""Stage 2: elaborate a parsed test into events and the relations that do not depend on the
execution: program order, same location, scope instances and scope inclusion.

Everything computed here is plain Python; only what can vary between executions goes to Z3.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from .errors import LitmusError, Unsupported
from .ir import (AGENT, CLUSTER, SCOPE_LEVEL, SINGLETHREAD, SYSTEM, WAVEFRONT, WORKGROUP,
                 Instr, Test, at_least_monotonic, is_acquire, is_release)
from .model import Model
from .targets import Target, get_target

AV_NONE = ("amdgcn-av", "none")


@dataclass
class Event:
    id: int
    thread: Optional[int]          # index into Elab.threads; None for an initial write
    pos: int                       # position in program order (-1 for an initial write)
    kind: str                      # init load store rmw cmpxchg fence av_load av_store
    instr: Optional[Instr]
    loc: Optional[str] = None
    atomic: bool = False
    volatile: bool = False
    order: Optional[str] = None
    fail_order: Optional[str] = None
    scope: int = SYSTEM            # the level of the operation's scope instance
    one_as: bool = False
    av_none: bool = False
    reads: bool = False
    writes: bool = False           # may write (a cmpxchg writes only when it succeeds)
    label: str = ""

    @property
    def is_init(self) -> bool:
        return self.kind == "init"

    @property
    def is_fence(self) -> bool:
        return self.kind == "fence"


@dataclass
class Elab:
    test: Test
    model: Model
    target: Target
    events: list[Event]
    thread_names: list[str]
    paths: list[dict[int, tuple]]                 # per thread: scope level -> instance key
    regs: dict[tuple[str, str], int] = field(default_factory=dict)   # (thread, reg) -> event
    locs: list[str] = field(default_factory=list)

    # ---- static relations ----
    def po(self, a: Event, b: Event) -> bool:
        return (a.thread is not None and a.thread == b.thread and a.pos < b.pos)

    def contains(self, x: Event, level: int, y: Event) -> bool:
        """Does x's instance of scope `level` contain operation y? (S000 Scopes)"""
        if y.is_init and self.model.options.init_in_every_scope:
            return True          # docs/semantics.md R-init
        if x.is_init:
            return level == SYSTEM or self.model.options.init_in_every_scope
        if y.is_init:
            return level == SYSTEM
        return self.paths[x.thread][level] == self.paths[y.thread][level]

    def inclusive(self, x: Event, y: Event) -> bool:
        """S000 "Inclusive Scopes": the scope instance of each operation contains the other.
        With the OpenCL option (S002: "requires the memory scopes to exactly match") the two
        scopes must also be equal."""
        if not (self.contains(x, x.scope, y) and self.contains(y, y.scope, x)):
            return False
        if self.model.options.scope_inclusion == "opencl" and not (x.is_init or y.is_init):
            return x.scope == y.scope
        return True

    def writes_to(self, loc: str) -> list[Event]:
        return [e for e in self.events if e.writes and e.loc == loc]

    def reads_of(self, loc: str) -> list[Event]:
        return [e for e in self.events if e.reads and e.loc == loc]


def _scope_level(scope: str, target: Target) -> int:
    level = SCOPE_LEVEL[scope]
    if level == CLUSTER and not target.clusters:
        return AGENT      # S002: cluster "behaves like agent scope instead"
    return level


def elaborate(test: Test, model: Model) -> Elab:
    tname = test.target or model.options.default_target
    try:
        target = get_target(tname)
    except ValueError as e:
        raise LitmusError(str(e), test.file, test.line) from None

    paths = []
    for i, t in enumerate(test.threads):
        if t.cluster != 0 and not target.clusters:
            raise LitmusError(f"thread {t.name}: target {target.name} has no workgroup "
                              f"clusters, so cluster: {t.cluster} names nothing", test.file,
                              t.line)
        wave = t.wavefront if t.wavefront is not None else ("own", i)
        a, c, g = t.agent, t.cluster, t.workgroup
        paths.append({SYSTEM: (), AGENT: (a,), CLUSTER: (a, c), WORKGROUP: (a, c, g),
                      WAVEFRONT: (a, c, g, wave), SINGLETHREAD: (a, c, g, wave, i)})

    spaces = {loc.space for loc in test.memory.values() if loc.space != "barrier"}
    events: list[Event] = []
    locs = [n for n, loc in test.memory.items() if loc.space != "barrier"]
    for n in locs:
        if test.memory[n].init is not None:
            events.append(Event(len(events), None, -1, "init", None, loc=n, atomic=True,
                                order="monotonic", scope=SYSTEM, writes=True,
                                label=f"init @{n}"))
    regs: dict[tuple[str, str], int] = {}
    for ti, t in enumerate(test.threads):
        for pos, ins in enumerate(t.code):
            if ins.kind in ("barrier", "async"):
                raise Unsupported(f"'{ins.intrinsic}': the execution-barrier and asynchronous "
                                  "operation models are not encoded yet", test.file, ins.line)
            other = sorted(tag for tag in ins.mmra if tag != AV_NONE)
            if other:
                raise Unsupported(f"MMRA tag '{other[0][0]}:{other[0][1]}': only "
                                  "amdgcn-av:none is encoded so far", test.file, ins.line)
            if ins.one_as and len(spaces) > 1:
                raise Unsupported("a -one-as sync scope in a test that uses more than one "
                                  "address space", test.file, ins.line)
            e = Event(len(events), ti, pos, ins.kind, ins, loc=ins.loc, atomic=ins.atomic,
                      volatile=ins.volatile, order=ins.order, fail_order=ins.fail_order,
                      scope=_scope_level(ins.scope, target), one_as=ins.one_as,
                      av_none=AV_NONE in ins.mmra, reads=ins.reads, writes=ins.writes,
                      label=f"{t.name}:{ins.line}")
            events.append(e)
            if ins.reg:
                regs[(t.name, ins.reg)] = e.id
    return Elab(test, model, target, events, [t.name for t in test.threads], paths, regs, locs)


# ---- roles of an event in the S000 definitions (static parts) ------------------------------

def store_available(e: Event) -> bool:
    """S000 store-available: the av store intrinsic, or "An atomic operation that results in a
    store operation"."""
    return e.kind == "av_store" or e.is_init or (e.atomic and e.writes)


def load_visible(e: Event) -> bool:
    """S000 load-visible: the av load intrinsic, or "An atomic operation that results in a read
    operation"."""
    return e.kind == "av_load" or (e.atomic and e.reads)


def may_release(e: Event) -> bool:
    return e.kind in ("store", "rmw", "cmpxchg", "fence") and is_release(e.order)


def may_acquire(e: Event) -> bool:
    if e.kind == "cmpxchg":
        return is_acquire(e.order) or is_acquire(e.fail_order)
    return e.kind in ("load", "rmw", "fence") and is_acquire(e.order)


def strong_atomic(e: Event) -> bool:
    """monotonic or stronger (LangRef: unordered does not take part in modification order)."""
    return e.is_init or (e.atomic and at_least_monotonic(e.order))
