"""Warm-cache cost of one changed file, over many files: CPU time of `triton-lint check`
over a copy of a package whose results cache is filled, after a statement is appended to one
kernel file (drawn by seed). That file is linted again, and so is every file whose findings
read it; `bench/warm_edit.py` times one chosen launching function instead.

    python bench/warm_sweep.py PACKAGE_DIR [--files 30] [--seed 1] [--code DIR]

`--code` times another checkout of triton-lint (put first on PYTHONPATH), so the same draw of
files can be timed before and after a change. Prints each file's time, then the median, the
90th percentile, the maximum and the share of edits at most 0.5 s.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from warm_edit import ROOT, cpu_of


def kernel_files(root: Path) -> list[Path]:
    """Files under ``root`` that define a ``@triton.jit`` function, in path order."""
    return sorted(p for p in root.rglob("*.py") if b"triton.jit" in p.read_bytes())


def append_statement(path: Path, number: int) -> None:
    """Add ``_edit_N = N`` after the last line: a change of code that moves no line."""
    text = path.read_text()
    path.write_text(f"{text.rstrip()}\n_edit_{number} = {number}\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("package", type=Path)
    parser.add_argument("--files", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--code", type=Path, default=ROOT, help="the triton-lint checkout to time")
    args = parser.parse_args()
    environment = dict(os.environ, PYTHONPATH=str(args.code.resolve()))
    environment.pop("PYTHONDONTWRITEBYTECODE", None)
    # `python -m` puts the working directory first on sys.path: run from a checkout, the
    # timed code would be that checkout's, whatever --code says (Python 3.11+ honours this)
    environment["PYTHONSAFEPATH"] = "1"
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / args.package.name
        shutil.copytree(args.package, copy)
        files = kernel_files(copy)
        drawn = random.Random(args.seed).sample(files, min(args.files, len(files)))
        command = [sys.executable, "-m", "triton_lint", "check", "--isolated"]
        command += ["--cache-dir", str(Path(scratch) / "cache"), str(copy)]
        cpu_of(command, environment)  # fills the cache, writes bytecode
        times = []
        for number, path in enumerate(drawn):
            append_statement(path, number)
            times.append(cpu_of(command, environment))
            print(f"{times[-1]:.2f} s  {path.relative_to(copy)}")
        times.sort()
        p90 = times[min(len(times) - 1, int(0.9 * len(times)))]
        within = sum(t <= 0.5 for t in times)
        print(
            f"{len(times)} edits: median {statistics.median(times):.2f} s, p90 {p90:.2f} s, "
            f"max {times[-1]:.2f} s, {within}/{len(times)} at most 0.5 s  "
            f"(code {args.code}, load {os.getloadavg()[0]:.1f})"
        )


if __name__ == "__main__":
    main()
