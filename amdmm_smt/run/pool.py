"""Worker processes that run tests under limits that hold, in parallel, with deterministic
results.

Every test runs in a worker process (also with --jobs 1), forked from this one. A worker
takes one task at a time (so work balances itself: a free worker takes the next test),
parses the file itself (parsing is spread over the workers too), reports each stage it
enters, and sends back the result. The parent kills a worker `limits.GRACE` seconds after
its test's deadline, or as soon as its resident memory has grown by more than --memory MiB,
reports the test `unknown` with the reason and the stage it was in, and forks a fresh worker.
Results come back indexed by task, so output never depends on --jobs or on timing.
"""

from __future__ import annotations

import os
import signal
import time
import traceback
from collections import deque
from dataclasses import dataclass
from multiprocessing import Pipe
from multiprocessing.connection import wait
from typing import Callable, Optional

from .. import limits

POLL = 0.05           # seconds between memory polls of a busy worker


@dataclass
class Task:
    index: int
    file: Optional[str]            # parse this file in the worker, or
    test: Optional[object]         # run this parsed ir.Test
    model_name: Optional[str]
    timeout: float
    memory_mb: Optional[int]
    engine: str = "smt"
    decide_only: bool = False
    data: Optional[bytes] = None   # the file's bytes, read by the parent (Dask: other hosts)
    unroll: Optional[int] = None   # verify --unroll: for tests with no unroll: (docs §15.2)


# An outcome: (test or None, Result or None, error message or None)
Outcome = tuple


def execute(task: Task, notify: Optional[Callable[[tuple], None]] = None) -> Outcome:
    """Run one task in this process under the cooperative limits (also used directly by
    the Dask task, amdmm_smt/run/cluster.py, inside its own worker)."""
    from ..errors import LitmusError
    from .collect import model_for, parse_one
    from ..outcomes import limit_result
    limits.begin(task.timeout, task.memory_mb,
                 (lambda st: notify(("stage", st))) if notify else None)
    t0 = time.perf_counter()
    test = task.test
    try:
        if test is None:
            limits.stage("parsing")
            test, err = parse_one(task.file, task.data)
            if err:
                return None, None, err
            if notify:
                notify(("test", test))   # the parent can now report this test if it stops
        if task.unroll is not None and getattr(test, "unroll", None) is None:
            test.unroll = task.unroll       # docs/semantics.md 15.2: a test's own unroll wins
        try:
            model = model_for(test, task.model_name)
        except LitmusError as e:
            return test, None, str(e)
        try:
            if task.engine == "reference":
                from ..reference import run_reference
                return test, run_reference(test, model), None
            from ..solve import run_test
            return test, run_test(test, model, timeout=task.timeout, memory_mb=task.memory_mb,
                                  decide_only=task.decide_only), None
        except limits.LimitExceeded as e:
            return test, limit_result(test, model, e.reason, time.perf_counter() - t0), None
        except LitmusError as e:
            return test, None, str(e)
        except Exception as e:  # never a traceback: report and fail the run
            if limits.is_out_of_memory(e):
                return test, limit_result(test, model, limits.memory_exceeded().reason,
                                          time.perf_counter() - t0), None
            return test, None, (f"{test.file}: internal error in test '{test.name}': "
                                f"{type(e).__name__}: {e}")
    except limits.LimitExceeded as e:
        if test is None:     # parsing did not finish in time: no test to be unknown
            return None, None, f"{task.file}: {e.reason}"
        raise
    finally:
        limits.end()


