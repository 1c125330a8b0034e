"""The SMT engine driven by a model file (`--model FILE.cat`, docs/semantics.md §18): the Z3
algebra of the model evaluator (amdmm_smt/cat/eval.py).

A set maps event ids to terms, a relation maps pairs to terms; a key that is absent is false
in every execution and a term that is the Python constant True holds in every execution, so
every operation folds what is statically known (encode/logic.py AND / OR / NOT) and only what
may matter reaches Z3: this is the static may / must analysis of docs/semantics.md §14, for
any definition a model file makes. A named definition's terms are inlined (Z3 shares equal
subterms); the pairs of a transitive closure get defining variables (`Ctx.define`).

* `r+`: Warshall's construction over the folded terms (a pair's term changes only through a
  path that may exist), a defining variable per changed pair.
* `let rec`: the least fixpoint. The support (the pairs that may hold) is found by iterating
  with a free variable ("atom") per pair already in it until it stops growing; the terms the
  definitions then give each pair name the atoms it depends on; the pairs are taken in
  dependency order, strongly connected component by component: a pair that depends on no
  pair of its own component is its term (a unique solution), a component of k pairs is
  iterated k times from false (Kleene), which reaches the least fixpoint for every
  assignment (each round adds a pair or changes nothing).
* `acyclic r`: an integer rank per event, increasing along r (as sync.seq_cst does);
  `irreflexive r`, `empty r`: the negated terms.
The read-value statement: a definite read reads from one write it may see, a read that is
not definite is undef (as values.read_values states the seed's rule).
"""

from __future__ import annotations

import z3

from ..cat import load_cached, refuse_unsupported, rules
from ..cat.base import Base, Dynamic, Terms
from ..cat.eval import Evaluator, TriMaskAlgebra, TriTerms, t_and
from ..limits import tick
from . import async_ops, control, values
from . import families as F
from .execution import Execution
from .logic import AND, B, IFF, IMPLIES, NOT, OR, raw_c


class _Terms(Terms):
    def and_(self, *xs):
        return AND(*xs)

    def or_(self, *xs):
        return OR(*xs)

    def not_(self, x):
        return NOT(x)


class _Dyn(Dynamic):
    def __init__(self, x: Execution):
        self.x = x

    def hap(self, e):
        return self.x.writes(e)

    def rf(self, w, r):
        return self.x.rf(w, r)

    def co(self, a, b):
        x = self.x
        return AND(x.writes(a), x.writes(b), x.co(a, b))

    def bar_sig(self) -> dict:
        """barSig (docs/model-language.md): (X, Y) when X is program-ordered before an arrive
        A (in a thread of A's wave), Y after a wait W (in a thread of W's wave), and the
        chosen run has A barrier-executes-before W (x.bar_pair, encode/barrier.py)."""
        x = self.x
        if getattr(x, "_bar_sig", None) is None:
            info = x.elab.barrier
            by_thread: dict = {}
            for e in x.ev:
                if not e.is_init:
                    by_thread.setdefault(e.thread, []).append(e)
            acc: dict = {}
            for (a, w), on in x.bar_pair.items():
                A, W_ = info.ops[a], info.ops[w]
                before = [e for t, p in A.tpos.items() for e in by_thread.get(t, ()) if e.pos < p]
                after = [e for t, p in W_.tpos.items() for e in by_thread.get(t, ()) if e.pos > p]
                for e in before:
                    for f in after:
                        if e.id != f.id:
                            acc.setdefault((e.id, f.id), []).append(on)
            x._bar_sig = {k: OR(v) for k, v in acc.items()}
        return x._bar_sig

    def async_choice(self, keys):
        """R-call-async-seq: one Boolean per mark and wait where the documents leave the
        mark's completion unspecified, monotone along the mark's later waits (a completed
        mark stays completed), as encode/async_ops.choices does for the hand encoders."""
        x = self.x
        ch = getattr(x, "_cat_async_choice", None)
        if ch is None:
            from ..cat.base import completion_unspecified
            ch = x._cat_async_choice = {}
            for staged in (False, True):
                for chain in completion_unspecified(x.elab, staged)[1]:
                    vs = []
                    for k in chain:
                        v = ch.get(k)
                        if v is None:
                            v = ch[k] = x.ctx.fresh_bool(
                                "cat_async_unspecified_" + "_".join(map(str, k)))
                        vs.append(v)
                    with x.ctx.family(F.STRUCTURE):      # the machinery's, every reading
                        for v, w in zip(vs, vs[1:]):
                            x.ctx.add(IMPLIES(v, w))
        return OR(*[ch[k] for k in keys if k in ch])

    def bar_exec(self) -> dict:
        """barExec: (X, Y) of two threads, X before a barrier operation A of its wave, B
        before Y, A barrier-executes-before B in the chosen run (R-bar-hb-exec, x.bar_xb)."""
        return self.x.bar_xb

    def bar_bmo(self) -> dict:
        """barBmo (S003's runs, barrier_model = pr170447): (E, F) with E program-ordered after
        a modification operation B (in a thread of B's wave), F before a modification
        operation A of the same object in another wave, A before B in the chosen run's
        barrier-modification-order (encode/barrier.py Outcome.bmo)."""
        x = self.x
        if getattr(x, "_bar_bmo", None) is None:
            info = x.elab.barrier
            acc: dict = {}
            for k, o in enumerate(getattr(x.bar, "outcomes", ()) if x.bar else ()):
                for (a, b) in o.bmo:
                    A, Bo = info.ops[a], info.ops[b]
                    es = [e for e in x.ev if not e.is_init and e.thread in Bo.tpos
                          and e.pos > Bo.tpos[e.thread]]
                    fs = [f for f in x.ev if not f.is_init and f.thread in A.tpos
                          and f.pos < A.tpos[f.thread]]
                    for e in es:
                        for f in fs:
                            acc.setdefault((e.id, f.id), []).append(x.bar_pick[k])
            x._bar_bmo = {p: OR(v) for p, v in acc.items()}
        return x._bar_bmo


