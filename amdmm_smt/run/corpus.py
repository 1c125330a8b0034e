"""Running a corpus: every test of a batch in worker processes under the limits (run/pool.py)
or on a Dask cluster (run/cluster.py), results in input order so output never depends on --jobs
or --dask; and the progress shown while it runs."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Callable, Optional

from ..ir import Test
from .collect import Run, collect, qualify_duplicates
from .pool import Task, run_tasks
from ..report import OUTCOME_LIMIT


def run_all(tests: list[Test], model_name: Optional[str], timeout: float, jobs: int = 1,
            tick: Optional[Callable[[Test], None]] = None, memory_mb: Optional[int] = None,
            engine: str = "smt", decide_only: bool = False,
            dask: Optional[str] = None) -> list[Run]:
    """Run parsed tests, each in a worker process under --timeout / --memory
    (amdmm_smt/run/pool.py), or on a Dask cluster; results in input order, so output never
    depends on --jobs or --dask."""
    tasks = [Task(i, None, t, model_name, timeout, memory_mb, engine, decide_only)
             for i, t in enumerate(tests)]
    done = (lambda task, o: tick(task.test)) if tick else None
    if dask:
        from .cluster import run_tasks_dask
        outs = run_tasks_dask(tasks, dask, done)
    else:
        outs = run_tasks(tasks, jobs, done)
    return [(t, r, e) for t, (_, r, e) in zip(tests, outs)]


def run_models(tests: list[Test], model_names: list, timeout: float, jobs: int = 1,
               tick: Optional[Callable[[Test], None]] = None,
               dask: Optional[str] = None, memory_mb: Optional[int] = None) -> list[list[Run]]:
    """run_all for each model in turn, as one batch of work (one pool, one cluster)."""
    tasks = [Task(k * len(tests) + i, None, t, m, timeout, memory_mb)
             for k, m in enumerate(model_names) for i, t in enumerate(tests)]
    done = (lambda task, o: tick(task.test)) if tick else None
    if dask:
        from .cluster import run_tasks_dask
        outs = run_tasks_dask(tasks, dask, done)
    else:
        outs = run_tasks(tasks, jobs, done)
    n = len(tests)
    return [[(t, r, e) for t, (_, r, e) in zip(tests, outs[k * n:(k + 1) * n])]
            for k in range(len(model_names))]


@dataclass
class _Named:
    """A name standing for a test that did not parse (progress)."""
    name: str


def run_files(paths, model_name: Optional[str], timeout: float, jobs: int = 1,
              tick: Optional[Callable] = None, memory_mb: Optional[int] = None,
              engine: str = "smt", decide_only: bool = False,
              dask: Optional[str] = None,
              unroll: Optional[int] = None,
              collected: Optional[tuple] = None,
              outcome_limit: int = OUTCOME_LIMIT) -> tuple[list[Run], list[tuple[str, str]]]:
    """Collect the files under `paths` (or take `collected`, what `collect(paths)` gave the
    caller), parse and run each in a worker (parsing is spread over the workers too), then
    qualify duplicate names as `load` does: the same runs and errors as `load` followed by
    `run_all`, in the same order."""
    files, errors = collected if collected is not None else collect(paths)
    errors = list(errors)
    tasks = [Task(i, f, None, model_name, timeout, memory_mb, engine, decide_only,
                  unroll=unroll, outcome_limit=outcome_limit) for i, f in enumerate(files)]

    def done(task, o):
        if tick:
            tick(o[0] if o[0] is not None else _Named(os.path.basename(task.file)))
    if dask:
        from .cluster import run_tasks_dask
        outs = run_tasks_dask(tasks, dask, done)
    else:
        outs = run_tasks(tasks, jobs, done)
    runs: list[Run] = []
    for f, (t, r, e) in zip(files, outs):
        if t is None:
            errors.append((f, e))
            continue
        if r is not None and r.test is not t:
            r.test = t
        runs.append((t, r, e))
    qualify_duplicates([t for t, _, _ in runs])
    return runs, errors


def progress_printer(total: int, quiet: bool):
    """A rich progress bar on a terminal, plain `[i/n] name` lines otherwise (when > 5)."""
    if quiet or total <= 5:
        return None, None
    from rich.console import Console
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                               TimeElapsedColumn)
    err = Console(stderr=True, highlight=False, emoji=False)
    if sys.stderr.isatty():
        p = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                     TimeElapsedColumn(), console=err, transient=True)
        task = p.add_task("verifying", total=total)

        def tick(t):
            p.update(task, description=f"done {t.name}")
            p.advance(task)
        return p, tick
    count = [0]
    step = max(1, total // 10)

    def tick_plain(t):   # not a terminal (CI logs): about ten lines per run
        count[0] += 1
        if count[0] % step == 0 or count[0] == total:
            err.print(f"[{count[0]}/{total}] done", markup=False)
    return None, tick_plain
