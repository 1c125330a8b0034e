"""Pictures of a witness execution (amdmm_smt/explain/witness.py), like herd7's: one column per thread
in program order, the initial writes on top; edges po (black), rf (red), co (blue), sw
(green), happens-before beyond program order and sw (orange, dashed, transitively reduced).

`to_dot` writes Graphviz source (node positions pinned, so `neato -n2` keeps the columns; `dot`
lays it out by itself); `to_svg` lays the picture out and writes SVG itself, so no Graphviz is
needed to install or to run. Both are deterministic.
"""

from __future__ import annotations

from html import escape

COL_W, ROW_H, NODE_W, NODE_H, MARGIN = 250, 92, 196, 44, 30

EDGE_STYLE = {          # kind -> (colour, dashed)
    "po": ("#000000", False),
    "rf": ("#c62828", False),
    "co": ("#1565c0", False),
    "sw": ("#2e7d32", False),
    "hb": ("#ef6c00", True),
}


def _layout(wt: dict):
    """Node positions (centre x, y) and the edges (kind, from, to, label)."""
    threads = wt["threads"]
    events = wt["events"]
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
    for s in wt["sw"]:
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
    return pos, edges


def _in_order(events: list, t: str) -> list:
    return [e for _, _, e in sorted((e["pos"], i, e) for i, e in enumerate(events)
                                    if e["thread"] == t)]


def effects(e: dict) -> list[str]:
    """What a witness event did: the value it read, the value it wrote (or that it did not)."""
    extra = []
    if "read" in e:
        extra.append(f"read {e['read']}")
    if e.get("writes"):
        extra.append(f"wrote {e['wrote']}")
    elif "writes" in e:
        extra.append("did not write")
    return extra


def _label(e: dict) -> list[str]:
    if e["thread"] is None:
        return [e["id"], f"wrote {e.get('wrote', 'undef')}"]
    first = f"{e['id']}  {e['short']}"
    return [first, (", ".join(effects(e)) + f"  [{e['scope']}]").strip()]


def to_dot(wt: dict, title: str = "") -> str:
    pos, edges = _layout(wt)
    out = ["digraph witness {", f"  label={_q(title)}; labelloc=t;",
           "  node [shape=box, fontname=\"monospace\", fontsize=10];",
           "  edge [fontname=\"sans-serif\", fontsize=9];"]
    ids = {e["id"]: f"e{i}" for i, e in enumerate(wt["events"])}
    inits = [e for e in wt["events"] if e["thread"] is None]
    if inits:
        out.append("  { rank=min; " + " ".join(ids[e["id"]] for e in inits) + "; }")
    for ci, t in enumerate(wt["threads"]):
        out.append(f"  subgraph cluster_{ci} {{ label={_q(t)};")
        for e in wt["events"]:
            if e["thread"] == t:
                out.append(_dot_node(ids[e["id"]], e, pos))
        out.append("  }")
    for e in inits:
        out.append(_dot_node(ids[e["id"]], e, pos))
    for kind, a, b, lab in edges:
        colour, dashed = EDGE_STYLE[kind]
        attrs = [f"label={_q(lab)}", f"color={_q(colour)}", f"fontcolor={_q(colour)}"]
        if dashed:
            attrs.append("style=dashed")
        attrs.append("weight=10" if kind == "po" else "constraint=false")
        out.append(f"  {ids[a]} -> {ids[b]} [{', '.join(attrs)}];")
    out.append("}")
    return "\n".join(out) + "\n"


def _dot_node(nid: str, e: dict, pos: dict) -> str:
    x, y = pos[e["id"]]
    return (f"    {nid} [label={_q(chr(10).join(_label(e)))}, "
            f"pos=\"{x:.0f},{-y:.0f}!\"];")


