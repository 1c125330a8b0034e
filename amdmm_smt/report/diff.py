"""Outcome diff between two model versions: for every test, the outcomes only A allows, the
outcomes only B allows, and any change of verdict; the reports say why as far as the tool
knows it: the model options that differ, each changed test's description and code.

A test that names its own `model:` is run under both versions like every other test (the two
versions are what is compared); the reports mark it, since its expectations were written for
the model it names. A test that cannot be run is an error row, and the diff goes on."""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, field, fields
from typing import Optional

from ..model import Model, Options
from .cat_diff import definition_changes, html_lines, markdown_lines, text_lines
from ..outcomes import format_state, state_sort_key


@dataclass
class TestDiff:
    name: str
    file: str
    only_a: list          # states allowed by A only (newly forbidden in B)
    only_b: list          # states allowed by B only (newly allowed)
    status_a: str
    status_b: str
    error: Optional[str] = None
    description: str = ""
    code: str = ""        # the test's memory, threads and expectations, as a short listing
    own_model: Optional[str] = None   # the test's own `model:` (overridden by --from / --to)
    states: list = field(default_factory=list)   # outcomes both allow
    # per changed outcome: the witness under the model that allows it, the named families
    # that forbid it under the other (amdmm_smt/explain/witness.py); filled by explain_changes
    explanations: list = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.only_a or self.only_b or self.status_a != self.status_b)


def listing(t) -> str:
    """A test's code as the reports show it: memory, each thread's placement and code, and the
    expectations (instructions as written in the file)."""
    mem = ", ".join(f"@{n} {loc.space}" + ("" if loc.space == "barrier" else
                                           f" = {'undef' if loc.init is None else loc.init}")
                    for n, loc in t.memory.items())
    out = [f"memory: {mem}"]
    if t.target:
        out.append(f"target: {t.target}")
    for th in t.threads:
        place = f"agent {th.agent}, cluster {th.cluster}, workgroup {th.workgroup}" + (
            f", wavefront {th.wavefront}" if th.wavefront is not None else "")
        out.append(f"{th.name} ({place}):")
        out += [f"  {' '.join(i.text.split())}" for i in th.code]
    if t.exists is not None:
        out.append(f"exists: {t.exists.text}   expect: {t.expect}")
    elif t.expect:
        out.append(f"expect: {t.expect}")
    for o in t.outcomes or []:
        out.append(f"outcome: {o.text}")
    return "\n".join(out)


def diff_results(ra: list, rb: list, parse_errors: list = ()) -> list[TestDiff]:
    """ra, rb: run_all's [(test, Result|None, error|None)] under A and under B, same order;
    parse_errors: [(file, message)] of files that did not load (error rows)."""
    out = []
    for (t, a, ea), (_, b, eb) in zip(ra, rb):
        err = ea or eb
        if err or a is None or b is None:
            out.append(TestDiff(t.name, t.file, [], [], "error" if ea else a.status,
                                "error" if eb else b.status, error=err or "no result",
                                description=t.description, code=listing(t),
                                own_model=t.model_written or t.model))
            continue
        sa, sb = set(a.states), set(b.states)
        out.append(TestDiff(t.name, t.file, sorted(sa - sb, key=state_sort_key),
                            sorted(sb - sa, key=state_sort_key), a.status, b.status,
                            description=t.description, code=listing(t),
                            own_model=t.model_written or t.model,
                            states=sorted(sa & sb, key=state_sort_key)))
    for f, m in parse_errors:
        out.append(TestDiff(f, f, [], [], "error", "error", error=m))
    return sorted(out, key=lambda d: (d.file, d.name))


def explain_changes(diffs: list[TestDiff], tests: list, model_a: Model, model_b: Model,
                    timeout: float = 60.0, explain_many=None) -> None:
    """For every outcome that changed: a witness under the model that allows it and the
    minimal families forbidding it under the other (amdmm_smt/explain/witness.py).
    `explain_many([(test, model, outcome text), ...])` gives each one's (reachable, witness,
    core) (`run.commands.explain_many`: each in a worker under --timeout / --memory); by
    default they run here."""
    from ..explain.witness import format_witness
    by_file = {t.file: t for t in tests}
    jobs, where = [], []
    for d in diffs:
        t = by_file.get(d.file)
        if t is None or d.error:
            continue
        for states, allow, forbid in ((d.only_a, model_a, model_b),
                                      (d.only_b, model_b, model_a)):
            for st in states:
                text = format_state(st)
                jobs += [(t, allow, text), (t, forbid, text)]
                where.append((d, text, allow, forbid))
    got = (explain_many or _explain_here)(jobs, timeout)
    for k, (d, text, allow, forbid) in enumerate(where):
        wa, fb = got[2 * k], got[2 * k + 1]
        witness = wa[1] if wa else None
        d.explanations.append({
            "outcome": text, "allowed_by": allow.name, "forbidden_by": forbid.name,
            "witness": witness,
            "witness_text": format_witness(witness) if witness else [],
            "families": fb[2] if fb and fb[0] is False else None})


