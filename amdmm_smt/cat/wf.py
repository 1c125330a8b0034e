"""Recursion through a well-founded relation (docs/semantics.md §18 "Guarded recursion"): which
`let rec` groups of a model have a unique solution in every execution the model's axioms
allow, so that the SMT engine may define each pair of a cyclic component by one equation
instead of iterating it to the least fixpoint (encode/cat_z3.py Z3Algebra._fixpoint).

A group is *guarded* when every relation it defines is a relation and every reference to the
group in its bodies has the form `N ; G` (N a name of the group, possibly filtered, `N ; [S]`,
`[S] ; N`, `N & e`), with G contained in a well-founded relation A (`A`, `G & e`, `e & G`,
`[S] ; G`, `G ; [S]`), under unions, intersections, level unions, differences on the left and
set filters only. Then the term of a pair (i, j) names a pair (i, k) of the group only
together with A(k, j): in an execution where A has no cycle, the equations decide the pairs
in the order of A on their second event, one solution, which is the least fixpoint.

A relation A is *well-founded in every execution the model allows* when an axiom says
`acyclic A`, or says `irreflexive A` and A is transitive by these rules: `r+`;
`cross(S, S)`; `a & b` of two transitive relations; `a | cross(S1, S2)` where a is a transitive
relation intersected with `cross(S2, S2)` and S1, S2 are base sets that elaboration makes
disjoint (I and T: the initial writes and the threads' events). Nothing else is assumed.
"""

from __future__ import annotations

from .syntax import Bin, Cross, LevelUnion, Name, Un

# base sets that are disjoint in every test (cat/base.py: I is the initial writes, T the rest)
DISJOINT = {frozenset(("I", "T"))}


def _body(m, e):
    """A definition's body for a plain name (not indexed, not recursive), else None."""
    if type(e) is Name and e.index is None:
        d = m.defs.get(e.name)
        if d is not None and not d.rec and d.b.param is None:
            return d.b.expr
    return None


def _same(a, b) -> bool:
    return type(a) is Name and type(b) is Name and a.name == b.name and a.index == b.index \
        and a.index is None


def transitive(m, e, depth: int = 0) -> bool:
    if depth > 50:
        return False
    b = _body(m, e)
    if b is not None:
        return transitive(m, b, depth + 1)
    t = type(e)
    if t is Un and e.op == "+":
        return True
    if t is Cross:
        return _same(e.left, e.right)
    if t is Bin and e.op == "&":
        return transitive(m, e.left, depth + 1) and transitive(m, e.right, depth + 1)
    if t is Bin and e.op == "|":
        for a, c in ((e.left, e.right), (e.right, e.left)):
            if type(c) is Cross and type(a) is Bin and a.op == "&":
                for u, s in ((a.left, a.right), (a.right, a.left)):
                    if (type(s) is Cross and _same(s.left, s.right) and _same(s.left, c.right)
                            and type(c.left) is Name
                            and frozenset((c.left.name, c.right.name)) in DISJOINT
                            and transitive(m, u, depth + 1)):
                        return True
    return False


def well_founded(m) -> frozenset:
    """The names of relations acyclic in every execution the model's axioms allow."""
    out = set()
    for ax in m.axioms:
        if ax.flag or type(ax.expr) is not Name or ax.expr.index is not None:
            continue
        if ax.kind == "acyclic" or (ax.kind == "irreflexive" and transitive(m, ax.expr)):
            out.add(ax.expr.name)
    return frozenset(out)


def _mentions(e, names) -> bool:
    t = type(e)
    if t is Name:
        return e.name in names
    if t is Bin or t is Cross:
        return _mentions(e.left, names) or _mentions(e.right, names)
    if t is Un:
        return _mentions(e.arg, names)
    if t is LevelUnion:
        return _mentions(e.body, names)
    return False


def _filter(e, names) -> bool:
    """`[S]`, S free of the group."""
    return type(e) is Un and e.op == "ident" and not _mentions(e.arg, names)


def _within(e, wf, names) -> bool:
    """e is contained in a well-founded relation and free of the group."""
    if _mentions(e, names):
        return False
    t = type(e)
    if t is Name:
        return e.index is None and e.name in wf
    if t is Bin and e.op == "&":
        return _within(e.left, wf, names) or _within(e.right, wf, names)
    if t is Bin and e.op == ";":
        return (_filter(e.left, names) and _within(e.right, wf, names)) or \
            (_filter(e.right, names) and _within(e.left, wf, names))
    return False


def _head(e, names) -> bool:
    """A name of the group, possibly filtered: its pairs (i, k) are the group's."""
    t = type(e)
    if t is Name:
        return e.name in names
    if t is Bin and e.op == ";":
        return (_head(e.left, names) and _filter(e.right, names)) or \
            (_filter(e.left, names) and _head(e.right, names))
    if t is Bin and e.op == "&":
        return (_head(e.left, names) and not _mentions(e.right, names)) or \
            (_head(e.right, names) and not _mentions(e.left, names))
    return False


def _guarded(e, wf, names) -> bool:
    """Every reference to the group in e is guarded (module docstring)."""
    if not _mentions(e, names):
        return True
    t = type(e)
    if t is Bin:
        if e.op in ("|", "&"):
            return _guarded(e.left, wf, names) and _guarded(e.right, wf, names)
        if e.op == "\\":
            return _guarded(e.left, wf, names) and not _mentions(e.right, names)
        if _filter(e.right, names):
            return _guarded(e.left, wf, names)
        if _filter(e.left, names):
            return _guarded(e.right, wf, names)
        return _head(e.left, names) and _within(e.right, wf, names)
    if t is LevelUnion:
        return _guarded(e.body, wf, names)
    return False


def guarded_groups(m) -> frozenset:
    """The ids of the model's let rec groups whose recursion is guarded (cached per model)."""
    got = getattr(m, "_guarded_groups", None)
    if got is not None:
        return got
    wf = well_founded(m)
    out = set()
    for gid, names in m.groups.items():
        ds = [m.defs.get(n) for n in names]
        if not wf or any(d is None or d.group != gid or not d.rec or d.sort != "rel"
                         for d in ds):
            continue
        if all(_guarded(d.b.expr, wf, set(names)) for d in ds):
            out.add(gid)
    got = m._guarded_groups = frozenset(out)
    return got
