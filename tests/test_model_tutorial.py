"""docs/model-tutorial.md is real (issue 27 item 5): every command in it runs, in order, in a
scratch directory that sees the repository's models/ and litmus/, and every output line it
shows (lines `...` are elisions, `...` within a line any text) is printed by its command, in
that order. Line numbers in
`FILE.cat:N` are compared as numbers of a line that exists (an edit of seed.cat above a
definition moves them; the doc is refreshed then)."""

import os
import re
import shlex
import subprocess

import pytest
from click.testing import CliRunner

from amdmm_smt.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "model-tutorial.md")


def _steps() -> list:
    """[(commands, shown output or None)] in document order: a ```sh block and the ```text
    block right after it, nothing but blank lines between (its last command's output)."""
    text = open(DOC, encoding="utf-8").read()
    blocks = list(re.finditer(r"```(sh|text)\n(.*?)```", text, re.S))
    out = []
    for i, m in enumerate(blocks):
        if m.group(1) != "sh":
            continue
        shown = None
        nxt = blocks[i + 1] if i + 1 < len(blocks) else None
        if nxt is not None and nxt.group(1) == "text" and not text[m.end():nxt.start()].strip():
            shown = nxt.group(2)
        out.append(([ln for ln in m.group(2).splitlines() if ln.strip()], shown))
    return out


def _norm(line: str) -> str:
    return re.sub(r"\.cat:\d+", ".cat:N", line.rstrip())


def _run(cmd: str, cwd: str) -> tuple:
    if cmd.startswith("amdmm-smt "):
        r = CliRunner().invoke(main, shlex.split(cmd)[1:])
        return r.exit_code, r.stdout + r.stderr
    p = subprocess.run(cmd, shell=True, cwd=cwd, capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def test_the_tutorial_has_its_steps():
    cmds = [c for cs, _ in _steps() for c in cs]
    assert cmds[0] == "cp models/seed.cat my.cat"
    for want in ("amdmm-smt model check my.cat", "amdmm-smt diff ", "amdmm-smt explain ",
                 "amdmm-smt synth --from models/seed.cat --to my.cat"):
        assert any(c.startswith(want) for c in cmds), want
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    lang = open(os.path.join(ROOT, "docs", "model-language.md"), encoding="utf-8").read()
    assert "(docs/model-tutorial.md)" in readme and "(model-tutorial.md)" in lang


def _check(tmp_path, monkeypatch, synth: bool) -> int:
    """Run the steps (through the synth step when `synth`, else up to it); the number of
    commands run."""
    for d in ("models", "litmus"):
        os.symlink(os.path.join(ROOT, d), tmp_path / d)
    monkeypatch.chdir(tmp_path)
    n = 0
    for cmds, shown in _steps():
        if not synth and any(c.startswith("amdmm-smt synth") for c in cmds):
            break
        for c in cmds:
            code, out = _run(c, str(tmp_path))
            n += 1
            assert code in (0, 1), (c, code, out[-2000:])
        if shown is None:
            continue
        got = [_norm(x) for x in out.splitlines()]
        k = 0
        for want in shown.splitlines():
            if want.strip() == "...":
                continue
            # `...` inside a line stands for any text (a count or a name another version of
            # the seed may change)
            w = re.compile(".*".join(re.escape(p) for p in _norm(want).split("...")) + "$")
            while k < len(got) and not w.match(got[k]):
                k += 1
            assert k < len(got), (c, want, out[-3000:])
            k += 1
    return n


def test_the_tutorial_commands_print_what_it_shows(tmp_path, monkeypatch):
    """Copy, edit, model check, diff, explain (the synth step: the long tier, below)."""
    assert _check(tmp_path, monkeypatch, synth=False) >= 5


@pytest.mark.long
def test_the_tutorial_synth_step_prints_what_it_shows(tmp_path, monkeypatch):
    """The whole tutorial, the synth search included (minutes: every program of the
    vocabulary compiled under both model files)."""
    assert _check(tmp_path, monkeypatch, synth=True) >= 6


def test_the_tutorial_error_example(tmp_path, monkeypatch):
    """Section 3's mistake: `[MA & AvScGe]` without its level."""
    monkeypatch.chdir(tmp_path)
    text = open(os.path.join(ROOT, "models", "seed.cat"), encoding="utf-8").read()
    line = "let rec avo = ([Hap \\ I] ; pohb ; [MA])"
    assert line in text
    (tmp_path / "my.cat").write_text(text.replace(line, line.replace("[MA]",
                                                                     "[MA & AvScGe]")))
    r = CliRunner().invoke(main, ["model", "check", "my.cat"])
    n = text[:text.index(line)].count("\n") + 1
    assert r.exit_code == 2
    assert r.stderr.strip() == f"my.cat:{n}: 'AvScGe' is indexed by a scope level: write AvScGe[L]"
    doc = open(DOC, encoding="utf-8").read()
    assert f"`my.cat:{n}: 'AvScGe' is indexed by a scope level: write AvScGe[L]`" in doc
