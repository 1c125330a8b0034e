"""Scaling families of litmus tests, generated as text in the contract's format.

Each family is a function `f(n) -> str` (one YAML test of size n). `FAMILIES` maps a name to
(function, sizes to try, what n counts). Families other engineers add (barrier phases,
async pipelines, spin locks) register here with `register(name, f, sizes, unit)`.
"""

from __future__ import annotations

G = "ptr addrspace(1)"


def _thread(name: str, wg: int, lines: list[str]) -> str:
    body = "".join(f"      {ln}\n" for ln in lines)
    return f"  {name}:\n    workgroup: {wg}\n    code: |\n{body}"


def mp_chain(n: int) -> str:
    """n-thread message passing chain: T0 writes data then flag f1 (release); Ti acquires
    f_i and releases f_{i+1}; the last thread acquires f_{n-1} and reads data. The state
    where every flag was seen but data is stale is forbidden (hb is transitive)."""
    n = max(2, n)
    mem = "memory:\n  d: {}\n" + "".join(f"  f{i}: {{}}\n" for i in range(1, n))
    th = [_thread("T0", 0, [f"store i32 1, {G} @d",
                            f'store atomic i32 1, {G} @f1 syncscope("agent") release'])]
    for i in range(1, n - 1):
        th.append(_thread(f"T{i}", i, [
            f'%r = load atomic i32, {G} @f{i} syncscope("agent") acquire',
            f'store atomic i32 1, {G} @f{i + 1} syncscope("agent") release']))
    th.append(_thread(f"T{n - 1}", n - 1, [
        f'%r = load atomic i32, {G} @f{n - 1} syncscope("agent") acquire',
        f"%d = load i32, {G} @d"]))
    cond = " && ".join([f"T{i}:%r == 1" for i in range(1, n)] + [f"T{n - 1}:%d == 0"])
    return (f"name: MP-chain-{n}\n{mem}threads:\n" + "".join(th)
            + f'exists: "{cond}"\nexpect: forbidden\n')


def sb_ring(n: int) -> str:
    """n-thread store-buffering ring: Ti stores x_i then loads x_{i+1 mod n}, monotonic at
    agent scope; the all-zero state is allowed (no seq_cst), 2^n outcomes."""
    n = max(2, n)
    mem = "memory:\n" + "".join(f"  x{i}: {{}}\n" for i in range(n))
    th = [_thread(f"T{i}", i, [
        f'store atomic i32 1, {G} @x{i} syncscope("agent") monotonic',
        f'%r = load atomic i32, {G} @x{(i + 1) % n} syncscope("agent") monotonic'])
        for i in range(n)]
    cond = " && ".join(f"T{i}:%r == 0" for i in range(n))
    return f"name: SB-ring-{n}\n{mem}threads:\n" + "".join(th) + \
        f'exists: "{cond}"\nexpect: allowed\n'


def iriw(n: int) -> str:
    """IRIW with 2 writers and n readers, even readers reading x then y, odd ones y then x
    (acquire, agent). Expectation: R0 seeing x new and y old while R1 sees y new and x old is
    allowed: nothing orders W1's store before R0's load of y (only W0 synchronizes with R0),
    so R0 may see y's initial write, and symmetrically for R1 (no seq_cst, S000 value rule)."""
    n = max(2, n)
    mem = "memory:\n  x: {}\n  y: {}\n"
    th = [_thread("W0", 0, [f'store atomic i32 1, {G} @x syncscope("agent") release']),
          _thread("W1", 1, [f'store atomic i32 1, {G} @y syncscope("agent") release'])]
    for j in range(n):
        a, b = ("x", "y") if j % 2 == 0 else ("y", "x")
        th.append(_thread(f"R{j}", 2 + j, [
            f'%a = load atomic i32, {G} @{a} syncscope("agent") acquire',
            f'%b = load atomic i32, {G} @{b} syncscope("agent") acquire']))
    return (f"name: IRIW-{n}\n{mem}threads:\n" + "".join(th) + 'exists: "R0:%a == 1 && '
            'R0:%b == 0 && R1:%a == 1 && R1:%b == 0"\nexpect: allowed\n')


