"""Whole-CLI fuzzing: N hostile inputs through `amdmm-smt` (in-process), each checked for the
contract: exit status 0, 1 or 2; no traceback; no "internal error"; every error line names
its file and line when the input is a file's content (`FILE:LINE: problem`), or names the
option when the input is an option value; and an answer within a watchdog (no hang).

Input classes (issue 8): mutated litmus files (bytes, lines, tokens), conditions with stray
characters, huge names, bad option values, bad model files (mutated, mistyped, not UTF-8),
special files (FIFO, broken and looping links, a directory named *.yaml, empty files).
Issue 22 item 12: every command (verify, verify --engine reference, verify --decide-only,
explain, lint, diff, import-herd) and every family of seeds (each directory of litmus/: classic,
barrier, async, cflow, calls, mmra, s000, models, and the herd .litmus files, also named
*.LITMUS), deep programs (long loops under a large unroll, nested `if`), odd test names (emoji,
control characters), and a limit check: an input run under --timeout T answers within T + 15 s.

    python3 tests/fuzz.py --count 10000 [--seed 1]     # prints a table, exit 1 on a finding

tests/test_fuzz_cli.py runs a small count in the suite.
"""

from __future__ import annotations

import argparse
import glob
import os
import random
import re
import signal
import sys
import tempfile
import time
from dataclasses import dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from click.testing import CliRunner  # noqa: E402

from amdmm_smt.cli import main as cli_main  # noqa: E402

WATCHDOG = 60          # seconds per input before it counts as a hang
CORPUS = sorted(glob.glob(os.path.join(ROOT, "litmus", "**", "*.yaml"), recursive=True))
FAMILIES = {os.path.basename(os.path.dirname(d)): sorted(glob.glob(os.path.join(d, "*.yaml")))
            for d in sorted(glob.glob(os.path.join(ROOT, "litmus", "*", "")))
            if glob.glob(os.path.join(d, "*.yaml"))}
HERD = sorted(glob.glob(os.path.join(ROOT, "litmus", "herd", "*.litmus")))
TIMEOUT = 5            # --timeout of every input that runs a test
OVERRUN = 15           # seconds past --timeout before an answer counts as a limit overrun
MODELS = sorted(glob.glob(os.path.join(ROOT, "models", "*.yaml")))
STRAY = list("&|/\\^$#`'\"?<>[]{};,+*%") + ["/\\", "\\/", "&&&", "||", "==="]
TOKENS = ["%r0", "T1:", "@x", "undef", "syncscope(\"-one-as\")", "!mmra !9", "i64", "-1",
          "4294967296", "acquire", "release", "seq_cst", "addrspace(3)", "cluster: 7",
          "\t", "\x00", "\ufeff", "é", "*a", "&a", "!!python/object", "<<: {}"]


@dataclass
class Case:
    kind: str
    args: list            # CLI arguments; "{f}" is replaced by the file written
    text: object = None   # str or bytes written to {f}; None: no file
    line_needed: bool = True   # an error must carry FILE:LINE
    special: str = ""     # fifo | loop | dangling | dir | ""
    model: object = None  # str or bytes written to m.yaml next to {f}
    fname: str = "t.yaml"  # the name of {f}
    family: str = ""      # the seed's family (litmus/ directory), or the generator
    command: str = ""     # the command (and engine / mode) it runs


def _mutate_text(rnd: random.Random, text: str) -> str:
    lines = text.split("\n")
    for _ in range(rnd.randint(1, 4)):
        op = rnd.randrange(7)
        i = rnd.randrange(len(lines))
        if op == 0:
            del lines[i]
            if not lines:
                lines = [""]
        elif op == 1:
            lines.insert(i, rnd.choice(lines))
        elif op == 2 and lines[i]:
            j = rnd.randrange(len(lines[i]))
            lines[i] = lines[i][:j] + rnd.choice(TOKENS + STRAY) + lines[i][j:]
        elif op == 3 and lines[i]:
            j = rnd.randrange(len(lines[i]))
            lines[i] = lines[i][:j] + lines[i][j + rnd.randint(1, 6):]
        elif op == 4:
            lines[i] = " " * rnd.randint(0, 6) + lines[i].lstrip()
        elif op == 5:
            words = lines[i].split(" ")
            k = rnd.randrange(len(words))
            words[k] = rnd.choice(TOKENS)
            lines[i] = " ".join(words)
        else:
            lines[i] = lines[i].replace(rnd.choice(["0", "1", "agent", "workgroup", "x", "y",
                                                    "T1", "%r", ":", "\""]),
                                        rnd.choice(TOKENS + STRAY), 1)
    return "\n".join(lines)


