"""How fast triton-lint is next to ruff and fixit on the same files; writes docs/performance.md.

    python bench/speed.py                      # both corpora, 3 alternating rounds
    python bench/speed.py --rounds 1 --fixit /path/to/venv/bin/fixit

Corpora: (a) kernel-dense, the Python files of the pinned flag-gems, liger-kernel and fla-core
wheels (downloaded and unpacked by bench/corpus.py's cache); (b) a mixed monorepo, the torch
and triton packages installed in this environment (found without importing them).

Each round runs every tool once on each corpus, in turn (so drift in the machine's speed hits
all tools alike): triton-lint cold (`--no-cache`), ruff `check --select ALL --no-cache` and
fixit `lint` with its default rules (on the kernel-dense corpus only: it takes minutes). Wall
time is the median over rounds; CPU time and peak RSS of a run come from `os.wait4` (peak RSS
is the largest single process: workers are not summed). Then triton-lint warm (a cache filled
by one run, nothing changed), after one edit of a launching function, after a caller of it
is added (which changes what the project index read: `triton_lint/project/incremental.py`
brings it up to date), and one file at a time, as pre-commit runs it. Runs write their
bytecode, as an installed package has it. fixit comes from `--fixit` or PATH (`pip install
fixit`); a missing tool gets a row that says so.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from corpus import CACHE, PINNED, fetch  # noqa: E402

REPORT = ROOT / "docs" / "performance.md"
DENSE = ("flag-gems", "liger-kernel", "fla-core")


@dataclass
class Run:
    wall: float
    cpu: float
    rss_mb: float


@dataclass
class Corpus:
    name: str
    paths: list[Path]
    files: int
    megabytes: float


def corpus_of(name: str, paths: list[Path]) -> Corpus:
    sizes = [p.stat().st_size for path in paths for p in path.rglob("*.py")]
    return Corpus(name, paths, len(sizes), sum(sizes) / 1e6)


def installed_package(name: str) -> Path | None:
    """Where an installed package lives, without importing it (torch takes a second)."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


#: Runs write their bytecode, as an installed package has it: an environment that forbids it
#: (PYTHONDONTWRITEBYTECODE) would compile every module the checkout changed on every run.
ENVIRONMENT = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def measure(command: list[str], cwd: Path | None = None) -> Run:
    """Run ``command`` with its output discarded; its wall time, CPU time and peak RSS."""
    start = time.perf_counter()
    process = subprocess.Popen(
        command,
        cwd=cwd,
        env=ENVIRONMENT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command[:4])} ... exited {process.returncode}")
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def tools(fixit: str | None, ruff: str | None) -> dict[str, list[str] | None]:
    return {
        "triton-lint": [sys.executable, "-m", "triton_lint", "check", "--isolated", "--no-cache"],
        "ruff --select ALL": None
        if ruff is None
        else [ruff, "check", "--select", "ALL", "--no-cache", "--isolated", "--exit-zero", "-q"],
        "fixit": None if fixit is None else [fixit, "lint"],
    }


def compare(corpora: list[Corpus], rounds: int, fixit: str | None, ruff: str | None):
    """{(corpus, tool): runs}, alternating tools within each round."""
    results: dict[tuple[str, str], list[Run]] = {}
    for round_number in range(rounds):
        for corpus in corpora:
            for tool, command in tools(fixit, ruff).items():
                if command is None or (tool == "fixit" and corpus.name != "kernel-dense"):
                    continue
                if tool == "fixit" and round_number > 0:
                    continue  # minutes per run: once is enough to place it
                run = measure([*command, *map(str, corpus.paths)])
                results.setdefault((corpus.name, tool), []).append(run)
                print(f"  round {round_number + 1} {corpus.name:13s} {tool:18s} {run.wall:7.2f} s")
    return results


def warm(corpus: Corpus, rounds: int) -> list[Run]:
    with tempfile.TemporaryDirectory() as cache:
        command = [sys.executable, "-m", "triton_lint", "check", "--isolated", "--cache-dir"]
        command += [cache, *map(str, corpus.paths)]
        measure(command)  # fills the cache
        return [measure(command) for _ in range(rounds)]


def changed_one(corpus: Corpus, rounds: int) -> list[Run]:
    """A warm cache with one file changed, as after an edit: a statement is added before a
    launch in a launching file without kernels of its own (the kernel file it launches is
    linted again: its findings read the launch; `bench/warm_edit.py` also times an edit
    nothing reads)."""
    from warm_edit import insert_statement, launch_line, launching_file

    def edit_for(package: Path) -> Callable[[int], None]:
        target, pattern, _ = launching_file(package)
        return lambda number: insert_statement(target, launch_line(target, pattern), number)

    return after_edits(corpus, rounds, edit_for)


