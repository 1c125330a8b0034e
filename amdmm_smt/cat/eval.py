"""One evaluator for model files, two algebras.

The evaluator walks the definitions of a checked model (cat/check.py) and asks an `Algebra`
for every operation; the algebra decides what a set or a relation is:
  * `MaskAlgebra` (here): one concrete candidate execution, a set is a bit mask over event
    ids, a relation a tuple of row masks; least fixpoints are iterated to stability. The
    reference engine uses it (reference/cat_engine.py).
  * the Z3 algebra (encode/cat_z3.py): a set maps event ids to folded Z3 Booleans, a relation
    maps pairs; a pair that is statically false is absent, one statically true is `True`, so
    what may matter is all that is encoded (docs/semantics.md §14 generalised).
Level-indexed definitions (`let f[L] = ...`) are evaluated per scope level; definitions that
depend on the address space at hand are evaluated per address space the test uses.
"""

from __future__ import annotations

from typing import Optional

from ..limits import tick
from .base import BASE, DYNAMIC, LEVELS, Base, Terms
from .check import CatModel
from .syntax import LEVEL_NAMES, Bin, Cross, LevelUnion, Name, Un


def _refs(e) -> list:
    if isinstance(e, Name):
        return [e]
    if isinstance(e, (Bin, Cross)):
        return _refs(e.left) + _refs(e.right)
    if isinstance(e, Un):
        return _refs(e.arg)
    if isinstance(e, LevelUnion):
        return _refs(e.body)
    return []


def _free(e) -> frozenset:
    """The level variables an expression's value may depend on: every index it names, and
    a level union's variable and bound (the union filters an outer binding of its
    variable). The evaluators key their caches by these only."""
    if isinstance(e, Name):
        return frozenset((e.index,)) if e.index is not None else frozenset()
    if isinstance(e, (Bin, Cross)):
        return _free(e.left) | _free(e.right)
    if isinstance(e, Un):
        return _free(e.arg)
    if isinstance(e, LevelUnion):
        return _free(e.body) | {e.var} | ({e.bound} if e.bound is not None else set())
    return frozenset()


def spdep(m: CatModel, e) -> bool:
    if isinstance(e, Name):
        if e.name in BASE:
            return BASE[e.name][2]
        return m.defs[e.name].space
    if isinstance(e, Bin):
        return spdep(m, e.left) or spdep(m, e.right)
    if isinstance(e, Un):
        return e.op != "spaces" and spdep(m, e.arg)
    if isinstance(e, Cross):
        return spdep(m, e.left) or spdep(m, e.right)
    if isinstance(e, LevelUnion):
        return spdep(m, e.body)
    return False


def _depends(m: CatModel, base) -> dict:
    """Definition name -> does its value depend on a base name for which `base(name)` holds,
    through definitions (a let rec group as one: each member when any member does)."""
    by_def: dict = {}

    def dep(name, busy=()):
        if name in BASE:
            return base(name)
        if name in by_def:
            return by_def[name]
        if name in busy:
            return False
        d = m.defs[name]
        v = any(dep(r.name, busy + (name,)) for r in _refs(d.b.expr))
        if d.rec:      # a group depends when any member does
            v = v or any(dep(r.name, busy + (name,)) for g in m.groups[d.group]
                         if g in m.defs for r in _refs(m.defs[g].b.expr))
        if not busy or v:
            by_def[name] = v
        return v
    for name in m.defs:
        dep(name)
    for g in {d.group for d in m.defs.values() if d.rec}:
        members = [n for n, d in m.defs.items() if d.rec and d.group == g]
        if any(by_def[n] for n in members):
            for n in members:
                by_def[n] = True
    return by_def


def _uses(by_def: dict, e) -> bool:
    """Does expression e name a base name or definition that `by_def` (from _depends, with
    the base names' answers) says depends?"""
    return any(by_def[r.name] for r in _refs(e))


def _analyse(m: CatModel) -> dict:
    """Per expression node: (depends on a dynamic base name, names a recursive definition
    directly, its free level variables, the space-dependent base names it reads at the space
    at hand: _space_names). Cached on the model."""
    info = getattr(m, "_node_info", None)
    if info is not None:
        return info
    dyn = _with_base(_depends(m, lambda n: n in DYNAMIC), lambda n: n in DYNAMIC)
    info = {}
    for k, e in _nodes(m).items():
        rs = _refs(e)
        info[k] = (any(dyn[r.name] for r in rs),
                   any(r.name in m.defs and m.defs[r.name].rec for r in rs),
                   tuple(sorted(_free(e))),
                   _reads_here(m, e))
    m._node_info = info
    return info


def _reads_here(m: CatModel, e) -> frozenset:
    """The space-dependent base names expression e reads at the space at hand (directly and
    through definitions: _space_names)."""
    sn = _space_names(m)
    return frozenset(n for x in _here_refs(e) for n in
                     ((x.name,) if x.name in BASE and BASE[x.name][2] else sn.get(x.name, ())))


def _with_base(by_def: dict, base) -> dict:
    """by_def with every base name's own answer."""
    return {**{n: base(n) for n in BASE}, **by_def}


