"""`amdmm-smt explain --model FILE.cat` (issue 27 item 5): the rule families of a model file are
its own named axioms and its value statement, by the names in the file, each described by the
comment above it; a witness execution is read off the file-compiled encoding (encode/cat_z3.py)
and the file's own relations (hb, sw, lo, what a read may see, which reads are definite) are
evaluated on it by the concrete algebra of the reference engine (cat/eval.py MaskAlgebra).

The engine's own families (write values, control flow) keep their catalogue sentences
(encode/families.py). docs/semantics.md §18, "Explain under a model file".
"""

from __future__ import annotations

import os
from typing import Optional

from ..cat import load_cached
from ..cat.base import Base, Dynamic, Terms
from ..cat.eval import Evaluator, MaskAlgebra
from ..cat.syntax import lex
from ..encode import families as F


def _comment_above(file: str, line: int) -> str:
    """The comment that ends on the statement's line or on the line before it, blank lines
    between allowed (a definition's documentation, cat/syntax.py comment_before), whitespace
    folded."""
    try:
        with open(file, encoding="utf-8") as f:
            text = f.read()
        _, comments = lex(text, file)
    except Exception:        # unreadable since it was loaded: no description
        return ""
    lines = text.splitlines()
    ln = line
    while True:
        if ln in comments:
            return " ".join(comments[ln].split())
        ln -= 1
        if ln < 1 or ln > len(lines) or lines[ln - 1].strip():   # blank lines are skipped
            return " ".join(comments[ln].split()) if ln in comments else ""


def file_families(path: str) -> dict:
    """name -> (source `FILE:LINE`, the comment above it, rank in file order) of the axioms and
    the value statement of a model file and what it includes."""
    m = load_cached(path)
    got = getattr(m, "_families", None)      # once per loaded version of the file
    if got is not None:
        return got
    order = {f: i for i, f in enumerate(m.files)}
    stmts = list(m.axioms) + ([m.value] if m.value is not None else [])
    stmts.sort(key=lambda s: (order.get(s.file, len(order)), s.line))
    out: dict = {}
    for k, s in enumerate(stmts):
        # the comment above the statement, else (`let CoRR = ...` then `irreflexive CoRR ; co
        # as CoRR`) the comment of the definition of the same name
        d = m.defs.get(s.name)
        text = _comment_above(s.file, s.line) or (" ".join(d.b.comment.split()) if d else "")
        out.setdefault(s.name, (f"{os.path.basename(s.file)}:{s.line}", text, k))
    m._families = out
    return out


def family_name(cat: Optional[str], fam: str) -> str:
    """The name explain reports for a family of the encoding: under a model file its value
    statement's constraints (tagged as the read-value rule, encode/cat_z3.py) go by the
    statement's name (`as value_rule`); every other family by its own name."""
    if cat and fam == F.READ_VALUE:
        v = load_cached(cat).value
        if v is not None:
            return v.name
    return fam


def describe(cat: Optional[str], fam: str) -> tuple:
    """(source, sentence) of a family: a model file's statement, else the catalogue's."""
    if cat:
        got = file_families(cat).get(fam)
        if got is not None:
            return got[0], got[1]
    return F.describe(fam)


def family_order(cat: Optional[str], fams) -> list:
    """The families in reporting order: a model file's in file order, then the engine's own
    (catalogue order); without a model file the catalogue's order, then by name."""
    fams = set(fams)
    head: list = []
    if cat:
        ff = file_families(cat)
        head = sorted((f for f in fams if f in ff), key=lambda f: ff[f][2])
    rest = fams - set(head)
    return head + [f for f in F.CATALOGUE if f in rest] + sorted(
        f for f in rest if f not in F.CATALOGUE)


# ---- the witness -------------------------------------------------------------------------------

class _BoolTerms(Terms):
    def and_(self, *xs):
        return all(xs)

    def or_(self, *xs):
        return any(xs)

    def not_(self, x):
        return not x


class _Concrete(Dynamic):
    """One execution read off the solver's model: which writes happen, reads-from, and each
    location's modification order."""

    def __init__(self, hap: dict, rf: dict, pos: dict):
        self._hap, self._rf, self._pos = hap, rf, pos

    def hap(self, e):
        return self._hap.get(e.id, False)

    def rf(self, w, r):
        return self._rf.get(r.id) == w.id

    def co(self, a, b):
        pa, pb = self._pos.get(a.id), self._pos.get(b.id)
        return pa is not None and pb is not None and pa < pb


def _pairs(rows: tuple) -> set:
    out = set()
    for i, row in enumerate(rows):
        j = 0
        while row:
            if row & 1:
                out.add((i, j))
            row >>= 1
            j += 1
    return out


