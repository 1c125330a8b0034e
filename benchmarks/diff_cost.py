"""What `amdmm-smt diff` costs next to two `verify` runs over the same corpus.

    python3 benchmarks/diff_cost.py [PATH] [--from seed] [--to upstream-2026]

Runs each command in-process (Z3 loaded once beforehand) and prints a table of wall times.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from click.testing import CliRunner  # noqa: E402

from amdmm_smt.cli import main  # noqa: E402


def timed(args) -> float:
    t0 = time.perf_counter()
    CliRunner().invoke(main, args)
    return time.perf_counter() - t0


def run() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("path", nargs="?", default="litmus")
    ap.add_argument("--from", dest="a", default="seed")
    ap.add_argument("--to", dest="b", default="upstream-2026")
    o = ap.parse_args()
    timed(["verify", "--model", o.a, o.path])          # warm-up
    va = timed(["verify", "--model", o.a, "--json", o.path])
    vb = timed(["verify", "--model", o.b, "--json", o.path])
    d = timed(["diff", "--from", o.a, "--to", o.b, "--format", "json", o.path])
    dn = timed(["diff", "--from", o.a, "--to", o.b, "--format", "json", "--no-explain",
                o.path])
    print(f"{'command':<40} {'seconds':>8}")
    print(f"{'verify --model ' + o.a:<40} {va:>8.2f}")
    print(f"{'verify --model ' + o.b:<40} {vb:>8.2f}")
    print(f"{'two verify runs':<40} {va + vb:>8.2f}")
    print(f"{'diff --from ' + o.a + ' --to ' + o.b:<40} {d:>8.2f}")
    print(f"{'  the same, --no-explain':<40} {dn:>8.2f}")
    print(f"diff / two verify runs: {d / (va + vb):.2f}")


if __name__ == "__main__":
    run()
