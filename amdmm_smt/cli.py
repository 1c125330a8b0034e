"""The `amdmm-smt` command. Exit status (shared/litmus-format.md): 0 every expectation holds,
1 some expectation fails or could not be decided, 2 malformed input or missing path."""

from __future__ import annotations

import sys

import click
from rich.console import Console

from . import __version__
from .errors import LitmusError
from .model import get_model, list_models
from .report import error_record, print_json, print_table, result_record, summary
from .runner import load, progress_printer, run_all


def _fail2(msg: str) -> None:
    Console(stderr=True, highlight=False, emoji=False).print(msg, markup=False, soft_wrap=True)
    sys.exit(2)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="amdmm-smt")
def main() -> None:
    """Exhaustive litmus verification of the AMDGPU memory model."""


_timeout = click.option("--timeout", default=600.0, show_default=True,
                        type=click.FloatRange(min=0.01),
                        help="Seconds the solver may spend on one test; past it the test is "
                             "reported unknown (a failure).")
_memory = click.option("--memory", "memory_mb", default=None, type=click.IntRange(min=16),
                       help="Solver memory limit in MiB per test; past it the test is "
                            "reported unknown (a failure).")
_jobs = click.option("--jobs", "-j", default=1, show_default=True, type=click.IntRange(min=1),
                     help="Run tests in this many processes (output is the same).")


@main.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--model", "model_name", default=None,
              help="Model version: a name from `amdmm-smt models` or a model file. Overrides a "
                   "test's own `model:`.")
@click.option("--json", "as_json", is_flag=True, help="One JSON record per test on stdout.")
@click.option("--junit", "junit_path", default=None, type=click.Path(dir_okay=False),
              help="Also write a JUnit XML report to this file.")
@_timeout
@_memory
@_jobs
@click.option("--no-timing", is_flag=True, help="Leave run times out (byte-stable output).")
@click.option("--engine", type=click.Choice(["smt", "reference"]), default="smt",
              show_default=True,
              help="smt: the Z3 encoding. reference: the independent explicit enumerator "
                   "(slow; for small tests and as a second opinion).")
def verify(paths, model_name, as_json, junit_path, timeout, memory_mb, jobs, no_timing, engine):
    """Verify litmus tests (files or directories) and print every allowed outcome."""
    console = Console(highlight=False, emoji=False)
    err = Console(stderr=True, highlight=False, emoji=False)
    try:
        get_model(model_name)
    except LitmusError as e:
        _fail2(str(e))
    batch = load(paths)
    bar, tick = progress_printer(len(batch.tests), quiet=as_json)
    if bar:
        bar.start()
    try:
        runs = run_all(batch.tests, model_name, timeout, jobs, tick, memory_mb, engine)
    finally:
        if bar:
            bar.stop()
    results = [r for _, r, e in runs if r is not None]
    errors = sorted(batch.errors + [(t.file, e) for t, _, e in runs if e])
    if as_json:
        records = [result_record(r, timing=not no_timing) for r in results]
        records += [error_record(f, m) for f, m in errors]
        print_json(records, sys.stdout)
    else:
        if results:
            print_table(results, [], console, timing=not no_timing)
        console.print(summary(results, errors), markup=False)
    if junit_path:
        from .junit import write_junit
        write_junit(junit_path, "amdmm-smt", runs, batch.errors)
    for _, m in errors:
        err.print(m, markup=False, soft_wrap=True)
    if errors:
        sys.exit(2)
    sys.exit(1 if any(r.status != "pass" for r in results) else 0)


@main.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--from", "model_a", required=True, help="The model version to compare from.")
@click.option("--to", "model_b", required=True, help="The model version to compare to.")
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "html", "json"]),
              default="text", show_default=True)
@click.option("--output", "-o", default=None, type=click.Path(dir_okay=False),
              help="Write the report here instead of stdout.")
@_timeout
@_jobs
def diff(paths, model_a, model_b, fmt, output, timeout, jobs):
    """Compare the outcomes two model versions allow on the same tests.

    Exit 0 when nothing changed, 1 when some outcome or verdict changed, 2 on bad input."""
    from .diff import diff_results, summary as dsummary, to_html, to_json, to_markdown
    try:
        a, b = get_model(model_a), get_model(model_b)
    except LitmusError as e:
        _fail2(str(e))
    batch = load(paths)
    if batch.errors:
        for _, m in batch.errors:
            Console(stderr=True, emoji=False).print(m, markup=False, soft_wrap=True)
        sys.exit(2)
    bar, tick = progress_printer(2 * len(batch.tests), quiet=False)
    if bar:
        bar.start()
    try:
        ra = run_all(batch.tests, a.file or a.name, timeout, jobs, tick)
        rb = run_all(batch.tests, b.file or b.name, timeout, jobs, tick)
    finally:
        if bar:
            bar.stop()
    errs = [e for _, _, e in ra + rb if e]
    if errs:
        for m in sorted(set(errs)):
            Console(stderr=True, emoji=False).print(m, markup=False, soft_wrap=True)
        sys.exit(2)
    diffs = diff_results([(x[1], y[1]) for x, y in zip(ra, rb)])
    if fmt == "markdown":
        text = to_markdown(diffs, a.name, b.name)
    elif fmt == "html":
        text = to_html(diffs, a.name, b.name)
    elif fmt == "json":
        text = to_json(diffs, a.name, b.name)
    else:
        text = None
    if text is not None:
        if output:
            with open(output, "w", encoding="utf-8") as f:
                f.write(text)
        else:
            sys.stdout.write(text)
    else:
        _print_diff(diffs, a.name, b.name, dsummary(diffs))
    sys.exit(1 if any(d.changed for d in diffs) else 0)


def _print_diff(diffs, a, b, s) -> None:
    from rich.table import Table
    from .outcomes import format_state
    console = Console(highlight=False, emoji=False)
    table = Table(title=f"outcome diff {a} -> {b}", show_lines=True)
    for col in ("test", f"only {a} allows", f"only {b} allows", "verdict"):
        table.add_column(col)
    for d in diffs:
        if d.changed:
            table.add_row(d.name, "\n".join(format_state(x) for x in d.only_a) or "-",
                          "\n".join(format_state(x) for x in d.only_b) or "-",
                          f"{d.status_a} -> {d.status_b}")
    if any(d.changed for d in diffs):
        console.print(table)
    console.print(f"{s['tests']} tests compared, {s['changed']} changed: {s['newly_allowed']} "
                  f"outcome(s) newly allowed, {s['newly_forbidden']} newly forbidden, "
                  f"{s['verdict_changes']} verdict change(s)", markup=False)


@main.command()
def models():
    """List the model versions shipped in models/."""
    console = Console(highlight=False, emoji=False)
    try:
        ms = list_models()
    except LitmusError as e:
        _fail2(str(e))
    for m in ms:
        console.print(f"{m.name}: {m.description}", markup=False, soft_wrap=True)


if __name__ == "__main__":  # pragma: no cover
    main()
