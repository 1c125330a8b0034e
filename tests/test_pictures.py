"""The pictures of `amdmm-smt explain --graph` (issue 19 item 5, issue 18 item 5): legible
layout (checked on our own geometry, and in a real headless browser when one is installed),
iterations and barrier operations shown, and the closest candidate of a forbidden outcome,
checked honest by re-encoding: it satisfies every family but the dropped one(s) and produces
the outcome, and the dropped family does rule it out."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import xml.etree.ElementTree as ET
from functools import lru_cache

import pytest
import z3

from amdmm_smt.elaborate.events import elaborate
from amdmm_smt.encode import encode
from amdmm_smt.explain.graph import to_svg
from amdmm_smt.explain.svg import FONT, SMALL, layout
from amdmm_smt.explain.witness import explain, parse_outcome
from amdmm_smt.frontend.litmus import parse_file
from amdmm_smt.model import get_model
from amdmm_smt.solve import cond_z3

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIT = os.path.join(ROOT, "litmus")
NS = "{http://www.w3.org/2000/svg}"

# name -> (test, outcome or None for its exists:, allowed?)
CASES = {
    "mp": ("classic/MP+rel-acq.agent.diff-wg.yaml", "T1:%r0 == 1 && T1:%r1 == 1", True),
    "iriw": ("classic/IRIW+rel-acq.agent.diff-wg.yaml", None, True),
    "loop": ("cflow/MP+spin.agent.diff-wg.yaml", "P1:%r == 1", True),
    "barrier": ("barrier/bar-MP-fences-wg.yaml", "T1:%r == 1", True),
    "corr": ("classic/CoRR+mono.agent.diff-wg.yaml", None, False),
    "mp-forbidden": ("classic/MP+rel-acq.agent.diff-wg.yaml", None, False),
    "loop-forbidden": ("cflow/MP+spin.agent.diff-wg.yaml", None, False),
    # issue 28.6: barrier operations of a loop, and a forbidden barrier outcome
    "tiled": ("barrier/bar-loop-tiled-2tiles-2barriers.yaml", "W0:%s == 3 && W1:%s == 3", True),
    "barrier-forbidden": ("barrier/bar-MP-fences-wg.yaml", "T1:%r == 0", False),
}


@lru_cache(maxsize=None)
def _case(name: str):
    path, outcome, _ = CASES[name]
    t = parse_file(os.path.join(LIT, path))
    m = get_model(t.model or "seed")
    cond = parse_outcome(t, outcome) if outcome else t.exists
    ex = explain(t, m, cond, with_closest=True)
    return t, m, cond, ex


def _drawn(name: str):
    """(witness, title, forbidden_by) as `explain --graph` draws them."""
    t, _, _, ex = _case(name)
    if ex.witness is not None:
        return ex.witness, f"{t.name}: {ex.outcome}", None
    return ex.closest["witness"], f"{t.name}: {ex.outcome} is FORBIDDEN; closest candidate", \
        ex.closest["dropped"]


@lru_cache(maxsize=None)
def _svg(name: str) -> str:
    return to_svg(*_drawn(name))


def test_expectations_of_the_cases():
    # by hand: MP, IRIW (without seq_cst), the spin loop and barrier MP allow the outcome
    # they are drawn for; CoRR's exists and MP's forbidden outcomes are forbidden
    for name, (_, _, allowed) in CASES.items():
        assert _case(name)[3].reachable is allowed, name


@pytest.mark.parametrize("name", sorted(CASES))
def test_layout_is_legible(name):
    wt, title, fb = _drawn(name)
    g = layout(wt, title, fb)
    assert g["failed"] == 0
    boxes = list(g["boxes"].values())
    labels = g["labels"]
    for i, a in enumerate(labels):                 # labels overlap nothing
        assert not any(a.hits(b) for b in labels[i + 1:])
        assert not any(a.hits(b) for b in boxes)
        assert not any(a.hits(o) for o in g["obstacles"])
    for i, a in enumerate(boxes):                  # nodes do not overlap
        assert not any(a.hits(b) for b in boxes[i + 1:])
    # one column per thread, in program order top to bottom, threads left to right
    xs = []
    for t in wt["threads"]:
        mine = [(n["pos"], g["boxes"][i]) for i, n in g["nodes"].items() if n["thread"] == t]
        centres = {round(b.cx, 1) for _, b in mine}
        assert len(centres) == 1
        ys = [b.y0 for _, b in sorted(mine, key=lambda p: p[0])]
        assert ys == sorted(ys) and len(set(ys)) == len(ys)
        xs.append(centres.pop())
    assert xs == sorted(xs)
    root = ET.fromstring(_svg(name))
    sizes = [float(e.get("font-size", root.get("font-size"))) for e in root.iter(f"{NS}text")]
    assert min(sizes) >= 13 and FONT >= 14 and SMALL >= 13
    assert float(root.get("width")) >= g["width"] - 1
    heads = [e.text for e in root.iter(f"{NS}text") if e.get("class") == "thread"]
    assert heads == wt["threads"]
    assert any(e.get("class") == "placement" for e in root.iter(f"{NS}text"))


def test_width_grows_with_threads_and_text_is_inside_boxes():
    w2 = float(ET.fromstring(_svg("mp")).get("width"))
    w4 = float(ET.fromstring(_svg("iriw")).get("width"))
    assert w4 > w2 > 480
    g = layout(*_drawn("iriw"))
    for i, b in g["boxes"].items():     # boxes sized to their text (monospace estimate)
        from amdmm_smt.explain.svg import node_lines, text_w
        l1, l2 = node_lines(g["nodes"][i])
        assert b.x1 - b.x0 >= max(text_w(l1, FONT), text_w(l2, SMALL))


def test_iterations_are_named_in_the_picture():
    svg = _svg("loop")
    ids = [e["id"] for e in _drawn("loop")[0]["events"]]
    its = [i for i in ids if re.search(r"#\d+$", i)]
    assert len(its) >= 2, ids            # the spin loop read twice at least: P1:32#1, #2
    for i in its:
        assert i in svg
    assert "P1:32#2" in svg


def test_barrier_operations_are_drawn_with_their_order():
    wt = _drawn("barrier")[0]
    root = ET.fromstring(_svg("barrier"))
    kinds = [g.get("data-kind") for g in root.iter(f"{NS}g") if g.get("class") == "node"]
    assert kinds.count("barrier") == 4       # T0's and T1's s.barrier: arrive and wait each
    edges = [p.get("data-kind") for p in root.iter(f"{NS}path") if p.get("class") == "edge"]
    assert "bar" in edges and "sw" in edges
    assert wt["barrier"] and all(p["arrive"] in _svg("barrier") for p in wt["barrier"])


# ---- barrier operations per iteration (issue 28.6) -------------------------------------------

# By hand, from the test and the seed documents: two waves of one workgroup each run the loop
# twice (unroll 2), two s.barrier per iteration (lines 29, 34 in W0; 50, 55 in W1); S002: an
# s.barrier is an arrive then a wait (docs 10.3), so each wave performs 2 x 2 x 2 = 8 barrier
# operations, 16 in all, each its own instance `@LINE#k`. The workgroup barrier's expected
# count is the number of waves, 2 (S002 table), so phase j holds the j-th arrive of each wave
# and its waits complete with it: each arrive barrier-executes-before both waits of its phase
# and, through program order, every later wait. Transitively reduced (with program order):
# per phase the two arrive -> wait edges across the waves (the same-wave one is program
# order), 4 phases, 8 edges. Every arrive has a release fence before it and every wait an
# acquire fence after it (docs 10.5 BR / BA), so each of the 8 edges carries one immediate
# sw (barrier) between those fences; the other sw are implied by them and program order.
_TILED_PHASES = [(29, 50, 1), (34, 55, 1), (29, 50, 2), (34, 55, 2)]


def _bar(w: str, kind: str, line: int, k: int) -> str:
    return f"{w}:{kind}:workgroup barrier@{line}#{k}"


def test_loop_barrier_operations_are_drawn_once_per_iteration():
    wt = _drawn("tiled")[0]
    root = ET.fromstring(_svg("tiled"))
    nodes = [g for g in root.iter(f"{NS}g") if g.get("class") == "node"
             and g.get("data-kind") == "barrier"]
    want = {_bar(w, kind, ln, k) for a, b, k in _TILED_PHASES
            for w, ln in (("W0", a), ("W1", b)) for kind in ("arrive", "wait")}
    assert len(want) == 16
    assert sorted(g.get("data-id") for g in nodes) == sorted(want)
    texts = {t.text for g in nodes for t in g.iter(f"{NS}text")}
    assert {"W0:29#1  arrive", "W0:29#2  arrive", "W1:55#2  wait"} <= texts
    g = layout(*_drawn("tiled"))
    bar = sorted((e["from"], e["to"]) for e in g["edges"] if e["kind"] == "bar")
    want_bar = sorted(p for a, b, k in _TILED_PHASES for p in (
        (_bar("W0", "arrive", a, k), _bar("W1", "wait", b, k)),
        (_bar("W1", "arrive", b, k), _bar("W0", "wait", a, k))))
    assert bar == want_bar
    assert not any(e["from"] == e["to"] for e in g["edges"])
    sw = [e for e in g["edges"] if e["kind"] == "sw"]
    assert len(sw) == 8 and all(e["label"] == "sw (barrier)" for e in sw)
    # the text: one line per immediate pair, none repeated
    from amdmm_smt.explain.witness import format_text
    lines = [ln for ln in format_text(_case("tiled")[3]).splitlines()
             if ln.strip().startswith("barrier:")]
    assert len(lines) == 8 and len(set(lines)) == 8
    assert sorted(ln.strip() for ln in lines) == sorted(
        f"barrier: {a} barrier-executes-before {b}" for a, b in want_bar)
    assert sorted((p["arrive"], p["wait"]) for p in wt["barrier"] if not p["po"]) == want_bar


def test_loop_barrier_operations_in_dot():
    from amdmm_smt.explain.graph import to_dot
    dot = to_dot(_drawn("tiled")[0], "tiled")
    nodes = [ln for ln in dot.splitlines() if "[label=" in ln and "->" not in ln
             and "rounded" in ln]
    assert len(nodes) == 16 and len({ln.split()[0] for ln in nodes}) == 16
    assert any('"W0:34#2  wait\\nworkgroup barrier"' in ln for ln in nodes)
    assert dot.count('label="bar"') == 8


def test_forbidden_barrier_outcome_marks_the_write_the_read_may_see():
    # by hand (S000, docs 10.5): in bar-MP-fences-wg T0's store is made available by the
    # release fence, the fences synchronize through the barrier, the acquire fence makes it
    # visible, so the store is location-ordered before the load and hides the initial write
    # (first may-see exception); the load does not happen-before it. The load may see exactly
    # the store, and value rule case (4) gives 1: `r == 0` breaks the read-value rule alone,
    # and the picture marks the store with a "may see" edge to the read
    dropped, wt = _recheck("barrier-forbidden")
    assert dropped == {"read-value rule"}
    assert wt["broken"]["may_see"] == [["T0:19", "T1:26"]]
    read = next(r for r in wt["reads"] if r["read"] == "T1:26")
    assert read["may_see"] == ["T0:19"] and read["rule"].startswith("(4)")
    g = layout(*_drawn("barrier-forbidden"))
    assert [(e["from"], e["to"]) for e in g["edges"] if e["kind"] == "maysee"] == [
        ("T0:19", "T1:26")]
    root = ET.fromstring(_svg("barrier-forbidden"))
    marked = {g.get("data-id") for g in root.iter(f"{NS}g") if g.get("class") == "node"
              and any(r.get("stroke") == "#d50000" for r in g.iter(f"{NS}rect"))}
    assert {"T0:19", "T1:26"} <= marked
    from amdmm_smt.explain.witness import format_text
    assert "T1:26 may see T0:19" in format_text(_case("barrier-forbidden")[3])


def test_forbidden_picture_names_the_rule_and_marks_it():
    svg = _svg("corr")
    assert "forbidden by: coherence" in svg
    wt = _drawn("corr")[0]
    assert wt["broken"]["instances"] >= 1 and wt["broken"]["events"]
    assert 'stroke="#d50000" stroke-width="3"' in svg      # a marked node
    with pytest.raises(ValueError):
        # no picture in a plain witness marks anything
        _svg("mp").index('stroke="#d50000" stroke-width="3"')


def test_svg_is_deterministic():
    assert to_svg(*_drawn("iriw")) == _svg("iriw")


# ---- the closest candidate is honest --------------------------------------------------------

def _recheck(name: str):
    """Re-encode the test; pin the candidate's reads-from and read values; check that every
    family but the dropped ones holds with the outcome (sat), and that adding the dropped ones
    back rules it out (unsat)."""
    t, m, cond, ex = _case(name)
    cl = ex.closest
    dropped = {d["family"] for d in cl["dropped"]}
    wt = cl["witness"]
    x = encode(elaborate(t, m), explaining=True)
    lab = {e.label: e for e in x.ev}
    s = z3.Solver()
    back = []
    for c, fam in zip(x.ctx.constraints, x.ctx.families):
        if fam in dropped:
            back.append(c)
        else:
            s.add(c)
    s.add(z3.Not(x.ub) if not isinstance(x.ub, bool) else z3.BoolVal(not x.ub))
    s.add(cond_z3(x, cond.cond))
    rf = {tuple(p) for p in wt["rf"]}
    for (w, r), v in x.rf_var.items():
        s.add(v if (x.ev[w].label, x.ev[r].label) in rf else z3.Not(v))
    for e in wt["events"]:
        if "read" in e:
            ev = lab[e["id"]]
            if e["read"] == "undef":
                s.add(x.rundef[ev.id])
            else:
                s.add(z3.Not(x.rundef[ev.id]), x.rval[ev.id] == int(e["read"]) % 2 ** 32)
    assert s.check() == z3.sat
    s.add(*back)
    assert s.check() == z3.unsat
    return dropped, wt


def test_closest_candidate_of_corr_breaks_coherence_alone():
    # by hand: CoRR's r0 == 1, r1 == 0 is a candidate execution every rule but coherence
    # accepts (the second read reads the initial write after the first read read the newer
    # one); coherence (CoRR) forbids it
    dropped, wt = _recheck("corr")
    assert dropped == {"coherence"}
    assert set(wt["broken"]["events"]) >= {"T1:17", "T1:18"}


def test_closest_candidate_of_mp_breaks_the_read_value_rule():
    # by hand (S000): with release/acquire chain in place, T0:17 is location-ordered before the
    # plain read and the read may see exactly it: only the read-value rule stops the read from
    # returning something else; the candidate keeps every relation as defined
    dropped, wt = _recheck("mp-forbidden")
    assert dropped == {"read-value rule"}
    assert "T1:23" in wt["broken"]["events"]


def test_closest_candidate_in_text_json_and_cli(tmp_path):
    from click.testing import CliRunner
    from amdmm_smt.cli import main
    from amdmm_smt.explain.witness import format_text
    text = format_text(_case("corr")[3])
    assert "closest candidate" in text and "forbidden by: coherence" in text
    rec = _case("corr")[3].record(timing=False)
    assert rec["closest"]["dropped"][0]["family"] == "coherence"
    assert rec["closest"]["witness"]["broken"]["events"]
    out = tmp_path / "c.svg"
    r = CliRunner().invoke(main, ["explain", os.path.join(LIT, CASES["loop"][0]), "--graph",
                                  str(out), "--no-timing"])
    assert r.exit_code == 0, r.output
    assert "FORBIDDEN" in r.output and "closest candidate" in r.output
    svg = out.read_text()
    assert "forbidden by:" in svg and "#2" in svg


DOCS_PICTURES = (("iriw", "explain-iriw.svg"), ("corr", "explain-corr-closest.svg"),
                 ("tiled", "explain-bar-loop-tiled.svg"),
                 ("barrier-forbidden", "explain-bar-mp-closest.svg"))


def test_docs_example_pictures_are_what_the_tool_draws():
    for name, fname in DOCS_PICTURES:
        path = os.path.join(ROOT, "docs", "pictures", fname)
        with open(path, encoding="utf-8") as f:
            assert f.read() == _svg(name), \
                f"{fname}: regenerate with `python3 -m tests.test_pictures`"


def _write_docs_pictures() -> None:
    os.makedirs(os.path.join(ROOT, "docs", "pictures"), exist_ok=True)
    for name, fname in DOCS_PICTURES:
        with open(os.path.join(ROOT, "docs", "pictures", fname), "w", encoding="utf-8") as f:
            f.write(_svg(name))


# ---- in a real browser ----------------------------------------------------------------------

BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")

SCRIPT = r"""
<script>
function box(el) { const r = el.getBoundingClientRect();
  return {x0: r.left, y0: r.top, x1: r.right, y1: r.bottom}; }
