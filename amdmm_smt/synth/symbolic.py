"""Synthesis, part 3: the symbolic search (issue 29 item 2; docs/semantics.md §17.9).

The enumerative search (search.py) solves every program of the vocabulary. This one asks Z3,
for each *skeleton* (the threads, each slot's instruction kind and locations, the placement
and the target), one question: is there a choice of every slot's attributes (its memory
order, scope, flags: one integer variable per slot, ranging over the vocabulary's shapes of
that kind) on which version A has a final state that version B forbids? A skeleton stands
for every program with that structure, so the choices of attributes, which multiply the
number of programs (orders x scopes x flags per slot), are one query instead of many.

How one skeleton is asked (a 2QBF: exists choice, A-execution . forall B-execution . not
(B-consistent and same final state)), by counterexample-guided refinement (CEGIS):
- A's and B's rules come from their model files (docs/semantics.md §18; models/*.cat), compiled
  by encode/cat_z3.py over *template base names*: every base set or relation that depends on
  an event's attributes (Atomic, RelOrd, ScGe, incl, poc, ...) is the disjunction, over the
  slot's choices, of "slot chose j" and its value for the event elaborated with choice j
  (TemplateBase). The attributes come from elaborating each shape alone (so the same
  elaboration code decides them) and are checked to leave the event structure unchanged.
- The main solver holds A's template encoding: a model is a candidate choice with an
  A-execution and its final state. B's template encoding, with the choice fixed, says whether
  B has that state. If not, the candidate is a difference (confirmed on the concrete program
  by both hand-written encoders, search.compare: the symbolic engine is never the judge). If
  B has it, B's execution (every variable of B's encoding but the choice and the defining
  variables) is added as a counterexample: "this B-execution is not B-consistent with A's
  state", a formula over the choice alone. acyclic axioms are encoded as irreflexive closures
  here, so a counterexample fixes every existential of B's encoding.
- Unsat: no choice of attributes of this skeleton tells A from B in that direction (exact,
  over the vocabulary's shapes). Both directions are asked.

What it searches: the memory instructions of the vocabulary (st ld rmw cas fence av, their
orders, scopes and flags); the placement and target are enumerated (a skeleton each).
Barrier, async, control-flow and call vocabularies are the enumerative search's.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field, replace
from typing import Optional

import z3

from ..cat.base import BASE, Base
from ..elaborate.events import elaborate
from ..encode import cat_z3
from ..encode import families as F
from ..encode.execution import Execution
from ..encode.logic import AND, NOT, OR, Ctx
from ..errors import LitmusError
from ..model import ENGINE_OPTIONS, Model, get_model
from ..outcomes import projection
from ..solve import term_z3
from . import programs as P
from .search import Compared, Found, Layer, Search, compare, minimise, test_of

# the instruction kinds the symbolic search takes (their attributes are per-event fields)
KINDS = ("st", "ld", "rmw", "cas", "fence", "av")
ATTRS = ("atomic", "volatile", "order", "fail_order", "scope", "one_as", "av_none", "tags")
# base names that depend on the skeleton only (events, threads, locations, placement)
# base names that depend on the placement (elaborate/events.py Elab.contains, .inclusive)
PLACED = ("contains", "incl")
SKELETON_ONLY = ("po", "loc", "ext", "int", "contains", "id", "E", "I", "T", "W", "R", "F",
                 "M", "RMW", "Lds", "AvIntr", "Here")
MAX_ROUNDS = 400          # counterexamples per skeleton and direction before "undecided"


# ---- which model file a version is --------------------------------------------------------

def cat_of(m: Model) -> Model:
    """The version with its rules read from a model file: its own, the shipped file of its
    name, or (a shipped version with one rule option changed, as `synth --option` makes it)
    the option's file of models/options/ when the base is seed. Engine options stay options.
    A version no file expresses is an input error."""
    if m.cat:
        return m
    from ..model import shipped_models_dir
    import os
    d = shipped_models_dir()
    base_name = m.name.split("+")[0]
    try:
        base = get_model(base_name)
    except LitmusError:
        base = None
    if d is None or base is None:
        raise LitmusError(f"synth --symbolic: no model file for version '{m.name}'")
    rule_diff = [(f, getattr(m.options, f)) for f in vars(m.options)
                 if f not in ENGINE_OPTIONS and getattr(m.options, f) != getattr(base.options, f)]
    path = os.path.join(d, base_name + ".cat")
    if rule_diff:
        if base_name != "seed" or len(rule_diff) != 1:
            raise LitmusError(f"synth --symbolic: no model file expresses '{m.name}' (one rule "
                              f"option over seed has models/options/OPTION-VALUE.cat)")
        k, v = rule_diff[0]
        path = os.path.join(d, "options", f"{k}-{str(v).lower() if isinstance(v, bool) else v}"
                                          ".cat")
    if not os.path.isfile(path):
        raise LitmusError(f"synth --symbolic: no model file for version '{m.name}' ({path})")
    return replace(m, cat=os.path.abspath(path))


# ---- skeletons ----------------------------------------------------------------------------

def _class(shape: tuple) -> tuple:
    return (shape[0], shape[4])


def choices_of(v: P.Vocab) -> dict:
    """(kind, spaces) -> the vocabulary's shapes of that kind and spaces."""
    out: dict = {}
    for s in P.shapes(v):
        if s[0] in ("st", "ld", "rmw", "cas", "fence", "avst", "avld"):
            out.setdefault(_class(s), []).append(s)
    return out


