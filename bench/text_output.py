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


def cold_run(style: str) -> float:
    command = [sys.executable, "-m", "triton_lint", "fixtures", "--no-cache", "--isolated"]
    start = time.perf_counter()
    subprocess.run(
        [*command, "--output-format", style, "--show-fixes"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    return time.perf_counter() - start


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--write", action="store_true", help="update docs/performance.md")
    args = parser.parse_args()
    walls: dict[str, list[float]] = {"concise": [], "full": []}
    for _ in range(args.rounds):
        for style in walls:
            walls[style].append(cold_run(style))
    concise, full = (statistics.median(walls[s]) for s in ("concise", "full"))
    render_concise, render_full_time, findings = render_times(args.rounds)
    lines = [
        SECTION,
        "",
        f"Written by `python bench/text_output.py` on {platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}: `triton-lint fixtures "
        f"--no-cache --show-fixes` ({findings} findings), medians of {args.rounds} cold runs "
        "of each style, alternating.",
        "",
        "| output format | cold run (s) | rendering alone (ms) |",
        "|---|---:|---:|",
        f"| concise | {concise:.2f} | {render_concise * 1000:.1f} |",
        f"| full | {full:.2f} | {render_full_time * 1000:.1f} |",
        "",
        f"The full format adds {100 * (full - concise) / concise:+.1f}% to the cold run "
        f"(rendering alone: {100 * (render_full_time - render_concise) / concise:+.1f}% "
        "of the concise run).",
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
