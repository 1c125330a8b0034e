"""YAML read with line numbers, and refused where PyYAML would expand or recurse (anchors,
aliases, merge keys, deep nesting): litmus files (frontend/litmus.py) and model files
(model.py) are read through it, so both report FILE:LINE and neither can be a YAML bomb."""

from __future__ import annotations

import re
from typing import Any, Optional

import yaml

from ..errors import LitmusError, show

# ---- YAML with line numbers ---------------------------------------------------------------

class Node:
    """A YAML value with the 1-based line it starts on."""

    def __init__(self, value: Any, line: int, block: bool = False, raw: Optional[str] = None,
                 literal: bool = False):
        self.value = value
        self.line = line
        self.block = block       # a block scalar (| or >): its text starts on the next line
        self.literal = literal   # a literal block scalar (|): its lines are the file's lines
        self.raw = raw           # a scalar's source text


MAX_DEPTH = 32
_SAFE = yaml.SafeLoader("")


def _convert(node: yaml.Node, file: str, key: str = "", depth: int = 0) -> Node:
    line = node.start_mark.line + 1
    if depth > MAX_DEPTH:
        raise LitmusError(f"YAML nests too deeply (more than {MAX_DEPTH} levels)", file, line)
    if isinstance(node, yaml.MappingNode):
        out: dict[str, tuple[Node, Node]] = {}
        for k, v in node.value:
            kn = _convert(k, file, key, depth + 1)
            if not isinstance(kn.value, (str, int)) or isinstance(kn.value, bool):
                raise LitmusError("mapping keys must be names", file, kn.line)
            name = str(kn.value)
            if name in out:
                raise LitmusError(f"duplicate key '{show(name)}'", file, kn.line)
            out[name] = (kn, _convert(v, file, name, depth + 1))
        return Node(out, line)
    if isinstance(node, yaml.SequenceNode):
        return Node([_convert(v, file, key, depth + 1) for v in node.value], line)
    try:
        value = _SAFE.construct_object(node)
    except yaml.constructor.ConstructorError:
        raise LitmusError(f"unsupported YAML tag '{node.tag}' on '{show(key)}'", file,
                          line) from None
    except Exception:
        raise LitmusError(f"'{show(key)}': bad value '{show(str(node.value))}' for YAML tag "
                          f"{node.tag}", file, line) from None
    return Node(value, line, block=node.style in ("|", ">"), raw=str(node.value),
                literal=node.style == "|")



def prescan(text: str, file: str, loader=yaml.SafeLoader) -> None:
    """Reject what the format never needs and PyYAML would expand or recurse on: anchors and
    aliases (a "billion laughs" file), merge keys, and deep nesting."""
    depth = 0
    prev = None
    starts = (yaml.BlockMappingStartToken, yaml.BlockSequenceStartToken,
              yaml.FlowMappingStartToken, yaml.FlowSequenceStartToken)
    ends = (yaml.BlockEndToken, yaml.FlowMappingEndToken, yaml.FlowSequenceEndToken)
    for tok in yaml.scan(text, Loader=loader):
        line = tok.start_mark.line + 1
        if isinstance(tok, (yaml.AnchorToken, yaml.AliasToken)):
            raise LitmusError(f"YAML anchors and aliases (&{tok.value} / *{tok.value}) are not "
                              "supported", file, line)
        if isinstance(tok, starts):
            depth += 1
            if depth > MAX_DEPTH:
                raise LitmusError(f"YAML nests too deeply (more than {MAX_DEPTH} levels)", file,
                                  line)
        elif isinstance(tok, ends):
            depth -= 1
        elif (isinstance(tok, yaml.ScalarToken) and isinstance(prev, yaml.KeyToken)
              and tok.plain and tok.value == "<<"):
            raise LitmusError("YAML merge keys (<<) are not supported", file, line)
        prev = tok


# libyaml, when PyYAML has it, parses about 5x faster; any YAML problem is re-read by the pure
# Python loader, whose messages (and exact positions) the error contract is written against
_FAST = getattr(yaml, "CSafeLoader", None)


def fast_compose(text: str, file: str) -> Optional[yaml.MappingNode]:
    """The document's YAML mapping node through libyaml, or None to read it again the slow
    way: libyaml missing, a NUL byte, any problem (the pure Python loader's messages and
    positions are the error contract), or a document that is not a mapping. Litmus files and
    model files both come through here."""
    if _FAST is None or "\x00" in text:
        return None
    try:
        prescan(text, file, _FAST)
        node = yaml.compose(text, Loader=_FAST)
    except (LitmusError, yaml.YAMLError):
        return None
    return node if isinstance(node, yaml.MappingNode) else None


def construct(node: yaml.Node) -> Any:
    """A composed document as plain Python values (one shared safe constructor)."""
    return _SAFE.construct_document(node)


def load_yaml(text: str, file: str) -> Node:
    node = fast_compose(text, file)
    if node is not None:
        return _convert(node, file)
    try:
        prescan(text, file)
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.reader.ReaderError as e:
        line = text.count("\n", 0, max(0, e.position)) + 1
        raise LitmusError(f"bad YAML: unacceptable character #x{e.character:04x} "
                          "(control characters are not allowed)"
                          if isinstance(e.character, int) else f"bad YAML: {e.reason}",
                          file, line) from None
    except yaml.MarkedYAMLError as e:
        problem = e.problem or e.context or "malformed"
        mark = e.problem_mark or e.context_mark
        if "end of stream" in problem and e.context_mark is not None and e.context:
            mark = e.context_mark
            problem = re.sub(r"while scanning (an? )?", "unclosed ", e.context) + " (never closed)"
        line = mark.line + 1 if mark else None
        raise LitmusError(f"bad YAML: {show(problem)}", file, line) from None
    except yaml.YAMLError as e:  # pragma: no cover - defensive
        raise LitmusError(f"bad YAML: {show(str(e))}", file, None) from None
    if node is None:
        raise LitmusError("empty file: a litmus test is a YAML mapping", file, 1)
    if not isinstance(node, yaml.MappingNode):
        raise LitmusError("a litmus test must be a YAML mapping", file, node.start_mark.line + 1)
    return _convert(node, file)
