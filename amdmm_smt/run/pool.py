"""Worker processes that run tests under limits that hold, in parallel, with deterministic
results.

Every test runs in a worker process (also with --jobs 1), forked from this one, except one
small test run alone (below). A worker
takes one task at a time (so work balances itself: a free worker takes the next test),
parses the file itself (parsing is spread over the workers too), reports each stage it
enters, and sends back the result. The parent kills a worker `limits.GRACE` seconds after
its test's deadline, or as soon as its resident memory has grown by more than --memory MiB,
reports the test `unknown` with the reason and the stage it was in, and forks a fresh worker.
Results come back indexed by task, so output never depends on --jobs or on timing.

One small test run alone (`verify t.yaml`, issue 30 item 3) runs in this process instead, in a
thread the main thread watches (run_inline): no fork, no worker imports, and the same limits:
the cooperative ones inside the test, and the hard one from the main thread, which gives up
on the thread one GRACE second past the deadline (the thread is abandoned: the command exits
without waiting for it; while it lives, tests run in workers) and reports the test unknown
with the stage it was in.
Not with --memory (a worker's growth is measured; this process's is not the test's alone), not
for the reference engine, not for a file over INLINE_BYTES.
"""

from __future__ import annotations

import os
import signal
import time
import traceback
from collections import deque
from dataclasses import dataclass
from typing import Callable, Optional

from .. import limits

POLL = 0.05           # seconds between memory polls of a busy worker


@dataclass
class Task:
    """One test (or call) for a worker."""
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
    call: Optional[tuple] = None   # (function, args): run it instead (explain, lint, parse)
    outcome_limit: int = 100000    # verify --outcome-limit: states listed per test (0: all)


@dataclass
class Stopped:
    """The value of a `call` task stopped by --timeout / --memory (or whose worker died)."""
    reason: str


def _memory_lost(r) -> bool:
    """The outcome's value says the worker ran out of memory (Z3 is not trusted after)."""
    reason = r.reason if isinstance(r, Stopped) else getattr(r, "limit", None)
    return isinstance(reason, str) and "memory" in reason


class CallError(Exception):
    """Raised by a `call` with its whole one-line message (`FILE:LINE: problem`)."""


def _too_deep(file: str, line: int) -> str:
    """A program nested or unrolled beyond what a stage can follow (issue 22 item 8): said as
    what it is, with the test's line, never as an internal error."""
    return (f"{file}:{line}: too deep (the program is nested or unrolled more deeply than "
            f"this tool can follow; lower `unroll` or flatten the code)")


_NOTIFY: list = [None]
_TOLD: list = [None]


def tell_test(test) -> None:
    """From a `call` in a worker: this is the test being worked on (the parent names it
    should the worker be stopped)."""
    _TOLD[0] = test
    if _NOTIFY[0] is not None:
        _NOTIFY[0](("test", test))


def _execute_call(task: Task, notify) -> Outcome:
    from ..errors import LitmusError
    limits.begin(task.timeout, task.memory_mb,
                 (lambda st: notify(("stage", st))) if notify else None)
    _NOTIFY[0], _TOLD[0] = notify, None
    try:
        fn, args = task.call
        return None, fn(*args), None
    except limits.LimitExceeded as e:
        return _TOLD[0], Stopped(e.reason), None
    except (LitmusError, CallError) as e:
        return None, None, str(e)
    except RecursionError:
        t = _TOLD[0]
        return None, None, _too_deep(t.file, t.line) if t is not None else \
            _too_deep(task.file or "<input>", 1)
    except Exception as e:  # never a traceback
        timed_out = limits.cancel_reason(e)
        if timed_out is not None:     # Z3 interrupted at the deadline (issue 28 item 4)
            _clear_cancel()
            return _TOLD[0], Stopped(timed_out), None
        if limits.is_out_of_memory(e):
            return _TOLD[0], Stopped(limits.memory_exceeded().reason), None
        return None, None, (f"{task.file or '<input>'}: internal error: "
                            f"{type(e).__name__}: {e}")
    finally:
        _NOTIFY[0] = _TOLD[0] = None
        limits.end()


