"""`verify --dask` / `diff --dask` on a 2-worker LocalCluster give byte-identical output to a
local run (issue 13 item 5)."""

import os

import pytest
from click.testing import CliRunner

from amdmm_smt.cli import main

pytest.importorskip("dask.distributed")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLASSIC = os.path.join(ROOT, "litmus", "classic")


def run(*args):
    r = CliRunner().invoke(main, list(args))
    return r.exit_code, r.output


def test_verify_and_diff_on_a_local_cluster_match_a_local_run():
    """One 2-worker LocalCluster, reached by its address as a remote scheduler would be."""
    from dask.distributed import LocalCluster
    files = sorted(os.path.join(CLASSIC, f) for f in os.listdir(CLASSIC))[:12]
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster:
        addr = cluster.scheduler_address
        local = run("verify", "--json", "--no-timing", *files)
        dask = run("verify", "--json", "--no-timing", "--dask", addr, *files)
        assert local[0] == 0 and dask == local
        dl = run("diff", "--from", "seed", "--to", "upstream-2026", "--format", "json", *files)
        dd = run("diff", "--from", "seed", "--to", "upstream-2026", "--format", "json",
                 "--dask", addr, *files)
        assert dd == dl


def test_dask_local_starts_its_own_cluster():
    f = sorted(os.path.join(CLASSIC, f) for f in os.listdir(CLASSIC))[:2]
    assert run("verify", "--json", "--no-timing", "--dask", "local:2", *f) == run(
        "verify", "--json", "--no-timing", *f)


def test_bad_dask_address_is_one_line_exit_2(tmp_path):
    code, out = run("verify", "--dask", "local:zero", os.path.join(CLASSIC, os.listdir(CLASSIC)[0]))
    assert code == 2 and "local:N" in out


def test_a_worker_uses_the_model_the_parent_sent_not_its_disk(tmp_path):
    """Issue 20 item 4: the models are parsed by the command and sent once; a worker (here
    the chunk function itself, in this process) runs with the model it was sent even where
    the file does not exist, and the result is that model's (a custom model file, a copy of
    upstream-2026 under another name, changes the verdict of an LDS test)."""
    import shutil
    from amdmm_smt.model import get_model, load_model_file, _SENT
    from amdmm_smt.run.cluster import _models, _run_chunk
    from amdmm_smt.run.pool import Task
    src = os.path.join(ROOT, "models", "upstream-2026.yaml")
    path = tmp_path / "mine.yaml"
    shutil.copy(src, path)
    sent = _models([Task(0, None, None, str(path), 60.0, None)])
    assert list(sent) == [str(path)] and sent[str(path)].options == load_model_file(src).options
    path.unlink()                                   # gone from "the worker's" disk
    test = os.path.join(ROOT, "litmus", "classic", "MP+rel-acq.agent.diff-wg.yaml")
    try:
        [(i, (t, r, err))] = _run_chunk([Task(7, test, None, str(path), 60.0, None)], sent)
        assert i == 7 and err is None and r is not None and r.model == get_model(str(path)).name
    finally:
        _SENT.clear()
