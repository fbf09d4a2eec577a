"""The project index in a lint run: which files it reads, which extra kernel files a launching
file needs linted, and which file each finding is reported in."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path

from triton_lint.engine import FileResult
from triton_lint.model.host_reads import WHOLE, read_digest, whole_digest
from triton_lint.model.host_text import wanted_names
from triton_lint.model.project import ProjectContext
from triton_lint.project.filefacts import file_facts
from triton_lint.project.index import ProjectIndex
from triton_lint.project.modules import ModuleNames
from triton_lint.project.snapshot import RunIndex, layout
from triton_lint.project.store import Store
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
    asked: dict[Path, bytes], others: Iterable[Path], store: Store | None, since_ns: int
) -> RunIndex:
    """The index of the files asked for and the other files of their project (``store``:
    what an earlier run read of unchanged files; ``since_ns``: when the run started reading
    them, `project.filefacts`), answered from the last run's snapshot where no file changed
    (`project.snapshot`)."""
    entries = [(str(path), resolved_file(path), data) for path, data in asked.items()]
    for path in others:
        try:
            data = path.read_bytes()
        except OSError:
            continue
        entries.append((_display(path), resolved_file(path), data))
    stored = store.entries if store is not None else None
    facts = {}
    keys = []
    for display, path, data in entries:
        key, facts[display] = file_facts(path, data, stored, since_ns)
        keys.append(key)
        if key is not None and store is not None:
            store.used.add(key)
            facts[display].on_change = store.mark_changed
    files = {display: (path, data) for display, path, data in entries}
    stats = {display: key for (display, _, _), key in zip(entries, keys, strict=True)}
    modules = ModuleNames()
    build = lambda: ProjectIndex(entries, store, facts, modules)  # noqa: E731
    return RunIndex(files, facts, build, store, layout(entries, modules), stats, modules)


def resolved_file(path: Path) -> Path:
    """``path.resolve()``, resolving each directory once (a run reads thousands of files of
    a few hundred directories, and resolving stats every component of the path)."""
    if path.is_symlink():
        return path.resolve()
    directory, name = os.path.split(path)
    return resolved_directory(os.getcwd(), directory) / name


@cache
def resolved_directory(cwd: str, directory: str) -> Path:
    """``directory`` resolved from ``cwd`` (a relative one means another directory after a
    change of the working directory: an editor's server, a test): its parent's resolution
    and its name, unless it is a link (a run's directories share their parents, and
    resolving a path from the root stats every component of it)."""
    path = os.path.join(cwd, directory)
    parent, name = os.path.split(path)
    if name in ("", ".", "..") or parent == path or os.path.islink(path):
        return Path(path).resolve()
    return resolved_directory(cwd, parent) / name


def _display(path: Path) -> str:
    try:
        return os.path.relpath(path)
    except ValueError:  # another drive
        return str(path)


def extra_kernel_files(index: RunIndex, asked: set[str]) -> list[tuple[Path, str, bytes]]:
    """Kernel files not asked for whose lint reads a file that was: linting ``ops.py`` alone
    reports what its launches imply about the kernels of ``kernels.py``."""
    extra = []
    for display in index.kernel_files():
        context = index.context_for(display) if display not in asked else None
        if context is not None and asked.intersection(context.sources):
            extra.append(display)
    return [(index.files[d][0], d, index.files[d][1]) for d in sorted(extra)]


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


def reads_hold(reads: dict[str, str], project: ProjectContext | None, store: Store) -> bool:
    """Whether a cached result's reads of other files (`FileResult.reads`) read the same
    now: an edit to a part of a launching file its kernels' lint did not parse (another
    function, a comment there) re-lints nothing."""
    for path, digest in reads.items():
        data = project.sources.get(path) if project is not None else None
        if data is None or _current_read(path, data, project, store, digest) != digest:
            return False
    return True


def remember_reads(reads: dict[str, str], project: ProjectContext | None, store: Store) -> None:
    """Keep the digests a lint computed of the files it read (the next run checks against
    them without parsing those files again)."""
    for path, digest in reads.items():
        data = project.sources.get(path) if project is not None else None
        if data is not None and not digest.startswith(WHOLE):
            key = _read_key(path, data, project)  # type: ignore[arg-type]
            store.entries[key] = digest
            store.used.add(key)
            store.changed = True


def _current_read(
    path: str, data: bytes, project: ProjectContext | None, store: Store, digest: str
) -> str:
    if digest.startswith(WHOLE) or project is None:
        return whole_digest(data)
    key = _read_key(path, data, project)
    store.used.add(key)
    if key not in store.entries:
        store.entries[key] = read_digest(data, _names(path, project))
        store.changed = True
    return store.entries[key]


def _read_key(path: str, data: bytes, project: ProjectContext) -> str:
    names = ",".join(sorted(_names(path, project)))
    content = hashlib.blake2b(data, digest_size=16).hexdigest()
    return f"r:{content}:{hashlib.blake2b(names.encode(), digest_size=8).hexdigest()}"


def _names(path: str, project: ProjectContext) -> frozenset[str]:
    """The names the part of ``path`` a lint parses is chosen by (as `model.foreign`)."""
    return project.host_names.get(path) or wanted_names(project, path)
