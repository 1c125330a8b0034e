"""Asynchronous operations (S004; UP 2.4 stage masks): the stages a target has, and the static
completion of async operations by asyncmark / wait.asyncmark (docs/semantics.md §11).

Completion depends only on the program text of one thread (straight-line code), so it is
computed here, once, and reaches the encoding as constant happens-before edges.
"""

from __future__ import annotations

from ..errors import LitmusError
from ..frontend.async_intrinsics import (BUFFER_GLOBAL_LOAD, DMA, GLOBAL_LOAD, GLOBAL_STORE,
                                        MASK_BITS, MCAST, SEED_STAGE, STAGE_NAME, TENSOR)


# ---- target and masks (docs R-async-mask-valid, R-async-stage-generic) ----------------------

def gfx125(target) -> bool:
    """GFX12.5 targets (gfx1250, gfx1251): the async / tensor stages of UP 2.4 exist."""
    return target.clusters


def target_stages(target) -> frozenset:
    if gfx125(target):
        return frozenset({TENSOR, GLOBAL_LOAD, MCAST, GLOBAL_STORE, BUFFER_GLOBAL_LOAD})
    return frozenset({BUFFER_GLOBAL_LOAD})


def check_mask(mask: int, target, file: str, line: int) -> None:
    if not 0 <= mask < (1 << MASK_BITS):
        raise LitmusError(f"invalid stage mask {mask}: a stage mask is an 11-bit value "
                          "(0..2047)", file, line)
    ok = target_stages(target)
    bad = [b for b in range(MASK_BITS) if mask >> b & 1 and b not in ok]
    if bad:
        valid = ", ".join(f"{b} ({STAGE_NAME[b]})" for b in sorted(ok))
        kinds = ["reserved" if b not in STAGE_NAME else f"{STAGE_NAME[b]}, not a stage of "
                 f"{target.name}" for b in bad]
        raise LitmusError(f"invalid stage mask {mask} for target {target.name}: bit "
                          f"{', '.join(f'{b} ({k})' for b, k in zip(bad, kinds))}; the stages "
                          f"of {target.name} are bits {valid}", file, line)


def dma_stage(base: str, target) -> int:
    """UP 2.4 stage table; docs R-async-stage-generic for the generic global loads."""
    rule = DMA[base][1]
    if rule == "generic":
        return GLOBAL_LOAD if gfx125(target) else BUFFER_GLOBAL_LOAD
    return rule


# ---- static completion (docs 11.4, R-call-async-seq) -----------------------------------------

