"""The `amdmm-smt` command. Exit status (docs/litmus-format.md): 0 every expectation holds,
1 some expectation fails or could not be decided, 2 malformed input, a bad option or a missing
path (always one line, never a traceback), 130 interrupted (^C)."""

from __future__ import annotations

import errno
import math
import os
import sys

from typing import Optional

import click

from . import __version__
from .errors import LitmusError

# Start-up (issue 16 item 5): this module imports only click; every command imports what it
# uses (the solver, rich, the herd importer, Dask) when it runs, so `--help` and a per-file
# hook pay for nothing they do not use. benchmarks/startup.py measures it.
EXIT_INTERRUPTED = 130   # ^C; docs/litmus-format.md "Exit status"
from .report import MAX_OUTCOMES, OUTCOME_LIMIT   # the package face only (no table module)


def Console(**kw):
    """A rich console, imported when first printed to; off a terminal a plain one that
    writes the same bytes without importing rich (report/plain.py, start-up: issue 30)."""
    from .report.plain import PlainConsole, plain_ok
    if plain_ok(bool(kw.get("stderr"))):
        return PlainConsole(on_broken_pipe=_reader_gone, **kw)
    from rich.console import Console as RichConsole
    c = RichConsole(**kw)
    c.on_broken_pipe = _reader_gone    # rich's own answer is exit 1, a failing test's status
    return c


def _fail2(msg: str) -> None:
    click.echo(msg, err=True)
    sys.exit(2)


class _Group(click.Group):
    """Usage errors (a bad option value, a missing argument) as one line on stderr, exit 2,
    like every other error of the tool (click's default is a three-line usage block)."""

    def __call__(self, *args, **kw):
        """The command run as a program (`amdmm-smt`, `python3 -m amdmm_smt.cli`): a test
        thread given up on at its hard time limit (run/pool.py run_inline) is not waited
        for, nor torn down under it: the process ends at once, its output flushed."""
        try:
            return super().__call__(*args, **kw)
        except SystemExit as e:
            pool = sys.modules.get("amdmm_smt.run.pool")
            if pool is not None and pool.stray():
                _flush_stdout()
                try:
                    sys.stderr.flush()
                except (OSError, ValueError):
                    pass
                os._exit(e.code if isinstance(e.code, int) else 1)
            raise

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        _safe_streams()
        try:
            self._main(args, prog_name, complete_var, **extra)
        except SystemExit:
            _flush_stdout()       # now, while a failure can still be reported (exit 2)
            if args is None:      # this process's own command line: it ends next
                _freeze_for_exit()
            raise
        except OSError as e:
            if e.errno == errno.EPIPE:
                _broken_pipe(e)
            if e.errno not in _WRITE_ERRNOS:
                raise
            _stdout_failed(e)

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except OSError as e:        # before click's own handling, which exits 1
            if e.errno == errno.EPIPE:
                _broken_pipe(e)
            raise

    def _main(self, args, prog_name, complete_var, **extra):
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
        except click.exceptions.Abort as e:
            # ^C (issue 22 item 11): 130 (128 + SIGINT, what a shell reports), so a CI can
            # tell an interrupted run from a failing one (1)
            if isinstance(e.__cause__, KeyboardInterrupt):
                Console(stderr=True).print("aborted: interrupted (exit 130)", markup=False)
                sys.exit(EXIT_INTERRUPTED)
            Console(stderr=True).print("aborted", markup=False)
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) else 0)


def _freeze_for_exit() -> None:
    """The command is done and the process ends next (the console script, `python -m`; not
    click's test runner, which passes its args). Python's exit collects garbage again and again
    while it tears the modules down, walking every live object each time: after a --dask run
    (dask.distributed, tornado, Z3 and this package imported) that took 0.10-0.12 s of wall and
    CPU, against 0.01-0.02 s once they are frozen out of the collector (gc.freeze). Cyclic
    garbage left now is then not finalised: nothing here needs it (every file is written in a
    `with` block; stdout was flushed above, stderr unbuffered), and the atexit handlers
    (dask's, multiprocessing's temporary directory) run as before."""
    import gc
    gc.freeze()


_WRITE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EROFS}


EXIT_PIPE = 141           # 128 + SIGPIPE: what `cat`, `grep` report when the reader is gone


def _drop_stdout() -> None:
    """Whatever is still buffered for stdout goes nowhere (Python's own flush at exit must
    not fail again)."""
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, sys.stdout.fileno())
        os.close(fd)
    except (OSError, ValueError, AttributeError):
        pass


