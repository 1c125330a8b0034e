"""`verify --dask` / `diff --dask` on a 2-worker LocalCluster give byte-identical output to a
local run (issue 13 item 5)."""

import os

import pytest
from click.testing import CliRunner

from amdmm_smt.cli import main

pytest.importorskip("dask.distributed")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLASSIC = os.path.join(ROOT, "litmus", "classic")


def run(*args):
    r = CliRunner().invoke(main, list(args))
    return r.exit_code, r.output


def test_verify_and_diff_on_a_local_cluster_match_a_local_run():
    """One 2-worker LocalCluster, reached by its address as a remote scheduler would be."""
    from dask.distributed import LocalCluster
    files = sorted(os.path.join(CLASSIC, f) for f in os.listdir(CLASSIC))[:12]
    from amdmm_smt.run.cluster import LOCAL_SCHEDULER
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None,
                      scheduler_kwargs=dict(LOCAL_SCHEDULER)) as cluster:
        addr = cluster.scheduler_address
        local = run("verify", "--json", "--no-timing", *files)
        dask = run("verify", "--json", "--no-timing", "--dask", addr, *files)
        assert local[0] == 0 and dask == local
        dl = run("diff", "--from", "seed", "--to", "upstream-2026", "--format", "json", *files)
        dd = run("diff", "--from", "seed", "--to", "upstream-2026", "--format", "json",
                 "--dask", addr, *files)
        assert dd == dl


def test_dask_local_starts_its_own_cluster():
    f = sorted(os.path.join(CLASSIC, f) for f in os.listdir(CLASSIC))[:2]
    assert run("verify", "--json", "--no-timing", "--dask", "local:2", *f) == run(
        "verify", "--json", "--no-timing", *f)


def test_bad_dask_address_is_one_line_exit_2(tmp_path):
    code, out = run("verify", "--dask", "local:zero", os.path.join(CLASSIC, os.listdir(CLASSIC)[0]))
    assert code == 2 and "local:N" in out


def test_a_worker_uses_the_model_the_parent_sent_not_its_disk(tmp_path):
    """Issue 20 item 4: the models are parsed by the command and sent once; a worker (here
    the chunk function itself, in this process) runs with the model it was sent even where
    the file does not exist, and the result is that model's (a custom model file, a copy of
    upstream-2026 under another name, changes the verdict of an LDS test)."""
    import shutil
    from amdmm_smt.model import get_model, load_model_file, _SENT
    from amdmm_smt.run.cluster import _models, _run_chunk
    from amdmm_smt.run.pool import Task
    src = os.path.join(ROOT, "models", "upstream-2026.yaml")
    path = tmp_path / "mine.yaml"
    shutil.copy(src, path)
    sent = _models([Task(0, None, None, str(path), 60.0, None)])
    assert list(sent) == [str(path)] and sent[str(path)].options == load_model_file(src).options
    path.unlink()                                   # gone from "the worker's" disk
    test = os.path.join(ROOT, "litmus", "classic", "MP+rel-acq.agent.diff-wg.yaml")
    try:
        [(i, (t, r, err))] = _run_chunk([Task(7, test, None, str(path), 60.0, None)], sent)
        assert i == 7 and err is None and r is not None and r.model == get_model(str(path)).name
    finally:
        _SENT.clear()


