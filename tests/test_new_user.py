"""Issue 8: what a new user hit. Each test would catch the return of one defect."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest
from click.testing import CliRunner

from amdmm_smt import model as model_mod
from amdmm_smt.cli import main
from amdmm_smt.errors import LitmusError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MP = """
name: {name}
memory: {{x: {{}}, y: {{}}}}
threads:
  T0:
    workgroup: 0
    code: |
      store i32 1, ptr addrspace(1) @x
      store atomic i32 1, ptr addrspace(1) @y syncscope("agent") release{tag}
  T1:
    workgroup: 1
    code: |
      %r0 = load atomic i32, ptr addrspace(1) @y syncscope("agent") acquire
      %r1 = load i32, ptr addrspace(1) @x
"""


def run(*args):
    r = CliRunner().invoke(main, list(args))
    return r.exit_code, r.stdout, r.stderr


def one_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


def cli(*args, env=None, cwd=ROOT, timeout=120):
    e = dict(os.environ, PYTHONPATH=ROOT, **(env or {}))
    return subprocess.run([sys.executable, "-m", "amdmm_smt.cli", *args], capture_output=True,
                          text=True, env=e, cwd=cwd, timeout=timeout)


# ---- item 1: no model files is an error, not an empty list ---------------------------------

def test_missing_model_files_are_an_error(monkeypatch):
    monkeypatch.setattr(model_mod, "shipped_models_dir", lambda: None)
    code, out, err = run("models")
    assert code == 2 and "no model files are installed" in one_line(err)
    with pytest.raises(LitmusError):
        model_mod.get_model(None)


def test_relative_model_file_is_relative_to_the_test(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "m.yaml").write_text("name: mine\noptions: {avvis: false}\n")
    (tmp_path / "sub" / "t.yaml").write_text(MP.format(name="t", tag="") + "model: m.yaml\n")
    code, out, err = run("verify", "--json", "--no-timing", str(tmp_path / "sub" / "t.yaml"))
    assert code == 0, out + err
    rec = json.loads(out)
    assert rec["model"] == "mine" and rec["model_options"] == {"avvis": False}


# ---- item 3: which model, which options ----------------------------------------------------

def test_models_and_table_name_the_model_and_its_options(write):
    code, out, _ = run("models")
    assert code == 0
    assert "    options: avvis=false" in out and "    options: default options" in out
    p = write(MP.format(name="mp", tag=""))
    code, out, _ = run("verify", "--no-timing", "--model", "upstream-2026", p)
    assert "model upstream-2026 (lds_av_workgroup=true, volatile_av=true, read_lo=true" in out
    code, out, _ = run("verify", "--no-timing", p)
    assert "model seed (default options): 1 test" in out


# ---- item 5: option values and model files -------------------------------------------------

@pytest.mark.parametrize("value", ["inf", "nan", "-1", "0", "1e400", "x"])
def test_bad_timeout_is_one_line_exit_2(write, value):
    code, out, err = run("verify", "--timeout", value, write(MP.format(name="mp", tag="")))
    assert code == 2
    assert "--timeout" in one_line(err)


def test_model_file_not_utf8(tmp_path, write):
    m = tmp_path / "m.yaml"
    m.write_bytes(b"name: x\ndescription: \xff\xfe\n")
    code, out, err = run("verify", "--model", str(m), write(MP.format(name="mp", tag="")))
    assert code == 2
    assert one_line(err).startswith(f"{m}:2: model file is not UTF-8")


@pytest.mark.parametrize("body,line,needle", [
    ("name: x\nsources: 5\n", 2, "sources: must be a list"),
    ("name: x\ndescription: [1]\n", 2, "description: must be text"),
    ("name: [1]\n", 1, "name: must be a non-empty string"),
    ("name: x\noptions:\n  avvis: 3\n", 3, "must be true or false"),
    ("name: x\noptions:\n  nope: 3\n", 3, "unknown model option 'nope'"),
    ("name: x\noptions:\n  default_target: gfx9zz\n", 3, "unknown target"),
    ("name: x\noptions: [1]\n", 2, "options: must be a mapping"),
    ("name: x\nbogus: 1\n", 2, "unknown key 'bogus'"),
    ("- 1\n", 1, "a model file is a mapping"),
    ("name: x\n  y: [\n", 2, "bad YAML"),
])
def test_bad_model_file_is_file_line(tmp_path, write, body, line, needle):
    m = tmp_path / "m.yaml"
    m.write_text(body)
    code, out, err = run("verify", "--model", str(m), write(MP.format(name="mp", tag="")))
    assert code == 2
    msg = one_line(err)
    assert msg.startswith(f"{m}:{line}:") and needle in msg, msg


@pytest.mark.parametrize("body", [
    "name: x\nsources: 5\n", "- 1\n", "name: x\n  y: [\n", "name: &a x\nd: *a\n",
    "name: x\nname: y\n", "name: x\noptions:\n  <<: {avvis: true}\n", "name: x\n\x07\n",
    "name: x\noptions:\n  avvis: false\n  coherence: langref\n", "",
])
def test_model_yaml_reads_the_same_with_and_without_libyaml(tmp_path, monkeypatch, body):
    """A model file is composed by libyaml when PyYAML has it (start-up: issue 30), any
    problem read again by the pure Python loader: the model, or the FILE:LINE error, is the
    same either way."""
    m = tmp_path / "m.yaml"
    m.write_text(body)

    def load():
        try:
            return model_mod._load_model_file(str(m)).options
        except LitmusError as e:
            return str(e)
    from amdmm_smt.frontend import yaml_lines
    if yaml_lines._FAST is not None and "coherence" in body:
        assert yaml_lines.fast_compose(body, str(m)) is not None       # the fast path is taken
    fast = load()
    monkeypatch.setattr(yaml_lines, "_FAST", None)
    assert yaml_lines.fast_compose(body, str(m)) is None
    assert load() == fast


def test_model_directory_is_an_error(tmp_path, write):
    d = tmp_path / "dir.yaml"
    d.mkdir()
    code, out, err = run("verify", "--model", str(d), write(MP.format(name="mp", tag="")))
    assert code == 2 and "regular file" in one_line(err)


def test_test_naming_a_bad_model_file_gets_file_line(tmp_path):
    (tmp_path / "m.yaml").write_text("name: x\nsources: 5\n")
    t = tmp_path / "t.yaml"
    t.write_text(MP.format(name="t", tag="") + "model: m.yaml\n")
    code, out, err = run("verify", str(t))
    assert code == 2
    msg = one_line(err)
    assert msg.startswith(f"{t}:15: model 'm.yaml'") and "sources: must be a list" in msg


@pytest.mark.parametrize("cmd", [["verify", "--junit"], ["diff", "--from", "seed", "--to",
                                                          "llvm-hsa", "-o"]])
def test_output_into_missing_directory(tmp_path, write, cmd):
    p = write(MP.format(name="mp", tag=""))
    code, out, err = run(*cmd, str(tmp_path / "no" / "such" / "f.xml"), p)
    assert code == 2
    msg = one_line(err)
    assert ("--junit" in msg or "--output" in msg) and "does not exist" in msg


def test_usage_errors_are_one_line():
    code, out, err = run("verify", "--jobs", "zero", "x.yaml")
    assert code == 2 and "--jobs" in one_line(err)
    code, out, err = run("verify")
    assert code == 2 and "PATHS" in one_line(err)


# ---- item 6: diff writes -o for text and reports unsupported tests as error rows -----------

def test_diff_text_output_file_and_error_rows(tmp_path):
    (tmp_path / "a.yaml").write_text(MP.format(name="a", tag=""))
    (tmp_path / "b.yaml").write_text(MP.format(name="b", tag=", !mmra !0") +
                                     'metadata: |\n  !0 = !{!"amdgpu-synchronize-as", '
                                     '!"bogus"}\n')
    out = tmp_path / "d.txt"
    code, stdout, err = run("diff", "--from", "seed", "--to", "llvm-hsa", "-o", str(out),
                            str(tmp_path))
    assert code == 2              # an error row is an error
    text = out.read_text()
    assert "ERROR b" in text and "unknown address space 'bogus'" in text
    assert "unchanged (1): a" in text and "1 tests compared" in text
    assert "unknown address space" in err
    code, stdout, _ = run("diff", "--from", "seed", "--to", "llvm-hsa", "--format", "json",
                          str(tmp_path))
    rep = json.loads(stdout)
    assert rep["summary"]["errors"] == 1
    assert [t["name"] for t in rep["tests"]] == ["a", "b"]


# ---- item 7: JUnit message and classname ---------------------------------------------------

def test_junit_message_is_the_first_failing_verdict(tmp_path):
    (tmp_path / "sub").mkdir()
    t = tmp_path / "sub" / "t.yaml"
    # exists forbidden passes; the outcomes list is wrong: the message must be about outcomes
    t.write_text(MP.format(name="t", tag="") + 'exists: "T1:%r0 == 1 && T1:%r1 == 0"\n'
                 "expect: forbidden\n" 'outcomes: ["T1:%r0 == 1 && T1:%r1 == 1"]\n')
    j = tmp_path / "j.xml"
    code, _, _ = run("verify", "--junit", str(j), str(tmp_path / "sub"))
    assert code == 1
    case = ET.parse(str(j)).getroot().find("testsuite").find("testcase")
    msg = case.find("failure").get("message")
    assert msg.startswith("fail: outcomes: fail"), msg
    assert "allowed but not expected" in msg
    assert case.get("classname") == str(tmp_path / "sub").strip("/").replace("/", ".")


# ---- item 8: out of memory and thin air said as such ---------------------------------------

def test_out_of_memory_is_unknown_exit_1():
    p = cli("verify", "--memory", "16", "litmus/classic/IRIW+sc.agent.diff-wg.yaml")
    assert p.returncode == 1, p.stdout + p.stderr
    assert "Traceback" not in p.stderr and "internal error" not in p.stdout + p.stderr
    assert "1 unknown" in p.stdout and "out of memory" in p.stdout


def test_reference_engine_says_thin_air():
    code, out, err = run("verify", "--engine", "reference", "--no-timing",
                         os.path.join(ROOT, "litmus/classic/LB+data+mono.thin-air.yaml"))
    assert "out of thin air" in out and "within --timeout" not in out


# ---- item 13: cluster on a target without clusters: accepted, with a warning --------------

def test_cluster_without_clusters_warns_in_table_and_json():
    f = os.path.join(ROOT, "litmus/classic/MP+rel-acq.cluster.gfx942.diff-cluster.yaml")
    code, out, _ = run("verify", "--no-timing", f)
    assert code == 0
    assert f"{f}:22: warning[cluster-without-clusters]" in out
    code, out, _ = run("verify", "--json", "--no-timing", f)
    rec = json.loads(out)
    assert rec["warnings"] == [{"code": "cluster-without-clusters", "file": f, "line": 22,
                                "message": rec["warnings"][0]["message"]}]


# ---- item 14: 80 columns, --quiet, --max-outcomes ------------------------------------------

def test_names_readable_at_80_columns():
    d = os.path.join(ROOT, "litmus", "classic")
    p = cli("verify", "--no-timing", d, env={"COLUMNS": "80"}, timeout=300)
    assert p.returncode == 0, p.stderr
    names = [ln.split()[1] for ln in p.stdout.splitlines() if ln.startswith("pass ")]
    files = [f for f in os.listdir(d) if f.endswith(".yaml")]
    assert len(names) == len(files) == len(set(names))
    for f in files:
        assert f[:-len(".yaml")] in names    # every name whole, on its own line


def test_quiet_and_max_outcomes(tmp_path):
    f = os.path.join(ROOT, "litmus/classic/MP+mono.agent.diff-wg.yaml")   # four outcomes
    code, out, _ = run("verify", "--no-timing", "--quiet", f)
    assert code == 0 and "T1:%r0" not in out and "1 passed" in out
    code, out, _ = run("verify", "--no-timing", "--max-outcomes", "2", f)
    assert "and 2 more outcomes" in out
    assert out.count("T1:%r0 == ") == 2
    code, out, _ = run("verify", "--json", "--no-timing", "--max-outcomes", "2", f)
    assert len(json.loads(out)["outcomes"]) == 4


# ---- item 10: echoed text is bounded -------------------------------------------------------

@pytest.mark.parametrize("where", ["loc", "key", "thread", "cond"])
def test_huge_names_give_short_lines(tmp_path, where):
    big = "n" * 1_000_000
    text = MP.format(name="t", tag="")
    if where == "loc":
        text = text.replace("ptr addrspace(1) @x", f"ptr addrspace(1) @{big}", 1)
    elif where == "key":
        text += f"{big}: 1\n"
    elif where == "thread":
        text = text.replace("  T1:", f"  T1{big}:")
    else:
        text += f'exists: "T1:%r0 == 1 && {big} == 0"\nexpect: allowed\n'
    f = tmp_path / "t.yaml"
    f.write_text(text)
    code, out, err = run("verify", str(f))
    assert code == 2
    msg = one_line(err)
    assert len(msg) < len(str(f)) + 600, len(msg)


# ---- item 11: paths: follow or report, never hang, never skip silently ---------------------

def _mp_file(path, name):
    path.write_text(MP.format(name=name, tag=""))


def test_paths_special_files_links_and_case(tmp_path):
    d = tmp_path / "d"
    (d / "sub").mkdir(parents=True)
    (tmp_path / "real").mkdir()
    _mp_file(d / "a.yaml", "a")
    _mp_file(d / "B.YAML", "upper")                      # any case of the suffix
    _mp_file(tmp_path / "real" / "c.yaml", "linked")
    os.mkfifo(d / "fifo.yaml")                          # would block an open() forever
    os.symlink(tmp_path / "real", d / "link")           # a symlinked subdirectory is followed
    os.symlink(d, d / "sub" / "up")                     # a loop: reported, not followed
    os.symlink(tmp_path / "nowhere.yaml", d / "dangling.yaml")
    os.symlink(tmp_path / "self.yaml", tmp_path / "self.yaml")
    p = cli("verify", "--json", "--no-timing", str(d), str(tmp_path / "self.yaml"),
            str(d / "fifo.yaml"), timeout=60)
    assert p.returncode == 2
    names = sorted(json.loads(ln)["name"] for ln in p.stdout.splitlines()
                   if json.loads(ln)["name"])
    assert names == ["a", "linked", "upper"]
    err = p.stderr
    assert f"{d}/fifo.yaml: a FIFO" in err
    assert f"{tmp_path}/self.yaml: symbolic link loop" in err
    assert f"{d}/dangling.yaml: broken symbolic link" in err
    assert f"{d}/sub/up: symbolic link to a directory already searched" in err
    assert "Traceback" not in err


def test_unreadable_directory_is_reported(tmp_path, monkeypatch):
    from amdmm_smt.run.collect import collect
    d = tmp_path / "d"
    (d / "locked").mkdir(parents=True)
    _mp_file(d / "a.yaml", "a")
    real = os.scandir

    def scandir(path="."):
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)
    monkeypatch.setattr(os, "scandir", scandir)
    files, errors = collect([str(d)])
    assert files == [str(d / "a.yaml")]
    assert errors == [(str(d / "locked"), f"{d / 'locked'}: cannot read directory: "
                                          "permission denied")]


def test_dash_one_as_is_rejected(write):
    p = write(MP.format(name="t", tag="").replace('syncscope("agent") release',
                                                  'syncscope("-one-as") release'))
    code, out, err = run("verify", p)
    assert code == 2 and 'spelled "one-as"' in one_line(err)


# ---- item 16: the pre-commit hook matches litmus files only --------------------------------

def test_precommit_hook_default_files_are_litmus_only():
    import re
    import yaml
    with open(os.path.join(ROOT, ".pre-commit-hooks.yaml")) as f:
        hook = yaml.safe_load(f)[0]
    pat = re.compile(hook["files"])                     # pre-commit uses re.search
    for ok in ("litmus/classic/MP.yaml", "litmus/a.yml", "sub/litmus/x/T.YAML"):
        assert pat.search(ok), ok
    for no in (".pre-commit-config.yaml", ".github/workflows/ci.yml", "models/seed.yaml",
               "docs/x.yaml", "tests/hostile/bad.yaml", "litmus/README.md"):
        assert not pat.search(no), no


# ---- item 2: the format reference is in the project ----------------------------------------

def test_format_reference_covers_the_parser_and_no_shared_paths():
    import glob
    import re
    from amdmm_smt import ir
    from amdmm_smt.frontend import litmus as parse
    doc = open(os.path.join(ROOT, "docs", "litmus-format.md"), encoding="utf-8").read()
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    assert "](docs/litmus-format.md)" in readme
    for key in parse.TOP_KEYS | parse.THREAD_KEYS | parse.LOC_KEYS:
        assert f"`{key}`" in doc, key
    for word in list(ir.RMW_OPS) + list(ir.ORDERS) + ["-one-as", "one-as", "undef", "/\\",
                                                      "\\/", "~", "init: undef", "model"]:
        assert word in doc, word
    from amdmm_smt.frontend import async_intrinsics as asyncops
    for name in (parse.AV_STORE | parse.AV_LOAD | parse.BARRIER | {asyncops.MARK, asyncops.WAIT}
                 | {"llvm.amdgcn." + base for base in asyncops.DMA}):
        stem = name.replace("llvm.amdgcn.", "")
        assert stem in doc or name.rsplit(".", 1)[0].replace("llvm.amdgcn.", "") in doc, name
    for status in ("| `0` |", "| `1` |", "| `2` |"):
        assert status in doc
    files = (["README.md", ".pre-commit-hooks.yaml"] + glob.glob(os.path.join(ROOT, "docs", "*.md"))
             + glob.glob(os.path.join(ROOT, "models", "*.yaml"))
             + glob.glob(os.path.join(ROOT, "amdmm_smt", "**", "*.py"), recursive=True))
    for f in files:
        text = open(os.path.join(ROOT, f), encoding="utf-8").read()
        assert not re.search(r"\bshared/(seeds|reference|litmus-format)", text), f


# ---- item 15: the shipped diff report is current -------------------------------------------

def test_shipped_diff_report_covers_the_whole_corpus():
    import glob
    import re
    doc = open(os.path.join(ROOT, "docs", "diff-seed-vs-upstream-2026.md"),
               encoding="utf-8").read()
    n = sum(len(glob.glob(os.path.join(ROOT, "litmus", "**", "*" + ext), recursive=True))
            for ext in (".yaml", ".litmus"))
    m = re.search(r"^(\d+) tests compared", doc, re.M)
    assert m and int(m.group(1)) == n, (
        "docs/diff-seed-vs-upstream-2026.md is stale; regenerate it with `amdmm-smt diff --from "
        "seed --to upstream-2026 litmus/ --format markdown -o docs/diff-seed-vs-upstream-2026.md`")
    for part in ("## Why: the model options that differ", "## Legend", "## Changed tests",
                 "## Unchanged tests"):
        assert part in doc