def _condition(rnd: random.Random, text: str) -> str:
    """Replace or add an `exists:` with stray characters in it."""
    parts = ["T1:%r0 == 1", "T1:%r1 == 0", "@x == 1", "T1:r0=1", "~T1:r1=0", "(T1:%r0 != 0)"]
    conn = ["&&", "||", "/\\", "\\/", "&", "|", "/", "\\", "^", "and"] + STRAY
    cond = rnd.choice(parts)
    for _ in range(rnd.randint(1, 4)):
        cond += f" {rnd.choice(conn)} {rnd.choice(parts)}"
    quote = rnd.choice(['"', "'", ""])
    text = re.sub(r"(?m)^(exists|expect|outcomes):.*(\n  - .*)*\n?", "", text)
    return text + f"exists: {quote}{cond}{quote}\nexpect: {rnd.choice(['allowed', 'forbidden'])}\n"


def _huge(rnd: random.Random, text: str) -> str:
    big = rnd.choice("abxT_") * rnd.choice([300, 5000, 200_000, 1_000_000])
    where = rnd.randrange(5)
    if where == 0:
        return text.replace("@x", "@" + big, 1)
    if where == 1:
        return text + f"{big}: 1\n"
    if where == 2:
        return re.sub(r"(?m)^name: .*$", f"name: {big}", text, count=1)
    if where == 3:
        return re.sub(r"(?m)^  T1:", f"  T1{big}:", text, count=1)
    return text + f'exists: "{big} == 1"\nexpect: allowed\n'


BAD_OPTIONS = [
    ["--timeout", "inf"], ["--timeout", "nan"], ["--timeout", "-inf"], ["--timeout", "0"],
    ["--timeout", "1e999"], ["--timeout", ""], ["--timeout", "5s"], ["--memory", "0"],
    ["--memory", "-5"], ["--memory", "x"], ["--memory", "1e3"], ["--jobs", "0"],
    ["--jobs", "-1"], ["--jobs", "two"], ["--max-outcomes", "-1"], ["--max-outcomes", "x"],
    ["--engine", "z3"], ["--model", ""], ["--model", "nosuch"], ["--model", "/no/such.yaml"],
    ["--model", "a" * 100000], ["--junit", "/no/such/dir/j.xml"], ["--junit", "/"],
    ["--bogus"], ["-x"], ["--timeout"],
]


def _model_text(rnd: random.Random) -> object:
    base = open(rnd.choice(MODELS), encoding="utf-8").read()
    k = rnd.randrange(6)
    if k == 0:
        return _mutate_text(rnd, base)
    if k == 1:
        return base.encode() + b"\n# \xff\xfe\n"
    if k == 2:
        key = rnd.choice(["name", "description", "sources", "options"])
        val = rnd.choice(["5", "[1, 2]", "{a: 1}", "null", "true", "''", "[[]]"])
        return re.sub(rf"(?m)^{key}:.*$", f"{key}: {val}", base, count=1) + (
            "" if key in base else f"{key}: {val}\n")
    if k == 3:
        opt = rnd.choice(["avvis", "scope_inclusion", "coherence", "default_target", "nope",
                          "final_co", "no_thin_air"])
        val = rnd.choice(["3", "yes", "maybe", "gfx9zz", "[1]", "{}", "''", "null"])
        return "name: fz\noptions:\n  " + f"{opt}: {val}\n"
    if k == 4:
        return rnd.choice(["", "- 1\n", "name:\n", "options: {}\n", "name: x\n  bad: [\n",
                           "\x00", "name: x\nname: y\n"])
    return base + rnd.choice(["extra: 1\n", "options: 5\n", "sources: 5\n"])


COMMANDS = {     # command -> its arguments around the file {f}
    "verify": ["verify", "--timeout", str(TIMEOUT), "{f}"],
    "verify-reference": ["verify", "--engine", "reference", "--timeout", str(TIMEOUT), "{f}"],
    "verify-decide-only": ["verify", "--decide-only", "--timeout", str(TIMEOUT), "{f}"],
    "verify-json": ["verify", "--json", "--timeout", str(TIMEOUT), "{f}"],
    "verify-herd": ["verify", "--format", "herd", "--timeout", str(TIMEOUT), "{f}"],
    "explain": ["explain", "--timeout", str(TIMEOUT), "{f}"],
    "lint": ["lint", "--timeout", str(TIMEOUT), "{f}"],
    "diff": ["diff", "--from", "seed", "--to", "opencl", "--timeout", str(TIMEOUT), "{f}"],
    "import-herd": ["import-herd", "-o", "{d}/out", "--timeout", str(TIMEOUT), "{f}"],
}
ODD_NAMES = ["MP\U0001f600x", "a\x1bb", "\u202eevil", "tab\there", "bell\x07", "nul\x00x",
             "ü" * 40, "a\\b\"c", "\ud83d", "", " ", "x" * 300]


