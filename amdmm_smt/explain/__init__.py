"""Explanations: why an outcome is allowed (a witness) or forbidden (a minimal set of named rule
families), pictures of a witness, and static warnings.

  witness.py  `amdmm-smt explain`: witnesses and minimal rule-family cores
  graph.py    a witness as DOT / SVG
  cat_explain.py  under a model file: its statements as the families, its relations on a
              witness, and the reference engine's judgement of that execution
  svg.py      the SVG layout (columns, curves, labels that overlap nothing)
  lint.py     `amdmm-smt lint`: likely mistakes found before solving
"""
