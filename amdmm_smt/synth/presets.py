"""Synthesis, part 3: the default vocabulary for two model versions (docs/semantics.md 17.2).

Each option reads some instructions only; the default vocabulary of a search is the union of
the presets of the options the two versions set differently (`--vocab` replaces or widens it).
The presets are a choice of where to look, not a claim: the exhaustiveness claim always names
the vocabulary searched.
"""

from __future__ import annotations

from dataclasses import fields

from ..model import Model, Options
from .programs import Vocab

_MP = dict(kinds=("st", "ld"), orders=("na", "rel", "acq"))

PRESETS: dict[str, Vocab] = {
    # UP 2.1(2): addrspace(3) accesses are store-available / load-visible at workgroup scope;
    # seen only where nothing else makes LDS data available (amdgcn-av:none on the flags)
    "lds_av_workgroup": Vocab(**_MP, scopes=("workgroup",), spaces=("global", "local"),
                              placements=("wg",), flags=("avnone-only",), plain_spaces=("local",),
                              sync_spaces=("global",)),
    # S002's "scope wider than workgroup ... treated as workgroup" on LDS
    "lds_scope": Vocab(**_MP, scopes=("agent",), spaces=("global", "local"),
                       placements=("wg",)),
    # UP 2.1(3): volatile non-atomic accesses are available / visible at the widest scope
    "volatile_av": Vocab(**_MP, scopes=("agent",), spaces=("global",), placements=("agent",),
                         flags=("volatile-only", "avnone-only")),
    # UP 2.1(7): a read is location-ordered before the accesses it happens-before
    # (the writes' order and the reads' shadows: a workgroup-scope RMW, agent flags without
    # availability, plain accesses)
    "read_lo": Vocab(kinds=("st", "ld", "rmw"), orders=("na", "mono", "rel", "acq"),
                     scopes=("workgroup", "agent"), spaces=("global",), placements=("agent",),
                     flags=("avnone-only",),
                     only=("st.na", "ld.na", "rmw.mono.workgroup", "st.rel.agent",
                           "ld.acq.agent")),
    # S004 vs UP 2.4: async copies in or out of program order
    "async_model": Vocab(kinds=("st", "ld", "async"), orders=("na",),
                         spaces=("global", "local"), placements=("wg",)),
    "async_done_edges": Vocab(kinds=("st", "ld", "async", "fence"), orders=("na", "rel", "acq"),
                              scopes=("workgroup",), spaces=("global", "local"),
                              placements=("wg",), flags=("mmra",)),
    "async_scope": Vocab(kinds=("st", "ld", "async"), orders=("na", "rel", "acq"),
                         scopes=("workgroup",), spaces=("global", "local"),
                         placements=("wave", "wg")),
    # S002 / S003 execution barriers (the s.barrier of the workgroup)
    **{k: Vocab(kinds=("st", "ld", "bar"), orders=("na",), spaces=("global",),
                placements=("wave", "wg"))
       for k in ("barrier_model", "barrier_scopes", "drop_race", "named_init", "null_wait",
                 "cluster_drop", "barrier_participation", "barrier_hb", "leave_unjoined",
                 "signal_var_count")},
    # S002: HSA scope inclusion vs OpenCL exact scopes
    "scope_inclusion": Vocab(kinds=("st", "ld"), orders=("na", "rel", "acq"),
                             scopes=("wavefront", "workgroup", "agent"), spaces=("global",),
                             placements=("wg", "agent")),
    # S000 availability / visibility on or off
    "avvis": Vocab(kinds=("st", "ld", "av"), orders=("na", "rel", "acq"),
                   scopes=("workgroup", "agent"), spaces=("global",), placements=("agent",)),
    "init_in_every_scope": Vocab(kinds=("st", "ld"), orders=("na", "mono"),
                                 scopes=("workgroup",), spaces=("global",),
                                 placements=("wg", "agent")),
    "coherence": Vocab(kinds=("st", "ld"), orders=("mono",), scopes=("agent",),
                       spaces=("global",), placements=("agent",)),
    "final_co": Vocab(kinds=("st", "ld"), orders=("na", "mono", "rel", "acq"),
                      scopes=("agent",), spaces=("global",), placements=("agent",)),
    "no_thin_air": Vocab(kinds=("st", "ld", "rmw"), orders=("mono",), scopes=("agent",),
                         spaces=("global",), placements=("agent",)),
}

# options a search does not vary: the default target only changes which barriers and scopes
# exist (the vocabulary names no target)
UNSEARCHED = {"default_target": "the target is not part of the vocabulary",
              "cas_undef": "cmpxchg is not part of the vocabulary",
              "async_calls": "function calls are not part of the vocabulary (without calls the "
                             "option changes nothing: docs R-call-async-seq)"}


def differing(a: Model, b: Model) -> list[str]:
    return [f.name for f in fields(Options)
            if getattr(a.options, f.name) != getattr(b.options, f.name)]


def default_vocab(a: Model, b: Model) -> Vocab:
    """The union of the presets of the options that differ (the MP vocabulary when none)."""
    v = None
    for name in differing(a, b):
        p = PRESETS.get(name)
        if p is not None:
            v = p if v is None else v.union(p)
    return v or Vocab(**_MP, scopes=("workgroup", "agent"), spaces=("global",),
                      placements=("wg", "agent"))