def _tri(t):
    """A term as the three-valued analysis sees it: a constant stays, any other term is
    "perhaps" (None)."""
    return t if isinstance(t, bool) else None


class _TriDyn(Dynamic):
    """Every model of this encoding, three-valued: what x itself states to be constant
    (x.wr: a plain write always writes, a cmpxchg perhaps; the barrier runs' pairs,
    x.bar_pair / x.bar_xb over every run the analysis keeps) is that constant, every other
    term perhaps; a reads-from pair is perhaps when it has a variable (x.rf_var), else never;
    coherence is perhaps between two writes that may happen, the initial write first. So a
    pair absent from a result holds in no model of the encoding (cat/eval.py TriAlgebra)."""
    def __init__(self, x: Execution, dyn: _Dyn):
        self.x, self.dyn = x, dyn

    def hap(self, e):
        return _tri(self.x.writes(e))

    def rf(self, w, r):
        return None if (w.id, r.id) in self.x.rf_var else False

    def co(self, a, b):
        if a.id == b.id or a.loc != b.loc or b.is_init:
            return False
        if a.is_init:
            return self.hap(b)
        return t_and(self.hap(a), self.hap(b), None)

    def bar_sig(self) -> dict:
        return {k: _tri(t) for k, t in self.dyn.bar_sig().items()}

    def bar_exec(self) -> dict:
        return {k: _tri(t) for k, t in self.dyn.bar_exec().items()}


def _shared(x: Execution) -> dict:
    """The values of the expressions that depend on no choice, kept across the evaluators of
    one encoding (may_see's rounds and the Z3 algebra's): in both algebras such a value is
    the same dict, every key to True (a key that is False is absent)."""
    if getattr(x, "_cat_shared", None) is None:
        x._cat_shared = {}
    return x._cat_shared


def _base(x: Execution, terms: Terms, dyn: Dynamic) -> Base:
    """The base names for one evaluator; the static ones computed once per encoding."""
    make = getattr(x, "make_base", None)   # synth/symbolic.py: base names over a template
    b = make(terms, dyn) if make is not None else Base(x.elab, terms, dyn)
    if getattr(x, "_cat_static", None) is None:
        x._cat_static = {}
    b._static = x._cat_static
    return b


