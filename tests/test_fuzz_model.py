"""The model-file fuzzer (tests/fuzz_model.py) on a small count: mutated shipped model files
(tokens and lines deleted, duplicated, swapped, replaced; truncation) through `model check` and
`verify --model`: accepted, or one line `FILE:LINE: problem` and exit 2; never a traceback, an
internal error or a hang. The long run is `python3 tests/fuzz_model.py --count 2000`."""

import random

from tests.fuzz_model import CATS, check_one, make_case, mutate, run


def test_fuzz_model_files_small():
    rep = run(120, seed=27)
    found = {k: [(i, cmd, d) for i, cmd, d, _ in v][:3] for k, v in rep["findings"].items()}
    assert not found, found
    # both answers occur: mutations the checker refuses and ones it accepts
    assert rep["status"].get(2, 0) > 0 and rep["status"].get(0, 0) + rep["status"].get(1, 0) > 0


def test_the_mutator_changes_the_text_and_covers_every_shipped_file():
    rnd = random.Random(3)
    texts = [open(c, encoding="utf-8").read() for c in CATS]
    assert len(CATS) >= 3
    changed = sum(mutate(rnd, t) != t for t in texts for _ in range(20))
    assert changed >= 0.9 * 20 * len(texts)
    fams = {make_case(rnd).family for _ in range(200)}
    assert fams == {c.rsplit("/", 1)[-1] for c in CATS}


def test_the_checker_flags_a_line_less_error(tmp_path):
    """The contract the fuzzer checks can fail: a model file that is not a .cat name is
    refused by a message without a model line (it is a built-in model name)."""
    from tests.fuzz import Case
    case = Case("verify-model", ["verify", "--model", "{f}", "nosuch-test.yaml"], "x",
                fname="m.yaml")
    verdict, _, code = check_one(case, str(tmp_path))
    assert code == 2 and verdict in ("error without a line", "not one line"), verdict
