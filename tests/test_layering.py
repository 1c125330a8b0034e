"""Imports, read from the source with `ast` (so an import hidden inside a function, a lazy
import, counts too): the two engines stay independent (issue 9 item 6) -- neither imports the
other's modules, and what they share about outcomes (`amdmm_smt/outcomes.py`) imports neither --;
and the whole package has no import circle and its pipeline flows one way (issue 16 item 4)."""
import ast

import pytest
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
        # Z3 only as the calculator of reference/choices.py, on the value question of
        # docs/semantics.md 15.4 R-cf-undef-sets (can a term over the choices of undef take
        # two values), never for the model's rules
        if rel != "reference/choices.py":
            assert "z3" not in {m.split(".")[0] for m in mods}, rel


def test_the_shared_outcomes_module_imports_neither_engine():
    mods = imported("outcomes.py")
    bad = (touches(mods, "amdmm_smt.solve") + touches(mods, "amdmm_smt.encode")
           + touches(mods, "amdmm_smt.reference"))
    assert not bad


# ---- the whole package: no import circle, the pipeline flows one way (issue 16 item 4) --------

ALL = sorted(str(p.relative_to(PKG)) for p in PKG.rglob("*.py"))


def _module_of(rel: str) -> str:
    parts = ["amdmm_smt", *Path(rel).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_of(r): r for r in ALL}


def _edges(rel: str) -> set[str]:
    """The package's modules that `rel` imports (a name imported from a module is that module;
    a package's own __init__ is not counted when a submodule of it is what is named)."""
    me = _module_of(rel)
    out = set()
    for m in imported(rel):
        while m and m not in MODULES:
            m = m.rpartition(".")[0]
        # a module's own packages are imported before it by Python itself (`from . import x`
        # names the package only to reach x): not an edge
        if m and m != me and not me.startswith(m + "."):
            out.add(m)
    return out


GRAPH = {m: _edges(r) for m, r in MODULES.items()}


def _cycles(graph: dict) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_graph_covers_every_module():
    assert len(MODULES) > 40
    assert "amdmm_smt.frontend.herd.lexer" in GRAPH["amdmm_smt.frontend.herd.parser"]
    assert "amdmm_smt.run.collect" in GRAPH["amdmm_smt.run.pool"]      # a lazy import counts


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_circle_anywhere_in_the_package():
    assert _cycles(GRAPH) == []


# Each stage may import the shared vocabulary and earlier stages, never a later one.
STAGES = ["frontend", "elaborate", "encode", "solve", "explain", "report", "run", "synth", "cli"]
LATER = {s: STAGES[i + 1:] + (["reference"] if s in ("frontend", "elaborate") else [])
         for i, s in enumerate(STAGES)}
SHARED = ["ir", "errors", "targets", "limits", "model", "outcomes"]


def _stage(module: str) -> str:
    return module.split(".")[1] if module.count(".") else module


@pytest.mark.parametrize("stage", STAGES)
def test_the_pipeline_flows_one_way(stage):
    for m, deps in GRAPH.items():
        if _stage(m) != stage:
            continue
        bad = sorted(d for d in deps if _stage(d) in LATER[stage])
        assert not bad, f"{m} imports a later stage: {bad}"


def test_the_shared_vocabulary_imports_no_stage():
    # model.py reads its YAML through the frontend's public reader (frontend/yaml_lines.py)
    # and a model file's engine options through the model language's reader (cat/check.py),
    # nothing else of a stage; ir, errors, targets, limits import no stage at all
    for name in SHARED:
        deps = {_stage(d) for d in GRAPH[f"amdmm_smt.{name}"]}
        allowed = {"frontend", "cat"} if name == "model" else set()
        assert deps <= set(SHARED) | allowed, (name, deps)
    assert {d for d in GRAPH["amdmm_smt.model"] if _stage(d) == "frontend"} <= {
        "amdmm_smt.frontend", "amdmm_smt.frontend.yaml_lines"}
    assert {d for d in GRAPH["amdmm_smt.model"] if _stage(d) == "cat"} <= {
        "amdmm_smt.cat.check"}
    # and that reader reads no stage either: the syntax, the base names as data, errors, ir
    assert GRAPH["amdmm_smt.cat.check"] <= {"amdmm_smt.errors", "amdmm_smt.ir",
                                            "amdmm_smt.cat.syntax", "amdmm_smt.cat.names",
                                            "amdmm_smt.cat"}, GRAPH["amdmm_smt.cat.check"]


def test_the_parser_does_not_import_lint():
    assert not touches(GRAPH["amdmm_smt.frontend.litmus"], "amdmm_smt.explain")


def test_no_private_name_crosses_a_folder():
    """`from X import _name` only between modules of one folder: another stage's helpers are
    reached through public names."""
    for rel in ALL:
        path = PKG / rel
        mine = _module_of(rel).rpartition(".")[0] if not rel.endswith("__init__.py") \
            else _module_of(rel)
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.ImportFrom):
                continue
            private = [a.name for a in node.names if a.name.startswith("_")
                       and a.name != "__version__"]
            if not private:
                continue
            package = ["amdmm_smt", *Path(rel).parent.parts]
            base = package[:len(package) - node.level + 1] if node.level else []
            mod = ".".join(base + ([node.module] if node.module else []))
            assert mod.rpartition(".")[0] == mine or mod == mine, (rel, mod, private)
