"""Running many tests: collect files, parse, reject duplicate names, run (optionally in
parallel processes) and return results in input order, so output never depends on --jobs."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Callable, Optional

from .errors import LitmusError
from .ir import Test
from .model import Model, get_model
from .herd import load_litmus
from .parse import parse_file


LITMUS_SUFFIXES = (".yaml", ".yml", ".litmus")   # .litmus: herd / Dartagnan, imported on the fly (herd.py)


def _is_litmus_name(name: str) -> bool:
    return name.lower().endswith(LITMUS_SUFFIXES)      # *.YAML too


def _file_problem(path: str) -> Optional[str]:
    """Why `path` cannot be read as a litmus file (None when it can). Only regular files are
    opened: a FIFO or a device would block or never end."""
    import errno
    import stat
    try:
        st = os.stat(path)
    except OSError as e:
        if e.errno == errno.ELOOP:
            return f"{path}: symbolic link loop"
        if os.path.islink(path):
            return f"{path}: broken symbolic link (its target does not exist)"
        return f"{path}: {e.strerror.lower() if e.strerror else 'cannot read'}"
    if stat.S_ISDIR(st.st_mode):
        return None
    if not stat.S_ISREG(st.st_mode):
        kind = ("a FIFO" if stat.S_ISFIFO(st.st_mode) else "a socket" if stat.S_ISSOCK(
            st.st_mode) else "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(
            st.st_mode) else "not a regular file")
        return f"{path}: {kind}, not a litmus file (only regular files are read)"
    if not os.access(path, os.R_OK):
        return f"{path}: cannot read: permission denied"
    return None


def collect(paths) -> tuple[list[str], list[tuple[str, str]]]:
    """Files named, and `*.yaml` / `*.yml` (any case) under directories (recursively, through
    symbolic links to directories), sorted. Nothing is skipped silently: an unreadable
    directory, a special file, a broken or looping link, and a directory reached twice through
    links (a loop) are reported as errors."""
    files, errors = [], []
    for p in paths:
        problem = _file_problem(p)
        if problem and not os.path.lexists(p):
            errors.append((p, f"{p}: no such file or directory"))
        elif problem:
            errors.append((p, problem))
        elif os.path.isdir(p):
            found = _walk(p, errors)
            if not found and not any(f == p or f.startswith(p) for f, _ in errors):
                errors.append((p, f"{p}: no *.yaml, *.yml or *.litmus files in this directory"))
            files += found
        else:
            files.append(p)
    seen, out = set(), []
    for f in files:
        if f not in seen:
            seen.add(f)
            out.append(f)
    return out, errors


def _walk(top: str, errors: list) -> list[str]:
    found: list[str] = []
    visited = {os.path.realpath(top)}

    def onerror(e: OSError) -> None:
        errors.append((e.filename or top, f"{e.filename or top}: cannot read directory: "
                                          f"{(e.strerror or 'error').lower()}"))

    for root, dirs, names in os.walk(top, onerror=onerror, followlinks=True):
        keep = []
        for d in sorted(dirs):
            full = os.path.join(root, d)
            real = os.path.realpath(full)
            if os.path.islink(full) and not os.path.exists(full):
                errors.append((full, f"{full}: broken symbolic link"))
            elif real in visited:
                errors.append((full, f"{full}: symbolic link to a directory already searched "
                                     f"({real}); not followed again"))
            else:
                visited.add(real)
                keep.append(d)
        dirs[:] = keep
        for n in sorted(names):
            full = os.path.join(root, n)
            if not _is_litmus_name(n):
                continue
            problem = _file_problem(full)
            if problem:
                errors.append((full, problem))
            elif os.path.isdir(full):    # a directory named *.yaml: searched like any other
                continue
            else:
                found.append(full)
    return sorted(found)


@dataclass
class Batch:
    tests: list[Test] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)   # (file, one-line message)


def parse_one(f: str, data: Optional[bytes] = None) -> tuple[Optional[Test], Optional[str]]:
    """Parse one file (or its bytes): (test, None) or (None, one-line error)."""
    try:
        if f.endswith(".litmus"):      # herd / Dartagnan, imported on the fly (herd.py)
            return load_litmus(f), None
        return parse_file(f, data), None
    except LitmusError as e:
        return None, str(e)
    except Exception as e:  # never a traceback
        return None, f"{f}: internal error while parsing: {type(e).__name__}: {e}"


def duplicate_error(t: Test, first_file: str) -> str:
    return f"{t.file}:{t.line}: duplicate test name '{t.name}' (also in {first_file})"


def load(paths) -> Batch:
    files, errors = collect(paths)
    b = Batch(errors=errors)
    names: dict[str, str] = {}
    for f in files:
        t, err = parse_one(f)
        if err:
            b.errors.append((f, err))
            continue
        if t.name in names:
            b.errors.append((f, duplicate_error(t, names[t.name])))
            continue
        names[t.name] = f
        b.tests.append(t)
    return b


def model_for(t: Test, forced: Optional[str]) -> Model:
    """--model wins; else the test's own `model:`; else the default."""
    if forced:
        return get_model(forced)
    name = t.model
    if name and (os.path.sep in name or name.endswith((".yaml", ".yml"))) \
            and not os.path.isabs(name):
        name = os.path.join(os.path.dirname(t.file), name)   # relative to the test file
    try:
        return get_model(name)
    except LitmusError as e:
        from .parse import show
        msg = e.message if e.file in (None, name) and e.line is None else str(e)
        raise LitmusError(f"model '{show(t.model or '')}': {msg}", t.file,
                          t.model_line) from None


