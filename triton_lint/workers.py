"""Lint many files at once in worker processes; results come back in the order given."""

from __future__ import annotations

import gc
import os
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from triton_lint.engine import FileResult, lint_bytes, lint_text
from triton_lint.finding import Finding
from triton_lint.fixes import fix_text
from triton_lint.model.project import ProjectContext
from triton_lint.rules.base import Rule
from triton_lint.selection import rules_for

if TYPE_CHECKING:
    import multiprocessing.context


@dataclass(frozen=True)
class FileJob:
    """One file to lint and what decides its findings: sent to a worker as is."""

    display: str  # the path findings carry
    data: bytes
    codes: tuple[str, ...]
    target: str
    #: The other files of the project its launches and callers are in (None: none known).
    project: ProjectContext | None = None


def default_jobs() -> int:
    """The cores this process may use."""
    if hasattr(os, "process_cpu_count"):  # Python 3.13+
        return os.process_cpu_count() or 1
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


@cache
def _rules(codes: tuple[str, ...]) -> list[Rule]:
    return rules_for(set(codes))


#: Set by a process that ends once its run is reported (the console entry, `__main__`): the
#: last file it lints itself leaves its model to the exit, frozen rather than collected (the
#: collection of a kernel file's model is a fiftieth of a warm run that lints one file).
#: A fact of the process, not an option of a run: the entry sets it before the command line
#: exists, worker processes import this module afresh and keep it False, and library callers
#: (the language server, tests) that go on running never set it.
LAST_MODEL_LEFT_TO_EXIT = False


def lint_job(job: FileJob, last: bool = False) -> FileResult:
    """Lint one file; the model and text stay behind (the parent has the bytes)."""
    with _collector_paused(freeze=last and LAST_MODEL_LEFT_TO_EXIT):
        result = lint_bytes(job.display, job.data, _rules(job.codes), job.target, job.project)
        result.model = None
        result.text = None
    return result


def lint_source(
    display: str,
    text: str,
    codes: tuple[str, ...],
    target: str,
    project: ProjectContext | None = None,
) -> FileResult:
    """Lint an editor's unsaved text (the language server's worker runs this)."""
    with _collector_paused():
        result = lint_text(display, text, _rules(codes), target, project)
        result.findings = [f for f in result.findings if f.path == display]
        result.model = None
        result.text = None
    return result


def lint_for(
    display: str,
    text: str,
    codes: tuple[str, ...],
    target: str,
    project: ProjectContext,
    wanted: str,
) -> list[Finding]:
    """The findings that linting the kernel file ``display`` gives in another file, ``wanted``
    (an editor's launching file: what its launches imply about the kernels they launch)."""
    with _collector_paused():
        result = lint_text(display, text, _rules(codes), target, project)
    return [f for f in result.findings if f.path == wanted]


def fix_source(display: str, text: str, codes: tuple[str, ...], target: str, unsafe: bool) -> str:
    """``text`` with every applicable fix applied, re-linted until stable (as `--fix`)."""
    rules = _rules(codes)

    def relint(candidate: str) -> list[Finding]:
        return lint_text(display, candidate, rules, target).findings

    with _collector_paused():
        outcome, _ = fix_text(display, text, relint(text), relint, unsafe)
    return outcome.fixed


@contextmanager
def _collector_paused(freeze: bool = False) -> Iterator[None]:
    """Pause the collector while a file is linted.

    Its passes over the tree libcst builds (hundreds of thousands of young objects) cost an
    eighth of the run, and the model is cyclic garbage all at once afterwards, freed by one
    young-generation collection; or, with ``freeze``, never looked at again (the process
    ends next and the system takes its memory back at once).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
    if freeze:
        gc.freeze()
    else:
        gc.collect(0)


def lint_jobs(jobs: Sequence[FileJob], workers: int) -> list[FileResult]:
    """Results of ``jobs`` in order, from up to ``workers`` processes (one: in this one).

    If a worker dies (killed for memory, or a native crash on some input), each file it had
    not finished is linted again in a process of its own; a file whose process dies as well
    is reported as a crash of the linter on that file, and the others keep their results.
    """
    if workers <= 1 or len(jobs) <= 1:
        return [lint_job(job, last=number == len(jobs) - 1) for number, job in enumerate(jobs)]
    # Imported here: a warm run that lints one file in this process needs no pool.
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    order = _by_other_files(jobs)
    ordered = [jobs[position] for position in order]
    results: list[FileResult] = []
    try:
        with ProcessPoolExecutor(min(workers, len(jobs)), mp_context=_context()) as pool:
            for result in pool.map(lint_job, ordered, chunksize=_chunk_size(len(jobs), workers)):
                results.append(result)
    except BrokenProcessPool:
        results.extend(_lint_alone(job) for job in ordered[len(results) :])
    in_order: list[FileResult] = results[:]
    for position, result in zip(order, results, strict=True):
        in_order[position] = result
    return in_order


def _by_other_files(jobs: Sequence[FileJob]) -> list[int]:
    """The jobs' positions, those that read the same other files of the project next to each
    other: each worker parses an other file it reads once for its run of files
    (`triton_lint.model.foreign`), so a file read by two workers is parsed twice. Files are
    ordered by the other files they read, the most widely read first, then as given."""
    readers: Counter[str] = Counter()
    for job in jobs:
        readers.update(list(job.project.sources) if job.project is not None else [])

    def key(position: int) -> tuple[list[tuple[int, str]], int]:
        project = jobs[position].project
        read = project.sources if project is not None else ()
        return sorted((-readers[path], path) for path in read), position

    return sorted(range(len(jobs)), key=key)


#: Runs of consecutive files each worker takes at a time (in a run's share of the files).
CHUNKS_PER_WORKER = 8


def _chunk_size(jobs: int, workers: int) -> int:
    """Files handed to a worker at once: runs of neighbouring files (a directory's kernel
    files, launched from the same files) so that one parse of another file of the project
    serves them (`triton_lint.model.foreign`), yet enough runs that no worker idles long
    at the end."""
    return max(1, jobs // (workers * CHUNKS_PER_WORKER))


def _context() -> multiprocessing.context.BaseContext:
    # fork starts a worker in milliseconds with everything imported; elsewhere spawn is
    # the only safe choice.
    import multiprocessing

    return multiprocessing.get_context("fork" if sys.platform == "linux" else "spawn")


def _lint_alone(job: FileJob) -> FileResult:
    """Lint one file in a process of its own; its death is reported, not propagated."""
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    try:
        with ProcessPoolExecutor(1, mp_context=_context()) as pool:
            return pool.submit(lint_job, job).result()
    except BrokenProcessPool:
        result = FileResult(job.display)
        result.crashes.append(f"{job.display}: the linter's process died while linting it")
        return result
