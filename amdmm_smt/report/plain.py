"""A console for output that is not a terminal (issue 30 item 3: start-up). Importing rich
and making its consoles costs a two-thread `verify` about a sixth of its CPU; when the output
is a file or a pipe, rich writes plain text anyway. PlainConsole writes, byte for byte, what
rich's Console would for the prints it is sure of (one string, no markup, no control
characters, no tab, and either soft-wrapped or narrower than the console); anything else
(a table, a line rich would wrap, a string with a tab) goes to a real rich console, made when
first needed. tests/test_plain_console.py compares the two on whole reports."""

from __future__ import annotations

import os
import sys

RICH_ONLY = False      # True: every console is rich's (tests compare the two)


def plain_ok(stderr: bool = False) -> bool:
    """Would rich write plain text to this stream (not a terminal, no colour forced)?"""
    if RICH_ONLY or os.name == "nt" or "ipykernel" in sys.modules:
        return False
    env = os.environ
    if env.get("TTY_COMPATIBLE", "") == "1" or env.get("FORCE_COLOR") not in (None, ""):
        return False
    if hasattr(sys.stdin, "__module__") and str(sys.stdin.__module__).startswith("idlelib"):
        return False
    stream = sys.stderr if stderr else sys.stdout
    try:
        return not stream.isatty()
    except (AttributeError, ValueError):
        return True


def _width() -> int:
    """rich's Console.size width, off a terminal: COLUMNS, else the first standard stream
    that is a terminal, else 80."""
    columns = os.environ.get("COLUMNS")
    if columns is not None and columns.isdigit():
        return int(columns)
    width = None
    for fd in (0, 1, 2):
        try:
            width = os.get_terminal_size(fd)[0]
        except (AttributeError, ValueError, OSError):
            continue
        break
    return width or 80


class PlainConsole:
    plain = True

    def __init__(self, on_broken_pipe=None, **kw):
        self._kw = kw
        self._stderr = bool(kw.get("stderr"))
        self._emoji = kw.get("emoji", True)
        self._highlight = kw.get("highlight", True)
        self._rich = None
        self._on_broken_pipe = on_broken_pipe
        columns = os.environ.get("COLUMNS")
        self._fixed = int(columns) if columns is not None and columns.isdigit() else None

    @property
    def file(self):
        return sys.stderr if self._stderr else sys.stdout

    @property
    def width(self) -> int:
        return self._fixed if self._fixed is not None else _width()

    def rich(self):
        if self._rich is None:
            from rich.console import Console
            self._rich = Console(**self._kw)
            if self._on_broken_pipe is not None:
                self._rich.on_broken_pipe = self._on_broken_pipe
        return self._rich

    def _sure(self, text: str, markup, soft_wrap) -> bool:
        if markup is not False and "[" in text:
            return False
        if self._emoji and ":" in text:
            return False
        for ch in text:
            if ch < " " and ch != "\n" or ch == "\x7f":
                return False
        if soft_wrap:
            return True
        w = self.width
        return text.isascii() and all(len(ln) <= w for ln in text.split("\n"))

    def print(self, *objects, markup=None, highlight=None, soft_wrap=None, **kw) -> None:
        if (len(objects) == 1 and isinstance(objects[0], str) and not kw
                and self._sure(objects[0], markup, soft_wrap)):
            f = self.file
            f.write(objects[0] + "\n")
            f.flush()
            return
        if self._rich is None:
            try:
                self.file.flush()
            except (OSError, ValueError):
                pass
        self.rich().print(*objects, markup=markup, highlight=highlight, soft_wrap=soft_wrap,
                          **kw)