def _yaml_str(text: str) -> str:
    """A YAML double-quoted scalar for any text (escapes as YAML reads them)."""
    out = []
    for c in text:
        o = ord(c)
        if c in '"\\':
            out.append("\\" + c)
        elif c.isprintable() and not 0xd800 <= o < 0xe000:
            out.append(c)
        else:
            out.append(f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}" if o < 0x10000
                       else f"\\U{o:08x}")
    return '"' + "".join(out) + '"'


def _deep(rnd: random.Random) -> tuple[str, str]:
    """(file name, text): a long loop under a large unroll, or `if` / blocks nested far."""
    k = rnd.randrange(3)
    if k == 0:
        n, unroll = rnd.choice([4, 16, 40]), rnd.choice([8, 32, 64, 64, 65, 1000])
        g = "ptr addrspace(1)"
        code = ["entry:", "  br label %b0"]
        for i in range(n - 1):
            code += [f"b{i}:", f"  br label %b{i + 1}"]
        code += [f"b{n - 1}:", f'  %f = load atomic i32, {g} @flag syncscope("agent") acquire',
                 "  %c = icmp eq i32 %f, 0", "  br i1 %c, label %b0, label %done",
                 "done:", f"  %r = load i32, {g} @x"]
        return "t.yaml", (
            f"name: loop\nunroll: {unroll}\nbound: {rnd.choice(['assume', 'fail'])}\n"
            "memory:\n  x: {}\n  flag: {}\nthreads:\n  P0:\n    workgroup: 0\n    code: |\n"
            f"      store i32 1, {g} @x\n"
            f'      store atomic i32 1, {g} @flag syncscope("agent") release\n'
            "  P1:\n    workgroup: 1\n    code: |\n" + "".join(f"      {c}\n" for c in code)
            + 'exists: "P1:%r == 0"\nexpect: forbidden\n')
    n = rnd.choice([3, 60, 70, 200, 1000, 5000])
    if k == 1:
        body = "  if (r0 == 0) {\n" * n + "  r1 = 1;\n" + "  }\n" * n
    else:
        body = "{" * n + "r1 = 1;" + "}" * n + "\n"
    return rnd.choice(["t.litmus", "t.LITMUS"]), (
        "OpenCL deep\n{ x=0; f=0; }\n"
        "P0@wg 0, dev 0 (global atomic_int* x, global atomic_int* f) {\n"
        "  atomic_store_explicit(x, 1, memory_order_relaxed, memory_scope_device);\n}\n"
        "P1@wg 1, dev 0 (global atomic_int* x, global atomic_int* f) {\n  int r0;\n  int r1 = 0;\n"
        "  r0 = atomic_load_explicit(f, memory_order_acquire, memory_scope_device);\n"
        + body + "}\nexists (1:r1 == 0)\n")


def make_case(rnd: random.Random, i: int) -> Case:
    case = _make_case(rnd, i)
    if not case.command:
        case.command = "verify" if case.args and case.args[0] == "verify" else \
            (case.args[0] if case.args else "")
    return case


