"""LLVM / HSA synchronization: release sequences, synchronizes-with, happens-before, and the
seq_cst order. Sources: UP§4 (LangRef memory model, atomic orderings, fence) and S002 sync
scopes (synchronizes-with only between operations with inclusive scopes)."""

from __future__ import annotations


from . import families as F
from ..elaborate.events import Event, may_acquire, may_release, strong_atomic
from ..ir import is_acquire, is_release
from . import async_ops
from .execution import Execution
from .logic import AND, B, IFF, IMPLIES, NOT, OR


def release_active(x: Execution, a: Event) -> B:
    """a acts as a release in this execution (a failed cmpxchg has its failure ordering)."""
    if a.kind == "cmpxchg":
        return AND(x.writes(a), is_release(a.order))
    return may_release(a)


def acquire_active(x: Execution, b: Event) -> B:
    if b.kind == "cmpxchg":
        succ = x.writes(b)
        return OR(AND(succ, is_acquire(b.order)), AND(NOT(succ), is_acquire(b.fail_order)))
    return may_acquire(b)


def release_sequence(x: Execution, head: Event, w: Event) -> B:
    """UP§4 release: "this occurs even if the value written by a release operation has been
    modified by a read-modify-write operation before being read" (docs R-relseq: the head and
    the run of RMWs immediately after it in modification order)."""
    if head.id == w.id:
        return x.writes(head)
    if w.loc != head.loc or not x.is_rmw(w):
        return False
    between = [AND(x.writes(o), x.co(head, o), x.co(o, w))
               for o in x.elab.writes_to(w.loc)
               if o.id not in (head.id, w.id) and not x.is_rmw(o)]
    return AND(x.writes(head), x.writes(w), x.co(head, w), NOT(OR(between)))


def _release_writes(x: Execution, a: Event) -> list[Event]:
    """The writes through which a release operation publishes: itself, or for a release fence
    the monotonic-or-stronger atomic writes after it in program order (LangRef fence)."""
    if a.is_fence:
        return [w for w in x.ev if w.writes and strong_atomic(w) and x.elab.po(a, w)]
    return [a]


def _acquire_reads(x: Execution, b: Event) -> list[Event]:
    if b.is_fence:
        return [r for r in x.ev if r.reads and strong_atomic(r) and x.elab.po(r, b)]
    return [b]


def synchronizes_with(x: Execution) -> dict[str, dict[tuple[int, int], B]]:
    """sw(A, B) per address space AS: release A, acquire B with inclusive scopes (S002
    sync-scope table), B (or an atomic read before acquire fence B) reads from the release
    sequence of A (or of an atomic write after release fence A), and both A and B synchronize
    AS (S002: -one-as operations only their own address space; fences the spaces their
    amdgpu-synchronize-as tags name, all without tags)."""
    el = x.elab
    per_space: dict[str, dict[tuple[int, int], B]] = {sp: {} for sp in el.spaces}
    for a in x.ev:
        if a.is_init or not may_release(a):
            continue
        for b in x.ev:
            if b.is_init or b.thread == a.thread or not may_acquire(b):
                continue
            spaces = [sp for sp in el.spaces if sp in el.sync_spaces(a)
                      and sp in el.sync_spaces(b) and el.inclusive(a, b, sp)]
            # explain: the spaces where scope inclusion or address-space synchronization
            # rules the pair out get an sw fixed false by that rule (encode/logic.py Ctx)
            barred = {} if not x.ctx.explaining else {
                sp: (F.ADDR_SPACE if el.inclusive(a, b, sp) else F.SCOPE)
                for sp in el.spaces if sp not in spaces}
            if not spaces and not barred:
                continue
            reads_from = []
            for w0 in _release_writes(x, a):
                for r in _acquire_reads(x, b):
                    if r.loc != w0.loc:
                        continue
                    for w in el.writes_to(w0.loc):
                        if w.id != r.id:
                            reads_from.append(AND(release_sequence(x, w0, w), x.rf(w, r)))
            e = AND(release_active(x, a), acquire_active(x, b), OR(reads_from))
            if e is False:
                continue
            v = x.ctx.define(f"sw_{a.label}_{b.label}", e)
            for sp in spaces:
                per_space[sp][(a.id, b.id)] = v
            for sp, fam in barred.items():
                per_space[sp][(a.id, b.id)] = AND(v, x.ctx.excluded(
                    f"sw_{a.label}_{b.label}_{sp}", fam))
    return per_space