class Completion:
    """What the program text says about completion, for one thread (docs 11.4):

    covers[(m, s)]    the async instructions (positions) of stage s program-ordered before the
                      asyncmark at m (S004 "tracks all the async operations that are
                      program-ordered before that asyncmark", whatever body they are in);
    removed[(m, s)]   the wait (position) that removed that mark from the sequence of its own
                      body's execution (UP 2.4 completed-at; absent: never removed);
    body[pos]         the body execution of each instruction (0 without calls or when inlined).
    """

    def __init__(self, code, stage_of, masks, staged, bodies):
        self.code, self.stage_of, self.masks, self.staged = code, stage_of, masks, staged
        self.body = bodies
        self.stages = sorted(set(stage_of.values())) if staged else [SEED_STAGE]
        self.covers: dict = {}
        self.removed: dict = {}
        seqs: dict = {}        # (body, stage) -> marks (positions), oldest first
        ops: dict = {}         # stage -> ops initiated so far (every body)
        for pos, ins in enumerate(code):
            if ins.kind == "dma":
                s = stage_of[pos] if staged else SEED_STAGE
                ops.setdefault(s, []).append(pos)             # S004: tracked by later marks
            elif ins.kind == "asyncmark":
                (k,) = masks[pos]
                for s in self.stages:
                    if staged and k >> s & 1:                 # UP 2.4: the mask omits s
                        continue
                    self.covers[(pos, s)] = list(ops.get(s, []))
                    seqs.setdefault((bodies[pos], s), []).append(pos)
            elif ins.kind == "wait_asyncmark":
                n, k = masks[pos]
                for s in self.stages:
                    if self.ignores(pos, s):
                        continue
                    seq = seqs.get((bodies[pos], s), [])      # S004: "the sequence associated
                    while len(seq) > n:                       # with the currently executing
                        self.removed[(seq.pop(0), s)] = pos   # function body"
        # per operation: the earliest removal of a mark tracking it, per body execution, and
        # the marks tracking it (position, stage, body), in program order
        self._first_removal: dict = {}
        self._marks_of: dict = {}
        for (m, s), cov in sorted(self.covers.items(), key=repr):
            r = self.removed.get((m, s))
            for a in cov:
                self._marks_of.setdefault(a, []).append((m, s, bodies[m]))
                if r is not None:
                    d = self._first_removal.setdefault(a, {})
                    if bodies[m] not in d or r < d[bodies[m]]:
                        d[bodies[m]] = r

    def stage(self, a: int):
        return self.stage_of[a] if self.staged else SEED_STAGE

    def ignores(self, y: int, s) -> bool:
        """UP 2.4: a wait ignores the stages its mask names (seed-004: none, R-async-seed-mask)."""
        return self.staged and self.masks[y][1] >> s & 1

    def waits(self) -> list:
        return [q for q in sorted(self.masks) if self.code[q].kind == "wait_asyncmark"]

    def definite(self, a: int, y: int) -> bool:
        """A (at a) is completed-at the wait y: a mark X of y's body execution, in A's stage,
        program-ordered after A's instruction, is no longer in that body's sequence after y
        (UP 2.4 "completed-at ... in the same function body"; removed at y or an earlier wait
        of the body: R-async-done-every)."""
        if self.ignores(y, self.stage(a)):
            return False
        r = self._first_removal.get(a, {}).get(self.body[y])
        return r is not None and r <= y        # removed at y or before: the mark precedes y

    def unspecified(self, a: int, y: int) -> list:
        """The marks (as choice keys (m, s, y)) through which A may or may not be completed at
        y: marks program-ordered after A's instruction and before y made in another body
        execution than y's (UP 2.4: "it is unspecified whether X is completed-at D" /
        "whether B and C in bar() are completed-at Y, because they are not included in the
        sequence that can be examined at Y"; docs R-call-async-seq)."""
        if self.ignores(y, self.stage(a)):
            return []
        return [(m, s, y) for (m, s, b) in self._marks_of.get(a, ())
                if m < y and b != self.body[y]]

    def chains(self) -> list:
        """For each mark (and stage) that tracks an operation, the waits of other body
        executions after it where its completion is unspecified, in program order: a mark
        completed at one of them is completed at every later one (S004: a mark is completed
        when the operations it tracks "are reported by the implementation as having
        finished", which stays so)."""
        out = []
        for (m, s), cov in sorted(self.covers.items(), key=repr):
            if not cov:
                continue
            ch = [(m, s, y) for y in self.waits()
                  if y > m and self.body[y] != self.body[m] and not self.ignores(y, s)]
            if ch:
                out.append(ch)
        return out


def completion(code: list, stage_of: dict, masks: dict, staged: bool,
               bodies: list | None = None) -> Completion:
    """Per thread: the static completion facts (docs 11.4). code: the thread's instructions;
    stage_of[pos]: the stage of the DMA at pos; masks[pos]: the mask of a mark / (N, mask) of
    a wait. staged: UP 2.4 (one sequence per stage) or seed-004 (one sequence, masks ignored:
    docs R-async-seed-mask). bodies[pos]: the body execution of each instruction (None: one
    body, the inlined reading)."""
    return Completion(code, stage_of, masks, staged, bodies or [0] * len(code))
