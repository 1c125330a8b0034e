"""Static warnings for likely mistakes in a litmus test, found from the elaborated test before
any solving (issue 12 item 4). A warning never changes a verdict. Each has a short name; a
test silences warnings by name with the top-level key `silence: [name, ...]`.

    lint(test, elab) -> list[Warning]
"""

from __future__ import annotations

from typing import Optional

from ..errors import Warn
from ..errors import WARNINGS, ELAB_WARNINGS, ALL_WARNINGS  # noqa: F401 (the catalogue)
from ..elaborate.events import (SYNC_AS_PREFIX, Elab, Event, compatible, may_acquire,
                              may_release, strong_atomic)
from ..ir import LEVEL_NAME, WORKGROUP, Test



def Warning(name: str, file: str, line: int, message: str) -> Warn:
    """A lint warning is an errors.Warn whose code is its name (one channel for every warning:
    printed after the table, `warnings` in --json, silenced by name)."""
    return Warn(name, message, file, line)


def lint(test: Test, elab: Elab) -> list[Warn]:
    """Every warning for the test, minus those it silences; sorted by line, then name."""
    return _finish(test, [w for w, _ in _lint_events(test, elab)])


def _finish(test: Test, out: list) -> list[Warn]:
    silenced = set(getattr(test, "silence", None) or ())
    out = [w for w in out if w.code not in silenced]
    return sorted(set(out), key=lambda w: (w.line, w.code, w.message))


MAX_LINT_COMBOS = 2000


def lint_test(test: Test, model, unroll: Optional[int] = None) -> list[Warn]:
    """lint for any test: a straight-line test directly; a test with control flow per complete
    path combination (docs 15.7, reading R-cf-lint; a combination whose waves diverge at a
    barrier is undefined in every execution, 15.9, and not counted): a warning about line L is kept only if,
    on every complete combination that executes L, it fires on every execution of L (every
    event of the line), so a claim like read-always-undef ("undef in every execution") holds
    for every execution of every combination, whichever have executions. Combinations with a
    path cut by the bound are not counted (their executions are no outcome: 15.2). More than
    MAX_LINT_COMBOS combinations: no warnings (lint is a hint, never a verdict)."""
    from ..elaborate.barrier import WaveDivergent
    from ..elaborate.cflow import combos, test_has_cflow, unroll_bound
    from ..elaborate.events import elaborate
    if not test_has_cflow(test):
        try:
            return lint(test, elaborate(test, model))
        except WaveDivergent:       # docs 10.3 / 15.9: every execution of it is undefined
            return []
    _, total, gen = combos(test, unroll_bound(test, unroll))
    if total > MAX_LINT_COMBOS:
        return []
    first: dict = {}              # (code, line) -> its first warning
    seen: list = []               # per complete combination: (lines executed, warnings full)
    for ct, cut in gen:
        if cut:
            continue
        try:
            el = elaborate(ct, model)
        except WaveDivergent:       # docs 15.9: every execution of it is undefined
            continue
        lines: dict = {}
        for e in el.events:
            if not e.is_init and e.instr is not None:
                lines.setdefault(e.instr.line, set()).add(e.id)
        fired: dict = {}
        for w, eid in _lint_events(ct, el):
            fired.setdefault((w.code, w.line), set()).add(eid)
            first.setdefault((w.code, w.line), w)
        seen.append((set(lines), {k for k, ids in fired.items()
                                  if ids >= lines.get(k[1], set())}))
    kept = {k: w for k, w in first.items()
            if all(k in full for lines, full in seen if k[1] in lines)}
    out = [Warn(w.code, f"{w.message} (on every path combination that executes line "
                f"{w.line})", w.file, w.line) for w in kept.values()]
    return _finish(test, out)


