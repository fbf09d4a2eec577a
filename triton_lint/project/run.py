"""The project index in a lint run: which files it reads, which extra kernel files a launching
file needs linted, and which file each finding is reported in."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from triton_lint.engine import FileResult
from triton_lint.project.index import ProjectIndex, Store
from triton_lint.workers import FileJob

#: Files read from a configuration root for a run over files named one by one.
MAX_PROJECT_FILES = 20_000


def project_root(path: Path, config_root: Path) -> Path:
    """The directory a single file's project is read from: its configuration root when the
    file lies under it, else the top of the package holding it."""
    resolved = path.resolve()
    if resolved.is_relative_to(config_root.resolve()):
        return config_root
    directory = resolved.parent
    while (directory / "__init__.py").is_file() and directory.parent != directory:
        directory = directory.parent
    return directory


def project_index(
    asked: dict[Path, bytes], others: Iterable[Path], store: Store | None = None
) -> ProjectIndex:
    """The index of the files asked for and the other files of their project (``store``:
    what an earlier run read of unchanged files)."""
    entries = [(str(path), path.resolve(), data) for path, data in asked.items()]
    for path in others:
        try:
            data = path.read_bytes()
        except OSError:
            continue
        entries.append((_display(path), path.resolve(), data))
    return ProjectIndex(entries, store)


def _display(path: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:  # another drive
        return str(path)


def extra_kernel_files(index: ProjectIndex, asked: set[str]) -> list[tuple[Path, str, bytes]]:
    """Kernel files not asked for whose lint reads a file that was: linting ``ops.py`` alone
    reports what its launches imply about the kernels of ``kernels.py``."""
    extra = []
    for display in index.kernel_files():
        context = index.context_for(display) if display not in asked else None
        if context is not None and asked.intersection(context.sources):
            extra.append(display)
    return [(index.files[d].path, d, index.files[d].data) for d in sorted(extra)]


def route_findings(
    results: list[tuple[FileJob | None, FileResult]], asked: set[str]
) -> Iterator[tuple[FileJob | None, FileResult]]:
    """The results of the files asked for, each holding the findings that lie in it (a
    kernel's finding at a launch in another file moves to that file's result)."""
    by_path = {result.path: result for _, result in results if result.path in asked}
    moved: dict[str, list] = {path: [] for path in by_path}
    for _, result in results:
        kept = []
        for finding in result.findings:
            if finding.path == result.path and result.path in asked:
                kept.append(finding)
            elif finding.path in moved:
                moved[finding.path].append(finding)
        result.findings = kept
    for job, result in results:
        if result.path not in asked:
            continue
        if moved[result.path]:
            result.findings = sorted(
                result.findings + moved[result.path], key=lambda f: f.sort_key()
            )
        yield job, result
