"""`verify --dask ADDRESS`: run tests on a Dask distributed cluster (issue 13 item 5).

The parent reads every file and sends its bytes (workers on other hosts need not share the
file system), in chunks of a few tests, and the models named by `--model` (or `diff`'s two),
parsed once here and sent once to every worker (a model file need not exist on the workers); on the worker a chunk runs through the same
`pool.run_tasks` as a local run (each test in a forked process killed past --timeout or
--memory), so results, limits and output are the same as a local run. `--dask local` starts a
`LocalCluster` of one single-threaded worker process per core (`local:N`: N workers), each
forked from multiprocessing's fork server once it has imported what a worker needs
(`_fork_server`: why that fork is safe, and what it saves).
"""

from __future__ import annotations

import contextlib
import os
import threading
import uuid
from dataclasses import replace
from typing import Callable, Optional

from ..errors import LitmusError
from .pool import Outcome, Task, run_tasks

CHUNKS_PER_WORKER = 4      # see _chunks


def _chunks(tasks: list, workers: int) -> list[list]:
    """The tasks cut into chunks (one Dask task each) that shrink as the run goes on, as
    guided self-scheduling does: each chunk is 1 / (CHUNKS_PER_WORKER x workers) of what is
    left. Early chunks are large (a chunk's round trip is paid a few times, not per test);
    the last ones hold a test or two, so no worker is left running a long chunk while the
    others have nothing to do. Measured on the corpus (295 tests, 2 workers, the test process
    kept between chunks): the workers stood idle at the end 0.28 s in all (median of 5)
    against 0.58 s with 8 equal chunks, for about 0.15 s more time in tasks."""
    out, i, share = [], 0, max(1, workers) * CHUNKS_PER_WORKER
    while i < len(tasks):
        size = -(-(len(tasks) - i) // share)
        out.append(tasks[i:i + size])
        i += size
    return out


_KEPT: dict = {}         # run id -> this Dask worker's idle test processes, kept between chunks
_KEPT_LOCK = threading.Lock()    # a worker with several threads runs chunks side by side


def _run_chunk(chunk: list[Task], models: Optional[dict] = None,
               run: Optional[str] = None) -> list[tuple[int, Outcome]]:
    """On a Dask worker: run the chunk's tests, one at a time, in a forked process, with the
    models the parent loaded (sent once to every worker, not read from its disk). The
    process is kept for the run's next chunk on this worker (forking one per chunk cost
    about 55 ms of CPU a chunk); only within one run (`run`, an id the command draws): a
    process forked for another run has that run's models. Another run's idle processes are
    stopped here; the last run's stay idle until the next run or until this worker ends
    (they die with it). Without a run id nothing is kept."""
    if models:
        from ..model import use_models
        use_models(models)
    local = [replace(t, index=i) for i, t in enumerate(chunk)]
    if run is None:
        outs = run_tasks(local, 1)
        return [(t.index, o) for t, o in zip(chunk, outs)]
    with _KEPT_LOCK:
        for other in [r for r in _KEPT if r != run]:
            for w in _KEPT.pop(other):
                w.stop()
        kept = _KEPT.setdefault(run, [])
        mine = [kept.pop()] if kept else []
    try:
        outs = run_tasks(local, 1, keep=mine)
    finally:
        with _KEPT_LOCK:
            _KEPT.setdefault(run, []).extend(mine)
    return [(t.index, o) for t, o in zip(chunk, outs)]


CONNECT_TIMEOUT = 10.0     # seconds to reach a scheduler and hear its handshake
_INSTALL = "--dask needs the cluster extra: pip install 'amdmm-smt[cluster]'"


def _import_dask():
    try:
        from dask import distributed
        return distributed
    except ImportError:
        raise LitmusError(_INSTALL, "--dask") from None
    except Exception as e:     # a broken install: still one line
        raise LitmusError(f"{_INSTALL} (importing dask.distributed failed: "
                          f"{type(e).__name__}: {e})", "--dask") from None


def _tcp_endpoint(address: str) -> Optional[tuple[str, int]]:
    """(host, port) of a tcp:// (or scheme-less) address; None for other transports."""
    rest = address
    if "://" in address:
        scheme, rest = address.split("://", 1)
        if scheme != "tcp":
            return None
    host, sep, port = rest.rpartition(":")
    if not sep:
        raise LitmusError(f"{address}: expected tcp://HOST:PORT, HOST:PORT, local or local:N",
                          "--dask")
    host = host.strip("[]")
    try:
        p = int(port.rstrip("/"))
        assert 0 < p < 65536
    except (ValueError, AssertionError):
        raise LitmusError(f"{address}: '{port}' is not a port number", "--dask") from None
    return host or "127.0.0.1", p


def _probe(address: str, timeout: Optional[float] = None) -> None:
    """Before dask's own client (which waits forever on a server that never answers and
    reads a garbage length as a frame size, issue 22 item 3): connect with a timeout and read
    the scheduler's handshake, which it sends first: an 8-byte length, then frames naming
    `pickle-protocol`. Anything else is a one-line error."""
    import socket
    import struct
    timeout = CONNECT_TIMEOUT if timeout is None else timeout
    ep = _tcp_endpoint(address)
    if ep is None:
        return
    where = f"the Dask scheduler at {address}"
    try:
        sock = socket.create_connection(ep, timeout=timeout)
    except socket.timeout:
        raise LitmusError(f"cannot connect to {where}: no answer within {timeout:g} s",
                          "--dask") from None
    except OSError as e:
        raise LitmusError(f"cannot connect to {where}: {e.strerror or e}", "--dask") from None
    try:
        sock.settimeout(timeout)
        head = _read(sock, 8)
        (n,) = struct.unpack("<Q", head)
        if not 0 < n <= 1 << 20:
            raise ValueError("not the Dask protocol")
        body = _read(sock, n)
        if b"pickle-protocol" not in body:
            raise ValueError("not the Dask protocol")
    except socket.timeout:
        raise LitmusError(f"{where} did not answer as a Dask scheduler within {timeout:g} s "
                          "(is another service, such as a web server, at that port?)",
                          "--dask") from None
    except (OSError, ValueError, struct.error) as e:
        why = "it closed the connection" if isinstance(e, EOFError) else (
            "it answered with something that is not the Dask protocol"
            if isinstance(e, (ValueError, struct.error)) else (e.strerror or str(e)))
        raise LitmusError(f"{address} is not a Dask scheduler: {why}", "--dask") from None
    finally:
        sock.close()


def _read(sock, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        got = sock.recv(n - len(buf))
        if not got:
            raise _Closed()
        buf += got
    return buf


class _Closed(OSError, EOFError):
    pass


LOCAL_CONFIG = {"distributed.worker.multiprocessing-method": "forkserver",
                "distributed.worker.profile.enabled": False,
                "distributed.admin.tick.interval": "200ms"}

# The scheduler of a `--dask local` cluster: no dashboard, and its HTTP server (Dask's
# health and metrics routes, started even without a dashboard) on a free loopback port.
# LocalCluster's `dashboard_address=None` still binds it to 8787, and when 8787 is taken (a
# Jupyter session's Dask dashboard, another run beside this one) Dask moves it and prints a
# four-line UserWarning on the command's stderr.
LOCAL_SCHEDULER = {"dashboard": False, "dashboard_address": "127.0.0.1:0"}


def _fork_server(engine: str) -> bool:
    """Start multiprocessing's fork server for `--dask local`'s workers, with the modules
    they need imported once (dask.distributed, this module, the pool's test modules and Z3);
    False where there is none. Each Dask worker is then forked from it, ready to run, instead
    of a fresh interpreter importing all of that again (`spawn`, dask's default: about 0.9 s
    of CPU per worker for dask.distributed and 0.4 s for amdmm_smt and Z3, paid while the
    command imports dask.distributed itself; issue 20 item 4).

    Why forking is safe here, and `fork` (from the command) would not be: the fork server is
    a fresh interpreter (exec'd, not forked) that only imports modules and then forks on
    request; no thread runs in it (importing these modules starts none:
    tests/test_dask.py checks its thread count), so no lock can be held by a thread that
    does not exist in the child. The command itself runs the scheduler's event loop in a
    thread by then and is never forked. A Dask worker forked from the server forks each test
    process itself (run/pool.py), as a spawned worker did before.

    Started early, before this process imports dask.distributed, so that its imports and
    the server's run side by side; started with ^C ignored, which the workers it forks
    inherit (as a spawned worker inherited it across its exec: the parent alone stops the
    run, issue 22 item 3)."""
    import multiprocessing
    from multiprocessing import forkserver
    from .pool import worker_modules
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return False     # pragma: no cover - not on Linux or macOS
    multiprocessing.get_context("forkserver").set_forkserver_preload(
        ["distributed", __name__, *worker_modules(engine)])
    forkserver.ensure_running()
    return True


def _stop_fork_server() -> None:
    """After the LocalCluster closed: end its fork server now, at once (SIGKILL). It forks
    nothing more for this run, and left alone it would outlive the command by its own
    interpreter's exit (about 0.12 s of wall and CPU on this machine, tearing down
    dask.distributed, Z3 and amdmm_smt), holding the command's stdout open all the while, so
    a caller reading the output to its end (a pipe, a CI log, subprocess.run) waited for it.
    It holds nothing to clean up: its socket file is unlinked here (`_stop`) and its
    temporary directory belongs to this process. A later --dask local in this process
    starts a fresh one (ensure_running), as it would after any fork server died."""
    import signal
    from multiprocessing import forkserver
    fs = getattr(forkserver, "_forkserver", None)
    pid = getattr(fs, "_forkserver_pid", None)
    if pid is None:
        return
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        return
    stop = getattr(fs, "_stop", None)     # reaps it and forgets it (CPython 3.8 on)
    if stop is not None:
        try:
            stop()
        except OSError:
            pass


@contextlib.contextmanager
def _no_sigint():
    """^C ignored while processes that inherit it start (the parent alone stops a run)."""
    import signal
    import threading
    main = threading.current_thread() is threading.main_thread()
    old = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
    try:
        yield
    finally:
        if main:
            signal.signal(signal.SIGINT, old)


START_POLL = 0.005     # seconds: see _quick_start_poll


def _quick_start_poll() -> None:
    """A LocalCluster's nanny learns that its worker process has started by polling a queue,
    every 50 ms by default (`distributed.nanny.WorkerProcess._init_msg_interval`, a class
    attribute, not a configuration key): a worker forked ready from the fork server starts in
    about 70 ms, and the poll added up to 50 ms more (25 ms on average) before the run could
    begin. Polled every START_POLL seconds instead, for those 70 ms only. Nothing when a
    later dask no longer has the attribute."""
    try:
        from distributed.nanny import WorkerProcess
    except ImportError:     # pragma: no cover - dask.distributed imported just before
        return
    if isinstance(getattr(WorkerProcess, "_init_msg_interval", None), (int, float)):
        WorkerProcess._init_msg_interval = min(WorkerProcess._init_msg_interval, START_POLL)


def _local_workers(address: str) -> Optional[int]:
    """N of `local` / `local:N` (local: one per core); None for a scheduler's address."""
    if address != "local" and not address.startswith("local:"):
        return None
    if address == "local":
        return os.cpu_count() or 1
    try:
        n = int(address[6:])
        assert n >= 1
    except (ValueError, AssertionError):
        raise LitmusError(f"--dask {address}: expected local or local:N with N >= 1",
                          "--dask") from None
    return n


def prestart(address: Optional[str], engine: str = "smt") -> bool:
    """For `--dask local`: start the fork server now, as the command starts, so that its
    imports run while the command reads its files and imports dask.distributed (the
    cluster's start waits for it). Nothing for other addresses, a malformed one (reported
    later, as ever) or when dask is not installed (said later, in one line); True when the
    fork server runs."""
    if not address:
        return False
    try:
        if _local_workers(address) is None:
            return False
    except LitmusError:
        return False
    import importlib.util
    try:
        if importlib.util.find_spec("distributed") is None:
            return False
    except (ImportError, ValueError):
        return False
    with _no_sigint():
        return _fork_server(engine)


def _client(address: str, stack, engine: str = "smt"):
    """(client, cluster or None); what must stay set while the cluster runs goes on `stack`
    (a contextlib.ExitStack closed after the cluster)."""
    n = _local_workers(address)
    forked = prestart(address, engine)     # unless the command did already (no-op then)
    distributed = _import_dask()
    if n is not None:
        import dask
        # For the whole run (a worker that dies is restarted by its nanny the same way; the
        # nannies hand this configuration to their workers). The workers' statistical
        # profiler samples the running task's stack every 10 ms for the dashboard, which this
        # cluster does not have: it would only cost CPU (about 1.5 % of a core per worker).
        # Every server (the scheduler, each nanny, each worker) measures its event loop's
        # responsiveness with a callback every 20 ms by default, only to log a warning when
        # the loop was blocked over 3 s (`distributed.admin.tick`): every 200 ms here, which
        # still warns as before, and an idle cluster costs 2-3 % of a core instead of 11 %.
        config = dict(LOCAL_CONFIG)
        if not forked:
            del config["distributed.worker.multiprocessing-method"]
        stack.enter_context(dask.config.set(config))
        # the worker processes start with ^C ignored (inherited from the fork server, or
        # across their exec when spawned): ^C at a terminal reaches the whole process group,
        # and the parent alone stops the run (a worker would print its own
        # KeyboardInterrupt tracebacks, issue 22 item 3)
        _quick_start_poll()
        with _no_sigint():
            cluster = distributed.LocalCluster(n_workers=n, threads_per_worker=1,
                                               processes=True, dashboard_address=None,
                                               scheduler_kwargs=dict(LOCAL_SCHEDULER))
        return distributed.Client(cluster), cluster
    _probe(address)
    try:
        return distributed.Client(address, timeout=CONNECT_TIMEOUT), None
    except Exception as e:  # OSError, TimeoutError, ValueError, MemoryError ...: one line
        raise LitmusError(f"cannot connect to the Dask scheduler at {address}: "
                          f"{type(e).__name__}: {e}", "--dask") from None


def _models(tasks: list[Task]) -> dict:
    """The models the tasks name (--model, diff's two), loaded here once: a bad one is the
    parent's error, before any test runs, as in a local run (which loads them the same way)."""
    from ..model import get_model
    names = sorted({t.model_name for t in tasks if t.model_name})
    return {n: get_model(n) for n in names}


def run_tasks_dask(tasks: list[Task], address: str,
                   done: Optional[Callable[[Task, Outcome], None]] = None) -> list[Outcome]:
    engine = "reference" if any(t.engine == "reference" for t in tasks) else "smt"
    with contextlib.ExitStack() as stack:
        # first: one line if dask is missing or unreachable
        client, cluster = _client(address, stack, engine)
        return _run_on(client, cluster, tasks, done)


def _run_on(client, cluster, tasks: list[Task],
            done: Optional[Callable[[Task, Outcome], None]]) -> list[Outcome]:
    from dask.distributed import as_completed
    for t in tasks:
        if t.file is not None and t.data is None:
            try:
                with open(t.file, "rb") as f:
                    t.data = f.read()
            except OSError:
                pass      # the worker reports it as parse_one does
    try:
        nworkers = max(1, len(client.scheduler_info().get("workers", {})) or 1)
        chunks = _chunks(tasks, nworkers)
        models = _models(tasks)
        sent = client.scatter(models, broadcast=True) if models else None
        run = uuid.uuid4().hex
        futures = [client.submit(_run_chunk, c, sent, run, pure=False) for c in chunks]
        out: list[Optional[Outcome]] = [None] * len(tasks)
        for fut in as_completed(futures):
            for idx, o in fut.result():
                out[idx] = o
                if done:
                    done(tasks[idx], o)
        return out  # type: ignore[return-value]
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
            _stop_fork_server()
