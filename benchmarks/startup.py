"""Start-up cost of the `amdmm-smt` command (issue 16 item 5): a per-file pre-commit hook or a
script that calls the CLI once per test pays it every time.

Each command runs as a whole process RUNS times; the table gives the median CPU (user + system
of the process and the workers it waited for) and wall seconds, beside the floor: Python
starting, and Python plus `import z3`. Targets from the issue: `--help` under 0.1 s and a
two-thread `verify` under 0.15 s CPU on a 2-core machine where the floor is about 0.07 s.

    python3 benchmarks/startup.py [--runs N] [--installed]

--installed adds the same rows for what a user installs: a non-editable `pip install .` into
a virtualenv made from the base interpreter (no system site-packages, as tests/test_install.py
makes it), run through its console script. A development machine's site-packages can cost
start-up of their own (here: an editable install's finder and a `.pth` that imports certifi,
about 0.03-0.04 s on every `python`), which the floor rows show and an installed user does
not pay.

Byte-code caching matters: a `pip install` compiles the package; a source tree run with
PYTHONDONTWRITEBYTECODE=1 recompiles every module each time. This script measures with
byte-code caching on (the installed case) and says so.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TWO_THREAD = os.path.join(ROOT, "litmus", "classic", "MP+rel-acq.agent.diff-wg.yaml")


def measure(cmd: list[str], runs: int, env: dict) -> tuple[float, float]:
    cpu, wall = [], []
    for _ in range(runs + 1):                      # one warm-up run (byte-code, disk cache)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        p = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True)
        t1 = time.perf_counter()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if p.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr.decode()[-2000:]}")
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        wall.append(t1 - t0)
    return statistics.median(cpu[1:]), statistics.median(wall[1:])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--installed", action="store_true",
                    help="also measure a fresh non-editable install in a clean virtualenv")
    a = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    py = sys.executable
    cli = [py, "-m", "amdmm_smt.cli"]
    rows = [
        ("python -c pass (floor)", [py, "-c", "pass"], None),
        ("python -c 'import z3' (floor)", [py, "-c", "import z3"], None),
        ("amdmm-smt --help", cli + ["--help"], 0.10),
        ("amdmm-smt models", cli + ["models"], None),
        ("verify two-thread test", cli + ["verify", "--no-timing", TWO_THREAD], 0.15),
        ("verify two-thread test --json", cli + ["verify", "--json", "--no-timing", TWO_THREAD],
         0.15),
    ]
    print(f"start-up, median of {a.runs} runs (byte-code cached; Python {sys.version.split()[0]})")
    print(f"{'command':<34} {'cpu s':>7} {'wall s':>7} {'target cpu':>11}")
    table(rows, a.runs, env)
    if a.installed:
        with tempfile.TemporaryDirectory() as d:
            py, exe = install(d)
            print(f"installed: a non-editable `pip install .` in a clean virtualenv ({d})")
            table([("python -c pass (floor)", [py, "-c", "pass"], None),
                   ("python -c 'import z3' (floor)", [py, "-c", "import z3"], None),
                   ("amdmm-smt --help", [exe, "--help"], 0.10),
                   ("verify two-thread test", [exe, "verify", "--no-timing", TWO_THREAD], 0.15),
                   ("verify two-thread test --json",
                    [exe, "verify", "--json", "--no-timing", TWO_THREAD], 0.15)],
                  a.runs, {k: v for k, v in env.items() if k != "PYTHONPATH"})


def table(rows, runs: int, env: dict) -> None:
    for name, cmd, target in rows:
        cpu, wall = measure(cmd, runs, env)
        mark = "" if target is None else (f"< {target:.2f} " + ("met" if cpu < target
                                                                 else "NOT met"))
        print(f"{name:<34} {cpu:7.3f} {wall:7.3f} {mark:>11}", flush=True)


def install(d: str) -> tuple[str, str]:
    """A virtualenv in d made from the base interpreter, with this tree pip-installed (not
    editable): its python and its amdmm-smt."""
    base = getattr(sys, "_base_executable", sys.executable)
    venv = os.path.join(d, "venv")
    subprocess.run([base, "-m", "venv", venv], check=True)
    py = os.path.join(venv, "bin", "python")
    subprocess.run([py, "-m", "pip", "install", "-q", ROOT], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return py, os.path.join(venv, "bin", "amdmm-smt")


if __name__ == "__main__":
    main()
