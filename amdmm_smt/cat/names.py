"""The base names of the model language and their sorts (docs/model-language.md "Base
names"): data only, read by the checker (check.py) without the elaboration that computes them
(base.py), so that model.py can read a model file's engine options through check.py."""

from __future__ import annotations

from ..ir import SYSTEM

LEVELS = tuple(range(SYSTEM + 1))

# name -> (sort, indexed by a level, depends on the address space at hand)
BASE: dict[str, tuple[str, bool, bool]] = {
    "E": ("set", False, False), "I": ("set", False, False), "T": ("set", False, False),
    "W": ("set", False, False), "R": ("set", False, False), "F": ("set", False, False),
    "M": ("set", False, False), "Atomic": ("set", False, False),
    "Strong": ("set", False, False), "RMW": ("set", False, False),
    "AvNone": ("set", False, False), "RelOrd": ("set", False, False),
    "AcqOrd": ("set", False, False), "Volatile": ("set", False, False),
    "Lds": ("set", False, False), "AvIntr": ("set", False, False),
    "LV": ("set", False, False), "SA": ("set", False, False),
    "Hap": ("set", False, False), "Rel": ("set", False, False), "Acq": ("set", False, False),
    "SC": ("set", False, False),
    "AvsGe": ("set", True, False), "ScGe": ("set", True, True), "AvScGe": ("set", True, True),
    "Sync": ("set", False, True), "Here": ("set", False, True),
    "id": ("rel", False, False), "po": ("rel", False, False), "poc": ("rel", False, False),
    "loc": ("rel", False, False), "ext": ("rel", False, False), "int": ("rel", False, False),
    "contains": ("rel", True, False), "incl": ("rel", False, True),
    "samescope": ("rel", False, True),
    "rf": ("rel", False, False), "co": ("rel", False, False),
    # asynchronous operations (S004, UP 2.4; docs/semantics.md §11, models/async.cat)
    "Async": ("set", False, False), "initiates": ("rel", False, False),
    "DmaSync": ("set", False, False),
    "completedAt": ("rel", False, False), "completedAtStage": ("rel", False, False),
    # execution barriers (S002, S003, UP 2.3; docs/semantics.md §10, models/barrier.cat): the
    # runs are the engine's (10.4), these are what a chosen run gives the memory model (10.5)
    "OneAs": ("set", False, False),
    "barSig": ("rel", False, False), "barExec": ("rel", False, False),
    "barBmo": ("rel", False, False),
}
# the base names that say when an asynchronous operation completes: a model that uses neither
# does not define the family 'async' (its tests are refused, docs/semantics.md §18)
ASYNC_COMPLETION = ("completedAt", "completedAtStage")
# the base names that say what a barrier run gives the memory model: a model that uses
# neither does not define the family 'barrier' (its tests are refused, docs/semantics.md §18)
BARRIER_RUN = ("barSig", "barExec")
# completedAt / completedAtStage are static but where the documents leave completion
# unspecified across function bodies (R-call-async-seq): there the execution chooses
DYNAMIC = {"Hap", "Rel", "Acq", "SC", "rf", "co", "barSig", "barExec", "barBmo",
           "completedAt", "completedAtStage"}

