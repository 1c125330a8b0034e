"""Targets: which scopes and which barrier objects exist. S002 sync-scope table: `cluster` "On
targets that do not support workgroup cluster launch mode, this behaves like agent scope
instead." S002 "AMDHSA Execution Barriers IDs" tables: which barrier IDs a shader may use."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class Target:
    """A GPU target."""
    name: str
    clusters: bool        # workgroup cluster launch mode (GFX12.5: gfx1250, gfx1251)
    split_barrier: bool   # s.barrier.signal / s.barrier.wait (GFX12+)
    named_barriers: bool  # s.barrier.init / join / leave / signal.var (GFX12.5)


CLUSTER_TARGETS = {"gfx1250", "gfx1251"}


def get_target(name: str) -> Target:
    """Any `gfxNNN[N]` name; raises ValueError for anything else."""
    m = re.fullmatch(r"gfx(\d{1,2})([0-9a-f])([0-9a-f])", name)
    if not m:
        raise ValueError(f"unknown target '{name}' (expected a gfx name such as gfx942, "
                         "gfx1200 or gfx1250)")
    major = int(m.group(1))
    gfx125 = name in CLUSTER_TARGETS
    return Target(name, clusters=gfx125, split_barrier=major >= 12, named_barriers=gfx125)


def barrier_id_problem(target: Target, bid: int) -> Optional[str]:
    """Why the shader cannot use barrier ID `bid` on `target` (None: it can). S002 IDs table:
    -4 cluster trap and -2 workgroup trap barriers are "not accessible by the shader"; -3
    cluster user barrier GFX12.5; -1 workgroup barrier GFX12; 0 NULL and [1,16] named
    barriers GFX12.5."""
    if bid in (-2, -4):
        what = "workgroup" if bid == -2 else "cluster"
        return (f"barrier ID {bid} is the {what} trap barrier, dedicated to the trap handler "
                "and not accessible to the shader")
    if not target.split_barrier:
        return (f"target {target.name} has no split barriers (GFX6-11: only "
                "llvm.amdgcn.s.barrier)")
    if bid == -1:
        return None
    if bid == -3 or 0 <= bid <= 16:
        if not target.named_barriers:
            what = "cluster barrier" if bid == -3 else ("NULL named barrier" if bid == 0
                                                       else "named barrier")
            return f"barrier ID {bid} ({what}) needs GFX12.5 (gfx1250, gfx1251), not {target.name}"
        return None
    return f"there is no barrier ID {bid} (IDs: -4..16)"
