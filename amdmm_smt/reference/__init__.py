"""A second, independent engine: explicit enumeration of candidate executions.

Written from docs/semantics.md section 6 ("The definitions, precisely"), section 7 (MMRA tags
and address spaces), section 11 (asynchronous operations) and seeds 000 and 004 only; it shares
nothing with `amdmm_smt/encode/` but the elaborated test (`elaborate.py`: events, `po` of
ordinary events, `contains`, `inclusive`, `compatible`, and for section 7 `sync_spaces`,
`scope_in`) and what both engines share about outcomes
(`outcomes.py`: the key order of a final state, the verdicts). It imports neither `solve.py`
nor `encode/` (tests/test_layering.py).

For one elaborated test it enumerates

* for every read (the read A.r of an async operation included), a choice in {undef} ∪ {writes
  to its location} (`rf`), minus the choices the definitions exclude whatever the rest of the
  execution is (`engine._Engine.choices`);
* from those, the values of every read, register and write (an RMW writes `OP(old, v)`; a
  cmpxchg writes only when it succeeds, and one comparing `undef` may do either, a branch);
* for every location, a total order `co` of the writes that happen (initial write first),

and evaluates every definition directly. Only release sequences depend on `co`, so for one
reads-from choice it computes synchronizes-with, happens-before, availability, visibility,
location order, may-see and the value rule once (once per distinct synchronizes-with when a
release sequence runs through RMWs), turns the coherence rules into order constraints, and
lists only the `co` orders that satisfy them (when no seq_cst constraint needs the whole
order, only which write can be last). A candidate is kept iff every read's choice is exactly
what the value rule allows: a definite read chose a write it may see, a read that is not
definite chose `undef`.

Relations are bit masks over event ids: `rel[i] >> j & 1` means `rel(i, j)`.

One module per family of definitions of section 6, each a mixin of the engine that reads its
state (`ev`, `opts`, the static relations):
  values.py     write values (incl. atomicrmw / cmpxchg), may-see and the value rule
  sync.py       roles, release sequences, synchronizes-with, happens-before per address space
  avvis.py      scopes of the av roles, availability, visibility, location order (S000)
  coherence.py  the coherence rules as constraints on co, and the co orders that satisfy them
  seq_cst.py    psc per address space and its acyclicity
  barrier.py    execution barriers (section 10): operations per wave, runs, participation,
                phases, barrier-executes-before, the UB rules, barrier synchronizes-with
  async_ops.py  async operations (section 11): their program order, asyncmark sequences and
                completion (computed here, not taken from `Elab.async_hb`), and the
                happens-before edges E-init / E-done
  engine.py     the driver: static relations, choices, values, co orders, final states
  common.py     bit masks, 32-bit values, the exceptions
"""

from __future__ import annotations

import time
from typing import Optional

from .. import limits
from ..elaborate.events import elaborate
from ..ir import Test
from ..model import Model
from ..outcomes import (Result, eval_cond, judge, judge_ub, projection, state_sort_key,
                        wanted_states)
from .common import ReferenceTooBig, ReferenceUnbounded, ReferenceUnsupported
from .engine import reference_analysis_ub as _hand_analysis_ub
from .engine import reference_outcomes_ub as _hand_outcomes_ub
from ..elaborate.barrier import WaveDivergent
from ..elaborate.cflow import described_combos, strip_barriers, test_has_cflow, unroll_bound
from ..outcomes import WAVE_UNIFORM, FlagUB, bar_ub_record, cf_verdicts
from dataclasses import replace

__all__ = ["ReferenceTooBig", "ReferenceUnbounded", "ReferenceUnsupported",
           "reference_analysis", "reference_outcomes", "run_reference"]


def _cat_engine(elab):
    """The engine driven by a model file (`--model FILE.cat`, docs/semantics.md §18), or None
    for the hand-written definitions (engine.py)."""
    path = getattr(elab.model, "cat", None)
    if path is None:
        return None
    from ..cat import load_cached, refuse_unsupported
    from .cat_engine import CatEngine
    refuse_unsupported(elab, path)
    return CatEngine(elab, load_cached(path))


def reference_analysis_ub(elab, limit: int = 2_000_000):
    """(final states of the defined executions, barrier analysis or None, first branch on
    undef or None): engine.reference_analysis_ub, or the model file's engine."""
    cat = _cat_engine(elab)
    if cat is not None:
        if getattr(elab, "barrier", None) is not None:     # models/barrier.cat (§18)
            from .cat_engine import run_barrier
            out, an = run_barrier(cat, limit)
            # the runs' undefined behaviour first (10.6), else a flag's
            return out, (an if an.ub else cat.flag_analysis() or an), cat.ub
        out = cat.run(limit)
        return out, cat.flag_analysis(), cat.ub     # the flags' undefined behaviour (§18)
    return _hand_analysis_ub(elab, limit)