def changed_answers(corpus: Corpus, rounds: int) -> list[Run]:
    """As `changed_one`, but the edit appends a function that calls the launching function:
    it changes what the project index read, so the index is brought up to date for the
    kernel files it reaches (`triton_lint/project/incremental.py`)."""
    from warm_edit import append_caller, launch_line, launching_file, launching_function

    def edit_for(package: Path) -> Callable[[int], None]:
        target, pattern, _ = launching_file(package)
        function = launching_function(target, launch_line(target, pattern))
        assert function is not None, f"the launch in {target} is not in a top-level function"
        return lambda number: append_caller(target, function, number)

    return after_edits(corpus, rounds, edit_for)


def after_edits(
    corpus: Corpus, rounds: int, edit_for: Callable[[Path], Callable[[int], None]]
) -> list[Run]:
    """Warm runs, each after the edit ``edit_for`` makes for the copy of the corpus's first
    package: the corpus is copied (its cache directory is shared) and the cache filled."""
    with tempfile.TemporaryDirectory() as scratch:
        copies = []
        for path in corpus.paths:
            copies.append(Path(scratch) / path.name)
            shutil.copytree(path, copies[-1])
        command = [sys.executable, "-m", "triton_lint", "check", "--isolated", "--cache-dir"]
        command += [str(Path(scratch) / "cache"), *map(str, copies)]
        measure(command)
        edit = edit_for(copies[0])
        runs = []
        for round_number in range(rounds):
            edit(round_number)
            runs.append(measure(command))
        return runs


def index_cost(corpus: Corpus) -> tuple[float, int, int]:
    """Seconds to build the project index of each package of the corpus (files already
    read), the kernel files with project facts, and those with launches in another file."""
    from triton_lint.project.index import ProjectIndex

    seconds, with_facts, foreign = 0.0, 0, 0
    for root in corpus.paths:
        files = [(str(p), p, p.read_bytes()) for p in sorted(root.rglob("*.py"))]
        start = time.perf_counter()
        index = ProjectIndex(files)
        seconds += time.perf_counter() - start
        with_facts += len(index.kernel_files())
        foreign += len(index.kernel_refs)
    return seconds, with_facts, foreign


