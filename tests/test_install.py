"""A plain (non-editable) install works from any directory (issue 8 item 1).

The project is installed with pip into a fresh virtualenv (`--system-site-packages` only so that
z3 and the other dependencies are not downloaded again; the project itself is installed into the
venv, non-editable), then `models`, `verify --model upstream-2026` and `diff` run through the
venv's `amdmm-smt` script from a temporary directory, with no PYTHONPATH pointing at this tree.
The installed model files must be exactly the repository's models/*.yaml.
"""

from __future__ import annotations

import filecmp
import glob
import importlib.util
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _env():
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["PIP_NO_INPUT"] = "1"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    d = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(d)], check=True,
                   timeout=120)
    py = str(d / "bin" / "python")
    src = tmp_path_factory.mktemp("src")
    # install from a copy of the tree's tracked files: no build/ or egg-info left in the worktree
    import shutil
    try:
        files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                                "--exclude-standard"], cwd=ROOT, capture_output=True,
                               check=True).stdout.decode().split("\0")
    except (OSError, subprocess.CalledProcessError):    # not a git checkout: the whole tree
        files = [os.path.relpath(os.path.join(r, n), ROOT) for r, ds, ns in os.walk(ROOT)
                 for n in ns if not {".git", "build", "__pycache__"} & set(r.split(os.sep))]
    for f in filter(None, files):
        if os.path.isfile(os.path.join(ROOT, f)):
            os.makedirs(os.path.dirname(os.path.join(src, f)) or str(src), exist_ok=True)
            shutil.copy2(os.path.join(ROOT, f), os.path.join(src, f))
    if importlib.util.find_spec("wheel") is not None:   # offline: the shared build backend
        cmd = [py, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
               "--no-index", str(src)]
    else:                                               # isolated build from the pip config
        cmd = [py, "-m", "pip", "install", "-q", "--no-deps", str(src)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=str(d), env=_env())
    assert p.returncode == 0, f"pip install failed:\n{p.stdout}\n{p.stderr}"
    return d


def _run(venv, cwd, *args):
    exe = str(venv / "bin" / "amdmm-smt")
    return subprocess.run([exe, *args], capture_output=True, text=True, timeout=300, cwd=cwd,
                          env=_env())


def test_installed_copy_is_not_this_tree(venv, tmp_path):
    p = subprocess.run([str(venv / "bin" / "python"), "-c",
                        "import amdmm_smt, amdmm_smt.model as m; print(amdmm_smt.__file__); "
                        "print(m.shipped_models_dir())"],
                       capture_output=True, text=True, cwd=tmp_path, env=_env(), timeout=60)
    assert p.returncode == 0, p.stderr
    pkg, models = p.stdout.split()
    assert pkg.startswith(str(venv)), pkg
    assert models.startswith(str(venv)), models
    # the installed model set is the repository's, file for file
    repo = sorted(os.path.basename(f) for f in glob.glob(os.path.join(ROOT, "models", "*.yaml")))
    inst = sorted(os.path.basename(f) for f in glob.glob(os.path.join(models, "*.yaml")))
    assert inst == repo and repo
    match, mismatch, errors = filecmp.cmpfiles(os.path.join(ROOT, "models"), models, repo,
                                               shallow=False)
    assert not mismatch and not errors


def test_models_verify_diff_from_another_directory(venv, tmp_path):
    p = _run(venv, tmp_path, "models")
    assert p.returncode == 0, p.stderr
    names = [ln.split(":")[0] for ln in p.stdout.splitlines() if ln and not ln.startswith(" ")]
    for n in ("seed", "upstream-2026", "llvm-hsa", "opencl"):
        assert n in names, p.stdout

    t = os.path.join(ROOT, "litmus", "classic", "MP+rel-acq.agent.diff-wg.yaml")
    p = _run(venv, tmp_path, "verify", "--model", "upstream-2026", "--no-timing", t)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "1 passed" in p.stdout

    # the corpus tests that name their own model: work too
    p = _run(venv, tmp_path, "verify", "--no-timing", os.path.join(ROOT, "litmus", "models"))
    assert p.returncode == 0, p.stdout + p.stderr

    p = _run(venv, tmp_path, "diff", "--from", "seed", "--to", "upstream-2026",
             "--format", "markdown", "-o", "d.md", os.path.join(ROOT, "litmus", "models"))
    assert p.returncode in (0, 1), p.stdout + p.stderr
    assert not p.stderr.strip() or "Traceback" not in p.stderr
    text = (tmp_path / "d.md").read_text()
    assert "upstream-2026" in text and "tests compared" in text
