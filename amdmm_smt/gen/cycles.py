"""Litmus tests from relaxation cycles, in the spirit of diy7 (docs/gen.md).

A cycle is a list of edges (PodWW Rfe PodRR Fre). It fixes the threads (a new thread after
every external edge), the locations (a new one at every `d` edge), the accesses and the final
state that witnesses the cycle; `instantiate` then gives the accesses orders and scopes, the
threads a placement and the locations an address space, and writes the YAML test.
Everything here is pure and deterministic; the only import is the error type."""

from __future__ import annotations

import itertools
import json
import re
import textwrap

from dataclasses import dataclass, field
from typing import Optional


class GenError(ValueError):
    """A bad cycle or option: one line, exit 2."""


SHAPES = {               # the classic names (diy7's own cycles for them)
    "MP": "PodWW Rfe PodRR Fre",
    "SB": "PodWR Fre PodWR Fre",
    "LB": "PodRW Rfe PodRW Rfe",
    "IRIW": "Rfe PodRR Fre Rfe PodRR Fre",
    "WRC": "Rfe PodRW Rfe PodRR Fre",
    "ISA2": "PodWW Rfe PodRW Rfe PodRR Fre",
    "2+2W": "PodWW Coe PodWW Coe",
    "R": "PodWW Coe PodWR Fre",
    "S": "PodWW Rfe PodRW Coe",
    "CoRR": "Rfe PosRR Fre",
}

FLAVOURS = ("plain", "mono", "rel-acq", "sc")
SCOPES = ("wavefront", "workgroup", "cluster", "agent", "system")
SCOPE_ALIASES = {"wave": "wavefront", "wg": "workgroup", "sys": "system"}
SCOPE_TAG = {"wavefront": "wavefront", "workgroup": "wg", "cluster": "cluster",
             "agent": "agent", "system": "sys"}
ALL_SCOPES = ("wavefront", "workgroup", "agent", "system")   # `--scopes all` (cluster on request)
PLACEMENTS = ("same-wave", "same-wg", "diff-wg", "diff-cluster", "diff-agent")
SPACES = ("global", "local")
FENCE_ORDERS = {"Rel": "release", "Acq": "acquire", "AcqRel": "acq_rel", "Sc": "seq_cst"}
DEFAULT_FENCE = {("W", "W"): "release", ("R", "R"): "acquire", ("R", "W"): "acq_rel",
                 ("W", "R"): "seq_cst"}
MAX_TESTS = 20000
EDGE_HELP = ("Po{s,d}{R,W}{R,W}, Fence[Rel|Acq|AcqRel|Sc]{s,d}{R,W}{R,W}, Rfe, Rfi, Fre, Fri, "
             "Coe, Coi (Wse, Wsi)")


@dataclass(frozen=True)
class Edge:
    text: str
    kind: str            # po | fence | rf | fr | co
    external: bool
    same_loc: bool
    src: str             # R | W
    dst: str
    fence: Optional[str] = None    # the fence's order, for kind fence


_PO = re.compile(r"(Po|Fence(Rel|Acq|AcqRel|Sc)?)([sd])([RW])([RW])$")
_COM = {"Rfe": ("rf", True, "W", "R"), "Rfi": ("rf", False, "W", "R"),
        "Fre": ("fr", True, "R", "W"), "Fri": ("fr", False, "R", "W"),
        "Coe": ("co", True, "W", "W"), "Coi": ("co", False, "W", "W"),
        "Wse": ("co", True, "W", "W"), "Wsi": ("co", False, "W", "W")}


def parse_edge(tok: str) -> Edge:
    if tok in _COM:
        kind, ext, s, d = _COM[tok]
        return Edge(tok, kind, ext, True, s, d)
    m = _PO.match(tok)
    if not m:
        shown = tok if len(tok) <= 40 else tok[:40] + "..."
        raise GenError(f"unknown edge '{shown}' (edges: {EDGE_HELP})")
    head, ford, sd, s, d = m.groups()
    if head == "Po":
        return Edge(tok, "po", False, sd == "s", s, d)
    order = FENCE_ORDERS[ford] if ford else DEFAULT_FENCE[(s, d)]
    return Edge(tok, "fence", False, sd == "s", s, d, order)


@dataclass
class Event:
    pos: int             # place in the rotated cycle
    kind: str            # R | W
    loc: str = ""
    thread: int = 0
    fence_after: Optional[str] = None   # order of a fence between this event and the next
    value: int = 0       # a write's value (its place in the coherence order, from 1)
    reg: str = ""        # a read's register
    rf_from: Optional[int] = None       # pos of the write a read reads from
    fr_to: Optional[int] = None         # pos of the write a read is from-read before
    rf_end: bool = False                # an end of an rf edge (a "flag" access)