def _child(conn) -> None:
    """The worker loop: tasks in, stage reports and outcomes out."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)     # the parent handles ^C
    import z3
    mem_set = False
    while True:
        try:
            task = conn.recv()
        except EOFError:
            return
        if task is None:
            return
        if task.memory_mb and not mem_set:
            z3.set_param("memory_max_size", int(task.memory_mb))
            mem_set = True
        try:
            out = execute(task, conn.send)
        except BaseException as e:   # pragma: no cover - execute reports everything itself
            out = (task.test, None, f"{task.file or '<test>'}: internal error in worker: "
                                    f"{type(e).__name__}: {e} {traceback.format_exc(limit=1)}")
        conn.send(("done", out))
        r = out[1]
        if r is not None and r.limit and "memory" in r.limit:
            return   # Z3 after running out of memory is not to be trusted: start afresh


def _preload(engine: str = "smt") -> None:
    """Import what a worker runs before forking it: shared with the parent, not counted
    against the first test's --memory, not paid for again by every fresh worker. Only the
    engine the run uses (start-up: a Z3 run does not load the reference engine)."""
    from .. import outcomes  # noqa: F401
    from . import collect  # noqa: F401
    if engine == "reference":
        from .. import reference  # noqa: F401
    else:
        from .. import solve  # noqa: F401


class _Worker:
    def __init__(self, engine: str = "smt"):
        _preload(engine)
        parent, child = Pipe(duplex=True)
        pid = os.fork()
        if pid == 0:     # the child
            parent.close()
            try:
                _child(child)
            finally:
                os._exit(0)
        child.close()
        self.pid = pid
        self.conn = parent
        self.task: Optional[Task] = None
        self.test = None
        self.stage = "starting"
        self.started = 0.0
        self.base_rss = 0
        self.dead = False

    def give(self, task: Task) -> None:
        self.task, self.test, self.stage = task, task.test, "starting"
        self.started = time.monotonic()
        self.base_rss = _rss(self.pid)
        self.conn.send(task)

    def kill(self) -> None:
        if self.dead or self.pid <= 0:
            return
        try:
            os.kill(self.pid, signal.SIGKILL)   # this worker's own pid, never a group
        except ProcessLookupError:
            pass
        self.reap()

    def reap(self) -> None:
        if self.dead:
            return
        self.dead = True
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass
        self.conn.close()

    def stop(self) -> None:
        if self.dead:
            return
        try:
            self.conn.send(None)
        except (BrokenPipeError, OSError):
            pass
        self.reap()


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _rss(pid: int) -> int:
    """Resident bytes of a process (0 when unknown)."""
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


def run_tasks(tasks: list[Task], jobs: int,
              done: Optional[Callable[[Task, Outcome], None]] = None) -> list[Outcome]:
    """Run every task in `jobs` worker processes; outcomes in task order."""
    from ..outcomes import limit_result
    engine = "reference" if any(t.engine == "reference" for t in tasks) else "smt"
    out: list[Optional[Outcome]] = [None] * len(tasks)
    pending = deque(tasks)
    workers: list[_Worker] = []
    busy: dict[int, _Worker] = {}        # fd -> worker

    def finish(w: _Worker, outcome: Outcome) -> None:
        out[w.task.index] = outcome
        if done:
            done(w.task, outcome)
        w.task = None

    def stopped(w: _Worker, reason: str) -> None:
        """The worker was killed or died: the test is unknown (or, before it was parsed,
        an error naming the file)."""
        t = w.test
        if t is None and w.task.file is not None:
            from .collect import parse_one     # stopped before it said which test: find out
            t, _ = parse_one(w.task.file, w.task.data)
        if t is None:
            finish(w, (None, None, f"{w.task.file}: {reason}"))
        else:
            from .collect import model_for
            try:
                model = model_for(t, w.task.model_name)
            except Exception:
                model = w.task.model_name or "?"
            finish(w, (t, limit_result(t, model, reason, time.monotonic() - w.started), None))

    try:
        for _ in range(min(jobs, len(tasks))):
            workers.append(_Worker(engine))
        while pending or busy:
            for w in workers:
                if w.task is None and pending:
                    w.give(pending.popleft())
                    busy[w.conn.fileno()] = w
            now = time.monotonic()
            nearest = min(w.started + w.task.timeout + limits.GRACE for w in busy.values())
            polling = any(w.task.memory_mb for w in busy.values())
            wait_for = min(max(0.0, nearest - now), 3600.0)
            if polling:
                wait_for = min(wait_for, POLL)
            ready = wait([w.conn for w in busy.values()], timeout=wait_for)
            for c in ready:
                w = busy[c.fileno()]
                try:
                    while w.conn.poll():
                        msg = w.conn.recv()
                        if msg[0] == "stage":
                            w.stage = msg[1]
                        elif msg[0] == "test":
                            w.test = msg[1]
                        else:
                            del busy[c.fileno()]
                            r = msg[1][1]
                            finish(w, msg[1])
                            if r is not None and r.limit and "memory" in r.limit:
                                w.stop()     # it exits: Z3 after out-of-memory is not trusted
                            break
                except (EOFError, OSError):
                    del busy[c.fileno()]
                    reason = (limits.memory_reason(w.task.memory_mb, w.stage)
                              if w.task.memory_mb else
                              f"worker process died during {w.stage}")
                    w.kill()
                    stopped(w, reason)
            now = time.monotonic()
            for fd, w in list(busy.items()):
                reason = None
                if now > w.started + w.task.timeout + limits.GRACE:
                    reason = limits.timeout_reason(w.task.timeout, w.stage)
                elif w.task.memory_mb and _rss(w.pid) - w.base_rss > w.task.memory_mb << 20:
                    reason = limits.memory_reason(w.task.memory_mb, w.stage)
                if reason:
                    del busy[fd]
                    w.kill()
                    stopped(w, reason)
            for w in [w for w in workers if w.dead]:
                workers.remove(w)
                if pending:
                    workers.append(_Worker(engine))
    finally:
        for w in workers:
            if w.task is not None:
                w.kill()
            else:
                w.stop()
    return out  # type: ignore[return-value]

