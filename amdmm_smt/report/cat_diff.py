"""`diff --from A.cat --to B.cat` (issue 27 item 5): which definitions of the two model files
differ, beside the outcome differences. Each file is read with everything it includes (the
definition in force is the last one, so a definition a file overrides after an `include`
counts as that file's); two definitions are the same when their abstract syntax is the same
(layout and comments do not count). Axioms and the value statement are compared by name too.
docs/semantics.md §18 "Definitions that differ".
"""

from __future__ import annotations

import dataclasses
import html
import os
from typing import Optional

from ..cat import is_cat, load_cached
from ..cat.syntax import Axiom, Binding, Node


def _shape(n):
    """The abstract syntax without positions (file, line) and comments."""
    if isinstance(n, Node):
        return (type(n).__name__,) + tuple(
            _shape(getattr(n, f.name)) for f in dataclasses.fields(n)
            if f.name not in ("file", "line", "comment"))
    if isinstance(n, tuple):
        return tuple(_shape(x) for x in n)
    return n


def _last_line(n) -> int:
    if isinstance(n, Node):
        out = n.line
        for f in dataclasses.fields(n):
            if f.name not in ("file", "line"):
                out = max(out, _last_line(getattr(n, f.name)))
        return out
    if isinstance(n, tuple):
        return max((_last_line(x) for x in n), default=0)
    return 0


def _source(st, cache: dict) -> str:
    """The statement's text as written: from its first line to the last line of its
    expression."""
    lines = cache.get(st.file)
    if lines is None:
        try:
            with open(st.file, encoding="utf-8") as f:
                lines = cache[st.file] = f.read().splitlines()
        except (OSError, UnicodeDecodeError):
            return "(unreadable)"
    end = _last_line(st.expr if isinstance(st, (Binding, Axiom)) else
                     (st.maysee, st.definite))
    return "\n".join(lines[st.line - 1:max(end, st.line)]).rstrip()


def _statements(path: str) -> dict:
    """(kind, name) -> statement in force: definitions, axioms, the value statement."""
    m = load_cached(path)
    out: dict = {}
    for name, d in m.defs.items():
        out[("definition", name)] = d.b
    for ax in m.axioms:
        out[("axiom", ax.name)] = ax
    if m.value is not None:
        out[("value", m.value.name)] = m.value
    return out


def _where(st) -> str:
    return f"{os.path.basename(st.file)}:{st.line}"


def definition_changes(a, b) -> Optional[list]:
    """Between two model versions that are both model files: every definition, axiom or
    value statement in force in one whose syntax differs from the other's (or that only one
    has), in the order of A's files then B's. None when one of them is not a model file."""
    fa, fb = getattr(a, "cat", None), getattr(b, "cat", None)
    if not (is_cat(fa) and is_cat(fb)):
        return None
    sa, sb = _statements(fa), _statements(fb)
    out: list = []
    cache: dict = {}
    for key in list(sa) + [k for k in sb if k not in sa]:
        x, y = sa.get(key), sb.get(key)
        if x is not None and y is not None and _shape(x) == _shape(y):
            continue
        out.append({"kind": key[0], "name": key[1],
                    "from": None if x is None else _source(x, cache),
                    "from_at": None if x is None else _where(x),
                    "to": None if y is None else _source(y, cache),
                    "to_at": None if y is None else _where(y)})
    return out


def _head(c: dict) -> str:
    at = " -> ".join(s or "(none)" for s in (c["from_at"], c["to_at"]))
    return f"{c['kind']} {c['name']} ({at})"


def text_lines(changes: Optional[list], a, b) -> list:
    if changes is None:
        return []
    out = [f"definitions that differ: {len(changes) or 'none'}"]
    for c in changes:
        out.append(f"  {_head(c)}")
        for who, body in ((a.name, c["from"]), (b.name, c["to"])):
            out.append(f"    {who}:" + (" (not defined)" if body is None else ""))
            out += [f"      {ln}" for ln in (body or "").splitlines()]
    return out + [""]


def markdown_lines(changes: Optional[list], a, b) -> list:
    if changes is None:
        return []
    out = ["## Why: the definitions that differ", ""]
    if not changes:
        return out + ["None: every definition, axiom and value statement is the same.", ""]
    for c in changes:
        out += [f"### `{c['name']}` ({c['kind']})", ""]
        for who, body, at in ((a.name, c["from"], c["from_at"]),
                              (b.name, c["to"], c["to_at"])):
            if body is None:
                out += [f"`{who}`: not defined.", ""]
            else:
                out += [f"`{who}` ({at}):", "", "```text", body, "```", ""]
    return out


def html_lines(changes: Optional[list], a, b) -> list:
    """A side-by-side table: one row per definition, A's body beside B's."""
    if changes is None:
        return []
    e = html.escape
    out = ["<h2>Why: the definitions that differ</h2>"]
    if not changes:
        return out + ["<p>None: every definition, axiom and value statement is the "
                      "same.</p>"]
    out.append(f"<table class='defs'><tr><th>definition</th><th>{e(a.name)}</th>"
               f"<th>{e(b.name)}</th></tr>")
    for c in changes:
        cells = []
        for body, at in ((c["from"], c["from_at"]), (c["to"], c["to_at"])):
            cells.append("<td><em>not defined</em></td>" if body is None else
                         f"<td><span class='note'>{e(at)}</span><pre>{e(body)}</pre></td>")
        out.append(f"<tr><td><code>{e(c['name'])}</code><br><span class='note'>"
                   f"{e(c['kind'])}</span></td>{''.join(cells)}</tr>")
    out.append("</table>")
    return out