def _reader_gone() -> None:
    """The reader of stdout closed it (`verify | head`): stop quietly with 141, as a program
    killed by SIGPIPE does, not 1 (a failing test) nor a traceback; docs/litmus-format.md
    "Exit status"."""
    _drop_stdout()
    os._exit(EXIT_PIPE)


def _stdout_gone() -> bool:
    """Has stdout's reader closed it? A pipe (or socket) whose other end is closed polls as
    an error or a hang-up; a file, a terminal or a stream that is not a file descriptor
    (click's test runner) does not."""
    import select
    try:
        fd = sys.stdout.fileno()
        p = select.poll()
        p.register(fd, select.POLLOUT)
        return any(ev & (select.POLLERR | select.POLLHUP) for _, ev in p.poll(0))
    except (AttributeError, ValueError, OSError):
        return False


def _broken_pipe(e: OSError) -> None:
    """An EPIPE reached the command. When stdout's reader is gone it is `verify | head`
    (_reader_gone: exit 141). Any other pipe (a worker's, a Dask connection) is a failure of
    the run, not of the reader: one line on stderr and exit 1, the run incomplete; never
    os._exit, which would end a process that called the command (click's runner, a test
    worker) with no word."""
    if _stdout_gone():
        _reader_gone()
    _flush_stdout()
    click.echo(f"amdmm-smt: error: a pipe inside the run broke ({e.strerror or e}); "
               f"the run is incomplete", err=True)
    sys.exit(1)


def _stdout_failed(e: OSError) -> None:
    """The output could not be written (a full disk under `> FILE`, issue 22 item 12): one
    line on stderr, exit 2 (the verdict printed is incomplete, so it is not the run's), and
    the rest of the buffer dropped, so that Python's own flush at exit fails no more."""
    _drop_stdout()
    try:
        sys.stderr.write(f"amdmm-smt: cannot write the output (stdout): "
                         f"{(e.strerror or str(e))}\n")
        sys.stderr.flush()
    except OSError:
        pass
    os._exit(2)


def _flush_stdout() -> None:
    try:
        sys.stdout.flush()
    except OSError as e:
        if e.errno == errno.EPIPE:
            _reader_gone()
        if e.errno in _WRITE_ERRNOS:
            _stdout_failed(e)
    except ValueError:        # closed
        pass


def _safe_streams() -> None:
    """Text a stream's encoding cannot hold (a name outside the BMP on an ASCII or Latin-1
    terminal, PYTHONIOENCODING=ascii) is written escaped (`\\U0001f600`), never a
    UnicodeEncodeError that loses the summary (issue 22 item 9)."""
    for s in (sys.stdout, sys.stderr):
        try:
            s.reconfigure(errors="backslashreplace")
        except (AttributeError, ValueError, OSError):
            pass


def _show(text: str) -> str:
    from .errors import show
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
    from .report.atomic import write_atomic
    try:
        write_atomic(path, text)     # a killed or failed run never leaves half a file
    except OSError as e:
        _fail2(f"{option} {_show(path)}: cannot write: {e.strerror}")


_timeout = click.option("--timeout", default=600.0, show_default=True, type=_Seconds(),
                        help="Seconds one test may take, every stage included (parsing, "
                             "encoding, solving); past it the test is reported unknown (a "
                             "failure), within about a second.")
_memory = click.option("--memory", "memory_mb", default=None, type=click.IntRange(min=16),
                       help="Memory limit in MiB per test (growth of the worker process "
                            "running it, and Z3's own limit); past it the test is reported "
                            "unknown (a failure).")
_jobs = click.option("--jobs", "-j", default=1, show_default=True, type=click.IntRange(min=1),
                     help="Run tests in this many processes (output is the same).")


@main.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--model", "model_name", default=None,
              help="Model version: a name from `amdmm-smt models` or a model file. Overrides a "
                   "test's own `model:`.")
@click.option("--json", "as_json", is_flag=True, help="One JSON record per test on stdout.")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "herd"]), default=None,
              help="table (default), json (as --json) or herd: herd7's result block per test "
                   "(docs/herd-import.md).")
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
@click.option("--outcome-limit", default=OUTCOME_LIMIT, show_default=True,
              type=click.IntRange(min=0),
              help="Stop listing a test's outcomes after this many (0: no limit). A listing "
                   "stopped short says so in its verdict line; the test fails (unknown) "
                   "unless every expectation was decided by its own solver query.")