Run = tuple  # (Test, Result | None, error | None)


def lint_tests(tests: list[Test], model_name: Optional[str]) -> dict:
    """Static warnings per test file (amdmm_smt/lint.py). A test that cannot be elaborated
    has none here: its error is reported by the run."""
    from .elaborate import elaborate
    from .lint import lint
    out = {}
    for t in tests:
        try:
            out[t.file] = lint(t, elaborate(t, model_for(t, model_name)))
        except LitmusError:
            out[t.file] = []
    return out




def run_all(tests: list[Test], model_name: Optional[str], timeout: float, jobs: int = 1,
            tick: Optional[Callable[[Test], None]] = None, memory_mb: Optional[int] = None,
            engine: str = "smt", decide_only: bool = False,
            dask: Optional[str] = None) -> list[Run]:
    """Run parsed tests, each in a worker process under --timeout / --memory
    (amdmm_smt/pool.py), or on a Dask cluster; results in input order, so output never
    depends on --jobs or --dask."""
    from .pool import Task, run_tasks
    tasks = [Task(i, None, t, model_name, timeout, memory_mb, engine, decide_only)
             for i, t in enumerate(tests)]
    done = (lambda task, o: tick(task.test)) if tick else None
    if dask:
        from .dask_run import run_tasks_dask
        outs = run_tasks_dask(tasks, dask, done)
    else:
        outs = run_tasks(tasks, jobs, done)
    return [(t, r, e) for t, (_, r, e) in zip(tests, outs)]


def run_models(tests: list[Test], model_names: list, timeout: float, jobs: int = 1,
               tick: Optional[Callable[[Test], None]] = None,
               dask: Optional[str] = None) -> list[list[Run]]:
    """run_all for each model in turn, as one batch of work (one pool, one cluster)."""
    from .pool import Task, run_tasks
    tasks = [Task(k * len(tests) + i, None, t, m, timeout, None)
             for k, m in enumerate(model_names) for i, t in enumerate(tests)]
    done = (lambda task, o: tick(task.test)) if tick else None
    if dask:
        from .dask_run import run_tasks_dask
        outs = run_tasks_dask(tasks, dask, done)
    else:
        outs = run_tasks(tasks, jobs, done)
    n = len(tests)
    return [[(t, r, e) for t, (_, r, e) in zip(tests, outs[k * n:(k + 1) * n])]
            for k in range(len(model_names))]


@dataclass
class _Named:
    name: str


def run_files(paths, model_name: Optional[str], timeout: float, jobs: int = 1,
              tick: Optional[Callable] = None, memory_mb: Optional[int] = None,
              engine: str = "smt", decide_only: bool = False,
              dask: Optional[str] = None) -> tuple[list[Run], list[tuple[str, str]]]:
    """Collect the files under `paths`, parse and run each in a worker (parsing is spread
    over the workers too), then reject duplicate names as `load` does: the same runs and
    errors as `load` followed by `run_all`, in the same order."""
    from .pool import Task, run_tasks
    files, errors = collect(paths)
    tasks = [Task(i, f, None, model_name, timeout, memory_mb, engine, decide_only)
             for i, f in enumerate(files)]

    def done(task, o):
        if tick:
            tick(o[0] if o[0] is not None else _Named(os.path.basename(task.file)))
    if dask:
        from .dask_run import run_tasks_dask
        outs = run_tasks_dask(tasks, dask, done)
    else:
        outs = run_tasks(tasks, jobs, done)
    runs: list[Run] = []
    names: dict[str, str] = {}
    for f, (t, r, e) in zip(files, outs):
        if t is None:
            errors.append((f, e))
            continue
        if t.name in names:
            errors.append((f, duplicate_error(t, names[t.name])))
            continue
        names[t.name] = f
        runs.append((t, r, e))
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
