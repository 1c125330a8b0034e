"""Running many tests: collect files, parse, qualify duplicate names, run (optionally in
parallel processes) and return results in input order, so output never depends on --jobs."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Optional

from ..errors import LitmusError, Warn
from ..ir import Test
from ..model import Model, get_model
from ..frontend.litmus import parse_file


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
    """Parsed tests and the errors met loading them."""
    tests: list[Test] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)   # (file, one-line message)


def parse_one(f: str, data: Optional[bytes] = None) -> tuple[Optional[Test], Optional[str]]:
    """Parse one file (or its bytes): (test, None) or (None, one-line error)."""
    try:
        if f.lower().endswith(".litmus"):   # herd / Dartagnan, imported on the fly; any case
            # (issue 22 item 10: *.LITMUS was collected, then parsed as YAML)
            from ..frontend.herd.convert import load_litmus
            return load_litmus(f), None
        return parse_file(f, data), None
    except LitmusError as e:
        return None, str(e)
    except Exception as e:  # never a traceback
        return None, f"{f}: internal error while parsing: {type(e).__name__}: {e}"


def qualify_duplicates(tests: list) -> None:
    """A test's name is unique per file, not per corpus (issue 19 item 1: peer corpora reuse
    names across files): tests that share a name all run, each shown as `PATH::NAME` (the
    table, JSON, JUnit and diff), with a `duplicate-name` warning naming the other files."""
    by: dict[str, list] = {}
    for t in tests:
        by.setdefault(t.name, []).append(t)
    for name, ts in by.items():
        if len(ts) < 2:
            continue
        for t in ts:
            others = sorted({u.file for u in ts if u is not t})
            t.name = f"{t.file}::{name}"
            w = Warn("duplicate-name", f"test name '{name}' is also the name of the test in "
                     f"{', '.join(others)}: shown as '{t.name}'", t.file, t.line)
            t.warnings = list(getattr(t, "warnings", None) or []) + [w]


def model_for(t: Test, forced: Optional[str]) -> Model:
    """--model wins; else the test's own `model:`; else the default."""
    if forced:
        return get_model(forced)
    name = t.model
    if name and (os.path.sep in name or name.lower().endswith((".yaml", ".yml"))) \
            and not os.path.isabs(name):
        name = os.path.join(os.path.dirname(t.file), name)   # relative to the test file
    try:
        return get_model(name)
    except LitmusError as e:
        from ..errors import show
        msg = e.message if e.file in (None, name) and e.line is None else str(e)
        raise LitmusError(f"model '{show(t.model_written or t.model or '')}': {msg}", t.file,
                          t.model_line) from None


Run = tuple  # (Test, Result | None, error | None)


def lint_tests(tests: list[Test], model_name: Optional[str]) -> dict:
    """Static warnings per test file (amdmm_smt/explain/lint.py). A test that cannot be elaborated
    has none here: its error is reported by the run."""
    from ..explain.lint import lint_test
    out = {}
    for t in tests:
        try:
            out[t.file] = lint_test(t, model_for(t, model_name))
        except LitmusError:
            out[t.file] = []
    return out
