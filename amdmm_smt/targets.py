"""Targets: which scopes exist. S002 sync-scope table: `cluster` "On targets that do not
support workgroup cluster launch mode, this behaves like agent scope instead."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Target:
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