@dataclass
class Skeleton:
    edges: list[Edge]
    threads: list[list[Event]]
    locations: list[str]
    writes: dict[str, list[Event]] = field(default_factory=dict)   # per location, co order

    @property
    def cycle(self) -> str:
        return " ".join(e.text for e in self.edges)


def parse_cycle(text: str) -> list[Edge]:
    toks = text.replace(",", " ").split()
    if not toks:
        raise GenError("empty cycle")
    if len(toks) > 64:
        raise GenError(f"{len(toks)} edges; at most 64")
    return [parse_edge(t) for t in toks]


def build(edges: list[Edge]) -> Skeleton:
    """The threads, locations, values and final state of a cycle (diy7's construction)."""
    n = len(edges)
    for i, e in enumerate(edges):
        nxt = edges[(i + 1) % n]
        if e.dst != nxt.src:
            raise GenError(f"not a cycle: {e.text} ends in a {_rw(e.dst)} but {nxt.text} "
                           f"starts from a {_rw(nxt.src)}")
    ext = [i for i, e in enumerate(edges) if e.external]
    if len(ext) < 2:
        raise GenError(f"a cycle with a single thread ({len(ext)} external edge"
                       f"{'s' if len(ext) != 1 else ''}; a test needs at least two: Rfe, Fre, "
                       "Coe)")
    diffs = [i for i, e in enumerate(edges) if not e.same_loc]
    if len(diffs) == 1:
        raise GenError(f"one location change ({edges[diffs[0]].text}) cannot close the "
                       "cycle: a cycle changes location never or at least twice")
    # rotate: the first event starts a thread (the edge before it is external)
    start = next(i for i in range(n) if edges[i - 1].external)
    edges = edges[start:] + edges[:start]
    events = [Event(i, e.src) for i, e in enumerate(edges)]
    # threads
    t = 0
    for i, e in enumerate(edges):
        events[i].thread = t
        if e.external:
            t += 1
    # locations: a new one at every d edge; the segment after the last d edge is the first's
    names = _loc_names(max(1, len(diffs)))
    seg = 0
    segs = []
    for i, e in enumerate(edges):
        segs.append(seg)
        if not e.same_loc:
            seg += 1
    if diffs and edges[-1].same_loc:
        segs = [0 if s == seg else s for s in segs]    # wrap the tail into the first segment
    for ev, s in zip(events, segs):
        ev.loc = names[s]
    # edges' facts
    co_pairs: set[tuple[int, int]] = set()
    for i, e in enumerate(edges):
        a, b = events[i], events[(i + 1) % n]
        if e.kind == "fence":
            a.fence_after = e.fence
        if e.kind == "rf":
            b.rf_from = a.pos
            a.rf_end = b.rf_end = True
        elif e.kind == "fr":
            a.fr_to = b.pos
        elif e.kind == "co" or (e.same_loc and e.kind in ("po", "fence") and e.src == e.dst == "W"):
            co_pairs.add((a.pos, b.pos))
    for ev in events:
        if ev.kind == "R" and ev.rf_from is not None and ev.fr_to is not None:
            co_pairs.add((ev.rf_from, ev.fr_to))
    # coherence order per location: a topological order of the cycle's constraints
    writes: dict[str, list[Event]] = {}
    for loc in names:
        ws = [ev for ev in events if ev.kind == "W" and ev.loc == loc]
        order = []
        left = list(ws)
        while left:
            ready = [w for w in left if not any((v.pos, w.pos) in co_pairs for v in left)]
            if not ready:
                raise GenError(f"the cycle's coherence constraints on {loc} form a loop: no "
                               "value assignment witnesses it")
            order.append(ready[0])
            left.remove(ready[0])
        for k, w in enumerate(order):
            w.value = k + 1
        writes[loc] = order
    threads = [[ev for ev in events if ev.thread == k] for k in range(t)]
    r = 0
    for th in threads:
        for ev in th:
            if ev.kind == "R":
                ev.reg = f"%r{r}"
                r += 1
    return Skeleton(edges, threads, names, writes)


def _rw(k: str) -> str:
    return "read" if k == "R" else "write"


def _loc_names(k: int) -> list[str]:
    base = ["x", "y", "z", "a", "b", "c", "d", "e", "f", "g", "h"]
    return base[:k] if k <= len(base) else [f"l{i}" for i in range(k)]