def test_dask_local_prints_what_jobs_2_prints_failures_and_errors_too(tmp_path):
    """Issue 20 item 4: `--dask local:2` (workers forked from the fork server) gives the bytes
    and the exit code of `--jobs 2`, in text and JSON, on tests of every corpus folder, a test
    that fails its expectation and a file that does not parse."""
    files = []
    for d in sorted(os.listdir(os.path.join(ROOT, "litmus"))):
        folder = os.path.join(ROOT, "litmus", d)
        if os.path.isdir(folder):
            files += sorted(os.path.join(folder, f) for f in os.listdir(folder)
                            if f.endswith((".yaml", ".litmus")))[:2]
    src = open(os.path.join(CLASSIC, "MP+rel-acq.agent.diff-wg.yaml")).read()
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text(src.replace("name: MP+rel-acq.agent.diff-wg", "name: wrong")
                     .replace("expect: forbidden", "expect: allowed"))
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: [\n")
    files += [str(wrong), str(broken)]
    for fmt in ([], ["--json"]):
        local = run("verify", "--no-timing", *fmt, "--jobs", "2", *files)
        dask = run("verify", "--no-timing", *fmt, "--dask", "local:2", *files)
        assert local[0] not in (0, None) and "wrong" in local[1] and "broken" in local[1]
        assert dask == local


_INSPECT = r"""
import contextlib, json, os, signal, sys
import dask
from amdmm_smt.run import cluster as c

def seen():
    import dask, os, signal, sys
    return {"parent": os.getppid(),
            "imported": sorted(m for m in ("distributed", "z3", "amdmm_smt.solve",
                                           "amdmm_smt.run.collect", "amdmm_smt.run.cluster")
                               if m in sys.modules),
            "sigint_ignored": signal.getsignal(signal.SIGINT) == signal.SIG_IGN,
            "profile": dask.config.get("distributed.worker.profile.enabled"),
            "tick": dask.config.get("distributed.admin.tick.interval")}

def status(pid, key):
    with open(f"/proc/{pid}/status") as f:
        return [l.split()[1] for l in f if l.startswith(key + ":")][0]

with contextlib.ExitStack() as stack:
    client, cluster = c._client("local:2", stack)
    method = dask.config.get("distributed.worker.multiprocessing-method")
    workers = list(client.run(seen).values())
    server = workers[0]["parent"]
    with open(f"/proc/{server}/cmdline", "rb") as f:
        cmdline = f.read().decode(errors="replace")
    out = {"method": method, "workers": workers, "server_cmdline": cmdline,
           "server_parent": int(status(server, "PPid")), "me": os.getpid(),
           "server_threads": int(status(server, "Threads")),
           "tick": dask.config.get("distributed.admin.tick.interval")}
    from distributed.nanny import WorkerProcess
    out["start_poll"] = WorkerProcess._init_msg_interval
    client.close()
    cluster.close()
out["method_after"] = dask.config.get("distributed.worker.multiprocessing-method")
print(json.dumps(out))
"""


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc")
def test_local_workers_are_forked_from_a_single_threaded_server_that_imported_them():
    """Issue 20 item 4: `--dask local` starts its workers from multiprocessing's fork server
    (not a fresh interpreter each, dask's `spawn`), which has imported dask.distributed and
    what a worker runs tests with; that server has one thread (forking it is safe: no lock
    can be held by another thread); the workers ignore ^C as before (the parent alone stops
    a run), have no profiler (no dashboard to show it), measure their event loops every
    200 ms, not 20 (the scheduler too), the nannies poll their workers' start every 5 ms,
    and the configuration is the run's alone (set back after)."""
    import json
    import subprocess
    import sys
    p = subprocess.run([sys.executable, "-c", _INSPECT], cwd=ROOT, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-3000:]
    got = json.loads(p.stdout.strip().splitlines()[-1])
    assert got["method"] == "forkserver" and got["method_after"] == "spawn"
    assert "multiprocessing.forkserver" in got["server_cmdline"]
    assert got["server_parent"] == got["me"] and got["server_threads"] == 1
    assert len(got["workers"]) == 2
    for w in got["workers"]:
        assert w["parent"] == got["workers"][0]["parent"]
        assert w["imported"] == sorted(["amdmm_smt.run.collect", "amdmm_smt.run.cluster",
                                        "amdmm_smt.solve", "distributed", "z3"])
        assert w["sigint_ignored"] and w["profile"] is False and w["tick"] == "200ms"
    from amdmm_smt.run.cluster import START_POLL
    assert got["tick"] == "200ms" and got["start_poll"] == START_POLL


_STOPPED = r"""
import os, sys
from multiprocessing import forkserver
from amdmm_smt.run import cluster as c
from amdmm_smt.run.pool import Task
pids = []
for run in range(2):
    assert c.prestart("local:1")       # as the command does first; the run then uses it
    pids.append(forkserver._forkserver._forkserver_pid)
    outs = c.run_tasks_dask([Task(i, None, None, None, 60.0, None, call=(os.getpid, ()))
                             for i in range(3)], "local:1")
    assert all(o[1] != os.getpid() for o in outs), outs
    assert forkserver._forkserver._forkserver_pid is None
    assert not os.path.exists(f"/proc/{pids[-1]}"), pids     # gone and reaped, not a zombie
print(pids[0] != pids[1])
"""


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc")
def test_a_local_run_ends_its_fork_server_and_the_next_starts_one():
    """After a `--dask local` run the fork server is ended at once (left alone it outlived
    the command by its own exit, ~0.12 s, holding the command's stdout open), and reaped; a
    second run in the same process starts a fresh one and runs as the first did."""
    import subprocess
    import sys
    p = subprocess.run([sys.executable, "-c", _STOPPED], cwd=ROOT, capture_output=True,
                       text=True, timeout=180)
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.split("\n")[-2] == "True"


def _pid_task(i, timeout=60.0):
    from amdmm_smt.run.pool import Task
    return Task(i, None, None, None, timeout, None, call=(os.getpid, ()))


def test_a_run_keeps_its_test_process_from_chunk_to_chunk_and_no_further():
    """Issue 20 item 4: a Dask worker keeps its forked test process between the chunks of one
    run (forking one per chunk cost ~55 ms of CPU each), as --jobs keeps a worker from test to
    test; a chunk of another run (other models, perhaps) stops it and forks afresh; without a
    run id nothing is kept."""
    from amdmm_smt.run import cluster
    try:
        [(_, (_, a, _))] = cluster._run_chunk([_pid_task(0)], None, "run-1")
        [(_, (_, b, _))] = cluster._run_chunk([_pid_task(1)], None, "run-1")
        assert a == b != os.getpid()
        [kept] = cluster._KEPT["run-1"]
        [(_, (_, c, _))] = cluster._run_chunk([_pid_task(2)], None, "run-2")
        assert c != a and kept.dead and "run-1" not in cluster._KEPT
        [(_, (_, d, _))] = cluster._run_chunk([_pid_task(3)], None, None)
        assert d not in (a, c) and [w.pid for w in cluster._KEPT["run-2"]] == [c]
    finally:
        for ws in cluster._KEPT.values():
            for w in ws:
                w.stop()
        cluster._KEPT.clear()


def test_run_tasks_keeps_idle_workers_only_and_uses_kept_ones_first():
    import time
    from amdmm_smt.run.pool import Task, run_tasks, Stopped
    keep: list = []
    try:
        [(_, a, _)] = run_tasks([_pid_task(0)], 1, keep=keep)
        assert [w.pid for w in keep] == [a]
        [(_, b, _)] = run_tasks([_pid_task(0)], 1, keep=keep)
        assert b == a and len(keep) == 1
        # a worker stopped by --timeout is not kept: the next run forks afresh
        slow = Task(0, None, None, None, 0.2, None, call=(time.sleep, (30,)))
        [(_, stopped, _)] = run_tasks([slow], 1, keep=keep)
        assert isinstance(stopped, Stopped) and keep == []
        [(_, c, _)] = run_tasks([_pid_task(0)], 1, keep=keep)
        assert c != a
    finally:
        for w in keep:
            w.stop()


def test_chunks_shrink_and_cover_every_task_once_in_order():
    from amdmm_smt.run.cluster import CHUNKS_PER_WORKER, _chunks
    for n, workers in [(0, 2), (1, 2), (7, 1), (295, 2), (1000, 16)]:
        chunks = _chunks(list(range(n)), workers)
        assert [t for c in chunks for t in c] == list(range(n))
        sizes = [len(c) for c in chunks]
        assert all(s >= 1 for s in sizes) and sizes == sorted(sizes, reverse=True)
        if n:
            assert sizes[0] == -(-n // (workers * CHUNKS_PER_WORKER)) and sizes[-1] == 1
    assert len(_chunks(list(range(295)), 2)) < 40       # a few dozen round trips, not 295


_PRESTART = r"""
import os, sys, time
from multiprocessing import forkserver
from amdmm_smt.run.cluster import prestart
assert not prestart(None) and not prestart("tcp://127.0.0.1:1") and not prestart("local:zero")
assert prestart("local:2")
pid = forkserver._forkserver._forkserver_pid
with open(f"/proc/{pid}/stat") as f:
    ours = int(f.read().rsplit(")", 1)[1].split()[1]) == os.getpid()
# The fork server is forked, then exec'd: while the exec runs (long, on a loaded machine)
# its cmdline reads empty. Ask again until it says what it runs.
deadline = time.monotonic() + 60
while True:
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        cmdline = f.read()
    if cmdline or time.monotonic() > deadline:
        break
    time.sleep(0.01)
print(sorted(m for m in ("distributed", "dask") if m in sys.modules),
      ours and b"from multiprocessing.forkserver import main" in cmdline)
"""


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc")
def test_prestart_starts_the_fork_server_before_dask_is_imported():
    """`verify --dask local` starts the fork server as the command starts (its imports run
    while the command reads files and imports dask.distributed); nothing for a scheduler's
    address or a malformed one (that error is said later, as before)."""
    import subprocess
    import sys
    p = subprocess.run([sys.executable, "-c", _PRESTART], cwd=ROOT, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.split("\n")[0] == "[] True"


def test_a_local_run_beside_a_taken_dashboard_port_says_nothing_of_it():
    """`--dask local` while port 8787 is taken (a Jupyter session's Dask dashboard, another
    run beside this one): Dask used to bind its scheduler's HTTP server there even with no
    dashboard, move it, and print a four-line UserWarning on the command's stderr. Now that
    server takes a free loopback port (run/cluster.py LOCAL_SCHEDULER): stderr stays empty
    and the verdict is the same."""
    import socket
    import subprocess
    import sys
    f = os.path.join(CLASSIC, sorted(os.listdir(CLASSIC))[0])
    s = socket.socket()
    try:
        try:
            s.bind(("", 8787))
            s.listen(1)
        except OSError:
            pass        # taken already: all the better
        r = subprocess.run([sys.executable, "-m", "amdmm_smt.cli", "verify", "--no-timing",
                            "--dask", "local:1", f], capture_output=True, text=True,
                           timeout=300)
    finally:
        s.close()
    assert r.returncode == 0 and "1 passed" in r.stdout, r
    assert r.stderr == "", r.stderr


def test_the_local_scheduler_serves_http_on_loopback_only():
    """The HTTP server LOCAL_SCHEDULER asks for listens on 127.0.0.1 (a free port), not on
    every interface, as `dashboard_address=None` did on the scheduler's host."""
    from dask.distributed import LocalCluster

    from amdmm_smt.run.cluster import LOCAL_SCHEDULER
    with LocalCluster(n_workers=0, processes=False, dashboard_address=None,
                      scheduler_kwargs=dict(LOCAL_SCHEDULER)) as cluster:
        http = cluster.scheduler.http_server
        assert http.address == "127.0.0.1" and http.port not in (0, 8787)
