"""The whole-CLI fuzzer (tests/fuzz.py) on a small count: every input class of issue 8 (mutated
files, stray characters in conditions, huge names, bad option values, bad model files, special
files) and of issue 22 item 12 (every command: verify with both engines and --decide-only,
explain, lint, diff, import-herd; every family of seeds, the herd .litmus files included, also
named *.LITMUS; deep programs; odd test names): no traceback, no internal error, no error
without a line, no hang, no limit overrun, no control character echoed. The long run is
`python3 tests/fuzz.py --count 10000`."""

from tests.conftest import count
from tests.fuzz import COMMANDS, FAMILIES, run


def test_fuzz_cli_small(tier):
    # the fast tier: the first 36 inputs of seed 63 already meet every kind, command and
    # family (seed 8, the long tier's, needs 98 for that); the assertions below check it
    rep = run(count(tier, 300, 36), seed=8 if tier == "long" else 63)
    assert set(rep["kinds"]) == {"mutate", "bytes", "condition", "huge", "option", "model",
                                 "model-named", "special", "command", "herd", "deep", "name"}
    assert set(COMMANDS) <= set(rep["commands"]), rep["commands"]
    assert set(FAMILIES) | {"herd", "deep"} <= set(rep["families"]), rep["families"]
    assert {"barrier", "async", "cflow"} <= set(FAMILIES)
    found = {k: [(i, kind, d) for i, kind, d, _ in v][:3] for k, v in rep["findings"].items()}
    assert not found, found