# the reads-from pruning of may_see: sound, but over the corpus its evaluation cost more CPU
# than the variables it drops saved (docs/semantics.md §18 "Speed"): off unless asked
PRUNE_RF = False


def may_see(x: Execution, cat) -> tuple:
    """The file's own static may / must sets (docs/semantics.md §18 "Speed"; the reference
    engine's reference/cat_engine.py _choices, over this encoding): the value statement
    evaluated three-valued over every model (_TriDyn, cat/eval.py TriMaskAlgebra) gives the
    writes each read may see in some model and the reads definite in every one. A read takes
    its value from a write only when the write is in its may-see and the read is definite,
    so every other reads-from variable is dropped (x.rf_var). (A second evaluation over the
    variables left is as sound, but dropped none more on the corpus: one is made.) Returns
    (the pairs in may-see in every model, the reads definite in every model)."""
    el = x.elab
    v = cat.value
    ev = Evaluator(cat, TriMaskAlgebra(len(x.ev)),
                   _base(x, TriTerms(), _TriDyn(x, _Dyn(x))), el.spaces)
    keep, sure_ms, sure_df = set(), set(), set()
    for sp in el.spaces:
        reads = [r.id for r in x.ev if r.reads and el.space_of(r.loc) == sp]
        if not reads:
            continue
        (ms_must, ms_may) = ev.eval(v.maysee, {}, sp)
        (df_must, df_may) = ev.eval(v.definite, {}, sp)
        for r in reads:
            if df_must >> r & 1:
                sure_df.add(r)
            if not df_may >> r & 1:
                continue
            for w in range(len(x.ev)):
                if ms_may[w] >> r & 1:
                    keep.add((w, r))
                    if ms_must[w] >> r & 1:
                        sure_ms.add((w, r))
    for k in [k for k in x.rf_var if k not in keep]:
        del x.rf_var[k]
    return sure_ms, sure_df


def _lit(t) -> bool:
    return z3.is_const(t) or (z3.is_not(t) and z3.is_const(t.arg(0)))


# term inspection through the raw C calls (encode/logic.raw_c)
_BOOL_VALUE = raw_c(z3.z3core.Z3_get_bool_value)
_AST_ID = raw_c(z3.z3core.Z3_get_ast_id)
_AST_KIND = raw_c(z3.z3core.Z3_get_ast_kind)
_NUM_ARGS = raw_c(z3.z3core.Z3_get_app_num_args)
_APP_ARG = raw_c(z3.z3core.Z3_get_app_arg)
_APP = z3.z3core.Z3_APP_AST


def _z(t) -> z3.BoolRef:
    return z3.BoolVal(t) if isinstance(t, bool) else t


def _fold(t) -> B:
    if isinstance(t, bool):
        return t
    v = _BOOL_VALUE(t.ctx.ref(), t.as_ast())     # z3.is_true / is_false in one C call
    return True if v == 1 else False if v == -1 else t


def _admitted(r, i: int, by_row):
    """Of row r ([(j, term)] or None) of a result's row i, the pairs a Demand's by_row
    admits (Z3Algebra.seq, restrict_rows); None when none is."""
    if r is None or by_row is None:
        return r
    if i not in by_row:
        return None
    js = by_row[i]
    return r if js is None else [jt for jt in r if jt[0] in js]


