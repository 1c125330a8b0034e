"""Deep programs (issue 22 item 8): a loop of many blocks under a large `unroll`, and `if`
statements nested far, either verify or are refused as `FILE:LINE: too deep (...)`, exit 2;
never `internal error ... RecursionError`, never an error without a line."""

from click.testing import CliRunner

from amdmm_smt.cli import main
from amdmm_smt.elaborate.cflow import thread_paths
from amdmm_smt.frontend.litmus import parse_text

G = "ptr addrspace(1)"


def loop_test(blocks: int, unroll: int) -> str:
    code = ["entry:", "  br label %b0"]
    for i in range(blocks - 1):
        code += [f"b{i}:", f"  br label %b{i + 1}"]
    code += [f"b{blocks - 1}:",
             f'  %f = load atomic i32, {G} @flag syncscope("agent") acquire, align 4',
             "  %c = icmp eq i32 %f, 0", "  br i1 %c, label %b0, label %done",
             "done:", f"  %r = load i32, {G} @x"]
    body = "".join(f"      {ln}\n" for ln in code)
    return (f"name: loop{blocks}\nunroll: {unroll}\nbound: assume\nmemory:\n"
            "  x: {space: global, init: 0}\n  flag: {space: global, init: 0}\nthreads:\n"
            "  P0:\n    workgroup: 0\n    code: |\n"
            f"      store i32 1, {G} @x\n"
            f'      store atomic i32 1, {G} @flag syncscope("agent") release, align 4\n'
            "  P1:\n    workgroup: 1\n    code: |\n" + body +
            'exists: "P1:%r == 0"\nexpect: forbidden\n')


def test_unrolling_a_long_loop_is_not_recursive():
    # 16 blocks at unroll 64: paths 1024 blocks long (RecursionError before the fix)
    t = parse_text(loop_test(16, 64), "loop.yaml")
    paths = thread_paths(t.threads[1], 64, "loop.yaml")
    assert len(paths) == 65                  # leave after 1..64 rounds, or cut by the bound
    assert sum(p.bound is not None for p in paths) == 1
    # the order of the recursive walk (branch taken first): the cut path, then leaving
    # after 64, 63, ... 1 rounds
    assert paths[0].bound is not None
    assert [len(p.code) for p in paths[1:]] == sorted((len(p.code) for p in paths[1:]),
                                                      reverse=True)


def test_long_loop_verifies(tmp_path):
    f = tmp_path / "loop.yaml"
    f.write_text(loop_test(16, 24))
    r = CliRunner().invoke(main, ["verify", "--timeout", "120", str(f)])
    assert r.exit_code == 0, r.output
    assert "RecursionError" not in r.output and "internal error" not in r.output


def _nested_if(n: int) -> str:
    body = "".join("  if (r0 == 0) {\n" for _ in range(n))
    body += "  r1 = atomic_load_explicit(x, memory_order_relaxed, memory_scope_device);\n"
    body += "  }\n" * n
    return ("OpenCL deep\n{ x=0; f=0; }\n"
            "P0@wg 0, dev 0 (global atomic_int* x, global atomic_int* f) {\n"
            "  atomic_store_explicit(x, 1, memory_order_relaxed, memory_scope_device);\n}\n"
            "P1@wg 1, dev 0 (global atomic_int* x, global atomic_int* f) {\n"
            "  int r0;\n  int r1 = 0;\n"
            "  r0 = atomic_load_explicit(f, memory_order_acquire, memory_scope_device);\n"
            + body + "}\nexists (1:r1 == 0)\n")


def test_deeply_nested_if_is_too_deep_with_a_line(tmp_path):
    f = tmp_path / "deep.litmus"
    f.write_text(_nested_if(1000))
    r = CliRunner().invoke(main, ["verify", str(f)])
    assert r.exit_code == 2, r.output
    assert f"{f}:74: too deep (statements nest more than 64 levels" in r.stderr, r.stderr


def test_deeply_nested_blocks_are_too_deep_with_a_line(tmp_path):
    f = tmp_path / "braces.litmus"
    f.write_text("OpenCL b\n{ x=0; }\nP0@wg 0, dev 0 (global atomic_int* x) {\n  int r1;\n"
                 + "{" * 1000 + "r1 = 1;" + "}" * 1000 + "\n}\nexists (0:r1 == 0)\n")
    for cmd in (["verify"], ["lint"]):
        r = CliRunner().invoke(main, [*cmd, str(f)])
        assert r.exit_code == 2, r.output
        assert f"{f}:5: too deep (" in r.stderr, r.stderr


def test_nested_if_within_the_bound_imports(tmp_path):
    f = tmp_path / "d.litmus"
    f.write_text(_nested_if(3))
    r = CliRunner().invoke(main, ["verify", str(f)])
    assert r.exit_code == 0, r.output
