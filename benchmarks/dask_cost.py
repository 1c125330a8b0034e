"""What `verify --dask local:2` costs against `verify --jobs 2` (issue 20 item 4: a LocalCluster
within 1.3x of --jobs 2, wall time, same machine), and where a LocalCluster's start goes.

    python3 benchmarks/dask_cost.py [--runs N] [--address tcp://HOST:PORT] [PATH ...]

The two commands run in turn (jobs, dask, jobs, dask, ...: pairing keeps each ratio meaningful
while a shared machine's speed drifts), RUNS times after one warm-up each; the table gives the
median wall seconds of each and the median of the per-pair ratios, and checks that both
printed the same bytes and exit code (--no-timing). With --address, a running cluster reached
by its address is measured too (start one with `dask scheduler` and `dask worker`).

Then the phases of one LocalCluster's life, in a fresh process each, for dask's default start
method (`spawn`: each worker a fresh interpreter importing dask.distributed, then amdmm_smt and
Z3 at its first test) and for what `--dask local` does (a fork server that has imported them
once, started before the command imports dask.distributed): seconds to import dask.distributed,
to start the cluster, to run the first one-test chunk on every worker, and to close.
Nothing in tests/ asserts a time; this script only measures.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
REAPER = False
SMALL = os.path.join(ROOT, "litmus", "classic", "MP+rel-acq.agent.diff-wg.yaml")


def _subreaper() -> bool:
    """Linux: become the reaper of our descendants' orphans, so that the CPU of processes the
    command does not wait for (multiprocessing's fork server and the Dask workers it forked)
    is counted when they end."""
    try:
        import ctypes
        return ctypes.CDLL(None).prctl(36, 1, 0, 0, 0) == 0    # PR_SET_CHILD_SUBREAPER
    except Exception:
        return False


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(args: list[str]) -> tuple[float, float, int, bytes]:
    """(wall, CPU of the command and every process it started, exit code, stdout)."""
    c0, t0 = _cpu(), time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "amdmm_smt.cli", *args], cwd=ROOT, env=ENV,
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    while True:          # orphans handed to us (subreaper): they end with the command
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            break
    return wall, _cpu() - c0, p.returncode, p.stdout


def compare(paths: list[str], runs: int, address: str | None) -> bool:
    base = ["verify", "--no-timing", *paths]
    cmds = [("--jobs 2", base + ["--jobs", "2"]), ("--dask local:2", base + ["--dask", "local:2"])]
    if address:
        cmds.append((f"--dask {address}", base + ["--dask", address]))
    times: dict[str, list[float]] = {name: [] for name, _ in cmds}
    cpus: dict[str, list[float]] = {name: [] for name, _ in cmds}
    same = True
    for i in range(runs + 1):                       # the first round is a warm-up
        ref = None
        for name, cmd in cmds:
            t, cpu, code, out = run(cmd)
            if ref is None:
                ref = (code, out)
            elif (code, out) != ref:
                same = False
                print(f"  {name}: output or exit code differs from --jobs 2 ({code} vs {ref[0]})")
            if i:
                times[name].append(t)
                cpus[name].append(cpu)
    jobs = times["--jobs 2"]
    print(f"\n{' '.join(paths)}: median of {runs} runs (min-max), wall and CPU seconds (CPU: "
          f"every process the command started{'' if REAPER else ', the fork server not counted'}"
          f"); ratio: median of the per-pair wall ratios to --jobs 2")
    for name, _ in cmds:
        ts, cs = times[name], cpus[name]
        line = (f"  {name:<24} wall {statistics.median(ts):>6.2f} ({min(ts):.2f}-{max(ts):.2f})"
                f"  CPU {statistics.median(cs):>6.2f}")
        if name != "--jobs 2":
            ratio = statistics.median(t / j for t, j in zip(ts, jobs))
            line += f"  ratio {ratio:.2f}"
            if name == "--dask local:2" and paths == [os.path.join(ROOT, "litmus")]:
                line += f"  target (the shipped corpus) < 1.3: {'met' if ratio < 1.3 else 'NOT met'}"
        print(line)
    print(f"  same output and exit code: {'yes' if same else 'NO'}")
    return same

# ---- one LocalCluster's phases, in a child process: dask_cost.py --phases-child METHOD -------

def phases_child(method: str) -> dict:
    import contextlib
    t0 = time.perf_counter()
    out: dict = {}
    with contextlib.ExitStack() as stack:
        if method == "spawn":
            from dask import distributed
            out["import dask.distributed"] = time.perf_counter() - t0
            t = time.perf_counter()
            cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1,
                                               processes=True, dashboard_address=None)
            client = distributed.Client(cluster)
        else:     # what `--dask local:2` does, step by step (_client repeats the first two:
            from amdmm_smt.run import cluster as c      # both are no-ops the second time)
            with c._no_sigint():
                c._fork_server("smt")
            out["start the fork server (it imports on)"] = time.perf_counter() - t0
            t = time.perf_counter()
            c._import_dask()
            out["import dask.distributed"] = time.perf_counter() - t
            t = time.perf_counter()
            client, cluster = c._client("local:2", stack)
        out["start the cluster (scheduler, 2 workers)"] = time.perf_counter() - t
        from amdmm_smt.run.cluster import _run_chunk
        from amdmm_smt.run.pool import Task
        t = time.perf_counter()
        with open(SMALL, "rb") as f:
            data = f.read()
        futs = [client.submit(_run_chunk, [Task(0, SMALL, None, None, 60.0, None, data=data)],
                              pure=False, workers=[w]) for w in client.scheduler_info()["workers"]]
        client.gather(futs)
        out["first one-test chunk on each worker"] = time.perf_counter() - t
        t = time.perf_counter()
        client.close()
        cluster.close()
        out["close"] = time.perf_counter() - t
    out["total"] = time.perf_counter() - t0
    return out


def phases(runs: int) -> None:
    print(f"\none 2-worker LocalCluster's life, seconds (median of {runs} fresh processes)")
    rows: dict[str, dict[str, list[float]]] = {}
    names = {"spawn": "dask's default (spawn)", "forkserver": "--dask local (fork server)"}
    for _ in range(runs):
        for m in names:
            p = subprocess.run([sys.executable, __file__, "--phases-child", m], cwd=ROOT,
                               env=ENV, capture_output=True, text=True)
            if p.returncode:
                sys.exit(f"phases ({m}) failed:\n{p.stderr[-2000:]}")
            for k, v in json.loads(p.stdout.strip().splitlines()[-1]).items():
                rows.setdefault(k, {}).setdefault(m, []).append(v)
    print(f"  {'':<44}" + "".join(f"{names[m]:>30}" for m in names))
    for k, per in rows.items():
        print(f"  {k:<44}" + "".join(
            f"{statistics.median(per[m]):>30.2f}" if m in per else f"{'-':>30}" for m in names))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("paths", nargs="*", default=None)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--address", default=None, help="a running cluster to measure too")
    ap.add_argument("--no-phases", action="store_true")
    ap.add_argument("--phases-child", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.phases_child:
        sys.path.insert(0, ROOT)
        print(json.dumps(phases_child(a.phases_child)))
        return
    try:
        import dask.distributed  # noqa: F401
    except ImportError:
        print("dask.distributed is not installed (pip install 'amdmm-smt[cluster]'): nothing "
              "to measure")
        return
    global REAPER
    REAPER = _subreaper()
    same = compare(a.paths or [os.path.join(ROOT, "litmus")], a.runs, a.address)
    if not a.no_phases:
        phases(a.runs)
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
