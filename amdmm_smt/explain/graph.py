"""Pictures of a witness execution (amdmm_smt/explain/witness.py), like herd7's: one column per thread
in program order (its name and where it runs on top), the initial writes above; edges po
(black), rf (red), co (blue), fr (purple, dashed), sw (green), happens-before beyond program
order and sw (orange, dashed, transitively reduced), barrier-executes-before between barrier
operations (teal; one node per operation and loop iteration, edges transitively reduced,
issue 28.6). A closest candidate of a forbidden outcome (witness.closest) has the events and
edges of the rule it breaks marked, and the rule in a caption; with the read-value rule
broken, the writes the read may see are marked with a `may see` edge to it.

`to_dot` writes Graphviz source (node positions pinned, so `neato -n2` keeps the columns; `dot`
lays it out by itself); `to_svg` (svg.py) lays the picture out and writes SVG itself, so no
Graphviz is needed to install or to run. Both are deterministic.
"""

from __future__ import annotations

from html import escape

from .svg import BROKEN, EDGE_STYLE, draw, drawn_sw, effects, node_lines  # noqa: F401  (effects: witness.py)

COL_W, ROW_H, NODE_W, NODE_H, MARGIN = 250, 92, 196, 44, 30


def _layout(wt: dict):
    """Node positions (centre x, y) and the edges (kind, from, to, label)."""
    threads = wt["threads"]
    # issue 28.6: the explicit barrier operations are nodes too, one per operation and
    # iteration, in program order among the events of their wave's first thread
    events = _nodes(wt)
    inits = [e for e in events if e["thread"] is None]
    top = 1 if inits else 0
    pos = {}
    for i, e in enumerate(inits):
        pos[e["id"]] = (MARGIN + NODE_W / 2 + i * COL_W, MARGIN + NODE_H / 2)
    for ci, t in enumerate(threads):
        # one row per event in program order (an async copy's read and write share their
        # instruction's position: they get rows of their own, after it)
        for row, e in enumerate(_in_order(events, t)):
            pos[e["id"]] = (MARGIN + NODE_W / 2 + ci * COL_W,
                            MARGIN + NODE_H / 2 + (top + 0.6 + row) * ROW_H)
    edges = []
    for t in threads:
        evs = [e for e in _in_order(events, t) if e["kind"] not in ("dma_read", "dma_write")]
        for a, b in zip(evs, evs[1:]):
            edges.append(("po", a["id"], b["id"], "po"))
    for a, b in wt["rf"]:
        edges.append(("rf", a, b, "rf"))
    for loc, ws in sorted(wt["co"].items()):
        for a, b in zip(ws, ws[1:]):
            edges.append(("co", a, b, "co"))
    sw = set()
    for s in drawn_sw(wt):
        sw.add((s["from"], s["to"]))
        edges.append(("sw", s["from"], s["to"],
                      "sw (barrier)" if "barrier" in s else "sw"))
    multi = len(wt["hb"]) > 1
    for g in wt["hb"]:
        for h in g["edges"]:
            if h["po"] or (h["from"], h["to"]) in sw:
                continue
            lab = "hb" + (f" ({', '.join(g['spaces'])})" if multi else "")
            edges.append(("hb", h["from"], h["to"], lab))
    ops = {o["id"] for o in wt.get("barrier_ops", [])}
    for p in wt.get("barrier", []):      # transitively reduced, beyond program order
        if p["arrive"] in ops and p["wait"] in ops and not p.get("po"):
            edges.append(("bar", p["arrive"], p["wait"], "bar"))
    for w, r in (wt.get("broken") or {}).get("may_see", []):   # issue 28.6, as svg.py
        edges.append(("maysee", w, r, "may see"))
    return pos, edges


def _nodes(wt: dict) -> list:
    return list(wt["events"]) + list(wt.get("barrier_ops", []))


def _in_order(events: list, t: str) -> list:
    return [e for _, _, e in sorted((e["pos"], i, e) for i, e in enumerate(events)
                                    if e["thread"] == t)]


def _label(e: dict) -> list[str]:
    if e["kind"].startswith("barrier_"):
        return node_lines(e)
    if e["thread"] is None:
        return [e["id"], f"wrote {e.get('wrote', 'undef')}"]
    first = f"{e['id']}  {e['short']}"
    return [first, (", ".join(effects(e)) + f"  [{e['scope']}]").strip()]


def to_dot(wt: dict, title: str = "") -> str:
    pos, edges = _layout(wt)
    out = ["digraph witness {", f"  label={_q(title)}; labelloc=t;",
           "  node [shape=box, fontname=\"monospace\", fontsize=10];",
           "  edge [fontname=\"sans-serif\", fontsize=9];"]
    nodes = _nodes(wt)
    ids = {e["id"]: (f"e{i}" if i < len(wt["events"]) else f"b{i - len(wt['events'])}")
           for i, e in enumerate(nodes)}
    inits = [e for e in nodes if e["thread"] is None]
    if inits:
        out.append("  { rank=min; " + " ".join(ids[e["id"]] for e in inits) + "; }")
    for ci, t in enumerate(wt["threads"]):
        out.append(f"  subgraph cluster_{ci} {{ label={_q(t)};")
        for e in nodes:
            if e["thread"] == t:
                out.append(_dot_node(ids[e["id"]], e, pos))
        out.append("  }")
    for e in inits:
        out.append(_dot_node(ids[e["id"]], e, pos))
    broken = wt.get("broken") or {}
    bev = set(broken.get("events", [])) | {w for w, _ in broken.get("may_see", [])}
    bpairs = {frozenset(p) for p in broken.get("edges", [])} | {
        frozenset(p) for p in broken.get("may_see", [])}
    for e in nodes:                       # a closest candidate: what breaks the rule, in red
        if e["id"] in bev:
            out.append(f"  {ids[e['id']]} [color={_q(BROKEN)}, penwidth=3];")
    for kind, a, b, lab in edges:
        colour, dashed = EDGE_STYLE[kind]
        attrs = [f"label={_q(lab)}", f"color={_q(colour)}", f"fontcolor={_q(colour)}"]
        if frozenset((a, b)) in bpairs:
            attrs.append("penwidth=3")
        if dashed:
            attrs.append("style=dashed")
        attrs.append("weight=10" if kind == "po" else "constraint=false")
        out.append(f"  {ids[a]} -> {ids[b]} [{', '.join(attrs)}];")
    out.append("}")
    return "\n".join(out) + "\n"


def _dot_node(nid: str, e: dict, pos: dict) -> str:
    x, y = pos[e["id"]]
    extra = ""
    if e["kind"].startswith("barrier_"):      # as svg.py draws them: rounded, teal fill
        extra = ', style="rounded,filled", fillcolor="#e0f2f1"'
    return (f"    {nid} [label={_q(chr(10).join(_label(e)))}, "
            f"pos=\"{x:.0f},{-y:.0f}!\"{extra}];")


def _q(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def to_svg(wt: dict, title: str = "", forbidden_by: list = None) -> str:
    return draw(wt, title, forbidden_by)
