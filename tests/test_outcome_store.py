"""Issue 30 item 2: listings in constant memory per outcome. A state is held as one packed int
from the solver to the report (outcomes.pack_values, PackedStates), the ints sort as the states
do, JSON is written as the outcomes are decoded (byte-identical to json.dumps of the whole
record), and the enumeration limit has its own option (--outcome-limit, 0: no limit) whose
stopping short is said in the verdict line and the summary (docs/ci.md: exit codes)."""

import io
import json
import os
import pickle
import sys

from click.testing import CliRunner

from amdmm_smt.cli import main
from amdmm_smt.outcomes import PackedStates, pack_values, state_sort_key, unpack_values
from amdmm_smt.report import table

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
from families import sb_ring  # noqa: E402

VALUES = [None, 0, 1, -1, 2, 7, -2 ** 31, 2 ** 31 - 1, 12345, -77]


def test_packed_ints_round_trip_and_sort_as_the_states_do():
    import itertools
    keys = ["T0:%a", "T1:%b", "@x"]
    states = [tuple(zip(keys, vals)) for vals in itertools.product(VALUES, repeat=3)]
    for st in states:
        assert unpack_values(pack_values(v for _, v in st), 3) == tuple(v for _, v in st)
    ps = PackedStates.of(keys, reversed(states))
    assert list(ps) == sorted(states, key=state_sort_key)      # undef after every number
    assert ps == sorted(states, key=state_sort_key) and len(ps) == len(states)
    assert ps[3] == sorted(states, key=state_sort_key)[3]
    assert ps[2:5] == sorted(states, key=state_sort_key)[2:5]
    assert pickle.loads(pickle.dumps(ps)) == ps
    assert PackedStates([], [0]) == [()] and not PackedStates(keys, [])


def _sb(tmp_path, n: int, extra: str = "") -> str:
    p = tmp_path / f"sb{n}.yaml"
    p.write_text(sb_ring(n) + extra)
    return str(p)


def test_outcome_limit_stops_the_listing_and_the_verdict_line_says_so(tmp_path):
    f = _sb(tmp_path, 5)                       # 32 outcomes; exists: every read 0, allowed
    r = CliRunner().invoke(main, ["verify", "--no-timing", "--outcome-limit", "7", f])
    assert r.exit_code == 0, r.output          # the exists claim is proved by its own query
    assert "proved by its own query, the listing is incomplete" in r.output
    assert "listing incomplete: stopped at 7 outcomes" in r.output
    assert "1 passed (1 with an incomplete listing)" in r.output
    r = CliRunner().invoke(main, ["verify", "--json", "--no-timing", "--outcome-limit", "7", f])
    rec = json.loads(r.output)
    assert not rec["complete"] and rec["why"] == "stopped at 7 outcomes"
    assert len(rec["outcomes"]) == 7
    r = CliRunner().invoke(main, ["verify", "--json", "--no-timing", "--outcome-limit", "0", f])
    rec = json.loads(r.output)
    assert rec["complete"] and len(rec["outcomes"]) == 32 and "why" not in rec


def test_a_claim_that_needs_the_whole_listing_is_unknown_when_it_stops_short(tmp_path):
    # the `outcomes:` list is judged from the listing: a partial listing cannot pass it
    f = _sb(tmp_path, 2, 'outcomes:\n  - "T0:%r == 0 && T1:%r == 0"\n')
    r = CliRunner().invoke(main, ["verify", "--no-timing", "--outcome-limit", "1", f])
    assert r.exit_code == 1, r.output
    assert "outcomes: unknown" in r.output and "0 passed" in r.output


def test_json_is_written_as_decoded_and_byte_identical(tmp_path):
    f = _sb(tmp_path, 6)
    r = CliRunner().invoke(main, ["verify", "--json", "--no-timing", f])
    line = r.output
    rec = json.loads(line)
    assert len(rec["outcomes"]) == 64
    assert line == json.dumps(rec, sort_keys=True) + "\n"
    out = io.StringIO()
    table.print_json([{"b": 1, "outcomes": table.Outcomes([]), "a": [1, 2]}], out)
    assert out.getvalue() == json.dumps({"a": [1, 2], "b": 1, "outcomes": []},
                                        sort_keys=True) + "\n"


def test_a_listing_longer_than_a_cell_is_printed_whole_after_the_table(tmp_path, monkeypatch):
    monkeypatch.setattr(table, "CELL_MAX", 5)
    f = _sb(tmp_path, 4)                          # 16 outcomes
    wide = CliRunner().invoke(main, ["verify", "--no-timing", "--max-outcomes", "0", f],
                              env={"COLUMNS": "200"})
    assert "all 16 are listed after the table" in wide.output
    after = wide.output.split("allowed outcomes of SB-ring-4 (16):", 1)[1]
    assert after.count("T0:%r == ") == 16
    narrow = CliRunner().invoke(main, ["verify", "--no-timing", "--max-outcomes", "0", f],
                                env={"COLUMNS": "80"})
    assert narrow.output.count("T0:%r == ") == 16
    lines = [ln.strip() for ln in narrow.output.splitlines() if ln.startswith("    T0:")]
    assert lines == sorted(lines, key=lambda s: [int(p.rsplit(" ", 1)[1])
                                                 for p in s.split(" && ")])
