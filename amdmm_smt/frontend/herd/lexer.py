"""herd / Dartagnan `.litmus` files, stage 1a: the tokens of the C subset, each with its line."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...errors import LitmusError, show

# ---- lexing -------------------------------------------------------------------------------

@dataclass
class Tok:
    kind: str      # id num op str eof
    val: object
    line: int
    pos: int = 0   # offset of its first character (after the header line)
    end: int = 0


_OPS3 = ("<<=", ">>=")
_OPS2 = ("/\\", "\\/", "==", "!=", "<=", ">=", "&&", "||", "<<", ">>", "->", "++", "--",
         "+=", "-=", "*=", "/=", "&=", "|=", "^=", "%=")
_OPS1 = "{}()[];,:@*&=+-/^|~!<>%?."


def lex(text: str, file: str, first_line: int) -> list[Tok]:
    """Tokens of `text` (the file after its header line; `first_line` is its line number).
    Comments: `// ...`, `/* ... */`, and herd's `(* ... *)` outside braces (inside a thread
    body `(*x)` is a dereference)."""
    toks: list[Tok] = []
    i, n, line, depth = 0, len(text), first_line, 0
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
            continue
        if c in " \t\r\f\v":
            i += 1
            continue
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        for opener, closer in (("/*", "*/"), ("(*", "*)")):
            if text.startswith(opener, i) and (opener == "/*" or depth == 0):
                j = text.find(closer, i + 2)
                if j < 0:
                    raise LitmusError(f"unterminated comment {opener} (never closed)", file, line)
                line += text.count("\n", i, j)
                i = j + 2
                break
        else:
            if c == '"':
                j = text.find('"', i + 1)
                if j < 0 or "\n" in text[i:j]:
                    raise LitmusError("unterminated string", file, line)
                toks.append(Tok("str", text[i + 1:j], line, i, j + 1))
                i = j + 1
                continue
            if c.isalpha() or c == "_":
                j = i
                while j < n and (text[j].isalnum() or text[j] == "_"):
                    j += 1
                toks.append(Tok("id", text[i:j], line, i, j))
                i = j
                continue
            if c.isdigit():
                m = re.match(r"0[xX][0-9a-fA-F]+|\d+", text[i:])
                j = i + m.end()
                if (j < n and (text[j].isalnum() or text[j] == "_")) or re.fullmatch(
                        r"0\d*[89]\d*", m.group(0)):
                    raise LitmusError(f"malformed number '{show(text[i:j + 1])}' (a leading 0 "
                                      "means octal in C)" if text[i] == "0" and j - i > 1 else
                                      f"malformed number '{show(text[i:j + 1])}'", file, line)
                toks.append(Tok("num", int(m.group(0), 0) if not re.fullmatch(r"0\d+", m.group(0))
                                else int(m.group(0), 8), line, i, j))
                i = j
                continue
            for op in _OPS3 + _OPS2:
                if text.startswith(op, i):
                    toks.append(Tok("op", op, line, i, i + len(op)))
                    i += len(op)
                    break
            else:
                if c in _OPS1:
                    toks.append(Tok("op", c, line, i, i + 1))
                    depth += 1 if c == "{" else -1 if c == "}" else 0
                    i += 1
                else:
                    raise LitmusError(f"unexpected character {c!r}", file, line)
            continue
    toks.append(Tok("eof", None, line, n, n))
    return toks
