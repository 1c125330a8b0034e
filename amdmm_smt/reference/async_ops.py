"""Asynchronous operations (docs/semantics.md section 11; S004 seed 004, UP§2.4 stage masks):
program order of async operations, asyncmark sequences, completion, and the happens-before
edges of async operations, computed here from the definitions (not from the Z3 engine's
`Elab.async_hb` / `asyncops.completion`, which this engine does not read).

What this module takes from the shared elaboration: the events (`dma` instruction I, then
`dma_read` A.r and `dma_write` A.w with `async_of = I.id`; `asyncmark` and `wait_asyncmark`
events with `instr.args` = (K,) and (N, K)), their thread and position, `Elab.po` for pairs of
ordinary events, and placement (`contains`, `inclusive`). Masks and GFX12.5-only intrinsics are
validated by `elaborate` (errors), so every test that reaches the engine is valid.
"""

from __future__ import annotations

import itertools

from ..elaborate.events import compatible
from .common import ReferenceUnsupported

ASYNC_KINDS = ("dma", "dma_sync", "dma_read", "dma_write", "asyncmark", "wait_asyncmark")

# UP§2.4 stage table, bit -> stage (docs §11.2 table, third column)
TENSOR, GLOBAL_LOAD, MCAST, GLOBAL_STORE, BUFFER_GLOBAL_LOAD = 0, 1, 2, 3, 5
STAGES = (TENSOR, GLOBAL_LOAD, MCAST, GLOBAL_STORE, BUFFER_GLOBAL_LOAD)
GENERIC = "generic"
# docs §11.2: intrinsic base name -> stage ("generic": R-async-stage-generic)
STAGE_OF_BASE = {
    "load.async.to.lds": GENERIC,
    "global.load.async.lds": GENERIC,
    "raw.buffer.load.async.lds": BUFFER_GLOBAL_LOAD,
    "raw.ptr.buffer.load.async.lds": BUFFER_GLOBAL_LOAD,
    "struct.buffer.load.async.lds": BUFFER_GLOBAL_LOAD,
    "struct.ptr.buffer.load.async.lds": BUFFER_GLOBAL_LOAD,
    "global.load.async.to.lds": GLOBAL_LOAD,
    "cluster.load.async.to.lds": MCAST,
    "global.store.async.from.lds": GLOBAL_STORE,
    "tensor.load.to.lds": TENSOR,
    "tensor.store.from.lds": TENSOR,
}
GFX125 = ("gfx1250", "gfx1251")
SEED_STAGE = "*"          # docs §11.4 [seed-004]: the single sequence


def stage_of(base: str, target_name: str):
    """docs §11.2 table and R-async-stage-generic (UP§2.4: BUFFER_GLOBAL_LOAD holds "buffer
    loads to LDS and pre-gfx1250 global loads to LDS")."""
    if base not in STAGE_OF_BASE:
        raise ReferenceUnsupported(f"async intrinsic {base}: no stage in docs §11.2")
    s = STAGE_OF_BASE[base]
    if s == GENERIC:
        return GLOBAL_LOAD if target_name in GFX125 else BUFFER_GLOBAL_LOAD
    return s


class _Mark:
    """One asyncmark in one stage's sequence: the asyncmark event that produced it and the
    async operations (their instruction ids) it tracks."""
    __slots__ = ("event", "stage", "covers")

    def __init__(self, event: int, stage, covers: tuple):
        self.event, self.stage, self.covers = event, stage, covers