def _co_dependent(m: CatModel) -> tuple:
    """(node id -> does its value depend on the coherence order, name (a definition or a
    base name) -> the same). Cached on the model: what an evaluator may keep across the candidates that differ
    in `co` alone (`held`)."""
    r = getattr(m, "_co_dep", None)
    if r is None:
        dep = _with_base(_depends(m, lambda n: n == "co"), lambda n: n == "co")
        r = m._co_dep = ({k: _uses(dep, e) for k, e in _nodes(m).items()}, dep)
    return r


def _children(e) -> tuple:
    return ((e.left, e.right) if isinstance(e, (Bin, Cross)) else
            (e.arg,) if isinstance(e, Un) else (e.body,) if isinstance(e, LevelUnion) else ())


def _nodes(m: CatModel) -> dict:
    """Every expression node of the model's definitions, axioms and value statement, by id."""
    out: dict = {}

    def walk(e):
        out[id(e)] = e
        for c in _children(e):
            walk(c)
    for d in m.defs.values():
        walk(d.b.expr)
    for ax in m.axioms:
        walk(ax.expr)
    if m.value is not None:
        walk(m.value.maysee)
        walk(m.value.definite)
    return out


FIXPOINTS_KEPT = 4096      # least fixpoints an algebra keeps by their inputs (then starts over)
REUSE = True               # MaskAlgebra keeps fixpoints and compositions (tests turn it off)
SEQS_KEPT = 8192           # compositions a MaskAlgebra keeps by their sides (then starts over)
FILTERS = True             # Evaluator._filter: [S] ; r and r ; [S] as filters (tests compare)
SPACE_CLASSES = True       # Evaluator._space: spaces that cannot differ (tests compare)


def _filterable(e) -> bool:
    """Is composition e `[S] ; r` or `r ; [S]` (Evaluator._filter)?"""
    return ((type(e.left) is Un and e.left.op == "ident")
            or (type(e.right) is Un and e.right.op == "ident"))


def _closed_group(m: CatModel, group) -> bool:
    """Does a let rec group's value depend on its outside names at the address space at hand
    only (no `spaces` node, which evaluates names at every space)? Cached."""
    c = m.__dict__.setdefault("_closed_groups", {})
    if group not in c:
        def spaces(e):
            return (isinstance(e, Un) and e.op == "spaces") or any(map(spaces, _children(e)))
        c[group] = not any(spaces(d.b.expr) for d in m.defs.values()
                           if d.rec and d.group == group)
    return c[group]


def _group_shape(m: CatModel, group) -> tuple:
    """A let rec group's members, and the names their bodies use outside it, each with
    whether it is level-indexed (in the order the bodies name them). Cached on the model."""
    c = m.__dict__.setdefault("_group_shapes", {})
    r = c.get(group)
    if r is None:
        names = [n for n in m.groups[group]
                 if m.defs.get(n) is not None and m.defs[n].group == group]
        inside = set(names)
        outside = []
        for n in names:
            for ref in _refs(m.defs[n].b.expr):
                if ref.name in inside:
                    continue
                outside.append((ref.name, BASE[ref.name][1] if ref.name in BASE
                                else m.defs[ref.name].b.param is not None))
        r = c[group] = (names, tuple(outside))
    return r


def _here_refs(e) -> list:
    """The names e reads at the space at hand: not those under `spaces(...)`, which reads
    them at every space."""
    if isinstance(e, Un) and e.op == "spaces":
        return []
    if isinstance(e, Name):
        return [e]
    out: list = []
    for c in _children(e):
        out += _here_refs(c)
    return out


def _space_names(m: CatModel) -> dict:
    """Definition name -> the space-dependent base names its value reads at the space at
    hand, through definitions (not through `spaces(...)`; a let rec group as one): what
    Evaluator._space compares. Cached on the model."""
    r = getattr(m, "_space_names_", None)
    if r is not None:
        return r
    direct = {n: {x.name for x in _here_refs(d.b.expr)} for n, d in m.defs.items()}
    out = {n: {x for x in refs if x in BASE and BASE[x][2]} for n, refs in direct.items()}
    changed = True
    while changed:
        changed = False
        for n, d in m.defs.items():
            new = set(out[n])
            for x in direct[n]:
                if x in out:
                    new |= out[x]
            if d.rec:
                for g in m.groups[d.group]:
                    if g in out and m.defs[g].rec and m.defs[g].group == d.group:
                        new |= out[g]
            if new != out[n]:
                out[n] = new
                changed = True
    r = m._space_names_ = {n: frozenset(v) for n, v in out.items()}
    return r