def ops_per_thread(n: int, threads: int = 4) -> str:
    """`threads` threads of n operations each over 2 locations: release stores and acquire
    loads, locations alternating (a stress shape). Expectation: T0's first load (of y) may
    return y's initial 0: T0 performs no acquire before it, so no store to y happens-before
    it and the initial write stays visible (S000 value rule) — allowed."""
    mem = "memory:\n  x: {}\n  y: {}\n"
    th = []
    for t in range(threads):
        lines = []
        for k in range(n):
            loc = "x" if (k + t) % 2 == 0 else "y"
            if (k + t) % 3 == 0:
                lines.append(f'store atomic i32 {t * 100 + k + 1}, {G} @{loc} '
                             f'syncscope("agent") release')
            else:
                lines.append(f'%r{k} = load atomic i32, {G} @{loc} syncscope("agent") acquire')
        th.append(_thread(f"T{t}", t, lines))
    return (f"name: OPS-{threads}x{n}\n{mem}threads:\n" + "".join(th)
            + 'exists: "T0:%r1 == 0"\nexpect: allowed\n')


def lock_contenders(n: int) -> str:
    """n contenders for one lock word, straight-line: each tries `cmpxchg @lock, 0, 1`
    (acquire on success) once, increments @cnt non-atomically and releases with an agent
    release store of 0. Expectation: every CAS succeeding with @cnt ending at n is allowed —
    the sequential execution (each contender in turn, its CAS reading the previous one's
    release store of 0) satisfies every axiom (a sequentially consistent execution)."""
    n = max(2, n)
    mem = "memory:\n  lock: {space: global, init: 0}\n  cnt: {space: global, init: 0}\n"
    th = [_thread(f"T{i}", i, [
        f'%o = cmpxchg {G} @lock, i32 0, i32 1 syncscope("agent") acquire monotonic',
        f"%c = load i32, {G} @cnt",
        "%c1 = add i32 %c, 1",
        f"store i32 %c1, {G} @cnt",
        f'store atomic i32 0, {G} @lock syncscope("agent") release']) for i in range(n)]
    cond = " && ".join([f"T{i}:%o == 0" for i in range(n)] + [f"@cnt == {n}"])
    return f"name: LOCK-{n}\n{mem}threads:\n" + "".join(th) + \
        f'exists: "{cond}"\nexpect: allowed\n'


def barrier_waves(n: int) -> str:
    """n waves of one workgroup, one barrier phase (benchmarks/barrier_scaling.py: wave 0
    publishes x before the barrier, the others read it after; its expectation)."""
    from barrier_scaling import family
    return family(n, 1, False)


def async_stages(n: int) -> str:
    """A software pipeline of 2n asynchronous copies, n blocks in flight
    (benchmarks/async_scaling.py, variant exact; its expectation)."""
    from async_scaling import pipeline
    return pipeline(2 * n, n)


FAMILIES: dict = {
    "mp-chain": (mp_chain, [4, 8, 12, 16, 24, 32], "threads"),
    "sb-ring": (sb_ring, [4, 6, 8, 10, 12, 13], "threads"),
    "iriw": (iriw, [2, 3, 4, 5, 6], "readers"),
    "ops-per-thread": (ops_per_thread, [2, 3, 4, 6, 8, 12, 16, 20], "ops/thread (4 threads)"),
    "barrier-waves": (barrier_waves, [2, 4, 8, 12, 16], "waves"),
    "async-stages": (async_stages, [1, 2, 3, 4, 6], "stages (2 copies each)"),
    "lock-contenders": (lock_contenders, [2, 3, 4, 6, 8], "contenders"),
}


def register(name: str, f, sizes: list, unit: str) -> None:
    """Hook for families other modules add (barrier phases, async pipelines, spin locks)."""
    FAMILIES[name] = (f, sizes, unit)
