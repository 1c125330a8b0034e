"""amdmm-smt: exhaustive litmus verification of the AMDGPU memory model with Z3.

The pipeline, one folder per stage:
  frontend/   parse a litmus file (YAML, or herd .litmus) into `ir.Test`
  elaborate/  events, static relations, scope instances, barrier runs, async completion, paths
  encode/     Z3 constraints, one module per family of axioms
  solve.py    enumerate every allowed final state; decide each expectation
  report/     table, JSON, JUnit, model diff
Beside them: reference/ (the independent explicit engine, `--engine reference`), explain/
(witnesses, rule families, lint), run/ (files, worker pool, limits, Dask), gen/ (litmus tests
from relaxation cycles, `amdmm-smt gen`), and the shared
vocabulary ir.py, model.py (model versions as data), outcomes.py (what both engines share),
targets.py, limits.py, errors.py; cli.py is the `amdmm-smt` command.
"""

__version__ = "0.1.0"
