"""The whole-CLI fuzzer (tests/fuzz.py) on a small count: every input class of issue 8 (mutated
files, stray characters in conditions, huge names, bad option values, bad model files, special
files), no traceback, no internal error, no error without a line, no hang. The long run is
`python3 tests/fuzz.py --count 10000`."""

from tests.fuzz import run


def test_fuzz_cli_small():
    rep = run(200, seed=8)
    assert set(rep["kinds"]) == {"mutate", "bytes", "condition", "huge", "option", "model",
                                 "model-named", "special"}
    found = {k: [(i, kind, d) for i, kind, d, _ in v][:3] for k, v in rep["findings"].items()}
    assert not found, found
