"""Stage 5: report. A rich table for people, JSON lines for machines. Output is sorted by
file and test name, and outcomes are sorted, so runs diff cleanly."""

from __future__ import annotations

from itertools import islice
from typing import TYPE_CHECKING

from ..outcomes import Result, format_state
from . import MAX_OUTCOMES   # one value for the table and the CLI default

if TYPE_CHECKING:
    from rich.console import Console

STYLE = {"pass": "green", "fail": "bold red", "unknown": "yellow", "error": "bold red"}


def result_record(r: Result, timing: bool = True) -> dict:
    rec = {
        "name": r.test.name,
        "file": r.test.file,
        "model": r.model,
        "status": r.status,
        "complete": r.complete,
        **({"thin_air": True} if getattr(r, "thin_air", False) else {}),
        **({"limit": r.limit} if getattr(r, "limit", None) else {}),
        **({"listed": False} if not getattr(r, "listed", True) else {}),
        **({"why": r.why} if getattr(r, "why", "") else {}),
        "model_options": {k: v for k, v in getattr(r, "options", ())},
        **({"warnings": [w.record() for w in warnings_of(r)]} if warnings_of(r) else {}),
        "outcomes": Outcomes(r.states),     # (`poison` is printed as itself)
        "verdicts": [
            {"kind": v.kind, "expected": v.expected, "status": v.status, "detail": v.detail,
             **({"missing": [format_state(s) for s in v.missing],
                 "unexpected": [format_state(s) for s in v.unexpected]}
                if v.kind == "outcomes" else {}),
             **({"herd": herd_verdict(r.test, v)} if herd_verdict(r.test, v) else {})}
            for v in r.verdicts],
    }
    if r.test.expect == "undefined":
        rec["undefined"] = r.undefined
    if getattr(r, "ub", None):
        rec["ub"] = r.ub       # docs/semantics.md 10.6: rule, all, op, run
    if timing:
        rec["seconds"] = round(r.seconds, 4)
    return rec


def error_record(file: str, message: str) -> dict:
    return {"name": None, "file": file, "status": "error", "error": message}


class Outcomes:
    """A record's outcome list, decoded one outcome at a time as it is written (issue 30
    item 2: a listing of 131,072 outcomes is never a list of dictionaries in memory). Iterating
    gives the JSON objects, in the listing's (sorted) order."""

    __slots__ = ("states",)

    def __init__(self, states):
        self.states = states

    def __iter__(self):
        for s in self.states:
            yield {k: ("undef" if v is None else v) for k, v in s}

    def __len__(self) -> int:
        return len(self.states)

    def __eq__(self, other) -> bool:
        return list(self) == list(other)


_HOLE = "\x00amdmm-smt outcomes\x00"
_HOLE_JSON = '"\\u0000amdmm-smt outcomes\\u0000"'     # json.dumps(_HOLE); json is imported on use


def record_json(rec: dict) -> dict:
    """The record with its outcomes as a plain list (what json.loads of its line gives)."""
    return {k: (list(v) if isinstance(v, Outcomes) else v) for k, v in rec.items()}


def print_json(records: list[dict], out) -> None:
    """One line per record, exactly json.dumps(record, sort_keys=True): the outcomes are
    written as they are decoded, a thousand at a time, never held as one string."""
    import json
    dumps = json.dumps
    for rec in records:
        outs = rec.get("outcomes")
        if not isinstance(outs, Outcomes):
            out.write(dumps(rec, sort_keys=True) + "\n")
            continue
        head, tail = dumps(dict(rec, outcomes=_HOLE), sort_keys=True).split(_HOLE_JSON, 1)
        out.write(head + "[")
        it, first = iter(outs), True
        while True:
            chunk = [dumps(o, sort_keys=True) for o in islice(it, 1000)]
            if not chunk:
                break
            out.write(("" if first else ", ") + ", ".join(chunk))
            first = False
        out.write("]" + tail + "\n")


