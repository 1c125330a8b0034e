"""The model-file fuzzer (tests/fuzz_model.py) on a small count: mutated shipped model files
(tokens and lines deleted, duplicated, swapped, replaced; truncation) through `model check` and
`verify --model`: accepted, or one line `FILE:LINE: problem` and exit 2; never a traceback, an
internal error or a hang. The long run is `python3 tests/fuzz_model.py --count 2000`."""

import os
import random

import pytest

from tests.fuzz_model import CATS, ROOT, check_one, make_case, mutate, run


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


MP = "litmus/classic/MP+mono.agent.diff-wg.yaml"


@pytest.mark.parametrize("cmd", [
    ["diff", "--from", "models/seed.cat", "--to", "{f}", MP],
    ["diff", "--from", "{f}", "--to", "seed", MP],
    ["synth", "--from", "models/seed.cat", "--to", "{f}"],
    ["synth", "--from", "{f}", "--option", "read_lo=true"],
    ["lint", "--model", "{f}", MP],
    ["explain", "--model", "{f}", MP],
    ["verify", "--model", "{f}", MP],
    ["model", "check", "{f}"]])
def test_a_bad_model_file_is_one_line_up_front_in_every_command(tmp_path, cmd):
    """Found by the fuzzer: `diff --to BAD.cat` ended in a traceback, `synth --to BAD.cat` ran
    on (every program failed) and `lint --model BAD.cat` said nothing; each now checks the
    file before any test, one line FILE:LINE, exit 2."""
    from click.testing import CliRunner
    from amdmm_smt.cli import main
    f = tmp_path / "bad.cat"
    f.write_text('include "seed.cat"\nlet x = (\n')
    args = [a.replace("{f}", str(f)) if a == "{f}" else
            (os.path.join(ROOT, a) if "/" in a else a) for a in cmd]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 2, r.output
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].endswith(
        "bad.cat:3: expected a name, '(', '[' or an operator's operand (found end of file)"), lines
