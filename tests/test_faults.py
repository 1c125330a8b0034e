"""Faults that must not lose results (issue 22): a worker killed while idle or busy, the parent
killed (its workers die with it), a parse that outlives --timeout (never parsed again without a
limit), explain / lint / import-herd under the worker limits, Dask addresses that are not
schedulers, outputs written atomically. Real processes and signals throughout; the time bounds
are generous hang checks, never speed measurements."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from amdmm_smt.cli import main
from amdmm_smt.run import pool

from .test_limits import big_test

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLASSIC = os.path.join(ROOT, "litmus", "classic")
FILES = sorted(os.path.join(CLASSIC, f) for f in os.listdir(CLASSIC))[:4]


def cli(*args, timeout=120, **kw):
    return subprocess.run([sys.executable, "-m", "amdmm_smt.cli", *args], capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT, **kw)


def _gone(pid: int) -> bool:
    """Exited (a zombie counts: it runs no more)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def _wait_gone(pid: int, within: float = 20.0) -> bool:
    end = time.monotonic() + within
    while time.monotonic() < end:
        if _gone(pid):
            return True
        time.sleep(0.05)
    return False


def _children(pid: int) -> list[int]:
    out = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                out += [int(x) for x in f.read().split()]
    except OSError:
        pass
    return out


def _descendants(pid: int) -> list[int]:
    todo, out = [pid], []
    while todo:
        for c in _children(todo.pop()):
            out.append(c)
            todo.append(c)
    return out


def _kill(pids):
    for p in pids:
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass


# --- item 1: a worker that dies loses at most the test it held -----------------------------

def _records(output: str) -> list[dict]:
    return [json.loads(ln) for ln in output.splitlines() if ln.startswith("{")]


def test_worker_killed_while_idle_loses_nothing(monkeypatch):
    """The worker about to be given the third test has died (SIGKILL) while idle: the test
    goes to a fresh worker and every record prints (before: exit 1, no output at all)."""
    real_give = pool._Worker.give
    killed = []

    def give(self, task):
        if task.index == 2 and not killed:
            os.kill(self.pid, signal.SIGKILL)
            assert _wait_gone(self.pid)
            killed.append(self.pid)
        return real_give(self, task)
    monkeypatch.setattr(pool._Worker, "give", give)
    r = CliRunner().invoke(main, ["verify", "--json", "--no-timing", "--jobs", "2", *FILES])
    assert killed
    ref = CliRunner().invoke(main, ["verify", "--json", "--no-timing", *FILES])
    assert (r.exit_code, r.output) == (ref.exit_code, ref.output) and ref.exit_code == 0


def test_worker_killed_while_busy_costs_only_its_test(monkeypatch):
    real_give = pool._Worker.give

    def give(self, task):
        ok = real_give(self, task)
        if task.index == 1:
            os.kill(self.pid, signal.SIGKILL)
        return ok
    monkeypatch.setattr(pool._Worker, "give", give)
    r = CliRunner().invoke(main, ["verify", "--json", "--no-timing", "--jobs", "2", *FILES])
    recs = _records(r.output)
    assert len(recs) == len(FILES)
    lost = [x for x in recs if x["status"] != "pass"]
    assert len(lost) == 1 and lost[0]["file"] == FILES[1], lost
    if lost[0]["status"] == "error":    # killed before it had parsed the file: exit 2
        assert r.exit_code == 2
        assert lost[0]["error"].startswith(f"{FILES[1]}: worker process killed by SIGKILL "
                                           "during "), lost
    else:                               # killed after: the test is unknown, exit 1
        assert r.exit_code == 1 and lost[0]["status"] == "unknown", lost
        assert lost[0]["limit"].startswith("worker process killed by SIGKILL during"), lost


# --- item 2: workers die with their parent --------------------------------------------------

@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_workers_die_with_their_parent(tmp_path, sig):
    for i in range(2):
        (tmp_path / f"big{i}.yaml").write_text(big_test(10, 20).replace("name: big",
                                                                      f"name: big{i}"))
    p = subprocess.Popen([sys.executable, "-m", "amdmm_smt.cli", "verify",
                          "--timeout", "300", "--jobs", "2", str(tmp_path)],
                         cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers = []
    try:
        end = time.monotonic() + 60
        while time.monotonic() < end and len(workers) < 2:
            workers = [c for c in _children(p.pid) if not _gone(c)]
            time.sleep(0.1)
        assert len(workers) == 2, workers
        time.sleep(0.5)          # the workers are running their tests
        os.kill(p.pid, sig)
        p.wait(timeout=30)
        assert all(_wait_gone(w) for w in workers), [w for w in workers if not _gone(w)]
    finally:
        _kill(workers)
        if p.poll() is None:
            p.kill()
            p.wait()
