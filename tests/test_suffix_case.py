"""File extensions in any case (issue 22 item 10): `*.LITMUS` was collected by `verify` but
parsed as YAML, and skipped silently by `import-herd`; `--model M.YAML` was looked up as a
built-in model name. Every command treats the extension case-insensitively."""

import os
import shutil

from click.testing import CliRunner

from amdmm_smt.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MP = os.path.join(ROOT, "litmus", "herd", "MP+rel-acq.dev.diff-wg.litmus")
SEED = os.path.join(ROOT, "amdmm_smt", "models", "seed.yaml")


def test_upper_case_litmus_everywhere(tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    shutil.copy(MP, d / "MP.LITMUS")
    shutil.copy(MP, d / "Sb.Litmus")
    for args in (["verify", str(d)], ["verify", "--engine", "reference", str(d)],
                 ["lint", str(d)], ["verify", str(d / "MP.LITMUS")]):
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 0, (args, r.output)
        assert "bad YAML" not in r.output
    r = CliRunner().invoke(main, ["explain", str(d / "MP.LITMUS")])
    assert "bad YAML" not in r.output and r.exit_code in (0, 1), r.output
    r = CliRunner().invoke(main, ["import-herd", "-o", str(tmp_path / "out"), str(d)])
    assert r.exit_code == 0, r.output
    assert sorted(os.listdir(tmp_path / "out")) == ["MP.yaml", "Sb.yaml"]


def test_upper_case_model_file(tmp_path):
    shutil.copy(SEED, tmp_path / "M.YAML")
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        r = CliRunner().invoke(main, ["verify", "--model", "M.YAML",
                                      os.path.join(ROOT, "litmus", "classic",
                                                   "MP+mono.agent.diff-wg.yaml")])
    finally:
        os.chdir(cwd)
    assert r.exit_code == 0, r.output
