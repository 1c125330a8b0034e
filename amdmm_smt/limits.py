"""Time and memory limits that bound a whole test (issue 8 item 9, issue 13 item 3).

Two layers:
- cooperative, in the process that runs the test: `begin` sets a deadline, every stage calls
  `stage(name)`, and the encoding's hot loops call `tick()` (through `encode.logic.Ctx`),
  which raises `LimitExceeded` past the deadline; the solver gets the time that is left as its
  own timeout, and Z3's `memory_max_size` the memory budget (its out-of-memory is mapped to
  `LimitExceeded`, never an internal error);
- hard, in `amdmm_smt.run.pool`: each test runs in a worker process that the parent kills one
  `GRACE` second after the deadline (or when its resident memory grows past the budget), for
  whatever stage does not check the deadline itself (Z3 preprocessing, the reference engine);
  or, for one small test run alone (`run_inline`, issue 30 item 3), the test runs in a thread
  of the command's own process that the main thread gives up on one `GRACE` second after the
  deadline. The cooperative state is per thread.
Either way the test is reported `unknown` with the reason (`Result.limit`).

The solver's watchdog (amdmm_smt/solve.py, `_Watchdog`) interrupts Z3 once the deadline has
passed; whatever Z3 call it lands in (a check, a model evaluation, a push, a term, the listing
propagator's callback) fails with Z3's "canceled". `cancel_reason` turns such a failure into
the timeout it is when the deadline has passed (issue 28 item 4); a cancel before the deadline
is not the limit's and stays an error.
"""

from __future__ import annotations

import threading
import time
from typing import Callable, Optional

GRACE = 1.0          # seconds past the deadline before the parent kills a worker


class LimitExceeded(Exception):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class _State(threading.local):
    """The limits of the test running in this thread: per thread, so that a test thread
    given up on at its hard limit (run/pool.py run_inline) keeps its own and never ends the
    limits of a test run after it."""

    def __init__(self):
        self.__dict__.update(deadline=None, timeout=None, stage="starting", notify=None, n=0,
                             memory_mb=None)

    def update(self, **kw):
        self.__dict__.update(kw)


_state = _State()


def begin(timeout: Optional[float], memory_mb: Optional[int] = None,
          notify: Optional[Callable[[str], None]] = None) -> None:
    _state.update(deadline=None if timeout is None else time.perf_counter() + timeout,
                  timeout=timeout, stage="starting", notify=notify, n=0, memory_mb=memory_mb)


def end() -> None:
    _state.update(deadline=None, timeout=None, notify=None, memory_mb=None)


def stage(name: str) -> None:
    """Enter a stage. The deadline is looked at first: one that passed before this call
    passed during the stage before (the reason names that one)."""
    check()
    _state.stage = name
    if _state.notify is not None:
        _state.notify(name)


def current_stage() -> str:
    return _state.stage


def left() -> Optional[float]:
    """Seconds left before the deadline (None: no deadline)."""
    d = _state.deadline
    return None if d is None else d - time.perf_counter()


def check() -> None:
    d = _state.deadline
    if d is not None and time.perf_counter() > d:
        raise LimitExceeded(timeout_reason(_state.timeout, _state.stage))


def tick() -> None:
    """Cheap enough for hot loops: looks at the clock every 128th call."""
    _state.n += 1
    if _state.n & 127 == 0:
        check()


def passed() -> bool:
    """Has the deadline passed (False: no deadline)?"""
    d = _state.deadline
    return d is not None and time.perf_counter() >= d


def is_cancel(e: BaseException) -> bool:
    """Z3's answer to an interrupt: a Z3Exception 'canceled' (also 'push canceled' ...)."""
    return type(e).__name__ == "Z3Exception" and "cancel" in str(e).lower()


def cancel_reason(e: BaseException) -> Optional[str]:
    """The timeout a Z3 failure stands for: a cancel once the deadline has passed (the
    watchdog's interrupt, wherever it landed). None: not a cancel, or one before the
    deadline (a genuine error)."""
    if is_cancel(e) and passed():
        return timeout_reason(_state.timeout, _state.stage)
    return None


def timeout_reason(timeout: float, stage: str) -> str:
    return f"timeout after {timeout:g} s during {stage}"


def memory_reason(memory_mb: Optional[int], stage: str) -> str:
    lim = f" (--memory {memory_mb} MiB)" if memory_mb else ""
    return f"out of memory{lim} during {stage}"


def memory_exceeded() -> LimitExceeded:
    return LimitExceeded(memory_reason(_state.memory_mb, _state.stage))


def is_out_of_memory(e: BaseException) -> bool:
    """Z3 reports its memory_max_size as a Z3Exception 'out of memory'; Python as MemoryError."""
    return isinstance(e, MemoryError) or "out of memory" in str(e).lower()


def active() -> bool:
    return _state.deadline is not None


def timeout() -> Optional[float]:
    return _state.timeout
