"""What the index hands one kernel file's lint: the files that launch its kernels and the
callers of its launching functions, followed `MAX_DEPTH` levels up the calls the index
recorded (`triton_lint.project.index`), but not past a function called from too many places
(`ProjectIndex.unbounded`)."""

from __future__ import annotations

from typing import Protocol

from triton_lint.model.callers import MAX_DEPTH
from triton_lint.model.project import FunctionKey, ProjectContext
from triton_lint.project.autograd_apply import called_as
from triton_lint.project.project_file import ProjectFile

#: Names too common to search callers by: every class has them.
UNSEARCHED = frozenset({"__init__", "__call__", "forward", "backward", "apply", "run", "main"})


class Calls(Protocol):
    """What this module reads of `triton_lint.project.index.ProjectIndex`."""

    files: dict[str, ProjectFile]
    kernel_refs: dict[str, dict[str, dict[str, str]]]
    dispatch_refs: dict[str, dict[str, dict[str, str]]]
    launchers: dict[str, set[FunctionKey]]
    callers: dict[FunctionKey, dict[str, set[str]]]
    unbounded: set[FunctionKey]
    calling: dict[FunctionKey, set[FunctionKey]]


def followed_callers(index: Calls, display: str) -> ProjectContext | None:
    """The context of the kernel file ``display`` before the census and the names each
    source is parsed for; None when none of its kernels is launched anywhere."""

    refs = index.kernel_refs.get(display, {})
    dispatch = index.dispatch_refs.get(display, {})
    launchers = index.launchers.get(display, set())
    if not refs and not launchers:
        return None
    callers: dict[FunctionKey, dict[str, tuple[str, ...]]] = {}
    pending = list(launchers)
    seen: set[FunctionKey] = set()
    for _ in range(MAX_DEPTH):
        following: list[FunctionKey] = []
        for key in pending:
            if key in seen or key in index.unbounded or key not in index.callers:
                continue
            seen.add(key)
            by_file = index.callers[key]
            callers[key] = {path: tuple(sorted(names)) for path, names in by_file.items()}
            following.extend(sorted(index.calling.get(key, ())))
        pending = following
    files = set(refs) | set(dispatch)
    files |= {path for by_file in callers.values() for path in by_file}
    files.discard(display)
    return ProjectContext(
        sources={path: index.files[path].data for path in sorted(files)},
        kernel_refs={path: dict(names) for path, names in refs.items()},
        dispatch_refs={path: dict(names) for path, names in dispatch.items()},
        callers=callers,
        unbounded=frozenset(k for k in index.unbounded if k in seen or k in launchers),
    )


def tree_names(index: Calls, display: str) -> frozenset[str]:
    """The names a file must write to change the context of the kernel file ``display``
    (`project.incremental`): its kernels', and those of every function its tree reaches
    (the launching functions, their callers `MAX_DEPTH` levels up, the next callers found)
    and of what each is called by (``C.apply``, an alias of it); not the ones too common to
    search (a method's class names it)."""
    names = set(index.files[display].kernels) if display in index.files else set()
    for refs in index.dispatch_refs.get(display, {}).values():
        names.update(refs.values())
    pending = list(index.launchers.get(display, ()))
    seen: set[FunctionKey] = set()
    for level in range(MAX_DEPTH + 1):
        following: list[FunctionKey] = []
        for key in pending:
            if key in seen:
                continue
            seen.add(key)
            if level < MAX_DEPTH and key not in index.unbounded:
                following.extend(index.calling.get(key, ()))
        pending = following
    for path, function in seen:
        calls = called_as(path, index.files, function) if path in index.files else set()
        for name in (function, *calls):
            names.update(part for part in name.split(".") if part not in UNSEARCHED)
    return frozenset(names)
