"""Fuzzing the model language's parser and checker (issue 27 item 6), as tests/fuzz.py fuzzes
the litmus parser: random mutations of the shipped model files (delete, duplicate and swap
tokens and lines, insert stray tokens, replace operators, truncate) through `amdmm-smt model
check FILE`, `verify --model FILE TEST`, `explain --model FILE TEST`, `lint --model FILE TEST`
and `diff --from seed.cat --to FILE TEST`.
Each must be accepted (exit 0 or 1) or refused with one line `FILE:LINE: problem` and exit 2:
never a traceback, an internal error, a hang, or an error without its line.

    python3 tests/fuzz_model.py --count 2000 [--seed 1]   # prints the findings, exit 1 on one

tests/test_fuzz_model.py runs a small count in the suite.
"""

from __future__ import annotations

import argparse
import glob
import os
import random
import re
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import signal  # noqa: E402

from click.testing import CliRunner  # noqa: E402

from amdmm_smt.cli import main as cli_main  # noqa: E402
from tests.fuzz import WATCHDOG, Case, Hang, _alarm  # noqa: E402

CATS = sorted(glob.glob(os.path.join(ROOT, "models", "*.cat")))
TEST = os.path.join(ROOT, "litmus", "classic", "MP+rel-acq.wg.same-wg.yaml")
SEED = os.path.join(ROOT, "models", "seed.cat")
_TOK = re.compile(r'\(\*.*?\*\)|"[^"\n]*"|\^-1|>=|<=|[A-Za-z_][A-Za-z0-9_.\-]*|[^\sA-Za-z_]',
                  re.S)
STRAY = ["(", ")", "[", "]", "|", "&", "\\", ";", "^-1", "+", "*", "?", "~", ",", "=", "let",
         "rec", "and", "include", '"seed.cat"', '"nosuch.cat"', '"m.cat"', "acyclic",
         "irreflexive", "empty", "flag", "value", "definite", "as", "union", "cross", "domain",
         "range", "spaces", "K", "L", ">=", "<=", "system", "workgroup", "po", "rf", "co",
         "hb", "id", "E", "W", "contains", "(*", "*)", '"', "\x00", "\ufeff", "é", "0", "99"]


OPS = (["|", "&", "\\", ";"], ["+", "*", "?", "^-1", ""])   # binary, postfix


def mutate(rnd: random.Random, text: str) -> str:
    """One to four mutations of tokens or lines, a truncation, or an operator replaced by
    another (binary for binary, postfix for postfix: a model that still parses, to reach the
    checker's typing and the engines)."""
    for _ in range(rnd.randint(1, 4)):
        op = rnd.randrange(11)
        if op >= 9:                          # an operator for another: a well-formed edit
            ops = [m for m in re.finditer(r"\^-1|[|&\\;+*?]", text)]
            if ops:
                m = rnd.choice(ops)
                text = text[:m.start()] + rnd.choice(OPS[m.group()[0] in "+*?^"]) + \
                    text[m.end():]
            continue
        if op <= 4:
            toks = [(m.start(), m.end()) for m in _TOK.finditer(text)]
            if not toks:
                continue
            a, b = toks[rnd.randrange(len(toks))]
            piece = text[a:b]
            if op == 0:                      # delete a token
                text = text[:a] + text[b:]
            elif op == 1:                    # duplicate it
                text = text[:b] + " " + piece + text[b:]
            elif op == 2:                    # swap with another token
                c, d = toks[rnd.randrange(len(toks))]
                if (c, d) == (a, b):
                    continue
                (a, b), (c, d) = sorted([(a, b), (c, d)])
                text = text[:a] + text[c:d] + text[b:c] + text[a:b] + text[d:]
            elif op == 3:                    # replace it by a stray token
                text = text[:a] + rnd.choice(STRAY) + text[b:]
            else:                            # insert a stray token after it
                text = text[:b] + " " + rnd.choice(STRAY) + text[b:]
        elif op <= 7:
            lines = text.split("\n")
            i = rnd.randrange(len(lines))
            if op == 5:
                del lines[i]
            elif op == 6:
                lines.insert(rnd.randrange(len(lines) + 1), lines[i])
            else:
                j = rnd.randrange(len(lines))
                lines[i], lines[j] = lines[j], lines[i]
            text = "\n".join(lines)
        else:
            text = text[:rnd.randrange(len(text) + 1)]
    return text


