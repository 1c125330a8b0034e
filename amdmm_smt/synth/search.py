"""Synthesis, part 2: compare two model versions on programs, search by size, minimise
(docs/semantics.md section 17).

The search is enumerative: every canonical program of the vocabulary (programs.py), by
increasing number of instructions, then threads; for each, the full outcome set under both
versions (every register, the final value of every written location, undefined behaviour). A
program whose two encodings are the same Z3 terms (same constraints, same undefined-behaviour
term, same projection; no barrier analysis) has the same outcomes under both versions without
solving: that is the pruning, and it is exact.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Optional

from ..elaborate.events import elaborate
from ..encode import encode
from ..errors import LitmusError
from ..frontend.litmus import parse_text
from ..model import Model
from ..outcomes import format_state, projection, state_sort_key
from ..solve import run_test, term_z3
from . import programs as P
from .presets import same_semantics

TIMEOUT = 60.0            # seconds per program and version (an undecided one is counted)
MAX_OUTCOMES = 4096


@dataclass
class Outcomes:
    states: frozenset
    ub: Optional[str]           # None | "some" | "every" (docs 10.6)
    ub_rule: str = ""
    decided: bool = True


@dataclass
class Compared:
    """One program under both versions. differs: a state one allows and the other forbids, or
    a difference in undefined behaviour."""
    prog: P.Program
    same_encoding: bool
    a: Optional[Outcomes] = None
    b: Optional[Outcomes] = None
    invalid: str = ""           # not a litmus test (an input error): not counted as a program

    @property
    def decided(self) -> bool:
        return self.same_encoding or bool(self.invalid) or (self.a.decided and self.b.decided)

    @property
    def differs(self) -> bool:
        if self.same_encoding or self.invalid or not self.decided:
            return False
        return self.a.states != self.b.states or self.a.ub != self.b.ub

    @property
    def states_examined(self) -> int:
        if self.same_encoding or self.invalid:
            return 0
        return len(self.a.states | self.b.states)


def _outcomes(r) -> Outcomes:
    ub = None
    rule = ""
    if r.ub:
        ub = "every" if r.ub.get("all") else "some"
        rule = str(r.ub.get("rule", ""))
    decided = r.complete and not r.thin_air and not r.limit and not r.error
    return Outcomes(frozenset(r.states), ub, rule, decided)


def _signature(test, model: Model):
    """(signature, (elab, execution)): the signature None when there is a barrier analysis
    (it is not part of the Z3 terms) or control flow."""
    el = elaborate(test, model)
    x = encode(el)
    if x.bar is not None:
        return None, (el, x)
    _, terms = projection(test)
    proj = []
    for t in terms:
        u, v, p = term_z3(x, t)
        proj.append((u if isinstance(u, bool) else u.get_id(), v.get_id(),
                     p if isinstance(p, bool) else p.get_id()))
    ub = x.ub if isinstance(x.ub, bool) else x.ub.get_id()
    return ([c.get_id() for c in x.ctx.constraints], ub, proj), (el, x)


def test_of(prog: P.Program, name: str = "synth"):
    return parse_text(P.render(prog, name), f"{name}.yaml")


def compare(prog: P.Program, a: Model, b: Model, prune: bool = True,
            timeout: float = TIMEOUT) -> Compared:
    """Both versions on one program. A program the frontend or elaboration refuses (an input
    error, e.g. a reduction that breaks a rule of the format) is `invalid`: never a
    difference."""
    try:
        return _compare(prog, a, b, prune, timeout)
    except LitmusError as e:
        return Compared(prog, False, invalid=e.message)


def _compare(prog: P.Program, a: Model, b: Model, prune: bool, timeout: float) -> Compared:
    test = test_of(prog)
    if prune and same_semantics(a, b) is True:
        return Compared(prog, True)
    ea = eb = None
    if prune:
        sa, ea = _signature(test, a)
        sb, eb = _signature(test, b)
        if sa is not None and sa == sb:
            return Compared(prog, True)
    ra = run_test(test, a, timeout=timeout, max_outcomes=MAX_OUTCOMES, encoded=ea)
    rb = run_test(test, b, timeout=timeout, max_outcomes=MAX_OUTCOMES, encoded=eb)
    return Compared(prog, False, _outcomes(ra), _outcomes(rb))


REFERENCE_EVENTS = 8       # the reference engine checks every test with at most this many


def reference_check(f: "Found", a: Model, b: Model, limit: int = 200_000) -> str:
    """The independent check (issue 29): the test's outcomes and undefined behaviour under
    both versions by the explicit-enumeration reference engine (amdmm_smt/reference), which
    shares the elaboration but not the encoding or the solver. "agrees", "DISAGREES: ...", or
    why it was not run."""
    if f.prog.events > REFERENCE_EVENTS:
        return f"not run (more than {REFERENCE_EVENTS} instructions)"
    from ..reference import run_reference
    test = test_of(f.prog)
    for m, o in ((a, f.a), (b, f.b)):
        try:
            r = run_reference(test, m, limit=limit)
        except LitmusError as e:
            return f"not run ({e.message})"
        if not r.complete or r.error:
            return f"not run ({r.why or r.error or 'incomplete'})"
        ro = _outcomes(r)
        if ro.states != o.states or ro.ub != o.ub:
            return (f"DISAGREES under {m.name}: reference {sorted(map(format_state, ro.states))}"
                    f" ub={ro.ub}, SMT {sorted(map(format_state, o.states))} ub={o.ub}")
    return "agrees"


# ---- the worker side (multiprocessing) ------------------------------------------------

_W: dict = {}


def _init_worker(a: Model, b: Model, prune: bool, timeout: float) -> None:
    _W.update(a=a, b=b, prune=prune, timeout=timeout)


def _work(prog: P.Program) -> Compared:
    return compare(prog, _W["a"], _W["b"], _W["prune"], _W["timeout"])


# ---- minimisation -----------------------------------------------------------------------

def minimise(prog: P.Program, a: Model, b: Model, timeout: float = TIMEOUT) -> P.Program:
    """Greedy to a fixpoint (docs 17.4): take the first one-step reduction that keeps a
    difference, until none does. The result is 1-minimal: every one-step reduction of it
    loses the difference."""
    prog = P.canonical(prog)
    changed = True
    while changed:
        changed = False
        for _, red in P.reductions(prog):
            if compare(red, a, b, timeout=timeout).differs:
                prog, changed = red, True
                break
    return prog


# ---- the search -------------------------------------------------------------------------

@dataclass
class Layer:
    events: int
    threads: int
    programs: int = 0
    same_encoding: int = 0
    states: int = 0
    undecided: int = 0
    differing: int = 0
    invalid: int = 0            # refused by the frontend (not litmus tests; not in programs)
    skeletons: int = 0          # the symbolic search (symbolic.py): skeletons asked
    complete: bool = True       # every program of the layer examined


@dataclass
class Found:
    prog: P.Program              # minimised, canonical
    original: P.Program          # as the search met it
    a: Outcomes
    b: Outcomes
    only_a: list = field(default_factory=list)
    only_b: list = field(default_factory=list)


@dataclass
class Search:
    a: Model
    b: Model
    bound: P.Bound
    found: list = field(default_factory=list)
    layers: list = field(default_factory=list)
    seconds: float = 0.0
    stopped: str = ""           # why the search stopped before the bound ("" = exhausted)

    @property
    def programs(self) -> int:
        return sum(la.programs for la in self.layers)

    @property
    def states(self) -> int:
        return sum(la.states for la in self.layers)

    @property
    def undecided(self) -> int:
        return sum(la.undecided for la in self.layers)

    @property
    def exhaustive(self) -> bool:
        return not self.stopped and not self.undecided and all(la.complete
                                                                 for la in self.layers)


def _found(c: Compared, a: Model, b: Model, minimise_it: bool, timeout: float) -> Found:
    prog = minimise(c.prog, a, b, timeout) if minimise_it else P.canonical(c.prog)
    m = compare(prog, a, b, prune=False, timeout=timeout) if prog != c.prog else c
    if m.a is None:
        m = compare(prog, a, b, prune=False, timeout=timeout)
    only_a = sorted(m.a.states - m.b.states, key=state_sort_key)
    only_b = sorted(m.b.states - m.a.states, key=state_sort_key)
    return Found(prog, c.prog, m.a, m.b, only_a, only_b)


def search(a: Model, b: Model, bound: P.Bound, jobs: int = 1, max_found: int = 3,
           minimise_it: bool = True, timeout: float = TIMEOUT, progress=None,
           all_sizes: bool = False) -> Search:
    """Every canonical program up to the bound, smallest first (instructions, then threads).
    Stops at the end of the first size with a difference (unless all_sizes), or as soon as
    max_found distinct minimal tests are known."""
    t0 = time.perf_counter()
    res = Search(a, b, bound)
    seen: set = set()
    pool = None
    if jobs > 1:
        import multiprocessing as mp
        ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
        pool = ctx.Pool(jobs, _init_worker, (a, b, True, timeout))
    try:
        for events in range(1, bound.events + 1):
            for threads in range(1, min(bound.threads, events) + 1):
                layer = Layer(events, threads)
                res.layers.append(layer)
                gen = P.programs(bound.vocab, threads, events, bound.locations)
                it = (pool.imap(_work, gen, chunksize=32) if pool is not None
                      else (compare(p, a, b, timeout=timeout) for p in gen))
                for c in it:
                    if c.invalid:
                        layer.invalid += 1
                        continue
                    layer.programs += 1
                    layer.same_encoding += c.same_encoding
                    if not c.decided:
                        layer.undecided += 1
                        continue
                    layer.states += c.states_examined
                    if not c.differs:
                        if progress:
                            progress(layer)
                        continue
                    layer.differing += 1
                    if record_found(res, layer, _found(c, a, b, minimise_it, timeout), seen,
                                    max_found):
                        break
                if res.stopped:
                    break
            if size_done(res, all_sizes):
                break
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()
    res.found.sort(key=lambda f: (P.size_of(f.prog), f.prog.key()))
    res.seconds = time.perf_counter() - t0
    return res


def record_found(res: Search, layer: Layer, f: Found, seen: set, max_found: int) -> bool:
    """Keep a minimised difference once (by its canonical key); True when max_found distinct
    tests are known and the search stops (both searches: this one and symbolic.py's)."""
    if f.prog.key() not in seen:
        seen.add(f.prog.key())
        res.found.append(f)
    if len(res.found) >= max_found:
        layer.complete = False
        res.stopped = f"{max_found} distinct test(s) found"
        return True
    return False


def size_done(res: Search, all_sizes: bool) -> bool:
    """At the end of a size: stop when stopped, or at the first size with a difference."""
    if res.stopped:
        return True
    if res.found and not all_sizes:
        res.stopped = "the smallest size with a difference is done"
        return True
    return False


def jobs_default() -> int:
    return max(1, min(2, os.cpu_count() or 1))


def diff_line(f: Found, a: Model, b: Model) -> str:
    """One line: what the two versions disagree on."""
    if "every" in (f.a.ub, f.b.ub) and f.a.ub != f.b.ub:
        pass                    # undefined in every execution under one: say that
    elif f.only_a:
        return (f"{a.name} allows {format_state(f.only_a[0])}, {b.name} forbids it")
    elif f.only_b:
        return (f"{b.name} allows {format_state(f.only_b[0])}, {a.name} forbids it")
    def ub(o, m):
        return (f"undefined in {o.ub} execution(s) under {m.name} ({o.ub_rule})" if o.ub
                else f"defined under {m.name}")
    return f"{ub(f.a, a)}, {ub(f.b, b)}"
