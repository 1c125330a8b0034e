"""amdmm-smt: exhaustive litmus verification of the AMDGPU memory model with Z3.

Pipeline: parse (parse.py) -> elaborate (elaborate.py) -> encode (encode/*.py)
-> solve and enumerate (solve.py) -> report (report.py). What both engines share about
outcomes: outcomes.py; the independent explicit engine: reference/ (`--engine reference`).
"""

__version__ = "0.1.0"
