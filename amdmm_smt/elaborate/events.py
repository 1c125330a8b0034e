"""Stage 2: elaborate a parsed test into events and the relations that do not depend on the
execution: program order, same location, scope instances and scope inclusion.

Everything computed here is plain Python; only what can vary between executions goes to Z3.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Optional

from .barrier import BarrierInfo, elaborate_barriers
from ..errors import LitmusError, Unsupported, Warn
from ..ir import (AGENT, CLUSTER, SCOPE_LEVEL, SINGLETHREAD, SYSTEM, WAVEFRONT, WORKGROUP, Instr,
                  Test, at_least_monotonic, is_acquire, is_release)
from ..model import Model
from . import async_ops as asyncops
from ..targets import Target, get_target

AV_NONE = ("amdgcn-av", "none")
SYNC_AS_PREFIX = "amdgpu-synchronize-as"
SYNC_AS = {"local": "local", "global": "global"}


def compatible(a: frozenset, b: frozenset) -> bool:
    """S001 compatibility: "for every unique tag prefix P present in at least one set: the
    other set contains no tag with prefix P, or at least one tag with prefix P is common to
    both sets." """
    for p in {t[0] for t in a | b}:
        pa = {t for t in a if t[0] == p}
        pb = {t for t in b if t[0] == p}
        if pa and pb and not (pa & pb):
            return False
    return True


@dataclass
class Event:
    """One event of an elaborated test."""
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
    tags: frozenset = frozenset()  # MMRA tags (prefix, suffix)
    reads: bool = False
    writes: bool = False           # may write (a cmpxchg writes only when it succeeds)
    label: str = ""
    async_of: Optional[int] = None  # dma_read / dma_write: the id of the initiating event (§11)
    # docs R-call-async-seq: the execution of a function body the event belongs to (0: the
    # thread's own code; k > 0: the k-th call executed by the thread, in program order)
    body: int = 0

    @property
    def is_init(self) -> bool:
        return self.kind == "init"

    @property
    def is_fence(self) -> bool:
        return self.kind == "fence"


