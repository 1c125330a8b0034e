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
    """Exited (a zombie counts: it runs no more), every thread of it."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            zombie = f.read().rsplit(")", 1)[1].split()[0] == "Z"
        return zombie and len(os.listdir(f"/proc/{pid}/task")) <= 1
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
    assert (r.exit_code, r.output) == (ref.exit_code, ref.output) and ref.exit_code == 0, \
        [ln for ln in r.output.splitlines() if '"error"' in ln]


def test_worker_killed_while_busy_costs_only_its_test(monkeypatch):
    """The worker running the second test is killed (SIGKILL, from inside, so the moment is
    deterministic): that test is unknown with how its worker ended, the rest print."""
    import amdmm_smt.solve as solve
    real = solve.run_test

    def run_test(test, *a, **k):
        if test.file == FILES[1]:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(test, *a, **k)
    monkeypatch.setattr(solve, "run_test", run_test)
    r = CliRunner().invoke(main, ["verify", "--json", "--no-timing", "--jobs", "2", *FILES])
    recs = _records(r.output)
    assert r.exit_code == 1, r.output
    assert len(recs) == len(FILES)
    lost = [x for x in recs if x["status"] != "pass"]
    assert len(lost) == 1 and lost[0]["file"] == FILES[1], lost
    assert lost[0]["status"] == "unknown", lost
    assert lost[0]["limit"] == "worker process killed by SIGKILL during parsing", lost


def test_worker_that_dies_as_it_is_given_a_task_is_retried_once(monkeypatch):
    """Killed the moment it was handed the test (before it started it): a fresh worker takes
    the test; killed again, the test is reported, naming the file (it was never parsed)."""
    real_give = pool._Worker.give
    kills = []

    def give(self, task):
        ok = real_give(self, task)
        if task.index == 1 and len(kills) < 2:
            os.kill(self.pid, signal.SIGKILL)
            kills.append(self.pid)
        return ok
    monkeypatch.setattr(pool._Worker, "give", give)
    r = CliRunner().invoke(main, ["verify", "--json", "--no-timing", "--jobs", "2", *FILES])
    recs = _records(r.output)
    # the signal races with the worker taking the task: killed before it started, the task
    # goes to a fresh worker (killed again: 2 kills); killed after, the test is lost (1 kill).
    # Either way a dead worker costs at most its test
    assert len(kills) in (1, 2) and len(recs) == len(FILES), r.output
    lost = [x for x in recs if x["status"] != "pass"]
    assert len(lost) == 1 and lost[0]["file"] == FILES[1], lost
    if lost[0]["status"] == "error":    # killed before it had parsed the file: exit 2
        assert r.exit_code == 2
        assert lost[0]["error"].startswith(f"{FILES[1]}: worker process killed by SIGKILL "
                                           "during "), lost
    else:                               # killed after (a slow signal): unknown, exit 1
        assert r.exit_code == 1 and lost[0]["status"] == "unknown", lost


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


# --- item 4: explain runs under the worker limits -------------------------------------------

def ticket_lock(n: int, unroll: int) -> str:
    """n contenders of litmus/cflow/ticketlock at the given unroll: far too many path
    combinations to explain within seconds."""
    s = (f"name: ticket{n}\nunroll: {unroll}\nbound: assume\nmemory:\n  next: {{}}\n"
         "  serving: {}\n  cnt: {}\nthreads:\n")
    for t in range(n):
        s += f"""  P{t}:
    workgroup: {t}
    code: |
      entry:
        %t = atomicrmw add ptr addrspace(1) @next, i32 1 syncscope("agent") monotonic
        br label %spin
      spin:
        %s = load atomic i32, ptr addrspace(1) @serving syncscope("agent") acquire, align 4
        %mine = icmp eq i32 %s, %t
        br i1 %mine, label %crit, label %spin
      crit:
        %c = load i32, ptr addrspace(1) @cnt
        %c1 = add i32 %c, 1
        store i32 %c1, ptr addrspace(1) @cnt
        %t1 = add i32 %t, 1
        store atomic i32 %t1, ptr addrspace(1) @serving syncscope("agent") release, align 4