def _level_cuts(m: CatModel):
    """What level classes (Evaluator `level_classes`) must respect in this model: (the
    levels c at which a class must begin, the level-indexed base names the model names), or
    None when the model compares a level with a level variable inside a union over an
    already-bound variable (a filter `union(K >= L, K <= M)` with M a variable), where a
    value may depend on more than the classes. A bound that is a constant level c cuts the
    levels there: `>= c` between c - 1 and c, `<= c` between c and c + 1. Cached."""
    r = getattr(m, "_level_cuts_", False)
    if r is not False:
        return r
    cuts: set = set()
    names: set = set()
    ok = True

    def walk(e, bound: frozenset):
        nonlocal ok
        if isinstance(e, Name):
            if e.name in BASE and BASE[e.name][1]:
                names.add(e.name)
            return
        if isinstance(e, LevelUnion):
            if e.cmp is not None:
                if e.bound in LEVEL_NAMES:
                    c = LEVEL_NAMES.index(e.bound)
                    cuts.add(c if e.cmp == ">=" else c + 1)
                elif e.var in bound:
                    ok = False
            walk(e.body, bound | {e.var})
            return
        for c in ((e.left, e.right) if isinstance(e, (Bin, Cross)) else
                  (e.arg,) if isinstance(e, Un) else ()):
            walk(c, bound)
    for d in m.defs.values():
        walk(d.b.expr, frozenset((d.b.param,)) if d.b.param else frozenset())
    for ax in m.axioms:
        walk(ax.expr, frozenset())
    if m.value is not None:
        walk(m.value.maysee, frozenset())
        walk(m.value.definite, frozenset())
    r = (frozenset(cuts), tuple(sorted(names))) if ok else None
    m._level_cuts_ = r
    return r


# the algebra's method for each unary operator but `~` and `spaces`
_UNARY = {"inv": "inv", "+": "plus", "*": "star", "?": "opt", "ident": "ident",
          "domain": "domain", "range": "range_"}