def _relation(cat, evl, name: str, spaces: list) -> Optional[dict]:
    """space -> pairs of a relation the file defines (unindexed), or None."""
    d = cat.defs.get(name)
    if d is None or d.sort != "rel" or d.b.param is not None:
        return None
    from ..cat.syntax import Name
    node = Name(d.b.file, d.b.line, name)
    if not d.space:
        p = _pairs(evl.eval(node, {}, None))
        return {sp: p for sp in spaces}
    return {sp: _pairs(evl.eval(node, {}, sp)) for sp in spaces}


def add_file_relations(wt: dict, x, happens: dict) -> None:
    """Fill the witness's synchronizes-with, happens-before and per-read sections from the
    model file's own relations evaluated on this execution (which writes happen, its
    reads-from and modification orders, as the witness has them)."""
    el = x.elab
    ev = x.ev
    by_label = {e.label: e.id for e in ev}
    rf = {by_label[r]: by_label[w] for w, r in wt["rf"]}
    pos = {by_label[lab]: k for ws in wt["co"].values() for k, lab in enumerate(ws)}
    cat = load_cached(el.model.cat)
    spaces = list(el.spaces)
    evl = Evaluator(cat, MaskAlgebra(len(ev)), Base(el, _BoolTerms(), _Concrete(happens, rf, pos)),
                    spaces)
    lab = [e.label for e in ev]
    sw = _relation(cat, evl, "sw", spaces) or {}
    by_pair: dict = {}
    for sp in spaces:
        for a, b in sorted(sw.get(sp, ())):
            by_pair.setdefault((lab[a], lab[b]), []).append(sp)
    wt["sw"] = [{"from": a, "to": b, "spaces": sps} for (a, b), sps in sorted(by_pair.items())]
    hb = _relation(cat, evl, "hb", spaces) or {}
    groups: dict = {}
    for sp in spaces:
        pairs = frozenset((a, b) for a, b in hb.get(sp, ()) if not ev[a].is_init and a != b)
        groups.setdefault(pairs, []).append(sp)
    wt["hb"] = []
    for pairs, sps in groups.items():
        if not hb:
            break
        succ: dict = {}
        for a, b in pairs:
            succ.setdefault(a, set()).add(b)
        edges = [{"from": lab[a], "to": lab[b], "po": el.po(ev[a], ev[b])}
                 for a, b in sorted(pairs)
                 if not any(b in succ.get(c, ()) for c in succ.get(a, ()) if c != b)]
        wt["hb"].append({"spaces": sps, "edges": edges})
    lo = _relation(cat, evl, "lo", spaces)
    v = cat.value
    reads = []
    for r in ev:
        if not r.reads:
            continue
        sp = el.space_of(r.loc)
        ms = _pairs(evl.eval(v.maysee, {}, sp))
        df = evl.eval(v.definite, {}, sp) >> r.id & 1
        ws = [e for e in el.writes_to(r.loc) if e.id != r.id]
        may = [e.label for e in ws if (e.id, r.id) in ms]
        lob = [e.label for e in ws if lo is not None and (e.id, r.id) in lo[sp]]
        rfw = rf.get(r.id)
        rule = (f"definite under `{v.name}` ({os.path.basename(v.file)}:{v.line}): the value "
                "of a write it may see" if df else
                f"not definite under `{v.name}` ({os.path.basename(v.file)}:{v.line}): undef")
        d = next(e for e in wt["events"] if e["id"] == r.label)
        reads.append({"read": r.label, "value": d.get("read"),
                      "reads_from": lab[rfw] if rfw is not None else None,
                      "may_see": may, "location_ordered_before": lob, "rule": rule,
                      "chains": {}})
    wt["reads"] = reads
    wt["model_file"] = el.model.cat
    wt["reference_check"] = _reference_check(cat, evl, el, rf, spaces)


def _reference_check(cat, evl, el, rf: dict, spaces: list) -> dict:
    """The execution judged by the reference engine's reading of the file (the explicit
    evaluation, as reference/cat_engine.py judges a candidate): the statements it breaks. A
    witness of an allowed outcome breaks none; a closest candidate breaks only what it
    dropped. The two engines checked against each other on every explanation."""
    broken: list = []
    v = cat.value
    for sp in spaces:
        reads = [r for r in el.events if r.reads and el.space_of(r.loc) == sp]
        if not reads:
            continue
        ms = evl.eval(v.maysee, {}, sp)
        df = evl.eval(v.definite, {}, sp)
        for r in reads:
            w = rf.get(r.id)
            ok = (w is not None and ms[w] >> r.id & 1) if df >> r.id & 1 else w is None
            if not ok and v.name not in broken:
                broken.append(v.name)
    for ax in cat.axioms:
        for sp in evl.spaces_of(ax.expr, spaces):
            if not evl.alg.holds(ax.kind, evl.eval(ax.expr, {}, sp)) and ax.name not in broken:
                broken.append(ax.name)
    return {"consistent": not broken, "broken": broken}