def _make_case(rnd: random.Random, i: int) -> Case:
    family = rnd.choice(sorted(FAMILIES))
    base = open(rnd.choice(FAMILIES[family]), encoding="utf-8").read()
    kind = rnd.choice(["mutate", "mutate", "mutate", "bytes", "condition", "condition",
                       "huge", "option", "model", "model-named", "special",
                       "command", "command", "command", "herd", "herd", "herd", "deep",
                       "name"])
    if kind == "command":      # a mutated (or intact) seed through any command
        cmd = rnd.choice(sorted(COMMANDS))
        text = base if rnd.random() < 0.2 else _mutate_text(rnd, base)
        return Case(kind, list(COMMANDS[cmd]), text, family=family, command=cmd)
    if kind == "herd":
        cmd = rnd.choice(sorted(COMMANDS))
        src = open(rnd.choice(HERD), encoding="utf-8").read()
        text = src if rnd.random() < 0.2 else _mutate_text(rnd, src)
        return Case(kind, list(COMMANDS[cmd]), text, fname=rnd.choice(
            ["t.litmus", "t.litmus", "t.LITMUS", "t.Litmus"]), family="herd", command=cmd)
    if kind == "deep":
        cmd = rnd.choice(["verify", "verify-reference", "lint", "explain", "import-herd"])
        fname, text = _deep(rnd)
        if cmd == "import-herd" and fname.endswith(".yaml"):
            cmd = "verify"
        return Case(kind, list(COMMANDS[cmd]), text, fname=fname, family="deep", command=cmd)
    if kind == "name":
        cmd = rnd.choice(["verify", "verify-json", "verify-herd", "lint", "explain",
                          "import-herd", "diff"])
        name = rnd.choice(ODD_NAMES)
        if cmd == "import-herd" or rnd.random() < 0.5:
            src = open(rnd.choice(HERD), encoding="utf-8").read()
            text = f"OpenCL {name}\n" + src.split("\n", 1)[1]
            fname = "t.litmus"
        else:
            text = re.sub(r"(?m)^name: .*$", lambda m: f"name: {_yaml_str(name)}", base, count=1)
            fname = "t.yaml"
        return Case(kind, list(COMMANDS[cmd]), text, fname=fname, family=family, command=cmd)
    if kind == "mutate":
        return Case(kind, ["verify", "--timeout", "5", "{f}"], _mutate_text(rnd, base),
                    family=family)
    if kind == "bytes":
        b = bytearray(base.encode())
        for _ in range(rnd.randint(1, 8)):
            b[rnd.randrange(len(b))] = rnd.randrange(256)
        return Case(kind, ["verify", "--timeout", "5", "{f}"], bytes(b), family=family)
    if kind == "condition":
        return Case(kind, ["verify", "--timeout", "5", "{f}"], _condition(rnd, base),
                    family=family)
    if kind == "huge":
        return Case(kind, ["verify", "--timeout", "5", "{f}"], _huge(rnd, base), family=family)
    if kind == "option":
        cmd = rnd.choice(["verify", "diff"])
        opt = rnd.choice(BAD_OPTIONS)
        extra = ["--from", "seed", "--to", "seed"] if cmd == "diff" else []
        if cmd == "diff" and opt[0] in ("--memory", "--engine", "--max-outcomes", "--junit",
                                        "--model"):
            opt = ["-o", "/no/such/dir/o.md"] if opt[0] == "--junit" else ["--from", opt[-1]]
        return Case(kind, [cmd, *extra, *opt, "{f}"], base, line_needed=False)
    if kind == "model":
        return Case(kind, ["verify", "--model", "{f}", os.path.join(ROOT, "litmus", "classic",
                                                                    "MP+mono.agent.diff-wg.yaml")],
                    _model_text(rnd))
    if kind == "model-named":     # a test whose model: names a mutated model file
        return Case(kind, ["verify", "--timeout", "5", "{f}"],
                    re.sub(r"(?m)^model:.*\n", "", base) + "model: m.yaml\n",
                    model=_model_text(rnd))
    sp = rnd.choice(["fifo", "loop", "dangling", "dir", "empty", "fifo-in-dir"])
    return Case("special", ["verify", "{f}"], None if sp != "empty" else "",
                line_needed=False, special=sp)


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang()