class Z3Algebra:
    def __init__(self, x: Execution):
        self.x, self.ctx, self.n = x, x.ctx, len(x.ev)
        self.raw = 0          # inside a fixpoint: no defining variables (terms over atoms)
        self._rows: dict = {}  # id -> (relation, its pairs by row): _rows_of

    empty_falsy = True      # a value is a dict of the keys that may hold: {} is empty

    # ---- values ----
    @staticmethod
    def set_of(d: dict) -> dict:
        return {k: v for k, v in d.items() if v is not False}

    rel_of = set_of

    def _def(self, name: str, t: B) -> B:
        """A defining variable for a pair of a transitive closure (its terms nest a level per
        node: inlined, the control-flow corpus encoded 1.5x slower), unless the term is a
        variable already or its negation. A named definition's pairs and a let rec's are
        inlined instead (the evaluator keeps their dicts as they are: Z3 shares equal subterms; a defining variable is one more
        variable in every check and every model: 2,400 of them made ops-per-thread n=4 list
        its 18,303 outcomes 1.7x slower)."""
        if _lit(t):
            return t
        return self.ctx.define(name, t)

    @staticmethod
    def empty(sort: str) -> dict:
        return {}

    @staticmethod
    def union(sort, a: dict, b: dict) -> dict:
        if not a:
            return b
        if not b:
            return a
        out = dict(a)
        for k, t in b.items():
            out[k] = OR(out[k], t) if k in out else t
        return out

    @staticmethod
    def inter(sort, a: dict, b: dict) -> dict:
        out = {}
        for k, t in a.items():
            u = b.get(k, False)
            if u is not False:
                v = AND(t, u)
                if v is not False:
                    out[k] = v
        return out

    @staticmethod
    def diff(sort, a: dict, b: dict) -> dict:
        out = {}
        for k, t in a.items():
            u = b.get(k, False)
            v = t if u is False else AND(t, NOT(u))
            if v is not False:
                out[k] = v
        return out

    def compl(self, sort, a: dict) -> dict:
        keys = (range(self.n) if sort == "set"
                else ((i, j) for i in range(self.n) for j in range(self.n)))
        out = {}
        for k in keys:
            v = NOT(a.get(k, False))
            if v is not False:
                out[k] = v
        return out

    # the evaluator asks for a value on the keys it needs only (cat/eval.py Evaluator.within)
    # from this many events: below, its bookkeeping per node costs more than the terms it
    # saves (benchmarks/model_file.py)
    DEMAND_FROM = 12

    @property
    def demand(self) -> bool:
        return self.n >= self.DEMAND_FROM

    def _rows_of(self, b: dict) -> dict:
        """b's pairs by row, k -> [(j, term)]: kept for the encoding's life (b with it, so
        that its id is not reused) when b is large, as the right side of several
        compositions usually is (a named relation, a level's value in every round)."""
        ent = self._rows.get(id(b))
        if ent is not None:
            return ent[1]
        rows: dict = {}
        for (k, j), t in b.items():
            rows.setdefault(k, []).append((j, t))
        if len(b) >= 16:
            self._rows[id(b)] = (b, rows)
        return rows

    def seq(self, a: dict, b: dict, D=None) -> dict:
        """a ; b, on the pairs Demand D admits (cat/eval.py), every pair when D is None."""
        if not a or not b:
            return {}
        rows = self._rows_of(b)
        by_row = None if D is None else D.by_row()
        acc: dict = {}          # pair -> its steps, or True once a step is constant-true
        for (i, k), t1 in a.items():
            r = _admitted(rows.get(k), i, by_row)
            if r is None:
                continue
            for j, t2 in r:
                ts = acc.get((i, j))
                if ts is True:
                    continue
                # the terms are never False (relations keep true pairs only); a True side
                # is the other side, without the generic folding
                v = t2 if t1 is True else t1 if t2 is True else AND(t1, t2)
                if v is True:
                    acc[(i, j)] = True
                elif v is not False:
                    if ts is None:
                        acc[(i, j)] = [v]
                    else:
                        ts.append(v)
        out = {}
        for key, ts in acc.items():
            v = True if ts is True else ts[0] if len(ts) == 1 else OR(ts)
            if v is not False:
                out[key] = v
        return out

    def restrict_rows(self, s: dict, b: dict, D=None) -> dict:
        """[s] ; b: b's pairs whose row is in s, each with s's term of its row (cat/eval.py
        Evaluator._filter); the pairs, terms and order of seq(ident(s), b). With a Demand D,
        the pairs D admits (and perhaps more), as seq."""
        if not s or not b:
            return {}
        rows = self._rows_of(b)
        by_row = None if D is None else D.by_row()
        out = {}
        for i, t1 in s.items():
            r = _admitted(rows.get(i), i, by_row)
            if r is None:
                continue
            if t1 is True:
                for j, t2 in r:
                    out[(i, j)] = t2
                continue
            for j, t2 in r:
                v = t1 if t2 is True else AND(t1, t2)
                if v is not False:
                    out[(i, j)] = v
        return out

    @staticmethod
    def restrict_cols(a: dict, s: dict, D=None) -> dict:
        """a ; [s]: a's pairs whose column is in s, each with s's term of its column; the
        pairs, terms and order of seq(a, ident(s)). With a Demand D, the pairs D admits (and
        perhaps more), as seq."""
        if not a or not s:
            return {}
        by_row = None if D is None else D.by_row()
        out = {}
        for (i, k), t1 in a.items():
            t2 = s.get(k)
            if t2 is None:
                continue
            if by_row is not None:
                js = by_row.get(i, ())
                if js is not None and k not in js:
                    continue
            v = t2 if t1 is True else t1 if t2 is True else AND(t1, t2)
            if v is not False:
                out[(i, k)] = v
        return out

    @staticmethod
    def inv(a: dict) -> dict:
        return {(j, i): t for (i, j), t in a.items()}

    def plus(self, a: dict) -> dict:
        prev, self.ctx.current = self.ctx.current, F.STRUCTURE   # a definition: untracked
        try:
            return self._plus(a)
        finally:
            self.ctx.current = prev

    def _plus(self, a: dict) -> dict:
        rows: dict = {}
        for (i, j), t in a.items():
            rows.setdefault(i, {})[j] = t
        nodes = sorted({i for i, _ in a} | {j for _, j in a})
        for k in nodes:
            tick()
            out_k = rows.get(k)
            if not out_k:
                continue
            for i in nodes:
                r = rows.get(i)
                if r is None or k not in r:
                    continue
                tik = r[k]
                for j, tkj in list(out_k.items()):
                    old = r.get(j, False)
                    if old is True:
                        continue
                    step = AND(tik, tkj)
                    if step is False:
                        continue
                    new = OR(old, step)
                    if new is True or self.raw:
                        r[j] = new
                    else:
                        r[j] = self._def(f"tc_{i}_{j}", new)
        return {(i, j): t for i, r in rows.items() for j, t in r.items()}

    def star(self, a: dict) -> dict:
        out = self.plus(a)
        for i in range(self.n):
            out[(i, i)] = True
        return out

    def opt(self, a: dict) -> dict:
        out = dict(a)
        for i in range(self.n):
            out[(i, i)] = True
        return out

    @staticmethod
    def ident(s: dict) -> dict:
        return {(i, i): t for i, t in s.items()}

    @staticmethod
    def domain(a: dict) -> dict:
        acc: dict = {}
        for (i, _), t in a.items():
            acc.setdefault(i, []).append(t)
        return {i: v for i, ts in acc.items() if (v := OR(ts)) is not False}

    @staticmethod
    def range_(a: dict) -> dict:
        acc: dict = {}
        for (_, j), t in a.items():
            acc.setdefault(j, []).append(t)
        return {j: v for j, ts in acc.items() if (v := OR(ts)) is not False}

    @staticmethod
    def cross(a: dict, b: dict) -> dict:
        out = {}
        for i, t in a.items():
            for j, u in b.items():
                v = AND(t, u)
                if v is not False:
                    out[(i, j)] = v
        return out

    # ---- least fixpoints ----
    def fixpoint(self, keys: list, sorts: dict, F_, guarded: bool = False) -> dict:
        """`guarded`: the group's recursion goes through a relation the model's axioms make
        acyclic (cat/wf.py); used when this encoding asserts those axioms in every check
        (Execution.guarded_fixpoints)."""
        prev, self.ctx.current = self.ctx.current, F.STRUCTURE   # a definition: untracked
        try:
            return self._fixpoint(keys, F_, guarded
                                  and getattr(self.x, "guarded_fixpoints", False))
        finally:
            self.ctx.current = prev

    def _fixpoint(self, keys: list, F, guarded: bool = False) -> dict:
        supp = {k: set() for k in keys}
        atoms: dict = {}

        def atom(k, p):
            a = atoms.get((k, p))
            if a is None:
                a = atoms[(k, p)] = self.ctx.fresh_bool(f"fix_{k[0]}_{p}")
            return a
        self.raw += 1
        try:
            while True:
                tick()
                cur = {k: {p: atom(k, p) for p in supp[k]} for k in keys}
                out = F(cur)
                grown = False
                for k in keys:
                    s = {p for p, t in out[k].items() if t is not False}
                    if not s <= supp[k]:
                        supp[k] |= s
                        grown = True
                if not grown:
                    break
        finally:
            self.raw -= 1
        by_id = {a.get_id(): kp for kp, a in atoms.items()}
        terms = {(k, p): t for k in keys for p, t in out[k].items() if t is not False}
        deps = _atoms_in_all(terms, by_id)
        known: dict = {}
        for comp in _sccs(list(terms), deps):
            cyclic = len(comp) > 1 or comp[0] in deps[comp[0]]
            if not cyclic:
                e = comp[0]
                known[e] = self._subst(terms[e], deps[e], known, atoms)
                continue
            if guarded:
                # docs/semantics.md §18 "Guarded recursion": in every execution the axioms
                # allow, the equations atom = term have one solution, the least fixpoint;
                # each pair's atom is its defining variable (no Kleene rounds): only the
                # atoms of earlier components are substituted, the component's own stay
                members = set(comp)
                for e in comp:
                    self.ctx.add(IFF(atoms[e], self._subst(terms[e], deps[e] - members, known,
                                                           atoms)))
                known.update((e, atoms[e]) for e in comp)
                continue
            vals = {e: False for e in comp}
            for _ in range(len(comp)):
                tick()
                cur = {**known, **vals}
                vals = {e: self._subst(terms[e], deps[e], cur, atoms) for e in comp}
            known.update(vals)
        res = {k: {} for k in keys}
        for (k, p), v in known.items():
            if v is not False:
                res[k][p] = v
        return res

    @staticmethod
    def _subst(t, dep: set, values: dict, atoms: dict) -> B:
        if isinstance(t, bool) or not dep:
            return t
        pairs = [(atoms[d], values.get(d, False)) for d in dep]
        u = _substitute(t, [(a, _z(v)) for a, v in pairs])
        if all(not isinstance(v, bool) for _, v in pairs):
            return u        # no constant went in: nothing for simplify to fold (AND / OR /
                            # NOT built the terms folding every constant already)
        return _fold(z3.simplify(u))

    # ---- axioms ----
    def assert_axiom(self, kind: str, a: dict) -> None:
        c = self.ctx
        if kind == "empty":
            for t in a.values():
                c.add(NOT(t))
            return
        if kind == "irreflexive":
            for (i, j), t in a.items():
                if i == j:
                    c.add(NOT(t))
            return
        if getattr(self.x, "acyclic_by_closure", False):
            # synth/symbolic.py: acyclic as an irreflexive closure (defining variables only,
            # no existential ranks: a counterexample execution then fixes every choice)
            for (i, j), t in self.plus(a).items():
                if i == j:
                    c.add(NOT(t))
            return
        rank: dict = {}
        for (i, j), t in a.items():
            if i == j:
                c.add(NOT(t))
                continue
            for v in (i, j):
                if v not in rank:
                    rank[v] = c.fresh_int(f"rank_{v}")
            c.add(IMPLIES(t, rank[i] < rank[j]))