class AsyncOps:
    """Mixin of the engine (engine.py): the asynchronous-operation family."""

    def is_async_op(self, i: int) -> bool:
        """A.r or A.w: an event of an async operation (not its initiating instruction)."""
        return self.ev[i].kind in ("dma_read", "dma_write")

    def program_order(self, i: int, j: int) -> bool:
        """po of docs §11.5. Ordinary pairs: Elab.po (same thread, earlier position).
        [seed-004] A.r / A.w are program-ordered at I's position: ordered with every other
        event of the thread by position, and not with I or each other (same position); two
        async operations by their instructions' positions. [upstream-stages] UP§2.4: "An async
        operation executes outside the thread that initiated it, i.e., it is not related in
        program-order with any other operations from that thread"."""
        a, b = self.ev[i], self.ev[j]
        if not (self.is_async_op(i) or self.is_async_op(j)):
            return self.elab.po(a, b)
        if a.thread is None or a.thread != b.thread:
            return False
        if self.opts.async_model == "upstream-stages":
            return False
        return a.pos < b.pos

    def po_in_hb_pair(self, i: int, j: int) -> bool:
        """The program-order part of happens-before (docs §6, §11.5): po between compatible
        instructions (S001), for events neither of which is A.r or A.w — S004 H1 ("only if A
        is completed before X") and R-async-hb-from-a: no program-order edge leaves A; the
        edges into A are E-init."""
        if self.is_async_op(i) or self.is_async_op(j):
            return False
        return self.po[i] >> j & 1 == 1 and compatible(self.ev[i].tags, self.ev[j].tags)

    def init_async(self):
        """The static part of the family: per thread, completion (`self.done[I]` = the first
        wait I's operation is completed-at, or absent) and the happens-before edges E-init /
        E-done as masks `self.async_hb[i]`. Where the documents leave completion unspecified
        (docs R-call-async-seq: a mark of another function body execution than the wait's)
        the engine lists the alternatives: `self.async_alts`, one list of masks per choice of
        the first such wait at which each mark is completed (none, or one of them: a completed
        mark stays completed); `run` takes the union over them."""
        ev = self.ev
        self.dma_read_of = {e.async_of: e.id for e in ev if e.kind == "dma_read"}
        self.done: dict = {}
        self.completed_at: dict = {}        # (asyncmark id, stage) -> wait id (its own body)
        self.tracks: dict = {}              # (asyncmark id, stage) -> instruction ids
        threads = sorted({e.thread for e in ev if e.thread is not None})
        # docs R-call-async-seq: "per-function": one sequence per execution of a function
        # body (Event.body); "inlined": the thread's one sequence
        self.body_of = (lambda e: e.body) if self.opts.async_calls == "per-function" \
            else (lambda e: 0)
        for t in threads:
            code = sorted((e for e in ev if e.thread == t and e.kind in
                           ("dma", "asyncmark", "wait_asyncmark")), key=lambda e: e.pos)
            for b in sorted({self.body_of(e) for e in code}):
                # the marks of one body execution, and every operation initiated before them
                # in program order (S004: a mark "tracks all the async operations that are
                # program-ordered before that asyncmark", in whatever body)
                part = [e for e in code if e.kind == "dma" or self.body_of(e) == b]
                if self.opts.async_model == "upstream-stages":
                    self._completion_stages(part)
                else:
                    self._completion_seed(part)
        ops = [e for e in ev if e.kind == "dma"]
        waits = [e for e in ev if e.kind == "wait_asyncmark"]
        sure, maybe = {}, {}
        for a in ops:
            for y in waits:
                if y.thread != a.thread or y.pos <= a.pos or self._ignores(y, a):
                    continue
                st = self._stage(a)
                marks = [(m, s) for (m, s), cov in self.tracks.items()
                         if a.id in cov and s == st and ev[m].pos < y.pos]
                if any(self.body_of(ev[m]) == self.body_of(y) and (m, s) in self.completed_at
                       and ev[self.completed_at[(m, s)]].pos <= y.pos for (m, s) in marks):
                    sure.setdefault(a.id, []).append(y.id)
                ms = [(m, s) for (m, s) in marks if self.body_of(ev[m]) != self.body_of(y)]
                if ms:
                    maybe[(a.id, y.id)] = ms
        for a, ys in sure.items():
            self.done[a] = min(ys, key=lambda y: ev[y].pos)
        # per mark (and stage): the waits of other body executions after it, in order
        chains = []
        for (m, s), cov in sorted(self.tracks.items(), key=repr):
            ys = [y.id for y in sorted(waits, key=lambda y: y.pos)
                  if cov and y.thread == ev[m].thread and y.pos > ev[m].pos
                  and self.body_of(y) != self.body_of(ev[m]) and not self._ignores_stage(y, s)]
            if ys:
                chains.append(((m, s), ys))
        n_alts = 1
        for _, ys in chains:
            n_alts *= len(ys) + 1
        if n_alts > 4096:
            raise ReferenceUnsupported(f"{n_alts} alternatives of unspecified completion")
        self.async_alts = []
        for pick in itertools.product(*[range(len(ys) + 1) for _, ys in chains]):
            chosen = {(k, y) for (k, ys), t in zip(chains, pick) for y in ys[t:]}
            self.async_alts.append(self._masks(sure, maybe, chosen))
        self.async_hb = self.async_alts[0]

    def _masks(self, sure: dict, maybe: dict, chosen: set) -> list:
        """E-init, E-done and (seed-004) E-po for one choice of the unspecified completions."""
        ev = self.ev
        hb = [0] * self.n
        every = self.opts.async_done_edges == "every"
        for e in ev:
            if e.kind not in ("dma_read", "dma_write"):
                continue
            i = e.async_of
            hb[i] |= 1 << e.id                         # E-init: UP "I happens-before A"; S004 H2
            if ev[i].kind == "dma_sync":
                # docs 16.1 R-dma-sync-upstream (UP 2.4: "the compiler automatically ensures
                # completion before their side-effects are used"): completed right after I,
                # outside every asyncmark sequence: A before all that follows I in the
                # thread, MMRA tags permitting (S001)
                for x in ev:
                    if (x.thread == ev[i].thread and not self.is_async_op(x.id)
                            and self.elab.po(ev[i], x) and compatible(ev[i].tags, x.tags)):
                        hb[e.id] |= 1 << x.id
                continue
            completed = []                             # the waits A is completed-at
            for y in ev:
                if y.kind != "wait_asyncmark":
                    continue
                if y.id in sure.get(i, ()) and (every or y.id == self.done[i]):
                    completed.append(y)                # R-async-done-every / `first`
                elif any((k, y.id) in chosen for k in maybe.get((i, y.id), ())):
                    completed.append(y)                # docs R-call-async-seq: chosen so
            for y in completed:                        # E-done: UP "A happens-before Y"
                hb[e.id] |= 1 << y.id
            firsts = [ev[self.done[i]]] if i in self.done else []
            for y in firsts + completed:
                hb[e.id] |= self._po_after_done(e.id, y.id)
        return hb

    def _po_after_done(self, a: int, done: int) -> int:
        """R-async-po-after-done (S004 H1 "happens-before X only if A is completed before X";
        LangRef: hb ⊇ po; S001: only incompatible metadata removes po from hb): [seed-004] the
        program-order edges from A to every X after the wait that completes it, MMRA
        permitting. [upstream-stages] none: A is in no program order (UP§2.4)."""
        mask = 0
        for x in range(self.n):
            if (self.program_order(a, x) and not self.is_async_op(x)
                    and self.elab.po(self.ev[done], self.ev[x])
                    and compatible(self.ev[a].tags, self.ev[x].tags)):
                mask |= 1 << x
        return mask

    def _stage(self, a):
        if self.opts.async_model == "upstream-stages":
            return stage_of(a.instr.args[0], self.elab.target.name)
        return SEED_STAGE

    def _ignores_stage(self, y, s) -> bool:
        """UP§2.4: a wait ignores the stages its mask names; seed-004 ignores masks."""
        return self.opts.async_model == "upstream-stages" and bool(y.instr.args[1] >> s & 1)

    def _ignores(self, y, a) -> bool:
        return self._ignores_stage(y, self._stage(a))

    def _complete(self, mark: _Mark, wait: int):
        """An asyncmark completed at `wait`: every operation it tracks that is not completed
        yet is completed there (docs §11.4 step 3; S004 "An async operation X is completed at
        a program point P if there exists an asyncmark M such that X is program-ordered before
        M, M is program-ordered before P, and M is completed"). done(A) is the first such
        wait."""
        self.completed_at.setdefault((mark.event, mark.stage), wait)

    def _completion_seed(self, code):
        """[seed-004] S004, read directly: one sequence of asyncmarks per function body (a
        litmus thread), never shortened; a mark tracks every async operation program-ordered
        before it; wait.asyncmark(N) "Waits until there are at most N outstanding asyncmarks
        in the sequence". Completion is monotone (a mark is completed "only when all async
        operations program-ordered before M" finished, which include those of every earlier
        mark), so the outstanding marks are always a suffix of the sequence, and after the
        wait at most the last N are outstanding: the others are completed at the wait
        (R-async-completion-static: the program knows a mark completed only through a wait).
        Masks are validated by elaborate and ignored (R-async-seed-mask)."""
        marks: list = []
        ops: list = []
        n_completed = 0          # the completed marks are marks[:n_completed]
        for e in code:
            if e.kind == "dma":
                ops.append(e.id)
            elif e.kind == "asyncmark":
                marks.append(_Mark(e.id, SEED_STAGE, tuple(ops)))
                self.tracks[(e.id, SEED_STAGE)] = tuple(ops)
            else:
                n = e.instr.args[0]
                target = max(n_completed, len(marks) - n)
                for m in marks[n_completed:target]:
                    self._complete(m, e.id)
                n_completed = target

    def _completion_stages(self, code):
        """[upstream-stages] UP§2.4: one current sequence per stage; asyncmark(K) "Produces an
        asyncmark in every stage that the mask K does not omit, and appends it to the current
        sequence of each"; wait.asyncmark(N, K) "For every stage that the mask K does not
        ignore, ensures that the length of the current sequence of that stage is at most N by
        removing asyncmarks from the start of that sequence" (the stages it ignores are
        unaffected: R-async-stage-typo). A mark is completed-at the wait that removes it
        ("M is not in the current sequence at any operation Z that immediately follows Y";
        R-async-last-wait for a final wait). A mark in stage s tracks the operations of stage s
        initiated before its asyncmark (R-async-stage-multi: A is completed through the mark
        X placed in A's own stage). A set mask bit means "do not participate"."""
        tname = self.elab.target.name
        seq = {s: [] for s in STAGES}
        ops = {s: [] for s in STAGES}
        for e in code:
            if e.kind == "dma":
                ops[stage_of(e.instr.args[0], tname)].append(e.id)
            elif e.kind == "asyncmark":
                k = e.instr.args[0]
                for s in STAGES:
                    if not k >> s & 1:
                        seq[s].append(_Mark(e.id, s, tuple(ops[s])))
                        self.tracks[(e.id, s)] = tuple(ops[s])
            else:
                n, k = e.instr.args
                for s in STAGES:
                    if k >> s & 1:
                        continue
                    while len(seq[s]) > n:
                        self._complete(seq[s].pop(0), e.id)