class Evaluator:
    def __init__(self, m: CatModel, alg, base: Base, spaces: list, shared=None,
                 level_classes: bool = False, held=None):
        """`shared`: a dict kept across evaluators of one test and algebra, for the values
        of expressions that depend on no choice of the execution. `level_classes`: evaluate
        a level-indexed value once per class of levels that cannot differ in this test
        (docs/semantics.md §18 "Levels that cannot differ"; the SMT engine). `held`: a dict
        kept across evaluators whose executions differ in the coherence order alone (the
        reference engine's candidates of one reads-from choice), for the values that do not
        depend on `co` (docs/semantics.md §18 "Candidates that differ in co alone")."""
        self.m, self.alg, self.base, self.spaces = m, alg, base, list(spaces)
        self.memo: dict = {}
        self.held = held
        self.co_dep = _co_dependent(m) if held is not None else None
        self.info = _analyse(m)
        self.sorts = m.__dict__.setdefault("_node_sorts", {})
        self.shared = shared
        self.local: dict = {}
        self.round = None       # while a let rec group iterates: this application's values
        self.demand = getattr(alg, "demand", False)     # the algebra takes demanded keys
        # an algebra whose empty value is falsy says so (`empty_falsy`): a composition, an
        # intersection or a difference whose first side is empty is empty, and its other
        # side is not evaluated
        self.falsy = getattr(alg, "empty_falsy", False)
        self.filters = FILTERS and hasattr(alg, "restrict_rows")    # Evaluator._filter
        self.rep = self._classes() if level_classes else None
        self.reps = tuple(sorted(set(self.rep))) if self.rep else LEVELS
        self.space_names = _space_names(m)
        self._spaces: dict = {}     # (names, space) -> its representative: _space
        self._sigs: dict = {}       # (base name, space) -> its signature at every level
        self.one_space = len(self.spaces) <= 1     # every class is that space
        self._ranges: dict = {}     # (lo, hi) -> the level classes' representatives in it

    def _classes(self):
        """docs/semantics.md §18 "Levels that cannot differ": each level's representative,
        the lowest level of its class. A class is a run of consecutive levels at which every
        level-indexed base name the model names has the same value (in every address space
        of the test), not cut by a constant bound of the model (_level_cuts). Every
        expression's value then depends on its level variables' classes only (induction on
        the expression: a base name by the classes' definition, a union over a range by
        idempotence, the ranges' ends moving within one class, a comparison with a constant
        by the cuts; a definition and a let rec's rounds by induction). None (every level
        its own) when the model is refused by _level_cuts or a base value is not static."""
        an = _level_cuts(self.m)
        if an is None:
            return None
        cuts, names = an
        sig = []
        for lv in LEVELS:
            row = []
            for n in names:
                for sp in (self.spaces if BASE[n][2] else (None,)):
                    s = self.base.signature(n, lv, sp)
                    if s is None:
                        return None
                    row.append(s)
            sig.append(row)
        rep = [0]
        for lv in LEVELS[1:]:
            rep.append(rep[-1] if lv not in cuts and sig[lv] == sig[lv - 1] else lv)
        return tuple(rep)

    def _space(self, names: frozenset, sp):
        """docs/semantics.md §18 "Spaces that cannot differ": the first address space of the
        test at which each space-dependent base name in `names` (what a value reads at the
        space at hand, _space_names) has the value it has at sp; sp when there is none. A
        value is a function of the base values it reads, so its value there is its value at
        sp (the base values not static, a template's terms, are never compared equal)."""
        key = (names, sp)
        r = self._spaces.get(key)
        if r is None:
            r = sp
            if SPACE_CLASSES and names and sp is not None:
                mine = [self._sig(n, sp) for n in names]
                if None not in mine:
                    for s in self.spaces:
                        if s == sp:
                            break
                        if [self._sig(n, s) for n in names] == mine:
                            r = s
                            break
            self._spaces[key] = r
        return r

    def _sig(self, name: str, sp):
        """A space-dependent base name's signatures at every level (None: not static)."""
        key = (name, sp)
        if key not in self._sigs:
            sig = tuple(self.base.signature(name, lv, sp)
                        for lv in (LEVELS if BASE[name][1] else (None,)))
            self._sigs[key] = None if None in sig else sig
        return self._sigs[key]

    # ---- names ----
    def _names(self, name: str) -> dict:
        """Where the value of a name is memoised: `held` for one that does not depend on co
        (when the evaluator has it), else this evaluator's memo."""
        if self.held is not None and not self.co_dep[1][name]:
            return self.held
        return self.memo

    def get(self, name: str, level, sp):
        if level is not None and self.rep is not None:
            level = self.rep[level]
        b = BASE.get(name)
        memo = self.memo if self.held is None else self._names(name)
        if b is not None:
            key = ("base", name, level, sp if b[2] else None)
            v = memo.get(key)
            if v is None:
                d = self.base.value(name, level, sp)
                v = memo[key] = (self.alg.set_of(d) if b[0] == "set"
                                 else self.alg.rel_of(d))
            return v
        d = self.m.defs[name]
        if d.space and not self.one_space:
            sp = self._space(self.space_names[name], sp)
        key = (name, level, sp if d.space else None)
        v = memo.get(key)
        if v is not None:
            return v
        if d.rec:
            self._group(d, sp if d.space else None)
            return memo[key]
        env = {d.b.param: level} if d.b.param else {}
        v = self.eval(d.b.expr, env, sp if d.space else None)
        memo[key] = v
        return v

    def _group(self, d, sp):
        names, outside = _group_shape(self.m, d.group)
        keys = []
        for n in names:
            g = self.m.defs[n]
            for lv in (self.reps if g.b.param else (None,)):
                keys.append((n, lv, sp if g.space else None))
        sorts = {k: self.m.defs[k[0]].sort for k in keys}
        # what the bodies use outside the group first: their values are fixed during the
        # iteration (and get their defining variables in the Z3 algebra)
        inputs = []
        for ref, indexed in outside:
            for lv in (self.reps if indexed else (None,)):
                inputs.append(self.get(ref, lv, sp))

        memo = self.memo if self.held is None else self._names(names[0])  # one for the group
        # an algebra whose values are hashable (the reference engine's masks) keeps each
        # group's least fixpoint by the values of what its bodies use outside it: a candidate
        # whose inputs are those of an earlier one (another coherence order that changed no
        # input) reuses it (docs/semantics.md §18 "Candidates that differ in co alone")
        known = getattr(self.alg, "fixpoints", None)
        gkey = None
        if known is not None and _closed_group(self.m, d.group):
            gkey = (d.group, sp, self.rep, tuple(inputs))
            res = known.get(gkey)
            if res is not None:
                for k in keys:
                    memo[k] = res[k]
                return

        def F(cur: dict) -> dict:
            for k, v in cur.items():
                memo[k] = v
            prev, self.round = self.round, {}
            try:
                out = {}
                for k in keys:
                    g = self.m.defs[k[0]]
                    env = {g.b.param: k[1]} if g.b.param else {}
                    out[k] = self.eval(g.b.expr, env, k[2] if g.space else None)
            finally:
                self.round = prev
            for k in cur:
                memo.pop(k, None)
            return out
        from .wf import guarded_groups
        res = self.alg.fixpoint(keys, sorts, F, guarded=d.group in guarded_groups(self.m))
        for k in keys:
            memo[k] = res[k]
        if gkey is not None:
            if len(known) >= FIXPOINTS_KEPT:
                known.clear()
            known[gkey] = res

    # ---- expressions ----
    def _slot(self, e, env: dict, sp):
        """Where e's value is memoised: (store, key), or None for a node not analysed."""
        inf = self.info.get(id(e))
        if inf is None:
            return None
        dyn, rec, free, here = inf
        # keyed by the space of its class (a node that reads no space-dependent name: none),
        # so that it is evaluated once per class (docs/semantics.md §18 "Spaces that cannot
        # differ"; the values are equal)
        if sp is not None:
            sp = (sp if self.one_space else self._space(here, sp)) if here else None
        key = (id(e), tuple([(k, env[k]) for k in free if k in env]) if free else (), sp)
        if rec:
            # a node naming a recursive definition: while a group iterates (`round`), its
            # value holds for one application of the bodies (the group's atoms fixed), e.g.
            # vis[K] ; ... shared by every vis[L] with L <= K; outside, the groups it names
            # are complete and it is memoised as any node
            if self.round is not None:
                return self.round, key
            store = self.local
        else:
            store = self.local if dyn or self.shared is None else self.shared
        if store is self.local and self.held is not None and not self.co_dep[0][id(e)]:
            store = self.held
        return store, key

    def eval(self, e, env: dict, sp):
        if type(e) is Name:        # a name: memoised by get
            idx = e.index
            if idx is None:
                return self.get(e.name, None, sp)
            return self.get(e.name, env[idx] if idx in env else LEVEL_NAMES.index(idx), sp)
        slot = self._slot(e, env, sp)
        if slot is None:
            return self._eval(e, env, sp)
        store, key = slot
        v = store.get(key)
        if v is None:
            v = store[key] = self._eval(e, env, sp)
        return v

    # ---- demanded keys (algebras with `demand`: the Z3 algebra) ----
    def _cheap(self, e, env: dict, sp) -> bool:
        """e's whole value costs nothing more to have: a name (memoised), a value that
        depends on no choice (shared), or one already memoised."""
        if type(e) is Name:
            return True
        inf = self.info.get(id(e))
        if inf is None or not inf[0]:
            return True
        store, key = self._slot(e, env, sp)
        return key in store

    def _reused(self, e, env: dict) -> bool:
        """e's whole value is used again: it depends on fewer level variables than are bound
        (the same value for every value of the others), or a let rec group iterates and e
        does not name the group (the same value in every round)."""
        inf = self.info.get(id(e))
        if inf is None:
            return False
        if self.round is not None and not inf[1]:
            return True
        return len(inf[2]) < len(env)

    def within(self, e, env: dict, sp, D):
        """e's value where Demand D needs it (None: everywhere): a dict that agrees with e's
        value on every key it has and has each key of e's value that D admits (it may have
        more: whole values are not cut down). A pair that an intersection, a difference or a
        composition cannot use is not built (docs/semantics.md §18 "Speed": the demanded-pairs
        analysis)."""
        if D is None or self._cheap(e, env, sp) or self._reused(e, env):
            return self.eval(e, env, sp)
        t = type(e)
        if t is Bin:
            return self._bin(e, env, sp, D)
        if t is LevelUnion and e.var not in env:
            sort = self.sort(e.body)
            out = self.alg.empty(sort)
            for lv in self._levels(e, env):
                out = self.alg.union(sort, out, self.within(e.body, {**env, e.var: lv}, sp, D))
            return out
        if t is Un and e.op == "inv":
            return self.alg.inv(self.within(e.arg, env, sp, D.transposed()))
        return self.eval(e, env, sp)

    def _bin(self, e, env: dict, sp, D):
        """A binary node, each side evaluated only where the other (and D) can use it."""
        A = self.alg
        L, R = e.left, e.right
        op = e.op
        if op == "|":
            sort = self.sort(L)
            return A.union(sort, self.within(L, env, sp, D), self.within(R, env, sp, D))
        if op == "&":
            sort = self.sort(L)
            if self._cheap(L, env, sp) and not self._cheap(R, env, sp):
                a = self.within(L, env, sp, D)
                if self.falsy and not a:
                    return a
                b = self.within(R, env, sp, Demand(a))
            else:
                b = self.within(R, env, sp, D)
                if self.falsy and not b:
                    return b
                a = self.within(L, env, sp, Demand(b))
            return A.inter(sort, a, b)
        if op == "\\":
            sort = self.sort(L)
            a = self.within(L, env, sp, D)
            if self.falsy and not a:
                return a
            return A.diff(sort, a, self.within(R, env, sp, Demand(a)))
        if self.filters and _filterable(e):
            return self._filter(L, R, env, sp, D, demanded=True)
        # composition: a pair (i, j) of the result uses a's row i and b's column j, and a's
        # pair (i, k) only when b has a pair (k, .): the cheap side first, the other within it
        rows, cols = (None, None) if D is None else (D.rows(), D.cols())
        if self._cheap(L, env, sp) or not self._cheap(R, env, sp):
            a = self.within(L, env, sp, None if rows is None else Demand(None, rows, None))
            if self.falsy and not a:
                return a
            b = self.within(R, env, sp, Demand(None, {k for _, k in a}, cols))
        else:
            b = self.within(R, env, sp, None if cols is None else Demand(None, None, cols))
            if self.falsy and not b:
                return b
            a = self.within(L, env, sp, Demand(None, rows, {k for k, _ in b}))
        return A.seq(a, b, D)

    def _eval(self, e, env: dict, sp):
        tick()
        A = self.alg
        if isinstance(e, Name):
            lv = None
            if e.index is not None:
                lv = env[e.index] if e.index in env else LEVEL_NAMES.index(e.index)
            return self.get(e.name, lv, sp)
        if isinstance(e, Bin):
            if self.demand and e.op != "|":
                return self._bin(e, env, sp, None)
            if e.op == ";" and self.filters and _filterable(e):
                return self._filter(e.left, e.right, env, sp, None, demanded=False)
            a = self.eval(e.left, env, sp)
            if self.falsy and not a and e.op != "|":
                return a
            b = self.eval(e.right, env, sp)
            sort = self.sort(e.left)
            if e.op == "|":
                return A.union(sort, a, b)
            if e.op == "&":
                return A.inter(sort, a, b)
            if e.op == "\\":
                return A.diff(sort, a, b)
            return A.seq(a, b)
        if isinstance(e, Un) and e.op == "spaces":
            sort = self.sort(e.arg)
            out = A.empty(sort)
            for s2 in self.spaces_of(e.arg, self.spaces):
                out = A.union(sort, out, self.eval(e.arg, env, s2))
            return out
        if isinstance(e, Un):
            a = self.eval(e.arg, env, sp)
            if e.op == "~":
                return A.compl(self.sort(e.arg), a)
            return getattr(A, _UNARY[e.op])(a)
        if isinstance(e, Cross):
            return A.cross(self.eval(e.left, env, sp), self.eval(e.right, env, sp))
        if isinstance(e, LevelUnion):
            sort = self.sort(e.body)
            out = A.empty(sort)
            if e.var in env:        # union(K >= A, K <= B): the second bound filters K
                b = env[e.bound] if e.bound in env else LEVEL_NAMES.index(e.bound)
                k = env[e.var]
                ok = k >= b if e.cmp == ">=" else k <= b
                return self.eval(e.body, env, sp) if ok else out
            for lv in self._levels(e, env):
                out = A.union(sort, out, self.eval(e.body, {**env, e.var: lv}, sp))
            return out
        raise AssertionError(e)

    def _filter(self, L, R, env: dict, sp, D, demanded: bool):
        """`[S] ; r` and `r ; [S]` (_filterable) by an algebra that restricts a relation's rows
        or columns to a set (`restrict_rows`, `restrict_cols`: the Z3 algebra) without
        building the identity relation of S and composing with it: the same pairs and terms
        as the composition, in the same order. `demanded` (Evaluator.within, Demand D): the
        set whole (a set is small), the relation within the rows (columns) the set and D
        admit; otherwise the relation whole."""
        left = type(L) is Un and L.op == "ident"
        other = R if left else L
        if not demanded and not left:   # r ; [S]: r first, as the composition evaluates it
            r = self.eval(other, env, sp)
            if self.falsy and not r:
                return r
            return self.alg.restrict_cols(r, self.eval(R.arg, env, sp))
        s = self.eval(L.arg if left else R.arg, env, sp)
        if self.falsy and not s:
            return {}
        if not demanded:
            return self.alg.restrict_rows(s, self.eval(other, env, sp))   # [S] ; r
        rows, cols = (None, None) if D is None else (D.rows(), D.cols())
        bound = rows if left else cols
        keys = set(s) if bound is None else {i for i in s if i in bound}
        r = self.within(other, env, sp, Demand(None, keys, cols) if left
                        else Demand(None, rows, keys))
        return self.alg.restrict_rows(s, r, D) if left else self.alg.restrict_cols(r, s, D)

    def _levels(self, e, env: dict):
        """The levels a level union `union(K >= B) ...` (or <=, or unbounded) ranges over;
        with level classes, the representative of each class the range meets (the union is
        idempotent, and a value the same at every level of a class)."""
        lo_, hi = 0, LEVELS[-1]
        if e.cmp is not None:
            b = env[e.bound] if e.bound in env else LEVEL_NAMES.index(e.bound)
            if e.cmp == ">=":
                lo_ = b
            else:
                hi = b
        if self.rep is None:
            return range(lo_, hi + 1)
        r = self._ranges.get((lo_, hi))
        if r is None:
            rep = self.rep
            r = self._ranges[(lo_, hi)] = sorted({rep[lv] for lv in range(lo_, hi + 1)})
        return r

    def sort(self, e) -> str:
        """e's sort, "set" or "rel" (cached on the model per node)."""
        cache = self.sorts
        v = cache.get(id(e))
        if v is None:
            v = cache[id(e)] = self._sort(e)
        return v

    def _sort(self, e) -> str:
        if isinstance(e, Name):
            return BASE[e.name][0] if e.name in BASE else self.m.defs[e.name].sort
        if isinstance(e, Bin):
            return "rel" if e.op == ";" else self.sort(e.left)
        if isinstance(e, Un):
            if e.op in ("domain", "range"):
                return "set"
            if e.op in ("~", "spaces"):
                return self.sort(e.arg)
            return "rel"
        if isinstance(e, Cross):
            return "rel"
        if isinstance(e, LevelUnion):
            return self.sort(e.body)
        raise AssertionError(e)

    def spaces_of(self, e, spaces) -> list:
        """The address spaces at which e's value is to be had: [None] when it depends on
        none, else one space of each class of `spaces` at which it cannot differ (_space;
        an axiom holds at a space when it holds at its class's)."""
        if not spdep(self.m, e):
            return [None]
        inf = self.info.get(id(e))
        names = inf[3] if inf is not None else _reads_here(self.m, e)
        out: list = []
        for sp in spaces:
            r = self._space(names, sp)
            if r not in out:
                out.append(r)
        return out