@dataclass
class Elab:
    """An elaborated test: its events and what the encoding needs of them."""
    test: Test
    model: Model
    target: Target
    events: list[Event]
    thread_names: list[str]
    paths: list[dict[int, tuple]]                 # per thread: scope level -> instance key
    regs: dict[tuple[str, str], int] = field(default_factory=dict)   # (thread, reg) -> event
    locs: list[str] = field(default_factory=list)
    barrier: Optional[BarrierInfo] = None         # docs/semantics.md 10.3 (None: no barriers)
    _by_loc: dict = field(default_factory=dict, repr=False)
    warnings: list = field(default_factory=list)   # errors.Warn: accepted, but worth saying
    # docs §11.5: the happens-before edges of async operations (E-init, E-done), all static
    async_hb: list = field(default_factory=list)
    # docs R-call-async-seq: edges that hold iff one of their choice keys holds: (a, b, keys),
    # a key (thread, mark pos, stage, wait pos) = "the mark is completed-at the wait" where
    # the documents leave it unspecified; async_chains: per mark, its keys in program order
    # (monotone: a key implies the next)
    async_hb_cond: list = field(default_factory=list)
    async_chains: list = field(default_factory=list)
    # docs §15.4: one path per thread: register computations and the branches taken
    comp: dict = field(default_factory=dict)      # (thread, reg) -> icmp/binop/select/copy
    assumes: list = field(default_factory=list)   # (thread index, assume Instr)

    # ---- static relations ----
    def po(self, a: Event, b: Event) -> bool:
        if a.thread is None or a.thread != b.thread:
            return False
        if a.async_of is not None or b.async_of is not None:
            # docs §11.5: seed-004 places A at its instruction's position; UP 2.4: "it is not
            # related in program-order with any other operations from that thread"
            return self.model.options.async_model == "seed-004" and a.pos < b.pos
        return a.pos < b.pos

    def contains(self, x: Event, level: int, y: Event) -> bool:
        """Does x's instance of scope `level` contain operation y? (S000 Scopes)"""
        if y.is_init and self.model.options.init_in_every_scope:
            return True          # docs/semantics.md R-init
        if x.is_init:
            return level == SYSTEM or self.model.options.init_in_every_scope
        if y.is_init:
            return level == SYSTEM
        if level < WORKGROUP and x.id != y.id and (x.async_of is not None
                                                   or y.async_of is not None) \
                and self.model.options.async_scope == "workgroup":
            return False         # docs R-async-scope, cautious reading: no instance below WG
        return self.paths[x.thread][level] == self.paths[y.thread][level]

    def contains_rows(self, level: int) -> dict:
        """`contains` at one level for every pair at once: x.id -> the frozenset of the ids
        of the operations y that x's instance of scope `level` contains. The same answers
        as contains(x, level, y), built from the instance keys instead of a call per pair
        (the model files' base relation `contains`; tests/test_model_file.py checks the two
        equal on the corpus under each option that changes either). Cached: asked for of
        the finished elaboration only."""
        cache = self.__dict__.setdefault("_contains_rows", {})
        rows = cache.get(level)
        if rows is not None:
            return rows
        opts = self.model.options
        every = opts.init_in_every_scope
        ev = self.events
        inits = frozenset(e.id for e in ev if e.is_init)
        everything = frozenset(e.id for e in ev)
        asyncs = frozenset(e.id for e in ev if e.async_of is not None)
        cut = level < WORKGROUP and opts.async_scope == "workgroup"   # R-async-scope
        groups: dict = {}
        for e in ev:
            if not e.is_init:
                groups.setdefault(self.paths[e.thread][level], set()).add(e.id)
        init_row = everything if (level == SYSTEM or every) else frozenset()   # R-init
        with_inits = inits if (level == SYSTEM or every) else frozenset()
        rows = {}
        for x in ev:
            if x.is_init:
                rows[x.id] = init_row
                continue
            g = groups[self.paths[x.thread][level]]
            if cut:
                g = {x.id} if x.id in asyncs else g - asyncs
            rows[x.id] = frozenset(g) | with_inits
        cache[level] = rows
        return rows

    def inclusive_rows(self, space: Optional[str]) -> dict:
        """`inclusive` for every pair at once, as contains_rows: x.id -> the ids of the y
        with inclusive(x, y, space) (x itself among them when it is)."""
        cache = self.__dict__.setdefault("_inclusive_rows", {})
        rows = cache.get(space)
        if rows is not None:
            return rows
        sc = {e.id: self.scope_in(e, space) for e in self.events}
        opencl = self.model.options.scope_inclusion == "opencl"
        init = {e.id for e in self.events if e.is_init}
        rows = {}
        for x in self.events:
            cx = self.contains_rows(sc[x.id])[x.id]
            rows[x.id] = frozenset(
                y for y in cx if x.id in self.contains_rows(sc[y])[y]
                and (not opencl or x.id in init or y in init or sc[x.id] == sc[y]))
        cache[space] = rows
        return rows

    def inclusive(self, x: Event, y: Event, space: Optional[str] = None) -> bool:
        """S000 "Inclusive Scopes": the scope instance of each operation contains the other.
        With the OpenCL option (S002: "requires the memory scopes to exactly match") the two
        scopes must also be equal. `space`: the address space the question is about (scopes
        wider than workgroup count as workgroup for LDS, see scope_in)."""
        sx, sy = self.scope_in(x, space), self.scope_in(y, space)
        if not (self.contains(x, sx, y) and self.contains(y, sy, x)):
            return False
        if self.model.options.scope_inclusion == "opencl" and not (x.is_init or y.is_init):
            return sx == sy
        return True

    def scope_in(self, e: Event, space: Optional[str]) -> int:
        """S002 memory-model notes: "A memory synchronization scope wider than work-group is
        not meaningful for the group (LDS) address space and is treated as work-group."
        docs/semantics.md R-lds-scope: by default (`lds_scope: instruction`) an instruction
        that accesses LDS is a workgroup-scope operation as a whole, whatever data the
        question is about (`space` is then ignored); `lds_scope: data` narrows any
        operation's scope only for questions about LDS data (the earlier reading);
        `lds_scope: avvis` narrows only availability / visibility (av_scope_in), never the
        inclusion of synchronization (S002 "memory synchronization scope" read plainly)."""
        if e.is_init or e.scope <= WORKGROUP:
            return e.scope
        lds = self.model.options.lds_scope
        if lds == "instruction":
            narrowed = e.loc is not None and self.space_of(e.loc) == "local"
        else:
            narrowed = space == "local" and lds == "data"
        return WORKGROUP if narrowed else e.scope

    def av_scope_in(self, e: Event, space: Optional[str]) -> int:
        """The scope at which e makes data of `space` available / visible (S000 clauses; S002
        LDS rule, docs R-lds-scope): scope_in, except under `lds_scope: avvis`, where any
        operation's availability / visibility scope for LDS data is at most workgroup."""
        if self.model.options.lds_scope == "avvis" and not e.is_init and e.scope > WORKGROUP \
                and space == "local":
            return WORKGROUP
        return self.scope_in(e, space)

    def space_of(self, loc: Optional[str]) -> Optional[str]:
        return None if loc is None else self.test.memory[loc].space

    @property
    def spaces(self) -> list[str]:
        """The address spaces the test's memory uses, sorted."""
        return sorted({self.space_of(n) for n in self.locs})

    def sync_spaces(self, e: Event) -> frozenset:
        """Which address spaces a synchronizing operation synchronizes (S002 "Fence and
        Address Spaces": amdgpu-synchronize-as:local|global on fences, several tags for
        several spaces, none for all; S002 sync scopes: a -one-as operation "only
        synchronizes with other operations within the same address space")."""
        every = frozenset(self.spaces)
        if e.is_fence:
            tagged = frozenset(SYNC_AS[s] for (p, s) in e.tags if p == SYNC_AS_PREFIX
                               and s in SYNC_AS)
            return tagged & every if tagged else every
        if e.one_as and e.loc is not None:
            return frozenset([self.space_of(e.loc)])
        return every

    def po_in_hb(self, a: Event, b: Event) -> bool:
        """S001 "When two instructions' metadata are not compatible, any program order between
        them are not in happens-before"."""
        return (self.po(a, b) and a.async_of is None and b.async_of is None
                and compatible(a.tags, b.tags))   # docs §11.5: async events: async_hb only

    def writes_to(self, loc: str) -> list[Event]:
        """The events that may write loc (built once; asked for in every encoding loop)."""
        if not self._by_loc:
            self._index()
        return self._by_loc[loc][0]

    def reads_of(self, loc: str) -> list[Event]:
        if not self._by_loc:
            self._index()
        return self._by_loc[loc][1]

    def _index(self) -> None:
        for n in self.locs:
            self._by_loc[n] = ([e for e in self.events if e.writes and e.loc == n],
                               [e for e in self.events if e.reads and e.loc == n])


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
    warnings = []
    for i, t in enumerate(test.threads):
        if t.cluster != 0 and not target.clusters:
            # The format accepts every placement key on every target. S002: on a target
            # without workgroup cluster launch mode cluster scope "behaves like agent scope";
            # the cluster instance is the agent's, and the number only tells workgroups apart
            # (docs/semantics.md, "Placement on targets without clusters").
            warnings.append(Warn("cluster-without-clusters",
                                 f"thread {t.name}: target {target.name} has no workgroup "
                                 f"clusters; cluster: {t.cluster} is accepted, the cluster is "
                                 "the whole agent (cluster scope behaves as agent scope)",
                                 test.file, t.place_lines.get("cluster", t.line)))
        wave = t.wavefront if t.wavefront is not None else ("own", i)
        a, c, g = t.agent, t.cluster, t.workgroup
        paths.append({SYSTEM: (), AGENT: (a,), CLUSTER: (a, c) if target.clusters else (a,),
                      WORKGROUP: (a, c, g), WAVEFRONT: (a, c, g, wave),
                      SINGLETHREAD: (a, c, g, wave, i)})

    events: list[Event] = []
    locs = [n for n, loc in test.memory.items() if loc.space != "barrier"]
    for n in locs:
        if test.memory[n].init is not None:
            events.append(Event(len(events), None, -1, "init", None, loc=n, atomic=True,
                                order="monotonic", scope=SYSTEM, writes=True,
                                label=f"init @{n}"))
    regs: dict[tuple[str, str], int] = {}
    comp: dict[tuple[str, str], Instr] = {}
    assumes: list = []
    sync_as_async = model.options.async_model == "upstream-stages"
    for ti, t in enumerate(test.threads):
        # issue 18.5: an unrolled loop or an inlined call repeats a source line; each
        # iteration is its own event, named `T:LINE#k` (k-th execution of the line)
        mem = [(ins.line, _part(ins)) for ins in t.code if ins.kind not in _NO_EVENT]
        repeated = {ln for ln in mem if mem.count(ln) > 1}
        seen_line: dict[tuple, int] = {}
        bodies = body_executions(t.code)
        for pos, ins in enumerate(t.code):
            if ins.kind == "enter":
                continue          # docs R-call-async-seq: a body's execution begins (no event)
            if ins.kind in ("icmp", "binop", "select", "copy"):
                comp[(t.name, ins.reg)] = ins     # docs 15.4: a computation, no event
                continue
            if ins.kind in ("label", "br", "ret", "phi"):     # docs §15: unroll first
                raise Unsupported("control flow reaches elaborate un-unrolled: run it through "
                                  "cflow.combos (solve.run_test / reference.run_reference)",
                                  test.file, ins.line)
            if ins.kind == "assume":
                assumes.append((ti, ins))         # docs 15.4: the branch taken on this path
                continue
            if ins.kind == "barrier":
                continue          # barrier operations: elab_barrier (not memory events)
            if _part(ins) == ".w" and sync_as_async:
                continue          # docs 16.1 R-dma-sync-upstream: the write is A.w (below)
            for (p, sfx) in ins.mmra:
                if p == SYNC_AS_PREFIX and sfx not in SYNC_AS:
                    raise LitmusError(f"unknown address space '{sfx}' in "
                                      f"{SYNC_AS_PREFIX} (expected local or global)",
                                      test.file, ins.line)
            e = Event(len(events), ti, pos, ins.kind, ins, loc=ins.loc, atomic=ins.atomic,
                      volatile=ins.volatile, order=ins.order, fail_order=ins.fail_order,
                      scope=_scope_level(ins.scope, target), one_as=ins.one_as,
                      av_none=AV_NONE in ins.mmra, tags=ins.mmra, reads=ins.reads, writes=ins.writes,
                      label=f"{t.name}:{ins.line}{_part(ins)}", body=bodies[pos])
            key = (ins.line, _part(ins))
            if key in repeated:
                seen_line[key] = seen_line.get(key, 0) + 1
                e.label += f"#{seen_line[key]}"
            if _part(ins) == ".r" and sync_as_async:
                # docs 16.1 R-dma-sync-upstream: under upstream-stages a synchronous DMA is the
                # asynchronous operation (I, A.r, A.w) with its own completion right after I
                dst = t.code[pos + 1]
                assert _part(dst) == ".w" and dst.line == ins.line
                e.kind, e.loc, e.reads, e.writes, e.volatile = "dma_sync", None, False, False, False
                e.label = f"{t.name}:{ins.line}" + e.label[len(f"{t.name}:{ins.line}.r"):]
                e.instr = replace(ins, kind="dma_sync", reg=None,
                                  args=(ins.intrinsic, ins.loc, dst.loc))
                events.append(e)
                ops = async_events(e, len(events))
                for a in ops:
                    a.volatile = ins.volatile     # S002: "They implement volatile (cpol bit 31)"
                events.extend(ops)
                regs[(t.name, ins.reg)] = ops[0].id
                continue
            events.append(e)
            if ins.reg:
                regs[(t.name, ins.reg)] = e.id
            if ins.kind == "dma":
                events.extend(async_events(e, len(events)))
    el = Elab(test, model, target, events, [t.name for t in test.threads], paths, regs, locs,
              warnings=warnings, barrier=elaborate_barriers(test, model, target, paths))
    el.comp, el.assumes = comp, assumes
    el.async_hb = async_hb_edges(el)
    return el


