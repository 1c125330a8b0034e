"""User-facing errors: each names the file, the line and the problem (exit status 2)."""

from __future__ import annotations


class LitmusError(Exception):
    """A malformed input. Rendered as `FILE:LINE: message`."""

    def __init__(self, message: str, file: str | None = None, line: int | None = None):
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line

    def __str__(self) -> str:
        where = self.file or "<input>"
        if self.line is not None:
            where += f":{self.line}"
        return f"{where}: {self.message}".replace("\r", "\\r").replace("\n", "\\n")


class Unsupported(LitmusError):
    """Well-formed input whose semantics this version does not encode yet."""

    def __init__(self, message: str, file: str | None = None, line: int | None = None):
        super().__init__("not supported yet: " + message, file, line)
