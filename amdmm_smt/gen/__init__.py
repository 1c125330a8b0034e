"""`amdmm-smt gen`: litmus tests from relaxation cycles, in the spirit of diy7 (docs/gen.md)."""