def run_calls(calls: list[tuple], timeout: float, memory_mb: Optional[int], jobs: int = 1,
              done: Optional[Callable[[Task, Outcome], None]] = None) -> list[Outcome]:
    """Run each (file, function, args) as function(*args) in a worker process under
    --timeout / --memory (and the cooperative limits): outcomes (test, value, error) in input
    order; a value `Stopped(reason)` when a limit stopped it or its worker died (test: the one
    it announced with `tell_test`, or None)."""
    tasks = [Task(i, f, None, None, timeout, memory_mb, call=(fn, args))
             for i, (f, fn, args) in enumerate(calls)]
    return run_tasks(tasks, jobs, done)


def _clear_cancel() -> None:
    """A worker runs the next test on the same Z3 context: undo the interrupt first."""
    from ..solve import clear_cancel
    clear_cancel()


# An outcome: (test or None, Result or None, error message or None)
Outcome = tuple


def execute(task: Task, notify: Optional[Callable[[tuple], None]] = None) -> Outcome:
    """Run one task in this process under the cooperative limits (also used directly by
    the Dask task, amdmm_smt/run/cluster.py, inside its own worker)."""
    from ..errors import LitmusError
    from .collect import model_for, parse_one
    from ..outcomes import limit_result
    if task.call is not None:
        return _execute_call(task, notify)
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
                                  decide_only=task.decide_only,
                                  max_outcomes=task.outcome_limit), None
        except limits.LimitExceeded as e:
            return test, limit_result(test, model, e.reason, time.perf_counter() - t0), None
        except LitmusError as e:
            return test, None, str(e)
        except RecursionError:
            return test, None, _too_deep(test.file, test.line)
        except Exception as e:  # never a traceback: report and fail the run
            timed_out = limits.cancel_reason(e)
            if timed_out is not None:     # Z3 interrupted at the deadline (issue 28 item 4)
                _clear_cancel()
                return test, limit_result(test, model, timed_out,
                                          time.perf_counter() - t0), None
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


_LIVE: "dict[int, _Worker]" = {}   # pid -> worker, of this process (closed in its children)
_DEATH: dict = {}                   # this process's pid -> (read, write) end of its death pipe
_LIBC = []


def _death_pipe() -> tuple:
    """One pipe per parent process whose write end only the parent holds: its workers read
    the other end and see end-of-file the moment the parent dies, however it dies."""
    me = os.getpid()
    if me not in _DEATH:
        _DEATH.clear()     # a pipe inherited from our own parent is not ours
        _DEATH[me] = os.pipe()
    return _DEATH[me]


def _die_with_parent(parent: int, death_read: int) -> None:
    """In a fresh worker: die with the parent (issue 22 item 2). Linux: the kernel sends
    SIGKILL when the parent dies (prctl PR_SET_PDEATHSIG); everywhere: a thread that waits
    for end-of-file on the parent's death pipe and exits."""
    try:
        if _LIBC and _LIBC[0] is not None:
            _LIBC[0].prctl(1, int(signal.SIGKILL), 0, 0, 0)    # PR_SET_PDEATHSIG
    except Exception:       # pragma: no cover - not Linux: the pipe still holds
        pass
    if os.getppid() != parent:        # the parent died before the line above
        os._exit(1)
    import threading

    def watch():
        try:
            while os.read(death_read, 1):
                pass
        except OSError:
            pass
        os._exit(1)
    threading.Thread(target=watch, daemon=True).start()


