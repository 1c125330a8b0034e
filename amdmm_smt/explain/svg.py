"""A witness (or closest candidate) as SVG, laid out here: no Graphviz, no dependency.

Layout: one column per thread, events (and barrier operations) top to bottom in program
order, row i of every thread on one line; the initial writes in a row above the thread
names. Every text is monospace, so a box is sized to its text (CHAR em per character, a
little wider than DejaVu Sans Mono's 0.602). Edges are quadratic curves whose bend is chosen so
they miss the other boxes; each label sits on its edge at the first point (along the edge,
then pushed sideways) where its box, on a white background, overlaps no node, no header and no
other label. When no such point exists the gaps grow and the layout is redone.
`layout()` returns the geometry (tests check it without a browser); `draw()` writes it.
"""

from __future__ import annotations

from html import escape


EDGE_STYLE = {          # kind -> (colour, dashed)
    "po": ("#000000", False),
    "rf": ("#c62828", False),
    "co": ("#1565c0", False),
    "sw": ("#2e7d32", False),
    "hb": ("#ef6c00", True),
    "fr": ("#6a1b9a", True),
    "bar": ("#00838f", False),
    "maysee": ("#d50000", True),     # a closest candidate: a write the broken read may see
}
LEGEND = {"maysee": "may see (S000)"}


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


FONT, SMALL, HEAD = 14, 13, 15          # px: node text, labels and second lines, thread names
CHAR = 0.62                             # em per character (monospace)
LINE = 18                               # px per text line
PAD_X, PAD_Y = 10, 7
MARGIN = 24
BROKEN = "#d50000"
NODE_FILL = {"init": "#f5f5f5", "barrier": "#e0f2f1"}


def text_w(s: str, size: int = SMALL) -> float:
    return len(s) * size * CHAR


class Box:
    __slots__ = ("x0", "y0", "x1", "y1")

    def __init__(self, x0, y0, x1, y1):
        self.x0, self.y0, self.x1, self.y1 = x0, y0, x1, y1

    def hits(self, o: "Box", gap: float = 0.0) -> bool:
        return not (self.x1 + gap <= o.x0 or o.x1 + gap <= self.x0 or
                    self.y1 + gap <= o.y0 or o.y1 + gap <= self.y0)

    def inside(self, x: float, y: float, gap: float = 0.0) -> bool:
        return self.x0 - gap < x < self.x1 + gap and self.y0 - gap < y < self.y1 + gap

    @property
    def cx(self):
        return (self.x0 + self.x1) / 2

    @property
    def cy(self):
        return (self.y0 + self.y1) / 2


def node_lines(e: dict) -> list:
    if e["kind"] == "init":
        return [e["id"], f"wrote {e.get('wrote', 'undef')}"]
    if e["kind"].startswith("barrier_"):
        line = f"{e['thread']}:{e['line']}" + (f"#{e['iteration']}" if e.get("iteration")
                                                  else "")
        return [f"{line}  {e['kind'][len('barrier_'):]}", e["object"]]
    return [f"{e['id']}  {e['short']}", ", ".join(effects(e) + [e["scope"]])]


def _edges(wt: dict, order: dict) -> list:
    """(kind, from, to, label) of the picture."""
    out = []
    for t, ids in order.items():
        for a, b in zip(ids, ids[1:]):
            out.append(("po", a, b, ""))
    for a, b in wt["rf"]:
        out.append(("rf", a, b, "rf"))
    for _, ws in sorted(wt["co"].items()):
        for a, b in zip(ws, ws[1:]):
            out.append(("co", a, b, "co"))
    nxt = {a: b for _, ws in wt["co"].items() for a, b in zip(ws, ws[1:])}
    for w, r in wt["rf"]:          # from-reads to the next write in modification order
        if w in nxt and nxt[w] != r:
            out.append(("fr", r, nxt[w], "fr"))
    sw = set()
    for s in drawn_sw(wt):
        sw.add((s["from"], s["to"]))
        out.append(("sw", s["from"], s["to"], "sw (barrier)" if "barrier" in s else "sw"))
    multi = len(wt["hb"]) > 1
    for g in wt["hb"]:
        for h in g["edges"]:
            if h["po"] or (h["from"], h["to"]) in sw:
                continue
            out.append(("hb", h["from"], h["to"],
                        "hb" + (f" ({', '.join(g['spaces'])})" if multi else "")))
    ops = {o["id"] for o in wt.get("barrier_ops", [])}
    for p in wt.get("barrier", []):      # transitively reduced, beyond program order
        if p["arrive"] in ops and p["wait"] in ops and not p.get("po"):
            out.append(("bar", p["arrive"], p["wait"], "bar"))
    # issue 28.6: the writes a read of a broken value-rule instance may see (witness.py
    # _candidate), each an edge to the read, marked with the rule
    for w, r in (wt.get("broken") or {}).get("may_see", []):
        out.append(("maysee", w, r, "may see"))
    return out