def _q(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def to_svg(wt: dict, title: str = "") -> str:
    pos, edges = _layout(wt)
    ncols = max(len(wt["threads"]), sum(1 for e in wt["events"] if e["thread"] is None))
    width = 2 * MARGIN + (ncols - 1) * COL_W + NODE_W + 60
    height = max(y for _, y in pos.values()) + NODE_H / 2 + MARGIN + 24
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" '
           f'height="{height + 20:.0f}" viewBox="0 -20 {width:.0f} {height + 20:.0f}" '
           'font-family="monospace" font-size="11">', "<defs>"]
    for kind, (colour, _) in EDGE_STYLE.items():
        out.append(f'<marker id="arrow-{kind}" viewBox="0 0 10 10" refX="10" refY="5" '
                   f'markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
                   f'<path d="M 0 0 L 10 5 L 0 10 z" fill="{colour}"/></marker>')
    out.append("</defs>")
    out.append(f'<text x="{MARGIN}" y="-4" font-family="sans-serif" font-size="13" '
               f'font-weight="bold">{escape(title)}</text>')
    for ci, t in enumerate(wt["threads"]):
        x = MARGIN + NODE_W / 2 + ci * COL_W
        y0 = min(pos[e["id"]][1] for e in wt["events"] if e["thread"] == t) - NODE_H / 2 - 8
        out.append(f'<text x="{x:.0f}" y="{y0:.0f}" text-anchor="middle" '
                   f'font-family="sans-serif" font-weight="bold">{escape(t)}</text>')
    # edges first, nodes on top
    seen_pairs: dict = {}
    for kind, a, b, lab in edges:
        n = seen_pairs.get((a, b), 0) + seen_pairs.get((b, a), 0)
        seen_pairs[(a, b)] = seen_pairs.get((a, b), 0) + 1
        out.append(_svg_edge(pos[a], pos[b], kind, lab, n))
    for e in wt["events"]:
        x, y = pos[e["id"]]
        l1, l2 = _label(e)
        out.append(f'<g><rect x="{x - NODE_W / 2:.0f}" y="{y - NODE_H / 2:.0f}" '
                   f'width="{NODE_W}" height="{NODE_H}" rx="5" fill="#ffffff" '
                   f'stroke="#333333"/>'
                   f'<text x="{x:.0f}" y="{y - 4:.0f}" text-anchor="middle">{escape(l1)}</text>'
                   f'<text x="{x:.0f}" y="{y + 12:.0f}" text-anchor="middle" font-size="9" '
                   f'fill="#555555">{escape(l2)}</text></g>')
    ly = height - 6
    lx = MARGIN
    for kind, (colour, dashed) in EDGE_STYLE.items():
        dash = ' stroke-dasharray="5,3"' if dashed else ""
        out.append(f'<line x1="{lx}" y1="{ly - 4}" x2="{lx + 24}" y2="{ly - 4}" '
                   f'stroke="{colour}" stroke-width="1.5"{dash}/>'
                   f'<text x="{lx + 28}" y="{ly}" font-family="sans-serif" '
                   f'fill="{colour}">{kind}</text>')
        lx += 70
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _svg_edge(p0, p1, kind: str, label: str, nth: int) -> str:
    colour, dashed = EDGE_STYLE[kind]
    (x0, y0), (x1, y1) = p0, p1
    hw, hh = NODE_W / 2, NODE_H / 2
    if abs(x0 - x1) < 1:                         # same column
        if kind == "po" and abs(y1 - y0) <= ROW_H + 1:
            sx, sy, ex, ey = x0, y0 + hh, x1, y1 - hh
            cx, cy = (sx + ex) / 2, (sy + ey) / 2
        else:                                     # bow out to the right
            side = hw
            sx, sy, ex, ey = x0 + side, y0, x1 + side, y1
            cx, cy = x0 + side + 40 + 18 * nth + abs(y1 - y0) * 0.15, (y0 + y1) / 2
    elif abs(y0 - y1) < 1 and abs(x1 - x0) > COL_W + 1:
        # same row, columns apart: arc over the nodes in between, top to top
        sx, sy, ex, ey = x0 + (10 if x1 > x0 else -10), y0 - hh, x1, y1 - hh
        cx, cy = (sx + ex) / 2, y0 - hh - 26 - 12 * nth - 0.12 * abs(x1 - x0)
    else:
        right = x1 > x0
        sx = x0 + (hw if right else -hw)
        ex = x1 - (hw if right else -hw)
        sy, ey = y0 + 6 * nth, y1
        bend = 18 + 16 * nth
        cx = (sx + ex) / 2
        cy = (sy + ey) / 2 - bend
    t = 0.5 if kind == "po" else 0.3      # off the middle, where crossing edges meet
    mx = (1 - t) ** 2 * sx + 2 * t * (1 - t) * cx + t * t * ex
    my = (1 - t) ** 2 * sy + 2 * t * (1 - t) * cy + t * t * ey
    dash = ' stroke-dasharray="5,3"' if dashed else ""
    return (f'<g><path d="M {sx:.1f} {sy:.1f} Q {cx:.1f} {cy:.1f} {ex:.1f} {ey:.1f}" '
            f'fill="none" stroke="{colour}" stroke-width="1.4"{dash} '
            f'marker-end="url(#arrow-{kind})"/>'
            f'<text x="{mx:.1f}" y="{my - 3 - 10 * nth:.1f}" text-anchor="middle" '
            f'font-family="sans-serif" '
            f'font-size="10" fill="{colour}">{escape(label)}</text></g>')