def _child(conn) -> None:
    """The worker loop: tasks in, stage reports and outcomes out."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)     # the parent handles ^C
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2):
        try:       # handlers of the process we were forked from (a Dask worker's) are not ours
            signal.signal(sig, signal.SIG_DFL)
        except (OSError, ValueError):   # pragma: no cover
            pass
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
        if _memory_lost(out[1]):
            return   # Z3 after running out of memory is not to be trusted: start afresh


def worker_modules(engine: str = "smt") -> list[str]:
    """The modules a worker runs a test with: only the engine the run uses (start-up: a Z3
    run does not load the reference engine). Also what `--dask local`'s fork server imports
    once for all its Dask workers (run/cluster.py)."""
    pkg = __name__.rsplit(".", 2)[0]
    return [f"{pkg}.outcomes", f"{pkg}.run.collect",
            f"{pkg}.reference" if engine == "reference" else f"{pkg}.solve"]


def _preload(engine: str = "smt") -> None:
    """Import what a worker runs before forking it: shared with the parent, not counted
    against the first test's --memory, not paid for again by every fresh worker."""
    import importlib
    for name in worker_modules(engine):
        importlib.import_module(name)
    if not _LIBC:
        try:
            import ctypes
            import sys
            _LIBC.append(ctypes.CDLL(None) if sys.platform.startswith("linux") else None)
        except Exception:   # pragma: no cover
            _LIBC.append(None)


class _Worker:
    def __init__(self, engine: str = "smt"):
        from multiprocessing import Pipe
        _preload(engine)
        death_read, death_write = _death_pipe()
        parent, child = Pipe(duplex=True)
        me = os.getpid()
        pid = os.fork()
        if pid == 0:     # the child
            try:
                parent.close()
                os.close(death_write)
                for w in _LIVE.values():    # siblings' pipes: a sibling's death is not ours
                    try:
                        os.close(w.conn.fileno())
                    except OSError:
                        pass
                _die_with_parent(me, death_read)
                _child(child)
            finally:
                os._exit(0)
        child.close()
        _LIVE[pid] = self
        self.pid = pid
        self.conn = parent
        self.task: Optional[Task] = None
        self.test = None
        self.stage = "starting"
        self.started = 0.0
        self.base_rss = 0
        self.peak = 0
        self.dead = False

    def give(self, task: Task) -> bool:
        """Hand the worker a task; False (and the worker reaped) when it has died while idle
        (issue 22 item 1): the task was never started and goes to another worker."""
        self.task, self.test, self.stage = task, task.test, "starting"
        self.started = time.monotonic()
        self.base_rss = _rss(self.pid)
        self.peak = 0          # resident growth over base_rss at the last memory poll
        try:
            self.conn.send(task)
        except (OSError, ValueError):      # BrokenPipeError, ConnectionResetError, closed
            self.task = self.test = None
            self.kill()
            return False
        return True

    def kill(self) -> None:
        if self.dead or self.pid <= 0:
            return
        try:
            os.kill(self.pid, signal.SIGKILL)   # this worker's own pid, never a group
        except ProcessLookupError:
            pass
        self.reap()

    def drain(self):
        """Read what the worker said before it is stopped (its stage, which test it parsed);
        its outcome if it has just finished after all (else None)."""
        try:
            while not self.dead and self.conn.poll():
                done = self.take(self.conn.recv())
                if done is not None:
                    return done
        except (EOFError, OSError, ValueError):
            pass
        return None

    def take(self, msg: tuple):
        """One message from the worker: a stage or the test it parsed is noted (None); a
        finished task's outcome is returned."""
        if msg[0] == "stage":
            self.stage = msg[1]
        elif msg[0] == "test":
            self.test = msg[1]
        else:
            return msg[1]
        return None

    def reap(self) -> None:
        if self.dead:
            return
        self.dead = True
        try:
            _, status = os.waitpid(self.pid, 0)
            self.status = status
        except ChildProcessError:
            self.status = None
        _LIVE.pop(self.pid, None)
        self.conn.close()

    def how(self) -> str:
        """How a reaped worker ended, in words."""
        st = getattr(self, "status", None)
        if st is not None and os.WIFSIGNALED(st):
            sig = os.WTERMSIG(st)
            try:
                name = signal.Signals(sig).name
            except ValueError:
                name = f"signal {sig}"
            return f"killed by {name}"
        if st is not None and os.WIFEXITED(st):
            return f"exited with status {os.WEXITSTATUS(st)}"
        return "died"

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


INLINE_BYTES = 8192     # a file up to this size, run alone, runs in this process (run_inline)
INLINE = True           # False: every test in a worker process (tests compare the two)
_STRAY: list = []       # test threads given up on at their hard limit (run_inline)