def drawn_sw(wt: dict) -> list:
    """The synchronizes-with edges a picture draws: those in happens-before's transitive
    reduction (issue 28.6: an sw implied by a chain of others, e.g. a barrier of an earlier
    iteration ordering every later fence, is not drawn; the text lists every sw)."""
    immediate = {(h["from"], h["to"]) for g in wt["hb"] for h in g["edges"]}
    return [s for s in wt["sw"] if (s["from"], s["to"]) in immediate]


def _in_order(nodes: list, t: str) -> list:
    return [e for _, _, e in sorted((e["pos"], i, e) for i, e in enumerate(nodes)
                                    if e["thread"] == t)]


def _quad(p0, c, p1, t):
    u = 1 - t
    return (u * u * p0[0] + 2 * u * t * c[0] + t * t * p1[0],
            u * u * p0[1] + 2 * u * t * c[1] + t * t * p1[1])


def _clip(box: Box, toward) -> tuple:
    """Where the segment from the box's centre toward a point leaves the box."""
    cx, cy = box.cx, box.cy
    dx, dy = toward[0] - cx, toward[1] - cy
    if abs(dx) < 1e-9 and abs(dy) < 1e-9:
        return cx, box.y1
    hw, hh = (box.x1 - box.x0) / 2, (box.y1 - box.y0) / 2
    k = min(hw / abs(dx) if dx else float("inf"), hh / abs(dy) if dy else float("inf"))
    return cx + dx * k, cy + dy * k