def happens_before(x: Execution) -> None:
    """UP§4: "the least partial order that is a superset of single-thread program order and
    ... includes an edge from a to b" when a synchronizes-with b. Transitive independent of
    scope (S002, HRF-indirect). MMRA (S001): program order between instructions with
    incompatible tags is not in happens-before. One relation per address space (docs: a chain
    of synchronizations orders the effects on AS when every link synchronizes AS).
    Encoded as definitional variables hb = E ∪ hb;E with hb irreflexive, whose unique
    solution is the transitive closure E+."""
    el = x.elab
    evs = [e for e in x.ev if not e.is_init]
    with x.ctx.family(F.SYNC):
        sw = synchronizes_with(x)
    if x.bar_pair:      # docs/semantics.md 10.5: barrier-arrive-release sw barrier-wait-acquire
        from .barrier import barrier_sw
        with x.ctx.family(F.BARRIER):
            for sp, edges in barrier_sw(x).items():
                for k, v in edges.items():
                    sw[sp][k] = OR(sw[sp].get(k, False), v)
    x.sw_by_space = sw
    po_edges: dict[tuple[int, int], B] = {}
    for a in evs:
        for b in evs:
            if el.po_in_hb(a, b):
                po_edges[(a.id, b.id)] = True
            elif x.ctx.explaining and el.po(a, b):   # dropped by MMRA: named when explaining
                po_edges[(a.id, b.id)] = x.ctx.excluded(f"po_{a.label}_{b.label}", F.MMRA)
    edges = async_ops.hb_edges(x)                # S004 / UP 2.4: docs §11.5
    if x.ctx.explaining:   # explain: completion edges named "async completion" (fixed true)
        edges = {k: AND(x.ctx.included(f"async_{k[0]}_{k[1]}", F.ASYNC), v)
                 for k, v in edges.items() if po_edges.get(k) is not True}
    po_edges.update(edges)
    built: dict[tuple, dict] = {}
    for sp in el.spaces:
        key = tuple(sorted(sw[sp].items(), key=lambda kv: kv[0]))
        key = tuple((k, id(v)) for k, v in key)
        if key not in built:
            edge = dict(po_edges)
            for k, v in sw[sp].items():
                edge[k] = OR(edge.get(k, False), v)
            built[key] = _closure(x, evs, edge, sp)
            if x.bar_xb:       # docs 10.7 R-bar-hb-exec: (hb ∪ xb)+ without cycles
                with x.ctx.family(F.BARRIER):
                    built[key] = (built[key], executes_order(x, evs, edge, sp))
            else:
                built[key] = (built[key], None)
        x.hb_by_space[sp] = built[key][0]
        if built[key][1] is not None:
            x.hbx_by_space[sp] = built[key][1]


def executes_order(x, evs, edge: dict, sp: str) -> dict:
    """R-bar-hb-exec (UP 2.3: "Happens-before is consistent with barrier-executes-before";
    S002: "the execution of X completes before the execution of Y does"): hbx_AS = (po ∪
    sw_AS ∪ bsw_AS ∪ xb)+, irreflexive (one order without cycles); values.may_see keeps a
    read from seeing a write it is hbx-before. Only availability and visibility are left
    out: barriers make nothing visible."""
    e2 = dict(edge)
    for k, v in x.bar_xb.items():
        e2[k] = OR(e2.get(k, False), v)
    return _closure(x, evs, e2, "x" + sp)