def inline_ok(tasks: list[Task], keep) -> bool:
    """Can this run be one test in this process with its limits held (run_inline)?"""
    if not INLINE or len(tasks) != 1 or keep is not None or stray():
        return False
    t = tasks[0]
    if t.call is not None or t.engine != "smt" or t.memory_mb or t.data is not None:
        return False
    if t.file is None:
        return True
    try:
        return os.path.getsize(t.file) <= INLINE_BYTES
    except OSError:
        return True       # parsing reports it, as a worker would


def stray() -> bool:
    """Is a test thread given up on at its hard limit still running?"""
    return any(th.is_alive() for th in _STRAY)


def run_inline(task: Task, done: Optional[Callable[[Task, Outcome], None]] = None) -> Outcome:
    """One task in a thread of this process, watched by this (the main) thread for the hard
    time limit (see the module's docstring)."""
    import threading
    seen = {"stage": "starting", "test": task.test}
    box: list = []
    finished = threading.Event()

    def notify(msg):
        if msg[0] == "stage":
            seen["stage"] = msg[1]
        elif msg[0] == "test":
            seen["test"] = msg[1]

    def body():
        try:
            box.append(execute(task, notify))
        except BaseException as e:   # pragma: no cover - execute reports everything itself
            box.append((task.test, None, f"{task.file or '<test>'}: internal error: "
                                         f"{type(e).__name__}: {e}"))
        finally:
            finished.set()
    th = threading.Thread(target=body, name="amdmm-smt test", daemon=True)
    started = time.monotonic()
    deadline = started + task.timeout + limits.GRACE
    th.start()
    while not finished.wait(max(0.0, min(1.0, deadline - time.monotonic()))):
        if time.monotonic() >= deadline:
            break
    if box:
        out = box[0]
    else:       # the hard limit: the thread is given up on (not interrupted: an interrupt
        _STRAY.append(th)   # left pending in Z3's context would cancel the next test's calls)
        out = _stopped_outcome(task, seen["test"], limits.timeout_reason(task.timeout,
                                                                          seen["stage"]),
                               time.monotonic() - started)
    if done:
        done(task, out)
    return out


def _stopped_outcome(task: Task, t, reason: str, seconds: float) -> Outcome:
    """The outcome of a task stopped at a limit: the test unknown, or before it was parsed an
    error naming the file."""
    from ..outcomes import limit_result
    if task.call is not None:
        return (t, Stopped(reason), None)
    if t is None:
        return (None, None, f"{task.file or '<test>'}: {reason}")
    from .collect import model_for
    try:
        model = model_for(t, task.model_name)
    except Exception:
        model = task.model_name or "?"
    return (t, limit_result(t, model, reason, seconds), None)


