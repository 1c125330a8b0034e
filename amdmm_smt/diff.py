"""Outcome diff between two model versions: for every test, the outcomes only A allows, the
outcomes only B allows, and any change of verdict."""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from typing import Optional

from .outcomes import Result, format_state, state_sort_key


@dataclass
class TestDiff:
    name: str
    file: str
    only_a: list          # states allowed by A only (newly forbidden in B)
    only_b: list          # states allowed by B only (newly allowed)
    status_a: str
    status_b: str
    error: Optional[str] = None

    @property
    def changed(self) -> bool:
        return bool(self.only_a or self.only_b or self.status_a != self.status_b or self.error)


def diff_results(pairs: list[tuple[Result, Result]]) -> list[TestDiff]:
    out = []
    for a, b in pairs:
        sa, sb = set(a.states), set(b.states)
        out.append(TestDiff(a.test.name, a.test.file, sorted(sa - sb, key=state_sort_key),
                            sorted(sb - sa, key=state_sort_key), a.status, b.status))
    return out


def summary(diffs: list[TestDiff]) -> dict:
    return {
        "tests": len(diffs),
        "changed": sum(d.changed for d in diffs),
        "newly_allowed": sum(len(d.only_b) for d in diffs),
        "newly_forbidden": sum(len(d.only_a) for d in diffs),
        "verdict_changes": sum(d.status_a != d.status_b for d in diffs),
    }


def to_json(diffs: list[TestDiff], a: str, b: str) -> str:
    return json.dumps({
        "from": a, "to": b, "summary": summary(diffs),
        "tests": [{"name": d.name, "file": d.file, "changed": d.changed,
                   "only_from": [format_state(s) for s in d.only_a],
                   "only_to": [format_state(s) for s in d.only_b],
                   "status_from": d.status_a, "status_to": d.status_b}
                  for d in diffs],
    }, indent=2, sort_keys=True) + "\n"


def to_markdown(diffs: list[TestDiff], a: str, b: str) -> str:
    s = summary(diffs)
    lines = [f"# Outcome diff: `{a}` → `{b}`", "",
             f"{s['tests']} tests compared, {s['changed']} changed: {s['newly_allowed']} "
             f"outcome(s) newly allowed, {s['newly_forbidden']} newly forbidden, "
             f"{s['verdict_changes']} verdict change(s).", ""]
    for d in diffs:
        if not d.changed:
            continue
        lines += [f"## {d.name}", "", f"`{d.file}` — verdict: {d.status_a} → {d.status_b}", "",
                  f"| outcome | {a} | {b} |", "| --- | --- | --- |"]
        for st in d.only_a:
            lines.append(f"| `{format_state(st)}` | allowed | forbidden |")
        for st in d.only_b:
            lines.append(f"| `{format_state(st)}` | forbidden | allowed |")
        lines.append("")
    unchanged = [d.name for d in diffs if not d.changed]
    if unchanged:
        lines += [f"Unchanged ({len(unchanged)}): " + ", ".join(unchanged), ""]
    return "\n".join(lines)


def to_html(diffs: list[TestDiff], a: str, b: str) -> str:
    s = summary(diffs)
    e = html.escape
    parts = ["<!DOCTYPE html><html><head><meta charset='utf-8'>",
             f"<title>Outcome diff {e(a)} to {e(b)}</title><style>",
             "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
             "td,th{border:1px solid #aaa;padding:4px 8px}code{font-size:90%}"
             ".allowed{background:#dfd}.forbidden{background:#fdd}</style></head><body>",
             f"<h1>Outcome diff: <code>{e(a)}</code> &rarr; <code>{e(b)}</code></h1>",
             f"<p>{s['tests']} tests compared, {s['changed']} changed: {s['newly_allowed']} "
             f"outcome(s) newly allowed, {s['newly_forbidden']} newly forbidden, "
             f"{s['verdict_changes']} verdict change(s).</p>"]
    for d in diffs:
        if not d.changed:
            continue
        parts.append(f"<h2>{e(d.name)}</h2><p><code>{e(d.file)}</code> &mdash; verdict: "
                     f"{e(d.status_a)} &rarr; {e(d.status_b)}</p>")
        parts.append(f"<table><tr><th>outcome</th><th>{e(a)}</th><th>{e(b)}</th></tr>")
        for st in d.only_a:
            parts.append(f"<tr><td><code>{e(format_state(st))}</code></td>"
                         "<td class='allowed'>allowed</td><td class='forbidden'>forbidden</td></tr>")
        for st in d.only_b:
            parts.append(f"<tr><td><code>{e(format_state(st))}</code></td>"
                         "<td class='forbidden'>forbidden</td><td class='allowed'>allowed</td></tr>")
        parts.append("</table>")
    parts.append("</body></html>\n")
    return "\n".join(parts)