@click.option("--decide-only", is_flag=True,
              help="Answer each expectation with its own solver queries without listing "
                   "every outcome (an `outcomes:` list is checked state by state, plus one "
                   "query for any state outside it). Same verdicts, much faster on big tests.")
@click.option("--dask", "dask_address", default=None, metavar="ADDRESS",
              help="Run the tests on a Dask distributed cluster: a scheduler address "
                   "(tcp://host:8786) or `local` for a LocalCluster on this machine. "
                   "Needs the `cluster` extra. Output is the same as a local run.")
@click.option("--undefined", "undefined_policy", type=click.Choice(["ok", "fail"]), default="ok",
              show_default=True,
              help="A test without a claim (exists: and no expect:, e.g. an imported .litmus) "
                   "whose executions are undefined: report it (ok) or fail it (fail).")
@click.option("--unroll", default=None, type=click.IntRange(min=1, max=64),
              help="Loop bound for tests with control flow that give no `unroll:` (each block "
                   "runs at most this many times per execution; default 2).")
def verify(paths, model_name, as_json, junit_path, timeout, memory_mb, jobs, no_timing, engine,
           quiet, max_outcomes, decide_only, dask_address, unroll, undefined_policy, fmt,
           outcome_limit):
    """Verify litmus tests (files or directories) and print every allowed outcome."""
    if dask_address:
        from .run.cluster import prestart
        prestart(dask_address, engine)   # --dask local: its workers' imports start now
    from .model import get_model
    from .report.table import error_record, print_json, print_table, result_record, summary
    from .run.collect import collect, lint_tests
    from .run.corpus import progress_printer, run_files
    if fmt == "json":
        as_json = True
    elif fmt is not None and as_json:
        _fail2(f"--json and --format {fmt} contradict each other")
    console = Console(highlight=False, emoji=False)
    err = Console(stderr=True, highlight=False, emoji=False)
    try:
        get_model(model_name)
        _check_cat(model_name, err)
    except LitmusError as e:
        _fail2(str(e))
    _writable("--junit", junit_path)
    collected = collect(paths)          # walked once: the progress total and the run
    bar, tick = progress_printer(len(collected[0]), quiet=as_json or quiet or fmt == "herd")
    if bar:
        bar.start()
    try:
        runs, load_errors = run_files(paths, model_name, timeout, jobs, tick, memory_mb, engine,
                                      decide_only, dask_address, unroll=unroll,
                                      collected=collected, outcome_limit=outcome_limit)
    except LitmusError as e:
        _fail2(str(e))
    finally:
        if bar:
            bar.stop()
    results = [r for _, r, e in runs if r is not None]
    if undefined_policy == "fail":      # issue 19 item 2: undefined behaviour a test reported
        for r in results:
            for v in r.verdicts:
                if v.kind == "undefined" and v.expected == "reported":
                    v.status, v.detail = "fail", v.detail.replace(
                        "reported; --undefined fail fails it", "--undefined fail")
    errors = sorted(load_errors + [(t.file, e) for t, _, e in runs if e])
    warns = lint_tests([r.test for r in results], model_name)   # never change a verdict
    for r in results:       # one channel: the lint warnings join the result's own warnings
        r.warnings = list(r.warnings or []) + warns.get(r.test.file, [])
    if fmt == "herd":
        from .report.herd import to_herd
        sys.stdout.write(to_herd(results, timing=not no_timing))
    elif as_json:
        records = [result_record(r, timing=not no_timing) for r in results]
        records += [error_record(f, m) for f, m in errors]
        print_json(records, sys.stdout)
    else:
        if results:
            print_table(results, [], console, timing=not no_timing, max_outcomes=max_outcomes,
                        quiet=quiet)
        console.print(summary(results, errors), markup=False)
    if junit_path:
        from .report.junit import write_junit
        try:
            write_junit(junit_path, "amdmm-smt", runs, load_errors)
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
@click.option("--explain/--no-explain", "with_explain", default=True, show_default=True,
              help="For each changed outcome, a witness under the model that allows it and "
                   "the rule families that forbid it under the other.")
@_timeout
@_memory
@_jobs
@click.option("--dask", "dask_address", default=None, metavar="ADDRESS",
              help="Run on a Dask distributed cluster (as `verify --dask`).")
@click.option("--synth", "with_synth", is_flag=True,
              help="Append the minimal tests `amdmm-smt synth` finds for the two versions "
                   "(its default vocabulary; docs/semantics.md section 17).")
@click.option("--synth-threads", default=2, show_default=True, type=click.IntRange(1, 4),
              help="--synth: at most this many threads.")