def unsupported(v: P.Vocab) -> list:
    return [k for k in v.kinds if k not in KINDS]


def skeletons(v: P.Vocab, threads: int, events: int, locations: int):
    """Every canonical skeleton: a Program whose instructions carry their kind and locations
    only (order, scope, flags ''), deterministic order."""
    classes = sorted(choices_of(v))
    same = ((0, 0, 0, 0),) * threads
    for target in v.targets:
        for comp in P._compositions(events, threads):
            n = sum(comp)
            for seq in itertools.product(classes, repeat=n):
                shapes = [(k, "", "", (), need) for k, need in seq]
                for th, sp in P._assign_locs(shapes, comp, locations):
                    p = P.Program(same, th, sp, target)
                    if P.observable(p) and p.key() == P.canonical(p).key():
                        yield p


def placements_of(skel: P.Program, v: P.Vocab) -> list:
    """The placements a skeleton is searched in (the placement is a choice of the query): all
    of the vocabulary's for its threads in their order (the skeleton is canonical up to
    thread permutation with the placement left out, so every program is some thread
    permutation of one of these), LDS used within one workgroup."""
    return [plc for plc in P.placements(len(skel.threads), v.placements)
            if P.lds_ok(replace(skel, placement=plc))]


def instantiate(skel: P.Program, shapes: list) -> P.Program:
    """The concrete program of a skeleton: slot k (threads in order, program order) takes
    shapes[k]."""
    it = iter(shapes)
    th = tuple(tuple(next(it)[:4] + (ins[4],) for ins in t) for t in skel.threads)
    return replace(skel, threads=th)


# ---- per-shape attributes ----------------------------------------------------------------

_ATTR_CACHE: dict = {}


def attrs_of(shape: tuple, model: Model, target: str):
    """The attribute fields of the event a shape elaborates to, alone in a program (None when
    the frontend or elaboration refuses it)."""
    key = (shape, model.name, model.cat, target)
    if key not in _ATTR_CACHE:
        spaces = tuple(shape[4]) if shape[4] else ("global",)
        ins = shape[:4] + ((0,) if shape[4] else (),)
        prog = P.Program(((0, 0, 0, 0),), ((ins,),), spaces if shape[4] else (), target)
        try:
            el = elaborate(test_of(prog), model)
            ev = [e for e in el.events if not e.is_init]
            _ATTR_CACHE[key] = ({a: getattr(ev[0], a) for a in ATTRS}, ev[0].kind)
        except LitmusError:
            _ATTR_CACHE[key] = None
    return _ATTR_CACHE[key]


# ---- the template ------------------------------------------------------------------------

class _Ctx(Ctx):
    """A Ctx whose variable names do not collide with another encoding's in one Z3 context,
    and which knows its defining variables."""
    def __init__(self, offset: int):
        super().__init__(False)
        self._n = offset
        self.def_vars: list = []
        self.def_idx: set = set()

    def define(self, name, expr):
        v = super().define(name, expr)
        if not isinstance(expr, bool):
            self.def_vars.append(v)
            self.def_idx.add(len(self.constraints) - 1)
        return v


