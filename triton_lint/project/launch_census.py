"""How many launches of a kernel the other files of the project hold, when every other mention
of its name is accounted for.

A rule may treat the launches it sees as all the launches only when nothing else can launch
the kernel: another file that imports it and only launches it (``from .k import kern``, then
``kern[grid](...)``) or re-exports it (``from .k import kern`` in an ``__init__``) is fine; one
that names it in a table, a string (``__all__``), a call of the bare function or anything else
the index does not resolve to a launch of this kernel is not. A file that defines its own
kernel of the same name (a vendor backend's copy) and never reaches for another's is not a
mention.
"""

from __future__ import annotations

import dataclasses
import weakref
from collections.abc import Callable
from typing import Any, Protocol

from triton_lint.model.project import ProjectContext
from triton_lint.project.project_file import ProjectFile


class ProjectIndex(Protocol):
    """What this module reads of `triton_lint.project.index.ProjectIndex`."""

    files: dict[str, ProjectFile]
    only: set[str] | None

    def locate_in(self, entry: ProjectFile, dotted: str) -> tuple[ProjectFile, str] | None: ...

    def candidates(self, names: set[str]) -> list[ProjectFile]: ...


#: What follows a kernel's name at a launch, `kern[grid]` or `wrap_triton(kern)[grid]` (the
#: index reads launches by it too)
LAUNCH = r"\s*\)?\s*\["


def with_census(index: ProjectIndex, display: str, context: ProjectContext) -> ProjectContext:
    """``context`` with what the index knows of every mention of ``display``'s kernels: the
    kernels no other file names and the launch counts."""
    return dataclasses.replace(
        context,
        unreferenced=named_nowhere_else(index, display),
        launch_counts=launch_counts(index, display),
    )


def named_nowhere_else(index: ProjectIndex, display: str) -> frozenset[str]:
    """The kernels of ``display`` whose names no other file writes but to define its own
    and never name again (a vendor backend's copy of a helper)."""
    mentions = _mentions(index)
    return frozenset(
        kernel
        for kernel in index.files[display].kernels
        if all(
            entry.display == display or kernel in entry.defined_once()
            for entry in mentions.get(kernel, ())
        )
    )


def launch_counts(index: ProjectIndex, display: str) -> dict[str, int]:
    """Kernel of ``display`` -> the launches of it in the other files of the project, for the
    kernels whose every mention in those files is an import of it or such a launch."""
    counts: dict[str, int] = {}
    mentions = _mentions(index)
    for kernel in sorted(index.files[display].kernels):
        total = 0
        for entry in mentions.get(kernel, ()):
            if entry.display == display:
                continue
            found = _launches_in(index, entry, display, kernel)
            if found is None:
                break
            total += found
        else:
            counts[kernel] = total
    return counts


_MENTIONS: weakref.WeakKeyDictionary[Any, dict[str, list[ProjectFile]]] = (
    weakref.WeakKeyDictionary()
)


def _mentions(index: ProjectIndex) -> dict[str, list[ProjectFile]]:
    """Kernel name -> the files of the index that write it, found once per index (the files
    the index reads are all known once it is built)."""
    if index not in _MENTIONS:
        only = index.only  # a partial index (`project.incremental`): its kernel files'
        files = index.files if only is None else only.intersection(index.files)
        names = {name for display in files for name in index.files[display].kernels}
        found: dict[str, list[ProjectFile]] = {}
        for entry in index.candidates(names):
            for name in entry.written(names):
                found.setdefault(name, []).append(entry)
        _MENTIONS[index] = found
    return _MENTIONS[index]


def _launches_in(index: ProjectIndex, entry: ProjectFile, display: str, kernel: str) -> int | None:
    """The launches of ``display``'s ``kernel`` in ``entry``; None when ``entry`` names it
    some other way too."""
    entry.parse()
    if kernel in entry.kernels and kernel not in entry.imports:
        if not entry.is_marked(kernel):
            return 0  # its own kernel of that name: every bare mention is that one
        return None
    located = _located(index)
    aliases = {
        local for local in entry.imports if _is_kernel(located(entry, local), display, kernel)
    }
    names = aliases | {kernel}
    imported = sum(1 if local == kernel else 2 for local in aliases)  # `import kern as k`
    launches = [
        dotted
        for _, dotted in entry.uses(names, LAUNCH)
        if _is_kernel(located(entry, dotted), display, kernel)
    ]
    expected = imported + len(launches)
    # the substrings bound the whole words (at C speed); the words are counted when they differ
    if (
        sum(entry.count(name) for name in names) != expected
        and sum(entry.word_count(name) for name in names) != expected
    ):
        return None
    return len(launches)


_LOCATED: weakref.WeakKeyDictionary[Any, dict[tuple[str, str], Any]] = weakref.WeakKeyDictionary()


def _located(index: ProjectIndex) -> Callable[[ProjectFile, str], Any]:
    """`ProjectIndex.locate_in`, answered once per (file, name) for the census of a run."""
    memo = _LOCATED.setdefault(index, {})

    def located(entry: ProjectFile, dotted: str) -> Any:
        key = (entry.display, dotted)
        if key not in memo:
            memo[key] = index.locate_in(entry, dotted)
        return memo[key]

    return located


def _is_kernel(target: tuple[ProjectFile, str] | None, display: str, kernel: str) -> bool:
    return target is not None and target[0].display == display and target[1] == kernel