class Demand:
    """The keys a value is needed on (cat/eval.py Evaluator.within): those of `only` (a
    container of keys), and for a relation the rows in `rows` and the columns in `cols`; None
    is no bound."""
    __slots__ = ("only", "rows_", "cols_")

    def __init__(self, only=None, rows=None, cols=None):
        self.only, self.rows_, self.cols_ = only, rows, cols

    def _side(self, bound, k: int):
        """The rows (k = 0) or columns (k = 1) admitted: `bound`, and those of `only`."""
        if self.only is None:
            return bound
        o = {p[k] for p in self.only}
        return o if bound is None else o & bound

    def rows(self):
        return self._side(self.rows_, 0)

    def cols(self):
        return self._side(self.cols_, 1)

    def by_row(self):
        """row -> the columns admitted in it (None: any), for the rows admitted; None when
        every row is."""
        only, rows, cols = self.only, self.rows_, self.cols_
        if only is None:
            if rows is None:
                return None
            return {i: cols for i in rows}
        out: dict = {}
        for i, j in only:
            if (rows is None or i in rows) and (cols is None or j in cols):
                out.setdefault(i, set()).add(j)
        return out

    def transposed(self):
        return Demand(None if self.only is None else {(j, i) for i, j in self.only},
                      self.cols_, self.rows_)