@click.option("--synth-events", default=4, show_default=True, type=click.IntRange(1, 8),
              help="--synth: at most this many instructions.")
def diff(paths, model_a, model_b, fmt, output, with_explain, timeout, memory_mb, jobs,
         dask_address, with_synth, synth_threads, synth_events):
    """Compare the outcomes two model versions allow on the same tests.

    A test that names its own `model:` is run under --from and --to like every other test
    (the two versions are what is compared); the report lists such tests. A test that cannot
    be run (a feature not encoded yet, a bad model) is an error row of the report.

    Exit 0 when nothing changed, 1 when some outcome or verdict changed, 2 on bad input
    (including an error row)."""
    if dask_address:
        from .run.cluster import prestart
        prestart(dask_address)   # --dask local: its workers' imports run while tests load
    from .model import get_model
    from .run.commands import load_limited
    from .run.corpus import progress_printer, run_models
    from .report.diff import diff_results, explain_changes, to_html, to_json, to_markdown, to_text
    try:
        a, b = get_model(model_a), get_model(model_b)
        for m in dict.fromkeys((model_a, model_b)):   # a model file: checked before any test
            _check_cat(m, Console(stderr=True, highlight=False, emoji=False))
    except LitmusError as e:
        _fail2(str(e))
    _writable("--output", output)
    batch, _ = load_limited(paths, timeout, memory_mb, jobs)
    bar, tick = progress_printer(2 * len(batch.tests), quiet=False)
    if bar:
        bar.start()
    try:
        ra, rb = run_models(batch.tests, [a.file or a.name, b.file or b.name], timeout, jobs,
                            tick, dask=dask_address, memory_mb=memory_mb)
    except LitmusError as e:
        _fail2(str(e))
    finally:
        if bar:
            bar.stop()
    diffs = diff_results(ra, rb, batch.errors)
    if with_explain:
        try:
            from .run.commands import explain_many
            explain_changes(diffs, batch.tests, a, b, timeout=timeout,
                            explain_many=lambda js, tmo: explain_many(js, tmo, memory_mb, jobs))
        except LitmusError as e:
            _fail2(str(e))
    render = {"markdown": to_markdown, "html": to_html, "json": to_json, "text": to_text}[fmt]
    text = render(diffs, a, b)
    if with_synth:
        text = _with_synth(text, fmt, a, b, synth_threads, synth_events, jobs)
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
@click.argument("test_path", metavar="TEST")
@click.option("--outcome", "outcome", default=None,
              help="The outcome to explain, a condition in the test's terms (default: the "
                   "test's exists: condition).")
@click.option("--model", "model_name", default=None,
              help="Model version: a name from `amdmm-smt models` or a model file.")
@click.option("--json", "as_json", is_flag=True, help="One JSON record on stdout.")
@click.option("--graph", "graph_path", default=None, type=click.Path(dir_okay=False),
              help="Also draw the witness (for a forbidden outcome, the closest candidate "
                   "execution with the rule it breaks marked): FILE.dot (Graphviz source) or "
                   "FILE.svg (drawn by amdmm-smt itself, no Graphviz needed).")