def shape_of(cycle: str) -> Optional[str]:
    """The classic shape a cycle is, in any rotation (diy7 names cycles up to rotation)."""
    toks = cycle.replace(",", " ").split()
    for name, c in SHAPES.items():
        ref = c.split()
        if len(ref) == len(toks) and any(ref[i:] + ref[:i] == toks for i in range(len(ref))):
            return name
    return None


# ---- instantiation --------------------------------------------------------------------------

def order_of(ev: Event, flavour: str, plain_data: bool) -> Optional[str]:
    if flavour == "plain" or (plain_data and not ev.rf_end):
        return None
    if flavour == "mono":
        return "monotonic"
    if flavour == "sc":
        return "seq_cst"
    return "release" if ev.kind == "W" else "acquire"


def condition(sk: Skeleton, orders: dict[int, Optional[str]]) -> str:
    """The cycle's outcome: each read's value, and the final value of every location the cycle
    writes twice or more (the last write in the coherence order the cycle needs)."""
    by_pos = {ev.pos: ev for th in sk.threads for ev in th}
    terms = []
    for k, th in enumerate(sk.threads):
        for ev in th:
            if ev.kind != "R":
                continue
            who = f"T{k}:{ev.reg}"
            if ev.rf_from is not None:
                terms.append(f"{who} == {by_pos[ev.rf_from].value}")
            elif ev.fr_to is not None:
                w = by_pos[ev.fr_to]
                if w.value == 1 and orders[ev.pos] is None:
                    # a plain read that misses every write may also return undef (S000's
                    # value rule, a race): "sees none of the writes", as the corpus writes it
                    for v in sk.writes[ev.loc]:
                        terms.append(f"{who} != {v.value}")
                else:
                    terms.append(f"{who} == {w.value - 1}")
    for loc in sk.locations:
        if len(sk.writes[loc]) >= 2:
            terms.append(f"@{loc} == {sk.writes[loc][-1].value}")
    return " && ".join(terms)


def _placement(p: str, k: int) -> dict[str, int]:
    return {"same-wave": {"workgroup": 0, "wavefront": 0},
            "same-wg": {"workgroup": 0, "wavefront": k},
            "diff-wg": {"workgroup": k},
            "diff-cluster": {"cluster": k},
            "diff-agent": {"agent": k}}[p]


@dataclass(frozen=True)
class Variant:
    flavour: str
    scopes: tuple            # per thread: a scope, or None for a thread with no atomic / fence
    placement: str
    space: str


def variants(sk: Skeleton, flavours, scopes, placements, spaces, plain_data: bool):
    """Every (flavour, scope assignment, placement, space) the options ask for; local memory
    only where every thread is in one workgroup."""
    out = []
    for fl in flavours:
        sync = [any(order_of(ev, fl, plain_data) or ev.fence_after for ev in th)
                for th in sk.threads]
        k = sum(sync)
        for combo in itertools.product(scopes, repeat=k):
            it = iter(combo)
            per = tuple(next(it) if s else None for s in sync)
            for p in placements:
                for sp in spaces:
                    if sp == "local" and p not in ("same-wave", "same-wg"):
                        continue
                    out.append(Variant(fl, per, p, sp))
    return out


def test_name(base: str, v: Variant, plain_data: bool, target: Optional[str]) -> str:
    parts = [f"{base}+{v.flavour}"]
    if plain_data:
        parts.append("plain-data")
    used = [s for s in v.scopes if s]
    if used:
        parts.append(SCOPE_TAG[used[0]] if len(set(used)) == 1
                     else "-".join(SCOPE_TAG[s] for s in used))
    if target:
        parts.append(target)
    parts.append(v.placement)
    if v.space == "local":
        parts.append("lds")
    return ".".join(parts)


def _q(s: str) -> str:
    return json.dumps(s)


