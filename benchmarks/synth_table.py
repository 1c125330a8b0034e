"""Write docs/synth-options.md: every model option (non-default values against `seed`) and
every pair of shipped versions with its smallest distinguishing test, or the exhaustive
"none up to N × M" (issue 21 item 4). Prints each row's time as it goes and writes the times
in the closing note (issue 29: on this machine, 2 cores shared with other processes).

    python3 benchmarks/synth_table.py [--jobs 2] [--only NAME ...] [--out docs/synth-options.md]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from amdmm_smt.model import get_model                      # noqa: E402
from amdmm_smt.synth.table import all_rows, cells, markdown, row_bound  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", nargs="*", default=None,
                    help="re-run only the rows whose name starts so, replacing them in --out")
    ap.add_argument("--out", default=os.path.join("docs", "synth-options.md"))
    ap.add_argument("--resume", default=None, metavar="FILE",
                    help="keep each row's cells in FILE (JSON lines) and reuse them")
    args = ap.parse_args()
    rows = all_rows(get_model("seed"))
    if args.only:
        rows = [r for r in rows if any(r.what.startswith(o) for o in args.only)]
    done = {}
    if args.resume and os.path.exists(args.resume):
        with open(args.resume, encoding="utf-8") as f:
            for ln in f:
                c = json.loads(ln)
                done[c["cells"][0]] = c
    out, times = [], []
    for r in rows:
        rec = done.get(f"`{r.what}`")
        if rec is None:
            t0 = time.perf_counter()
            if r.bound is None and not r.why_not:
                r.bound = row_bound(r.a, r.b, what=r.what)
            rec = {"cells": cells(r, jobs=args.jobs), "seconds": time.perf_counter() - t0}
            if args.resume:
                with open(args.resume, "a", encoding="utf-8") as f:
                    f.write(json.dumps(rec) + "\n")
        c = rec["cells"]
        out.append(c)
        times.append(f"{c[0]} {rec['seconds']:.0f} s")
        print(f"{r.what:40s} {rec['seconds']:7.1f} s  {c[1][:100]}", flush=True)
    closing = ("Each row's time (the bound chosen, the search, the minimisation; "
               f"`--jobs {args.jobs}` on a 2-core machine shared with other processes, so "
               "slower than on an idle one): " + "; ".join(times) + ".")
    if args.only and os.path.exists(args.out):
        text = open(args.out, encoding="utf-8").read()
        lines = text.splitlines()
        secs = {}
        for c, t in zip(out, times):
            new = markdown([c]).splitlines()[-1]
            # the row itself, else the option's "not searched" row (`NAME`, no value)
            opt = "`" + c[0].strip("`").split("=")[0] + "`"
            mine = [k for k, ln in enumerate(lines) if ln.startswith(f"| {c[0]} |")] or \
                [k for k, ln in enumerate(lines) if ln.startswith(f"| {opt} |")]
            for k in mine:
                lines[k] = new
            if not mine:        # a new row: after the last row of its option
                near = [k for k, ln in enumerate(lines) if ln.startswith("| " + opt[:-1])]
                if near:
                    lines.insert(near[-1] + 1, new)
            secs[c[0]] = t
        lines = [_closing_times(ln, secs, lines) if ln.startswith("Each row's time") else ln
                 for ln in lines]
        text = "\n".join(lines) + "\n"
    else:
        text = markdown(out, closing=closing)
    # the symbolic search's section (benchmarks/synth_symbolic.py writes it): kept
    mark = "<!-- symbolic search: benchmarks/synth_symbolic.py -->"
    if os.path.exists(args.out) and mark not in text:
        cur = open(args.out, encoding="utf-8").read()
        if mark in cur:
            text = text.rstrip("\n") + "\n\n" + cur[cur.index(mark):]
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(text)


def _closing_times(note: str, secs: dict, lines: list) -> str:
    """The closing note with the re-run rows' times replaced (or added, in table order)."""
    head, sep, rest = note.partition("): ")
    entries = [e for e in rest.rstrip(".").split("; ") if e]
    have = {e.rsplit(" ", 2)[0]: e for e in entries}
    have.update(secs)
    order = [ln.split(" | ")[0][2:] for ln in lines if ln.startswith("| `")]
    return head + sep + "; ".join(have[w] for w in order if w in have) + "."


if __name__ == "__main__":
    main()
