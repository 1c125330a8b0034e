"""Synthesis, part 1: the programs searched (docs/semantics.md "Synthesis").

A program is a placement of its threads in the scope tree, one instruction sequence per thread,
and the address space of each location. Everything here is pure: the vocabulary, the
canonical enumeration (symmetry reduction), the one-step reductions the minimiser tries and
the YAML writer. Nothing is solved here (amdmm_smt/synth/search.py does that).

Canonical form (why every program is covered once):
- locations are numbered in order of first use (threads in order, each in program order);
  a location's address space is fixed at its first use;
- stores write 1, 2, 3, ... in order of appearance and every location starts at 0, so value
  renaming is fixed by construction (the claim is about programs whose stores write distinct
  non-zero values);
- placements are numbered the same way (agents, then workgroups in an agent, then waves in a
  workgroup, each in order of first use);
- of the programs equal up to a permutation of their threads, only the one whose key
  (placement, threads, spaces) is smallest is searched.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field, replace
from typing import Iterator, Optional

# One instruction: (kind, order, scope, flags, locs).
#   kind: st ld rmw cas fence avst avld | bar (s.barrier) bsig bwait bfirst (split barrier
#   signal / wait / signal.isfirst) binit bjoin bleave bsigvar (named barriers) | async mark
#   wait | if (a diamond: the next instruction of the thread runs only when the thread's last
#   read returned 0 ('eq') or not ('ne'));
#   order: na mono acq rel acqrel sc ('' for none); a cmpxchg's is SUCCESS/FAILURE (acq/mono);
#   scope: wavefront workgroup cluster agent system ('' for none); for the split barrier
#   instructions the barrier ID (-1 workgroup, -3 cluster, 0 NULL, 1 named: wait only), for
#   init / signal.var the count K, for wait.asyncmark its count N, for `if` eq / ne;
#   flags: a sorted tuple of volatile / avnone / mmra / mmra-global / user;
#   locs: the location indices it names (async: the global source and the LDS destination;
#   named-barrier instructions: the barrier object).
Instr = tuple

ORDERS = ("na", "mono", "acq", "rel", "acqrel", "sc")
LLVM_ORDER = {"mono": "monotonic", "acq": "acquire", "rel": "release", "acqrel": "acq_rel",
              "sc": "seq_cst"}
SCOPES = ("wavefront", "workgroup", "cluster", "agent", "system")
# undef: a global location with no initial write (`init: undef`); barrier: a named barrier
# object (`space: barrier`), never chosen by a vocabulary, added by the named-barrier kinds
SPACES = ("global", "local", "undef")
# st ld rmw cas fence av: memory; bar: s.barrier; split: s.barrier.signal / wait /
# signal.isfirst with the IDs of `bar_ids`; named: s.barrier.init / join / leave /
# signal.var; async: load.async.to.lds, asyncmark, wait.asyncmark(N); if: one diamond
# call: one range of one thread's instructions made the body of a function `@f` that the
# thread calls in its place (Program.call; docs R-synth-call)
KINDS = ("st", "ld", "rmw", "cas", "fence", "av", "bar", "split", "named", "async", "if",
         "call")
# how two threads relate: same wave; same workgroup; different workgroups of one cluster
# ("agent": the historic name, every thread is in cluster 0 unless xcluster is searched);
# different clusters of one agent; different agents
PLACEMENTS = ("wave", "wg", "agent", "xcluster", "system")
# volatile: plain accesses with and without `volatile` (volatile-only: always volatile);
# avnone: atomics and fences with and without amdgcn-av:none (avnone-only: always);
# mmra / mmra-global: fences with and without the amdgpu-synchronize-as:local / :global tag;
# user: atomics and fences with and without a user tag !{!"user", !"tag"} (S001)
# tag-all: those tags (mmra, mmra-global, user) also on accesses, async copies, marks and waits
FLAGS = ("volatile", "volatile-only", "avnone", "avnone-only", "mmra", "mmra-global", "user",
         "tag-all")
BAR_IDS = ("-1", "-3", "0", "1")
COUNTS = ("0", "1", "2")
TARGETS = ("", "gfx942", "gfx1200", "gfx1250")    # "": the test names no target
BARRIER_KINDS = ("bar", "bsig", "bwait", "bfirst", "binit", "bjoin", "bleave", "bsigvar")
READS = ("ld", "rmw", "cas", "avld")     # the instructions that define an i32 register
# what a callee body may not hold (R-synth-call): instructions that define a register (a void
# callee's registers are not part of the outcome, docs R-call-inline) and the diamond
NOT_IN_CALL = READS + ("bfirst", "if")
# what makes a call differ from its inlined program (R-call-inline, R-call-async-seq: a call
# changes only the asyncmark sequences, so a body must make a mark or wait)
CALL_MATTERS = ("mark", "wait")

# "weaker" for the minimiser (docs/semantics.md 17.4): order one step down this lattice,
# scope one step narrower, a flag dropped
# (per kind: the orders LLVM allows on it)
WEAKER_ORDER = {
    "st": {"sc": ("rel",), "rel": ("mono",), "mono": ("na",)},
    "ld": {"sc": ("acq",), "acq": ("mono",), "mono": ("na",)},
    "rmw": {"sc": ("acqrel",), "acqrel": ("acq", "rel"), "acq": ("mono",), "rel": ("mono",)},
    "fence": {"sc": ("acqrel",), "acqrel": ("acq", "rel")},
}
WEAKER_FAIL = {"sc": "acq", "acq": "mono"}
# (cluster narrows to workgroup; agent is not narrowed to cluster: the minimiser's steps are
# the ones every target has)
NARROWER = {"system": "agent", "agent": "workgroup", "cluster": "workgroup",
            "workgroup": "wavefront"}
_STRENGTH = {"mono": 0, "acq": 1, "rel": 1, "acqrel": 2, "sc": 3}


def base_space(sp: str) -> str:
    """The address space of a location kind (undef locations are global)."""
    return "global" if sp == "undef" else sp


@dataclass(frozen=True)
class Vocab:
    """What a program may contain (the claim of exhaustiveness is about this)."""
    kinds: tuple = ("st", "ld")
    orders: tuple = ("na", "rel", "acq")
    scopes: tuple = ("workgroup",)
    spaces: tuple = ("global",)
    placements: tuple = ("wg",)
    flags: tuple = ()
    plain_spaces: tuple = ()     # spaces of non-atomic accesses (empty: every space)
    sync_spaces: tuple = ()      # spaces of atomic accesses (empty: every space)
    only: tuple = ()             # kind.order[.scope] specs: only these shapes (empty: all)
    bar_ids: tuple = ("-1",)     # split: the barrier IDs signalled / waited on
    counts: tuple = ("1",)       # named: the counts K of init / signal.var
    wait_counts: tuple = ("0",)  # async: the counts N of wait.asyncmark
    targets: tuple = ("",)       # the programs' targets ("": none named, the model's default)

    def plain_ok(self, sp: str) -> bool:
        return not self.plain_spaces or sp in self.plain_spaces

    def sync_ok(self, sp: str) -> bool:
        return not self.sync_spaces or sp in self.sync_spaces

    def _extras(self) -> str:
        out = ""
        if "split" in self.kinds:
            out += f"; barrier IDs {','.join(self.bar_ids)}"
        if "named" in self.kinds:
            out += f"; counts {','.join(self.counts)}"
        if "async" in self.kinds and self.wait_counts != ("0",):
            out += f"; wait counts {','.join(self.wait_counts)}"
        if "call" in self.kinds:
            out += "; calls: at most one per program, its body makes a mark or wait and " \
                   "defines no register"
        if self.targets != ("",):
            out += "; targets " + ",".join(t or "(none)" for t in self.targets)
        return out

    def describe(self) -> str:
        return (f"kinds {','.join(self.kinds)}; orders {','.join(self.orders)}; scopes "
                f"{','.join(self.scopes)}; spaces {','.join(self.spaces)}; placements "
                f"{','.join(self.placements)}; flags {','.join(self.flags) or '-'}"
                + (f"; plain accesses in {','.join(self.plain_spaces)}" if self.plain_spaces
                   else "")
                + (f"; atomics in {','.join(self.sync_spaces)}" if self.sync_spaces else "")
                + (f"; only {','.join(self.only)}" if self.only else "") + self._extras())

    def record(self) -> dict:
        return {"kinds": list(self.kinds), "orders": list(self.orders),
                "scopes": list(self.scopes), "spaces": list(self.spaces),
                "placements": list(self.placements), "flags": list(self.flags),
                "plain_spaces": list(self.plain_spaces), "sync_spaces": list(self.sync_spaces),
                "only": list(self.only), "bar_ids": list(self.bar_ids),
                "counts": list(self.counts), "wait_counts": list(self.wait_counts),
                "targets": list(self.targets)}

    def union(self, other: "Vocab") -> "Vocab":
        def u(a, b, allv):
            return tuple(v for v in allv if v in a or v in b)
        def us(a, b, sa, sb):       # an empty restriction is every space of its vocabulary
            return u(a or sa, b or sb, SPACES)
        def flags(a, b):
            # X-only in one and not in the other: both with and without X (the union of
            # the two sets of shapes, as near as the fields say it)
            out = set(a) | set(b)
            for x in ("volatile", "avnone"):
                if f"{x}-only" in out and not (f"{x}-only" in a and f"{x}-only" in b):
                    out.discard(f"{x}-only")
                    out.add(x)
                if f"{x}-only" in out:
                    out.discard(x)
            return tuple(f for f in FLAGS if f in out)
        return Vocab(u(self.kinds, other.kinds, KINDS), u(self.orders, other.orders, ORDERS),
                     u(self.scopes, other.scopes, SCOPES), u(self.spaces, other.spaces, SPACES),
                     u(self.placements, other.placements, PLACEMENTS),
                     flags(self.flags, other.flags),
                     us(self.plain_spaces, other.plain_spaces, self.spaces, other.spaces),
                     us(self.sync_spaces, other.sync_spaces, self.spaces, other.spaces),
                     # a restriction in one only: the other's shapes are all in, so none
                     tuple(sorted(set(self.only) | set(other.only)))
                     if self.only and other.only else (),
                     u(self.bar_ids, other.bar_ids, BAR_IDS), u(self.counts, other.counts,
                                                                 COUNTS),
                     tuple(sorted(set(self.wait_counts) | set(other.wait_counts))),
                     u(self.targets, other.targets, TARGETS))


def parse_vocab(text: str, base: Optional[Vocab] = None) -> Vocab:
    """`--vocab kinds=st,ld,rmw;orders=na,rel,acq;...`: each field given replaces the base's;
    `+field=...` adds to it. Unknown names are a ValueError (one line)."""
    allv = {"kinds": KINDS, "orders": ORDERS, "scopes": SCOPES, "spaces": SPACES,
            "placements": PLACEMENTS, "flags": FLAGS, "plain_spaces": SPACES,
            "sync_spaces": SPACES, "only": (), "bar_ids": BAR_IDS, "counts": COUNTS,
            "wait_counts": ("0", "1", "2"), "targets": None}
    v = base or Vocab()
    for part in [p.strip() for p in text.split(";") if p.strip()]:
        add = part.startswith("+")
        k, sep, vals = part.lstrip("+").partition("=")
        k = k.strip()
        if not sep or k not in allv:
            raise ValueError(f"--vocab: expected FIELD=V1,V2 with FIELD one of "
                             f"{', '.join(allv)} (got '{part}')")
        got = [x.strip() for x in vals.split(",") if x.strip()]
        if k == "only":
            bad = [x for x in got if not _spec_ok(x)]
            if bad:
                raise ValueError(f"--vocab only: bad shape {bad[0]} (kind.order[.scope], e.g. "
                                 "st.rel.agent, ld.na, rmw.mono.workgroup)")
            v = replace(v, only=tuple(sorted(set(got) | (set(v.only) if add else set()))))
            continue
        if k == "targets":
            got = ["" if x in ("none", "-") else x for x in got]
            for x in got:
                if x:
                    from ..targets import get_target
                    get_target(x)       # ValueError: unknown target
            if add:
                got = list(v.targets) + got
            v = replace(v, targets=tuple(dict.fromkeys(got)))
            continue
        bad = [x for x in got if x not in allv[k]]
        if bad:
            raise ValueError(f"--vocab {k}: unknown {', '.join(bad)} (known: "
                             f"{', '.join(allv[k])})")
        if add:
            got = list(getattr(v, k)) + got
        v = replace(v, **{k: tuple(x for x in allv[k] if x in got)})
    return v


def _spec_ok(x: str) -> bool:
    parts = x.split(".")
    return (2 <= len(parts) <= 3 and parts[0] in KINDS + ("avst", "avld", "mark", "wait")
            and (parts[1] in ORDERS + ("",) or (parts[0] == "cas" and "/" in parts[1]))
            and (len(parts) == 2 or parts[2] in SCOPES))


def _matches(shape: tuple, only: tuple) -> bool:
    kind, order, scope = shape[:3]
    for x in only:
        p = x.split(".")
        if p[0] == kind and p[1] in (order, order.split("/")[0]) and (len(p) == 2
                                                                     or p[2] == scope):
            return True
    return False


# ---- the instruction alphabet ----------------------------------------------------------

def shapes(v: Vocab) -> list[tuple]:
    """Every instruction shape of the vocabulary: (kind, order, scope, flags, spaces of its
    locations); locations are chosen when a program is built."""
    out = []
    atomic_scopes = v.scopes or ("system",)
    plain_flags = ([("volatile",)] if "volatile-only" in v.flags else
                   [(), ("volatile",)] if "volatile" in v.flags else [()])
    sync_flags = ([("avnone",)] if "avnone-only" in v.flags else
                  [(), ("avnone",)] if "avnone" in v.flags else [()])
    user = [()] + ([("user",)] if "user" in v.flags else [])
    # tag-all: the MMRA tags of the vocabulary (sync-as local / global, user) on every
    # instruction that takes metadata, one tag at a time (not on fences only: a tag on copies,
    # waits and accesses cuts program order between them, S001; R-synth-tag-all)
    every = [()]
    fence_user = user
    if "tag-all" in v.flags:
        every += [(t,) for t in ("mmra", "mmra-global", "user") if t in v.flags]
        user = every

    def tags(base, extra):
        return sorted(set(tuple(sorted(a + b)) for a in base for b in extra))
    for sp in v.spaces:
        for kind, ords in (("st", ("na", "mono", "rel", "sc")), ("ld", ("na", "mono", "acq",
                                                                       "sc"))):
            if kind not in v.kinds:
                continue
            for o in ords:
                if o not in v.orders:
                    continue
                if o == "na":
                    if v.plain_ok(sp):
                        out += [(kind, "na", "", f, (sp,)) for f in tags(plain_flags, every)]
                elif v.sync_ok(sp):
                    out += [(kind, o, s, f, (sp,)) for s in atomic_scopes
                            for f in tags(sync_flags if o in ("rel", "acq", "sc") else [()],
                                          user)]
        if "rmw" in v.kinds and v.sync_ok(sp):
            for o in ("mono", "acq", "rel", "acqrel", "sc"):
                if o in v.orders:
                    out += [("rmw", o, s, f, (sp,)) for s in atomic_scopes
                            for f in tags(sync_flags if o != "mono" else [()], user)]
        if "cas" in v.kinds and v.sync_ok(sp):
            fails = [f for f in ("mono", "acq", "sc") if f in v.orders] or ["mono"]
            for o in ("mono", "acq", "rel", "acqrel", "sc"):
                if o not in v.orders:
                    continue
                for fo in fails:
                    if _STRENGTH[fo] > _STRENGTH[o] or (fo == "acq" and o == "rel"):
                        continue
                    out += [("cas", f"{o}/{fo}", s, f, (sp,)) for s in atomic_scopes
                            for f in tags(sync_flags if o != "mono" else [()], user)]
    if "fence" in v.kinds:
        mm = ([()] + [(t,) for t in ("mmra", "mmra-global") if t in v.flags])
        for o in ("acq", "rel", "acqrel", "sc"):
            if o in v.orders:
                out += [("fence", o, s, f, ()) for s in atomic_scopes
                        for f in tags(tags(sync_flags, mm), fence_user)]
    if "av" in v.kinds and "global" in v.spaces:
        out += [(k, "", s, (), ("global",)) for k in ("avst", "avld") for s in atomic_scopes]
    if "bar" in v.kinds:
        out.append(("bar", "", "", (), ()))
    if "split" in v.kinds:
        for i in v.bar_ids:
            if i != "1":
                out += [("bsig", "", i, (), ()), ("bfirst", "", i, (), ())]
            out.append(("bwait", "", i, (), ()))
    if "named" in v.kinds:
        out += [("binit", "", k, (), ("barrier",)) for k in v.counts]
        out += [("bjoin", "", "", (), ("barrier",)), ("bleave", "", "", (), ())]
        out += [("bsigvar", "", k, (), ("barrier",)) for k in v.counts]
    if "async" in v.kinds and "global" in v.spaces and "local" in v.spaces:
        out += [("async", "", "", f, ("global", "local")) for f in every]
        out += [("mark", "", "", f, ()) for f in every]
        out += [("wait", "", n, f, ()) for n in sorted(v.wait_counts) for f in every]
    if "if" in v.kinds:
        out += [("if", "", "eq", (), ()), ("if", "", "ne", (), ())]
    if v.only:
        out = [s for s in out if s[0] not in ("st", "ld", "rmw", "cas", "fence")
               or _matches(s, v.only)]
    return out


# ---- placements -------------------------------------------------------------------------

def _rgs(n: int) -> Iterator[tuple]:
    """Restricted growth strings of length n (set partitions in canonical numbering)."""
    def go(prefix, m):
        if len(prefix) == n:
            yield tuple(prefix)
            return
        for k in range(m + 2):
            yield from go(prefix + [k], max(m, k))
    if n == 0:
        yield ()
    else:
        yield from go([0], 0)


def relation(p: tuple, i: int, j: int) -> str:
    """How threads i and j relate; a placement is (agent, cluster, workgroup, wave) per
    thread."""
    a, b = p[i], p[j]
    if a[0] != b[0]:
        return "system"
    if a[1] != b[1]:
        return "xcluster"
    if a[2] != b[2]:
        return "agent"
    if a[3] != b[3]:
        return "wg"
    return "wave"


def canon_placement(p: tuple) -> tuple:
    """Renumber (agent, cluster, workgroup, wave) per thread in order of first use, each level
    local to its enclosing instance."""
    out, seen = [], [{}, {}, {}, {}]
    for t in p:
        row = []
        for lvl in range(4):
            key = tuple(t[:lvl + 1])
            d = seen[lvl]
            if key not in d:
                d[key] = sum(1 for k in d if k[:-1] == key[:-1])
            row.append(d[key])
        out.append(tuple(row))
    return tuple(out)


def placements(n: int, allowed: tuple) -> list[tuple]:
    out = set()
    rgs = list(_rgs(n))
    ags = rgs if "system" in allowed else [(0,) * n]
    cls_ = rgs if "xcluster" in allowed else [(0,) * n]
    for agents in ags:
        for cls in cls_:
            for wgs in rgs:
                for waves in rgs:
                    p = canon_placement(tuple(zip(agents, cls, wgs, waves)))
                    if all(relation(p, i, j) in allowed for i in range(n)
                           for j in range(i + 1, n)):
                        out.add(p)
    return sorted(out)


# ---- programs ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Program:
    placement: tuple          # per thread (agent, cluster, workgroup, wave)
    threads: tuple            # per thread a tuple of Instr
    spaces: tuple             # per location its address space (SPACES, or "barrier")
    target: str = ""          # "": the test names no target (the model's default_target)
    # () or (thread, start, end): instructions start..end-1 of that thread are the body of
    # `define void @f()`, which the thread calls in their place (R-synth-call); the call is no
    # instruction of its own (events count the body's)
    call: tuple = ()

    @property
    def events(self) -> int:
        return sum(len(t) for t in self.threads)

    def key(self) -> tuple:
        return (self.placement, self.threads, self.spaces, self.target, self.call)


def _relabel(prog: Program, perm: tuple) -> Program:
    """The program with its threads in the order perm, locations renumbered by first use."""
    threads = [prog.threads[i] for i in perm]
    plc = canon_placement(tuple(prog.placement[i] for i in perm))
    ren: dict = {}
    for t in threads:
        for ins in t:
            for loc in ins[4]:
                ren.setdefault(loc, len(ren))
    nt = tuple(tuple(ins[:4] + (tuple(ren[x] for x in ins[4]),) for ins in t) for t in threads)
    spaces = [None] * len(ren)
    for old, new in ren.items():
        spaces[new] = prog.spaces[old]
    call = (perm.index(prog.call[0]),) + prog.call[1:] if prog.call else ()
    return Program(plc, nt, tuple(spaces), prog.target, call)


def canonical(prog: Program) -> Program:
    """The representative of the program's class under thread permutation, location and value
    renaming (values are positional: see the module comment)."""
    best = None
    for perm in itertools.permutations(range(len(prog.threads))):
        cand = _relabel(prog, perm)
        if best is None or cand.key() < best.key():
            best = cand
    return best


def lds_ok(prog: Program) -> bool:
    """LDS is per workgroup (docs/litmus-format.md): a local location is used by the threads
    of one workgroup only; other programs are not litmus tests."""
    where: dict = {}
    for t, th in enumerate(prog.threads):
        wg = prog.placement[t][:3]
        for ins in th:
            for x in ins[4]:
                if prog.spaces[x] == "local" and where.setdefault(x, wg) != wg:
                    return False
    return True


def wave_ok(prog: Program) -> bool:
    """Threads of one wavefront perform the same barrier instructions (S002: "only in
    wave-uniform control flow"; straight-line code that breaks it is an input error)."""
    bars: dict = {}
    for t, th in enumerate(prog.threads):
        mine = tuple(i[:3] + i[4:] for i in th if i[0] in BARRIER_KINDS)
        if bars.setdefault(prog.placement[t], mine) != mine:
            return False
    return True


def flow_ok(prog: Program) -> bool:
    """At most one diamond (`if`) in the program; it follows an instruction that defines a
    register (the read it branches on) and precedes the instruction it guards."""
    n = 0
    for th in prog.threads:
        for i, ins in enumerate(th):
            if ins[0] == "if":
                n += 1
                if i == 0 or i == len(th) - 1 or th[i - 1][0] not in READS \
                        or th[i + 1][0] == "if":
                    return False
    return n <= 1


def call_ok(prog: Program) -> bool:
    """A call (R-synth-call) covers a non-empty range of its thread; its body defines no
    register and holds no diamond, is not the instruction a diamond guards, and makes an
    asyncmark or waits on one (a body without either is its inlined program)."""
    if not prog.call:
        return True
    t, s, e = prog.call
    if not (0 <= t < len(prog.threads) and 0 <= s < e <= len(prog.threads[t])):
        return False
    th = prog.threads[t]
    body = th[s:e]
    return (not any(i[0] in NOT_IN_CALL for i in body)
            and any(i[0] in CALL_MATTERS for i in body)
            and not (s > 0 and th[s - 1][0] == "if"))


def call_ranges(prog: Program) -> Iterator[tuple]:
    """Every call (thread, start, end) a program may have (call_ok)."""
    for t, th in enumerate(prog.threads):
        for s in range(len(th)):
            for e in range(s + 1, len(th) + 1):
                c = replace(prog, call=(t, s, e))
                if call_ok(c):
                    yield (t, s, e)


def observable(prog: Program) -> bool:
    """A program with no location and no barrier instruction has nothing to observe."""
    return bool(prog.spaces) or any(i[0] in BARRIER_KINDS for th in prog.threads for i in th)


def _compositions(total: int, parts: int) -> Iterator[tuple]:
    if parts == 1:
        yield (total,)
        return
    for first in range(1, total - parts + 2):
        for rest in _compositions(total - first, parts - 1):
            yield (first,) + rest


def programs(v: Vocab, threads: int, events: int, locations: int) -> Iterator[Program]:
    """Every canonical program with exactly `threads` threads and `events` instructions (each
    thread at least one), at most `locations` locations, in a deterministic order."""
    alpha = shapes(v)
    plcs = placements(threads, v.placements)
    calls = "call" in v.kinds
    for target in v.targets:
        for comp in _compositions(events, threads):
            slots = [(t, i) for t, n in enumerate(comp) for i in range(n)]
            for seq in itertools.product(alpha, repeat=len(slots)):
                if sum(1 for x in seq if x[0] == "if") > 1:
                    continue
                for prog in _assign_locs(seq, comp, locations):
                    for plc in plcs:
                        p = Program(plc, prog[0], prog[1], target)
                        if not (observable(p) and flow_ok(p) and lds_ok(p) and wave_ok(p)):
                            continue
                        if p.key() == canonical(p).key():
                            yield p
                        if calls:
                            for c in call_ranges(p):
                                q = replace(p, call=c)
                                if q.key() == canonical(q).key():
                                    yield q


def _assign_locs(seq, comp, maxloc) -> Iterator[tuple]:
    """Locations for a sequence of shapes, numbered in order of first use (threads, spaces)."""
    def go(i, spaces, built):
        if i == len(seq):
            ths, k = [], 0
            for n in comp:
                ths.append(tuple(built[k:k + n]))
                k += n
            yield tuple(ths), tuple(spaces)
            return
        kind, order, scope, flags, need = seq[i]

        def locs(j, sp, chosen):
            if j == len(need):
                yield sp, chosen
                return
            for loc in range(len(sp) + 1):
                if loc == len(sp):
                    if need[j] == "barrier":
                        if "barrier" in sp:     # one barrier object is enough
                            continue
                    elif sum(1 for x in sp if x != "barrier") >= maxloc:
                        continue
                    yield from locs(j + 1, sp + [need[j]], chosen + (loc,))
                elif sp[loc] == need[j] and loc not in chosen:
                    yield from locs(j + 1, sp, chosen + (loc,))
        for sp, chosen in locs(0, list(spaces), ()):
            yield from go(i + 1, sp, built + [(kind, order, scope, flags, chosen)])
    yield from go(0, [], [])


def count_programs(v: Vocab, threads: int, events: int, locations: int) -> int:
    return sum(1 for _ in programs(v, threads, events, locations))


# ---- one-step reductions (the minimiser) -----------------------------------------------

def reductions(prog: Program) -> list[tuple[str, Program]]:
    """Every one-step reduction (docs 17.4): remove one instruction, weaken one order one step,
    narrow one scope one step, drop one flag. Each returned canonical, with what was done."""
    out = []
    for t, th in enumerate(prog.threads):
        for i, ins in enumerate(th):
            kind, order, scope, flags, locs = ins
            what = f"T{t} instruction {i + 1}"
            if len(th) > 1 or len(prog.threads) > 1:
                nth = list(prog.threads)
                nth[t] = th[:i] + th[i + 1:]
                plc = list(prog.placement)
                call = _call_without(prog.call, t, i, not nth[t])
                if not nth[t]:
                    del nth[t]
                    del plc[t]
                out.append((f"remove {what}", _gc(Program(tuple(plc), tuple(nth),
                                                          prog.spaces, prog.target, call))))
            variants = []
            if kind == "cas":
                so, fo = order.split("/")
                for o in WEAKER_ORDER["rmw"].get(so, ()):
                    if _STRENGTH[fo] <= _STRENGTH[o] and not (fo == "acq" and o == "rel"):
                        variants.append((f"weaken {what} to {o}/{fo}",
                                         (kind, f"{o}/{fo}", scope,
                                          flags if o != "mono" else (), locs)))
                if fo in WEAKER_FAIL:
                    variants.append((f"weaken {what} failure to {WEAKER_FAIL[fo]}",
                                     (kind, f"{so}/{WEAKER_FAIL[fo]}", scope, flags, locs)))
            elif order in WEAKER_ORDER.get(kind, {}):
                for o in WEAKER_ORDER[kind][order]:
                    variants.append((f"weaken {what} to {o}",
                                     (kind, o, "" if o == "na" else scope,
                                      tuple(f for f in flags if o != "na" or f == "volatile"),
                                      locs)))
            if scope in NARROWER and kind not in BARRIER_KINDS:
                variants.append((f"narrow {what} to {NARROWER[scope]}",
                                 (kind, order, NARROWER[scope], flags, locs)))
            for f in flags:
                variants.append((f"drop {f} of {what}",
                                 (kind, order, scope, tuple(x for x in flags if x != f), locs)))
            for desc, new in variants:
                nth = list(prog.threads)
                nth[t] = th[:i] + (new,) + th[i + 1:]
                out.append((desc, canonical(Program(prog.placement, tuple(nth), prog.spaces,
                                                    prog.target, prog.call))))
    if prog.call:
        # inline the call (R-synth-call: the weaker program, one sequence of asyncmarks)
        out.append((f"inline the call of T{prog.call[0]} instructions {prog.call[1] + 1}.."
                    f"{prog.call[2]}", canonical(replace(prog, call=()))))
    return out


def _call_without(call: tuple, t: int, i: int, thread_gone: bool) -> tuple:
    """The call after removing instruction i of thread t (the thread gone when it was its
    last): () when its body is left empty or without a mark or wait (then it is its inlined
    program, R-synth-call)."""
    if not call:
        return ()
    ct, s, e = call
    if ct == t:
        if thread_gone:
            return ()
        if i < s:
            s, e = s - 1, e - 1
        elif i < e:
            e -= 1
        return (ct, s, e) if e > s else ()
    if thread_gone and ct > t:
        return (ct - 1, s, e)
    return call


def _gc(prog: Program) -> Program:
    """Drop unused locations and renumber; canonical."""
    used = sorted({x for th in prog.threads for ins in th for x in ins[4]})
    ren = {old: k for k, old in enumerate(used)}
    th = tuple(tuple(i[:4] + (tuple(ren[x] for x in i[4]),) for i in t) for t in prog.threads)
    call = prog.call
    if call and not any(i[0] in CALL_MATTERS for i in th[call[0]][call[1]:call[2]]):
        call = ()               # a body with no mark or wait is its inlined program
    return canonical(Program(canon_placement(prog.placement), th,
                             tuple(prog.spaces[o] for o in used), prog.target, call))


# ---- the YAML writer --------------------------------------------------------------------

LOC_NAMES = "xyzwuv"
MMRA_AVNONE = '!{!"amdgcn-av", !"none"}'


def loc_name(k: int) -> str:
    return LOC_NAMES[k] if k < len(LOC_NAMES) else f"m{k}"


def _sync(scope: str) -> str:
    return "" if scope in ("", "system") else f' syncscope("{scope}")'


# the MMRA nodes: fixed numbers for the single tags (and !2, the one pair the presets use),
# then one node per other set of tags, numbered in order of first use
TAG_NODE = {"avnone": "!0", "mmra": "!1", "mmra-global": "!3", "user": "!4"}
TAG_TEXT = {"avnone": MMRA_AVNONE, "mmra": '!{!"amdgpu-synchronize-as", !"local"}',
            "mmra-global": '!{!"amdgpu-synchronize-as", !"global"}',
            "user": '!{!"user", !"tag"}'}
MD_FLAGS = tuple(TAG_NODE)


def _md_nodes(prog: Program) -> dict:
    """Every set of MMRA tags the program uses -> its node name."""
    nodes = {("avnone", "mmra"): "!2"}
    n = 5
    for th in prog.threads:
        for ins in th:
            tags = tuple(f for f in MD_FLAGS if f in ins[3])
            if len(tags) > 1 and tags not in nodes:
                nodes[tags] = f"!{n}"
                n += 1
    return nodes


def _md(flags, nodes: Optional[dict] = None) -> str:
    tags = tuple(f for f in MD_FLAGS if f in flags)
    if not tags:
        return ""
    if len(tags) == 1:
        return ", !mmra " + TAG_NODE[tags[0]]
    return ", !mmra " + (nodes or {("avnone", "mmra"): "!2"})[tags]


def name_of(prog: Program, x: int) -> str:
    """A location's name: x, y, ... by number; the (one) named barrier object is nb."""
    return "nb" if prog.spaces[x] == "barrier" else loc_name(x)


def _ptr(prog: Program, x: int) -> str:
    return (f"ptr addrspace({3 if prog.spaces[x] in ('local', 'barrier') else 1}) "
            f"@{name_of(prog, x)}")


CALLEE = "f"


def render_code(prog: Program) -> list[list[str]]:
    """Per thread, its instructions as LLVM IR lines (values 1, 2, ... in order); the
    instructions of a call's body are replaced by `call void @f()` (R-synth-call)."""
    out = []
    for t, per in enumerate(_render_instrs(prog)):
        if prog.call and prog.call[0] == t:
            _, s, e = prog.call
            per = per[:s] + [[f"call void @{CALLEE}()"]] + per[e:]
        out.append([ln for lines in per for ln in lines])
    return out


def callee_lines(prog: Program) -> list[str]:
    """The body of `@f` (the call's instructions, then `ret void`); [] without a call."""
    if not prog.call:
        return []
    t, s, e = prog.call
    per = _render_instrs(prog)[t]
    return [ln for lines in per[s:e] for ln in lines] + ["ret void"]


def code_text(prog: Program) -> str:
    """The program on one line: the callee's definition (if any), then the threads
    separated by ∥."""
    head = ""
    if prog.call:
        head = f"define void @{CALLEE}() {{ " + "; ".join(callee_lines(prog)) + " }; "
    return head + " ∥ ".join("; ".join(c) for c in render_code(prog))


def _render_instrs(prog: Program) -> list[list[list[str]]]:
    """Per thread, per instruction, its LLVM IR lines (a diamond's join closes on the
    instruction it guards)."""
    val = 0
    out = []
    nodes = _md_nodes(prog)
    for t, th in enumerate(prog.threads):
        per, reg = [], 0
        guard = None            # the join label of an open diamond
        for kind, order, scope, flags, locs in th:
            lines = []
            per.append(lines)
            ptr = [_ptr(prog, x) for x in locs]
            md = _md(flags, nodes)
            vol = " volatile" if "volatile" in flags else ""
            if kind in ("st", "rmw", "avst", "cas"):
                val += 1
            if kind == "st":
                lines.append(f"store{vol} i32 {val}, {ptr[0]}{md}" if order == "na" else
                             f"store atomic i32 {val}, {ptr[0]}{_sync(scope)} "
                             f"{LLVM_ORDER[order]}, align 4{md}")
            elif kind == "ld":
                lines.append(f"%r{reg} = load{vol} i32, {ptr[0]}{md}" if order == "na" else
                             f"%r{reg} = load atomic i32, {ptr[0]}{_sync(scope)} "
                             f"{LLVM_ORDER[order]}, align 4{md}")
                reg += 1
            elif kind == "rmw":
                lines.append(f"%r{reg} = atomicrmw xchg {ptr[0]}, i32 {val}{_sync(scope)} "
                             f"{LLVM_ORDER[order]}{md}")
                reg += 1
            elif kind == "cas":
                so, fo = order.split("/")
                lines.append(f"%r{reg} = cmpxchg {ptr[0]}, i32 0, i32 {val}{_sync(scope)} "
                             f"{LLVM_ORDER[so]} {LLVM_ORDER[fo]}{md}")
                reg += 1
            elif kind == "fence":
                lines.append(f"fence{_sync(scope)} {LLVM_ORDER[order]}{md}")
            elif kind == "avst":
                lines.append(f"call void @llvm.amdgcn.av.global.store.b128({ptr[0]}, i32 {val}, "
                             f'metadata !"{"" if scope == "system" else scope}")')
            elif kind == "avld":
                lines.append(f"%r{reg} = call i32 @llvm.amdgcn.av.global.load.b128({ptr[0]}, "
                             f'metadata !"{"" if scope == "system" else scope}")')
                reg += 1
            elif kind == "bar":
                lines.append("call void @llvm.amdgcn.s.barrier()")
            elif kind == "bsig":
                lines.append(f"call void @llvm.amdgcn.s.barrier.signal(i32 {scope})")
            elif kind == "bwait":
                lines.append(f"call void @llvm.amdgcn.s.barrier.wait(i16 {scope})")
            elif kind == "bfirst":
                lines.append(f"%f{reg} = call i1 @llvm.amdgcn.s.barrier.signal.isfirst(i32 "
                             f"{scope})")
                reg += 1
            elif kind == "binit":
                lines.append(f"call void @llvm.amdgcn.s.barrier.init({ptr[0]}, i32 {scope})")
            elif kind == "bjoin":
                lines.append(f"call void @llvm.amdgcn.s.barrier.join({ptr[0]})")
            elif kind == "bleave":
                lines.append("call void @llvm.amdgcn.s.barrier.leave(i16 1)")
            elif kind == "bsigvar":
                lines.append(f"call void @llvm.amdgcn.s.barrier.signal.var({ptr[0]}, "
                             f"i32 {scope})")
            elif kind == "async":
                lines.append(f"call void @llvm.amdgcn.load.async.to.lds.p1({ptr[0]}, {ptr[1]}, "
                             f"i32 4, i32 0, i32 0){md}")
            elif kind == "mark":
                lines.append(f"call void @llvm.amdgcn.asyncmark(){md}")
            elif kind == "wait":
                lines.append(f"call void @llvm.amdgcn.wait.asyncmark(i16 {scope or 0}){md}")
            elif kind == "if":
                lines.append(f"%c = icmp {scope} i32 %r{reg - 1}, 0")
                lines.append("br i1 %c, label %then, label %join")
                lines.append("then:")
                guard = "join"
                continue
            if guard:
                lines.append(f"br label %{guard}")
                lines.append(f"{guard}:")
                guard = None
        out.append(per)
    return out


def written_locations(prog: Program) -> list[int]:
    """Locations some instruction writes (their final values are part of the final state)."""
    out = set()
    for th in prog.threads:
        for kind, _o, _s, _f, locs in th:
            if kind in ("st", "rmw", "avst", "cas"):
                out.add(locs[0])
            elif kind == "async":
                out.add(locs[1])
    return sorted(out)


def render(prog: Program, name: str, description: str = "", exists: Optional[str] = None,
           expect: Optional[str] = None, header: tuple = ()) -> str:
    """The program as a litmus test (docs/litmus-format.md). Without `exists`, a condition
    naming every written location (true in every state), so the final values of the written
    locations are part of the outcomes listed."""
    lines = [f"# {h}" for h in header]
    lines.append(f"name: {json.dumps(name)}")
    if description:
        lines.append(f"description: {json.dumps(description)}")
    if prog.target:
        lines.append(f"target: {prog.target}")
    flags = {f for th in prog.threads for ins in th for f in ins[3]}
    if flags & set(MD_FLAGS):
        lines.append("metadata: |")
        lines.append(f"  !0 = {MMRA_AVNONE}")
        lines.append(f"  !1 = {TAG_TEXT['mmra']}")
        lines.append("  !2 = !{!0, !1}")
        if flags & {"mmra-global", "user"}:
            lines.append(f"  !3 = {TAG_TEXT['mmra-global']}")
            lines.append(f"  !4 = {TAG_TEXT['user']}")
        for tags, node in _md_nodes(prog).items():
            if node != "!2":
                lines.append(f"  {node} = !{{{', '.join(TAG_NODE[x] for x in tags)}}}")
    if prog.call:
        lines.append("functions: |")
        lines.append(f"  define void @{CALLEE}() {{")
        lines += ["    " + ln for ln in callee_lines(prog)]
        lines.append("  }")
    lines.append("memory:")
    for k, sp in enumerate(prog.spaces):
        if sp == "barrier":
            lines.append("  nb: {space: barrier}")
        else:
            lines.append(f"  {loc_name(k)}: {{space: {base_space(sp)}, init: "
                         f"{'undef' if sp == 'undef' else 0}}}")
    if not prog.spaces:
        lines.append("  x: {space: global, init: 0}")
    lines.append("threads:")
    clusters = any(p[1] for p in prog.placement)
    for t, code in enumerate(render_code(prog)):
        a, c, w, v = prog.placement[t]
        lines.append(f"  T{t}:")
        lines.append(f"    agent: {a}")
        if clusters:
            lines.append(f"    cluster: {c}")
        lines.append(f"    workgroup: {w}")
        lines.append(f"    wavefront: {v}")
        lines.append("    code: |")
        lines += ["      " + c for c in code]
    if exists is None:
        wl = [k for k in written_locations(prog) if prog.spaces[k] != "barrier"]
        if wl:
            exists = " && ".join(f"@{loc_name(k)} == @{loc_name(k)}" for k in wl)
    if exists is not None:
        lines.append(f"exists: {json.dumps(exists)}")
    if expect:
        lines.append(f"expect: {expect}")
    return "\n".join(lines) + "\n"


def size_of(prog: Program) -> tuple:
    return (prog.events, len(prog.threads), len(prog.spaces))


@dataclass
class Bound:
    threads: int = 2
    events: int = 4
    locations: int = 2
    vocab: Vocab = field(default_factory=Vocab)