def layout(wt: dict, title: str = "", forbidden_by: list = None, spread: int = 0) -> dict:
    """The geometry: node boxes, header boxes, edges (path points, label box), size."""
    ev = [e for e in wt["events"]] + list(wt.get("barrier_ops", []))
    inits = [e for e in ev if e["thread"] is None]
    threads = wt["threads"]
    order = {t: [e["id"] for e in _in_order(ev, t)] for t in threads}
    edges = _edges(wt, order)
    size = {}
    for e in ev:
        ls = node_lines(e)
        w = max(text_w(ls[0], FONT), text_w(ls[1], SMALL)) + 2 * PAD_X
        size[e["id"]] = (w, 2 * LINE + 2 * PAD_Y)
    node_h = 2 * LINE + 2 * PAD_Y
    place = wt.get("placement", {})
    # same-column arcs need a gutter to the right of their column
    col_of = {e["id"]: e["thread"] for e in ev}
    arcs = {t: [] for t in threads}
    for k, a, b, lab in edges:
        if k != "po" and col_of[a] is not None and col_of[a] == col_of[b]:
            arcs[col_of[a]].append(text_w(lab) + 16)
    gap_x = 120 + 40 * spread
    row_gap = 40 + 22 * spread
    y = MARGIN + HEAD + 6
    head_lines = [(title, HEAD, "#000000", True)] if title else []
    for d in forbidden_by or []:
        head_lines.append((f"forbidden by: {d['family']}"
                           + (f" ({d['source']})" if d.get("source") else ""),
                           SMALL, BROKEN, True))
    texts = []           # (x, y baseline, text, size, colour, bold, anchor)
    obstacles = []
    for text, sz, colour, bold in head_lines:
        texts.append((MARGIN, y, text, sz, colour, bold, "start", "title"))
        obstacles.append(Box(MARGIN, y - sz, MARGIN + text_w(text, sz), y + 4))
        y += LINE + 4
    boxes: dict[str, Box] = {}
    if inits:
        x = MARGIN
        y += 8
        for e in inits:
            w, h = size[e["id"]]
            boxes[e["id"]] = Box(x, y, x + w, y + h)
            x += w + 60
        y += node_h + 56 + 22 * spread
    # thread columns
    x = MARGIN
    nhead = max([len(place[t].split(", ")) for t in threads if t in place] + [0])
    top = y + HEAD + nhead * (LINE - 1) + 16
    for t in threads:
        heads = [t] + (place[t].split(", ") if t in place else [])
        cw = max([size[i][0] for i in order[t]] + [text_w(heads[0], HEAD)] +
                 [text_w(h, SMALL) for h in heads[1:]])
        cx = x + cw / 2
        texts.append((cx, y + HEAD, t, HEAD, "#000000", True, "middle", "thread"))
        hw = text_w(t, HEAD)
        obstacles.append(Box(cx - hw / 2, y, cx + hw / 2, y + HEAD + 4))
        for j, h in enumerate(heads[1:]):
            by = y + HEAD + (j + 1) * (LINE - 1)
            texts.append((cx, by, h, SMALL, "#555555", False, "middle", "placement"))
            pw = text_w(h, SMALL)
            obstacles.append(Box(cx - pw / 2, by - SMALL + 1, cx + pw / 2, by + 4))
        for row, i in enumerate(order[t]):
            w, h = size[i]
            ry = top + row * (node_h + row_gap)
            boxes[i] = Box(cx - w / 2, ry, cx + w / 2, ry + h)
        gutter = (max(arcs[t]) + 24 + 18 * len(arcs[t])) if arcs[t] else 0
        x += cw + gap_x + gutter
    # edges
    geo = []
    seen: dict = {}
    column_arcs: dict = {}
    labels: list[Box] = []
    failed = 0
    for k, a, b, lab in edges:
        ba, bb = boxes[a], boxes[b]
        pair = frozenset((a, b))
        used = seen.setdefault(pair, set())
        others = [bx for i, bx in boxes.items() if i not in (a, b)] + obstacles
        if k == "po":
            p0, p1 = (ba.cx, ba.y1), (bb.cx, bb.y0)
            c = ((p0[0] + p1[0]) / 2, (p0[1] + p1[1]) / 2)
        elif col_of[a] is not None and col_of[a] == col_of[b]:
            j = column_arcs.get(col_of[a], 0)
            column_arcs[col_of[a]] = j + 1
            right = max(ba.x1, bb.x1)
            dy = abs(bb.cy - ba.cy)
            c = (right + 36 + 18 * j + 0.12 * dy, (ba.cy + bb.cy) / 2)
            p0, p1 = _clip(ba, c), _clip(bb, c)
        else:
            bend, c, p0, p1 = _route(ba, bb, others, used)
            used.add(bend)
        item = {"kind": k, "from": a, "to": b, "label": lab, "p0": p0, "c": c, "p1": p1,
                "label_box": None}
        if lab:
            lb = _place_label(p0, c, p1, lab, list(boxes.values()) + obstacles + labels)
            if lb is None:
                failed += 1
            else:
                labels.append(lb)
                item["label_box"] = lb
        geo.append(item)
    if failed and spread < 4:
        return layout(wt, title, forbidden_by, spread + 1)
    pts = [_quad(g["p0"], g["c"], g["p1"], i / 20) for g in geo for i in range(21)]
    right = max([bx.x1 for bx in boxes.values()] + [o.x1 for o in obstacles] +
                [lb.x1 for lb in labels] + [p[0] + 10 for p in pts])
    bottom = max([bx.y1 for bx in boxes.values()] + [lb.y1 for lb in labels] +
                 [p[1] + 10 for p in pts])
    kinds = [k for k in EDGE_STYLE if any(g["kind"] == k for g in geo)]
    broken = wt.get("broken")
    legend_y = bottom + 30
    items = [(k, text_w(LEGEND.get(k, k)) + 44) for k in kinds]
    if broken is not None:
        items.append(("broken", text_w("breaks the rule") + 44))
    lx, ly = MARGIN, legend_y
    legend = []
    width = max(right + MARGIN, MARGIN + sum(w for _, w in items) / 2)
    for k, w in items:
        if lx + w > width - MARGIN and lx > MARGIN:
            lx, ly = MARGIN, ly + LINE + 6
        legend.append((k, lx, ly))
        lx += w + 16
    height = ly + MARGIN
    return {"boxes": boxes, "nodes": {e["id"]: e for e in ev}, "edges": geo, "texts": texts,
            "labels": labels, "obstacles": obstacles, "legend": legend,
            "width": width, "height": height, "failed": failed, "broken": broken}


