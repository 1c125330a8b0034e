"""Issue 30 item 4: the suite in two tiers. `-m "not long"` (the fast tier, README) must never
collect nothing, and must keep a test from every test file: each file covers a behaviour, and
the long tier only runs more cases of it (tests/conftest.py `tier`, `tiered`)."""

import glob
import os
import re
import subprocess
import sys

from .conftest import COLLECTED

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FILES = {os.path.relpath(f, ROOT) for f in glob.glob(os.path.join(ROOT, "tests", "test_*.py"))}


def _file(nodeid: str) -> str:
    return nodeid.split("::")[0]


def _check(fast: list, long: int) -> None:
    have = {_file(n) for n in fast}
    assert FILES <= have, sorted(FILES - have)
    assert long > 0 and fast


def test_the_fast_tier_keeps_a_test_from_every_file_and_the_long_tier_is_marked(request):
    # the session's own collection when it collected every test file (tests/conftest.py
    # COLLECTED: the fast tier's run and .ci/run's collect the whole suite); otherwise (a run
    # of some files) one collection of the suite in a subprocess
    mine = [(it.nodeid, is_long) for it, is_long in request.config.stash.get(COLLECTED, [])]
    if mine and FILES <= {_file(n) for n, _ in mine}:
        fast = [n for n, is_long in mine if not is_long]
        _check(fast, len(mine) - len(fast))
        if request.config.option.markexpr == "not long" and not request.config.option.keyword:
            # and it is what `-m "not long"` kept: the session runs exactly the unmarked ones
            assert sorted(it.nodeid for it in request.session.items) == sorted(fast)
        return
    p = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                        "-p", "no:cacheprovider", "-m", "not long"], cwd=ROOT,
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    fast = [ln for ln in p.stdout.splitlines() if "::" in ln]
    m = re.search(r"(\d+)/(\d+) tests collected \((\d+) deselected\)", p.stdout)
    assert m, p.stdout[-500:]
    kept, total, long = map(int, m.groups())
    assert kept == len(fast)
    _check(fast, long)


def test_the_marker_is_registered():
    text = open(os.path.join(ROOT, "pyproject.toml")).read()
    assert 'markers = ["long:' in text
