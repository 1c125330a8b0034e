"""The `amdmm-smt` command. Exit status (docs/litmus-format.md): 0 every expectation holds,
1 some expectation fails or could not be decided, 2 malformed input, a bad option or a missing
path (always one line, never a traceback)."""

from __future__ import annotations

import math
import os
import sys

import click
from rich.console import Console

from typing import Optional

from . import __version__
from .errors import LitmusError
from .model import get_model, list_models
from .report import (MAX_OUTCOMES, error_record, print_json, print_table, result_record,
                     summary)
from .runner import load, progress_printer, run_all


def _fail2(msg: str) -> None:
    Console(stderr=True, highlight=False, emoji=False).print(msg, markup=False, soft_wrap=True)
    sys.exit(2)


class _Group(click.Group):
    """Usage errors (a bad option value, a missing argument) as one line on stderr, exit 2,
    like every other error of the tool (click's default is a three-line usage block)."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.exceptions.NoArgsIsHelpError as e:
            e.show()
            sys.exit(e.exit_code)
        except click.UsageError as e:
            where = e.ctx.command_path if e.ctx is not None else "amdmm-smt"
            _fail2(f"{where}: {_show(e.format_message())} (see --help)")
        except click.ClickException as e:
            _fail2(f"amdmm-smt: {_show(e.format_message())}")
        except click.exceptions.Abort:
            Console(stderr=True).print("aborted", markup=False)
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) else 0)


def _show(text: str) -> str:
    from .parse import show
    return show(text, 300)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="amdmm-smt")
def main() -> None:
    """Exhaustive litmus verification of the AMDGPU memory model."""


class _Seconds(click.ParamType):
    """A finite number of seconds in a sane range (inf would overflow the solver's
    millisecond timeout; nan compares false with everything and would act as no time)."""
    name = "seconds"
    LOW, HIGH = 0.01, 1e6

    def convert(self, value, param, ctx):
        try:
            v = float(value)
        except (TypeError, ValueError):
            self.fail(f"'{_show(str(value))}' is not a number of seconds", param, ctx)
        if not math.isfinite(v) or not self.LOW <= v <= self.HIGH:
            self.fail(f"{_show(str(value))} is not a number of seconds from {self.LOW:g} to "
                      f"{self.HIGH:g}", param, ctx)
        return v


def _writable(option: str, path: Optional[str]) -> None:
    """An output file's directory must exist before any test runs (exit 2, one line)."""
    if path is None or path == "-":
        return
    d = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        _fail2(f"{option} {_show(path)}: is a directory, not a file")
    if not os.path.isdir(d):
        _fail2(f"{option} {_show(path)}: directory '{_show(d)}' does not exist")
    if not os.access(d, os.W_OK):
        _fail2(f"{option} {_show(path)}: directory '{_show(d)}' is not writable")