# ---- the concrete algebra ----------------------------------------------------------------------

def _bits(m: int):
    while m:
        b = m & -m
        yield b.bit_length() - 1
        m ^= b


class MaskAlgebra:
    """Sets as bit masks, relations as tuples of row masks, over events 0..n-1."""

    def __init__(self, n: int):
        self.n = n
        self.full = (1 << n) - 1
        self.idrows = tuple(1 << i for i in range(n))
        # Evaluator._group: least fixpoints by their inputs (None: none kept)
        self.fixpoints: Optional[dict] = {} if REUSE else None
        self.seqs: Optional[dict] = {} if REUSE else None     # seq: a ; b by (a, b)

    def set_of(self, d: dict) -> int:
        m = 0
        for i, t in d.items():
            if t:
                m |= 1 << i
        return m

    def rel_of(self, d: dict) -> tuple:
        rows = [0] * self.n
        for (i, j), t in d.items():
            if t:
                rows[i] |= 1 << j
        return tuple(rows)

    def empty(self, sort):
        return 0 if sort == "set" else (0,) * self.n

    def union(self, sort, a, b):
        return a | b if sort == "set" else tuple(x | y for x, y in zip(a, b))

    def inter(self, sort, a, b):
        return a & b if sort == "set" else tuple(x & y for x, y in zip(a, b))

    def diff(self, sort, a, b):
        return a & ~b if sort == "set" else tuple(x & ~y for x, y in zip(a, b))

    def compl(self, sort, a):
        return self.full & ~a if sort == "set" else tuple(self.full & ~x for x in a)

    def seq(self, a, b):
        known = self.seqs
        if known is not None:
            key = (a, b)
            v = known.get(key)
            if v is not None:
                return v
        out = []
        for row in a:
            r = 0
            for j in _bits(row):
                r |= b[j]
            out.append(r)
        v = tuple(out)
        if known is not None:
            if len(known) >= SEQS_KEPT:
                known.clear()
            known[key] = v
        return v

    def inv(self, a):
        out = [0] * self.n
        for i, row in enumerate(a):
            for j in _bits(row):
                out[j] |= 1 << i
        return tuple(out)

    def plus(self, a):
        r = list(a)
        for k in range(self.n):
            bk, rk = 1 << k, r[k]
            if rk:
                for i in range(self.n):
                    if r[i] & bk:
                        r[i] |= rk
        return tuple(r)

    def star(self, a):
        return tuple(x | y for x, y in zip(self.plus(a), self.idrows))

    def opt(self, a):
        return tuple(x | y for x, y in zip(a, self.idrows))

    def ident(self, s):
        return tuple((1 << i) if s >> i & 1 else 0 for i in range(self.n))

    def domain(self, a):
        m = 0
        for i, row in enumerate(a):
            if row:
                m |= 1 << i
        return m

    def range_(self, a):
        m = 0
        for row in a:
            m |= row
        return m

    def cross(self, a, b):
        return tuple(b if a >> i & 1 else 0 for i in range(self.n))

    def fixpoint(self, keys, sorts, F, guarded=False):
        cur = {k: self.empty(sorts[k]) for k in keys}
        while True:
            tick()
            nxt = F(cur)
            if nxt == cur:
                return cur
            cur = nxt

    # axioms: True when the execution satisfies it
    def holds(self, kind: str, a) -> bool:
        if kind == "empty":
            return not a if isinstance(a, int) else not any(a)
        if kind == "irreflexive":
            return not any(row >> i & 1 for i, row in enumerate(a))
        c = self.plus(a)
        return not any(row >> i & 1 for i, row in enumerate(c))


