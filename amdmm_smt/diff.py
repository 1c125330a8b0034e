"""Outcome diff between two model versions: for every test, the outcomes only A allows, the
outcomes only B allows, and any change of verdict."""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, field
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
    # per changed outcome: the witness under the model that allows it, the named families
    # that forbid it under the other (amdmm_smt/explain.py); filled by explain_changes
    explanations: list = field(default_factory=list)

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


def explain_changes(diffs: list[TestDiff], tests: list, model_a, model_b,
                    timeout: float = 60.0) -> None:
    """For every outcome that changed: a witness under the model that allows it and the
    minimal families forbidding it under the other."""
    from .explain import explain, format_witness, parse_outcome
    by_file = {t.file: t for t in tests}
    for d in diffs:
        t = by_file.get(d.file)
        if t is None:
            continue
        for states, allow, forbid in ((d.only_a, model_a, model_b),
                                      (d.only_b, model_b, model_a)):
            for st in states:
                text = format_state(st)
                cond = parse_outcome(t, text)
                wa = explain(t, allow, cond, timeout=timeout)
                fb = explain(t, forbid, cond, timeout=timeout)
                d.explanations.append({
                    "outcome": text, "allowed_by": allow.name, "forbidden_by": forbid.name,
                    "witness": wa.witness,
                    "witness_text": format_witness(wa.witness) if wa.witness else [],
                    "families": fb.core if fb.reachable is False else None})


def _families_line(e: dict) -> str:
    if e["families"] is None:
        return "(not decided within the timeout)"
    return ", ".join(e["families"]) or "the structure of executions alone"


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
                   "status_from": d.status_a, "status_to": d.status_b,
                   **({"explanations": [
                       {"outcome": e["outcome"], "allowed_by": e["allowed_by"],
                        "witness": e["witness"], "forbidden_by": e["forbidden_by"],
                        "families": e["families"]} for e in d.explanations]}
                      if d.explanations else {})}
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
        for e in d.explanations:
            lines += [f"`{e['outcome']}`: forbidden under `{e['forbidden_by']}` by "
                      f"{_families_line(e)}; a witness under `{e['allowed_by']}`:", "",
                      "```", *e["witness_text"], "```", ""]
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
        for x in d.explanations:
            parts.append(f"<p><code>{e(x['outcome'])}</code>: forbidden under "
                         f"<code>{e(x['forbidden_by'])}</code> by {e(_families_line(x))}."
                         f"</p><details><summary>a witness under <code>"
                         f"{e(x['allowed_by'])}</code></summary><pre>"
                         f"{e(chr(10).join(x['witness_text']))}</pre></details>")
    parts.append("</body></html>\n")
    return "\n".join(parts)