class _TExec(Execution):
    def __init__(self, elab, offset: int):
        self._offset = offset
        super().__init__(elab, False, all_rf=True)

    def _declare(self) -> None:
        self.ctx = _Ctx(self._offset)
        super()._declare()


def _combine(outs: list, sel: dict) -> dict:
    """outs[j]: a base value with every slot at choice j (events without choices in outs[0]
    only); the template value: per key, the choices under which it holds."""
    keys = set().union(*[set(o) for o in outs]) if outs else set()
    res = {}
    for k in keys:
        c = sel.get(k)
        if c is None:
            t = outs[0].get(k, False)
        else:
            ts = [o.get(k, False) for o in outs[:len(c)]]
            if all(t is True for t in ts):
                t = True
            else:
                t = OR(*[AND(c[j], ts[j]) for j in range(len(c)) if ts[j] is not False])
        if t is not False:
            res[k] = t
    return res


class TemplateBase(Base):
    """The base names of a skeleton, each a term over the slots' choice variables
    (module docstring)."""
    BY_ROWS = False     # a slot's variants differ in scope and kind: pair by pair (cat/base.py)

    def __init__(self, elab, terms, dyn, variants: dict, sel: dict, els: list, psel: list):
        super().__init__(elab, terms, dyn)
        self.rep = list(self.ev)
        self.els, self.psel = els, psel     # the elaboration per placement, "placement p"
        self.variants = variants        # event id -> [Event per choice] (slots only)
        self.sel = sel                  # event id -> [term "slot chose j"]
        self.maxc = max((len(v) for v in variants.values()), default=1)
        self._plain = False

    def _per_choice(self, f) -> list:
        outs = []
        for j in range(self.maxc):
            self.ev = [self.variants[e.id][j] if e.id in self.variants else e
                       for e in self.rep
                       if e.id not in self.variants or j < len(self.variants[e.id])]
            if j > 0:
                self.ev = [e for e in self.ev if e.id in self.variants]
            try:
                outs.append(f())
            finally:
                self.ev = self.rep
        return outs

    def _compute(self, name, lv, sp):
        if name in PLACED and len(self.els) > 1:
            outs = []
            for el in self.els:
                self.el = el
                try:
                    outs.append(self._compute_here(name, lv, sp))
                finally:
                    self.el = self.els[0]
            keys = set().union(*[set(o) for o in outs])
            res = {}
            for k in keys:
                ts = [o.get(k, False) for o in outs]
                t = True if all(t is True for t in ts) else OR(
                    *[AND(self.psel[p], t) for p, t in enumerate(ts) if t is not False])
                if t is not False:
                    res[k] = t
            return res
        return self._compute_here(name, lv, sp)

    def _compute_here(self, name, lv, sp):
        if name in SKELETON_ONLY:
            self._plain = True
            try:
                return super()._compute(name, lv, sp)
            finally:
                self._plain = False
        if BASE[name][0] == "set":
            return _combine(self._per_choice(lambda: super(TemplateBase, self)._compute(
                name, lv, sp)), self.sel)
        return super()._compute(name, lv, sp)

    def _dynamic(self, name):
        if name in ("Rel", "Acq", "SC"):
            return _combine(self._per_choice(lambda: super(TemplateBase, self)._dynamic(name)),
                            self.sel)
        return super()._dynamic(name)

    def _rel(self, pred, domain=None):
        if self._plain:
            return super()._rel(pred, domain)
        evs = domain if domain is not None else self.rep
        out = {}
        for a in evs:
            va = self.variants.get(a.id, [a])
            sa = self.sel.get(a.id, [True])
            for b in evs:
                if a.id == b.id:
                    ts = [sa[j] for j in range(len(va)) if pred(va[j], va[j])]
                    if len(ts) == len(va):
                        out[(a.id, b.id)] = True
                    elif ts:
                        out[(a.id, b.id)] = OR(*ts)
                    continue
                vb = self.variants.get(b.id, [b])
                sb = self.sel.get(b.id, [True])
                hits = [(i, j) for i in range(len(va)) for j in range(len(vb))
                        if pred(va[i], vb[j])]
                if not hits:
                    continue
                if len(hits) == len(va) * len(vb):
                    out[(a.id, b.id)] = True
                    continue
                out[(a.id, b.id)] = OR(*[AND(sa[i], sb[j]) for i, j in hits])
        return out