def run_tasks(tasks: list[Task], jobs: int,
              done: Optional[Callable[[Task, Outcome], None]] = None,
              keep: Optional[list] = None) -> list[Outcome]:
    """Run every task in `jobs` worker processes; outcomes in task order. `keep`: idle
    workers to use first, and where the workers left idle at the end go instead of being
    stopped (a Dask worker runs a run's chunks one after another and keeps its test process
    from one chunk to the next, as a local run keeps it from one test to the next). One small
    test alone runs in this process (inline_ok, run_inline)."""
    if inline_ok(tasks, keep):
        return [run_inline(tasks[0], done)]
    from multiprocessing.connection import wait
    engine = "reference" if any(t.engine == "reference" for t in tasks) else "smt"
    out: list[Optional[Outcome]] = [None] * len(tasks)
    pending = deque(tasks)
    workers: list[_Worker] = []
    while keep and len(workers) < jobs:
        w = keep.pop()
        if not w.dead:
            workers.append(w)
    busy: dict[int, _Worker] = {}        # fd -> worker

    def finish(w: _Worker, outcome: Outcome) -> None:
        out[w.task.index] = outcome
        if done:
            done(w.task, outcome)
        w.task = None

    def stopped(w: _Worker, reason: str) -> None:
        """The worker was killed or died: the test is unknown (or, before it was parsed,
        an error naming the file: the parent never parses it again, issue 22 item 5)."""
        finish(w, _stopped_outcome(w.task, w.test, reason, time.monotonic() - w.started))

    def fresh() -> Optional[_Worker]:
        try:
            w = _Worker(engine)
        except OSError:        # fork failed (no memory, no processes): retried below
            return None
        workers.append(w)
        return w

    starts_failed = 0
    retried: set = set()      # tasks given again after their worker died before starting them
    try:
        for _ in range(min(jobs, len(tasks)) - len(workers)):
            fresh()
        while pending or busy:
            for w in list(workers):
                if w.task is None and not w.dead and pending:
                    task = pending.popleft()
                    if w.give(task):
                        busy[w.conn.fileno()] = w
                        starts_failed = 0
                    else:           # died while idle: the task goes to a fresh worker
                        pending.appendleft(task)
                        starts_failed += 1
            for w in [w for w in workers if w.dead]:
                workers.remove(w)
            while pending and len(workers) < min(jobs, len(pending) + len(busy)):
                if starts_failed > 3 or fresh() is None:
                    starts_failed += 1
                    break
            if starts_failed > 3 and not busy:
                # workers die before they can take a task: say so for each test left
                while pending:
                    task = pending.popleft()
                    out[task.index] = (task.test, None, f"{task.file or '<test>'}: no worker "
                                       f"process could be started to run it")
                    if done:
                        done(task, out[task.index])
                break
            if not busy:
                continue
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
                        got = w.take(w.conn.recv())
                        if got is not None:
                            del busy[c.fileno()]
                            finish(w, got)
                            if _memory_lost(got[1]):
                                w.stop()     # it exits: Z3 after out-of-memory is not trusted
                            break
                except (EOFError, OSError):
                    del busy[c.fileno()]
                    w.kill()
                    how = w.how()
                    if w.stage == "starting" and w.task.index not in retried:
                        # it died as it was given the task (idle, a moment before): the
                        # task never started; a fresh worker takes it (once)
                        retried.add(w.task.index)
                        pending.appendleft(w.task)
                        w.task = None
                        continue
                    reason = f"worker process {how} during {w.stage}"
                    if w.task.memory_mb and how == "killed by SIGKILL":
                        # not --memory (the loop below stops a worker over its budget and
                        # says so): a kill from outside, or the system's out-of-memory
                        # killer; say which it looks like, from the last memory poll
                        # (issue 22 item 11: an external kill was called "out of memory")
                        grown = w.peak >> 20
                        if w.peak > (w.task.memory_mb << 20) // 2:
                            reason += (f" (not by amdmm-smt; it had grown by {grown} MiB of "
                                       f"--memory {w.task.memory_mb} MiB: the system's "
                                       f"out-of-memory killer?)")
                        else:
                            reason += (f" (not by amdmm-smt, not for --memory: it had grown by "
                                       f"{grown} MiB of {w.task.memory_mb} MiB; killed from "
                                       f"outside)")
                    stopped(w, reason)
            now = time.monotonic()
            for fd, w in list(busy.items()):
                reason = None
                if now > w.started + w.task.timeout + limits.GRACE:
                    reason = limits.timeout_reason
                elif w.task.memory_mb:
                    w.peak = max(w.peak, _rss(w.pid) - w.base_rss)
                    if w.peak > w.task.memory_mb << 20:
                        reason = limits.memory_reason
                if reason:
                    del busy[fd]
                    last = w.drain()     # the last stage it reported, the test it parsed
                    w.kill()
                    if last is not None:     # it finished just now after all
                        finish(w, last)
                        continue
                    stopped(w, reason(w.task.timeout if reason is limits.timeout_reason
                                      else w.task.memory_mb, w.stage))
            for w in [w for w in workers if w.dead]:
                workers.remove(w)
    finally:
        for w in workers:
            if w.task is not None:
                w.kill()
            elif keep is not None and not w.dead:
                keep.append(w)
            else:
                w.stop()
    return out  # type: ignore[return-value]

