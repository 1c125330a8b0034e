"""The option table (issue 21 item 4): every model option's non-default values against the
default, and every pair of shipped versions, each with its smallest distinguishing test or the
exhaustive "none up to N × M" (docs/synth-options.md, written by benchmarks/synth_table.py).

Each row's bound (2 locations): 3 threads × 4 events where the row's vocabulary has at most
MAX_PROGRAMS_3x4 programs up to that size, else 2 threads × 4 events where it has at most
MAX_PROGRAMS, else 2 × 3 where it has at most MAX_PROGRAMS_3, else 2 × 2 (the row says which).
The vocabulary is the preset of the option (synth/presets.py), which contains the instructions
the option concerns (presets.CONCERNS; a row whose vocabulary could not reach its option would
say so)."""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass
from typing import Optional

from ..model import Model, list_models, option_table
from . import programs as P
from . import run, size_words, with_options
from .presets import UNSEARCHED, concerns_text, default_vocab, differing, unreachable

MAX_PROGRAMS_3x4 = 36000  # 3 threads × 4 events when the vocabulary has at most this many
MAX_PROGRAMS = 30000      # else 2 × 4 when at most this many
MAX_PROGRAMS_3 = 9000     # else 2 × 3, else 2 × 2

# hand-written corpus tests that show a row's difference (issue 21 item 4: synth must find one
# at most as large)
CORPUS = {
    "lds_av_workgroup=true": "litmus/models/lds-avnone-flags.seed.yaml",
    "volatile_av=true": "litmus/models/volatile-avnone-flags.seed.yaml",
    "read_lo=true": "litmus/models/read-lo-rmw-shadow.seed.yaml",
    "async_model=upstream-stages": "litmus/async/async-global-store-then-copy.seed.yaml",
    "seed vs upstream-2026": "litmus/async/async-global-store-then-copy.seed.yaml",
    # the barrier rows (docs/semantics.md 10.7 names each as the option's pinning test)
    "barrier_model=pr170447": "litmus/barrier/bar-v003-signal-nobody-waits.yaml",
    "named_init=signal-var": "litmus/barrier/bar-named-no-init.yaml",
    "leave_unjoined=noop": "litmus/barrier/bar-named-leave-without-join.yaml",
    "null_wait=noop": "litmus/barrier/bar-null-wait-after-join.yaml",
    "signal_var_count=table": "litmus/barrier/bar-named-signal-var-count-ub.yaml",
    "cluster_drop=wave": "litmus/barrier/bar-cluster-two-waves-per-wg.yaml",
    "barrier_participation=run": "litmus/barrier/bar-arrive-twice-no-wait.yaml",
    "drop_race=completion": "litmus/barrier/bar-signal-then-end.yaml",
    "barrier_hb=none": "litmus/barrier/bar-LB-no-fences.yaml",
    # R-call-async-seq's pin (docs 15.8): the callee's mark, the caller's wait
    "async_calls=inlined": "litmus/calls/async-call-mark-in-callee.yaml",
}
# what a row's vocabulary leaves out that its option concerns (said in the row)
NOTES = {"async_done_edges=first": "the preset tags fences only, not the copies and waits "
                                   "whose tags would cut program order from the first wait "
                                   "(`async-mmra-tagged-waits.yaml`, 1 thread × 6 events, "
                                   "gives the same outcome under both readings: its copy is "
                                   "untagged); with tags on the copy and the waits "
                                   "(`--vocab +flags=mmra-global,tag-all`) the option changes "
                                   "an answer at 1 thread × 5 events, beyond this bound "
                                   "(docs/semantics.md §17.11, derived by hand)"}
# a row whose "none" is below the size of the corpus test that shows the difference
BEYOND = {"barrier_scopes=inclusive": "litmus/barrier/bar-LB-wavefront-rel-wg-acq.yaml"}
THREADS, LOCATIONS = 2, 2


@dataclass
class Row:
    what: str              # the option (NAME=VALUE) or the pair of versions
    a: Model
    b: Model
    bound: Optional[P.Bound] = None
    why_not: str = ""      # not searched: why


