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


# ---- static completion (docs 11.4) ----------------------------------------------------------

def completion(code: list, stage_of: dict, masks: dict, staged: bool) -> dict:
    """Per thread: for each async instruction position, the position of the first wait at
    which it is completed (absent: never).

    code: the thread's instructions; stage_of[pos]: the stage of the DMA at pos; masks[pos]:
    the mask of a mark / (N, mask) of a wait. staged: UP 2.4 (one sequence per stage) or
    seed-004 (one sequence, masks ignored: docs R-async-seed-mask)."""
    seqs: dict = {}        # stage -> list of covered-op lists (one per mark, oldest first)
    ops: dict = {}         # stage -> ops initiated so far
    done: dict = {}
    stages = sorted(set(stage_of.values())) if staged else [SEED_STAGE]
    for pos, ins in enumerate(code):
        if ins.kind == "dma":
            s = stage_of[pos] if staged else SEED_STAGE
            ops.setdefault(s, []).append(pos)                 # S004: tracked by later marks
        elif ins.kind == "asyncmark":
            (k,) = masks[pos]
            for s in stages:
                if staged and k >> s & 1:                     # UP 2.4: the mask omits s
                    continue
                seqs.setdefault(s, []).append(list(ops.get(s, [])))
        elif ins.kind == "wait_asyncmark":
            n, k = masks[pos]
            for s in stages:
                if staged and k >> s & 1:                     # UP 2.4: the wait ignores s
                    continue
                seq = seqs.get(s, [])
                while len(seq) > n:                           # S004 "at most N outstanding"
                    for a in seq.pop(0):
                        done.setdefault(a, pos)               # completed-at this wait
    return done
