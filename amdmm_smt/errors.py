"""User-facing errors: each names the file, the line and the problem (exit status 2)."""

from __future__ import annotations

import re

MAX_WORD = 200       # an echoed name longer than this is cut (a 1 MB name, a binary blob)
MAX_MESSAGE = 2000   # and a whole message


def bounded(message: str) -> str:
    """User text echoed in a message, cut to a readable length: every run of non-space
    characters longer than MAX_WORD keeps its start and says how long it was."""
    def cut(m: re.Match) -> str:
        w = m.group(0)
        return f"{w[:120]}...[{len(w)} characters]"
    out = re.sub(r"\S{%d,}" % (MAX_WORD + 1), cut, message)
    if len(out) > MAX_MESSAGE:
        out = out[:MAX_MESSAGE - 40] + f"...[{len(out)} characters in all]"
    return out


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
        return f"{where}: {bounded(self.message)}".replace("\r", "\\r").replace("\n", "\\n")


class Unsupported(LitmusError):
    """Well-formed input whose semantics this version does not encode yet."""

    def __init__(self, message: str, file: str | None = None, line: int | None = None):
        super().__init__("not supported yet: " + message, file, line)


class Warn:
    """Accepted input worth a remark: a short code (stable, for filtering), the message, and
    where. Printed after the table as `FILE:LINE: warning[code]: message`; `--json` carries
    them as records {code, file, line, message}."""

    __slots__ = ("code", "message", "file", "line")

    def __init__(self, code: str, message: str, file: str | None = None,
                 line: int | None = None):
        self.code, self.message, self.file, self.line = code, message, file, line

    def __str__(self) -> str:
        where = (self.file or "<input>") + (f":{self.line}" if self.line is not None else "")
        return f"{where}: warning[{self.code}]: {bounded(self.message)}"

    @property
    def name(self) -> str:
        """The code is the name `silence:` takes."""
        return self.code

    def record(self) -> dict:
        return {"code": self.code, "file": self.file, "line": self.line, "message": self.message}

    def __eq__(self, other) -> bool:
        return isinstance(other, Warn) and self.record() == other.record()

    def __hash__(self) -> int:
        return hash((self.code, self.message, self.file, self.line))

    def __reduce__(self):
        return (Warn, (self.code, self.message, self.file, self.line))

def printable(text: str) -> str:
    """`text` with every character a terminal, a log or an XML file could take for something
    else escaped as Python writes it (`\\x1b`, `\\u202e`, a lone surrogate `\\ud83d`):
    control and format characters, separators other than space, surrogates (issue 22 item 9:
    test names are shown safely whatever they hold). Printable text, emoji included, is kept."""
    if text.isprintable():
        return text
    out = []
    for c in text:
        if c.isprintable():
            out.append(c)
        else:
            o = ord(c)
            out.append(f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}" if o < 0x10000
                       else f"\\U{o:08x}")
    return "".join(out)


def show(text: str, limit: int = 80) -> str:
    """User text echoed in a one-line message: whitespace collapsed, newlines escaped, every
    other character that is not printable escaped (`printable`)."""
    t = printable(text.replace("\r", "\\r").replace("\n", "\\n").replace("\t", " "))
    return t if len(t) <= limit else t[:limit] + "..."


# Every warning code, one channel (lint: explain/lint.py; elaboration: elaborate/events.py):
# name -> what it means (also the list `silence:` accepts)
WARNINGS = {
    "scopes-never-inclusive":
        "a release / acquire pair on one location whose scopes can never be inclusive for the "
        "placement, so it never synchronizes (S002 sync scopes)",
    "atomics-never-inclusive":
        "an atomic write and an atomic read of one location in threads whose scopes never "
        "include each other: the read is never in the atomic case of the value rule with that "
        "write (S000), so unless something else orders them it returns undef",
    "wide-scope-on-lds":
        "an atomic LDS access with a scope wider than workgroup, which is treated as workgroup "
        "(S002 memory-model notes)",
    "fence-without-atomic":
        "a fence with no atomic access in its thread that could pair with it (a release fence "
        "needs an atomic write after it, an acquire fence an atomic read before it; LangRef "
        "fence); seq_cst fences are exempt (they also order through the seq_cst order)",
    "untagged-one-as-fence":
        "a -one-as fence without amdgpu-synchronize-as tags (S002: say which address spaces "
        "it synchronizes)",
    "read-always-undef":
        "a plain read that is undef in every execution: a write to its location in another "
        "thread can never happen-before or after it (S000 value rule, property 1)",
    "incompatible-mmra-tags":
        "an access whose MMRA tags are incompatible with every synchronizing operation of its "
        "thread, so program order to and from them is not in happens-before (S001)",
}

# warnings the elaboration attaches (elaborate/events.py), silenced by the same key
ELAB_WARNINGS = {
    "cluster-without-clusters":
        "a cluster number on a target without workgroup clusters: the cluster is the whole "
        "agent (docs/semantics.md R-cluster-placement)",
    "bound-assumed-all":
        "`bound: assume` assumed every execution away (each runs past the unroll bound): no "
        "execution is left to judge the expectations on (docs/semantics.md 15.2)",
    "model-inconsistent":
        "a model file (--model FILE.cat) allows no execution of the test: a minimal set of its "
        "rules (the value statement, axioms) that conflict is named (docs/semantics.md 18)",
    "duplicate-name":
        "two files hold tests of the same name: both run, each shown as PATH::NAME (names are "
        "unique per file, not per corpus)",
}
ALL_WARNINGS = {**WARNINGS, **ELAB_WARNINGS}


def one_line(read, text: str, file: str, what: str):
    """read(text, file) with every failure as one LitmusError naming the file: too deep input
    (RecursionError) and a bug of ours ("internal error while WHAT") included, never a
    traceback (docs/litmus-format.md: errors are FILE:LINE: problem)."""
    try:
        return read(text, file)
    except LitmusError:
        raise
    except RecursionError:
        raise LitmusError("too deep (the input nests more deeply than it can be read)", file,
                          1) from None
    except Exception as e:   # a bug of ours: still one line, never a traceback
        raise LitmusError(f"internal error while {what} ({type(e).__name__}: "
                          f"{show(str(e))})", file, None) from None