def one_file(corpus: Corpus, count: int) -> list[tuple[int, Run]]:
    """triton-lint on single kernel files spread over the size range: (bytes, run)."""
    kernels = sorted(
        (p for path in corpus.paths for p in path.rglob("*.py") if _holds_kernel(p)),
        key=lambda p: p.stat().st_size,
    )
    step = max(1, len(kernels) // count)
    chosen = [*kernels[step // 2 :: step][: count - 1], kernels[-1]]  # and the largest
    command = [sys.executable, "-m", "triton_lint", "check", "--isolated", "--no-cache"]
    return [(p.stat().st_size, measure([*command, str(p)])) for p in chosen]


def _holds_kernel(path: Path) -> bool:
    data = path.read_bytes()
    return b"@triton.jit" in data


def render(
    corpora: list[Corpus],
    results: dict[tuple[str, str], list[Run]],
    warm_runs: dict[str, list[Run]],
    singles: list[tuple[int, Run]],
    missing: list[str],
    changed: dict[str, list[Run]] | None = None,
    indexes: dict[str, tuple[float, int, int]] | None = None,
    rebuilt: dict[str, list[Run]] | None = None,
) -> str:
    lines = [
        "# Performance",
        "",
        "Written by `python bench/speed.py` (do not edit by hand). Machine: "
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{time.strftime('%Y-%m-%d')}.",
        "",
        "| corpus | tool | files | MB | wall (s) | CPU (s) | peak RSS (MB) | wall / ruff |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for corpus in corpora:
        ruff = results.get((corpus.name, "ruff --select ALL"))
        ruff_wall = statistics.median(r.wall for r in ruff) if ruff else None
        for tool in ("triton-lint", "ruff --select ALL", "fixit"):
            runs = results.get((corpus.name, tool))
            if not runs:
                continue
            wall = statistics.median(r.wall for r in runs)
            cpu = statistics.median(r.cpu for r in runs)
            rss = max(r.rss_mb for r in runs)
            ratio = f"{wall / ruff_wall:.1f}x" if ruff_wall else "-"
            lines.append(
                f"| {corpus.name} | {tool} (cold, {len(runs)} run{'s' * (len(runs) > 1)}) | "
                f"{corpus.files} | {corpus.megabytes:.1f} | {wall:.2f} | {cpu:.2f} | "
                f"{rss:.0f} | {ratio} |"
            )
        if corpus.name in warm_runs:
            runs = warm_runs[corpus.name]
            wall = statistics.median(r.wall for r in runs)
            ratio = f"{wall / ruff_wall:.2f}x" if ruff_wall else "-"
            lines.append(
                f"| {corpus.name} | triton-lint (warm cache) | {corpus.files} | "
                f"{corpus.megabytes:.1f} | {wall:.2f} | "
                f"{statistics.median(r.cpu for r in runs):.2f} | "
                f"{max(r.rss_mb for r in runs):.0f} | {ratio} |"
            )
        for label, edited in (
            ("a launching function edited", changed),
            ("a caller of it added: the index brought up to date", rebuilt),
        ):
            if edited and corpus.name in edited:
                runs = edited[corpus.name]
                lines.append(
                    f"| {corpus.name} | triton-lint (warm cache, {label}) | "
                    f"{corpus.files} | {corpus.megabytes:.1f} | "
                    f"{statistics.median(r.wall for r in runs):.2f} | "
                    f"{statistics.median(r.cpu for r in runs):.2f} | "
                    f"{max(r.rss_mb for r in runs):.0f} | - |"
                )
    for tool in missing:
        lines.append(f"| - | {tool} | not installed | | | | | |")
    if indexes:
        lines += [
            "",
            "The project index (`triton_lint/project/`), built in the run's parent "
            "process before the workers start (files already read):",
            "",
            "| corpus | index (s) | kernel files with project facts | "
            "with launches in another file |",
            "|---|---:|---:|---:|",
        ]
        for name, (seconds, with_facts, foreign) in indexes.items():
            lines.append(f"| {name} | {seconds:.2f} | {with_facts} | {foreign} |")
    if singles:
        walls = sorted(run.wall for _, run in singles)
        lines += [
            "",
            f"One kernel file at a time (pre-commit; {len(singles)} files of the kernel-dense "
            "corpus spread over its size ranks, and its largest; interpreter start-up "
            "included, no cache):",
            "",
            "| file size (KB) | wall (s) |",
            "|---:|---:|",
            *(f"| {size / 1000:.1f} | {run.wall:.2f} |" for size, run in singles),
            "",
            f"Median {statistics.median(walls):.2f} s, slowest {walls[-1]:.2f} s.",
        ]
    lines.append("")
    return "\n".join(lines)


#: Sections other benchmarks write into the report, kept when this one rewrites it.
KEPT_SECTIONS = ("## Text output",)


def kept_sections() -> str:
    """The sections of the current report that other benchmarks own (bench/text_output.py)."""
    current = REPORT.read_text(encoding="utf-8") if REPORT.exists() else ""
    kept = [current[current.index(title) :] for title in KEPT_SECTIONS if title in current]
    return "".join(f"\n{section}" for section in kept)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--fixit", default=shutil.which("fixit"))
    parser.add_argument("--ruff", default=shutil.which("ruff"))
    parser.add_argument("--single-files", type=int, default=12)
    parser.add_argument("--cache", type=Path, default=CACHE)
    parser.add_argument("--no-report", action="store_true", help="print only")
    args = parser.parse_args()

    wheels = fetch(args.cache, [(name, version) for name, version in PINNED if name in DENSE])
    corpora = [corpus_of("kernel-dense", [path for _, _, path in wheels])]
    packages = [p for p in map(installed_package, ("torch", "triton")) if p is not None]
    if packages:
        corpora.append(corpus_of("mixed", packages))
    for corpus in corpora:
        print(f"{corpus.name}: {corpus.files} files, {corpus.megabytes:.1f} MB")
    results = compare(corpora, args.rounds, args.fixit, args.ruff)
    warm_runs = {corpus.name: warm(corpus, args.rounds) for corpus in corpora}
    changed = {corpora[0].name: changed_one(corpora[0], args.rounds)}
    rebuilt = {corpora[0].name: changed_answers(corpora[0], args.rounds)}
    indexes = {corpus.name: index_cost(corpus) for corpus in corpora}
    singles = one_file(corpora[0], args.single_files) if args.single_files else []
    missing = [tool for tool, command in tools(args.fixit, args.ruff).items() if command is None]
    report = render(corpora, results, warm_runs, singles, missing, changed, indexes, rebuilt)
    print(report)
    if not args.no_report:
        REPORT.write_text(report + kept_sections())


if __name__ == "__main__":
    main()