@dataclass
class Template:
    skel: P.Program
    model: Model
    x: Execution
    terms: list                 # (undef, value, poison) per projected term
    ub: object


def build_template(skel: P.Program, model: Model, slots: list, sel: dict, choices: list,
                   plcs: list, psel: list, offset: int) -> Template:
    """The encoding of `model` (a version with its model file) over the skeleton: slots[k] =
    (thread, pos); choices[k] the shapes slot k ranges over; sel: (thread, pos) -> [term];
    plcs the placements, psel[p] the term "placement p"."""
    rep = instantiate(replace(skel, placement=plcs[0]), [c[0] for c in choices])
    test = test_of(rep)
    el = elaborate(test, model)
    els = [el] + [elaborate(test_of(replace(rep, placement=p)), model) for p in plcs[1:]]
    variants, sel_ev = {}, {}
    slot_of = {s: k for k, s in enumerate(slots)}
    for e in el.events:
        if e.is_init:
            continue
        k = slot_of[(e.thread, e.pos)]
        vs = []
        for sh in choices[k]:
            a = attrs_of(sh, model, skel.target)
            if a is None or a[1] != e.kind:
                raise LitmusError(f"synth --symbolic: shape {sh} does not elaborate alone")
            vs.append(replace(e, **a[0]))
        if len(vs) > 1:
            variants[e.id] = vs
            sel_ev[e.id] = sel[(e.thread, e.pos)]
    x = _TExec(el, offset)
    x.acyclic_by_closure = True
    x.make_base = lambda terms, dyn: TemplateBase(el, terms, dyn, variants, sel_ev, els,
                                                     psel)
    cat_z3.refuse_unsupported(el, model.cat)
    from ..encode import values, control, async_ops
    with x.ctx.family(F.WRITE_VALUES):
        values.write_values(x)
    with x.ctx.family(F.ASYNC):
        async_ops.write_values(x)
    cat_z3.encode(x, model.cat, None)
    with x.ctx.family(F.STRUCTURE):
        values.final_values(x)
    with x.ctx.family(F.CONTROL):
        control.control(x)
    _, pterms = projection(test)
    return Template(skel, model, x, [term_z3(x, t) for t in pterms], x.ub)


def _z(t):
    return z3.BoolVal(t) if isinstance(t, bool) else t


def _eq(a: tuple, b: tuple):
    """Two projected terms show the same value (solve.cond_z3's equality)."""
    (au, av, ap), (bu, bv, bp) = a, b
    return OR(AND(ap, bp), AND(au, bu, NOT(ap), NOT(bp)), AND(NOT(au), NOT(bu), av == bv))


def _consts(ts) -> list:
    """The uninterpreted constants of some terms (through Z3's C API)."""
    core = z3.z3core
    out, seen = {}, set()
    stack = [t for t in ts if not isinstance(t, bool)]
    if not stack:
        return []
    ctx = stack[0].ctx
    stack = [t.as_ast() for t in stack]
    app = core.Z3_APP_AST
    while stack:
        a = stack.pop()
        i = core.Z3_get_ast_id(ctx.ref(), a)
        if i in seen:
            continue
        seen.add(i)
        if core.Z3_get_ast_kind(ctx.ref(), a) != app:
            continue
        n = core.Z3_get_app_num_args(ctx.ref(), a)
        if n == 0:
            d = core.Z3_get_app_decl(ctx.ref(), core.Z3_to_app(ctx.ref(), a))
            if core.Z3_get_decl_kind(ctx.ref(), d) == z3.Z3_OP_UNINTERPRETED:
                out[i] = z3.z3._to_expr_ref(a, ctx)
            continue
        for k in range(n):
            stack.append(core.Z3_get_app_arg(ctx.ref(), a, k))
    return list(out.values())


def _subst(t, pairs: list):
    n = len(pairs)
    if not n:
        return t
    src = (z3.Ast * n)(*[a.as_ast() for a, _ in pairs])
    dst = (z3.Ast * n)(*[b.as_ast() for _, b in pairs])
    return z3.BoolRef(z3.z3core.Z3_substitute(t.ctx.ref(), t.as_ast(), n, src, dst), t.ctx)


@dataclass
class Asked:
    """One skeleton, one direction."""
    differs: bool = False
    decided: bool = True
    choice: Optional[list] = None       # the shapes of a difference
    rounds: int = 0


