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

MODELS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "models")


@dataclass(frozen=True)
class Options:
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
    # wait / join / leave; docs/semantics.md section 10). Async model version: "seed-004"
    # (asyncmark without stages) or "upstream-stages" (UP 2.4, stage masks).
    barrier_model: str = "seed-002"
    # docs/semantics.md 10.7: R-bar-overlap ("overlap" | "inclusive"), R-bar-drop-race
    # ("formal" | "completion"), R-bar-named-init ("required" | "signal-var"), R-bar-null
    # ("last-joined" | "noop"), R-bar-cluster-drop ("workgroup" | "wave").
    barrier_scopes: str = "overlap"
    drop_race: str = "formal"
    named_init: str = "required"
    null_wait: str = "last-joined"
    cluster_drop: str = "workgroup"
    async_model: str = "seed-004"
    # docs/semantics.md R-lds-scope: which operations the S002 rule "a scope wider than
    # work-group ... is treated as work-group" narrows: "instruction" (an instruction that
    # accesses LDS, for every question) or "data" (any operation, for questions about LDS).
    lds_scope: str = "instruction"
    # Default target when a test names none.
    default_target: str = "gfx1250"


CHOICES = {"scope_inclusion": ("hsa", "opencl"), "coherence": ("cxx", "langref"),
           "final_co": ("lo", "hb"), "cas_undef": ("either", "fail"),
           "barrier_model": ("seed-002", "pr170447"),
           "barrier_scopes": ("overlap", "inclusive"), "drop_race": ("formal", "completion"),
           "named_init": ("required", "signal-var"), "null_wait": ("last-joined", "noop"),
           "cluster_drop": ("workgroup", "wave"),
           "async_model": ("seed-004", "upstream-stages"),
           "lds_scope": ("instruction", "data")}


@dataclass(frozen=True)
class Model:
    name: str
    description: str = ""
    sources: tuple = ()
    options: Options = field(default_factory=Options)
    file: Optional[str] = None


def _options(raw: dict, file: str) -> Options:
    known = {f.name: f for f in fields(Options)}
    kw = {}
    for k, v in raw.items():
        if k not in known:
            raise LitmusError(f"unknown model option '{k}' (known: {', '.join(sorted(known))})",
                              file)
        default = getattr(Options(), k)
        if isinstance(default, bool) and not isinstance(v, bool):
            raise LitmusError(f"model option '{k}' must be true or false", file)
        if isinstance(default, str) and not isinstance(v, str):
            raise LitmusError(f"model option '{k}' must be a string", file)
        if k in CHOICES and v not in CHOICES[k]:
            raise LitmusError(f"model option '{k}' must be one of {', '.join(CHOICES[k])}", file)
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


def _load_model_file(path: str) -> Model:
    try:
        with open(path, encoding="utf-8") as f:
            raw = yaml.safe_load(f)
    except OSError as e:
        raise LitmusError(f"cannot read model: {e.strerror}", path) from None
    except yaml.YAMLError as e:
        raise LitmusError(f"bad YAML in model file: {e}", path) from None
    if not isinstance(raw, dict) or "name" not in raw:
        raise LitmusError("a model file is a mapping with at least `name:`", path)
    for k in raw:
        if k not in ("name", "description", "sources", "options"):
            raise LitmusError(f"unknown key '{k}' in model file", path)
    opts = raw.get("options") or {}
    if not isinstance(opts, dict):
        raise LitmusError("options: must be a mapping", path)
    return Model(str(raw["name"]), str(raw.get("description", "")).strip(),
                 tuple(raw.get("sources") or ()), _options(opts, path), path)


def list_models() -> list[Model]:
    out = []
    if os.path.isdir(MODELS_DIR):
        for fn in sorted(os.listdir(MODELS_DIR)):
            if fn.endswith((".yaml", ".yml")):
                out.append(load_model_file(os.path.join(MODELS_DIR, fn)))
    return out


DEFAULT_MODEL = "seed"


def get_model(name_or_file: Optional[str]) -> Model:
    """A model by name (from models/) or by path; None gives the default (seed) model."""
    name = name_or_file or DEFAULT_MODEL
    if os.path.sep in name or name.endswith((".yaml", ".yml")):
        if not os.path.exists(name):
            raise LitmusError(f"model file '{name}' does not exist", name)
        return load_model_file(name)
    for m in list_models():
        if m.name == name:
            return m
    if name == DEFAULT_MODEL:
        return Model(DEFAULT_MODEL, "built-in default")
    known = ", ".join(m.name for m in list_models())
    raise LitmusError(f"unknown model '{name}' (known: {known})")