def _lint_events(test: Test, elab: Elab) -> list:
    """(warning, the event it is about), every warning of the straight-line test."""
    out: list = []
    ev = [e for e in elab.events if not e.is_init]
    f = test.file

    def warn(name: str, e: Event, msg: str) -> None:
        out.append((Warning(name, f, e.instr.line, msg), e.id))

    # scopes-never-inclusive
    for a in ev:
        if not may_release(a):
            continue
        for b in ev:
            if b.thread == a.thread or not may_acquire(b):
                continue
            for loc in sorted(_pub_locs(elab, a) & _obs_locs(elab, b)):
                sp = elab.space_of(loc)
                if not elab.inclusive(a, b, sp):
                    warn("scopes-never-inclusive", a,
                         f"release {a.label} ({LEVEL_NAME[elab.scope_in(a, sp)]}) and acquire "
                         f"{b.label} ({LEVEL_NAME[elab.scope_in(b, sp)]}) on @{loc} never have "
                         f"inclusive scopes for this placement: they never synchronize")
    # atomics-never-inclusive (issue 12: workgroup-scope SB across workgroups, all undef)
    for r in ev:
        if not (r.reads and r.atomic):
            continue
        for w in ev:
            if w.writes and w.atomic and w.loc == r.loc and w.thread != r.thread and not \
                    elab.inclusive(w, r, elab.space_of(r.loc)):
                sp = elab.space_of(r.loc)
                warn("atomics-never-inclusive", r,
                     f"atomic read {r.label} ({LEVEL_NAME[elab.scope_in(r, sp)]}) and atomic "
                     f"write {w.label} ({LEVEL_NAME[elab.scope_in(w, sp)]}) of @{r.loc} never "
                     "have inclusive scopes for this placement: unless something else orders "
                     "them the read returns undef")
                break
    # wide-scope-on-lds
    for e in ev:
        if e.loc and elab.space_of(e.loc) == "local" and e.atomic and e.scope > WORKGROUP:
            warn("wide-scope-on-lds", e,
                 f"{e.label}: {LEVEL_NAME[e.scope]} scope on an LDS access is treated as "
                 "workgroup")
    # fence-without-atomic
    for e in ev:
        if not e.is_fence or e.order == "seq_cst":   # seq_cst fences also order through psc
            continue
        bar_rel, bar_acq = _barrier_fences(elab)
        after = e.id in bar_rel or any(w.writes and strong_atomic(w) and elab.po(e, w)
                                       for w in ev)
        before = e.id in bar_acq or any(r.reads and strong_atomic(r) and elab.po(r, e)
                                        for r in ev)
        rel, acq = may_release(e), may_acquire(e)
        if (rel and acq and not after and not before) or (rel and not acq and not after) or (
                acq and not rel and not before):
            need = ("an atomic write after it or an atomic read before it" if rel and acq else
                    "an atomic write after it" if rel else "an atomic read before it")
            warn("fence-without-atomic", e,
                 f"fence {e.label} has no atomic access to pair with ({need}): it never "
                 "synchronizes")
    # untagged-one-as-fence
    for e in ev:
        if e.is_fence and e.one_as and not any(p == SYNC_AS_PREFIX for p, _ in e.tags):
            warn("untagged-one-as-fence", e,
                 f"-one-as fence {e.label} has no amdgpu-synchronize-as tag; name the address "
                 "spaces it synchronizes")
    # read-always-undef
    reach = _may_hb(elab)
    xb = _may_execute_before(elab)
    for r in ev:
        if not (r.reads and not r.atomic and r.kind == "load"):
            continue
        for w in ev:
            # a write the read may execute before (docs 10.7 R-bar-hb-exec) may be one it
            # cannot see: it does not make the read undef in every execution
            if (w.writes and w.loc == r.loc and w.thread != r.thread and w.kind != "cmpxchg"
                    and (w.id, r.id) not in reach and (r.id, w.id) not in reach
                    and (r.id, w.id) not in xb):
                warn("read-always-undef", r,
                     f"plain read {r.label} races with {w.label}: nothing can order them "
                     "(no release / acquire pair could synchronize), so it returns undef in "
                     "every execution")
                break
    # incompatible-mmra-tags
    for e in ev:
        if not e.tags or e.loc is None:
            continue
        syncs = [s for s in ev if s.thread == e.thread and s.id != e.id
                 and (may_release(s) or may_acquire(s))]
        if syncs and not any(compatible(e.tags, s.tags) for s in syncs):
            warn("incompatible-mmra-tags", e,
                 f"{e.label}: its MMRA tags are incompatible with every synchronizing "
                 f"operation of its thread ({', '.join(s.label for s in syncs)}): they do not "
                 "order it")
    return out