_NO_EVENT = ("icmp", "binop", "select", "copy", "label", "br", "ret", "phi", "assume",
             "barrier", "enter")


def body_executions(code: list) -> list:
    """docs R-call-async-seq: for each instruction of a straight-line path, the execution of a
    function body it belongs to: 0 for the thread's own code, k for the k-th `enter` of the
    path (one execution of a called body, S004 "during the execution of a function body").
    An instruction of static frame F belongs to the innermost open execution of F: an `enter`
    of F opens a new one below its caller's, and an instruction of a shallower frame closes
    the executions it has returned from."""
    stack = [((), 0)]                   # (static frame, execution number)
    out, n = [], 0

    def back_to(frame) -> None:         # close the executions above the open one of `frame`
        if any(fr == frame for fr, _ in stack):
            while stack[-1][0] != frame:
                stack.pop()
    for ins in code:
        f = ins.frame
        if ins.kind == "enter":
            back_to(f[:-1])
            n += 1
            stack.append((f, n))
        else:
            back_to(f)
        out.append(stack[-1][1])
    return out


def _part(ins: Instr) -> str:
    """A synchronous LDS DMA is two events of one line (docs 16.1): `.r` and `.w`, as an
    async copy's A.r and A.w."""
    if ins.intrinsic and ins.kind in ("load", "store"):
        return ".r" if ins.kind == "load" else ".w"
    return ""


