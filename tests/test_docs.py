"""The documents say what the tool does (issue 16 item 6): each claim below is one a user acts
on, checked against the tool itself."""

from __future__ import annotations

import os
import re
import shutil

from click.testing import CliRunner

from amdmm_smt.cli import main
from amdmm_smt.errors import ALL_WARNINGS

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def read(*p) -> str:
    return open(os.path.join(ROOT, *p), encoding="utf-8").read()


def test_litmus_format_lists_every_warning_code():
    doc = read("docs", "litmus-format.md")
    table = doc[doc.index("| code | what it means |"):]
    table = table[:table.index("\n\n")]
    listed = set(re.findall(r"^\| `([a-z-]+)` \|", table, re.M))
    assert listed == set(ALL_WARNINGS)


def test_the_readme_does_not_call_herd_import_straight_line():
    readme = read("README.md")
    assert "straight-line code for now" not in readme
    assert "`while`, `goto`" in readme


def test_herd_import_doc_does_not_say_barriers_are_refused(tmp_path):
    doc = read("docs", "herd-import.md")
    assert "refuses `@llvm.amdgcn.s.barrier`" not in doc
    # and they do verify: an OpenCL barrier() between two work-items of one work-group
    t = tmp_path / "MP+barrier.litmus"
    t.write_text("OpenCL MP+barrier\n{ [x]=0; }\n"
                 "P0@wg 0 (global int* x) {\n  *x = 1;\n  barrier(CLK_GLOBAL_MEM_FENCE);\n}\n"
                 "P1@wg 0 (global int* x) {\n  barrier(CLK_GLOBAL_MEM_FENCE);\n"
                 "  int r0 = *x;\n}\nexists (1:r0=0)\n")
    r = CliRunner().invoke(main, ["verify", "--json", "--no-timing", str(t)])
    assert r.exit_code == 0, r.output
    assert '"P1:%r0": 1' in r.output and '"P1:%r0": 0' not in r.output, r.output


def test_litmus_readme_names_the_files_lint_warns_on():
    r = CliRunner().invoke(main, ["lint", "--json", os.path.join(ROOT, "litmus")])
    assert r.exit_code == 0, r.output
    import json
    recs = [json.loads(ln) for ln in r.output.splitlines() if ln.startswith("{")]
    files = {os.path.relpath(w["file"], os.path.join(ROOT, "litmus")) for w in recs}
    readme = read("litmus", "README.md")
    assert f"the {len(recs)} warnings" in readme
    for f in files:
        assert f"`{f}`" in readme, f
    assert all(f.endswith(".litmus") for f in files)      # the YAML tests lint clean


def test_ci_doc_diff_command_works_with_a_model_file(tmp_path):
    doc = read("docs", "ci.md")
    m = re.search(r"^amdmm-smt diff (.*?)\s+#", doc, re.M)
    args = m.group(1).split()
    os.makedirs(tmp_path / "models")
    shutil.copy(os.path.join(ROOT, "models", "upstream-2026.yaml"),
                tmp_path / "models" / "my-model.yaml")
    shutil.copytree(os.path.join(ROOT, "litmus", "models"), tmp_path / "litmus")
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        r = CliRunner().invoke(main, ["diff", *args, "--no-explain"])
    finally:
        os.chdir(cwd)
    assert r.exit_code in (0, 1), r.output
    assert "tests compared" in (tmp_path / "diff.md").read_text()


def _yaml_blocks(text: str) -> list:
    return re.findall(r"```yaml\n(.*?)```", text, re.S)


def test_readme_loop_with_barriers_verifies(tmp_path):
    """issue 18: the README's loop with a barrier verifies as it says (forbidden: W1's sum is
    always 3), and dropping its write-after-read barrier finds the race (the sum can be
    something else: the first read races with the second store)."""
    readme = read("README.md")
    block = next(b for b in _yaml_blocks(readme) if "s.barrier" in b and "br label" in b)
    f = tmp_path / "loop.yaml"
    f.write_text(block)
    r = CliRunner().invoke(main, ["verify", "--no-timing", str(f)])
    assert r.exit_code == 0, r.output
    racy = "\n".join(ln for ln in block.splitlines()
                     if "write-after-read" not in ln).replace(
        '        fence syncscope("workgroup") release\n        call void @llvm.amdgcn.s.barrier()'
        '\n        fence syncscope("workgroup") acquire\n        %c', "        %c")
    f.write_text(racy)
    r = CliRunner().invoke(main, ["verify", "--no-timing", str(f)])
    assert r.exit_code == 1 and "condition reachable" in r.output, r.output


def test_litmus_format_pipeline_loop_is_the_corpus_file():
    doc = read("docs", "litmus-format.md")
    pipe = read("litmus", "async", "async-pipeline-2waves-war-barrier.yaml")
    assert any(b == pipe[pipe.index("unroll: 2"):] for b in _yaml_blocks(doc))