def _may_execute_before(el: Elab) -> set:
    """Pairs (a, b) of different threads where a may execute before b through a barrier
    (docs 10.7 R-bar-hb-exec: a before a barrier operation of its wave, b after one of its
    own); over-approximated, so that a warning resting on its absence stays sound."""
    info = getattr(el, "barrier", None)
    if info is None or el.model.options.barrier_hb != "executes":
        return set()
    ev = [e for e in el.events if not e.is_init]
    before, after = set(), set()
    for op in info.ops:      # X po-before an arrive, a wait po-before Y (S002)
        for t, p in op.tpos.items():
            for e in ev:
                if op.kind == "arrive" and e.thread == t and e.pos < p:
                    before.add(e.id)
                if op.kind == "wait" and e.thread == t and e.pos > p:
                    after.add(e.id)
    return {(a.id, b.id) for a in ev for b in ev if a.thread != b.thread
            and a.id in before and b.id in after}


def _pub_locs(el: Elab, a: Event) -> set:
    """Locations through which release `a` can publish (itself, or for a release fence the
    atomic writes after it)."""
    if a.is_fence:
        return {w.loc for w in el.events if w.writes and not w.is_init and strong_atomic(w)
                and el.po(a, w)}
    return {a.loc} if a.loc else set()


def _obs_locs(el: Elab, b: Event) -> set:
    if b.is_fence:
        return {r.loc for r in el.events if r.reads and strong_atomic(r) and el.po(r, b)}
    return {b.loc} if b.loc else set()


def _may_hb(el: Elab) -> set:
    """An over-approximation of happens-before: program order, async completion edges, and
    every release / acquire pair that could synchronize (a shared location, inclusive
    scopes), transitively."""
    ev = [e for e in el.events if not e.is_init]
    edges = {(a.id, b.id) for a in ev for b in ev if el.po(a, b)}
    edges |= set(getattr(el, "async_hb", ()))      # async completion (S004; docs §11.5)
    bar_rel, bar_acq = _barrier_fences(el)          # barrier-arrive-release / -wait-acquire
    edges |= {(a, b) for a in bar_rel for b in bar_acq if a != b}   # (docs §10.5), any pair
    for a in ev:
        if not may_release(a):
            continue
        for b in ev:
            if b.thread != a.thread and may_acquire(b) and any(
                    el.inclusive(a, b, el.space_of(loc))
                    for loc in _pub_locs(el, a) & _obs_locs(el, b)):
                edges.add((a.id, b.id))
    succ: dict[int, set] = {}
    for a, b in edges:
        succ.setdefault(a, set()).add(b)
    reach = set()
    for e in ev:
        stack, seen = [e.id], set()
        while stack:
            n = stack.pop()
            for m in succ.get(n, ()):
                if m not in seen:
                    seen.add(m)
                    stack.append(m)
        reach |= {(e.id, m) for m in seen}
    return reach


def _barrier_fences(el: Elab) -> tuple[set, set]:
    """Release fences program-ordered before a barrier arrive, and acquire fences
    program-ordered after a barrier wait, in a thread of the operation's wave (docs §10.5:
    they form barrier-arrive-release / barrier-wait-acquire, which may synchronize)."""
    info = getattr(el, "barrier", None)
    if info is None:
        return set(), set()
    rel, acq = set(), set()
    for e in el.events:
        if not e.is_fence or e.is_init:
            continue
        for op in info.ops:
            p = op.tpos.get(e.thread)
            if p is None:
                continue
            if op.kind == "arrive" and may_release(e) and e.pos < p:
                rel.add(e.id)
            if op.kind == "wait" and may_acquire(e) and e.pos > p:
                acq.add(e.id)
    return rel, acq
