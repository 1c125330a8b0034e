"""Model versions as data (`models/*.yaml`): which axiom families and readings are on.

A model file is a mapping with `name`, `description`, `sources` and `options`; every option
not given takes the default below; an unknown option is an error.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields, replace
from typing import Optional

import yaml

from .errors import LitmusError

# The repository keeps the model versions in the top-level `models/`; `amdmm_smt/models` is a
# symbolic link to it, shipped as package data, so an installed copy (`pip install .`, not only
# `-e`) has them. A checkout whose link was lost (an archive without links) falls back to the
# repository's directory.
MODELS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "models")


def shipped_models_dir() -> Optional[str]:
    """Where the shipped model files are: the package data, else the source tree's models/."""
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "models")
    if os.path.isdir(here):     # a package on the file system: what importlib.resources gives,
        return here             # without its import (start-up, issue 30 item 3)
    try:
        from importlib import resources
        pkg = resources.files("amdmm_smt").joinpath("models")
        if pkg.is_dir():
            return str(pkg)
    except (ModuleNotFoundError, OSError, TypeError):   # pragma: no cover - odd loaders
        pass
    return MODELS_DIR if os.path.isdir(MODELS_DIR) else None


@dataclass(frozen=True)
class Options:
    """A model version's options (docs/semantics.md section 8)."""
    # S002: HSA scope inclusion ("hsa") or OpenCL exact scope match ("opencl").
    scope_inclusion: str = "hsa"
    # S000 availability / visibility; False = plain LLVM happens-before reading (UP§4).
    avvis: bool = True
    # UP 2.1(2): every addrspace(3) access is store-available / load-visible at workgroup.
    lds_av_workgroup: bool = False
    # UP 2.1(3): a non-atomic volatile access is store-available / load-visible at the widest
    # scope of its address space.
    volatile_av: bool = False
    # UP 2.1(7): "A read R is location-ordered before an access X ... if it happens-before X".
    read_lo: bool = False
    # docs/semantics.md R-init: the initial write is in every scope instance.
    init_in_every_scope: bool = True
    # docs/semantics.md R-coherence: "cxx" (C++ CoWW/CoRR/CoWR/CoRW) or "langref" (only the
    # two rules LangRef states: hb-compatible modification order and read-read coherence).
    coherence: str = "cxx"
    # docs/semantics.md R-final: the per-location order that decides final values extends
    # location order ("lo") or, the alternative reading, happens-before ("hb").
    final_co: str = "lo"
    # docs/semantics.md R-cas-undef: a cmpxchg that compares an undef value may succeed or
    # fail ("either": undef is any bit pattern) or always fails ("fail").
    cas_undef: str = "either"
    # docs R-no-thin-air: false = the documents as written (no such axiom); true = RC11's
    # (po ∪ rf) acyclicity, which forbids values out of thin air.
    no_thin_air: bool = False
    # Execution-barrier model version: "seed-002" (AMDGPUUsage: init / join / drop / arrive /
    # wait, barrier-arrive-release / barrier-wait-acquire) or "pr170447" (seed 003: signal /
    # wait / join / leave; docs/semantics.md section 10).
    barrier_model: str = "seed-002"
    # docs/semantics.md 10.7: R-bar-overlap ("overlap" | "inclusive"), R-bar-drop-race
    # ("formal" | "completion"), R-bar-named-init ("required" | "signal-var"), R-bar-null
    # ("last-joined" | "noop"), R-bar-cluster-drop ("workgroup" | "wave").
    barrier_scopes: str = "overlap"
    drop_race: str = "formal"
    named_init: str = "required"
    null_wait: str = "last-joined"
    cluster_drop: str = "workgroup"
    # docs/semantics.md 10.7 (issue 17): R-bar-participation ("constraints": S002's
    # barrier-participates-in is the one that satisfies every constraint, footnote [0];
    # "run": the wave's token decides, S003's informal note, drop race and phase separation
    # are then undefined behaviour), R-bar-hb-exec ("executes": happens-before is consistent
    # with barrier-executes-before, UP 2.3; "none": the barrier orders no memory event
    # without fences), R-bar-leave ("undefined": a leave with no current named barrier is a
    # drop without join; "noop": it drops nothing), R-bar-signal-var ("model": K <= C is
    # undefined; "table": K < C is undefined).
    barrier_participation: str = "constraints"
    barrier_hb: str = "executes"
    leave_unjoined: str = "undefined"
    signal_var_count: str = "model"
    # docs/semantics.md §11: "seed-004" (S004: async operations program-ordered at their
    # instruction, one asyncmark sequence, masks ignored) or "upstream-stages" (UP 2.4: async
    # operations outside program order, one asyncmark sequence per stage).
    async_model: str = "seed-004"
    # docs/semantics.md R-async-done-every: a completed async operation happens-before every
    # wait it is completed-at ("every": UP 2.4's completed-at, which holds at every later wait
    # of its stage) or only the first one ("first", the earlier reading); they differ only
    # where MMRA tags cut program order.
    async_done_edges: str = "every"
    # docs/semantics.md R-lds-scope: which operations the S002 rule "a scope wider than
    # work-group ... is treated as work-group" narrows: "instruction" (an instruction that
    # accesses LDS, for every question), "data" (any operation, for questions about LDS), or
    # "avvis" (any operation's availability / visibility of LDS data; never synchronization).
    lds_scope: str = "instruction"
    # docs/semantics.md R-async-scope: the scope instances an async copy's read and write belong
    # to: every instance of the initiating thread ("thread"), or, the cautious reading of UP's
    # "executes outside the thread", none below workgroup ("workgroup").
    async_scope: str = "thread"
    # docs/semantics.md R-call-async-seq (§15.8, §11.4): the asyncmark sequence of each function
    # body ("per-function": S004 "a sequence of asyncmarks during the execution of a function
    # body, which excludes any asyncmarks produced by calls to other functions"; what UP 2.4
    # leaves unspecified across bodies goes both ways) or one sequence for the thread, the
    # calls inlined first ("inlined": the compiler's view after inlining).
    async_calls: str = "per-function"
    # Default target when a test names none.
    default_target: str = "gfx1250"