def _closure(x: Execution, evs: list[Event], edge: dict, tag: str) -> dict:
    el = x.elab
    # docs §14: a constant edge implied by two constant edges (program order a-k-b, every
    # step in happens-before) changes no closure; without it each pair's definition below
    # names the immediate predecessors only, not every earlier event of the thread
    edge = _reduce_constant(edge)
    succ: dict[int, set] = {e.id: set() for e in evs}
    pred: dict[int, list] = {e.id: [] for e in evs}
    for (a, b) in edge:
        succ[a].add(b)
        pred[b].append(a)
    static = {a: {b for b in succ[a] if edge[(a, b)] is True} for a in succ}
    hb: dict[tuple[int, int], B] = {}
    # docs §14 "Happens-before rows through the one successor": an event whose only edge
    # out is a constant one to a' reaches exactly a' and what a' reaches, so its row is a'
    # row (the same terms) plus hb(a, a') true; built latest first, without variables
    alias: dict[int, int] = {}
    for e in evs:
        out = succ[e.id]
        if len(out) == 1 and not x.ctx.explaining:
            (a2,) = out
            if edge[(e.id, a2)] is True and a2 != e.id:
                alias[e.id] = a2
    # ... and, column-wise, an event b whose only edge in is a constant one, from p: every
    # path into b ends with that edge, so hb(a, b) is hb(a, p), or true when a is p
    calias: dict[int, int] = {}
    if not x.ctx.explaining:
        for e in evs:
            into = pred[e.id]
            if len(into) == 1 and edge[(into[0], e.id)] is True and into[0] != e.id:
                calias[e.id] = into[0]
    label = {e.id: e.label for e in evs}
    defined: set = set()

    def column(a: int, b: int):
        c = b
        while c in calias:
            c = calias[c]
            if c == a:
                return True
        return hb[(a, c)]

    def row(a: int) -> None:
        if a in defined:
            return
        defined.add(a)
        a2 = alias.get(a)
        if a2 is not None:
            row(a2)
            for b in _reach(a2, succ):
                hb[(a, b)] = hb[(a2, b)]
            hb[(a, a2)] = True
            return
        sure = _reach(a, static)           # through constant edges only: hb is constant
        reach = _reach(a, succ)
        for b in reach:
            if b not in calias:
                hb[(a, b)] = (True if b in sure
                              else x.ctx.fresh_bool(f"hb_{tag}_{label[a]}_{b}"))
        for b in reach:
            if b in calias:
                hb[(a, b)] = True if b in sure else column(a, b)
    for e in evs:
        row(e.id)
    for (a, b), v in list(hb.items()):
        if v is True or a in alias or b in calias:
            continue
        # hb(a, b) = E(a, b) ∨ ⋁_k hb(a, k) ∧ E(k, b); the terms built here directly (the
        # most numerous definitions of the encoding: a pair per may-hb pair and predecessor)
        terms = [edge.get((a, b), False)]
        for k in pred[b]:
            h = hb.get((a, k), False)
            if h is False:
                continue
            e = edge[(k, b)]
            terms.append(e if h is True else h if e is True else AND(h, e))
        x.ctx.add(IFF(v, OR(terms)))
    for a in evs:
        if (a.id, a.id) in hb:   # hb must be irreflexive
            x.ctx.add(NOT(hb[(a.id, a.id)]))
    # UP§4: the initial write "happens before any other read or write"
    for i in x.ev:
        if i.is_init:
            for e in evs:
                hb[(i.id, e.id)] = True
    return hb


def _reduce_constant(edge: dict) -> dict:
    """edge without the constant-true edges (a, b) for which constant-true edges (a, k) and
    (k, b) exist: the transitive closure is the same."""
    out: dict[int, set] = {}
    for (a, b), v in edge.items():
        if v is True:
            out.setdefault(a, set()).add(b)
    indeg: dict[int, int] = {}
    for a, bs in out.items():
        for b in bs:
            indeg[b] = indeg.get(b, 0) + 1
    todo = [a for a in out if not indeg.get(a)]
    seen = 0
    while todo:                  # the argument needs no cycle of constant edges
        a = todo.pop()
        seen += 1
        for b in out.get(a, ()):
            indeg[b] -= 1
            if not indeg[b]:
                todo.append(b)
    if seen < len(set(out) | set(indeg)):
        return edge
    drop = set()
    for a, bs in out.items():
        for k in bs:
            for b in out.get(k, ()):
                if b in bs:
                    drop.add((a, b))
    if not drop:
        return edge
    return {k: v for k, v in edge.items() if k not in drop}


def _reach(a: int, succ: dict) -> set:
    seen, stack = set(), [a]
    while stack:
        n = stack.pop()
        for m in succ[n]:
            if m not in seen:
                seen.add(m)
                stack.append(m)
    return seen