def _atoms_in_all(terms: dict, by_id: dict) -> dict:
    """For each term, the fixpoint atoms (ids in by_id) it mentions: one walk of the terms'
    shared DAG, each node's atoms computed once (the terms of one fixpoint share most of their
    subterms: walked term by term, the control-flow corpus spent 15 % of its file encoding
    here), through the C functions without z3py's per-call error check."""
    out: dict = {}
    memo: dict = {}         # node id -> frozenset of the atoms below it
    empty = frozenset()
    for e, t in terms.items():
        if isinstance(t, bool):
            out[e] = set()
            continue
        ctx = t.ctx.ref()
        root = _AST_ID(ctx, t.as_ast())
        if root not in memo:
            kids: dict = {}
            stack = [(t.as_ast(), root)]
            while stack:
                a, i = stack.pop()
                if i in memo:
                    continue
                if i in by_id:
                    memo[i] = frozenset((by_id[i],))
                    continue
                ks = kids.get(i)
                if ks is None:
                    n = _NUM_ARGS(ctx, a) if _AST_KIND(ctx, a) == _APP else 0
                    if n == 0:
                        memo[i] = empty
                        continue
                    ks = []
                    for k in range(n):
                        c = _APP_ARG(ctx, a, k)
                        ks.append((c, _AST_ID(ctx, c)))
                    kids[i] = ks
                    stack.append((a, i))
                    stack.extend(kc for kc in ks if kc[1] not in memo)
                    continue
                sets = [memo[ci] for _, ci in ks if memo[ci]]
                memo[i] = (empty if not sets else sets[0] if len(sets) == 1
                           else frozenset().union(*sets))
        out[e] = set(memo[root])
    return out