def _route(ba: Box, bb: Box, others: list, used: set):
    """A quadratic curve from box a to box b bent (perpendicular to a -> b) just enough to
    miss every other box and stay in the picture; a bend another edge between the same pair
    took (`used`) is not taken again. Returns (bend, control point, start, end)."""
    ax, ay, bx, by = ba.cx, ba.cy, bb.cx, bb.cy
    mx, my = (ax + bx) / 2, (ay + by) / 2
    dx, dy = bx - ax, by - ay
    n = max((dx * dx + dy * dy) ** 0.5, 1.0)
    nx, ny = -dy / n, dx / n
    best = None
    for bend in (0, 40, -40, 80, -80, 120, -120, 170, -170, 230, -230):
        if bend in used:
            continue
        c = (mx + nx * bend, my + ny * bend)
        p0, p1 = _clip(ba, c), _clip(bb, c)
        pts = [_quad(p0, c, p1, i / 40) for i in range(1, 40)]
        hits = sum(1 for p in pts for o in others if o.inside(*p, gap=4))
        hits += 5 * sum(1 for px, py in pts if px < MARGIN / 2 or py < MARGIN / 2)
        if hits == 0:
            return bend, c, p0, p1
        if best is None or hits < best[0]:
            best = (hits, bend, c, p0, p1)
    return best[1:]


def _place_label(p0, c, p1, lab: str, obstacles: list):
    w, h = text_w(lab) + 10, LINE + 2
    for shift in (0, 1, -1, 2, -2, 3, -3):
        for t in (0.5, 0.4, 0.6, 0.3, 0.7, 0.22, 0.78, 0.15, 0.85):
            x, y = _quad(p0, c, p1, t)
            y += shift * (h + 3)
            box = Box(x - w / 2, y - h / 2, x + w / 2, y + h / 2)
            if box.x0 < 2 or box.y0 < 2:
                continue
            if not any(box.hits(o, gap=3) for o in obstacles):
                return box
    return None


