"""JUnit XML for CI dashboards: one testcase per litmus test."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from .outcomes import format_state
from .report import verdict_text


def write_junit(path: str, suite: str, results: list, errors: list[tuple[str, str]]) -> None:
    """results: [(test, Result|None, error|None)]; errors: parse errors (file, message)."""
    cases = []
    fails = errs = 0
    total_time = 0.0
    for t, r, err in results:
        c = ET.Element("testcase", classname=suite, name=t.name, file=t.file,
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
            ET.SubElement(c, "failure", message=msg.splitlines()[0],
                          type=r.status).text = f"{msg}\n\nallowed outcomes found:\n{found}"
        cases.append(c)
    for file, msg in errors:
        errs += 1
        c = ET.Element("testcase", classname=suite, name=file, file=file, time="0")
        ET.SubElement(c, "error", message=msg).text = msg
        cases.append(c)
    ts = ET.Element("testsuite", name=suite, tests=str(len(cases)), failures=str(fails),
                    errors=str(errs), time=f"{total_time:.4f}")
    ts.extend(cases)
    root = ET.Element("testsuites")
    root.append(ts)
    ET.indent(root)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