def _explain_here(jobs: list, timeout: float) -> list:
    from ..explain.witness import explain, parse_outcome
    out = []
    for t, model, text in jobs:
        ex = explain(t, model, parse_outcome(t, text), timeout=timeout)
        out.append((ex.reachable, ex.witness, ex.core))
    return out


def _families_line(e: dict) -> str:
    if e["families"] is None:
        return "(not decided within the timeout)"
    return ", ".join(e["families"]) or "the structure of executions alone"


def summary(diffs: list[TestDiff]) -> dict:
    ok = [d for d in diffs if not d.error]
    return {
        "tests": len(ok),
        "changed": sum(d.changed for d in ok),
        "newly_allowed": sum(len(d.only_b) for d in ok),
        "newly_forbidden": sum(len(d.only_a) for d in ok),
        "verdict_changes": sum(d.status_a != d.status_b for d in ok),
        "errors": len(diffs) - len(ok),
    }


def _v(v) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def option_changes(a: Model, b: Model) -> list[tuple[str, str, str]]:
    """(option, value in A, value in B) for every option the two versions set differently."""
    return [(f.name, _v(getattr(a.options, f.name)), _v(getattr(b.options, f.name)))
            for f in fields(Options) if getattr(a.options, f.name) != getattr(b.options, f.name)]


def _summary_line(s: dict) -> str:
    line = (f"{s['tests']} tests compared, {s['changed']} changed: {s['newly_allowed']} "
            f"outcome(s) newly allowed, {s['newly_forbidden']} newly forbidden, "
            f"{s['verdict_changes']} verdict change(s)")
    if s["errors"]:
        line += f"; {s['errors']} test(s) could not be run (error rows)"
    return line


LEGEND = [
    "allowed / forbidden: whether the model version allows the outcome (a final state: every "
    "register, and the final value of every location a condition names; `undef` is a value of "
    "its own).",
    "verdict: the test's own expectations (`exists` / `expect`, `outcomes`) judged under each "
    "version: pass, fail, unknown (undecided within the limits) or error (could not be run).",
    "rows marked allowed in both columns are outcomes the two versions share, shown for "
    "context.",
    "own model: the test names a `model:` of its own; here it is run under both versions "
    "anyway, so a verdict change may only mean its expectations were written for the other "
    "version.",
]


def to_json(diffs: list[TestDiff], a: Model, b: Model) -> str:
    return json.dumps({
        "from": a.name, "to": b.name, "summary": summary(diffs),
        "options_changed": [{"option": o, "from": x, "to": y} for o, x, y in
                            option_changes(a, b)],
        **({"definitions_changed": dc} if (dc := definition_changes(a, b)) is not None
           else {}),
        "tests": [{"name": d.name, "file": d.file, "changed": d.changed,
                   "only_from": [format_state(s) for s in d.only_a],
                   "only_to": [format_state(s) for s in d.only_b],
                   "status_from": d.status_a, "status_to": d.status_b,
                   **({"error": d.error} if d.error else {}),
                   **({"explanations": [
                       {"outcome": x["outcome"], "allowed_by": x["allowed_by"],
                        "witness": x["witness"], "forbidden_by": x["forbidden_by"],
                        "families": x["families"]} for x in d.explanations]}
                      if d.explanations else {}),
                   **({"own_model": d.own_model} if d.own_model else {})}
                  for d in diffs],
    }, indent=2, sort_keys=True) + "\n"