@_timeout
@_memory
@click.option("--no-timing", is_flag=True, help="Leave the run time out.")
def explain(test_path, outcome, model_name, as_json, graph_path, timeout, memory_mb, no_timing):
    """Explain one outcome of a test: a witness execution when the model allows it, a minimal
    set of named rule families that together forbid it otherwise.

    It runs in a worker process under --timeout and --memory like `verify` (every stage:
    parsing, encoding each path combination, solving, minimising).

    Exit 0 explained, 1 the solver gave up or a limit stopped it (unknown, with the stage),
    2 bad input."""
    import json
    from .explain.witness import Explanation, format_text
    from .run.collect import model_for
    from .run.commands import explain_call
    from .run.pool import Stopped, run_calls
    console = Console(highlight=False, emoji=False)
    if graph_path and not graph_path.endswith((".dot", ".svg")):
        _fail2(f"{graph_path}: --graph writes FILE.dot or FILE.svg")
    _writable("--graph", graph_path)
    import time
    t0 = time.monotonic()
    test, ex, err = run_calls([(test_path, explain_call, (test_path, outcome, model_name,
                                                          timeout))], timeout, memory_mb)[0]
    if err:
        _fail2(err)
    if isinstance(ex, Stopped):
        if test is None:         # stopped before the test was read: no test to be unknown
            _fail2(f"{test_path}: {ex.reason}")
        try:
            mname = model_for(test, model_name).name
        except LitmusError:
            mname = model_name or "?"
        text = outcome if outcome is not None else (test.exists.text if test.exists else "")
        ex = Explanation(test, mname, text, None, limit=ex.reason,
                         seconds=time.monotonic() - t0)
    test = ex.test
    if graph_path and ex.reachable is None:
        Console(stderr=True, emoji=False).print(
            f"{test_path}: --graph {graph_path}: not written, the outcome was not decided",
            markup=False, soft_wrap=True)
    elif graph_path:
        wt, fb = ex.witness, None
        if wt is None and ex.closest is not None:     # the closest candidate, rule marked
            wt, fb = ex.closest["witness"], ex.closest["dropped"]
        if wt is None:
            _fail2(f"{test_path}: --graph: the outcome is not allowed and no candidate "
                   "execution produces it, there is nothing to draw")
        from .explain.graph import to_dot, to_svg
        title = f"{test.name}: {ex.outcome} ({ex.model})"
        if fb:
            title = f"{test.name}: {ex.outcome} is FORBIDDEN ({ex.model}); closest candidate"
        text = to_svg(wt, title, fb) if graph_path.endswith(".svg") else to_dot(wt, title)
        _write("--graph", graph_path, text)
    if as_json:
        sys.stdout.write(json.dumps(ex.record(timing=not no_timing), sort_keys=True) + "\n")
    else:
        console.print(format_text(ex), markup=False, soft_wrap=True)
        if not no_timing:
            console.print(f"({ex.seconds:.2f}s)", markup=False)
    sys.exit(1 if ex.reachable is None else 0)


@main.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--model", "model_name", default=None,
              help="Model version: a name from `amdmm-smt models` or a model file.")
@click.option("--json", "as_json", is_flag=True, help="One JSON record per warning.")
@_timeout
@_memory
@_jobs
def lint(paths, model_name, as_json, timeout, memory_mb, jobs):
    """Static warnings for likely mistakes (no solving). Exit 0 (warnings do not fail),
    2 on bad input. A test silences a warning by name with `silence: [name, ...]`. Each file
    is read and linted in a worker process under --timeout and --memory."""
    from .model import get_model
    from .report.table import print_json
    from .run.commands import load_limited
    console = Console(highlight=False, emoji=False)
    if model_name is not None:
        try:
            get_model(model_name)
            _check_cat(model_name, Console(stderr=True, highlight=False, emoji=False))
        except LitmusError as e:
            _fail2(str(e))
    batch, warns = load_limited(paths, timeout, memory_mb, jobs, lint_model=model_name,
                                lint=True)
    ws = sorted((w for t in batch.tests for w in warns.get(t.file, [])),
                key=lambda w: (w.file, w.line, w.code, w.message))
    if as_json:
        print_json([w.record() for w in ws], sys.stdout)
    else:
        for w in ws:
            console.print(str(w), markup=False, soft_wrap=True)
        names = sorted({w.code for w in ws})
        console.print(f"{len(ws)} warning{'s' if len(ws) != 1 else ''} in {len(batch.tests)} "
                      f"test{'s' if len(batch.tests) != 1 else ''}"
                      + (f" ({', '.join(names)}; see `silence:` and docs/semantics.md "
                         "section 12)" if names else ""), markup=False)
    for _, m in sorted(batch.errors):
        Console(stderr=True, emoji=False).print(m, markup=False, soft_wrap=True)
    sys.exit(2 if batch.errors else 0)


def _check_cat(model_name, err) -> None:
    """A model file in the model language is parsed and type-checked before any test runs:
    its errors are the command's (exit 2), its warnings printed once."""
    from .cat import is_cat, load_cached     # the parser is imported on first load only
    if not is_cat(model_name):
        return
    for w in load_cached(model_name).warnings:
        err.print(w, markup=False, soft_wrap=True)


@main.group("model", cls=_Group)
def model_group() -> None:
    """Model files in the model language (docs/model-language.md)."""


@model_group.command("check")
@click.argument("path")
def model_check(path):
    """Type-check a model file and everything it includes, without running a test: errors
    are `FILE:LINE: problem` (exit 2), warnings are printed, exit 0 when clean."""
    from .cat import check_file
    err = Console(stderr=True, highlight=False, emoji=False)
    try:
        m = check_file(path)
    except LitmusError as e:
        _fail2(str(e))
    except RecursionError:
        _fail2(f"{_show(path)}: the model nests too deeply")
    for w in m.warnings:
        err.print(w, markup=False, soft_wrap=True)
    Console(highlight=False, emoji=False).print(
        f"{path}: {len(m.defs)} definitions, {len(m.axioms)} axioms, "
        f"{len(m.files)} file(s), {len(m.warnings)} warning(s)", markup=False, soft_wrap=True)


