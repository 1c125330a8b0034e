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
    # S004 / UP 2.4 asyncmark sequences per function body (R-call-async-seq) vs one per
    # thread (inlined): a copy, asyncmark and wait.asyncmark(0) with a call around some of
    # them (R-synth-call)
    "async_calls": Vocab(kinds=("st", "ld", "async", "call"), orders=("na",),
                         spaces=("global", "local"), placements=("wg",)),
    # S002 / S003 execution barriers: each option with the barrier instructions it concerns
    # (issue 29: never s.barrier alone where the option is about split, named or cluster
    # barriers)
    "barrier_model": Vocab(kinds=("st", "ld", "bar", "split"), orders=("na",),
                           spaces=("global",), placements=("wave", "wg"), bar_ids=("-1",)),
    "barrier_hb": Vocab(kinds=("st", "ld", "bar", "split"), orders=("na",),
                        spaces=("global",), placements=("wave", "wg"), bar_ids=("-1",)),
    "barrier_scopes": Vocab(kinds=("st", "ld", "fence", "bar", "split"),
                            orders=("na", "rel", "acq"), scopes=("wavefront", "workgroup"),
                            spaces=("global",), placements=("wg",), bar_ids=("-1",),
                            only=("st.na", "ld.na", "fence.rel.wavefront",
                                  "fence.acq.workgroup")),
    **{k: Vocab(kinds=("st", "ld", "split"), orders=("na",), spaces=("global",),
                placements=("wave", "wg"), bar_ids=("-1",))
       for k in ("drop_race", "barrier_participation")},
    **{k: Vocab(kinds=("st", "ld", "split", "named"), orders=("na",), spaces=("global",),
                placements=("wg",), bar_ids=("0", "1"), counts=("0", "1"))
       for k in ("named_init", "null_wait", "leave_unjoined")},
    # K = C needs an arrive count of 1 before the signal.var, and a phase that has not
    # completed: init with count 2 (counts 0, 1, 2; no data accesses: the difference is in
    # undefined behaviour)
    "signal_var_count": Vocab(kinds=("split", "named"), orders=("na",), spaces=("global",),
                              placements=("wg",), bar_ids=("1",), counts=("0", "1", "2")),
    "cluster_drop": Vocab(kinds=("st", "ld", "split"), orders=("na",), spaces=("global",),
                          placements=("wg", "agent"), bar_ids=("-3",)),
    # R-cas-undef: a cmpxchg comparing an undef value (a location with no initial write)
    "cas_undef": Vocab(kinds=("st", "ld", "cas"), orders=("mono",), scopes=("agent",),
                       spaces=("undef",), placements=("agent",)),
    # the default target: a program that names no target, with what differs between targets
    # (cluster scope across clusters; split barriers exist on GFX12+ only)
    "default_target": Vocab(kinds=("st", "ld", "split"), orders=("mono",),
                            scopes=("cluster",), spaces=("global",),
                            placements=("xcluster",), bar_ids=("-1",), targets=("",)),
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

# options a search does not vary: none since the `call` kind (R-synth-call) lets a program
# put a copy's asyncmark in a function body, which is all async_calls changes
UNSEARCHED: dict = {}

# ---- what each option concerns (issue 29 item 3) ----------------------------------------
#
# Each option's rule reads only some instruction families: a program with none of them is
# elaborated and encoded alike under both values. An option concerns a vocabulary when, for
# every group below, the vocabulary has an instruction of some family of the group.
# Families (vocab_families): plain, volatile, atomic, rmw, cas, fence, av, avnone, sync-as,
# user-tag, lds, undef-init, s.barrier, split, cluster-barrier, null-barrier, named, async,
# async-count, branch, call, no-target, cluster-scope, xcluster.
_MEM = ("plain", "atomic", "rmw", "cas", "av")
_SCOPED = ("atomic", "rmw", "cas", "fence", "av")
_BARRIERS = ("s.barrier", "split", "cluster-barrier", "named")
CONCERNS: dict[str, tuple] = {
    "scope_inclusion": (_SCOPED,),
    "avvis": (_MEM,),
    "lds_av_workgroup": (("lds",),),
    "volatile_av": (("volatile",),),
    "read_lo": (_MEM,),
    "init_in_every_scope": (_SCOPED,),
    "coherence": (_MEM,),
    "final_co": (_MEM,),
    # (an undef value comes from a location with no initial write, or from a read that sees
    # racing writes: a cmpxchg is all it needs; tests/test_synth.py probes)
    "cas_undef": (("cas",),),
    "no_thin_air": (("atomic", "rmw", "cas"),),
    "barrier_model": (_BARRIERS,),
    "barrier_scopes": (("fence", "atomic", "rmw", "cas"), _BARRIERS),
    "drop_race": (("split", "cluster-barrier", "named"),),
    "named_init": (("named",),),
    "null_wait": (("named",), ("null-barrier",)),
    "cluster_drop": (("cluster-barrier",),),
    "barrier_participation": (("split", "cluster-barrier", "named"),),
    "barrier_hb": (_BARRIERS,),
    "leave_unjoined": (("named",),),
    "signal_var_count": (("named",),),
    "async_model": (("async",),),
    "async_done_edges": (("async",), ("sync-as", "user-tag")),
    "lds_scope": (("lds",),),
    "async_scope": (("async",),),
    "default_target": (("no-target",),),
    "async_calls": (("call",), ("async",)),     # a call around a mark or wait (R-synth-call)
}