CHOICES = {"scope_inclusion": ("hsa", "opencl"), "coherence": ("cxx", "langref"),
           "final_co": ("lo", "hb"), "cas_undef": ("either", "fail"),
           "barrier_model": ("seed-002", "pr170447"),
           "barrier_scopes": ("overlap", "inclusive"), "drop_race": ("formal", "completion"),
           "named_init": ("required", "signal-var"), "null_wait": ("last-joined", "noop"),
           "cluster_drop": ("workgroup", "wave"),
           "barrier_participation": ("constraints", "run"),
           "barrier_hb": ("executes", "none"), "leave_unjoined": ("undefined", "noop"),
           "signal_var_count": ("model", "table"),
           "async_model": ("seed-004", "upstream-stages"),
           "lds_scope": ("instruction", "data", "avvis"),
           "async_scope": ("thread", "workgroup"),
           "async_done_edges": ("first", "every"),
           "async_calls": ("per-function", "inlined")}


# The options of Options that are the engines' machinery, not rules: they decide the runs of
# barriers, the asyncmark sequences, scope instances, the values of a cmpxchg and the target.
# A model file sets them by name (`option NAME = VALUE`, docs/model-language.md "Engine
# options"); the others are the model's definitions (models/options/*.cat).
ENGINE_OPTIONS = ("init_in_every_scope", "lds_scope", "cas_undef", "default_target",
                  "barrier_model", "barrier_participation", "drop_race", "named_init",
                  "null_wait", "cluster_drop", "leave_unjoined", "signal_var_count",
                  "async_scope", "async_calls")


def engine_options(written: dict) -> dict:
    """A model file's `option` statements ({name: (value as written, file, line)}) as Options
    fields; an unknown name or value, or an option that is a rule, is FILE:LINE, exit 2."""
    from .errors import show
    from .targets import get_target
    out = {}
    for name, (v, file, line) in written.items():
        if name not in ENGINE_OPTIONS:
            if name in Options.__dataclass_fields__:
                raise LitmusError(f"option '{name}' is a rule of the model, not the engine's: "
                                  "write it as definitions (models/options/ has one file per "
                                  "value)", file, line)
            raise LitmusError(f"unknown engine option '{show(name)}' (engine options: "
                              + ", ".join(ENGINE_OPTIONS) + ")", file, line)
        default = getattr(Options(), name)
        if isinstance(default, bool):
            if v not in ("true", "false"):
                raise LitmusError(f"option '{name}' is true or false, not '{show(v)}'", file,
                                  line)
            out[name] = v == "true"
        elif name == "default_target":
            try:
                get_target(v)
            except ValueError as e:
                raise LitmusError(str(e), file, line) from None
            out[name] = v
        else:
            if v not in CHOICES.get(name, ()):
                raise LitmusError(f"option '{name}' is one of " + ", ".join(CHOICES[name])
                                  + f", not '{show(v)}'", file, line)
            out[name] = v
    return out


