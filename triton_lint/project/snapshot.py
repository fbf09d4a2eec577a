"""The project index of a warm run whose files are all as the last run saw them: what that
run's index answered (the kernel files, each asked-for kernel file's `ProjectContext`) is
kept in the index store under the signature of every file the index read, and a run with
the same signature answers from it without building the index.

The signature covers each file's display path, its stat signature (resolved path, size,
modification time: the key `project.filefacts` keeps a file's byte facts by) and the package
its directory is (an ``__init__.py`` added above the project renames its modules), in the
order the index reads them. A run with one file unknown to the store by signature (new, changed,
written too close to the run's start to trust its time stamp, gone) builds the index as
before. The snapshot holds no bytes: a context's sources are the files' current bytes, which
the signature says are the bytes the context was built from.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from triton_lint.model.project import ProjectContext
from triton_lint.project.filefacts import FileFacts
from triton_lint.project.index import ProjectIndex
from triton_lint.project.modules import ModuleNames
from triton_lint.project.store import Store

#: The index store's key prefix of a snapshot (`Store`'s others: ``w:``, ``o:``, ``u:``,
#: ``once:`` by content digest, ``s:`` by stat signature, ``r:`` a file's read digest).
PREFIX = "x:"


def signature(entries: list[tuple[str, Path, bytes]], keys: list[str | None]) -> str | None:
    """The store key of a snapshot of these files (``keys``: each one's stat signature key,
    None where the file's signature is not trusted: then there is no snapshot)."""
    if any(key is None for key in keys):
        return None
    modules = ModuleNames()
    digest = hashlib.blake2b(digest_size=16)
    for (display, path, _), key in zip(entries, keys, strict=True):
        package = ".".join(modules.package(path.parent))
        digest.update(f"{display}\0{key}\0{package}\n".encode())
    return f"{PREFIX}{digest.hexdigest()}"


class RunIndex:
    """What a lint run asks of the project index (`triton_lint.run.Runner`): answered from
    the snapshot where it holds the answer, else from the index, built on first need."""

    def __init__(
        self,
        files: dict[str, tuple[Path, bytes]],
        facts: dict[str, FileFacts],
        build: Callable[[], ProjectIndex],
        store: Store | None,
        key: str | None,
    ) -> None:
        self.files = files  # display -> (path, bytes)
        self.facts = facts
        self._build = build
        self._index: ProjectIndex | None = None
        self._store = store if key is not None else None
        self._key = key
        saved = store.entries.get(key) if store is not None and key is not None else None
        self._saved: dict[str, Any] | None = saved if _well_formed(saved) else None
        self._contexts: dict[str, ProjectContext | None] = {}
        self._new: dict[str, Any] = {}

    @property
    def index(self) -> ProjectIndex:
        if self._index is None:
            self._index = self._build()
        return self._index

    def kernel_files(self) -> list[str]:
        """`ProjectIndex.kernel_files`."""
        if self._saved is not None:
            return list(self._saved["kernel_files"])
        return self.index.kernel_files()

    def context_for(self, display: str) -> ProjectContext | None:
        """`ProjectIndex.context_for`, once per file of a run."""
        if display not in self._contexts:
            saved = self._saved["contexts"] if self._saved is not None else {}
            context = _decode(saved[display], self.files) if display in saved else _MISSING
            if context is _MISSING:
                context = self.index.context_for(display)
                if self._store is not None:  # kept: the run's files all have a signature
                    self._new[display] = _encode(context)
            self._contexts[display] = context  # type: ignore[assignment]
        return self._contexts[display]

    def remember(self) -> None:
        """Keep this run's answers under its signature (call when the run has asked all)."""
        store = self._store
        if store is None:
            return
        store.used.add(self._key)
        if self._saved is not None and self._index is None:
            store.used.update(store.entries)  # nothing was read again: all still holds
        if self._saved is None or self._new:
            contexts = dict(self._saved["contexts"]) if self._saved is not None else {}
            contexts.update(self._new)
            store.entries[self._key] = {"kernel_files": self.kernel_files(), "contexts": contexts}
            store.changed = True


_MISSING: Any = object()


def _well_formed(saved: object) -> bool:
    return (
        isinstance(saved, dict)
        and isinstance(saved.get("kernel_files"), list)
        and isinstance(saved.get("contexts"), dict)
    )


def _encode(context: ProjectContext | None) -> dict[str, Any] | None:
    """``context`` as JSON (its sources by path only)."""
    if context is None:
        return None
    return {
        "sources": list(context.sources),
        "kernel_refs": context.kernel_refs,
        "dispatch_refs": context.dispatch_refs,
        "callers": [[path, name, by_file] for (path, name), by_file in context.callers.items()],
        "unbounded": sorted(context.unbounded),
        "host_names": {path: sorted(names) for path, names in context.host_names.items()},
        "unreferenced": sorted(context.unreferenced),
        "launch_counts": context.launch_counts,
    }


def _decode(record: Any, files: dict[str, tuple[Path, bytes]]) -> ProjectContext | None:
    """The context ``_encode`` wrote, its sources read from ``files``; `_MISSING` for a
    record this code cannot read (then the index answers)."""
    if record is None:
        return None
    try:
        return ProjectContext(
            sources={path: files[path][1] for path in record["sources"]},
            kernel_refs=record["kernel_refs"],
            dispatch_refs=record["dispatch_refs"],
            callers={
                (path, name): {file: tuple(names) for file, names in by_file.items()}
                for path, name, by_file in record["callers"]
            },
            unbounded=frozenset((path, name) for path, name in record["unbounded"]),
            host_names={path: frozenset(names) for path, names in record["host_names"].items()},
            unreferenced=frozenset(record["unreferenced"]),
            launch_counts=record["launch_counts"],
        )
    except (KeyError, TypeError, ValueError, AttributeError):
        return _MISSING
