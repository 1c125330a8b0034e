"""Issue 30 item 4: the suite in two tiers. `-m "not long"` (the fast tier, README) must never
collect nothing, and must keep a test from every test file: each file covers a behaviour, and
the long tier only runs more cases of it (tests/conftest.py `tier`, `tiered`)."""

import glob
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_the_fast_tier_keeps_a_test_from_every_file_and_the_long_tier_is_marked():
    # one collection (the suite's modules are imported once): the tests kept, and how many
    # `long` deselected
    p = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                        "-p", "no:cacheprovider", "-m", "not long"], cwd=ROOT,
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    fast = [ln for ln in p.stdout.splitlines() if "::" in ln]
    files = {os.path.relpath(f, ROOT) for f in glob.glob(os.path.join(ROOT, "tests",
                                                                        "test_*.py"))}
    have = {ln.split("::")[0] for ln in fast}
    assert files <= have, sorted(files - have)
    m = re.search(r"(\d+)/(\d+) tests collected \((\d+) deselected\)", p.stdout)
    assert m, p.stdout[-500:]
    kept, total, long = map(int, m.groups())
    assert kept == len(fast) and long > 0 and kept > 0


def test_the_marker_is_registered():
    text = open(os.path.join(ROOT, "pyproject.toml")).read()
    assert 'markers = ["long:' in text
