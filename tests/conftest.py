import os
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LITMUS = os.path.join(ROOT, "litmus")


@pytest.fixture
def write(tmp_path):
    """Write a litmus file from a dedented string; returns its path."""
    def _write(text: str, name: str = "t.yaml") -> str:
        p = tmp_path / name
        p.write_text(textwrap.dedent(text).lstrip("\n"))
        return str(p)
    return _write


# ---- the two tiers (issue 30 item 4; README, docs/ci.md) ------------------------------------
# A generator-driven test that takes `tier` runs twice: "fast" with a small count (the fast
# tier, `-m "not long"`) and "long" with its full count, marked `long`. Slow tests with nothing
# to scale are marked `long` themselves and have a fast counterpart that covers the behaviour.

def pytest_generate_tests(metafunc):
    if "tier" in metafunc.fixturenames:
        metafunc.parametrize("tier", [pytest.param("fast", id="fast"),
                                      pytest.param("long", id="long", marks=pytest.mark.long)])


def count(tier: str, full: int, fast: int) -> int:
    """The number of generated cases for a tier."""
    return full if tier == "long" else min(fast, full)


def tiered(full: int, fast: int, **settings_kw):
    """A Hypothesis test (already @given) run with `fast` examples in the fast tier and `full`
    in the long tier: the decorated test takes `tier` (pytest_generate_tests above)."""
    from hypothesis import settings

    def deco(test):
        def run(tier):
            # settings() marks the function it decorates; each tier decorates it afresh (the
            # same function runs in both tiers of one session)
            if hasattr(test, "_hypothesis_internal_settings_applied"):
                del test._hypothesis_internal_settings_applied
            settings(max_examples=count(tier, full, fast), **settings_kw)(test)()
        run.__name__, run.__doc__, run.__module__ = test.__name__, test.__doc__, test.__module__
        return run
    return deco


def sampled(values, every: int, offset: int = 0, heavy=(), key=None) -> list:
    """Parameters for a gate over many cases (corpus tests, option files x corpus tests): every
    `every`-th value from `offset` runs in the fast tier and the others are marked `long`, as
    is every value whose `key` (the value itself by default) is in `heavy` (a case that costs
    tens of seconds: its behaviour is covered by cheaper cases in the fast tier). Gates over
    the same corpus take different offsets, so that the fast tier still meets each case under
    some gate; the long tier (and `.ci/run`) runs every value."""
    out = []
    for k, v in enumerate(values):
        args = v if isinstance(v, tuple) else (v,)
        name = "-".join(map(str, args))
        fast = (k - offset) % every == 0 and (key(v) if key else v) not in heavy
        out.append(pytest.param(*args, id=name, marks=() if fast else pytest.mark.long))
    return out


# ---- the session's own collection (tests/test_tiers.py) --------------------------------------
# Every item the session collected, before `-m` / `-k` deselect any, with whether it is in the
# long tier: a session that collected the whole suite (the fast tier's run, .ci/run's) lets
# tests/test_tiers.py check the tiers on it instead of collecting the suite again.
COLLECTED = pytest.StashKey[list]()


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session, config, items):
    # the items themselves: a later hook may rename them (xdist's loadgroup appends
    # "@group" to the node ids of an xdist_group)
    config.stash[COLLECTED] = [(it, it.get_closest_marker("long") is not None)
                               for it in items]
