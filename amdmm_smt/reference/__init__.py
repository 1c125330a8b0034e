"""The independent reference engine (explicit enumeration; see engine.py), and its run."""

from __future__ import annotations

import time
from typing import Optional

from ..elaborate import elaborate
from ..ir import Test
from ..model import Model
from ..outcomes import Result, eval_cond, judge, projection, state_sort_key, wanted_states
from .engine import ReferenceTooBig, ReferenceUnbounded, ReferenceUnsupported, reference_outcomes

__all__ = ["ReferenceTooBig", "ReferenceUnbounded", "ReferenceUnsupported", "reference_outcomes",
           "run_reference"]


def run_reference(test: Test, model: Model, limit: int = 2_000_000) -> Result:
    """The answer of this engine for one test, judged like the Z3 engine's (outcomes.judge)."""
    t0 = time.perf_counter()
    elab = elaborate(test, model)
    keys, _ = projection(test)
    wanted = wanted_states(test, keys)
    try:
        states, complete = sorted(reference_outcomes(elab, limit), key=state_sort_key), True
    except ReferenceTooBig:
        states, complete = [], False

    def exists_query() -> Optional[bool]:
        if not complete:
            return None
        return any(eval_cond(test.exists.cond, dict(st)) for st in states)
    return judge(test, model, keys, states, complete, exists_query, t0, wanted)