def to_text(diffs: list[TestDiff], a: Model, b: Model) -> str:
    """The plain-text report (what `--format text -o FILE` writes)."""
    s = summary(diffs)
    lines = [f"outcome diff {a.name} -> {b.name}", ""]
    oc = option_changes(a, b)
    lines.append("options that differ: " + (", ".join(f"{o}: {x} -> {y}" for o, x, y in oc)
                                            if oc else "none"))
    lines.append("")
    lines += text_lines(definition_changes(a, b), a, b)
    for d in diffs:
        if d.error:
            lines += [f"ERROR {d.name}: {d.error}", ""]
            continue
        if not d.changed:
            continue
        own = f" (names model: {d.own_model})" if d.own_model else ""
        lines.append(f"{d.name}{own} [{d.file}]: verdict {d.status_a} -> {d.status_b}")
        lines += [f"  only {a.name} allows: {format_state(x)}" for x in d.only_a]
        lines += [f"  only {b.name} allows: {format_state(x)}" for x in d.only_b]
        for x in d.explanations:
            lines += [f"  {x['outcome']}: forbidden under {x['forbidden_by']} by "
                      f"{_families_line(x)}; a witness under {x['allowed_by']}:"]
            lines += ["    " + ln for ln in x["witness_text"]]
        lines.append("")
    unchanged = [d.name for d in diffs if not d.changed and not d.error]
    if unchanged:
        lines += [f"unchanged ({len(unchanged)}): " + ", ".join(unchanged), ""]
    lines.append(_summary_line(s))
    return "\n".join(lines) + "\n"


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|")


def to_markdown(diffs: list[TestDiff], a: Model, b: Model) -> str:
    s = summary(diffs)
    lines = [f"# Outcome diff: `{a.name}` → `{b.name}`", "", _summary_line(s) + ".", ""]
    lines += ["## Why: the model options that differ", ""]
    oc = option_changes(a, b)
    if oc:
        lines += [f"| option | `{a.name}` | `{b.name}` |", "| --- | --- | --- |"]
        lines += [f"| `{o}` | {x} | {y} |" for o, x, y in oc]
    else:
        lines.append("None: the two versions set every option alike.")
    lines += ["", f"- `{a.name}`: {a.description or '(no description)'}",
              f"- `{b.name}`: {b.description or '(no description)'}", ""]
    lines += markdown_lines(definition_changes(a, b), a, b)
    lines += ["## Legend", ""] + [f"- {x}" for x in LEGEND] + [""]
    errs = [d for d in diffs if d.error]
    if errs:
        lines += ["## Tests that could not be run", "", "| test | error |", "| --- | --- |"]
        lines += [f"| `{_md_cell(d.name)}` | {_md_cell(d.error)} |" for d in errs]
        lines.append("")
    lines += ["## Changed tests", ""]
    changed = [d for d in diffs if d.changed and not d.error]
    if not changed:
        lines += ["None.", ""]
    for d in changed:
        own = (f" Names its own `model: {d.own_model}`; run here under both versions." if
               d.own_model else "")
        lines += [f"### {d.name}", "", f"`{d.file}` — verdict: {d.status_a} → {d.status_b}."
                  + own, ""]
        if d.description:
            lines += ["> " + " ".join(d.description.split()), ""]
        lines += ["```text", d.code, "```", "",
                  f"| outcome | {a.name} | {b.name} |", "| --- | --- | --- |"]
        for st in d.only_a:
            lines.append(f"| `{_md_cell(format_state(st))}` | allowed | forbidden |")
        for st in d.only_b:
            lines.append(f"| `{_md_cell(format_state(st))}` | forbidden | allowed |")
        for st in d.states:
            lines.append(f"| `{_md_cell(format_state(st))}` | allowed | allowed |")
        lines.append("")
        for x in d.explanations:
            lines += [f"`{x['outcome']}`: forbidden under `{x['forbidden_by']}` by "
                      f"{_families_line(x)}; a witness under `{x['allowed_by']}`:", "",
                      "```text", *x["witness_text"], "```", ""]
    unchanged = [d for d in diffs if not d.changed and not d.error]
    lines += [f"## Unchanged tests ({len(unchanged)})", ""]
    lines += [f"- `{d.name}`" + (f" (names model: {d.own_model})" if d.own_model else "")
              for d in unchanged] or ["None."]
    lines.append("")
    return "\n".join(lines)


_CSS = ("body{font-family:sans-serif;margin:2em;max-width:70em;line-height:1.4}"
        "table{border-collapse:collapse;margin:.5em 0}"
        "td,th{border:1px solid #aaa;padding:4px 8px;text-align:left;vertical-align:top}"
        "code,pre{font-size:90%}pre{background:#f4f4f4;padding:.6em;overflow-x:auto}"
        ".allowed{background:#dfd}.forbidden{background:#fdd}.error{background:#fdd}"
        "blockquote{margin:.5em 0;padding-left:1em;border-left:3px solid #ccc;color:#333}"
        ".note{color:#555}ul.unchanged{columns:2}table.defs pre{margin:0;background:none}")


