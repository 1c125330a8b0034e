"""`verify --dask ADDRESS`: run tests on a Dask distributed cluster (issue 13 item 5).

The parent reads every file and sends its bytes (workers on other hosts need not share the
file system), in chunks of a few tests, and the models named by `--model` (or `diff`'s two),
parsed once here and sent once to every worker (a model file need not exist on the workers); on the worker a chunk runs through the same
`pool.run_tasks` as a local run (each test in a forked process killed past --timeout or
--memory), so results, limits and output are the same as a local run. `--dask local` starts a
`LocalCluster` of one single-threaded worker process per core (`local:N`: N workers).
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Callable, Optional

from ..errors import LitmusError
from .pool import Outcome, Task, run_tasks

CHUNKS_PER_WORKER = 4      # enough chunks to balance uneven tests, few enough to batch cheaply


def _run_chunk(chunk: list[Task], models: Optional[dict] = None) -> list[tuple[int, Outcome]]:
    """On a Dask worker: run the chunk's tests, one at a time, in a forked process, with the
    models the parent loaded (sent once to every worker, not read from its disk)."""
    if models:
        from ..model import use_models
        use_models(models)
    local = [replace(t, index=i) for i, t in enumerate(chunk)]
    outs = run_tasks(local, 1)
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


def _client(address: str):
    distributed = _import_dask()
    if address == "local" or address.startswith("local:"):
        n = os.cpu_count() or 1
        if address != "local":
            try:
                n = int(address[6:])
                assert n >= 1
            except (ValueError, AssertionError):
                raise LitmusError(f"--dask {address}: expected local or local:N with N >= 1",
                                  "--dask") from None
        import signal
        import threading
        # the worker processes start with ^C ignored (inherited across their exec): ^C at a
        # terminal reaches the whole process group, and the parent alone stops the run (a
        # worker would print its own KeyboardInterrupt tracebacks, issue 22 item 3)
        main = threading.current_thread() is threading.main_thread()
        old = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
        try:
            cluster = distributed.LocalCluster(n_workers=n, threads_per_worker=1,
                                               processes=True, dashboard_address=None)
        finally:
            if main:
                signal.signal(signal.SIGINT, old)
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
    client, cluster = _client(address)     # first: one line if dask is missing or unreachable
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
        size = max(1, -(-len(tasks) // (nworkers * CHUNKS_PER_WORKER)))
        chunks = [tasks[i:i + size] for i in range(0, len(tasks), size)]
        models = _models(tasks)
        sent = client.scatter(models, broadcast=True) if models else None
        futures = [client.submit(_run_chunk, c, sent, pure=False) for c in chunks]
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
