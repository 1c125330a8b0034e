"""Tests per second on a generated corpus (issue 30 item 5): `verify` with --jobs 1, --jobs 2
and --dask local:2 on COUNT tests written by `amdmm-smt gen` (every shape, order, scope and
placement on global memory, COUNT of them picked evenly by name; up to 50: from the shapes
alone), and the peak memory of the
whole process tree each command grows (the command, its workers, the Dask scheduler, workers
and fork server): the largest sum over the tree, sampled every 50 ms, of resident memory (RSS,
shared pages counted in every process) and of proportional memory (PSS, shared pages split
among the processes that share them: what the tree costs the machine).

    python3 benchmarks/gen_corpus_rate.py [--count 2000] [--runs 1] [--modes jobs1,jobs2,dask2]

Each command runs RUNS times in turn (jobs 1, jobs 2, dask, jobs 1, ...: a shared machine's speed
drifts); the table gives the median and range of wall seconds, tests per second (COUNT / wall),
CPU seconds of every process the command started (Linux: this script is their subreaper, so
the CPU of processes the command does not wait for is counted), the peak tree memory, and the
ratio of --dask local:2 to --jobs 2 (median of the per-round ratios). Every command must print
the same bytes (--json --no-timing) with the same exit code. Nothing in tests/ asserts a time.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
MODES = {"jobs1": ("--jobs 1", ["--jobs", "1"]), "jobs2": ("--jobs 2", ["--jobs", "2"]),
         "dask2": ("--dask local:2", ["--dask", "local:2"])}
PAGE = os.sysconf("SC_PAGE_SIZE")


def cli(*args, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "amdmm_smt.cli", *args], cwd=ROOT, env=ENV,
                          **kw)


def corpus(dest: str, count: int) -> int:
    """COUNT generated tests in dest, picked evenly from the sorted names of the whole set."""
    # a small corpus (the test suite's smoke run) from a small set: writing the whole set
    # (7,490 tests) costs about a minute
    wide = ["--orders", "all", "--scopes", "all", "--placement", "all"] if count > 50 else []
    with tempfile.TemporaryDirectory() as d:
        p = cli("gen", "--shape", "all", *wide, "--space", "global", "-o", d,
                capture_output=True, text=True)
        if p.returncode:
            sys.exit(f"gen failed: {p.stderr}")
        names = sorted(os.listdir(d))
        pick = sorted({names[i * len(names) // count] for i in range(min(count, len(names)))})
        for n in pick:
            shutil.copy(os.path.join(d, n), os.path.join(dest, n))
    return len(pick)


def _subreaper() -> bool:
    try:
        import ctypes
        return ctypes.CDLL(None).prctl(36, 1, 0, 0, 0) == 0    # PR_SET_CHILD_SUBREAPER
    except Exception:
        return False


def _tree(root: int) -> list[int]:
    """The processes under this one (the command and whatever it started, orphans included:
    this process is their subreaper)."""
    kids: dict[int, list[int]] = {}
    for e in os.listdir("/proc"):
        if not e.isdigit():
            continue
        try:
            with open(f"/proc/{e}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        kids.setdefault(ppid, []).append(int(e))
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        for c in kids.get(p, []):
            out.append(c)
            todo.append(c)
    return out


def _mem(pid: int) -> tuple[int, int]:
    """(RSS, PSS) bytes of a process; (0, 0) when it is gone."""
    rss = pss = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Rss:"):
                    rss = int(line.split()[1]) * 1024
                elif line.startswith("Pss:"):
                    pss = int(line.split()[1]) * 1024
    except (OSError, ValueError):
        try:
            with open(f"/proc/{pid}/statm") as f:
                rss = pss = int(f.read().split()[1]) * PAGE
        except (OSError, ValueError, IndexError):
            pass
    return rss, pss


def run(args: list[str]) -> dict:
    """One command: wall and CPU seconds, peak tree RSS and PSS (MiB), exit code, stdout."""
    me = os.getpid()
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    peak = [0, 0]
    done = threading.Event()

    def sample():
        while not done.wait(0.05):
            tot = [0, 0]
            for p in _tree(me):
                m = _mem(p)
                tot[0] += m[0]
                tot[1] += m[1]
            peak[0], peak[1] = max(peak[0], tot[0]), max(peak[1], tot[1])
    th = threading.Thread(target=sample, daemon=True)
    th.start()
    t0 = time.perf_counter()
    p = cli("verify", "--json", "--no-timing", *args, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    while True:        # orphans handed to us (subreaper) end with the command
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            break
    done.set()
    th.join()
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime
    return {"wall": wall, "cpu": cpu, "rss": peak[0] / 2 ** 20, "pss": peak[1] / 2 ** 20,
            "code": p.returncode, "out": p.stdout}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--count", type=int, default=2000, help="tests in the corpus")
    ap.add_argument("--runs", type=int, default=1, help="rounds of the commands")
    ap.add_argument("--modes", default="jobs1,jobs2,dask2",
                    help="comma list of jobs1, jobs2, dask2")
    a = ap.parse_args()
    modes = [m for m in a.modes.split(",") if m]
    if "dask2" in modes:
        try:
            import dask.distributed  # noqa: F401
        except ImportError:
            print("dask.distributed is not installed: --dask local:2 is not measured")
            modes.remove("dask2")
    reaper = _subreaper()
    with tempfile.TemporaryDirectory() as d:
        n = corpus(d, a.count)
        rows: dict[str, list[dict]] = {m: [] for m in modes}
        ref = None
        same = True
        for _ in range(a.runs):
            for m in modes:
                r = run(MODES[m][1] + [d])
                if ref is None:
                    ref = (r["code"], r["out"])
                elif (r["code"], r["out"]) != ref:
                    same = False
                rows[m].append(r)
    print(f"{n} generated tests (amdmm-smt gen, every shape / order / scope / placement, global),"
          f" {a.runs} run(s) each, median (min-max); CPU: every process the command started"
          f"{'' if reaper else ' (not a subreaper: orphans not counted)'}; memory: peak of the "
          f"whole process tree")
    print(f"  {'command':<16}{'wall s':>18}{'tests/s':>9}{'CPU s':>8}{'tree RSS MiB':>14}"
          f"{'tree PSS MiB':>14}{'/ --jobs 2':>12}")
    for m in modes:
        rs = rows[m]
        ws = [r["wall"] for r in rs]
        ratio = ""
        if m != "jobs2" and "jobs2" in rows:
            ratio = f"{statistics.median(r['wall'] / j['wall'] for r, j in zip(rs, rows['jobs2'])):.2f}"
        print(f"  {MODES[m][0]:<16}{statistics.median(ws):>8.2f} ({min(ws):.2f}-{max(ws):.2f})"
              f"{n / statistics.median(ws):>9.1f}{statistics.median(r['cpu'] for r in rs):>8.2f}"
              f"{max(r['rss'] for r in rs):>14.0f}{max(r['pss'] for r in rs):>14.0f}{ratio:>12}")
    print(f"  same output and exit code in every command: {'yes' if same else 'NO'}")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