function hit(a, b) { return !(a.x1 <= b.x0 || b.x1 <= a.x0 || a.y1 <= b.y0 || b.y1 <= a.y0); }
function inside(a, b) { return a.x0 >= b.x0 - 0.5 && a.x1 <= b.x1 + 0.5 &&
  a.y0 >= b.y0 - 0.5 && a.y1 <= b.y1 + 0.5; }
const out = {};
for (const svg of document.querySelectorAll("svg")) {
  const r = {problems: [], width: svg.getBoundingClientRect().width, min_font: 1e9};
  for (const t of svg.querySelectorAll("text"))
    r.min_font = Math.min(r.min_font, parseFloat(getComputedStyle(t).fontSize));
  const labels = [...svg.querySelectorAll("g.label")].map(g => ({
    text: g.querySelector("text").textContent, bg: box(g.querySelector("rect")),
    ink: box(g.querySelector("text"))}));
  const nodes = [...svg.querySelectorAll("g.node")].map(g => ({
    id: g.dataset.id, rect: box(g.querySelector("rect")),
    texts: [...g.querySelectorAll("text")].map(box)}));
  const heads = [...svg.querySelectorAll("text.thread, text.placement, text.title")].map(box);
  labels.forEach((a, i) => {
    if (!inside(a.ink, a.bg)) r.problems.push("label text outside its background: " + a.text);
    labels.slice(i + 1).forEach(b => { if (hit(a.bg, b.bg))
      r.problems.push("labels overlap: " + a.text + " / " + b.text); });
    nodes.forEach(n => { if (hit(a.bg, n.rect))
      r.problems.push("label over a node: " + a.text + " / " + n.id); });
    heads.forEach(h => { if (hit(a.bg, h)) r.problems.push("label over a header: " + a.text); });
  });
  nodes.forEach((n, i) => {
    n.texts.forEach(t => { if (!inside(t, n.rect))
      r.problems.push("text outside its node: " + n.id); });
    nodes.slice(i + 1).forEach(m => { if (hit(n.rect, m.rect))
      r.problems.push("nodes overlap: " + n.id + " / " + m.id); });
  });
  r.labels = labels.length; r.nodes = nodes.length;
  out[svg.parentNode.id] = r;
}
document.getElementById("result").textContent = JSON.stringify(out);
</script>"""


def _chromium(args: list, tmp: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={tmp}/profile"] + args,
        capture_output=True, text=True, timeout=60)


def test_pictures_in_a_headless_browser():
    if BROWSER is None:
        if os.environ.get("AMDMM_REQUIRE_BROWSER"):
            pytest.fail("AMDMM_REQUIRE_BROWSER is set but no chromium is installed")
        pytest.skip("no chromium (set AMDMM_REQUIRE_BROWSER=1 to make this a failure)")
    names = sorted(CASES)
    body = "".join(f'<div id="{n}">{_svg(n)}</div>' for n in names)
    page = (f'<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>{body}'
            f'<pre id="result">pending</pre>{SCRIPT}</body></html>')
    with tempfile.TemporaryDirectory() as tmp:
        html = os.path.join(tmp, "pictures.html")
        with open(html, "w", encoding="utf-8") as f:
            f.write(page)
        p = _chromium(["--dump-dom", "file://" + html], tmp)
    m = re.search(r'<pre id="result">(.*?)</pre>', p.stdout, re.S)
    assert m, p.stderr[-2000:]
    res = json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&")
                     .replace("&lt;", "<").replace("&gt;", ">"))
    assert sorted(res) == names
    for n in names:
        r = res[n]
        assert r["problems"] == [], (n, r["problems"])
        assert r["min_font"] >= 12, (n, r["min_font"])
        assert r["nodes"] >= 3 and r["labels"] >= 1
    assert res["iriw"]["width"] > res["mp"]["width"] > 480


if __name__ == "__main__":
    _write_docs_pictures()