def option_table() -> list[tuple[str, list[str]]]:
    """Every option with its values, the default first (`amdmm-smt models`)."""
    d = Options()
    out = []
    for f in fields(Options):
        v = getattr(d, f.name)
        if isinstance(v, bool):
            vals = ["true", "false"] if v else ["false", "true"]
        elif f.name in CHOICES:
            vals = [v] + [c for c in CHOICES[f.name] if c != v]
        else:
            vals = [str(v), "(a target name)"] if f.name == "default_target" else [str(v)]
        out.append((f.name, vals))
    return out


@dataclass(frozen=True)
class Model:
    """A model version: its name, description and options."""
    name: str
    description: str = ""
    sources: tuple = ()
    options: Options = field(default_factory=Options)
    file: Optional[str] = None
    # a model file in the model language (docs/model-language.md): its path; the engines
    # read the rules from it (docs/semantics.md §18). None: the hand-written rules.
    cat: Optional[str] = None

    def changed_options(self) -> tuple:
        """The options that differ from the defaults of `Options`, as ((name, value), ...)."""
        d = Options()
        return tuple((f.name, getattr(self.options, f.name)) for f in fields(Options)
                     if getattr(self.options, f.name) != getattr(d, f.name))

    def describe_options(self) -> str:
        ch = self.changed_options()
        if not ch:
            return "default options"
        return ", ".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in ch)


def _options(raw: dict, file: str, lines: Optional[dict] = None) -> Options:
    from .errors import show
    from .targets import get_target
    known = {f.name: f for f in fields(Options)}
    kw = {}
    for k, v in raw.items():
        line = (lines or {}).get(k)
        if k not in known:
            raise LitmusError(f"unknown model option '{show(str(k))}' (known: "
                              f"{', '.join(sorted(known))})", file, line)
        default = getattr(Options(), k)
        if isinstance(default, bool) and not isinstance(v, bool):
            raise LitmusError(f"model option '{k}' must be true or false", file, line)
        if isinstance(default, str) and not isinstance(v, str):
            raise LitmusError(f"model option '{k}' must be a string", file, line)
        if k in CHOICES and v not in CHOICES[k]:
            raise LitmusError(f"model option '{k}' must be one of {', '.join(CHOICES[k])}", file,
                              line)
        if k == "default_target":
            try:
                get_target(v)
            except ValueError as e:
                raise LitmusError(f"model option '{k}': {e}", file, line) from None
        kw[k] = v
    return replace(Options(), **kw)


_CACHE: dict[tuple[str, float], Model] = {}


def load_model_file(path: str) -> Model:
    """A model file, parsed once per content version (keyed by path and mtime)."""
    try:
        key = (os.path.abspath(path), os.path.getmtime(path))
    except OSError:
        key = None
    if key in _CACHE:
        return _CACHE[key]
    m = _load_model_file(path)
    if key:
        _CACHE[key] = m
    return m


def _line(raw_node) -> Optional[int]:
    return raw_node.start_mark.line + 1 if raw_node is not None else None