def herd_verdict(test, v) -> "dict | None":
    """The verdict of a .litmus test's final condition in herd's words (docs/herd-import.md
    "Verdicts"): the file's quantifier and Ok / No / Undecided, as `--format herd` prints them.
    The imported `exists:` is C for `exists` and `~exists`, !(C) for `forall`; `exists` is Ok
    when it is reachable, `~exists` and `forall` when it is unreachable. None for a YAML test."""
    q = getattr(test, "quantifier", None)
    if not q or v.kind != "exists" or v.expected != "no claim":
        return None
    if v.status == "unknown":
        return {"quantifier": q, "verdict": "Undecided", "why": v.detail}
    reachable = v.detail == "condition reachable"
    holds = reachable if q == "exists" else not reachable
    if q == "forall":
        why = ("validated: no outcome violates the condition" if holds else
               "some outcome violates the condition")
    else:
        why = f"condition {'reachable' if reachable else 'unreachable'}"
    return {"quantifier": q, "verdict": "Ok" if holds else "No", "why": why}


def verdict_text(r: Result) -> str:
    parts = []
    for v in r.verdicts:
        hv = herd_verdict(r.test, v)
        if hv is not None:        # a .litmus test: herd's quantifier and verdict word
            parts.append(f"{hv['quantifier']} (no claim): {hv['verdict']} ({hv['why']})")
        elif v.kind == "exists" and v.expected == "no claim":
            parts.append(f"exists (no claim): {v.detail}" if v.status == "pass" else
                         f"exists (no claim): {v.status} ({v.detail})")
        elif v.kind == "exists":
            # issue 30 item 2: the exists query is its own proof; the line says the listing
            # beside it stopped short
            short = "; proved by its own query, the listing is incomplete" \
                if stopped_short(r) and v.status != "unknown" else ""
            parts.append(f"exists {v.expected}: {v.status} ({v.detail}{short})")
        elif v.kind == "undefined":
            parts.append(f"undefined: {v.status} ({v.detail})")
        elif v.kind == "bound":          # docs/semantics.md 15.2
            parts.append(f"unroll bound: {v.status} ({v.detail})")
        else:
            s = f"outcomes: {v.status} ({v.detail})"
            for st in v.missing:
                s += f"\n  expected but not allowed: {format_state(st)}"
            for st in v.unexpected:
                s += f"\n  allowed but not expected: {format_state(st)}"
            parts.append(s)
    if getattr(r, "thin_air", False) and r.why:
        parts.append(f"outcomes not listed: {r.why}")
    elif getattr(r, "thin_air", False):
        parts.append("outcomes not listed: a read's value can depend on itself through "
                     "reads-from and data dependencies (out of thin air: docs R-no-thin-air; "
                     "the model has no no-thin-air axiom); exists conditions are still "
                     "decided exactly")
    elif getattr(r, "limit", None):
        parts.append(f"stopped: {r.limit}")
    elif stopped_short(r):
        parts.append(f"listing incomplete: {r.why} (--outcome-limit; 0 lists every outcome)")
    elif not r.complete:
        parts.append(f"enumeration incomplete: {r.why or 'the solver gave up within --timeout'}")
    if getattr(r, "ub", None):
        u = r.ub
        parts.append(f"undefined behaviour ({'every' if u['all'] else 'some'} execution"
                     f"{'' if u['all'] else 's'}): {u['rule']} at {u['op']}; run: "
                     + (" ; ".join(u["run"]) or "(start)"))
    if not parts:
        parts.append("no expectation given")
    return "\n".join(parts)


TABLE_WIDTH = 120     # narrower consoles (CI logs, pipes at 80 columns) get one block per test


CELL_MAX = 256     # outcome lines in one table cell; with --max-outcomes 0, more are printed
#                    after the table, streamed (issue 30 item 2)


def stopped_short(r: Result) -> bool:
    """Did --outcome-limit stop the listing (the listing is incomplete, what it lists holds)?"""
    return (not r.complete and not getattr(r, "limit", None) and not getattr(r, "thin_air", False)
            and getattr(r, "why", "").startswith("stopped at "))