"""
    return s + f'exists: "@cnt != {n}"\nexpect: forbidden\n'


def test_explain_honours_timeout(tmp_path):
    f = tmp_path / "ticket.yaml"
    f.write_text(ticket_lock(4, 6))
    t0 = time.monotonic()
    p = cli("explain", "--json", "--no-timing", "--timeout", "1", str(f))
    assert time.monotonic() - t0 < 30          # before: still running after 360 s
    assert p.returncode == 1, (p.stdout, p.stderr)
    rec = json.loads(p.stdout)
    assert rec["reachable"] is None and rec["name"] == "ticket4", rec
    assert rec["limit"].startswith("timeout after 1 s during "), rec
    t = cli("explain", "--no-timing", "--timeout", "1", str(f))
    assert t.returncode == 1 and "unknown: timeout after 1 s during " in t.stdout, t.stdout


def test_explain_honours_memory(tmp_path):
    f = tmp_path / "ticket.yaml"
    f.write_text(ticket_lock(4, 6))
    p = cli("explain", "--json", "--no-timing", "--timeout", "60", "--memory", "64", str(f))
    assert p.returncode == 1, (p.stdout, p.stderr)
    rec = json.loads(p.stdout)
    assert rec["reachable"] is None and "out of memory (--memory 64 MiB)" in rec["limit"], rec
    assert "Traceback" not in p.stderr


# --- item 5: a parse that outlives --timeout is never parsed again without a limit -------

def _slow_parse(monkeypatch):
    """Parsing that never ends and ignores the deadline (the herd importer on a large file)."""
    import amdmm_smt.frontend.herd.convert as convert
    import amdmm_smt.run.collect as collect

    def slow(*a, **k):
        time.sleep(60)   # a regression fails in a minute, not never
    monkeypatch.setattr(collect, "parse_file", slow)
    monkeypatch.setattr(convert, "load_litmus", slow)    # imported when a .litmus is read


@pytest.mark.parametrize("command", [
    ["verify", "--json"], ["verify", "--jobs", "2"], ["lint"], ["explain"],
    ["diff", "--from", "seed", "--to", "upstream-2026"]])
def test_a_slow_parse_is_stopped_by_timeout(monkeypatch, command):
    _slow_parse(monkeypatch)
    t0 = time.monotonic()
    # a short timeout: the parse never ends, any deadline is passed (then GRACE, 1 s)
    r = CliRunner().invoke(main, [*command, "--timeout", "0.2", FILES[0]])
    assert time.monotonic() - t0 < 20        # before: the parent parsed it again, no limit
    assert r.exit_code == 2, r.output
    assert f"{FILES[0]}: timeout after 0.2 s during parsing" in r.output, r.output


def test_import_herd_honours_timeout(monkeypatch, tmp_path):
    import amdmm_smt.frontend.herd.convert as convert

    def slow(*a, **k):
        time.sleep(60)   # a regression fails in a minute, not never
    monkeypatch.setattr(convert, "import_text", slow)
    src = tmp_path / "a.litmus"
    src.write_text("C a\n{}\nP0(atomic_int* x) { atomic_store(x, 1); }\nexists (x=1)\n")
    t0 = time.monotonic()
    r = CliRunner().invoke(main, ["import-herd", "--timeout", "0.2", "-o",
                                  str(tmp_path / "out"), str(src)])
    assert time.monotonic() - t0 < 20
    assert r.exit_code == 2 and f"{src}: timeout after 0.2 s during importing" in r.output, \
        r.output
    assert not (tmp_path / "out").exists()


# --- item 3: Dask addresses that are not schedulers; dask not installed ---------------------

def _serve(handler):
    """A TCP server on a free local port running handler(conn) per connection."""
    import socket
    import threading
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)

    def loop():
        while True:
            try:
                c, _ = srv.accept()
            except OSError:
                return
            threading.Thread(target=handler, args=(c,), daemon=True).start()
    threading.Thread(target=loop, daemon=True).start()
    return srv, srv.getsockname()[1]


def _http(c):      # a web server: waits for a request, never speaks first
    data = b""
    while b"\r\n\r\n" not in data:
        got = c.recv(4096)
        if not got:
            break
        data += got
    c.sendall(b"HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\n\r\n")
    c.close()


def _garbage(c):   # a huge frame length, then noise
    c.sendall(b"\xff" * 64 + os.urandom(1024))
    time.sleep(5)
    c.close()


@pytest.mark.parametrize("kind", ["http", "garbage", "refused"])
def test_dask_address_that_is_no_scheduler_is_one_line_exit_2(monkeypatch, kind):
    pytest.importorskip("dask.distributed")
    from amdmm_smt.run import cluster
    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT", 2.0)
    if kind == "refused":
        import socket
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()                   # nothing listens there now
        srv = None
    else:
        srv, port = _serve(_http if kind == "http" else _garbage)
    try:
        t0 = time.monotonic()
        r = CliRunner().invoke(main, ["verify", "--dask", f"tcp://127.0.0.1:{port}", FILES[0]])
        assert time.monotonic() - t0 < 20      # before: > 400 s (http), 30 s (refused)
    finally:
        if srv is not None:
            srv.close()
    assert r.exit_code == 2, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("--dask: "), r.output
    assert f"127.0.0.1:{port}" in lines[0]
    assert {"http": "did not answer as a Dask scheduler", "garbage": "not the Dask protocol",
            "refused": "Connection refused"}[kind] in lines[0], lines[0]


def test_dask_not_installed_is_one_line_naming_the_extra():
    blocker = (
        "import sys, builtins\n"
        "real = builtins.__import__\n"
        "def imp(name, *a, **k):\n"
        "    if name.split('.')[0] in ('dask', 'distributed'):\n"
        "        raise ImportError(f'No module named {name!r}')\n"
        "    return real(name, *a, **k)\n"
        "builtins.__import__ = imp\n"
        "for m in [m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')]:\n"
        "    del sys.modules[m]\n"
        "from amdmm_smt.cli import main\n"
        "sys.argv = ['amdmm-smt'] + sys.argv[1:]\n"
        "main()\n")
    for args in (["verify", "--dask", "local"], ["verify", "--dask", "tcp://127.0.0.1:1"],
                 ["diff", "--from", "seed", "--to", "upstream-2026", "--dask", "local"]):
        p = subprocess.run([sys.executable, "-c", blocker, *args, FILES[0]], cwd=ROOT,
                           capture_output=True, text=True, timeout=120)
        assert p.returncode == 2, (args, p.stdout, p.stderr)
        assert "Traceback" not in p.stderr
        lines = p.stderr.strip().splitlines()
        assert lines == ["--dask: --dask needs the cluster extra: "
                         "pip install 'amdmm-smt[cluster]'"], (args, p.stderr)


def _ppid(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


def _fork_server(pid: int) -> bool:
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        return b"multiprocessing.forkserver" in f.read()


def _dask_worker(p: int, w: int) -> bool:
    """`w` is a Dask worker of the command `p`: started by one of the command's nannies,
    spawned (its parent is the command) or forked by the command's fork server (issue 20
    item 4: its parent is a child of the command running multiprocessing's fork server)."""
    parent = _ppid(w)
    if parent == p:
        return not _fork_server(w)
    return _ppid(parent) == p and _fork_server(parent)


