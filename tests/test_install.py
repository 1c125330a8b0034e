"""What a user installs works (issue 16 item 1; issue 8 item 1).

The project is built and installed with a plain, non-editable `pip install` into a virtualenv
that sees nothing of this machine: made from the *base* interpreter (not a venv's), without
`--system-site-packages`, with no PYTHONPATH; its dependencies are installed into it by pip
(from the index, or pip's wheel cache). Then, from another directory, every stage runs through
the venv's `amdmm-smt` script: `verify` on the whole shipped corpus, `models`, `diff`,
`explain`, `import-herd`, `lint`, `verify --engine reference` and a herd `.litmus` file. A second
check compares the installed package with the source tree: every `.py` under `amdmm_smt/` and
every model file must be installed, so removing any subpackage from the build fails here.
"""

from __future__ import annotations

import filecmp
import glob
import os
import shutil
import subprocess
import sys
import sysconfig

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# one worker runs this module's tests under `--dist loadgroup` (the fast tier's run, .ci/run),
# so the module's venv fixture is built once, not once on each worker that gets one of them
pytestmark = pytest.mark.xdist_group("install")


def base_python() -> str:
    """The interpreter this Python was made from: a venv's interpreter would hand a venv made
    from it the packages of its own base (`--system-site-packages` chains)."""
    exe = getattr(sys, "_base_executable", None)
    if exe and os.path.exists(exe) and not _in_venv(exe):
        return exe
    for name in (f"python{sys.version_info[0]}.{sys.version_info[1]}", "python3", "python"):
        cand = os.path.join(sys.base_prefix, "bin", name)
        if os.path.exists(cand):
            return cand
    return sys.executable       # pragma: no cover - not a CPython layout


def _in_venv(exe: str) -> bool:
    return os.path.exists(os.path.join(os.path.dirname(os.path.dirname(exe)), "pyvenv.cfg"))


def _env():
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP")}
    env["PIP_NO_INPUT"] = "1"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def _tracked_copy(dest) -> None:
    """The tree's tracked (and untracked, not ignored) files, symbolic links kept as links:
    what a fresh clone has, and no build/ or egg-info of this checkout."""
    try:
        files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                                "--exclude-standard"], cwd=ROOT, capture_output=True,
                               check=True).stdout.decode().split("\0")
    except (OSError, subprocess.CalledProcessError):    # not a git checkout: the whole tree
        files = [os.path.relpath(os.path.join(r, n), ROOT) for r, ds, ns in os.walk(ROOT)
                 for n in ns + ds if not {".git", "build", "__pycache__"} & set(r.split(os.sep))]
    for f in filter(None, files):
        src, dst = os.path.join(ROOT, f), os.path.join(dest, f)
        if not os.path.lexists(src) or os.path.lexists(dst):
            continue
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if os.path.islink(src):
            os.symlink(os.readlink(src), dst)
        elif os.path.isfile(src):
            shutil.copy2(src, dst)


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    d = tmp_path_factory.mktemp("venv")
    subprocess.run([base_python(), "-m", "venv", str(d)], check=True, timeout=180, env=_env())
    py = str(d / "bin" / "python")
    src = tmp_path_factory.mktemp("src")
    _tracked_copy(src)
    p = subprocess.run([py, "-m", "pip", "install", "-q", str(src)], capture_output=True,
                       text=True, timeout=900, cwd=str(d), env=_env())
    assert p.returncode == 0, f"pip install failed:\n{p.stdout}\n{p.stderr}"
    return d