def outcome_lines(r: Result, cap: int = MAX_OUTCOMES, cell: int = 0) -> list[str]:
    """The outcome lines of a result, at most `cap` (0: all) and, with `cell`, at most that
    many in a table cell (the rest are printed after the table: rest_lines)."""
    if r.test.expect == "undefined" and r.undefined:
        return ["undefined: no defined execution"]
    if getattr(r, "ub", None) and r.ub["all"]:
        return [f"undefined ({r.ub['rule']}): no defined execution"]
    if not getattr(r, "listed", True):
        return ["(not listed: --decide-only)"]
    n = len(r.states)
    if cap and n > cap:
        lines = [format_state(s) for s in r.states[:cap]]
        lines.append(f"... and {n - cap} more outcomes (--max-outcomes 0 prints all; "
                     "--json lists all)")
    elif cell and n > cell:
        lines = [format_state(s) for s in r.states[:cell]]
        lines.append(f"... and {n - cell} more outcomes: all {n} are listed after the table")
    else:
        lines = [format_state(s) for s in r.states] or ["(none)"]
    if stopped_short(r):
        lines.append(f"(listing incomplete: {r.why}; --outcome-limit 0 lists all)")
    return lines


def _cut(r: Result, max_outcomes: int) -> bool:
    """Does the result's listing overflow a table cell (printed after the table instead)?"""
    return not max_outcomes and getattr(r, "listed", True) and len(r.states) > CELL_MAX


def _write_lines(console, lines, indent: str = "") -> None:
    """Plain lines straight to the console's file, a thousand at a time (a listing of 131,072
    outcomes through console.print would take seconds and hold every line)."""
    out = console.file
    it = iter(lines)
    while True:
        chunk = list(islice(it, 1000))
        if not chunk:
            break
        out.write("".join(f"{indent}{ln}\n" for ln in chunk))


def rest_lines(r: Result, cell: int):
    """The outcome lines past the first `cell` (see outcome_lines), decoded one by one."""
    for i in range(cell, len(r.states)):
        yield format_state(r.states[i])


def model_lines(results: list[Result]) -> list[str]:
    """One line per model version the results were computed under, with its options that
    differ from the defaults."""
    seen = {}
    for r in results:
        seen.setdefault((r.model, r.options), 0)
        seen[(r.model, r.options)] += 1
    out = []
    for (name, opts), n in sorted(seen.items(), key=lambda kv: (kv[0][0], str(kv[0][1]))):
        o = ", ".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in opts)
        out.append(f"model {name} ({o or 'default options'}): {n} test{'s' if n != 1 else ''}")
    return out


def warnings_of(r: Result) -> list:
    """The result's warnings (elaboration) and the test's own, if a stage attached any."""
    ws = set(getattr(r, "warnings", None) or []) | set(getattr(r.test, "warnings", None) or [])
    silenced = set(getattr(r.test, "silence", None) or [])
    return sorted((w for w in ws if w.code not in silenced),
                  key=lambda w: (w.file or "", w.line or 0, w.code, w.message))


def all_warnings(results: list[Result]) -> list:
    ws = {w for r in results for w in warnings_of(r)}
    return sorted(ws, key=lambda w: (w.file or "", w.line or 0, w.code, w.message))


def print_table(results: list[Result], errors: list[tuple[str, str]], console: Console,
                timing: bool = True, max_outcomes: int = MAX_OUTCOMES,
                quiet: bool = False) -> None:
    """The table (or, narrower than TABLE_WIDTH columns, one block per test, so that names are
    never cut), then the details of every test that did not pass, warnings and errors.
    `quiet`: only the model line(s), failures, warnings and errors."""
    Text = _text_type(console)
    several = len({(r.model, r.options) for r in results}) > 1
    for line in model_lines(results):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    if not quiet and results:
        if console.width >= TABLE_WIDTH:
            _table(results, console, timing, max_outcomes, several)
            for r in results:     # listings too long for a cell, in the table's order
                if _cut(r, max_outcomes):
                    console.print(f"allowed outcomes of {r.test.name} ({len(r.states)}):",
                                  markup=False, highlight=False, soft_wrap=True)
                    _write_lines(console, (format_state(s) for s in r.states), "    ")
        else:
            _blocks(results, console, timing, max_outcomes, several)
    for r in results:   # unwrapped details of every test that did not pass, for CI logs
        if r.status != "pass":
            console.print(Text(f"{r.status.upper()} {r.test.name} ({r.test.file}):",
                               style=STYLE[r.status]), soft_wrap=True, markup=False)
            console.print(verdict_text(r), markup=False, highlight=False, soft_wrap=True)
    for w in all_warnings(results):
        console.print(Text(str(w), style="yellow"), soft_wrap=True, markup=False)
    for file, msg in errors:
        console.print(Text(msg, style="bold red"), soft_wrap=True, markup=False)