def _bool(v: str):
    return {"true": True, "false": False}.get(v, v)


# a second row for options whose preset stops below 3 × 4: the same option at 3 threads × 4
# events over a smaller vocabulary that still has what the option concerns
EXTRA = {"avvis=false": P.Vocab(kinds=("st", "ld", "av"), orders=("na", "rel", "acq"),
                                scopes=("agent",), spaces=("global",),
                                placements=("agent",))}
EXTRA["llvm-hsa vs seed"] = EXTRA["avvis=false"]      # the same difference (avvis)
# ... or a row over a vocabulary the preset leaves out, with its own bound: async_done_edges
# with MMRA tags on the copy, the marks, the waits and the loads (R-synth-tag-all; docs 17.11)
EXTRA["async_done_edges=first"] = P.Bound(
    1, 5, 2, P.Vocab(kinds=("ld", "async"), orders=("na",), spaces=("global", "local"),
                     plain_spaces=("local",), placements=("wg",),
                     flags=("mmra", "mmra-global", "tag-all")))


def _extra(what: str, a: Model, b: Model) -> list:
    """The extra row of a row (EXTRA), named by its bound (and tag-all when it has it)."""
    x = EXTRA.get(what)
    if x is None:
        return []
    bd = x if isinstance(x, P.Bound) else P.Bound(3, 4, LOCATIONS, x)
    label = f"{bd.threads} × {bd.events}" + (", tag-all" if "tag-all" in bd.vocab.flags
                                              else "")
    return [Row(f"{what} ({label})", a, b, bd)]


def option_rows(base: Model) -> list[Row]:
    rows = []
    for name, vals in option_table():
        if name in UNSEARCHED:
            rows.append(Row(f"{name}", base, base, why_not=UNSEARCHED[name]))
            continue
        if name == "default_target":        # the other targets' kinds: GFX9, GFX12
            vals = [vals[0], "gfx942", "gfx1200"]
        for v in vals[1:]:
            b = with_options(base, [(name, _bool(v))])
            rows.append(Row(f"{name}={v}", base, b))
            rows += _extra(f"{name}={v}", base, b)
    return rows


def pair_rows() -> list[Row]:
    ms = list_models()
    rows = []
    for i, a in enumerate(ms):
        for b in ms[i + 1:]:
            rows.append(Row(f"{a.name} vs {b.name}", a, b))
            rows += _extra(rows[-1].what, a, b)
    return rows


def _fits(v: P.Vocab, threads: int, events: int, cap: int) -> bool:
    gen = itertools.chain.from_iterable(
        P.programs(v, t, k, LOCATIONS) for k in range(1, events + 1)
        for t in range(1, min(threads, k) + 1))
    return sum(1 for _ in itertools.islice(gen, cap + 1)) <= cap     # counted up to the cap


# rows searched further than the caps allow, because every program of them has equal
# encodings under both values (pruned without solving): (threads, events)
ROW_BOUND = {"async_scope=workgroup": (2, 4), "async_done_edges=first": (2, 4)}


def row_bound(a: Model, b: Model, events: Optional[int] = None,
              what: str = "") -> P.Bound:
    v = default_vocab(a, b)
    if events is not None:
        return P.Bound(THREADS, events, LOCATIONS, v)
    if what in ROW_BOUND:
        return P.Bound(*ROW_BOUND[what], LOCATIONS, v)
    for t, e, cap in ((3, 4, MAX_PROGRAMS_3x4), (2, 4, MAX_PROGRAMS), (2, 3, MAX_PROGRAMS_3)):
        if _fits(v, t, e, cap):
            return P.Bound(t, e, LOCATIONS, v)
    return P.Bound(THREADS, 2, LOCATIONS, v)


# options that provably (or by a stated argument) change no answer: where docs/semantics.md
# says why, and the test that pins it
ARGUED = {"async_scope": "docs/semantics.md §11.3 R-async-scope argues it changes no answer "
                         "at any size (tests/test_models_diff_gate.py::test_async_scope_option)"}