def _direction(ta: Template, tb: Template, sel_vars: list, sel_dom: list,
               timeout_ms: int) -> Asked:
    """Is there a choice and a state A allows and B forbids? (CEGIS, module docstring)"""
    s = z3.Solver()
    s.set("timeout", timeout_ms)
    for c in ta.x.ctx.constraints:
        s.add(_z(c))
    s.add(_z(NOT(ta.ub)))
    for c in sel_dom:
        s.add(c)
    b_cons = [_z(c) for c in tb.x.ctx.constraints]
    sb = z3.Solver()
    sb.set("timeout", timeout_ms)
    for c in b_cons:
        sb.add(c)
    sb.add(_z(NOT(tb.ub)))
    defs = set(v.get_id() for v in tb.x.ctx.def_vars)
    selids = set(v.get_id() for v in sel_vars)
    bterms = [t for tr in tb.terms for t in tr if not isinstance(t, bool)]
    xs = [c for c in _consts(b_cons + bterms + [_z(tb.ub)])
          if c.get_id() not in defs and c.get_id() not in selids]
    def_part = [b_cons[i] for i in sorted(tb.x.ctx.def_idx)]
    rest = [b_cons[i] for i in range(len(b_cons)) if i not in tb.x.ctx.def_idx]
    out = Asked()
    for rnd in range(MAX_ROUNDS):
        out.rounds = rnd + 1
        r = s.check()
        if r == z3.unsat:
            return out
        if r != z3.sat:
            out.decided = False
            return out
        m = s.model()
        cand = [m.eval(v, model_completion=True) for v in sel_vars]
        vals = [tuple(m.eval(_z(t), model_completion=True) for t in tr) for tr in ta.terms]
        sb.push()
        for v, c in zip(sel_vars, cand):
            sb.add(v == c)
        for tr, va in zip(tb.terms, vals):
            sb.add(_z(_eq(tr, va)))
        rb = sb.check()
        if rb == z3.unsat:
            sb.pop()
            out.differs = True
            out.choice = [c.as_long() for c in cand]
            return out
        if rb != z3.sat:
            sb.pop()
            out.decided = False
            return out
        mb = sb.model()
        sb.pop()
        pairs = [(c, mb.eval(c, model_completion=True)) for c in xs]
        pairs += [(d, z3.Const(f"{d}@{rnd}", d.sort())) for d in tb.x.ctx.def_vars]
        body = AND(*rest, NOT(tb.ub), *[_eq(tr, ta_t) for tr, ta_t in zip(tb.terms, ta.terms)])
        s.add(_subst(_z(AND(*def_part)) if def_part else z3.BoolVal(True), pairs))
        s.add(z3.Not(_subst(_z(body), pairs)))
    out.decided = False
    return out


@dataclass
class SkeletonResult:
    skel: P.Program
    programs: int                       # the concrete programs it stands for
    same: bool = False                  # the two template encodings are the same terms
    decided: bool = True
    found: Optional[P.Program] = None
    rounds: int = 0
    disagreement: str = ""              # a symbolic difference the hand encoders deny
    refused: bool = False               # compared program by program (the frontend refused)


_OFFSET = [0]