def draw(wt: dict, title: str = "", forbidden_by: list = None) -> str:
    g = layout(wt, title, forbidden_by)
    W, H = g["width"], g["height"]
    broken = g["broken"] or {}
    bev = set(broken.get("events", []))
    bpairs = {frozenset(p) for p in broken.get("edges", [])}
    for w, r in broken.get("may_see", []):     # the writes the read may see: marked too
        bev.add(w)
        bpairs.add(frozenset((w, r)))
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W:.0f}" height="{H:.0f}" '
           f'viewBox="0 0 {W:.0f} {H:.0f}" font-family="DejaVu Sans Mono, monospace" '
           f'font-size="{SMALL}">', "<defs>"]
    for kind, (colour, _) in list(EDGE_STYLE.items()) + [("broken", (BROKEN, False))]:
        out.append(f'<marker id="arrow-{kind}" viewBox="0 0 10 10" refX="10" refY="5" '
                   f'markerWidth="8" markerHeight="8" orient="auto-start-reverse">'
                   f'<path d="M 0 0 L 10 5 L 0 10 z" fill="{colour}"/></marker>')
    out.append("</defs>")
    out.append(f'<rect x="0" y="0" width="{W:.0f}" height="{H:.0f}" fill="#ffffff"/>')
    for x, y, text, sz, colour, bold, anchor, cls in g["texts"]:
        out.append(f'<text class="{cls}" x="{x:.1f}" y="{y:.1f}" font-size="{sz}" '
                   f'fill="{colour}" text-anchor="{anchor}"'
                   + (' font-weight="bold"' if bold else "") + f'>{escape(text)}</text>')
    # edges, then nodes, then labels on top
    for e in g["edges"]:
        colour, dashed = EDGE_STYLE[e["kind"]]
        hit = frozenset((e["from"], e["to"])) in bpairs
        d = (f'M {e["p0"][0]:.1f} {e["p0"][1]:.1f} Q {e["c"][0]:.1f} {e["c"][1]:.1f} '
             f'{e["p1"][0]:.1f} {e["p1"][1]:.1f}')
        if hit:
            out.append(f'<path d="{d}" fill="none" stroke="{BROKEN}" stroke-opacity="0.3" '
                       f'stroke-width="9"/>')
        dash = ' stroke-dasharray="6,4"' if dashed else ""
        out.append(f'<path class="edge" data-kind="{e["kind"]}" d="{d}" fill="none" '
                   f'stroke="{colour}" stroke-width="{2.2 if hit else 1.6}"{dash} '
                   f'marker-end="url(#arrow-{e["kind"]})"/>')
    for i, b in g["boxes"].items():
        n = g["nodes"][i]
        l1, l2 = node_lines(n)
        kind = "init" if n["kind"] == "init" else (
            "barrier" if n["kind"].startswith("barrier_") else "event")
        fill = "#ffebee" if i in bev else NODE_FILL.get(kind, "#ffffff")
        stroke = f'stroke="{BROKEN}" stroke-width="3"' if i in bev else \
            'stroke="#333333" stroke-width="1.2"'
        cx = b.cx
        out.append(f'<g class="node" data-id="{escape(i)}" data-kind="{kind}">'
                   f'<rect x="{b.x0:.1f}" y="{b.y0:.1f}" width="{b.x1 - b.x0:.1f}" '
                   f'height="{b.y1 - b.y0:.1f}" rx="{10 if kind == "barrier" else 5}" '
                   f'fill="{fill}" {stroke}/>'
                   f'<text x="{cx:.1f}" y="{b.y0 + PAD_Y + 14:.1f}" text-anchor="middle" '
                   f'font-size="{FONT}">{escape(l1)}</text>'
                   f'<text x="{cx:.1f}" y="{b.y0 + PAD_Y + LINE + 13:.1f}" '
                   f'text-anchor="middle" font-size="{SMALL}" fill="#444444">{escape(l2)}'
                   f'</text></g>')
    for e in g["edges"]:
        lb = e["label_box"]
        if lb is None:
            continue
        colour, _ = EDGE_STYLE[e["kind"]]
        hit = frozenset((e["from"], e["to"])) in bpairs
        out.append(f'<g class="label" data-kind="{e["kind"]}">'
                   f'<rect x="{lb.x0:.1f}" y="{lb.y0:.1f}" width="{lb.x1 - lb.x0:.1f}" '
                   f'height="{lb.y1 - lb.y0:.1f}" rx="3" fill="#ffffff" fill-opacity="0.92" '
                   f'stroke="{BROKEN if hit else colour}" stroke-width="{1.5 if hit else 0.6}"/>'
                   f'<text x="{lb.cx:.1f}" y="{lb.cy + 4.5:.1f}" text-anchor="middle" '
                   f'fill="{colour}"' + (' font-weight="bold"' if hit else "")
                   + f'>{escape(e["label"])}</text></g>')
    for k, x, y in g["legend"]:
        if k == "broken":
            out.append(f'<g class="legend"><rect x="{x}" y="{y - 11}" width="30" height="14" '
                       f'fill="#ffebee" stroke="{BROKEN}" stroke-width="3"/>'
                       f'<text x="{x + 36}" y="{y}" fill="{BROKEN}">breaks the rule</text></g>')
            continue
        colour, dashed = EDGE_STYLE[k]
        dash = ' stroke-dasharray="6,4"' if dashed else ""
        out.append(f'<g class="legend"><line x1="{x}" y1="{y - 4}" x2="{x + 30}" y2="{y - 4}" '
                   f'stroke="{colour}" stroke-width="2"{dash}/>'
                   f'<text x="{x + 36}" y="{y}" fill="{colour}">{LEGEND.get(k, k)}</text></g>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
