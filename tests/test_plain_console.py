"""Issue 30 item 3: off a terminal the commands print through report/plain.py's PlainConsole
(no rich import at start-up); it must write exactly the bytes rich's Console writes. Whole
reports are compared, printed both ways: passing, failing and unknown tests, warnings, errors,
names with brackets and colons (rich markup and emoji syntax), narrow and wide consoles
(blocks and the table), a summary longer than the console (which rich wraps)."""

import os

import pytest
from click.testing import CliRunner

from amdmm_smt.cli import main
from amdmm_smt.report import plain

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLASSIC = os.path.join(ROOT, "litmus", "classic")


def _both(args, env):
    out = []
    for rich_only in (False, True):
        old = plain.RICH_ONLY
        plain.RICH_ONLY = rich_only
        try:
            r = CliRunner().invoke(main, args, env=env)
        finally:
            plain.RICH_ONLY = old
        out.append((r.exit_code, r.output))
    return out


@pytest.fixture
def odd_tests(tmp_path):
    mp = open(os.path.join(CLASSIC, "MP+rel-acq.agent.diff-wg.yaml")).read()
    (tmp_path / "a.yaml").write_text(mp.replace("name: MP+rel-acq.agent.diff-wg",
                                                "name: \"MP [bold]red[/bold] :smile: x\"")
                                     .replace("expect: forbidden", "expect: allowed"))
    (tmp_path / "b.yaml").write_text("name: broken\nthreads: [\n")
    (tmp_path / "c.yaml").write_text(mp.replace("name: MP+rel-acq.agent.diff-wg",
                                                "name: " + "long" * 30))
    return str(tmp_path)


@pytest.mark.parametrize("columns", ["80", "200", "30"])
def test_plain_console_writes_what_rich_writes(odd_tests, columns):
    for args in (["verify", "--no-timing", CLASSIC, odd_tests],
                 ["verify", "--no-timing", "--quiet", odd_tests],
                 ["verify", "--no-timing", "--max-outcomes", "1",
                  os.path.join(CLASSIC, "MP+mono.agent.diff-wg.yaml")],
                 ["lint", CLASSIC], ["models"]):
        a, b = _both(args, {"COLUMNS": columns})
        assert a == b, args


def test_a_terminal_or_forced_colour_gets_rich(monkeypatch):
    import io
    monkeypatch.setattr("sys.stdout", io.StringIO())
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    assert plain.plain_ok()
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert not plain.plain_ok()
    monkeypatch.delenv("FORCE_COLOR")
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    assert not plain.plain_ok()


def test_verify_off_a_terminal_does_not_import_rich():
    import subprocess
    import sys
    code = ("import sys; from amdmm_smt.cli import main\n"
            "try:\n    main(['verify', '--no-timing', sys.argv[1]])\n"
            "except SystemExit as e:\n    assert e.code == 0, e.code\n"
            "assert 'rich' not in sys.modules, 'rich imported'\n"
            "assert 'multiprocessing' not in sys.modules, 'a worker was forked'\n")
    p = subprocess.run([sys.executable, "-c", code,
                        os.path.join(CLASSIC, "MP+rel-acq.agent.diff-wg.yaml")],
                       capture_output=True, text=True, cwd=ROOT, timeout=120,
                       env={k: v for k, v in os.environ.items()
                            if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")})
    assert p.returncode == 0, p.stderr
    assert "1 passed" in p.stdout
