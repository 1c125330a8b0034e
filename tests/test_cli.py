"""CLI behaviour a CI can trust: exit codes, JSON, one-line errors, no tracebacks."""

import json
import subprocess
import sys

from click.testing import CliRunner

from amdmm_smt.cli import main

MP = """
name: {name}
memory: {{x: {{}}, y: {{}}}}
threads:
  T0:
    workgroup: 0
    code: |
      store i32 1, ptr addrspace(1) @x
      store atomic i32 1, ptr addrspace(1) @y syncscope("agent") release
  T1:
    workgroup: 1
    code: |
      %r0 = load atomic i32, ptr addrspace(1) @y syncscope("agent") acquire
      %r1 = load i32, ptr addrspace(1) @x
exists: "T1:%r0 == 1 && T1:%r1 == 0"
expect: {expect}
"""


def run(*args):
    r = CliRunner().invoke(main, list(args))
    return r.exit_code, r.output


def test_pass_exit_0(write):
    code, out = run("verify", write(MP.format(name="mp", expect="forbidden")))
    assert code == 0, out
    assert "1 passed" in out


def test_failing_expectation_exit_1(write):
    code, out = run("verify", write(MP.format(name="mp", expect="allowed")))
    assert code == 1
    assert "1 failed" in out


def test_wrong_outcomes_listed(write):
    p = write(MP.format(name="mp", expect="forbidden") +
              'outcomes: ["T1:%r0 == 1 && T1:%r1 == 1"]\n')
    code, out = run("verify", p)
    assert code == 1
    assert "allowed but not expected: T1:%r0 == 0 && T1:%r1 == undef" in out


def test_missing_path_exit_2():
    code, out = run("verify", "/no/such/path.yaml")
    assert code == 2