def check(case: Case, workdir: str) -> tuple[str, str]:
    """Run one case; returns (verdict, detail): verdict 'ok' or the kind of finding."""
    f = os.path.join(workdir, case.fname)
    d = os.path.join(workdir, "d")
    os.makedirs(d, exist_ok=True)
    target = f
    if case.model is not None:
        data = case.model if isinstance(case.model, bytes) else case.model.encode()
        with open(os.path.join(workdir, "m.yaml"), "wb") as m:
            m.write(data)
    if case.text is not None:
        mode = "wb" if isinstance(case.text, bytes) else "w"
        kw = {} if mode == "wb" else {"encoding": "utf-8", "errors": "surrogatepass"}
        with open(f, mode, **kw) as fh:
            fh.write(case.text)
    elif case.special == "fifo":
        os.mkfifo(f)
    elif case.special == "fifo-in-dir":
        os.mkfifo(os.path.join(d, "p.yaml"))
        target = d
    elif case.special == "loop":
        os.symlink(f, f)
    elif case.special == "dangling":
        os.symlink(os.path.join(workdir, "nowhere.yaml"), f)
    elif case.special == "dir":
        os.mkdir(f)
    args = [a.replace("{f}", target).replace("{d}", workdir) for a in case.args]
    signal.signal(signal.SIGALRM, _alarm)
    t0 = time.monotonic()
    signal.alarm(WATCHDOG)
    try:
        r = CliRunner().invoke(cli_main, args, catch_exceptions=True)
    except Hang:
        return "hang", " ".join(args)
    finally:
        signal.alarm(0)
    took = time.monotonic() - t0
    out, err = r.stdout, r.stderr
    if isinstance(r.exception, Hang):
        return "hang", " ".join(args)
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        return "traceback", f"{type(r.exception).__name__}: {r.exception}"
    if r.exit_code not in (0, 1, 2):
        return "exit status", str(r.exit_code)
    if str(TIMEOUT) in case.args and took > TIMEOUT + OVERRUN:
        return "limit overrun", f"{took:.0f} s under --timeout {TIMEOUT}: {' '.join(args)[:200]}"
    if "\x1b" in out + err or "\u202e" in out + err:
        return "unsafe name", (out + err)[:300].encode("unicode_escape").decode()
    if "Traceback" in out + err:
        return "traceback", err[-300:]
    if "internal error" in out + err:
        return "internal error", (out + err)[-300:]
    if r.exit_code == 2:
        lines = [ln for ln in err.splitlines() if ln.strip()]
        if not lines:
            return "error without a line", "exit 2 and nothing on stderr"
        for ln in lines:
            if len(ln) > 3000:
                return "unbounded error line", f"{len(ln)} characters"
            if case.line_needed and case.kind != "special":
                if not re.match(r"^.+?:\d+: ", ln):
                    return "error without a line", ln[:300]
    return "ok", ""


def run(count: int, seed: int = 1, verbose: bool = False, flush: bool = False) -> dict:
    rnd = random.Random(seed)
    findings: dict[str, list] = {}
    kinds: dict[str, int] = {}
    families: dict[str, int] = {}
    commands: dict[str, int] = {}
    t0 = time.time()
    for i in range(count):
        case = make_case(rnd, i)
        kinds[case.kind] = kinds.get(case.kind, 0) + 1
        if case.family:
            families[case.family] = families.get(case.family, 0) + 1
        commands[case.command] = commands.get(case.command, 0) + 1
        with tempfile.TemporaryDirectory(prefix="amdmm-fuzz-") as w:
            verdict, detail = check(case, w)
        if verdict != "ok":
            findings.setdefault(verdict, []).append((i, case.kind, detail, case))
            if verbose or flush:
                print(f"[{i}] {case.kind}/{case.family}/{case.command}: {verdict}: "
                      f"{detail[:300]}", file=sys.stderr, flush=True)
        if flush and i % 100 == 99:
            print(f"{i + 1} inputs, {time.time() - t0:.0f} s, findings "
                  f"{ {k: len(v) for k, v in findings.items()} }", file=sys.stderr, flush=True)
    return {"count": count, "seconds": time.time() - t0, "kinds": kinds, "families": families,
            "commands": commands, "findings": findings}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--verbose", "-v", action="store_true")
    ap.add_argument("--progress", action="store_true",
                    help="print each finding and a line every 100 inputs as they come")
    a = ap.parse_args()
    rep = run(a.count, a.seed, a.verbose, a.progress)
    print(f"{'input class':<14} {'inputs':>7}")
    for k, n in sorted(rep["kinds"].items()):
        print(f"{k:<14} {n:>7}")
    for title, key in (("family", "families"), ("command", "commands")):
        print(f"{title:<20} {'inputs':>7}")
        for k, n in sorted(rep[key].items()):
            print(f"{k:<20} {n:>7}")
    print(f"{'finding':<24} {'count':>7}")
    for k in ("traceback", "internal error", "error without a line", "hang", "exit status",
              "unbounded error line", "limit overrun", "unsafe name"):
        print(f"{k:<24} {len(rep['findings'].get(k, [])):>7}")
    print(f"{rep['count']} inputs in {rep['seconds']:.0f} s (seed {a.seed})")
    for k, items in sorted(rep["findings"].items()):
        for i, kind, detail, _ in items[:5]:
            print(f"  {k}: input {i} ({kind}): {detail[:300]}")
    sys.exit(1 if rep["findings"] else 0)


if __name__ == "__main__":
    main()