def reference_outcomes_ub(elab, limit: int = 2_000_000):
    """(final states, first branch on undef found or None) — section 15."""
    cat = _cat_engine(elab)
    if cat is not None:
        if getattr(elab, "barrier", None) is not None:     # models/barrier.cat (§18)
            from .cat_engine import run_barrier
            return run_barrier(cat, limit)[0], cat.ub
        return cat.run(limit), cat.ub
    return _hand_outcomes_ub(elab, limit)


def reference_analysis(elab, limit: int = 2_000_000):
    """(final states of the defined executions, barrier analysis or None)."""
    out, an, _ = reference_analysis_ub(elab, limit)
    return out, an


def reference_outcomes(elab, limit: int = 2_000_000) -> set:
    """The final states of the defined candidate executions (docs/semantics.md 10.6)."""
    return reference_analysis(elab, limit)[0]


def run_reference(test: Test, model: Model, limit: int = 2_000_000) -> Result:
    """The answer of this engine for one test, judged like the Z3 engine's (outcomes.judge)."""
    # the stage a --timeout / --memory stop names (issue 22 item 6: it said "parsing")
    limits.stage("elaboration")
    if test_has_cflow(test):
        return _run_cflow(test, model, limit)
    t0 = time.perf_counter()
    try:
        elab = elaborate(test, model)
    except WaveDivergent:
        # section 10.3 / 15.9 (R-cf-bar-wave): threads of one wave with different barrier
        # instructions: the test's one path combination, judged as such (every execution
        # undefined)
        return _run_cflow(test, model, limit)
    limits.stage("enumeration (reference engine)")
    keys, _ = projection(test)
    wanted = wanted_states(test, keys)
    why, thin_air, an = "", False, None
    try:
        found, an = reference_analysis(elab, limit)
        states, complete = sorted(found, key=state_sort_key), True
    except WaveDivergent:       # this engine's own convergence check (reference/barrier.py)
        return _run_cflow(test, model, limit)
    except ReferenceUnbounded as e:      # said as what it is, not as a solver giving up
        states, complete, thin_air, why = [], False, True, f"reference engine: {e}"
    except ReferenceUnsupported as e:
        states, complete, why = [], False, f"the reference engine does not cover this test: {e}"
    except ReferenceTooBig as e:
        states, complete, why = [], False, f"the reference engine stopped: {e}"

    def exists_query() -> Optional[bool]:
        if not complete:
            return None
        return any(eval_cond(test.exists.cond, dict(st)) for st in states)
    res = judge(test, model, keys, states, complete, exists_query, t0, wanted)
    res.why, res.thin_air = why, thin_air
    res.warnings = list(elab.warnings)
    if an is not None:
        judge_ub(res, an)          # docs/semantics.md 10.6
    elif getattr(model, "cat", None) is not None and complete and not states:
        _model_inconsistent(elab, test, res, limit)
    return res


def _model_inconsistent(elabs, test, res, limit: int) -> None:
    """warning[model-inconsistent] (docs/semantics.md §18): the model file allows no
    execution of this test (`elabs`: its straight-line code, or each path combination); a
    minimal set of its rules that conflict."""
    from ..cat import inconsistent_warning, load_cached
    from .cat_engine import CatEngine, conflict
    if not isinstance(elabs, list):
        elabs = [elabs]
    m = load_cached(elabs[0].model.cat)
    fails: set = set()
    for elab in elabs:
        eng = CatEngine(elab, m, analyse=True)
        try:
            eng.run(limit)
        except (ReferenceTooBig, ReferenceUnbounded, ReferenceUnsupported):
            return
        fails |= eng.fail_sets
    keep = conflict(m, fails)
    if keep:
        res.warnings.append(inconsistent_warning(m, keep, test))