def make_case(rnd: random.Random) -> Case:
    src = rnd.choice(CATS)
    text = mutate(rnd, open(src, encoding="utf-8").read())
    k = rnd.random()
    if k < 0.45:
        return Case("model-check", ["model", "check", "{f}"], text, fname="m.cat",
                    family=os.path.basename(src), command="model check")
    if k >= 0.7 and k < 0.8:
        return Case("lint-model", ["lint", "--model", "{f}", TEST], text, fname="m.cat",
                    family=os.path.basename(src), command="lint --model")
    if k < 0.7 and k >= 0.6:
        return Case("diff-model", ["diff", "--timeout", "5", "--from", SEED, "--to", "{f}",
                                   TEST], text, fname="m.cat", family=os.path.basename(src),
                    command="diff --to")
    if k < 0.6:
        return Case("explain-model", ["explain", "--timeout", "5", "--model", "{f}",
                                      "--outcome", "T1:%r0 == 1 && T1:%r1 == 0", TEST], text,
                    fname="m.cat", family=os.path.basename(src), command="explain --model")
    return Case("verify-model", ["verify", "--timeout", "5", "--model", "{f}", TEST], text,
                fname="m.cat", family=os.path.basename(src), command="verify --model")


def check_one(case: Case, workdir: str) -> tuple:
    """tests/fuzz.py's contract (exit 0, 1 or 2; no traceback, internal error or hang), and on
    exit 2 exactly one line on stderr, `FILE:LINE: problem` about the model file (or a file
    it includes). (verdict, detail, exit status)."""
    f = os.path.join(workdir, case.fname)
    with open(f, "w", encoding="utf-8", errors="surrogatepass") as fh:
        fh.write(case.text)
    args = [a.replace("{f}", f) for a in case.args]
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(WATCHDOG)
    try:
        r = CliRunner().invoke(cli_main, args, catch_exceptions=True)
    except Hang:
        return "hang", " ".join(args), None
    finally:
        signal.alarm(0)
    out, err = r.stdout, r.stderr
    if isinstance(r.exception, Hang):
        return "hang", " ".join(args), None
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        import traceback
        tb = "".join(traceback.format_exception(r.exception))
        return "traceback", f"{type(r.exception).__name__}: {r.exception} {tb[-600:]}", None
    if r.exit_code not in (0, 1, 2):
        return "exit status", str(r.exit_code), r.exit_code
    if "Traceback" in out + err or "internal error" in out + err:
        return "traceback", (out + err)[-300:], r.exit_code
    if r.exit_code == 2:
        lines = [ln for ln in err.splitlines() if ln.strip()]
        if len(lines) != 1:
            return "not one line", " | ".join(lines)[:300], 2
        if not re.match(r"^.+?\.cat:\d+: ", lines[0]):
            return "error without a line", lines[0][:300], 2
    return "ok", "", r.exit_code


def run(count: int, seed: int = 1, verbose: bool = False) -> dict:
    rnd = random.Random(seed)
    findings: dict = {}
    status: dict = {}
    for i in range(count):
        case = make_case(rnd)
        with tempfile.TemporaryDirectory(prefix="amdmm-fuzz-cat-") as w:
            verdict, detail, code = check_one(case, w)
        status[code] = status.get(code, 0) + 1
        if verdict != "ok":
            findings.setdefault(verdict, []).append((i, case.command, detail, case.text))
            if verbose:
                print(f"[{i}] {case.family}/{case.command}: {verdict}: {detail[:300]}",
                      file=sys.stderr, flush=True)
    return {"count": count, "findings": findings, "status": status}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--verbose", "-v", action="store_true")
    a = ap.parse_args()
    rep = run(a.count, a.seed, a.verbose)
    for k, v in sorted(rep["findings"].items()):
        print(f"{k}: {len(v)}")
        for i, cmd, detail, _ in v[:5]:
            print(f"  [{i}] {cmd}: {detail[:300]}")
    print(f"exit statuses: {rep['status']}")
    print(f"{rep['count']} inputs (seed {a.seed}), "
          f"{sum(len(v) for v in rep['findings'].values())} findings")
    sys.exit(1 if rep["findings"] else 0)


if __name__ == "__main__":
    main()