def _substitute(t, pairs: list):
    """z3.substitute without the wrapper's per-pair checks (the pairs are Booleans of one
    context, built here)."""
    n = len(pairs)
    src = (z3.Ast * n)(*[a.as_ast() for a, _ in pairs])
    dst = (z3.Ast * n)(*[b.as_ast() for _, b in pairs])
    return z3.BoolRef(z3.z3core.Z3_substitute(t.ctx.ref(), t.as_ast(), n, src, dst), t.ctx)


def _sccs(nodes: list, deps: dict) -> list:
    """Strongly connected components, each after every component it depends on (Tarjan,
    iterative)."""
    index: dict = {}
    low: dict = {}
    on: set = set()
    stack: list = []
    out: list = []
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(deps.get(root, ()), key=repr)))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in deps:
                    continue
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(deps.get(w, ()), key=repr))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                u = work[-1][0]
                low[u] = min(low[u], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(comp)
    return out


def encode(x: Execution, path: str, static=None) -> None:
    """The rules of model file `path` over the execution's choices (reads-from, coherence,
    which writes happen): the value statement and every axiom. `static`: may_see's result
    (what is constant in every model), or None."""
    el = x.elab
    cat = load_cached(path)
    refuse_unsupported(el, path)
    sms, sdf = static if static is not None else (set(), set())
    alg = Z3Algebra(x)
    ev = Evaluator(cat, alg, _base(x, _Terms(), _Dyn(x)), el.spaces, _shared(x),
                   level_classes=LEVEL_CLASSES)
    v = cat.value
    # explain names this family by the value statement's name, the axioms' by theirs
    # (docs/semantics.md §18 "Explain under a model file"); definitions are untracked
    with x.ctx.family(F.READ_VALUE):
        for sp in el.spaces:
            reads = [r for r in x.ev if r.reads and el.space_of(r.loc) == sp]
            if not reads:
                continue
            ms = ev.eval(v.maysee, {}, sp)
            df = ev.eval(v.definite, {}, sp)
            for r in reads:
                ws = [w for w in el.writes_to(r.loc) if w.id != r.id]
                definite = df.get(r.id, False)
                if r.id in sdf:                         # definite in every model
                    definite = True
                rfs = [x.rf(w, r) for w in ws]
                for w in ws:
                    t = x.rf(w, r)
                    if t is False:
                        continue
                    m = True if (w.id, r.id) in sms else ms.get((w.id, r.id), False)
                    x.ctx.add(IMPLIES(t, AND(definite, m)))
                x.ctx.add(IMPLIES(definite, OR(rfs)))
                x.ctx.add(IMPLIES(NOT(definite), x.rundef[r.id]))
                if r.id in x.rmask:      # undef by the value rule: every byte (docs 15.4)
                    x.ctx.add(IMPLIES(NOT(definite), x.rmask[r.id] == values.ALL))
                values._reads_from(x, r, ws, rfs)
    x.flags = []
    for ax in cat.axioms:
        if ax.flag:
            # `flag ~empty e as NAME` (docs/model-language.md; docs/semantics.md §18, reported
            # as 10.6): not an axiom; an execution where e is not empty is undefined (x.ub, so
            # not a defined execution; solve.py asks whether one exists)
            terms = [t for sp in ev.spaces_of(ax.expr, el.spaces)
                     for t in ev.eval(ax.expr, {}, sp).values()]
            t = OR(*terms) if terms else False
            if t is not False:
                x.flags.append((z3.BoolVal(True) if t is True else t, ax.name, ax.file, ax.line))
                x.ub = OR(x.ub, t)
            continue
        with x.ctx.family(ax.name):
            for sp in ev.spaces_of(ax.expr, el.spaces):
                alg.assert_axiom(ax.kind, ev.eval(ax.expr, {}, sp))


GUARDED = True      # docs/semantics.md §18 "Guarded recursion" (tests turn it off to compare)
LEVEL_CLASSES = True    # docs/semantics.md §18 "Levels that cannot differ" (likewise)


def encode_model_file(elab, explaining: bool = False, prune=None,
                      guarded: bool = True) -> Execution:
    """The whole encoding under a model file: the engine's machinery (choices, write values,
    final values, control flow) around the file's rules. `prune` (default PRUNE_RF): drop the reads-from
    variables the file's value statement excludes in every model (may_see); not when
    explaining (a core names the rule that excludes a pair, as the hand encoder keeps every
    pair then) nor for conflicting_rules (a rule it deletes may be what excluded a pair)."""
    x = Execution(elab, explaining, all_rf=True)
    # a let rec through a relation the axioms make acyclic: one equation per pair (cat/wf.py),
    # only where every axiom is asserted in every check (not when explaining, nor for
    # conflicting_rules, which deletes axioms)
    x.guarded_fixpoints = guarded and GUARDED and not explaining
    refuse_unsupported(elab, elab.model.cat)
    if elab.barrier is not None:   # docs 10.4: the run chosen among the defined ones (machinery)
        from . import barrier
        with x.ctx.family(F.BARRIER):
            barrier.encode_choice(x, barrier.analyse(elab, all_pairs=True))
    with x.ctx.family(F.WRITE_VALUES):
        values.write_values(x)
    with x.ctx.family(F.ASYNC):    # S004: an async copy writes what its read returned
        async_ops.write_values(x)
    static = None
    if prune is None:
        prune = PRUNE_RF
    if prune and not explaining:
        static = may_see(x, load_cached(elab.model.cat))
    encode(x, elab.model.cat, static)
    with x.ctx.family(F.STRUCTURE):
        values.final_values(x)
    with x.ctx.family(F.CONTROL):
        control.control(x)
    return x


def conflicting_rules(elabs, timeout_ms: int = 60_000):
    """warning[model-inconsistent] (docs/semantics.md §18): when the model file allows no
    execution of a test (`elabs`: its straight-line code, or every path combination of it), a
    minimal set of its rules (indices into cat.rules: the value statement, the axioms) that
    conflict, found by deleting each rule in that order while the rest still allow no
    execution; None when some execution exists, when the execution structure alone has none,
    or when the solver gives up. Every constraint is guarded by the rule it belongs to (its
    family), except the definitions of derived relations (`v == expr`, fresh v), which hold
    in every reading."""
    if not isinstance(elabs, (list, tuple)):
        elabs = [elabs]
    cat = load_cached(elabs[0].model.cat)
    rs = rules(cat)
    fam = {F.READ_VALUE: 0}
    for i, ax in enumerate(rs[1:], 1):
        fam.setdefault(ax.name, i)
    guard = [z3.Bool(f"rule#{i}") for i in range(len(rs))]
    solvers = []
    for elab in elabs:
        x = encode_model_file(elab, prune=False, guarded=False)
        s = z3.SimpleSolver()
        s.set("timeout", max(1, int(timeout_ms)))
        for c, f in zip(x.ctx.constraints, x.ctx.families):
            g = fam.get(f)
            if g is None or (z3.is_eq(c) and z3.is_const(c.arg(0))
                             and "#" in c.arg(0).decl().name()):
                s.add(c)
            else:
                s.add(z3.Implies(guard[g], c))
        s.add(_z(NOT(x.ub)))
        r = s.check()
        if r == z3.unknown:
            return None
        if r == z3.sat:           # a combination with no execution even without the rules
            solvers.append(s)     # says nothing about them
    if not solvers:
        return None

    def none_with(keep: list):
        rs_ = [s.check(*[guard[k] for k in keep]) for s in solvers]
        return None if z3.unknown in rs_ else all(r == z3.unsat for r in rs_)
    keep = sorted(set(fam.values()))
    if none_with(keep) is not True:
        return None
    for i in list(keep):
        trial = [k for k in keep if k != i]
        r = none_with(trial)
        if r is None:
            return None
        if r:
            keep = trial
    return keep