def _write(option: str, path: str, text: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        _fail2(f"{option} {_show(path)}: cannot write: {e.strerror}")


_timeout = click.option("--timeout", default=600.0, show_default=True, type=_Seconds(),
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
@click.option("--quiet", "-q", is_flag=True,
              help="Print only the summary, the tests that did not pass, warnings and errors.")
@click.option("--max-outcomes", default=MAX_OUTCOMES, show_default=True,
              type=click.IntRange(min=0),
              help="Outcomes printed per test in the table (0: all). --json lists all.")
def verify(paths, model_name, as_json, junit_path, timeout, memory_mb, jobs, no_timing, engine,
           quiet, max_outcomes):
    """Verify litmus tests (files or directories) and print every allowed outcome."""
    console = Console(highlight=False, emoji=False)
    err = Console(stderr=True, highlight=False, emoji=False)
    try:
        get_model(model_name)
    except LitmusError as e:
        _fail2(str(e))
    _writable("--junit", junit_path)
    batch = load(paths)
    bar, tick = progress_printer(len(batch.tests), quiet=as_json or quiet)
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
            print_table(results, [], console, timing=not no_timing, max_outcomes=max_outcomes,
                        quiet=quiet)
        console.print(summary(results, errors), markup=False)
    if junit_path:
        from .junit import write_junit
        try:
            write_junit(junit_path, "amdmm-smt", runs, batch.errors)
        except OSError as e:
            _fail2(f"--junit {_show(junit_path)}: cannot write: {e.strerror}")
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

    A test that names its own `model:` is run under --from and --to like every other test
    (the two versions are what is compared); the report lists such tests. A test that cannot
    be run (a feature not encoded yet, a bad model) is an error row of the report.

    Exit 0 when nothing changed, 1 when some outcome or verdict changed, 2 on bad input
    (including an error row)."""
    from .diff import diff_results, to_html, to_json, to_markdown, to_text
    try:
        a, b = get_model(model_a), get_model(model_b)
    except LitmusError as e:
        _fail2(str(e))
    _writable("--output", output)
    batch = load(paths)
    bar, tick = progress_printer(2 * len(batch.tests), quiet=False)
    if bar:
        bar.start()
    try:
        ra = run_all(batch.tests, a.file or a.name, timeout, jobs, tick)
        rb = run_all(batch.tests, b.file or b.name, timeout, jobs, tick)
    finally:
        if bar:
            bar.stop()
    diffs = diff_results(ra, rb, batch.errors)
    render = {"markdown": to_markdown, "html": to_html, "json": to_json, "text": to_text}[fmt]
    text = render(diffs, a, b)
    if output:
        _write("--output", output, text)
    else:
        sys.stdout.write(text)
    for d in diffs:
        if d.error:
            Console(stderr=True, emoji=False).print(d.error, markup=False, soft_wrap=True)
    if any(d.error for d in diffs):
        sys.exit(2)
    sys.exit(1 if any(d.changed for d in diffs) else 0)


@main.command()
def models():
    """List the shipped model versions and the options each sets differently from the
    defaults."""
    console = Console(highlight=False, emoji=False)
    try:
        ms = list_models()
    except LitmusError as e:
        _fail2(str(e))
    for m in ms:
        console.print(f"{m.name}: {m.description}", markup=False, soft_wrap=True)
        console.print(f"    options: {m.describe_options()}", markup=False, soft_wrap=True)


@main.command("import-herd")
@click.argument("paths", nargs=-1, required=True)
@click.option("--output", "-o", "out_dir", required=True, type=click.Path(file_okay=False),
              help="Directory for the YAML tests (created if missing).")
@click.option("--force", is_flag=True, help="Overwrite existing DIR/<stem>.yaml files.")
def import_herd(paths, out_dir, force):
    """Convert herd / Dartagnan C11 / OpenCL .litmus tests (files or directories) into the
    YAML format, one DIR/<stem>.yaml per input (docs/herd-import.md).

    Nothing is written unless every input converts; an existing output file is an error
    unless --force. Exit 0 on success, 2 on any error (one `FILE:LINE: problem` line each)."""
    import os
    from .herd import import_text, read_litmus
    files, errors = [], []
    for p in paths:
        if os.path.isdir(p):
            found = sorted(os.path.join(r, n) for r, _, ns in os.walk(p) for n in ns
                           if n.endswith(".litmus"))
            if not found:
                errors.append(f"{p}: no *.litmus files in this directory")
            files += found
        elif os.path.isfile(p):
            files.append(p)
        else:
            errors.append(f"{p}: no such file or directory")
    outputs: dict[str, tuple[str, str]] = {}
    for f in dict.fromkeys(files):
        stem = os.path.splitext(os.path.basename(f))[0]
        dest = os.path.join(out_dir, stem + ".yaml")
        try:
            imp, _ = import_text(read_litmus(f), f)
        except LitmusError as e:
            errors.append(str(e))
            continue
        except Exception as e:  # never a traceback
            errors.append(f"{f}: internal error while importing: {type(e).__name__}: {e}")
            continue
        if dest in outputs:
            errors.append(f"{f}: writes {dest}, as {outputs[dest][0]} does (same file stem)")
            continue
        if os.path.exists(dest) and not force:
            errors.append(f"{dest}: exists; not overwritten (use --force)")
            continue
        outputs[dest] = (f, imp.yaml)
    if errors:
        _fail2("\n".join(errors))
    try:
        os.makedirs(out_dir, exist_ok=True)
        for dest, (_, text) in sorted(outputs.items()):
            with open(dest, "w", encoding="utf-8") as fh:
                fh.write(text)
    except OSError as e:
        _fail2(f"{e.filename or out_dir}: cannot write: {e.strerror}")
    console = Console(highlight=False, emoji=False)
    for dest, (src, _) in sorted(outputs.items()):
        console.print(f"{src} -> {dest}", markup=False, soft_wrap=True)


if __name__ == "__main__":  # pragma: no cover
    main()