def _plain_text(text: str, style=None) -> str:
    """What rich's Text(text, style) prints off a terminal."""
    return text


def _text_type(console):
    """rich's Text, or plain strings for a plain console (report/plain.py: no rich import)."""
    if getattr(console, "plain", False):
        return _plain_text
    from rich.text import Text      # rich only when a table is printed (start-up, issue 16)
    return Text


def _table(results, console, timing, max_outcomes, several) -> None:
    from rich.table import Table
    from rich.text import Text
    longest = max(len(r.test.name) for r in results)
    table = Table(show_lines=True)
    table.add_column("test", overflow="fold", min_width=min(longest, 52))
    table.add_column("result")
    table.add_column("allowed outcomes")
    table.add_column("expectations")
    if timing:
        table.add_column("time", justify="right")
    for r in results:
        name = r.test.name + (f"\n(model {r.model})" if several else "")
        row = [Text(name), Text(r.status, style=STYLE[r.status]),
               Text("\n".join(outcome_lines(r, max_outcomes, CELL_MAX))),
               Text(verdict_text(r))]
        if timing:
            row.append(Text(f"{r.seconds:.2f}s"))
        table.add_row(*row)
    console.print(table)


STATUS_WIDTH = max(len(s) for s in ("pass", "fail", "unknown")) + 1


def _blocks(results, console, timing, max_outcomes, several) -> None:
    """For narrow consoles: the status and the whole name on one line, then the outcomes and
    the expectations indented. Nothing is cut; long lines wrap."""
    plain = getattr(console, "plain", False)
    if not plain:
        from rich.text import Text
    for r in results:
        # one column wide enough for the longest status and a space (issue 28 item 7)
        parts = [(f"{r.status:<{STATUS_WIDTH}}", STYLE[r.status]), (r.test.name, "bold")]
        if several:
            parts.append((f"  (model {r.model})", None))
        if timing:
            parts.append((f"  {r.seconds:.2f}s", None))
        if plain:
            head = "".join(p for p, _ in parts)
        else:
            head = Text()
            for p, style in parts:
                head.append(p, style=style)
        console.print(head, soft_wrap=True, markup=False)
        if _cut(r, max_outcomes):     # every outcome, streamed
            lines = outcome_lines(r, max_outcomes, CELL_MAX)
            _write_lines(console, (format_state(s) for s in r.states), "    ")
            lines = lines[CELL_MAX + 1:]      # what follows the listing (incomplete, ...)
        else:
            lines = outcome_lines(r, max_outcomes)
        for line in lines:
            console.print("    " + line, markup=False, highlight=False, soft_wrap=True)
        for line in verdict_text(r).splitlines():
            console.print("    " + line, markup=False, highlight=False, soft_wrap=True)


def summary(results: list[Result], errors: list) -> str:
    c = {k: 0 for k in ("pass", "fail", "unknown")}
    for r in results:
        c[r.status] += 1
    n = len(results) + len(errors)
    short = sum(stopped_short(r) for r in results if r.status == "pass")
    return (f"{n} test{'s' if n != 1 else ''}: {c['pass']} passed"
            + (f" ({short} with an incomplete listing)" if short else "")
            + f", {c['fail']} failed, "
            f"{c['unknown']} unknown, {len(errors)} error{'s' if len(errors) != 1 else ''}")