def cells(r: Row, jobs: int = 1, events: Optional[int] = None) -> list[str]:
    """The row's cells: what, smallest test (size, the difference, the program), bound."""
    if r.why_not:
        return [f"`{r.what}`", f"not searched: {r.why_not}", "-", "-"]
    bd = r.bound or row_bound(r.a, r.b, events, r.what)
    s = run(r.a, r.b, bd, jobs=jobs, max_found=1, explain_it=False)
    bound = f"{size_words(bd.threads, bd.events)}; {bd.vocab.describe()}"
    if not s.tests:
        opts = differing(r.a, r.b)
        un = unreachable(r.a, r.b, bd.vocab)
        over = "; ".join(f"{o}: {concerns_text(o)}" for o in opts if o not in un)
        none = ("none up to " + size_words(bd.threads, bd.events)
                + ("" if s.search.exhaustive else " (not exhaustive: undecided programs)")
                + (f", over a vocabulary with what the option concerns ({over})" if over
                   else "")
                + (f"; the vocabulary cannot reach {', '.join(un)}" if un else ""))
        for o in opts:
            if o in ARGUED:
                none += f"; {ARGUED[o]}"
        if r.what in NOTES:
            none += f"; {NOTES[r.what]}"
        if r.what in BEYOND:
            ct, ce = corpus_size(BEYOND[r.what])
            none += (f"; the corpus test `{os.path.basename(BEYOND[r.what])}` shows the "
                     f"difference at {size_words(ct, ce)}, beyond this bound")
        return [f"`{r.what}`", none,
                f"{s.search.programs} programs, {s.search.states} states", bound]
    t = s.tests[0]
    p = t.found.prog
    code = P.code_text(p)
    size = f"{size_words(len(p.threads), p.events)}: {t.line} — `{code}`"
    if r.what in CORPUS:
        ct, ce = corpus_size(CORPUS[r.what])
        size += (f" (corpus: `{os.path.basename(CORPUS[r.what])}`, "
                 f"{size_words(ct, ce)}: {'not larger' if (p.events, len(p.threads)) <= (ce, ct) else 'LARGER'})")
    return [f"`{r.what}`", size,
            f"{s.search.programs} programs, {s.search.states} states", bound]


def corpus_size(rel: str) -> tuple[int, int]:
    """(threads, instructions) of a corpus test (a call's `enter`, where a body's execution
    begins, is no instruction: docs R-call-inline; the synthesized tests count no call)."""
    from ..frontend.litmus import parse_file
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    t = parse_file(os.path.join(root, rel))
    return len(t.threads), sum(1 for th in t.threads for i in th.code if i.kind != "enter")


HEADER = ["option / versions", "smallest distinguishing test", "searched", "bound, vocabulary"]


def markdown(rows_cells: list[list[str]], note: str = "", closing: str = "") -> str:
    out = ["# Model options and versions by their smallest distinguishing test", "",
           "Generated by `python3 benchmarks/synth_table.py` (`amdmm-smt synth` for each "
           "row; docs/semantics.md section 17). Each option's non-default values are compared "
           "with the default model (`seed`); each pair of shipped versions with each other. "
           "A test is the first smallest program of the row's vocabulary on which the two "
           "disagree (minimised; threads separated by ∥, values 1, 2, ... in order); "
           "\"none up to N × M\" is the exhaustive claim for that vocabulary and bound "
           "(2 locations) and names what the option concerns (synth/presets.py CONCERNS). "
           "In the code, `!mmra !0` is `!{!\"amdgcn-av\", !\"none\"}` and "
           "`!mmra !1` the `amdgpu-synchronize-as:local` tag; `@nb` is a named barrier "
           "object (`space: barrier`).", ""]
    if note:
        out += [note, ""]
    out.append("| " + " | ".join(HEADER) + " |")
    out.append("|" + " --- |" * len(HEADER))
    for c in rows_cells:
        out.append("| " + " | ".join(x.replace("|", "\\|") for x in c) + " |")
    if closing:
        out += ["", closing]
    return "\n".join(out) + "\n"


def all_rows(base: Model) -> list[Row]:
    return option_rows(base) + pair_rows()