def _site(venv) -> str:
    p = subprocess.run([str(venv / "bin" / "python"), "-c",
                        "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                       capture_output=True, text=True, check=True, env=_env(), timeout=60)
    return p.stdout.strip()


def _run(venv, cwd, *args, timeout=600):
    exe = str(venv / "bin" / "amdmm-smt")
    p = subprocess.run([exe, *args], capture_output=True, text=True, timeout=timeout, cwd=cwd,
                       env=_env())
    assert "Traceback" not in p.stdout + p.stderr, p.stdout + p.stderr
    return p


def test_the_venv_sees_nothing_of_this_machine(venv, tmp_path):
    py = str(venv / "bin" / "python")
    code = ("import sys, amdmm_smt; print(amdmm_smt.__file__); "
            "print(any('site-packages' in p and not p.startswith(sys.prefix) for p in sys.path))")
    p = subprocess.run([py, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                       env=_env(), timeout=60)
    assert p.returncode == 0, p.stderr
    pkg, foreign = p.stdout.split()
    assert pkg.startswith(str(venv)), pkg           # the installed copy, not this tree
    assert foreign == "False"                       # no site-packages of the machine
    cfg = (venv / "pyvenv.cfg").read_text()
    assert "include-system-site-packages = false" in cfg


def test_every_module_and_model_file_is_installed(venv):
    inst = os.path.join(_site(venv), "amdmm_smt")
    here = os.path.join(ROOT, "amdmm_smt")

    def pyfiles(top):
        return sorted(os.path.relpath(os.path.join(r, f), top)
                      for r, ds, fs in os.walk(top, followlinks=True) for f in fs
                      if f.endswith(".py") and "__pycache__" not in r)
    source = pyfiles(here)
    assert len(source) > 40 and "frontend/herd/lexer.py" in source
    missing = sorted(set(source) - set(pyfiles(inst)))
    assert not missing, f"not installed by `pip install .`: {missing}"
    # the model files: the repository's models/*.yaml, file for file
    repo = sorted(os.path.basename(f) for f in glob.glob(os.path.join(ROOT, "models", "*.yaml")))
    got = sorted(os.path.basename(f) for f in glob.glob(os.path.join(inst, "models", "*.yaml")))
    assert got == repo and repo
    _, mismatch, errors = filecmp.cmpfiles(os.path.join(ROOT, "models"),
                                           os.path.join(inst, "models"), repo, shallow=False)
    assert not mismatch and not errors
    # and the model files in the model language, option files included (the version files
    # include them: llvm-hsa.cat, pr170447.cat)
    cats = sorted(os.path.relpath(f, os.path.join(ROOT, "models")) for f in
                  glob.glob(os.path.join(ROOT, "models", "**", "*.cat"), recursive=True))
    got = sorted(os.path.relpath(f, os.path.join(inst, "models")) for f in
                 glob.glob(os.path.join(inst, "models", "**", "*.cat"), recursive=True))
    assert got == cats and "options/avvis-false.cat" in cats


def test_verify_the_whole_shipped_corpus(venv, tmp_path):
    p = _run(venv, tmp_path, "verify", "--no-timing", "--quiet", "--jobs", "2",
             os.path.join(ROOT, "litmus"))
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    n = sum(1 for r, ds, fs in os.walk(os.path.join(ROOT, "litmus")) for f in fs
            if f.lower().endswith((".yaml", ".yml", ".litmus")))
    assert n > 200
    assert p.stdout.splitlines()[-1] == f"{n} tests: {n} passed, 0 failed, 0 unknown, 0 errors"


def test_models_diff_explain_from_another_directory(venv, tmp_path):
    p = _run(venv, tmp_path, "models")
    assert p.returncode == 0, p.stderr
    names = [ln.split(":")[0] for ln in p.stdout.splitlines() if ln and not ln.startswith(" ")]
    for n in ("seed", "upstream-2026", "llvm-hsa", "opencl"):
        assert n in names, p.stdout

    t = os.path.join(ROOT, "litmus", "classic", "MP+rel-acq.agent.diff-wg.yaml")
    p = _run(venv, tmp_path, "verify", "--model", "upstream-2026", "--no-timing", t)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "1 passed" in p.stdout

    p = _run(venv, tmp_path, "diff", "--from", "seed", "--to", "upstream-2026",
             "--format", "markdown", "-o", "d.md", os.path.join(ROOT, "litmus", "models"))
    assert p.returncode in (0, 1), p.stdout + p.stderr
    text = (tmp_path / "d.md").read_text()
    assert "upstream-2026" in text and "tests compared" in text

    p = _run(venv, tmp_path, "explain", "--json", t)
    assert p.returncode == 0, p.stdout + p.stderr
    assert '"forbidden_by"' in p.stdout and "synchroniz" in p.stdout, p.stdout

    p = _run(venv, tmp_path, "lint", os.path.join(ROOT, "litmus", "herd"))
    assert p.returncode in (0, 1) and "warning[" in p.stdout + p.stderr, p.stdout + p.stderr


def test_reference_engine_and_herd_import_installed(venv, tmp_path):
    t = os.path.join(ROOT, "litmus", "classic", "MP+rel-acq.agent.diff-wg.yaml")
    p = _run(venv, tmp_path, "verify", "--engine", "reference", "--no-timing", t)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "1 passed" in p.stdout

    herd = sorted(glob.glob(os.path.join(ROOT, "litmus", "herd", "*.litmus")))
    assert herd
    p = _run(venv, tmp_path, "import-herd", "-o", "imported", herd[0])
    assert p.returncode == 0, p.stdout + p.stderr
    out = glob.glob(str(tmp_path / "imported" / "*.yaml"))
    assert len(out) == 1
    p = _run(venv, tmp_path, "verify", "--no-timing", "--json", out[0])
    assert p.returncode == 0, p.stdout + p.stderr
    p2 = _run(venv, tmp_path, "verify", "--no-timing", "--json", herd[0])
    assert p2.returncode == 0, p2.stdout + p2.stderr
    import json
    a, b = json.loads(p.stdout.splitlines()[0]), json.loads(p2.stdout.splitlines()[0])
    assert a["outcomes"] == b["outcomes"] and a["outcomes"]      # imported = verified on the fly


def test_site_packages_of_this_interpreter_are_not_the_venvs():
    # the fixture's premise: the base interpreter is not this checkout's environment
    assert not base_python().startswith(sysconfig.get_paths()["purelib"])
