"""Stage 1, the frontend: a litmus file -> `ir.Test`.

  litmus.py            the YAML litmus format (docs/litmus-format.md): instructions, conditions
  yaml_lines.py        YAML read with line numbers, bombs refused (litmus and model files)
  cfg.py               blocks and static checks of a thread with labels and branches (§15.1)
  async_intrinsics.py  the async copy / asyncmark intrinsics and their arguments (S004, UP 2.4)
  herd/                herd / Dartagnan `.litmus` files: lexer -> parser -> lower -> convert
"""
