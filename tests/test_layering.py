"""The two engines stay independent (issue 9 item 6): neither imports the other's
modules, and what they share about outcomes (`amdmm_smt/outcomes.py`) imports neither. Checked
on the source with `ast`, so an import hidden inside a function (a lazy import) counts too."""

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "amdmm_smt"

SMT = ["solve.py", *sorted(f"encode/{p.name}" for p in (PKG / "encode").glob("*.py"))]
REFERENCE = sorted(f"reference/{p.name}" for p in (PKG / "reference").glob("*.py"))


def imported(rel: str) -> set[str]:
    """Every module the file imports, as absolute dotted names (`from . import x` gives both
    the package and `package.x`)."""
    path = PKG / rel
    package = ["amdmm_smt", *Path(rel).parent.parts]    # an __init__.py: its own folder
    out = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            mod = ".".join(base + ([node.module] if node.module else []))
            out.add(mod)
            out |= {f"{mod}.{a.name}" for a in node.names}
    return out


def touches(mods: set[str], prefix: str) -> list[str]:
    return sorted(m for m in mods if m == prefix or m.startswith(prefix + "."))


def test_the_file_lists_are_not_empty():
    assert "encode/values.py" in SMT and "reference/engine.py" in REFERENCE


def test_the_import_reader_resolves_relative_imports():
    # solve.py is known to import the encoding and the shared outcomes module
    mods = imported("solve.py")
    assert "amdmm_smt.encode" in mods and "amdmm_smt.outcomes" in mods
    assert "amdmm_smt.encode.logic" in imported("encode/values.py") | imported("encode/sync.py")


def test_the_smt_engine_does_not_import_the_reference_engine():
    for rel in SMT:
        assert not touches(imported(rel), "amdmm_smt.reference"), rel


def test_the_reference_engine_does_not_import_the_smt_engine():
    for rel in REFERENCE:
        mods = imported(rel)
        assert not touches(mods, "amdmm_smt.solve") + touches(mods, "amdmm_smt.encode"), rel
        assert "z3" not in {m.split(".")[0] for m in mods}, rel


def test_the_shared_outcomes_module_imports_neither_engine():
    mods = imported("outcomes.py")
    bad = (touches(mods, "amdmm_smt.solve") + touches(mods, "amdmm_smt.encode")
           + touches(mods, "amdmm_smt.reference"))
    assert not bad
