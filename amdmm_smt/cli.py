"""The `amdmm-smt` command. Exit status (shared/litmus-format.md): 0 every expectation holds,
1 some expectation fails or could not be decided, 2 malformed input or missing path."""

from __future__ import annotations

import os
import sys

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from . import __version__
from .errors import LitmusError
from .model import get_model, list_models
from .parse import parse_file
from .report import error_record, print_json, print_table, result_record, summary
from .solve import run_test


def collect(paths: tuple[str, ...]) -> tuple[list[str], list[tuple[str, str]]]:
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


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="amdmm-smt")
def main() -> None:
    """Exhaustive litmus verification of the AMDGPU memory model."""


@main.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--model", "model_name", default=None,
              help="Model version: a name from `amdmm-smt models` or a model file.")
@click.option("--json", "as_json", is_flag=True, help="One JSON record per test on stdout.")
@click.option("--timeout", default=600.0, show_default=True, type=click.FloatRange(min=0.01),
              help="Seconds the solver may spend on one test before it is reported unknown.")
@click.option("--no-timing", is_flag=True, help="Leave run times out (byte-stable output).")
def verify(paths, model_name, as_json, timeout, no_timing):
    """Verify litmus tests (files or directories) and print every allowed outcome."""
    console = Console(stderr=False, highlight=False)
    err = Console(stderr=True, highlight=False)
    files, errors = collect(paths)
    try:
        default_model = get_model(model_name)
    except LitmusError as e:
        err.print(str(e), markup=False)
        sys.exit(2)

    tests, names = [], {}
    for f in files:
        try:
            t = parse_file(f)
        except LitmusError as e:
            errors.append((f, str(e)))
            continue
        except Exception as e:  # never a traceback: report and fail the run
            errors.append((f, f"{f}: internal error while parsing: {type(e).__name__}: {e}"))
            continue
        if t.name in names:
            errors.append((f, f"{f}:{t.line}: duplicate test name '{t.name}' (also in "
                              f"{names[t.name]})"))
            continue
        names[t.name] = f
        tests.append(t)

    results, records = [], []
    progress = None
    if len(tests) > 5 and not as_json and sys.stderr.isatty():
        progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TimeElapsedColumn(), console=err, transient=True)
    elif len(tests) > 5:
        progress = None
    task = None
    if progress:
        progress.start()
        task = progress.add_task("verifying", total=len(tests))
    try:
        for i, t in enumerate(tests):
            if progress:
                progress.update(task, description=f"verifying {t.name}")
            elif len(tests) > 5 and not as_json:
                err.print(f"[{i + 1}/{len(tests)}] {t.name}", markup=False)
            try:
                model = get_model(t.model) if t.model and not model_name else default_model
                results.append(run_test(t, model, timeout=timeout))
            except LitmusError as e:
                errors.append((t.file, str(e)))
            except Exception as e:  # never a traceback: report and fail the run
                errors.append((t.file, f"{t.file}: internal error in test '{t.name}': "
                                       f"{type(e).__name__}: {e}"))
            if progress:
                progress.advance(task)
    finally:
        if progress:
            progress.stop()

    errors.sort()
    if as_json:
        records = [result_record(r, timing=not no_timing) for r in results]
        records += [error_record(f, m) for f, m in errors]
        print_json(records, sys.stdout)
    else:
        if results:
            print_table(results, [], console, timing=not no_timing)
        console.print(summary(results, errors), markup=False)
    for _, m in errors:
        err.print(m, markup=False, soft_wrap=True)
    if errors:
        sys.exit(2)
    if any(r.status != "pass" for r in results):
        sys.exit(1)
    sys.exit(0)


@main.command()
def models():
    """List the model versions shipped in models/."""
    console = Console(highlight=False)
    try:
        ms = list_models()
    except LitmusError as e:
        Console(stderr=True).print(str(e), markup=False)
        sys.exit(2)
    for m in ms:
        console.print(f"{m.name}: {m.description}", markup=False)


if __name__ == "__main__":  # pragma: no cover
    main()