def seq_cst(x: Execution) -> None:
    """UP§4 seq_cst: "a global total order on all sequentially-consistent operations"; docs
    R-sc: RC11's psc restricted to pairs with inclusive scopes (S002: they "participate in ...
    seq_cst total orderings" only then) must be acyclic, witnessed by integer ranks."""
    el = x.elab
    sc = [e for e in x.ev if not e.is_init and (e.order == "seq_cst" or
                                                 e.fail_order == "seq_cst")]
    if len(sc) < 2:
        return
    evs = [e for e in x.ev if not e.is_init]
    acc = [e for e in x.ev if e.loc is not None]

    def is_sc(e: Event) -> B:
        if e.kind == "cmpxchg":
            succ = x.writes(e)
            return OR(AND(succ, e.order == "seq_cst"), AND(NOT(succ), e.fail_order == "seq_cst"))
        return e.order == "seq_cst"

    def diffloc_po(a: Event, b: Event) -> bool:
        return el.po(a, b) and (a.loc is None or b.loc is None or a.loc != b.loc)

    def scb(a: Event, b: Event, sp: str) -> B:
        """RC11 scb = po ∪ po|≠loc;hb;po|≠loc ∪ hb|loc ∪ co ∪ fr."""
        if a.id == b.id:
            return False
        # po, not po within hb: MMRA removes incompatible po from hb, not from psc (docs §6)
        parts: list = [el.po(a, b)]
        if a.loc is not None and a.loc == b.loc:
            parts.append(x.hb(a, b, sp))
            if a.writes and b.writes:
                parts.append(AND(x.writes(a), x.writes(b), x.co(a, b)))
            if a.reads and b.writes:
                parts.append(x.fr(a, b))
        for c in evs:
            if not diffloc_po(a, c):
                continue
            for d in evs:
                if diffloc_po(d, b):
                    parts.append(x.hb(c, d, sp) if c.id != d.id else True)
        return OR(parts)

    def eco(a: Event, b: Event) -> B:
        """RC11 eco = (rf ∪ co ∪ fr)+ on one location = rf ∪ co ∪ fr ∪ co;rf ∪ fr;rf."""
        if a.loc is None or a.loc != b.loc or a.id == b.id:
            return False
        parts = []
        if b.reads:
            if a.writes:
                parts.append(x.rf(a, b))
            for w in el.writes_to(a.loc):
                if w.id in (a.id, b.id):
                    continue
                if a.writes:
                    parts.append(AND(x.co(a, w), x.writes(a), x.writes(w), x.rf(w, b)))
                if a.reads:
                    parts.append(AND(x.fr(a, w), x.rf(w, b)))
        if a.writes and b.writes:
            parts.append(AND(x.writes(a), x.writes(b), x.co(a, b)))
        if a.reads and b.writes:
            parts.append(x.fr(a, b))
        return OR(parts)

    rank = {e.id: x.ctx.fresh_int(f"sc_{e.label}") for e in sc}
    for sp in el.spaces:   # per space: its hb and its scope inclusion (LDS scopes) may differ
        _psc(x, sc, acc, rank, sp, is_sc, scb, eco)


def _psc(x: Execution, sc, acc, rank, sp: str, is_sc, scb, eco) -> None:
    """psc restricted to seq_cst pairs with inclusive scopes, for address space sp, must agree
    with the ranks."""
    el = x.elab
    for a in sc:
        for b in sc:
            if a.id == b.id or not el.inclusive(a, b, sp):
                continue
            # left: a itself (if an access) or, for a fence, anything hb-after it
            lefts = [(a, True)] if not a.is_fence else [(a, True)] + [
                (c, x.hb(a, c, sp)) for c in acc]
            rights = [(b, True)] if not b.is_fence else [(b, True)] + [
                (d, x.hb(d, b, sp)) for d in acc]
            parts = []
            for (c, cc) in lefts:
                for (d, dc) in rights:
                    if c.id == d.id:
                        continue
                    parts.append(AND(cc, dc, scb(c, d, sp)))
            if a.is_fence and b.is_fence:   # psc_F = [Fsc];(hb ∪ hb;eco;hb);[Fsc]
                parts.append(x.hb(a, b, sp))
                for c in acc:
                    for d in acc:
                        if c.id != d.id:
                            parts.append(AND(x.hb(a, c, sp), eco(c, d), x.hb(d, b, sp)))
            psc = OR(parts)
            if psc is False:
                continue
            x.ctx.add(IMPLIES(AND(is_sc(a), is_sc(b), psc), rank[a.id] < rank[b.id]))