def copy_part(ins: Instr) -> str:
    """`.r` / `.w` for the two halves of a synchronous LDS DMA (docs 16.1), "" otherwise
    (explain names the halves of a copy by it)."""
    return _part(ins)


def async_events(i: Event, n: int) -> list:
    """S004: "Each asynchronous operation consists of a non-atomic read on the source and a
    non-atomic write on the destination" (docs §11.3: A.r, A.w, with I's thread and tags)."""
    _, src, dst = i.instr.args
    common = dict(thread=i.thread, pos=i.pos, instr=i.instr, tags=i.tags, async_of=i.id,
                  body=i.body)
    return [Event(n, kind="dma_read", loc=src, reads=True, label=i.label + ".r", **common),
            Event(n + 1, kind="dma_write", loc=dst, writes=True, label=i.label + ".w",
                  **common)]


def async_hb_edges(el: Elab) -> list:
    """docs §11.4-11.5: stages and masks checked against the target, completion computed per
    thread, and the edges (I, A.r), (I, A.w) (UP 2.4 "I happens-before A"; S004 H2) and
    (A.r, Y), (A.w, Y) for the waits Y that A is completed-at (UP 2.4 "A happens-before Y";
    S004 H1). Where completion is unspecified (a mark of another body execution, docs
    R-call-async-seq) the edge is conditional: `el.async_hb_cond` gets (a, b, keys), the edge
    holding iff one of the choice keys holds, and `el.async_chains` the monotone chains of
    keys."""
    staged = el.model.options.async_model == "upstream-stages"
    per_function = el.model.options.async_calls == "per-function"
    file = el.test.file
    edges = []
    for e in el.events:
        if e.async_of is not None and el.events[e.async_of].kind == "dma_sync":
            # docs 16.1 R-dma-sync-upstream: UP 2.4 "I happens-before A", and the completion
            # the compiler ensures at once: A happens-before every later operation of the
            # thread, as after a wait of its own with I's tags (not in any user sequence)
            i = el.events[e.async_of]
            edges.append((i.id, e.id))
            edges += [(e.id, x.id) for x in el.events if x.thread == i.thread
                      and x.async_of is None and x.pos > i.pos and compatible(i.tags, x.tags)]
    for ti, t in enumerate(el.test.threads):
        ev = {e.pos: e for e in el.events if e.thread == ti and e.async_of is None}
        stage_of, masks = {}, {}
        for pos, ins in enumerate(t.code):
            if ins.kind == "dma":
                base = ins.args[0]
                if asyncops.DMA[base][2] and not asyncops.gfx125(el.target):
                    raise LitmusError(f"'@{ins.intrinsic}' is a GFX12.5 instruction; target "
                                      f"{el.target.name} does not have it", file, ins.line)
                stage_of[pos] = asyncops.dma_stage(base, el.target)
            elif ins.kind in ("asyncmark", "wait_asyncmark"):
                asyncops.check_mask(ins.args[-1], el.target, file, ins.line)
                masks[pos] = ins.args
        if not stage_of:
            continue
        comp = asyncops.completion(t.code, stage_of, masks, staged,
                                   body_executions(t.code) if per_function else None)
        every = el.model.options.async_done_edges == "every"
        el.async_chains += [[(ti,) + k for k in ch] for ch in comp.chains()]
        waits = comp.waits()
        for e in el.events:
            if e.thread != ti or e.async_of is None or el.events[e.async_of].kind != "dma":
                continue
            p = e.pos
            edges.append((e.async_of, e.id))
            sure = [q for q in waits if q > p and comp.definite(p, q)]
            if sure and not every:   # the earlier reading: only the first (R-async-done-every)
                sure = sure[:1]
            edges += [(e.id, ev[q].id) for q in sure]
            maybe = {q: [(ti,) + k for k in comp.unspecified(p, q)] for q in waits
                     if q > p and q not in sure}
            el.async_hb_cond += [(e.id, ev[q].id, tuple(ks)) for q, ks in maybe.items() if ks]
            if not staged:   # S004 H1 + S001: po kept once completed (R-async-po-after-done)
                for q, x in sorted(ev.items()):
                    if q <= p or not compatible(e.tags, x.tags):
                        continue
                    if sure and q > sure[0]:
                        edges.append((e.id, x.id))
                        continue
                    ks = tuple(k for y, kk in maybe.items() if y < q for k in kk)
                    if ks:
                        el.async_hb_cond.append((e.id, x.id, ks))
    return edges


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