# ---- the static algebra: what holds in every execution, what may hold -------------------------

def t_and(*xs):
    """Kleene's three-valued conjunction over True, None (unknown), False."""
    out = True
    for x in xs:
        if x is False:
            return False
        if x is None:
            out = None
    return out


def t_or(*xs):
    out = False
    for x in xs:
        if x is True:
            return True
        if x is None:
            out = None
    return out


def t_not(x):
    return None if x is None else not x


class TriTerms(Terms):
    """The base's terms three-valued (True, None, False): the static analysis both
    file-driven engines run (reference/cat_engine.py prunes with it, encode/cat_z3.py
    `may_see`)."""

    def and_(self, *xs):
        return t_and(*xs)

    def or_(self, *xs):
        return t_or(*xs)

    def not_(self, x):
        return t_not(x)


class TriAlgebra:
    """Sets and relations as dicts to True (in every execution) or None (in some, perhaps);
    an absent key is in none. Every operation over-approximates what it does on each
    execution the unknowns stand for, so a pair absent from a result holds in no execution:
    the reference engine prunes its choices with it (reference/cat_engine.py)."""

    def __init__(self, n: int):
        self.n = n

    @staticmethod
    def set_of(d: dict) -> dict:
        return {k: v for k, v in d.items() if v is not False}

    rel_of = set_of

    @staticmethod
    def empty(sort):
        return {}

    @staticmethod
    def union(sort, a, b):
        out = dict(a)
        for k, t in b.items():
            out[k] = t_or(out.get(k, False), t)
        return out

    @staticmethod
    def inter(sort, a, b):
        out = {}
        for k, t in a.items():
            v = t_and(t, b.get(k, False))
            if v is not False:
                out[k] = v
        return out

    @staticmethod
    def diff(sort, a, b):
        out = {}
        for k, t in a.items():
            v = t_and(t, t_not(b.get(k, False)))
            if v is not False:
                out[k] = v
        return out

    def compl(self, sort, a):
        keys = (range(self.n) if sort == "set"
                else ((i, j) for i in range(self.n) for j in range(self.n)))
        out = {}
        for k in keys:
            v = t_not(a.get(k, False))
            if v is not False:
                out[k] = v
        return out

    @staticmethod
    def seq(a, b):
        rows: dict = {}
        for (k, j), t in b.items():
            rows.setdefault(k, []).append((j, t))
        out: dict = {}
        for (i, k), t1 in a.items():
            for j, t2 in rows.get(k, ()):
                out[(i, j)] = t_or(out.get((i, j), False), t_and(t1, t2))
        return out

    @staticmethod
    def inv(a):
        return {(j, i): t for (i, j), t in a.items()}

    def plus(self, a):
        rows: dict = {}
        for (i, j), t in a.items():
            rows.setdefault(i, {})[j] = t
        for k in range(self.n):
            out_k = rows.get(k)
            if not out_k:
                continue
            for i, r in rows.items():
                if k in r:
                    tik = r[k]
                    for j, tkj in list(out_k.items()):
                        r[j] = t_or(r.get(j, False), t_and(tik, tkj))
        return {(i, j): t for i, r in rows.items() for j, t in r.items()}

    def star(self, a):
        out = self.plus(a)
        for i in range(self.n):
            out[(i, i)] = True
        return out

    def opt(self, a):
        out = dict(a)
        for i in range(self.n):
            out[(i, i)] = True
        return out

    @staticmethod
    def ident(s):
        return {(i, i): t for i, t in s.items()}

    @staticmethod
    def domain(a):
        out: dict = {}
        for (i, _), t in a.items():
            out[i] = t_or(out.get(i, False), t)
        return out

    @staticmethod
    def range_(a):
        out: dict = {}
        for (_, j), t in a.items():
            out[j] = t_or(out.get(j, False), t)
        return out

    @staticmethod
    def cross(a, b):
        return {(i, j): t_and(t, u) for i, t in a.items() for j, u in b.items()}

    def fixpoint(self, keys, sorts, F, guarded=False):
        cur = {k: {} for k in keys}
        while True:
            tick()
            nxt = F(cur)
            if nxt == cur:
                return cur
            cur = nxt


