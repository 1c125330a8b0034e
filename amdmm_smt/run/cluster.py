"""`verify --dask ADDRESS`: run tests on a Dask distributed cluster (issue 13 item 5).

The parent reads every file and sends its bytes (workers on other hosts need not share the
file system), in chunks of a few tests; on the worker a chunk runs through the same
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


def _run_chunk(chunk: list[Task]) -> list[tuple[int, Outcome]]:
    """On a Dask worker: run the chunk's tests, one at a time, in a forked process."""
    local = [replace(t, index=i) for i, t in enumerate(chunk)]
    outs = run_tasks(local, 1)
    return [(t.index, o) for t, o in zip(chunk, outs)]


def _client(address: str):
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise LitmusError("--dask needs dask.distributed: pip install 'amdmm-smt[cluster]'",
                          "--dask") from None
    if address == "local" or address.startswith("local:"):
        n = os.cpu_count() or 1
        if address != "local":
            try:
                n = int(address[6:])
                assert n >= 1
            except (ValueError, AssertionError):
                raise LitmusError(f"--dask {address}: expected local or local:N with N >= 1",
                                  "--dask") from None
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        return Client(cluster), cluster
    try:
        return Client(address, timeout=30), None
    except (OSError, ValueError, TimeoutError) as e:
        raise LitmusError(f"cannot connect to the Dask scheduler at {address}: {e}",
                          "--dask") from None


def run_tasks_dask(tasks: list[Task], address: str,
                   done: Optional[Callable[[Task, Outcome], None]] = None) -> list[Outcome]:
    from dask.distributed import as_completed
    for t in tasks:
        if t.file is not None and t.data is None:
            try:
                with open(t.file, "rb") as f:
                    t.data = f.read()
            except OSError:
                pass      # the worker reports it as parse_one does
    client, cluster = _client(address)
    try:
        nworkers = max(1, len(client.scheduler_info().get("workers", {})) or 1)
        size = max(1, -(-len(tasks) // (nworkers * CHUNKS_PER_WORKER)))
        chunks = [tasks[i:i + size] for i in range(0, len(tasks), size)]
        futures = [client.submit(_run_chunk, c, pure=False) for c in chunks]
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
