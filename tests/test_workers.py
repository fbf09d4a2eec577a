"""Parallel linting: the same report as one process, in the same order, whatever happens."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

import triton_lint.workers as workers
from triton_lint.model.project import ProjectContext
from triton_lint.rules import all_rules
from triton_lint.workers import FileJob, lint_jobs

from .test_cli import run

REPO = Path(__file__).resolve().parent.parent
CODES = tuple(rule.code for rule in all_rules())


def _jobs() -> list[FileJob]:
    files = sorted((REPO / "fixtures").rglob("*.py"))
    return [FileJob(str(path), path.read_bytes(), CODES, "3.9") for path in files]


def _summary(results) -> list[tuple[str, list[tuple[int, int, str]]]]:
    return [(r.path, [(f.line, f.column, f.code) for f in r.findings]) for r in results]


def test_workers_give_the_serial_results_in_the_given_order():
    jobs = _jobs()
    serial = lint_jobs(jobs, 1)
    assert sum(len(r.findings) for r in serial) > 100
    assert _summary(lint_jobs(jobs, 2)) == _summary(serial)


_DOOMED: dict[str, object] = {}


def _dies_in_a_worker(job: FileJob):
    """`lint_job`, except that the worker given the doomed file dies (as if OOM-killed)."""
    if job.display == _DOOMED["display"] and os.getpid() != _DOOMED["parent"]:
        os._exit(137)
    return _DOOMED["real"](job)


@pytest.mark.skipif(sys.platform != "linux", reason="the dying worker is set up through fork")
def test_a_worker_that_dies_does_not_lose_files(monkeypatch):
    """The file that kills every process linting it is reported as a crash; the files the
    dead worker had not finished are linted again, each in a process of its own."""
    jobs = _jobs()[:12]
    real = workers.lint_job
    monkeypatch.setitem(_DOOMED, "display", jobs[5].display)
    monkeypatch.setitem(_DOOMED, "parent", os.getpid())
    monkeypatch.setitem(_DOOMED, "real", real)
    monkeypatch.setattr(workers, "lint_job", _dies_in_a_worker)
    results = lint_jobs(jobs, 2)
    expected = [real(job) for job in jobs]
    assert results[5].crashes == [f"{jobs[5].display}: the linter's process died while linting it"]
    assert results[5].findings == []
    del results[5], expected[5]
    assert _summary(results) == _summary(expected)


def test_jobs_option_gives_the_same_report():
    outputs = [
        run("--isolated", "--no-cache", "--format", "json", "--jobs", jobs, "fixtures", cwd=REPO)
        for jobs in ("1", "2")
    ]
    assert outputs[0].output == outputs[1].output
    assert outputs[0].exit_code == outputs[1].exit_code == 1


def test_files_grouped_by_the_other_files_they_read_come_back_in_the_given_order():
    """The workers take the files that read the same other files of the project together
    (each parses such a file once); the report keeps the order the files were given in."""
    jobs = _jobs()[:24]
    read = ("ops/a.py", "ops/b.py", "ops/c.py")
    grouped = [
        FileJob(
            job.display,
            job.data,
            job.codes,
            job.target,
            ProjectContext(sources={read[position % 3]: b"", "common.py": b""}),
        )
        for position, job in enumerate(jobs)
    ]
    assert workers._by_other_files(grouped)[:8] == list(range(0, 24, 3))
    assert _summary(lint_jobs(grouped, 2)) == _summary(lint_jobs(jobs, 1))