@main.command()
def models():
    """List the shipped model versions and the options each sets differently from the
    defaults."""
    from .model import list_models
    console = Console(highlight=False, emoji=False)
    try:
        ms = list_models()
    except LitmusError as e:
        _fail2(str(e))
    for m in ms:
        console.print(f"{m.name}: {m.description}", markup=False, soft_wrap=True)
        console.print(f"    options: {m.describe_options()}", markup=False, soft_wrap=True)
    from .model import shipped_models_dir
    d = shipped_models_dir()
    cats = sorted(f for f in os.listdir(d) if f.endswith(".cat")) if d else []
    if cats:
        from .cat import describe
        console.print("\nModel files in the model language (--model models/NAME.cat; "
                      "docs/model-language.md):", markup=False, soft_wrap=True)
        for f in cats:
            console.print(f"{f}: {describe(os.path.join(d, f))}", markup=False,
                          soft_wrap=True)
    od = os.path.join(d, "options") if d else None
    opt_files = sorted(f for f in os.listdir(od) if f.endswith(".cat")) \
        if od and os.path.isdir(od) else []
    if opt_files:
        from .cat import describe
        console.print("\nOption files: the seed with one option value's definitions replaced "
                      "(--model models/options/OPTION-VALUE.cat; docs/semantics.md section 8):",
                      markup=False, soft_wrap=True)
        for f in opt_files:
            console.print(f"options/{f}: {describe(os.path.join(od, f))}", markup=False,
                          soft_wrap=True)
    from .model import option_table
    console.print("\nOptions a model file may set (`options:`; the default first; "
                  "docs/semantics.md section 8; each value that is also a model file "
                  "names it):", markup=False, soft_wrap=True)
    for name, values in option_table():
        console.print(f"    {name}: {' | '.join(values)}", markup=False, soft_wrap=True)
        for v in values:
            if f"{name}-{v}.cat" in opt_files:
                console.print(f"        {v} as a model file: options/{name}-{v}.cat",
                              markup=False, soft_wrap=True)


@main.command("import-herd")
@click.argument("paths", nargs=-1, required=True)
@click.option("--output", "-o", "out_dir", required=True, type=click.Path(file_okay=False),
              help="Directory for the YAML tests (created if missing).")
@click.option("--force", is_flag=True, help="Overwrite existing DIR/<stem>.yaml files.")
@_timeout
@_memory
@_jobs
def import_herd(paths, out_dir, force, timeout, memory_mb, jobs):
    """Convert herd / Dartagnan C11 / OpenCL .litmus tests (files or directories) into the
    YAML format, one DIR/<stem>.yaml per input (docs/herd-import.md).

    Nothing is written unless every input converts; an existing output file is an error
    unless --force. Each file is converted in a worker process under --timeout and --memory.
    Exit 0 on success, 2 on any error (one `FILE:LINE: problem` line each)."""
    from .run.commands import import_call
    from .run.pool import Stopped, run_calls
    files, errors = [], []
    for p in paths:
        if os.path.isdir(p):
            found = sorted(os.path.join(r, n) for r, _, ns in os.walk(p) for n in ns
                           if n.lower().endswith(".litmus"))   # any case, like verify
            if not found:
                errors.append(f"{p}: no *.litmus files in this directory")
            files += found
        elif os.path.isfile(p):
            files.append(p)
        else:
            errors.append(f"{p}: no such file or directory")
    outputs: dict[str, tuple[str, str]] = {}
    files = list(dict.fromkeys(files))
    outs = run_calls([(f, import_call, (f,)) for f in files], timeout, memory_mb, jobs)
    for f, (_, text, err) in zip(files, outs):
        stem = os.path.splitext(os.path.basename(f))[0]
        dest = os.path.join(out_dir, stem + ".yaml")
        if err:
            errors.append(err)
            continue
        if isinstance(text, Stopped):
            errors.append(f"{f}: {text.reason}")
            continue
        if dest in outputs:
            errors.append(f"{f}: writes {dest}, as {outputs[dest][0]} does (same file stem)")
            continue
        if os.path.exists(dest) and not force:
            errors.append(f"{dest}: exists; not overwritten (use --force)")
            continue
        outputs[dest] = (f, text)
    if errors:
        _fail2("\n".join(errors))
    try:
        os.makedirs(out_dir, exist_ok=True)
        from .report.atomic import write_atomic
        for dest, (_, text) in sorted(outputs.items()):
            write_atomic(dest, text)
    except OSError as e:
        _fail2(f"{e.filename or out_dir}: cannot write: {e.strerror}")
    console = Console(highlight=False, emoji=False)
    for dest, (src, _) in sorted(outputs.items()):
        console.print(f"{src} -> {dest}", markup=False, soft_wrap=True)


