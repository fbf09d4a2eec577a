"""Cold runs of two checkouts of triton-lint on the same packages, alternating, for a change's
cost on a shared machine: CPU time (user + system of the whole process tree, from `os.wait4`)
moves far less with other users' load than wall time, so both are printed.

    python bench/compare.py OLD_CHECKOUT NEW_CHECKOUT PACKAGE_DIR... [--rounds 2]

Each checkout runs with ``PYTHONPATH`` pointing at it (`check --isolated --no-cache`, the
default rules); the load average is printed beside each run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path


def cold_run(checkout: Path, package: Path) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds and the number of output lines of one cold run."""
    command = [sys.executable, "-m", "triton_lint", "check", "--isolated", "--no-cache"]
    environment = dict(os.environ, PYTHONPATH=str(checkout))
    start = time.perf_counter()
    process = subprocess.Popen(
        [*command, str(package)],
        cwd=checkout,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdout is not None
    lines = len(process.stdout.read().splitlines())
    _, _, usage = os.wait4(process.pid, 0)
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime, lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("packages", type=Path, nargs="+")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    totals = {"old": 0.0, "new": 0.0}
    for package in args.packages:
        cpu: dict[str, list[float]] = {"old": [], "new": []}
        for _ in range(args.rounds):
            for name, checkout in (("old", args.old), ("new", args.new)):
                wall, seconds, lines = cold_run(checkout, package)
                cpu[name].append(seconds)
                print(
                    f"{package.name:24s} {name} wall {wall:6.2f} s  CPU {seconds:6.2f} s  "
                    f"{lines} lines  load {os.getloadavg()[0]:.1f}",
                    flush=True,
                )
        old, new = statistics.median(cpu["old"]), statistics.median(cpu["new"])
        totals["old"] += old
        totals["new"] += new
        print(f"{package.name:24s} median CPU {old:.2f} -> {new:.2f} s ({new / old:.2f}x)")
    print(
        f"all packages: median CPU {totals['old']:.2f} -> {totals['new']:.2f} s "
        f"({totals['new'] / totals['old']:.2f}x)"
    )


if __name__ == "__main__":
    main()