class TriMaskAlgebra:
    """TriAlgebra over bit masks: a set is (must, may), two masks, a relation (must, may), two
    MaskAlgebra relations (tuples of row masks), must within may. Pair by pair each operation
    is TriAlgebra's Kleene operation (True: in must; None: in may only; False: in neither):
    union and intersection componentwise, a \\ b = (must_a - may_b, may_a - must_b), the
    complement (~may, ~must), composition and closure componentwise (a pair is True when some
    path is True throughout, perhaps when some path is perhaps throughout). The same
    analysis, without a dict entry per pair (encode/cat_z3.py may_see)."""

    def __init__(self, n: int):
        self.n = n
        self.m = MaskAlgebra(n)

    def set_of(self, d: dict) -> tuple:
        must = may = 0
        for i, t in d.items():
            if t is not False:
                may |= 1 << i
                if t is True:
                    must |= 1 << i
        return must, may

    def rel_of(self, d: dict) -> tuple:
        must, may = [0] * self.n, [0] * self.n
        for (i, j), t in d.items():
            if t is not False:
                may[i] |= 1 << j
                if t is True:
                    must[i] |= 1 << j
        return tuple(must), tuple(may)

    def empty(self, sort):
        e = self.m.empty(sort)
        return e, e

    def union(self, sort, a, b):
        return self.m.union(sort, a[0], b[0]), self.m.union(sort, a[1], b[1])

    def inter(self, sort, a, b):
        return self.m.inter(sort, a[0], b[0]), self.m.inter(sort, a[1], b[1])

    def diff(self, sort, a, b):
        return self.m.diff(sort, a[0], b[1]), self.m.diff(sort, a[1], b[0])

    def compl(self, sort, a):
        return self.m.compl(sort, a[1]), self.m.compl(sort, a[0])

    def seq(self, a, b):
        return self.m.seq(a[0], b[0]), self.m.seq(a[1], b[1])

    def inv(self, a):
        return self.m.inv(a[0]), self.m.inv(a[1])

    def plus(self, a):
        return self.m.plus(a[0]), self.m.plus(a[1])

    def star(self, a):
        return self.m.star(a[0]), self.m.star(a[1])

    def opt(self, a):
        return self.m.opt(a[0]), self.m.opt(a[1])

    def ident(self, s):
        return self.m.ident(s[0]), self.m.ident(s[1])

    def domain(self, a):
        return self.m.domain(a[0]), self.m.domain(a[1])

    def range_(self, a):
        return self.m.range_(a[0]), self.m.range_(a[1])

    def cross(self, a, b):
        return self.m.cross(a[0], b[0]), self.m.cross(a[1], b[1])

    def fixpoint(self, keys, sorts, F, guarded=False):
        cur = {k: self.empty(sorts[k]) for k in keys}
        while True:
            tick()
            nxt = F(cur)
            if nxt == cur:
                return cur
            cur = nxt