def _code(escaped: str) -> str:
    """Markdown `code` spans of an already escaped text as <code>."""
    import re
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", escaped)


def to_html(diffs: list[TestDiff], a: Model, b: Model) -> str:
    s = summary(diffs)
    e = html.escape
    an, bn = e(a.name), e(b.name)
    p = ["<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
         f"<title>Outcome diff {an} to {bn}</title><style>{_CSS}</style></head><body>",
         f"<h1>Outcome diff: <code>{an}</code> &rarr; <code>{bn}</code></h1>",
         f"<p>{e(_summary_line(s))}.</p>",
         "<h2>Why: the model options that differ</h2>"]
    oc = option_changes(a, b)
    if oc:
        p.append(f"<table><tr><th>option</th><th>{an}</th><th>{bn}</th></tr>")
        p += [f"<tr><td><code>{e(o)}</code></td><td>{e(x)}</td><td>{e(y)}</td></tr>"
              for o, x, y in oc]
        p.append("</table>")
    else:
        p.append("<p>None: the two versions set every option alike.</p>")
    p.append(f"<ul><li><code>{an}</code>: {e(a.description or '(no description)')}</li>"
             f"<li><code>{bn}</code>: {e(b.description or '(no description)')}</li></ul>")
    p += html_lines(definition_changes(a, b), a, b)
    p.append("<h2>Legend</h2><ul>" + "".join(
        f"<li>{_code(e(x))}</li>" for x in LEGEND) +
        "<li><span class='allowed'>&nbsp;allowed&nbsp;</span> / "
        "<span class='forbidden'>&nbsp;forbidden&nbsp;</span>: cell colours.</li></ul>")
    errs = [d for d in diffs if d.error]
    if errs:
        p.append("<h2>Tests that could not be run</h2><table><tr><th>test</th><th>error</th>"
                 "</tr>")
        p += [f"<tr class='error'><td><code>{e(d.name)}</code></td><td>{e(d.error)}</td></tr>"
              for d in errs]
        p.append("</table>")
    p.append("<h2>Changed tests</h2>")
    changed = [d for d in diffs if d.changed and not d.error]
    if not changed:
        p.append("<p>None.</p>")
    for d in changed:
        own = (f" <span class='note'>Names its own <code>model: {e(d.own_model)}</code>; run "
               "here under both versions.</span>" if d.own_model else "")
        p.append(f"<h3 id='{e(d.name)}'>{e(d.name)}</h3><p><code>{e(d.file)}</code> &mdash; "
                 f"verdict: {e(d.status_a)} &rarr; {e(d.status_b)}.{own}</p>")
        if d.description:
            p.append(f"<blockquote>{e(' '.join(d.description.split()))}</blockquote>")
        p.append(f"<details><summary>code</summary><pre>{e(d.code)}</pre></details>")
        p.append(f"<table><tr><th>outcome</th><th>{an}</th><th>{bn}</th></tr>")
        rows = ([(st, "allowed", "forbidden") for st in d.only_a] +
                [(st, "forbidden", "allowed") for st in d.only_b] +
                [(st, "allowed", "allowed") for st in d.states])
        for st, x, y in rows:
            p.append(f"<tr><td><code>{e(format_state(st))}</code></td>"
                     f"<td class='{x}'>{x}</td><td class='{y}'>{y}</td></tr>")
        p.append("</table>")
        for x in d.explanations:
            p.append(f"<p><code>{e(x['outcome'])}</code>: forbidden under "
                     f"<code>{e(x['forbidden_by'])}</code> by {e(_families_line(x))}.</p>"
                     f"<details><summary>a witness under <code>{e(x['allowed_by'])}</code>"
                     f"</summary><pre>{e(chr(10).join(x['witness_text']))}</pre></details>")
    unchanged = [d for d in diffs if not d.changed and not d.error]
    p.append(f"<h2>Unchanged tests ({len(unchanged)})</h2><ul class='unchanged'>")
    p += [f"<li><code>{e(d.name)}</code>" + (f" (names model: {e(d.own_model)})"
                                             if d.own_model else "") + "</li>"
          for d in unchanged]
    p.append("</ul></body></html>\n")
    return "\n".join(p)
