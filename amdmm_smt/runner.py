"""Running many tests: collect files, parse, reject duplicate names, run (optionally in
parallel processes) and return results in input order, so output never depends on --jobs."""

from __future__ import annotations

import os
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Optional

from .errors import LitmusError
from .ir import Test
from .model import Model, get_model
from .parse import parse_file
from .outcomes import Result
from .reference import run_reference
from .solve import run_test


def collect(paths) -> tuple[list[str], list[tuple[str, str]]]:
    """Files named, and `*.yaml` / `*.yml` under directories (recursively), sorted."""
    files, errors = [], []
    for p in paths:
        if os.path.isdir(p):
            found = []
            for root, dirs, names in os.walk(p):
                dirs.sort()
                found += [os.path.join(root, n) for n in names if n.endswith((".yaml", ".yml"))]
            if not found:
                errors.append((p, f"{p}: no *.yaml or *.yml litmus files in this directory"))
            files += sorted(found)
        elif os.path.isfile(p):
            files.append(p)
        else:
            errors.append((p, f"{p}: no such file or directory"))
    seen, out = set(), []
    for f in files:
        if f not in seen:
            seen.add(f)
            out.append(f)
    return out, errors


@dataclass
class Batch:
    tests: list[Test] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)   # (file, one-line message)


def load(paths) -> Batch:
    files, errors = collect(paths)
    b = Batch(errors=errors)
    names: dict[str, str] = {}
    for f in files:
        try:
            t = parse_file(f)
        except LitmusError as e:
            b.errors.append((f, str(e)))
            continue
        except Exception as e:  # never a traceback
            b.errors.append((f, f"{f}: internal error while parsing: {type(e).__name__}: {e}"))
            continue
        if t.name in names:
            b.errors.append((f, f"{f}:{t.line}: duplicate test name '{t.name}' (also in "
                                f"{names[t.name]})"))
            continue
        names[t.name] = f
        b.tests.append(t)
    return b


def model_for(t: Test, forced: Optional[str]) -> Model:
    """--model wins; else the test's own `model:`; else the default."""
    if forced:
        return get_model(forced)
    try:
        return get_model(t.model)
    except LitmusError as e:
        raise LitmusError(e.message, t.file, t.model_line) from None


def _one(args) -> tuple[Optional[Result], Optional[str]]:
    t, model_name, timeout, memory_mb, engine = args
    try:
        if engine == "reference":
            return run_reference(t, model_for(t, model_name)), None
        return run_test(t, model_for(t, model_name), timeout=timeout, memory_mb=memory_mb), None
    except LitmusError as e:
        return None, str(e)
    except Exception as e:  # never a traceback: report and fail the run
        return None, f"{t.file}: internal error in test '{t.name}': {type(e).__name__}: {e}"


def run_all(tests: list[Test], model_name: Optional[str], timeout: float, jobs: int = 1,
            tick: Optional[Callable[[Test], None]] = None, memory_mb: Optional[int] = None,
            engine: str = "smt") -> list[tuple[Test, Optional[Result], Optional[str]]]:
    work = [(t, model_name, timeout, memory_mb, engine) for t in tests]
    out = []
    if jobs <= 1 or len(tests) <= 1:
        for w in work:
            r, e = _one(w)
            out.append((w[0], r, e))
            if tick:
                tick(w[0])
        return out
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for w, (r, e) in zip(work, pool.map(_one, work)):
            out.append((w[0], r, e))
            if tick:
                tick(w[0])
    return out


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