def render(sk: Skeleton, base: str, v: Variant, plain_data: bool,
           target: Optional[str]) -> tuple[str, str]:
    """(name, YAML text) of one test."""
    name = test_name(base, v, plain_data, target)
    a = 3 if v.space == "local" else 1
    orders = {ev.pos: order_of(ev, v.flavour, plain_data) for th in sk.threads for ev in th}
    lines = ["# Generated by amdmm-smt gen (docs/gen.md): no expectation; verify it and decide.",
             f"name: {_q(name)}"]
    scope_words = ", ".join(f"T{k} {s}" for k, s in enumerate(v.scopes) if s) or "none"
    desc = (f"Generated by amdmm-smt gen from the cycle {sk.cycle}"
            f"{f' ({base})' if base in SHAPES else ''}: orders {v.flavour}"
            f"{' (plain data: only the ends of rf edges are atomic)' if plain_data else ''}, "
            f"scopes {scope_words}, placement {v.placement}, {v.space} memory. The exists "
            "condition is the cycle's outcome; the generator makes no claim about it.")
    lines.append("description: >")
    lines += ["  " + ln for ln in textwrap.wrap(desc, 94)]
    if target:
        lines.append(f"target: {target}")
    lines.append("memory:")
    for loc in sk.locations:
        lines.append(f"  {loc}: {{space: {v.space}, init: 0}}")
    lines.append("threads:")
    for k, th in enumerate(sk.threads):
        lines.append(f"  T{k}:")
        for key, val in _placement(v.placement, k).items():
            lines.append(f"    {key}: {val}")
        lines.append("    code: |")
        scope = v.scopes[k]
        ss = "" if scope in (None, "system") else f' syncscope("{scope}")'
        for ev in th:
            o = orders[ev.pos]
            ptr = f"ptr addrspace({a}) @{ev.loc}"
            if ev.kind == "W":
                ins = (f"store i32 {ev.value}, {ptr}, align 4" if o is None
                       else f"store atomic i32 {ev.value}, {ptr}{ss} {o}, align 4")
            else:
                ins = (f"{ev.reg} = load i32, {ptr}, align 4" if o is None
                       else f"{ev.reg} = load atomic i32, {ptr}{ss} {o}, align 4")
            lines.append("      " + ins)
            if ev.fence_after:
                lines.append(f"      fence{ss} {ev.fence_after}")
    lines.append(f"exists: {_q(condition(sk, orders))}")
    return name, "\n".join(lines) + "\n"


def _choices(text: str, allowed, what: str, all_values, aliases=None) -> list[str]:
    out = []
    for w in text.replace(",", " ").split():
        w = (aliases or {}).get(w, w)
        if w == "all":
            out += list(all_values)
        elif w in allowed:
            out.append(w)
        else:
            raise GenError(f"unknown {what} '{w[:40]}' (one of: {', '.join(allowed)}, all)")
    if not out:
        raise GenError(f"no {what} given")
    return list(dict.fromkeys(out))


def generate(cycles: list[str], shapes: list[str], orders: str = "rel-acq",
             scopes: str = "agent", placements: str = "diff-wg", spaces: str = "global",
             plain_data: bool = False, target: Optional[str] = None) -> list[tuple[str, str]]:
    """Every test the options ask for, as (name, YAML text), sorted by name, names unique."""
    fl = _choices(orders, FLAVOURS, "order", FLAVOURS)
    sc = _choices(scopes, SCOPES, "scope", ALL_SCOPES, SCOPE_ALIASES)
    pl = _choices(placements, PLACEMENTS, "placement", PLACEMENTS)
    sp = _choices(spaces, SPACES, "space", SPACES)
    if target is not None and not re.fullmatch(r"gfx[0-9]{3,4}[a-z]?", target):
        raise GenError(f"--target '{target[:40]}' is not a GPU name like gfx942 or gfx1250")
    jobs: list[tuple[str, str]] = []
    for s in shapes:
        names = {k.lower(): k for k in SHAPES}
        if s.lower() == "all":
            jobs += [(k, SHAPES[k]) for k in SHAPES]
        elif s.lower() in names:
            jobs.append((names[s.lower()], SHAPES[names[s.lower()]]))
        else:
            raise GenError(f"unknown shape '{s[:40]}' (one of: {', '.join(SHAPES)}, all)")
    for c in cycles:
        edges = parse_cycle(c)
        canon = " ".join(e.text for e in edges)
        shape = shape_of(canon)        # a classic shape in any rotation: its own spelling
        jobs.append((shape, SHAPES[shape]) if shape else ("+".join(e.text for e in edges), canon))
    if not jobs:
        raise GenError("nothing to generate: give --cycle or --shape")
    out: dict[str, str] = {}
    for base, c in jobs:
        sk = build(parse_cycle(c))
        vs = variants(sk, fl, sc, pl, sp, plain_data)
        if len(out) + len(vs) > MAX_TESTS:
            raise GenError(f"more than {MAX_TESTS} tests; narrow --scopes, --placement or "
                           "--orders")
        for v in vs:
            name, text = render(sk, base, v, plain_data, target)
            out.setdefault(name, text)
    if not out:
        raise GenError("no test: local memory is shared only within a workgroup (use "
                       "--placement same-wave or same-wg with --space local)")
    return sorted(out.items())
