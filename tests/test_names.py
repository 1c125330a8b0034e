"""Test names are shown safely whatever they hold (issue 22 item 9): a name outside the BMP
(an emoji) in a herd header verifies and prints (it crashed the table with UnicodeEncodeError,
exit 1, no summary), also to an ASCII-only stdout; a name with an ESC byte is shown escaped
(it was a "bad YAML" error about the imported file), in the table, JSON and JUnit alike."""

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

from click.testing import CliRunner

from amdmm_smt.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MP = os.path.join(ROOT, "litmus", "herd", "MP+rel-acq.dev.diff-wg.litmus")


def _with_name(tmp_path, name: str, fname: str = "t.litmus"):
    body = open(MP, encoding="utf-8").read().split("\n", 1)[1]
    f = tmp_path / fname
    f.write_text(f"OpenCL {name}\n" + body, encoding="utf-8")
    return f


def test_emoji_name_verifies_and_prints(tmp_path):
    f = _with_name(tmp_path, "MP\U0001f600x")
    r = CliRunner().invoke(main, ["verify", str(f)])
    assert r.exit_code == 0, r.output
    assert "MP\U0001f600x" in r.stdout and "1 test: 1 passed" in r.stdout
    r = CliRunner().invoke(main, ["verify", "--json", str(f)])
    assert json.loads(r.stdout)["name"] == "MP\U0001f600x"


def test_emoji_name_on_an_ascii_stdout(tmp_path):
    f = _with_name(tmp_path, "MP\U0001f600x")
    env = dict(os.environ, PYTHONIOENCODING="ascii")
    p = subprocess.run([sys.executable, "-m", "amdmm_smt.cli", "verify", str(f)], cwd=ROOT,
                       env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr
    assert "1 test: 1 passed" in p.stdout
    assert "MP\\U0001f600x" in p.stdout


def test_escape_byte_in_a_name_is_shown_escaped(tmp_path):
    f = _with_name(tmp_path, "MP\x1bx")
    j = tmp_path / "j.xml"
    r = CliRunner().invoke(main, ["verify", "--junit", str(j), str(f)])
    assert r.exit_code == 0, r.output
    assert "\x1b" not in r.output and "MP\\x1bx" in r.stdout
    case = ET.parse(j).getroot().find(".//testcase")
    assert case.get("name") == "MP\\x1bx"
    r = CliRunner().invoke(main, ["verify", "--json", str(f)])
    assert json.loads(r.stdout)["name"] == "MP\\x1bx"


def test_import_herd_round_trips_odd_names(tmp_path):
    for i, name in enumerate(["MP\U0001f600x", "MP\x1bx", 'a"b\\c', "\u202eevil"]):
        f = _with_name(tmp_path, name, f"t{i}.litmus")
        out = tmp_path / f"out{i}"
        r = CliRunner().invoke(main, ["import-herd", "-o", str(out), str(f)])
        assert r.exit_code == 0, r.output
        y = out / f"t{i}.yaml"
        r = CliRunner().invoke(main, ["verify", str(y)])
        assert r.exit_code == 0, r.output
        assert "\x1b" not in r.output and "\u202e" not in r.output


def test_yaml_name_with_escapes(tmp_path):
    src = open(os.path.join(ROOT, "litmus", "classic", "MP+mono.agent.diff-wg.yaml"),
               encoding="utf-8").read()
    import re
    f = tmp_path / "t.yaml"
    f.write_text(re.sub(r"(?m)^name: .*$", r'name: "a\\e[31mred\\ud83d"', src, count=1))
    r = CliRunner().invoke(main, ["verify", str(f)])
    assert r.exit_code in (0, 1), r.output
    assert "\x1b" not in r.output and "a\\x1b[31mred\\ud83d" in r.stdout
