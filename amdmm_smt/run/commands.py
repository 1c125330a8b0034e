"""The per-file work of the commands other than `verify` (explain, lint, import-herd, the
parsing of `diff`), as functions a worker process runs under --timeout / --memory
(`pool.run_calls`), so that every command that reads a test honours the limits (issue 22
items 4, 5): reading a test is bounded like solving one."""

from __future__ import annotations

from typing import Optional

from .. import limits
from .collect import Batch, collect, parse_one, qualify_duplicates
from .pool import CallError, Stopped, run_calls, tell_test


def _parse(path: str):
    limits.stage("parsing")
    test, err = parse_one(path)
    if err:
        raise CallError(err)
    tell_test(test)
    return test


def parse_call(path: str):
    return _parse(path)


def lint_call(path: str, model_name: Optional[str]):
    """(test, its lint warnings)."""
    from .collect import lint_tests
    test = _parse(path)
    limits.stage("linting")
    return test, lint_tests([test], model_name).get(test.file, [])


def explain_call(path: str, outcome: Optional[str], model_name: Optional[str],
                 timeout: float):
    from ..errors import LitmusError
    from ..explain.witness import explain, parse_outcome
    from .collect import model_for
    test = _parse(path)
    model = model_for(test, model_name)
    if outcome is not None:
        cond = parse_outcome(test, outcome)
    elif test.exists is not None:
        cond = test.exists
    else:
        raise LitmusError("the test has no exists: condition; give --outcome \"COND\"",
                          test.file, test.line)
    return explain(test, model, cond, timeout=timeout, with_closest=True)


def import_call(path: str):
    """(imported test's YAML text) of one herd .litmus file."""
    from ..frontend.herd.convert import import_text, read_litmus
    limits.stage("importing")
    imp, _ = import_text(read_litmus(path), path)
    return imp.yaml


def stopped_message(path: str, test, reason: str) -> str:
    """The one-line error for a file whose work a limit stopped."""
    return f"{test.file if test is not None else path}: {reason}"


def load_limited(paths, timeout: float, memory_mb: Optional[int], jobs: int = 1,
                 lint_model: Optional[str] = None, lint: bool = False):
    """`collect.load` with every file parsed (and, with `lint`, linted) in a worker under the
    limits: (Batch, {file: warnings}). A file stopped by a limit is an error naming it."""
    files, errors = collect(paths)
    if lint:
        outs = run_calls([(f, lint_call, (f, lint_model)) for f in files], timeout, memory_mb,
                         jobs)
    else:
        outs = run_calls([(f, parse_call, (f,)) for f in files], timeout, memory_mb, jobs)
    b = Batch(errors=errors)
    warns: dict = {}
    for f, (t, v, err) in zip(files, outs):
        if isinstance(v, Stopped):
            b.errors.append((f, stopped_message(f, None, v.reason)))
            continue
        if err:
            b.errors.append((f, err))
            continue
        if lint:
            t, w = v
            warns[t.file] = w
        else:
            t = v
        b.tests.append(t)
    qualify_duplicates(b.tests)      # issue 19 item 1: names are unique per file
    return b, warns


def explain_outcome_call(test, model, text: str, timeout: float):
    """(reachable, witness, core) of one outcome of a parsed test under a model (`diff`)."""
    from ..explain.witness import explain, parse_outcome
    tell_test(test)
    ex = explain(test, model, parse_outcome(test, text), timeout=timeout)
    return ex.reachable, ex.witness, ex.core


def explain_many(jobs: list, timeout: float, memory_mb: Optional[int] = None,
                 workers: int = 1) -> list:
    """`report.diff.explain_changes`'s explanations, each in a worker under the limits: an
    explanation a limit stopped is not decided (None)."""
    outs = run_calls([(t.file, explain_outcome_call, (t, m, text, timeout))
                      for t, m, text in jobs], timeout, memory_mb, workers)
    return [None if err or isinstance(v, Stopped) else v for _, v, err in outs]
