"""Asynchronous operations as the litmus text spells them (S004; UP 2.4 stage table): the
intrinsic names, their stages and directions, and the checks of their call arguments. Their
meaning (completion by asyncmark / wait.asyncmark) is elaborate/async_ops.py."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional


# UP 2.4 stage table (bit -> name)
TENSOR, GLOBAL_LOAD, MCAST, GLOBAL_STORE, BUFFER_GLOBAL_LOAD = 0, 1, 2, 3, 5
STAGE_NAME = {TENSOR: "TENSOR", GLOBAL_LOAD: "GLOBAL_LOAD_ASYNC_TO_LDS",
              MCAST: "GLOBAL_LOAD_ASYNC_TO_LDS_MCAST", GLOBAL_STORE: "GLOBAL_STORE_ASYNC_FROM_LDS",
              BUFFER_GLOBAL_LOAD: "BUFFER_GLOBAL_LOAD"}
MASK_BITS = 11            # UP 2.4: "an 11-bit value"
SEED_STAGE = -1           # seed-004: the single sequence

# name (without llvm.amdgcn. and type suffix) -> (direction, stage rule, needs GFX12.5)
# direction "to_lds": global source, local destination; "from_lds": the reverse.
# stage rule: an int, or "generic" (docs R-async-stage-generic).
DMA = {
    "load.async.to.lds": ("to_lds", "generic", False),          # S002 ~450, the contract
    "global.load.async.lds": ("to_lds", "generic", False),      # S004 GFX9 list
    "raw.buffer.load.async.lds": ("to_lds", BUFFER_GLOBAL_LOAD, False),
    "raw.ptr.buffer.load.async.lds": ("to_lds", BUFFER_GLOBAL_LOAD, False),
    "struct.buffer.load.async.lds": ("to_lds", BUFFER_GLOBAL_LOAD, False),
    "struct.ptr.buffer.load.async.lds": ("to_lds", BUFFER_GLOBAL_LOAD, False),
    "global.load.async.to.lds": ("to_lds", GLOBAL_LOAD, True),  # S004 GFX12 list
    "cluster.load.async.to.lds": ("to_lds", MCAST, True),
    "global.store.async.from.lds": ("from_lds", GLOBAL_STORE, True),
    "tensor.load.to.lds": ("to_lds", TENSOR, True),             # S004 GFX1250 tensor DMA
    "tensor.store.from.lds": ("from_lds", TENSOR, True),
}
# S002 ~440 / UP 2.4: "Each GFX9 DMA instruction has a synchronous counterpart"; the
# synchronous name -> the asynchronous table key (same operands). docs/semantics.md 16.1.
SYNC_DMA = {
    "load.to.lds": "load.async.to.lds",                 # S002 llvm.amdgcn.load.to.lds.p<1/7>
    "global.load.lds": "global.load.async.lds",         # S002 "same semantics as ...p1"
    "raw.buffer.load.lds": "raw.buffer.load.async.lds",  # UP 2.4 DMA intrinsics
    "raw.ptr.buffer.load.lds": "raw.ptr.buffer.load.async.lds",
    "struct.buffer.load.lds": "struct.buffer.load.async.lds",
    "struct.ptr.buffer.load.lds": "struct.ptr.buffer.load.async.lds",
}
_GFX9_FORMS = {"load.async.to.lds", "global.load.async.lds", "raw.buffer.load.async.lds",
               "raw.ptr.buffer.load.async.lds", "struct.buffer.load.async.lds",
               "struct.ptr.buffer.load.async.lds"}
MARK = "llvm.amdgcn.asyncmark"
WAIT = "llvm.amdgcn.wait.asyncmark"


def dma_base(name: str) -> Optional[str]:
    """The DMA table key of an intrinsic name, or None (type suffixes .p0/.p1/.bN/.iN allowed)."""
    if not name.startswith("llvm.amdgcn."):
        return None
    n = name[len("llvm.amdgcn."):]
    if n in DMA:
        return n
    m = re.fullmatch(r"(.*)\.(p\d+|b\d+|i\d+|v\d+i\d+)", n)
    if m and m.group(1) in DMA:
        return m.group(1)
    return None


def sync_dma_base(name: str) -> Optional[str]:
    """The async DMA table key of a synchronous LDS DMA name, or None."""
    if not name.startswith("llvm.amdgcn."):
        return None
    n = name[len("llvm.amdgcn."):]
    m = re.fullmatch(r"(.*)\.(p\d+|b\d+|i\d+|v\d+i\d+)", n)
    for k in (n, m.group(1) if m else None):
        if k in SYNC_DMA:
            return SYNC_DMA[k]
    return None


def is_async_intrinsic(name: str) -> bool:
    return name in (MARK, WAIT) or dma_base(name) is not None


def suffix_problem(name: str) -> Optional[str]:
    n = name[len("llvm.amdgcn."):]
    m = re.fullmatch(r"(.*)\.(p\d+|b\d+|i\d+|v\d+i\d+)", n)
    if not m or (m.group(1) not in DMA and m.group(1) not in SYNC_DMA):
        return None
    sfx = m.group(2)
    if sfx.startswith("p") and sfx not in ("p0", "p1"):
        return (f"'@{name}': only the .p0 and .p1 pointer forms are supported (a buffer "
                "resource cannot be written in a litmus test)")
    if sfx.startswith(("b", "i", "v")) and sfx not in ("b32", "i32"):
        return f"'@{name}': only 32-bit copies are modelled (values are i32); use .b32"
    return None


# ---- parsing the call arguments ------------------------------------------------------------

@dataclass
class DmaArgs:
    """The arguments of an asynchronous copy."""
    base: str
    src: str
    dst: str


def parse_dma(name: str, args: list, memory: dict, err) -> DmaArgs:
    """args: the parsed call arguments [("ptr", loc) | ("int", v)]. Source and destination are
    told apart by the declared spaces of their locations (docs 11.2)."""
    base = dma_base(name) or sync_dma_base(name)
    prob = suffix_problem(name)
    if prob:
        raise err(prob)
    direction = DMA[base][0]
    ptrs = [a[1] for a in args if a[0] == "ptr"]
    ints = [a[1] for a in args if a[0] == "int"]
    first_int = next((i for i, a in enumerate(args) if a[0] == "int"), len(args))
    form = (f"`call void @{name}(ptr addrspace(1) @g, ptr addrspace(3) @l"
            + (", i32 4, i32 0, i32 0)`" if base in _GFX9_FORMS else ", i32 0, i32 0)`"))
    if len(ptrs) != 2 or any(a[0] == "ptr" for a in args[first_int:]):
        raise err(f"'@{name}' takes a global and an LDS pointer, then integer immediates: "
                  f"{form}")
    spaces = [memory[p].space for p in ptrs]
    if sorted(spaces) != ["global", "local"]:
        raise err(f"'@{name}' copies between global memory and LDS: one pointer must be to a "
                  f"global location and one to a local location (got {' and '.join(spaces)})")
    glob, lds = (ptrs[0], ptrs[1]) if spaces[0] == "global" else (ptrs[1], ptrs[0])
    if base in _GFX9_FORMS:
        if len(ints) >= 1 and ints[0] != 4:
            raise err(f"'@{name}': size {ints[0]}: only 4-byte copies are modelled (values "
                      "are i32)")
        if len(ints) >= 2 and ints[1] != 0:
            raise err(f"'@{name}': offset {ints[1]} names another address; only offset 0 is "
                      "expressible in a litmus test")
    elif ints and ints[0] != 0:
        raise err(f"'@{name}': offset {ints[0]} names another address; only offset 0 is "
                  "expressible in a litmus test")
    if direction == "to_lds":
        return DmaArgs(base, glob, lds)
    return DmaArgs(base, lds, glob)


def parse_mark(name: str, args: list, err) -> tuple:
    """asyncmark([i32 K]) -> (K,); wait.asyncmark(i16 N[, i32 K]) -> (N, K). A missing mask is 0
    (UP 2.4 AutoUpgrade: "Upgrade them to a zero mask")."""
    if any(a[0] != "int" for a in args):
        raise err(f"'@{name}' takes integer constants only")
    vals = [a[1] for a in args]
    if name == MARK:
        if len(vals) > 1:
            raise err("expected `call void @llvm.amdgcn.asyncmark()` or "
                      "`call void @llvm.amdgcn.asyncmark(i32 K)`")
        return (vals[0] if vals else 0,)
    if len(vals) not in (1, 2):
        raise err("expected `call void @llvm.amdgcn.wait.asyncmark(i16 N)` or "
                  "`call void @llvm.amdgcn.wait.asyncmark(i16 N, i32 K)`")
    if not 0 <= vals[0] <= 32767:
        raise err(f"wait.asyncmark count {vals[0]} is not a non-negative i16")
    return (vals[0], vals[1] if len(vals) == 2 else 0)