def _with_synth(text: str, fmt: str, a, b, threads: int, events: int, jobs: int) -> str:
    """diff --synth (issue 21 item 5): the synthesized minimal tests after the report."""
    import html
    import json
    from . import synth as S
    from .synth.programs import Bound
    r = S.run(a, b, Bound(threads, events, 2, S.default_vocab(a, b)), jobs=min(jobs, 2))
    if fmt == "json":
        rec = json.loads(text)
        rec["synth"] = json.loads(S.to_json(r))
        return json.dumps(rec, indent=2, sort_keys=True) + "\n"
    if fmt == "markdown":
        return text.rstrip("\n") + "\n\n" + S.to_markdown(r)
    if fmt == "html":
        body = f"<h2>Synthesized minimal tests</h2>\n<pre>{html.escape(S.to_text(r))}</pre>\n"
        return text.replace("</body>", body + "</body>") if "</body>" in text else text + body
    return text.rstrip("\n") + "\n\n" + S.to_text(r)


@main.command()
@click.option("--from", "model_a", required=True,
              help="A model version: a name from `amdmm-smt models` or a model file.")
@click.option("--to", "model_b", default=None,
              help="The other version (default: --from, changed by --option).")
@click.option("--option", "options", multiple=True, metavar="NAME=VALUE",
              help="Change an option of the --to version (repeatable), e.g. read_lo=true.")
@click.option("--threads", default=2, show_default=True, type=click.IntRange(1, 4),
              help="At most this many threads.")
@click.option("--events", default=4, show_default=True, type=click.IntRange(1, 8),
              help="At most this many instructions in all threads together.")
@click.option("--locations", default=2, show_default=True, type=click.IntRange(1, 4),
              help="At most this many locations.")
@click.option("--vocab", default=None, metavar="SPEC",
              help="The instructions searched: FIELD=V1,V2;... with FIELD kinds (st ld rmw "
                   "cas fence av bar split named async if call), orders (na mono acq rel acqrel "
                   "sc), scopes (wavefront workgroup cluster agent system), spaces (global "
                   "local undef), placements (wave wg agent xcluster system), flags (volatile "
                   "volatile-only avnone avnone-only mmra mmra-global user tag-all), bar_ids (-1 -3 0 "
                   "1), counts (0 1 2), wait_counts (0 1 2), targets (none or gfx names), "
                   "plain_spaces, sync_spaces, only; +FIELD=... widens the default (which "
                   "comes from the options that differ; docs/semantics.md 17.1).")
@click.option("--max", "max_found", default=3, show_default=True, type=click.IntRange(min=1),
              help="Stop after this many distinct minimal tests.")
@click.option("--all-sizes", is_flag=True,
              help="Go on past the smallest size with a difference (up to --max tests).")
@click.option("--no-explain", "no_explain", is_flag=True,
              help="Do not name the rule families that forbid each test's outcome.")
@click.option("--output", "-o", "out_dir", type=click.Path(file_okay=False),
              help="Write each test as DIR/<name>.yaml (created if missing; overwrites).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("--timeout", default=60.0, show_default=True, type=click.FloatRange(min=0.001),
              help="Seconds per program and version (an undecided one is counted and "
                   "voids the exhaustiveness claim).")
@click.option("--jobs", "-j", default=None, type=click.IntRange(min=1),
              help="Processes for the search (default: up to 2).")
@click.option("--symbolic", is_flag=True,
              help="Search symbolically: one solver query per skeleton (threads, each "
                   "instruction's kind and locations) with the orders, scopes, flags and "
                   "placement chosen by the solver, the rules read from the versions' model "
                   "files (memory instructions only; docs/semantics.md 17.9).")
