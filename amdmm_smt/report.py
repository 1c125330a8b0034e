"""Stage 5: report. A rich table for people, JSON lines for machines. Output is sorted by
file and test name, and outcomes are sorted, so runs diff cleanly."""

from __future__ import annotations

import json

from rich.console import Console
from rich.table import Table
from rich.text import Text

from .outcomes import Result, format_state

STYLE = {"pass": "green", "fail": "bold red", "unknown": "yellow", "error": "bold red"}


def result_record(r: Result, timing: bool = True) -> dict:
    rec = {
        "name": r.test.name,
        "file": r.test.file,
        "model": r.model,
        "status": r.status,
        "complete": r.complete,
        **({"thin_air": True} if getattr(r, "thin_air", False) else {}),
        "outcomes": [{k: ("undef" if v is None else v) for k, v in s} for s in r.states],
        "verdicts": [
            {"kind": v.kind, "expected": v.expected, "status": v.status, "detail": v.detail,
             **({"missing": [format_state(s) for s in v.missing],
                 "unexpected": [format_state(s) for s in v.unexpected]}
                if v.kind == "outcomes" else {})}
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


def print_json(records: list[dict], out) -> None:
    for rec in records:
        out.write(json.dumps(rec, sort_keys=True) + "\n")


def verdict_text(r: Result) -> str:
    parts = []
    for v in r.verdicts:
        if v.kind == "exists":
            parts.append(f"exists {v.expected}: {v.status} ({v.detail})")
        elif v.kind == "undefined":
            parts.append(f"undefined: {v.status} ({v.detail})")
        else:
            s = f"outcomes: {v.status} ({v.detail})"
            for st in v.missing:
                s += f"\n  expected but not allowed: {format_state(st)}"
            for st in v.unexpected:
                s += f"\n  allowed but not expected: {format_state(st)}"
            parts.append(s)
    if getattr(r, "thin_air", False):
        parts.append("outcomes unbounded: a read can return a value out of thin air (load "
                     "buffering through data dependencies; the model has no no-thin-air "
                     "axiom); exists conditions are still decided exactly")
    elif not r.complete:
        parts.append("enumeration incomplete: solver gave up within --timeout")
    if getattr(r, "ub", None):
        u = r.ub
        parts.append(f"undefined behaviour ({'every' if u['all'] else 'some'} execution"
                     f"{'' if u['all'] else 's'}): {u['rule']} at {u['op']}; run: "
                     + (" ; ".join(u["run"]) or "(start)"))
    if not parts:
        parts.append("no expectation given")
    return "\n".join(parts)


def print_table(results: list[Result], errors: list[tuple[str, str]], console: Console,
                timing: bool = True) -> None:
    table = Table(show_lines=True)
    table.add_column("test")
    table.add_column("result")
    table.add_column("allowed outcomes")
    table.add_column("expectations")
    if timing:
        table.add_column("time", justify="right")
    for r in results:
        outs = "\n".join(format_state(s) for s in r.states) or "(none)"
        if r.test.expect == "undefined" and r.undefined:
            outs = "undefined: no defined execution"
        elif getattr(r, "ub", None) and r.ub["all"]:
            outs = f"undefined ({r.ub['rule']}): no defined execution"
        row = [Text(r.test.name), Text(r.status, style=STYLE[r.status]), Text(outs),
               Text(verdict_text(r))]
        if timing:
            row.append(Text(f"{r.seconds:.2f}s"))
        table.add_row(*row)
    console.print(table)
    for r in results:   # unwrapped details of every test that did not pass, for CI logs
        if r.status != "pass":
            console.print(Text(f"{r.status.upper()} {r.test.name} ({r.test.file}):",
                               style=STYLE[r.status]))
            console.print(verdict_text(r), markup=False, highlight=False, soft_wrap=True)
    for file, msg in errors:
        console.print(Text(msg, style="bold red"))


def summary(results: list[Result], errors: list) -> str:
    c = {k: 0 for k in ("pass", "fail", "unknown")}
    for r in results:
        c[r.status] += 1
    n = len(results) + len(errors)
    return (f"{n} test{'s' if n != 1 else ''}: {c['pass']} passed, {c['fail']} failed, "
            f"{c['unknown']} unknown, {len(errors)} error{'s' if len(errors) != 1 else ''}")