def _run_cflow(test: Test, model: Model, limit: int) -> Result:
    """docs/semantics.md section 15: every combination of one path per thread (the unrolling
    of section 15.2) is straight-line code; its executions are the candidate executions of
    section 6 whose branch conditions lead along the path (15.4). Outcomes are the union; a
    path cut by the bound with an execution is "bound reached" (15.2); an execution that
    branches on undef is undefined behaviour (15.5)."""
    t0 = time.perf_counter()
    bound = unroll_bound(test, None)
    _, _, gen = described_combos(test, bound)
    limits.stage("enumeration (reference engine)")
    keys, _ = projection(test)
    wanted = wanted_states(test, keys)
    states: set = set()
    complete, thin_air, why = True, False, ""
    cut = ub = bar_ub = None
    assumed = False
    warnings: list = []

    def has_execution(ct) -> bool:
        """section 15.9 (R-cf-bar-feasible): the memory part of the combination, without its
        barrier operations, has an execution (defined or not)."""
        probe = replace(strip_barriers(ct), exists=None, outcomes=None,
                        threads=[replace(t, out_regs=[]) for t in strip_barriers(ct).threads])
        out, u = reference_outcomes_ub(elaborate(probe, model), limit)
        return bool(out) or u is not None
    seen: list = []        # every combination's code (warning[model-inconsistent])
    for ct, cutlist, path in gen:
        if getattr(model, "cat", None) is not None:
            seen.append(strip_barriers(ct) if cutlist else ct)
        if cutlist:
            # section 15.9 (R-cf-bar-cut): a cut path is a prefix, its barrier operations are
            # not judged; only whether the prefix has an execution
            ct = strip_barriers(ct)
            # section 15.2 / 15.5: a cut combination reaches the bound (is assumed away, under
            # `bound: assume`) only with an execution defined up to the cut; an execution
            # that branches on undef before the cut is undefined behaviour
            judge_cut = cut is None and not assumed
            if (not judge_cut and ub is not None) or not complete:
                continue
            probe = replace(ct, threads=[replace(t, out_regs=[]) for t in ct.threads],
                            exists=None, outcomes=None)
            try:
                out, u = reference_outcomes_ub(elaborate(probe, model), limit)
            except ReferenceTooBig as e:
                complete, why = False, f"the reference engine stopped: {e}"
                continue
            if out and judge_cut:
                if test.bound == "assume":
                    assumed = True
                else:
                    cut = cutlist[0]
            ub = ub or u
            continue
        try:
            elab = elaborate(ct, model)
        except WaveDivergent as e:
            # section 15.9: threads of one wave with different barrier operations on this
            # combination (S002 "only in wave-uniform control flow"): undefined
            try:
                if bar_ub is None and has_execution(ct):
                    bar_ub = bar_ub_record({"rule": "wave-divergent", "op": f"line {e.line}",
                                            "run": [e.message + WAVE_UNIFORM]}, path)
            except ReferenceTooBig as e2:
                complete, why = False, f"the reference engine stopped: {e2}"
            continue
        warnings += [w for w in elab.warnings if w not in warnings]
        try:
            try:
                out, an, u = reference_analysis_ub(elab, limit)
            except WaveDivergent as e:
                # this engine's own convergence check (reference/barrier.py, section 15.10)
                if bar_ub is None and has_execution(ct):
                    bar_ub = bar_ub_record({"rule": "wave-divergent", "op": f"line {e.line}",
                                            "run": [e.message + WAVE_UNIFORM]}, path)
                continue
            if bar_ub is None and an is not None and an.ub_rule() is not None and (
                    out or isinstance(an, FlagUB) or has_execution(ct)):
                # (a flag fired in a consistent execution: the combination has one, §18)
                rule = an.ub_rule()
                bar_ub = bar_ub_record({"rule": rule, "op": an.ub[rule][0],
                                        "run": an.ub[rule][1], "rules": sorted(an.ub)}, path)
        except ReferenceUnbounded as e:
            complete, thin_air, why = False, True, f"reference engine: {e}"
            continue
        except ReferenceUnsupported as e:
            complete, why = False, f"the reference engine does not cover this test: {e}"
            continue
        except ReferenceTooBig as e:
            complete, why = False, f"the reference engine stopped: {e}"
            continue
        states |= out
        ub = ub or u
    states_l = sorted(states, key=state_sort_key)

    def exists_query() -> Optional[bool]:
        if any(eval_cond(test.exists.cond, dict(st)) for st in states_l):
            return True
        return False if complete else None
    res = judge(test, model, keys, states_l, complete, exists_query, t0, wanted)
    res.why, res.thin_air, res.warnings = why, thin_air, warnings
    cf_verdicts(res, test, bound, cut, ub, complete, states_l, assumed, bar_ub)
    if getattr(model, "cat", None) is not None and complete and not states_l \
            and cut is None and ub is None and bar_ub is None and not assumed:
        _model_inconsistent([elaborate(c, model) for c in seen], test, res, limit)
    return res