def synth(model_a, model_b, options, threads, events, locations, vocab, max_found, all_sizes,
          no_explain, out_dir, as_json, timeout, jobs, symbolic):
    """Synthesize the smallest litmus tests that tell two model versions apart: every program
    up to the bound (symmetry-reduced), smallest first; each difference found is minimised and
    written as a test whose expectation is the --from version's verdict. When nothing is found
    the search was exhaustive and says so (docs/semantics.md section 17).
    Exit 0 on a completed search, 2 on bad input."""
    from . import synth as S
    from .synth.programs import Bound, parse_vocab
    try:
        for m in dict.fromkeys(x for x in (model_a, model_b) if x):   # a model file: checked
            _check_cat(m, Console(stderr=True, highlight=False, emoji=False))   # up front
        a, b = S.build_models(model_a, model_b, list(options))
        voc = S.default_vocab(a, b)
        if vocab:
            voc = parse_vocab(vocab, voc if vocab.lstrip().startswith("+") else None)
    except LitmusError as e:
        _fail2(str(e))
    except ValueError as e:
        _fail2(f"synth: {e}")
    try:
        r = S.run(a, b, Bound(threads, events, locations, voc), jobs=jobs or S.jobs_default(),
                  max_found=max_found, explain_it=not no_explain, timeout=timeout,
                  all_sizes=all_sizes, symbolic=symbolic)
    except LitmusError as e:        # --symbolic: a vocabulary or version it does not take
        _fail2(str(e))
    if out_dir:
        try:
            os.makedirs(out_dir, exist_ok=True)
            from .report.atomic import write_atomic
            for t in r.tests:
                write_atomic(os.path.join(out_dir, t.name + ".yaml"), t.yaml)
        except OSError as e:
            _fail2(f"{e.filename or out_dir}: cannot write: {e.strerror}")
    click.echo(S.to_json(r) if as_json else S.to_text(r), nl=False)


@main.command()
@click.option("--cycle", "cycles", multiple=True, metavar="EDGES",
              help='A relaxation cycle, e.g. "PodWW Rfe PodRR Fre" (repeatable).')
@click.option("--shape", "shapes", multiple=True, metavar="NAME",
              help="A classic shape: MP, SB, LB, IRIW, WRC, ISA2, 2+2W, R, S, CoRR, or all "
                   "(repeatable).")
@click.option("--orders", default="rel-acq", show_default=True,
              help="Comma list of plain, mono, rel-acq, sc, or all.")
@click.option("--scopes", default="agent", show_default=True,
              help="Comma list of wavefront, workgroup, cluster, agent, system (wave, wg, sys), "
                   "or all: every assignment of them to the threads.")
@click.option("--placement", "placements", default="diff-wg", show_default=True,
              help="Comma list of same-wave, same-wg, diff-wg, diff-cluster, diff-agent, or all.")
@click.option("--space", "spaces", default="global", show_default=True,
              help="Comma list of global, local, or all (local only within one workgroup).")
@click.option("--plain-data", is_flag=True,
              help="Only the ends of rf edges are atomic; every other access is plain.")
@click.option("--target", default=None, help="A GPU name written into every test.")
@click.option("--output", "-o", "out_dir", type=click.Path(file_okay=False),
              help="Directory for the YAML tests (created if missing).")
@click.option("--force", is_flag=True, help="Overwrite existing files.")
@click.option("--list", "list_only", is_flag=True, help="Print the test names, write nothing.")
def gen(cycles, shapes, orders, scopes, placements, spaces, plain_data, target, out_dir, force,
        list_only):
    """Generate litmus tests from relaxation cycles (diy7 style; docs/gen.md): one
    DIR/<name>.yaml per test, `exists:` the cycle's outcome, no `expect:`.
    Exit 0 on success, 2 on any error."""
    from .gen.cycles import GenError, generate
    try:
        tests = generate(list(cycles), list(shapes), orders, scopes, placements, spaces,
                         plain_data, target)
    except GenError as e:
        _fail2(f"gen: {e}")
    if list_only:
        click.echo("\n".join(n for n, _ in tests))
        return
    if out_dir is None:
        _fail2("gen: --output DIR is required (or --list)")
    dests = [(os.path.join(out_dir, n + ".yaml"), t) for n, t in tests]
    clash = [d for d, _ in dests if os.path.exists(d)]
    if clash and not force:
        _fail2(f"{clash[0]}: exists; not overwritten (use --force)"
               + (f" ({len(clash) - 1} more)" if len(clash) > 1 else ""))
    try:
        os.makedirs(out_dir, exist_ok=True)
        from .report.atomic import write_atomic
        for d, t in dests:
            write_atomic(d, t)
    except OSError as e:
        _fail2(f"{e.filename or out_dir}: cannot write: {e.strerror}")
    click.echo(f"{len(dests)} test{'s' if len(dests) != 1 else ''} written to {out_dir}")


if __name__ == "__main__":  # pragma: no cover
    main()
