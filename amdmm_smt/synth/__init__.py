"""`amdmm-smt synth` (issue 21): synthesize the smallest litmus tests that tell two model
versions apart (docs/semantics.md section 17).

programs.py   the programs searched: vocabulary, canonical enumeration, reductions, YAML
search.py     both versions on each program, the search by size, the minimiser
presets.py    the default vocabulary for the options two versions set differently
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, fields, replace
from typing import Optional

from ..errors import LitmusError
from ..model import CHOICES, Model, Options, get_model
from ..outcomes import format_state
from . import programs as P
from .presets import concerns_text, default_vocab, differing, same_semantics, unreachable
from .search import Found, Search, diff_line, jobs_default, reference_check, search

__all__ = ["Synth", "build_models", "run", "to_text", "to_json", "to_markdown",
           "claim", "jobs_default", "parse_option", "default_vocab"]


def parse_option(text: str) -> tuple[str, object]:
    """NAME=VALUE for --option: a known option and one of its values (bools true / false)."""
    name, sep, val = text.partition("=")
    name, val = name.strip(), val.strip()
    known = {f.name: f for f in fields(Options)}
    if not sep or name not in known:
        raise LitmusError(f"--option: expected NAME=VALUE with NAME one of "
                          f"{', '.join(sorted(known))} (got '{text}')")
    default = getattr(Options(), name)
    if isinstance(default, bool):
        if val not in ("true", "false"):
            raise LitmusError(f"--option {name}: must be true or false (got '{val}')")
        return name, val == "true"
    if name in CHOICES and val not in CHOICES[name]:
        raise LitmusError(f"--option {name}: must be one of {', '.join(CHOICES[name])} "
                          f"(got '{val}')")
    return name, val


def _v(v) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def with_options(m: Model, opts: list[tuple[str, object]]) -> Model:
    if not opts:
        return m
    name = m.name + "".join(f"+{k}={_v(v)}" for k, v in opts)
    return replace(m, name=name, options=replace(m.options, **dict(opts)), file=None)


def build_models(model_a: str, model_b: Optional[str], options: list[str]) -> tuple[Model, Model]:
    """--from, --to and --option: the two versions (the options apply to --to, which is --from
    when not given)."""
    a = get_model(model_a)
    b = get_model(model_b) if model_b else a
    b = with_options(b, [parse_option(o) for o in options])
    return a, b


@dataclass
class Test:
    """One synthesized test, ready to write."""
    name: str
    found: Found
    yaml: str
    line: str                   # the one-line difference
    verdict_a: str
    verdict_b: str
    condition: str
    families: list = field(default_factory=list)   # forbidden by (explain), under `forbidder`
    forbidder: str = ""
    reference: str = ""         # the reference engine's check of both verdicts

    def record(self) -> dict:
        p = self.found.prog
        return {"name": self.name, "threads": len(p.threads), "events": p.events,
                "locations": len(p.spaces), "difference": self.line,
                "condition": self.condition,
                "verdicts": {"a": self.verdict_a, "b": self.verdict_b},
                "forbidden_by": {"model": self.forbidder, "families": self.families},
                "only_a": [format_state(s) for s in self.found.only_a],
                "only_b": [format_state(s) for s in self.found.only_b],
                "undefined": {"a": self.found.a.ub, "b": self.found.b.ub},
                "reference_engine": self.reference,
                "test": self.yaml}


@dataclass
class Synth:
    a: Model
    b: Model
    search: Search
    tests: list

    @property
    def bound(self) -> P.Bound:
        return self.search.bound


def _slug(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", s).strip("-")


def _cond(state) -> str:
    """A state as a condition; the empty state (nothing to name) as one true in every state."""
    return format_state(state) or "0 == 0"


def _expectation(f: Found) -> tuple[str, Optional[str], Optional[str], str, str]:
    """(condition, expect, undefined-some, verdict under a, verdict under b) of the test file:
    its expectation is a's verdict, so `verify --model a` passes and `--model b` fails. A
    version undefined in every execution makes it a difference in undefined behaviour (its
    empty state set is no state forbidden)."""
    every = "every" in (f.a.ub, f.b.ub) and f.a.ub != f.b.ub
    if f.only_a and not every:
        c = _cond(f.only_a[0])
        return c, "allowed", None, "allowed", "forbidden"
    if f.only_b and not every:
        c = _cond(f.only_b[0])
        return c, "forbidden", None, "forbidden", "allowed"

    def word(o):
        return {"every": "undefined (every execution)", "some": "undefined in some executions",
                None: "defined"}[o.ub]
    if f.a.ub == "every":
        return "", "undefined", None, word(f.a), word(f.b)
    shared = sorted(f.a.states, key=lambda s: format_state(s))
    c = _cond(shared[0]) if shared else ""
    return c, "allowed", "some" if f.a.ub == "some" else None, word(f.a), word(f.b)


def make_test(f: Found, a: Model, b: Model, index: int, explain_it: bool = True,
              timeout: float = 60.0, check: bool = True) -> Test:
    name = f"synth-{_slug(a.name)}-vs-{_slug(b.name)}-{index}"
    cond, expect, some, va, vb = _expectation(f)
    line = diff_line(f, a, b)
    families, forbidder = [], ""
    if explain_it and (f.only_a or f.only_b) and not (
            "every" in (f.a.ub, f.b.ub) and f.a.ub != f.b.ub):
        from ..explain.witness import explain, parse_outcome
        forb = b if f.only_a else a
        from ..frontend.litmus import parse_text
        t = parse_text(P.render(f.prog, name, exists=cond, expect="allowed"), name + ".yaml")
        ex = explain(t, forb, parse_outcome(t, cond), timeout=timeout)
        families = list(ex.core) if ex.reachable is False else []
        forbidder = forb.name
    desc = (f"Synthesized by amdmm-smt synth ({a.name} vs {b.name}; docs/semantics.md 17): "
            f"{line}. {a.name}: {va}; {b.name}: {vb}"
            + (f"; forbidden under {forbidder} by: {', '.join(families)}" if families else "")
            + f". The expectation is {a.name}'s verdict; minimal: removing any instruction, "
            "weakening any order, scope or metadata"
            + (" or inlining the call" if f.prog.call else "") + " loses the difference.")
    header = (f"synthesized: {a.name} vs {b.name}", f"{a.name}: {va}", f"{b.name}: {vb}")
    text = P.render(f.prog, name, desc, exists=cond or None, expect=expect, header=header)
    if some:
        text += "undefined: some\n"
    return Test(name, f, text, line, va, vb, cond, families, forbidder,
                reference_check(f, a, b) if check else "")


def run(a: Model, b: Model, bound: P.Bound, jobs: int = 1, max_found: int = 3,
        explain_it: bool = True, timeout: float = 60.0, all_sizes: bool = False,
        symbolic: bool = False) -> Synth:
    if symbolic:        # one query per skeleton (synth/symbolic.py; docs 17.9)
        from .symbolic import search as symbolic_search
        s = symbolic_search(a, b, bound, max_found=max_found, timeout=timeout,
                            all_sizes=all_sizes)
    else:
        s = search(a, b, bound, jobs=jobs, max_found=max_found, timeout=timeout,
                   all_sizes=all_sizes)
    tests = [make_test(f, a, b, k + 1, explain_it, timeout) for k, f in enumerate(s.found)]
    return Synth(a, b, s, tests)


# ---- reports ----------------------------------------------------------------------------

def warnings_of(a: Model, b: Model, v: P.Vocab) -> list[str]:
    """issue 29 item 3: the options the two versions set differently that the vocabulary
    cannot reach (presets.CONCERNS), and versions that differ in no option."""
    out = []
    for o in unreachable(a, b, v):
        out.append(f"option {o} concerns {concerns_text(o)}; the vocabulary has none of "
                   f"that, so no program searched can show what {o} changes")
    dif = differing(a, b)
    if dif and len(out) == len(dif):
        out.append("the two versions differ only in options the vocabulary cannot reach: "
                   "widen it (--vocab +kinds=...)")
    if not dif:
        from ..report.cat_diff import definition_changes
        dc = definition_changes(a, b)       # two model files: which (docs §18)
        names = f" ({', '.join(c['name'] for c in dc)})" if dc else ""
        out.append("the two versions set every option alike" + (
            "; they are the same model, nothing can differ" if same_semantics(a, b) else
            f"; they differ in their definitions{names}, so the general vocabulary is "
            "searched unless --vocab says otherwise"))
    return out


def size_words(threads: int, events: int) -> str:
    return f"{threads} thread{'s' if threads != 1 else ''} × {events} event{'s' if events != 1 else ''}"


def claim(r: Synth) -> str:
    """The sentence for a search that found nothing: exhaustive, or why not."""
    s, bd = r.search, r.bound
    counted = (f"{s.programs} programs ({sum(la.same_encoding for la in s.layers)} with equal "
               f"encodings), {s.states} candidate states examined")
    if getattr(s, "symbolic", False):
        counted = (f"{s.programs} programs in {sum(la.skeletons for la in s.layers)} "
                   f"skeletons, each asked symbolically ({s.states} counterexample rounds)")
    if s.exhaustive:
        un = unreachable(r.a, r.b, bd.vocab)
        return (f"no program up to {size_words(bd.threads, bd.events)} ({bd.locations} "
                f"location{'s' if bd.locations != 1 else ''}) distinguishes {r.a.name} from "
                f"{r.b.name}: {counted}; vocabulary: {bd.vocab.describe()}"
                + (f" (it cannot reach {', '.join(un)}: the claim says nothing about "
                   f"{'it' if len(un) == 1 else 'them'})" if un else ""))
    return (f"nothing found, but the search is not exhaustive ({s.undecided} program(s) "
            f"undecided within the time limit): {counted}")


def to_text(r: Synth) -> str:
    s, bd = r.search, r.bound
    out = [f"synth: {r.a.name} vs {r.b.name}",
           f"options that differ: {', '.join(differing(r.a, r.b)) or 'none'}",
           f"vocabulary: {bd.vocab.describe()}",
           f"bound: {size_words(bd.threads, bd.events)}, {bd.locations} location(s); "
           f"searched {s.programs} programs, {s.states} candidate states"]
    if getattr(s, "symbolic", False):
        out[-1] = (f"bound: {size_words(bd.threads, bd.events)}, {bd.locations} location(s); "
                   f"searched symbolically: {s.programs} programs in "
                   f"{sum(la.skeletons for la in s.layers)} skeletons, {s.states} "
                   f"counterexample rounds")
    out[2:2] = [f"warning: {w}" for w in warnings_of(r.a, r.b, bd.vocab)]
    out[2:2] = [f"error: {d}" for d in getattr(s, "disagreements", [])]
    if not r.tests:
        out.append(claim(r))
        return "\n".join(out) + "\n"
    out.append(f"{len(r.tests)} distinguishing test(s), smallest first:")
    for t in r.tests:
        p = t.found.prog
        out.append("")
        out.append(f"{t.name} ({size_words(len(p.threads), p.events)}): {t.line}")
        out.append(f"  {r.a.name}: {t.verdict_a}; {r.b.name}: {t.verdict_b}"
                   + (f"; forbidden under {t.forbidder} by: {', '.join(t.families)}"
                      if t.families else ""))
        if t.reference:
            out.append(f"  reference engine: {t.reference}")
        out += ["  " + ln for ln in t.yaml.splitlines() if not ln.startswith(("#",
                                                                             "description"))]
    return "\n".join(out) + "\n"


def to_json(r: Synth) -> str:
    s, bd = r.search, r.bound
    rec = {"a": r.a.name, "b": r.b.name, "differing_options": differing(r.a, r.b),
           "bound": {"threads": bd.threads, "events": bd.events, "locations": bd.locations},
           "vocabulary": bd.vocab.record(), "programs": s.programs, "states": s.states,
           "undecided": s.undecided, "exhaustive": s.exhaustive and not r.tests,
           "layers": [{"events": la.events, "threads": la.threads, "programs": la.programs,
                       "equal_encodings": la.same_encoding, "states": la.states,
                       "differing": la.differing, "complete": la.complete,
                       "not_litmus_tests": la.invalid}
                      for la in s.layers],
           "tests": [t.record() for t in r.tests],
           "search": "symbolic" if getattr(s, "symbolic", False) else "enumerative",
           "skeletons": sum(la.skeletons for la in s.layers),
           "disagreements": list(getattr(s, "disagreements", [])),
           "warnings": warnings_of(r.a, r.b, bd.vocab)}
    if not r.tests:
        rec["claim"] = claim(r)
    return json.dumps(rec, indent=2, sort_keys=True) + "\n"


def to_markdown(r: Synth, level: int = 2) -> str:
    """The synthesized tests as a markdown section (`diff --synth`)."""
    h = "#" * level
    bd = r.bound
    out = [f"{h} Synthesized minimal tests: `{r.a.name}` → `{r.b.name}`", "",
           f"`amdmm-smt synth` searched every program up to "
           f"{size_words(bd.threads, bd.events)} ({bd.locations} locations) of the vocabulary "
           f"{bd.vocab.describe()}: {r.search.programs} programs, "
           f"{r.search.states} candidate states (docs/semantics.md section 17).", ""]
    out += [f"Warning: {w}." for w in warnings_of(r.a, r.b, bd.vocab)]
    if out[-1] != "":
        out.append("")
    if not r.tests:
        out += [claim(r) + ".", ""]
        return "\n".join(out)
    for t in r.tests:
        p = t.found.prog
        out += [f"{h}# {t.name}", "",
                f"{size_words(len(p.threads), p.events)}: {t.line}. `{r.a.name}`: "
                f"{t.verdict_a}; `{r.b.name}`: {t.verdict_b}"
                + (f"; forbidden under `{t.forbidder}` by {', '.join(t.families)}"
                   if t.families else "") + ".", "", "```yaml"]
        out += [ln for ln in t.yaml.splitlines() if not ln.startswith(("#", "description"))]
        out += ["```", ""]
    return "\n".join(out)
