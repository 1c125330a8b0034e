"""JUnit XML for CI dashboards: one testcase per litmus test."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET

from ..outcomes import format_state
from .table import verdict_text


def classname(file: str, suite: str) -> str:
    """The test's directory, dotted (`litmus.classic`), so that CI groups results by it."""
    d = os.path.normpath(os.path.dirname(file)) if file else ""
    if not d or d == ".":
        return suite
    return d.strip(os.sep).replace(os.sep, ".") or suite


def first_failure(r) -> str:
    """The failure message: the first verdict that did not pass (fail or unknown), one line."""
    for v in r.verdicts:
        if v.status != "pass":
            what = {"exists": f"exists {v.expected}", "undefined": "undefined",
                    "outcomes": "outcomes"}.get(v.kind, v.kind)
            msg = f"{r.status}: {what}: {v.status} ({v.detail})"
            if v.kind == "outcomes" and (v.missing or v.unexpected):
                first = (f"expected but not allowed: {format_state(v.missing[0])}" if v.missing
                         else f"allowed but not expected: {format_state(v.unexpected[0])}")
                msg += f"; {first}"
            return msg
    return f"{r.status}: {r.why or 'the outcome enumeration did not finish'}"


def write_junit(path: str, suite: str, results: list, errors: list[tuple[str, str]]) -> None:
    """results: [(test, Result|None, error|None)]; errors: parse errors (file, message)."""
    cases = []
    fails = errs = 0
    total_time = 0.0
    for t, r, err in results:
        c = ET.Element("testcase", classname=classname(t.file, suite), name=t.name, file=t.file,
                       time=f"{r.seconds:.4f}" if r else "0")
        if r:
            total_time += r.seconds
        if err:
            errs += 1
            ET.SubElement(c, "error", message=err).text = err
        elif r.status != "pass":
            fails += 1
            found = "\n".join(format_state(s) for s in r.states) or "(no outcome)"
            msg = f"{r.status}: {verdict_text(r)}"
            ET.SubElement(c, "failure", message=first_failure(r),
                          type=r.status).text = f"{msg}\n\nallowed outcomes found:\n{found}"
        cases.append(c)
    for file, msg in errors:
        errs += 1
        c = ET.Element("testcase", classname=classname(file, suite), name=file, file=file,
                       time="0")
        ET.SubElement(c, "error", message=msg).text = msg
        cases.append(c)
    ts = ET.Element("testsuite", name=suite, tests=str(len(cases)), failures=str(fails),
                    errors=str(errs), time=f"{total_time:.4f}")
    ts.extend(cases)
    root = ET.Element("testsuites")
    root.append(ts)
    ET.indent(root)
    from .atomic import write_atomic
    write_atomic(path, ET.tostring(root, encoding="utf-8", xml_declaration=True))