def _load_model_file(path: str) -> Model:
    from .errors import show
    try:
        if not os.path.isfile(path):
            raise LitmusError("a model file must be a regular file", path)
        with open(path, "rb") as f:
            data = f.read((1 << 20) + 1)
        if len(data) > 1 << 20:
            raise LitmusError("model file is larger than 1 MiB", path)
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise LitmusError(f"model file is not UTF-8 text (byte 0x{data[e.start]:02x})", path,
                          data.count(b"\n", 0, e.start) + 1) from None
    except OSError as e:
        raise LitmusError(f"cannot read model: {e.strerror}", path) from None
    from .frontend.yaml_lines import construct, fast_compose, prescan
    node = fast_compose(text, path)
    try:
        if node is None:           # libyaml missing, or a problem: the pure Python loader's
            prescan(text, path)    # messages. No anchors / aliases / merge keys, bounded nesting
            node = yaml.compose(text, Loader=yaml.SafeLoader)
        raw = None if node is None else construct(node)
    except LitmusError as e:
        raise LitmusError(f"model file: {e.message}", path, e.line) from None
    except yaml.reader.ReaderError as e:
        line = text.count("\n", 0, max(0, e.position)) + 1
        raise LitmusError("bad YAML in model file: unacceptable character" + (
            f" #x{e.character:04x}" if isinstance(e.character, int) else ""), path,
            line) from None
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        raise LitmusError(f"bad YAML in model file: {show(e.problem or e.context or '')}", path,
                          mark.line + 1 if mark else 1) from None
    except (yaml.YAMLError, RecursionError, ValueError, TypeError) as e:
        raise LitmusError(f"bad YAML in model file: {show(str(e))}", path, 1) from None
    if isinstance(node, yaml.MappingNode):
        seen = set()
        for k, _ in node.value:
            key = k.value if isinstance(k, yaml.ScalarNode) else None
            if key in seen:
                raise LitmusError(f"duplicate key '{show(str(key))}' in model file", path,
                                  _line(k))
            seen.add(key)
    lines, opt_lines = {}, {}
    if isinstance(node, yaml.MappingNode):
        lines = {k.value: _line(k) for k, _ in node.value if isinstance(k, yaml.ScalarNode)}
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode) and k.value == "options" and isinstance(
                    v, yaml.MappingNode):
                opt_lines = {ok.value: _line(ok) for ok, _ in v.value
                             if isinstance(ok, yaml.ScalarNode)}
    if not isinstance(raw, dict) or "name" not in raw:
        raise LitmusError("a model file is a mapping with at least `name:`", path, 1)
    for k in raw:
        if k not in ("name", "description", "sources", "options"):
            raise LitmusError(f"unknown key '{show(str(k))}' in model file (expected: name, "
                              "description, sources, options)", path, lines.get(k))
    if not isinstance(raw["name"], str) or not raw["name"].strip():
        raise LitmusError("name: must be a non-empty string", path, lines.get("name"))
    desc = raw.get("description")
    if desc is not None and not isinstance(desc, str):
        raise LitmusError("description: must be text", path, lines.get("description"))
    sources = raw.get("sources")
    if sources is not None and (not isinstance(sources, list)
                                or not all(isinstance(x, str) for x in sources)):
        raise LitmusError("sources: must be a list of strings", path, lines.get("sources"))
    opts = raw.get("options") or {}
    if not isinstance(opts, dict):
        raise LitmusError("options: must be a mapping", path, lines.get("options"))
    options = _options(opts, path, opt_lines)
    return Model(raw["name"], (desc or "").strip(), tuple(sources or ()), options, path)


def list_models() -> list[Model]:
    """The shipped model versions, sorted by file name. None found is an error, not an empty
    list: an install without its model files must say so."""
    d = shipped_models_dir()
    if d is None:
        raise LitmusError("no model files are installed (expected the package data "
                          "amdmm_smt/models/ or a models/ directory next to the package); "
                          "reinstall amdmm-smt")
    out = []
    for fn in sorted(os.listdir(d)):
        if fn.endswith((".yaml", ".yml")):
            out.append(load_model_file(os.path.join(d, fn)))
    return out


DEFAULT_MODEL = "seed"


_SENT: dict = {}      # name or path -> Model, handed over by a parent (run/cluster.py)


def use_models(models: dict) -> None:
    """Models the parent already loaded, by the name or path it was asked for (a Dask worker
    on another host need not read the model files: issue 20 item 4)."""
    _SENT.update(models)


def get_model(name_or_file: Optional[str]) -> Model:
    """A model by name (from models/) or by path; None gives the default (seed) model."""
    from .errors import show
    name = name_or_file or DEFAULT_MODEL
    if name in _SENT:
        return _SENT[name]
    if name.lower().endswith(".cat"):          # a model in the model language (issue 27)
        if not os.path.isfile(name):
            raise LitmusError(f"model file '{show(name)}' does not exist", name)
        base = os.path.splitext(os.path.basename(name))[0]
        # the engine options the file sets (`option NAME = VALUE`, docs/model-language.md);
        # the file is parsed and checked here (a bad one: FILE:LINE, exit 2, before any test)
        from .cat.check import load_cached   # parsed once: the encoders read the same cache
        opts = engine_options(load_cached(name).options)
        return Model(base + ".cat", f"the model file {name}", (), Options(**opts),
                     os.path.abspath(name), os.path.abspath(name))
    if os.path.sep in name or name.lower().endswith((".yaml", ".yml")):   # any case
        if not os.path.exists(name):
            raise LitmusError(f"model file '{show(name)}' does not exist", name)
        return load_model_file(name)
    d = shipped_models_dir()
    if d is not None and os.path.isfile(os.path.join(d, name + ".yaml")):
        m = load_model_file(os.path.join(d, name + ".yaml"))     # the usual case: one file read
        if m.name == name:
            return m
    for m in list_models():
        if m.name == name:
            return m
    known = ", ".join(m.name for m in list_models())
    raise LitmusError(f"unknown model '{show(name)}' (known: {known})")