def _dask_run(tmp_path):
    """`verify --dask local:1` on two slow tests in a session of its own; (process, the
    test process a Dask worker forked, that Dask worker)."""
    pytest.importorskip("dask.distributed")
    for i in range(2):
        (tmp_path / f"big{i}.yaml").write_text(big_test(10, 20).replace("name: big",
                                                                        f"name: big{i}"))
    p = subprocess.Popen([sys.executable, "-m", "amdmm_smt.cli", "verify", "--timeout", "120",
                          "--dask", "local:1", str(tmp_path)], cwd=ROOT, text=True,
                         start_new_session=True, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    end = time.monotonic() + 90
    while time.monotonic() < end:
        for d in _descendants(p.pid):
            try:
                if _ppid(d) != p.pid and _dask_worker(p.pid, _ppid(d)):
                    return p, d, _ppid(d)           # forked by a Dask worker process
            except (OSError, IndexError, ValueError):
                pass
        time.sleep(0.2)
    p.kill()
    pytest.fail("no test process started under Dask")


def test_dask_worker_killed_takes_its_test_process_with_it(tmp_path):
    p, test_proc, dask_worker = _dask_run(tmp_path)
    try:
        time.sleep(1)
        os.kill(dask_worker, signal.SIGKILL)
        assert _wait_gone(test_proc, 15)     # before: ran on to --timeout 120, an orphan
    finally:
        _kill([test_proc])
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()


def test_ctrl_c_under_dask_is_quiet_and_leaves_nothing_running(tmp_path):
    p, test_proc, dask_worker = _dask_run(tmp_path)
    everyone = [test_proc, dask_worker] + [d for d in _descendants(p.pid) if _fork_server(d)]
    try:
        time.sleep(1)
        os.killpg(p.pid, signal.SIGINT)       # ^C at a terminal: the whole process group
        out, err = p.communicate(timeout=60)
        assert p.returncode == 130 and "aborted: interrupted" in err, err   # issue 22 item 11
        assert "Traceback" not in err, err
        assert all(_wait_gone(x, 15) for x in everyone)
    finally:
        _kill(everyone)
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()


# --- outputs written atomically -------------------------------------------------------------

def _limited(limit: int):
    """preexec_fn: files may not grow past `limit` bytes (a real write failure, EFBIG, after
    a partial write: as a full disk or a run killed while writing would leave it)."""
    def pre():
        import resource
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return pre


HERD = os.path.join(ROOT, "tests", "herd")


@pytest.mark.parametrize("case", ["junit", "diff-o", "graph", "import-herd"])
def test_outputs_are_written_atomically(tmp_path, case):
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    if case == "junit":
        dest = out_dir / "r.xml"
        args = ["verify", "--no-timing", "--junit", str(dest), *FILES]
    elif case == "diff-o":
        dest = out_dir / "d.json"
        args = ["diff", "--from", "seed", "--to", "upstream-2026", "--format", "json", "-o",
                str(dest), *FILES]
    elif case == "graph":
        dest = out_dir / "w.svg"
        args = ["explain", "--no-timing", "--graph", str(dest), FILES[0]]
    else:
        src = sorted(os.path.join(r, n) for r, _, ns in os.walk(HERD) for n in ns
                     if n.endswith(".litmus"))[0]
        dest = out_dir / (os.path.splitext(os.path.basename(src))[0] + ".yaml")
        args = ["import-herd", "--force", "-o", str(out_dir), src]
    dest.write_text("OLD")
    p = subprocess.run([sys.executable, "-m", "amdmm_smt.cli", *args], cwd=ROOT, text=True,
                       capture_output=True, timeout=120, preexec_fn=_limited(100))
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert "cannot write" in p.stderr and "Traceback" not in p.stderr, p.stderr
    assert dest.read_text() == "OLD"                        # before: the first 100 bytes
    assert sorted(os.listdir(out_dir)) == [dest.name]       # no temporary file left behind
    ok = subprocess.run([sys.executable, "-m", "amdmm_smt.cli", *args], cwd=ROOT, text=True,
                        capture_output=True, timeout=120)  # without the limit: written whole
    assert ok.returncode in (0, 1), ok.stderr
    assert dest.read_text() != "OLD" and sorted(os.listdir(out_dir)) == [dest.name]


# --- issue 22 item 11: what an interruption and an outside kill are called ------------------

def test_ctrl_c_exits_130_not_the_status_of_a_failed_test(tmp_path):
    (tmp_path / "big.yaml").write_text(big_test(10, 20))
    p = subprocess.Popen([sys.executable, "-m", "amdmm_smt.cli", "verify", "--timeout", "300",
                          str(tmp_path)], cwd=ROOT, text=True, start_new_session=True,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    workers = []
    try:
        end = time.monotonic() + 60
        while time.monotonic() < end and not workers:
            workers = [c for c in _children(p.pid) if not _gone(c)]
            time.sleep(0.1)
        assert workers
        time.sleep(0.5)
        os.killpg(p.pid, signal.SIGINT)       # ^C at a terminal: the whole process group
        out, err = p.communicate(timeout=60)
        assert p.returncode == 130, (p.returncode, err)
        assert "aborted: interrupted" in err and "Traceback" not in err, err
        assert all(_wait_gone(w) for w in workers)
    finally:
        _kill(workers)
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()


def test_outside_kill_under_memory_is_not_called_out_of_memory(monkeypatch):
    """A worker killed (SIGKILL) from outside while --memory is set: it said "out of memory";
    it says the worker was killed, not by amdmm-smt and not for --memory."""
    import amdmm_smt.solve as solve
    real = solve.run_test

    def run_test(test, *a, **k):
        if test.file == FILES[1]:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(test, *a, **k)
    monkeypatch.setattr(solve, "run_test", run_test)
    r = CliRunner().invoke(main, ["verify", "--json", "--no-timing", "--memory", "2048",
                                  *FILES[:2]])
    recs = _records(r.output)
    assert r.exit_code == 1, r.output
    lost = [x for x in recs if x["status"] != "pass"]
    assert len(lost) == 1 and lost[0]["file"] == FILES[1], lost
    limit = lost[0]["limit"]
    assert limit.startswith("worker process killed by SIGKILL during "), limit
    assert "out of memory" not in limit and "killed from outside" in limit, limit


# --- issue 22 item 12: a full disk, two writers to one file ---------------------------------

@pytest.fixture
def full_disk(tmp_path):
    """A 16 KiB tmpfs, filled up. Skipped, with the reason, where it cannot be mounted (not
    root, no CAP_SYS_ADMIN, no tmpfs)."""
    import shutil
    mnt = tmp_path / "full"
    mnt.mkdir()
    if not shutil.which("mount"):
        pytest.skip("no mount command to make a small file system")
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", str(mnt)],
                       capture_output=True, text=True)
    if p.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs to fill: {p.stderr.strip() or p.returncode}")
    try:
        (mnt / "old.xml").write_text("<old/>")
        try:
            with open(mnt / "fill", "wb") as f:
                while True:
                    f.write(b"\0" * 4096)
                    f.flush()
        except OSError:
            pass
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def test_full_disk_is_one_line_exit_2_and_leaves_old_files(full_disk):
    f = FILES[0]
    herd = os.path.join(ROOT, "litmus", "herd", "MP+rel-acq.dev.diff-wg.litmus")
    for args, what in (
            (["verify", "--junit", str(full_disk / "old.xml"), f], "--junit"),
            (["diff", "--from", "seed", "--to", "opencl", "-o", str(full_disk / "d.md"), f],
             "--output"),
            (["import-herd", "-o", str(full_disk / "out"), herd], str(full_disk / "out"))):
        p = cli(*args)
        assert p.returncode == 2, (args, p.returncode, p.stderr)
        assert "Traceback" not in p.stderr, p.stderr
        assert any(ln.startswith(what) and "No space left on device" in ln
                   for ln in p.stderr.splitlines()), (args, p.stderr)
    assert (full_disk / "old.xml").read_text() == "<old/>"       # untouched
    left = [os.path.join(r, n) for r, _, ns in os.walk(full_disk) for n in ns]
    assert sorted(left) == [str(full_disk / "fill"), str(full_disk / "old.xml")], left


@pytest.mark.parametrize("fmt", [["--json"], []])
def test_stdout_on_a_full_disk_is_one_line_exit_2(full_disk, fmt):
    with open(full_disk / "out", "w") as out:
        p = subprocess.run([sys.executable, "-m", "amdmm_smt.cli", "verify", *fmt,
                            CLASSIC], stdout=out, stderr=subprocess.PIPE, text=True,
                           cwd=ROOT, timeout=300)
    assert p.returncode == 2, p.stderr       # before: a traceback (--json), or exit 120
    assert "Traceback" not in p.stderr and "Exception ignored" not in p.stderr, p.stderr
    assert "amdmm-smt: cannot write the output (stdout): No space left on device" in p.stderr


def test_two_writers_to_one_file_leave_one_whole_file(tmp_path):
    """Two runs writing the same --junit file at once: the file is one whole report (the
    last rename wins), never an interleaving, and no temporary file is left."""
    out = tmp_path / "j.xml"
    import xml.etree.ElementTree as ET
    procs = [subprocess.Popen([sys.executable, "-m", "amdmm_smt.cli", "verify", "--junit",
                               str(out), *([FILES[0]] if k == 0 else FILES[:3])], cwd=ROOT,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
             for k in range(2)]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    n = len(ET.parse(out).getroot().findall(".//testcase"))
    assert n in (1, 3), n
    assert os.listdir(tmp_path) == ["j.xml"]


def test_a_reader_that_goes_away_is_exit_141_not_a_failure():
    """`verify | head` (noticed at the last stop: it exited 1, a failing test's status, from
    click's and rich's own broken-pipe handling): the output stops, exit 141 (128 + SIGPIPE),
    no traceback, for the table, --json and herd's format. The reader closes the pipe before
    anything is written, so every write meets the closed pipe (how much a pipe holds before
    a write fails differs between kernels)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    mp = os.path.join(root, "litmus", "classic", "MP+rel-acq.agent.diff-wg.yaml")
    for extra in ([], ["--json"], ["--format", "herd"]):
        p = subprocess.Popen([sys.executable, "-m", "amdmm_smt.cli", "verify", *extra, mp],
                             cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        p.stdout.close()
        err = p.stderr.read().decode()
        assert p.wait(timeout=120) == 141, (extra, err)
        assert "Traceback" not in err and "Error" not in err, err