def test_malformed_file_exit_2_one_line(write):
    p = write(MP.format(name="mp", expect="forbidden").replace("store i32 1", "stor i32 1"))
    proc = subprocess.run([sys.executable, "-m", "amdmm_smt.cli", "verify", p],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr + proc.stdout
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert lines == [f"{p}:7: unknown or malformed instruction 'stor i32 1, ptr addrspace(1) "
                     f"@x' ('stor' is not a supported instruction)"]


def test_duplicate_names_both_run_qualified_by_path(write, tmp_path):
    """Issue 19 item 1: peer corpora reuse names across files; every file runs, each test
    shown as PATH::NAME in the table, JSON, JUnit and diff, with a warning."""
    import json
    a = write(MP.format(name="same", expect="forbidden"), "a.yaml")
    b = write(MP.format(name="same", expect="forbidden"), "b.yaml")
    code, out = run("verify", a, b)
    assert code == 0, out
    assert "2 tests: 2 passed" in out
    assert f"warning[duplicate-name]: test name 'same' is also the name of the test in {b}" in out
    code, out = run("verify", "--json", "--no-timing", a, b)
    names = [json.loads(ln)["name"] for ln in out.splitlines() if ln.startswith("{")]
    assert names == [f"{a}::same", f"{b}::same"]
    j = tmp_path / "j.xml"
    code, out = run("verify", "--junit", str(j), a, b)
    assert f'name="{a}::same"' in j.read_text() and f'name="{b}::same"' in j.read_text()
    code, out = run("diff", "--from", "seed", "--to", "upstream-2026", "--no-explain", a, b)
    assert code in (0, 1) and f"{a}::same" in out and f"{b}::same" in out, out


def test_unsupported_is_exit_2_not_a_silent_answer(write, monkeypatch):
    """What the tool cannot decide is refused (exit 2), never answered: today only a barrier
    test whose runs are too many to enumerate (encode/barrier.py MAX_STATES, lowered here)."""
    import amdmm_smt.encode.barrier as bar
    monkeypatch.setattr(bar, "MAX_STATES", 1)
    p = write(MP.format(name="mp", expect="forbidden").replace(
        "store i32 1, ptr addrspace(1) @x", "call void @llvm.amdgcn.s.barrier.signal(i32 -1)"))
    code, out = run("verify", p)
    assert code == 2
    assert "not supported yet" in out


def test_json_records(write, tmp_path):
    write(MP.format(name="b-test", expect="forbidden"), "b.yaml")
    write(MP.format(name="a-test", expect="forbidden") +
          'outcomes: ["T1:%r0 == 0 && T1:%r1 == undef", "T1:%r0 == 1 && T1:%r1 == 1"]\n',
          "a.yaml")
    code, out = run("verify", "--json", "--no-timing", str(tmp_path))
    assert code == 0
    recs = [json.loads(line) for line in out.splitlines()]
    assert [r["name"] for r in recs] == ["a-test", "b-test"]
    a = recs[0]
    assert a["model"] == "seed" and a["status"] == "pass"
    assert a["outcomes"] == [{"T1:%r0": 0, "T1:%r1": "undef"}, {"T1:%r0": 1, "T1:%r1": 1}]
    assert {v["kind"] for v in a["verdicts"]} == {"exists", "outcomes"}
    code2, out2 = run("verify", "--json", "--no-timing", str(tmp_path))
    assert out2 == out          # deterministic


def test_without_expectation_prints_outcomes(write):
    p = write(MP.format(name="mp", expect="forbidden").split("exists:")[0])
    code, out = run("verify", p)
    assert code == 0
    assert "T1:%r0 == 0 && T1:%r1 ==" in out


def test_models_command():
    code, out = run("models")
    assert code == 0 and "seed" in out
    # every option, with its values, the default first
    from dataclasses import fields
    from amdmm_smt.model import CHOICES, Options
    for f in fields(Options):
        assert f"    {f.name}: " in out, f.name
    for name, values in CHOICES.items():
        line = next(ln for ln in out.splitlines() if ln.startswith(f"    {name}: "))
        assert set(line.split(": ", 1)[1].split(" | ")) == set(values), line
        assert line.split(": ", 1)[1].startswith(str(getattr(Options(), name))), line


def test_solver_giving_up_is_unknown_exit_1(write, monkeypatch):
    """A test the solver cannot decide is reported unknown and fails the gate."""
    import z3
    monkeypatch.setattr(z3.Solver, "check", lambda self, *a: z3.unknown)
    code, out = run("verify", write(MP.format(name="mp", expect="forbidden")))
    assert code == 1
    assert "unknown" in out and "0 passed" in out


def test_memory_option_is_accepted(write):
    code, out = run("verify", "--memory", "512", write(MP.format(name="mp", expect="forbidden")))
    assert code == 0, out


def test_the_cli_default_max_outcomes_is_the_tables():
    # cli.py keeps its own copy so that `--help` does not import the report (start-up)
    from amdmm_smt import cli
    from amdmm_smt.report import table
    assert cli.MAX_OUTCOMES == table.MAX_OUTCOMES


def test_status_column_keeps_unknown_apart_from_the_name():
    """Issue 28 item 7: `unknown` is seven letters, the column was seven wide: the narrow
    view printed `unknownNAME`. Every status is followed by at least one space, and the
    names start in one column."""
    import io
    from rich.console import Console
    from amdmm_smt.frontend.litmus import parse_text
    from amdmm_smt.model import get_model
    from amdmm_smt.outcomes import limit_result
    from amdmm_smt.report.table import print_table
    from amdmm_smt.solve import run_test
    text = ("name: {}\nmemory:\n  x: {{}}\nthreads:\n  T0:\n    workgroup: 0\n    code: |\n"
            "      %r = load atomic i32, ptr addrspace(1) @x syncscope(\"agent\") monotonic\n"
            "exists: \"T0:%r == 0\"\nexpect: allowed\n")
    model = get_model(None)
    ok = run_test(parse_text(text.format("PASSNAME"), "a.yaml"), model)
    stopped = limit_result(parse_text(text.format("UNKNOWNNAME"), "b.yaml"), model,
                           "timeout after 1 s during solving", 1.0)
    assert (ok.status, stopped.status) == ("pass", "unknown")
    out = io.StringIO()
    print_table([ok, stopped], [], Console(file=out, width=60, color_system=None),
                timing=False)
    lines = out.getvalue().splitlines()
    heads = [ln for ln in lines if ln.endswith("NAME")]
    assert heads == ["pass    PASSNAME", "unknown UNKNOWNNAME"], lines


_FROZEN = r"""
import atexit, gc, sys
atexit.register(lambda: print("frozen", gc.get_freeze_count() > 0, flush=True))
from amdmm_smt.cli import main
if sys.argv[1] == "runner":
    from click.testing import CliRunner
    r = CliRunner().invoke(main, ["verify", sys.argv[2]])
    print("code", r.exit_code, flush=True)
else:
    sys.argv = ["amdmm-smt", "verify", sys.argv[2]]
    main()
"""


def test_the_process_freezes_its_objects_before_it_exits_and_a_caller_of_main_does_not(
        tmp_path):
    """The console script's process, its command done, freezes its objects out of Python's
    garbage collector before it exits (the interpreter's exit then does not walk them again and
    again: 0.1 s after a --dask run); the verdict and exit code are those of the command. A
    program that calls main with its own args (click's runner here) goes on living: nothing
    of it is frozen."""
    p = tmp_path / "mp.yaml"
    p.write_text(MP.format(name="MP", expect="forbidden"))
    own = subprocess.run([sys.executable, "-c", _FROZEN, "own", str(p)], capture_output=True,
                         text=True, timeout=120)
    assert own.returncode == 0 and "MP" in own.stdout and "pass" in own.stdout, own
    assert own.stdout.strip().splitlines()[-1] == "frozen True"
    runner = subprocess.run([sys.executable, "-c", _FROZEN, "runner", str(p)],
                            capture_output=True, text=True, timeout=120)
    assert runner.stdout.strip().splitlines()[-2:] == ["code 0", "frozen False"], runner


def test_a_pipe_broken_inside_the_run_ends_the_command_not_its_caller(monkeypatch):
    """An EPIPE that is not stdout's (a worker's pipe, a Dask connection) used to end the
    process at once with 141, as if the reader of stdout had gone: a program calling main
    (click's runner here, a test worker) died with no word. It is now one line on stderr and
    exit 1 (the run incomplete), and the caller goes on; stdout's own broken pipe is still
    141 (tests/test_faults.py)."""
    import amdmm_smt.model as model

    def broken():
        raise BrokenPipeError(32, "Broken pipe")
    monkeypatch.setattr(model, "list_models", broken)
    r = CliRunner().invoke(main, ["models"])
    assert r.exit_code == 1, r.output
    assert "a pipe inside the run broke" in r.output and "Traceback" not in r.output