def ask(skel: P.Program, a: Model, b: Model, v: P.Vocab, timeout: float = 60.0
        ) -> SkeletonResult:
    """One skeleton, both directions (module docstring)."""
    ch = choices_of(v)
    slots = [(t, i) for t, th in enumerate(skel.threads) for i in range(len(th))]
    choices = []
    for (t, i) in slots:
        ins = skel.threads[t][i]
        cs = [s for s in ch[(ins[0], tuple(skel.spaces[x] for x in ins[4]))]
              if attrs_of(s, a, skel.target) is not None and attrs_of(s, b, skel.target)
              is not None]
        choices.append(cs)
    plcs = placements_of(skel, v)
    n = len(plcs)
    for c in choices:
        n *= len(c)
    res = SkeletonResult(skel, n)
    if n == 0:
        return res
    sel_vars, sel, dom = [], {}, []
    _OFFSET[0] += 1
    pv = z3.Int(f"placement@{_OFFSET[0]}")
    psel = [pv == p for p in range(len(plcs))] if len(plcs) > 1 else [True]
    if len(plcs) > 1:
        sel_vars.append(pv)
        dom.append(z3.And(pv >= 0, pv < len(plcs)))
    for k, (t, i) in enumerate(slots):
        _OFFSET[0] += 1
        s = z3.Int(f"choice_{t}_{i}@{_OFFSET[0]}")
        sel_vars.append(s)
        sel[(t, i)] = [s == j for j in range(len(choices[k]))]
        dom.append(z3.And(s >= 0, s < len(choices[k])))
    try:
        _OFFSET[0] += 10 ** 7
        ta = build_template(skel, a, slots, sel, choices, plcs, psel, _OFFSET[0])
        _OFFSET[0] += 10 ** 7
        tb = build_template(skel, b, slots, sel, choices, plcs, psel, _OFFSET[0])
    except LitmusError:
        # the frontend refuses the representative program: each program of the skeleton is
        # compared concretely instead (an invalid one is no test), so nothing is skipped
        res.refused = True
        for plc in plcs:
            for pick in itertools.product(*choices):
                prog = instantiate(replace(skel, placement=plc), list(pick))
                c = compare(prog, a, b, timeout=timeout)
                if not c.decided:
                    res.decided = False
                elif c.differs:
                    res.found = P.canonical(prog)
                    return res
        return res
    ms = int(timeout * 1000)
    for x, y in ((ta, tb), (tb, ta)):
        q = _direction(x, y, sel_vars, dom, ms)
        res.rounds += q.rounds
        if not q.decided:
            res.decided = False
            continue
        if q.differs:
            ch = q.choice[1:] if len(plcs) > 1 else q.choice
            plc = plcs[q.choice[0]] if len(plcs) > 1 else plcs[0]
            prog = P.canonical(instantiate(replace(skel, placement=plc),
                                           [choices[k][j] for k, j in enumerate(ch)]))
            c = compare(prog, a, b, prune=False, timeout=timeout)
            if c.differs:
                res.found = prog
                return res
            res.disagreement = (f"the symbolic search finds a difference on {prog} that the "
                                f"model files' concrete encoding does not")
            return res
    return res


# ---- the search -------------------------------------------------------------------------

def search(a: Model, b: Model, bound: P.Bound, max_found: int = 1, minimise_it: bool = True,
           timeout: float = 60.0, progress=None, all_sizes: bool = False) -> Search:
    """Every skeleton up to the bound, smallest first (instructions, then threads), each
    asked symbolically; a difference found is minimised and compared by the hand-written
    encoders like the enumerative search's (search._found)."""
    from .search import _found, record_found, size_done
    bad = unsupported(bound.vocab)
    if bad:
        raise LitmusError(f"synth --symbolic: the symbolic search takes the memory "
                          f"instructions ({', '.join(KINDS)}); not {', '.join(bad)}")
    fa, fb = cat_of(a), cat_of(b)
    t0 = time.perf_counter()
    res = Search(a, b, bound)
    res.symbolic = True
    res.disagreements = []
    seen: set = set()
    for events in range(1, bound.events + 1):
        for threads in range(1, min(bound.threads, events) + 1):
            layer = Layer(events, threads)
            res.layers.append(layer)
            for skel in skeletons(bound.vocab, threads, events, bound.locations):
                r = ask(skel, fa, fb, bound.vocab, timeout)
                layer.skeletons += 1
                layer.programs += r.programs
                layer.states += r.rounds
                if not r.decided:
                    layer.undecided += 1
                if r.disagreement:
                    res.disagreements.append(r.disagreement)
                if progress:
                    progress(layer)
                if r.found is None:
                    continue
                # the versions as given (the hand-written encoders for a shipped version):
                # the symbolic engine and the model files are never the judge
                c = compare(r.found, a, b, prune=False, timeout=timeout)
                if not c.differs:
                    res.disagreements.append(
                        f"the symbolic search finds a difference on {r.found} that the "
                        f"versions' own encoders do not")
                    continue
                layer.differing += 1
                if record_found(res, layer, _found(c, a, b, minimise_it, timeout), seen,
                                max_found):
                    break
            if res.stopped:
                break
        if size_done(res, all_sizes):
            break
    res.found.sort(key=lambda f: (P.size_of(f.prog), f.prog.key()))
    res.seconds = time.perf_counter() - t0
    return res
