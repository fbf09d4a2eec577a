"""What the full text format costs over the concise one on a cold run of the bundled fixtures.

Usage: python bench/text_output.py [--rounds 7] [--write]

Each round runs ``triton-lint fixtures --no-cache`` once per style (alternating, so load on the
machine hits both alike) and times the whole process; it also times rendering alone, in process,
on the result of one run. Prints the medians; ``--write`` puts them in docs/performance.md under
"Text output" (bench/speed.py keeps that section when it rewrites the file).
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from triton_lint.reporters.full import FullOptions, render_full
from triton_lint.reporters.text import render_text
from triton_lint.run import RunOptions, lint_paths

ROOT = Path(__file__).resolve().parent.parent
REPORT = ROOT / "docs" / "performance.md"
#: The section this script owns in docs/performance.md, from this heading to the end.
SECTION = "## Text output"


def cold_run(style: str) -> tuple[float, float]:
    """(wall, CPU) seconds of one run; CPU counts the worker processes too and is what a loaded
    machine disturbs least."""
    command = [sys.executable, "-m", "triton_lint", "fixtures", "--no-cache", "--isolated"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [*command, "--output-format", style, "--show-fixes"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def render_times(rounds: int) -> tuple[float, float, int]:
    """Median seconds to render the concise and the full report of the fixtures' findings."""
    previous = Path.cwd()
    os.chdir(ROOT)
    try:
        result = lint_paths([Path("fixtures")], RunOptions(isolated=True))
        concise, full = [], []
        for _ in range(rounds):
            start = time.perf_counter()
            render_text(result, False)
            concise.append(time.perf_counter() - start)
            start = time.perf_counter()
            render_full(result, False, FullOptions(show_fixes=True))
            full.append(time.perf_counter() - start)
    finally:
        os.chdir(previous)
    return statistics.median(concise), statistics.median(full), len(result.findings)


def _change(times: dict[str, float]) -> str:
    return f"{100 * (times['full'] - times['concise']) / times['concise']:+.1f}%"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--write", action="store_true", help="update docs/performance.md")
    args = parser.parse_args()
    runs: dict[str, list[tuple[float, float]]] = {"concise": [], "full": []}
    for _ in range(args.rounds):
        for style, times in runs.items():
            times.append(cold_run(style))
    wall = {s: statistics.median(w for w, _ in runs[s]) for s in runs}
    cpu = {s: statistics.median(c for _, c in runs[s]) for s in runs}
    render_concise, render_full_time, findings = render_times(args.rounds)
    lines = [
        SECTION,
        "",
        f"Written by `python bench/text_output.py` on {platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}: `triton-lint fixtures "
        f"--no-cache --show-fixes` ({findings} findings), medians of {args.rounds} cold runs "
        "of each style, alternating. CPU time counts the worker processes; wall time also "
        "counts whatever else the machine was doing.",
        "",
        "| output format | cold run, CPU (s) | cold run, wall (s) | rendering alone (ms) |",
        "|---|---:|---:|---:|",
        f"| concise | {cpu['concise']:.2f} | {wall['concise']:.2f} | {render_concise * 1000:.1f} |",
        f"| full | {cpu['full']:.2f} | {wall['full']:.2f} | {render_full_time * 1000:.1f} |",
        "",
        f"The full format adds {_change(cpu)} CPU time ({_change(wall)} wall) to the cold run; "
        f"rendering alone adds {100 * (render_full_time - render_concise) / cpu['concise']:.1f}% "
        "of the concise run's CPU time.",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if args.write:
        current = REPORT.read_text(encoding="utf-8")
        kept = current.split(SECTION)[0].rstrip("\n")
        REPORT.write_text(f"{kept}\n\n{text}", encoding="utf-8")


if __name__ == "__main__":
    main()