def vocab_families(v: Vocab) -> set:
    """The instruction families a vocabulary can write."""
    from .programs import shapes
    fam = set()
    for kind, order, scope, flags, sps in shapes(v):
        if kind in ("st", "ld"):
            fam.add("plain" if order == "na" else "atomic")
        elif kind in ("avst", "avld"):
            fam.add("av")
        elif kind == "bar":
            fam.add("s.barrier")
        elif kind in ("bsig", "bwait", "bfirst"):
            fam.add({"-3": "cluster-barrier", "0": "null-barrier", "1": "named"}.get(scope,
                                                                                   "split"))
        elif kind in ("binit", "bjoin", "bleave", "bsigvar"):
            fam.add("named")
        elif kind in ("async", "mark"):
            fam.add("async")
        elif kind == "wait":
            fam.add("async-count" if scope not in ("", "0") else "async")
        elif kind == "if":
            fam.add("branch")
        else:
            fam.add(kind)
        if "volatile" in flags:
            fam.add("volatile")
        if "avnone" in flags:
            fam.add("avnone")
        if {"mmra", "mmra-global"} & set(flags):
            fam.add("sync-as")
        if "user" in flags:
            fam.add("user-tag")
        if "local" in sps:
            fam.add("lds")
        if "undef" in sps:
            fam.add("undef-init")
        if scope == "cluster":
            fam.add("cluster-scope")
    if "call" in v.kinds and "async" in v.kinds and {"global", "local"} <= set(v.spaces):
        fam.add("call")         # a call's body makes a mark or wait (R-synth-call)
    if "" in v.targets:
        fam.add("no-target")
    if "xcluster" in v.placements:
        fam.add("xcluster")
    return fam


def reaches(option: str, v: Vocab) -> bool:
    """Does the vocabulary contain the instructions the option concerns?"""
    fam = vocab_families(v)
    return all(set(g) & fam for g in CONCERNS.get(option, ()))


def concerns_text(option: str) -> str:
    return " and ".join("(" + " or ".join(g) + ")" if len(g) > 1 else g[0]
                        for g in CONCERNS.get(option, ()))


def unreachable(a: Model, b: Model, v: Vocab) -> list[str]:
    """The options the two versions set differently that the vocabulary cannot reach."""
    return [o for o in differing(a, b) if not reaches(o, v)]


def differing(a: Model, b: Model) -> list[str]:
    return [f.name for f in fields(Options)
            if getattr(a.options, f.name) != getattr(b.options, f.name)]


# two versions that differ in no option (model files that differ in their definitions): the
# general default, one instruction of each memory family at two scopes, with fences
GENERAL = Vocab(kinds=("st", "ld", "rmw", "fence"), orders=("na", "mono", "rel", "acq"),
                scopes=("workgroup", "agent"), spaces=("global",), placements=("wg", "agent"))


def default_vocab(a: Model, b: Model) -> Vocab:
    """The union of the presets of the options that differ (the general vocabulary when
    none: two models that differ in their definitions, not their options)."""
    v = None
    for name in differing(a, b):
        p = PRESETS.get(name)
        if p is not None:
            v = p if v is None else v.union(p)
    if v is None and same_semantics(a, b) is False:
        return GENERAL
    return v or Vocab(**_MP, scopes=("workgroup", "agent"), spaces=("global",),
                      placements=("wg", "agent"))


_DESCRIPTIVE = ("name", "description", "sources", "file")


def same_semantics(a: Model, b: Model):
    """True when the two models are the same model up to their names (every field but the
    descriptive ones equal, no definitions read from a file other than an options YAML);
    False when they differ in something other than options; None when they differ in
    options (the usual case). Any model the loader can load works: the check reads the
    Model's fields generically, so a model kind with more fields (model files with
    definitions) is compared by them."""
    from dataclasses import fields as dfields
    rest = [f.name for f in dfields(a) if f.name not in _DESCRIPTIVE + ("options",)]
    if type(a) is not type(b) or any(getattr(a, n) != getattr(b, n) for n in rest):
        return False
    for m in (a, b):
        if m.file and not str(m.file).lower().endswith((".yaml", ".yml")):
            return False        # a model file with definitions of its own: never assumed equal
    return True if a.options == b.options else None
