"""The benchmark scripts keep running as the model grows (a new family once broke
benchmarks/corpus.py without any test noticing). Smallest sizes only; nothing here asserts a
time: speed is measured by the scripts themselves."""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LITMUS = os.path.join(ROOT, "litmus")

RUNS = [
    ["corpus.py", os.path.join(LITMUS, "cflow"), os.path.join(LITMUS, "barrier", "bar-MP-fences-wg.yaml"),
     os.path.join(LITMUS, "barrier", "bar-infeasible-path-ub-not-counted.yaml"),
     os.path.join(LITMUS, "async", "async-read-after-wait.yaml")],
    ["barrier_scaling.py", "--waves", "1,2", "--phases", "1"],
    ["reference_barrier_scaling.py", "--waves", "2", "--phases", "1"],
    ["async_scaling.py", "--max-copies", "2"],
    ["cflow_scaling.py", "--contenders", "2", "--unroll", "2"],
    ["explain.py", os.path.join(LITMUS, "classic", "CoRR+mono.agent.diff-wg.yaml")],
    ["scaling.py", "--max", "2"],
    ["startup.py", "--runs", "1"],
    ["dask_cost.py", "--runs", "1", "--no-phases",
     os.path.join(LITMUS, "classic", "MP+rel-acq.agent.diff-wg.yaml")],
    ["synth.py", "--quick", "--jobs", "1"],
    ["bench.py", "--issue20", "--quick"],
    ["gen_corpus_rate.py", "--count", "6"],
    ["synth_table.py", "--only", "async_model", "--jobs", "1", "--out", os.devnull],
    ["differential.py", "--files", "--count", "6", "--ref-limit", "50"],
    ["model_file.py", "--quick", "--repeat", "1"],
]


@pytest.mark.parametrize("args", RUNS, ids=[r[0] for r in RUNS])
def test_benchmark_script_runs(args):
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", args[0])] + args[1:],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr and proc.stdout.strip()
