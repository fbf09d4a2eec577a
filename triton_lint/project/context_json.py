"""A `ProjectContext` as the index store keeps it (`project.snapshot`): JSON, its sources by
path only (a later run reads them from the files as they are then)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from triton_lint.model.project import ProjectContext

#: What `decoded` returns for a record this code cannot read (then the index answers).
MISSING: Any = object()


def encoded(context: ProjectContext | None) -> dict[str, Any] | None:
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
        "digest": context.digest(),
    }


def decoded(record: Any, files: dict[str, tuple[Path, bytes]]) -> ProjectContext | None:
    """The context `encoded` wrote, its sources read from ``files``; `MISSING` for a
    record this code cannot read (then the index answers)."""
    if record is None:
        return None
    try:
        context = ProjectContext(
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
        return MISSING
    if isinstance(record.get("digest"), str):  # computed when it was saved
        object.__setattr__(context, "known_digest", record["digest"])
    return context
