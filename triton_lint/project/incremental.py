"""Bringing the last run's project index up to date after an edit that changed what it read, in
the terms of the files edited instead of the whole project.

The index is built from every kernel file at once, but what one kernel file's context holds
depends on few files: those its launches and callers lie in, and those that write one of the
names its tree is searched by (`caller_tree.tree_names`: its kernels', its launching
functions' and their callers'). An edited file that was a source of none of those contexts
and writes none of those names, before the edit or after it, changes none of them. So a warm
run whose edited files changed answers (`project.views`) recomputes only the contexts of the
kernel files such an edit reaches, with an index that follows those kernel files alone (the
same build over the same files, from fewer kernels), and keeps the others. The names an
edited file wrote before the edit are read from what the last build kept of it: its words
among the names the index asked about, and the words of its import statements (by its old
stat signature, `project.filefacts`, or in the record for a file whose stat was not kept).

What a build from fewer kernels could read differently is checked, and the whole index is
built again when one of these holds:

- more than `MAX_EDITED` files changed answers, or the edits reach more than `MAX_REACHED`
  kernel files (then the partial index would cost what the whole one does);
- an edited file shares its module name with another file, started or stopped naming Triton,
  or its old import words are not known;
- a file that never names Triton, which the last build woke before the partial index did (or
  that the partial index left asleep), writes a launch or a call of a name a pass searched
  for, and a second partial index that wakes it in the pass the last build did finds other
  contexts (the last build may have woken it for kernels the partial index does not follow);
- a file whose module another file shares woke in another pass than before, and the partial
  index resolved a name through that module.

An edited file whose import statements changed may change what other files reach through it
(``from .ops import fn``): the files that write its module's name and one of the names its
imports gained or lost count as edited for finding the kernel files reached.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from triton_lint.model.host_text import wanted_names
from triton_lint.model.project import ProjectContext
from triton_lint.project.byte_search import ByteSearch
from triton_lint.project.caller_tree import followed_callers, tree_names
from triton_lint.project.context_json import MISSING, decoded, encoded
from triton_lint.project.filefacts import FileFacts
from triton_lint.project.index import CALL, LINE_END, ProjectIndex
from triton_lint.project.launch_census import LAUNCH, with_census
from triton_lint.project.modules import ModuleNames
from triton_lint.project.outline import line_starts, occurrences
from triton_lint.project.project_file import ProjectFile
from triton_lint.project.store import Store

#: More files whose answers changed than this, and the index is built again.
MAX_EDITED = 4
#: More kernel files reached by the edits than this, and the index is built again.
MAX_REACHED = 32
#: Loading every file's kept outline costs about what outlining one file in this many does:
#: a partial index outlines that share of the files from their text, then loads them all.
FILES_PER_OUTLINE = 40


@dataclasses.dataclass
class Edit:
    """What a warm run knows of the files whose answers changed: the run's files (display ->
    resolved path, bytes) and their byte facts, each edited file's old stat signature and
    its old words among the names the index asked about (`views.View`)."""

    files: dict[str, tuple[Path, bytes]]
    facts: dict[str, FileFacts]
    modules: ModuleNames
    store: Store
    edited: dict[str, tuple[str | None, list[str] | None]]
    #: which files may write a name (from what the last build and its layers kept)
    search: ByteSearch


@dataclasses.dataclass
class Updated:
    """The new record's parts: every kept context (as JSON), the kernel files, each
    context's tree names, the files woken; and the partial indexes that answered."""

    contexts: dict[str, Any]
    kernel_files: list[str]
    names: dict[str, list[str]]
    woken: dict[str, int]
    #: the partial index, and the one that also read early what the last build had
    indexes: list[ProjectIndex]


def updated(saved: dict[str, Any], edit: Edit) -> Updated | None:
    """``saved`` (the last record: `project.snapshot`) brought up to date after ``edit``;
    None when the whole index must be built again."""
    if len(edit.edited) > MAX_EDITED:
        return None
    ambiguous = set(saved["ambiguous"])
    words: dict[str, set[str]] = {}
    for display, (stat, old_words) in edit.edited.items():
        reach = _edited_words(saved, edit, display, stat, old_words, ambiguous)
        if reach is None:
            return None
        words.update(reach)
    reached = _reached(saved, edit, words)
    if reached is None:
        return None
    try:
        return _partial(saved, edit, reached, ambiguous)
    finally:
        edit.store.spare = 0  # a whole build after it reads the kept outlines


def _partial(
    saved: dict[str, Any], edit: Edit, reached: set[str], ambiguous: set[str]
) -> Updated | None:
    """The contexts of ``reached`` from an index that follows them alone; None when a whole
    build could read the project otherwise."""
    entries = [(display, path, data) for display, (path, data) in edit.files.items()]
    edit.store.spare = len(entries) // FILES_PER_OUTLINE
    index = ProjectIndex(entries, edit.store, edit.facts, edit.modules, reached, edit.search)
    unsure = _woken_alike(index, saved, edit, ambiguous)
    if unsure is None:
        return None
    other = None
    if unsure:  # read them as the last build did too: the kernels followed must not care
        other = ProjectIndex(
            entries, edit.store, edit.facts, edit.modules, reached, edit.search, unsure
        )
        if _found(index, reached) != _found(other, reached):
            return None
    return _contexts(saved, edit, index, reached, other)


def _found(index: ProjectIndex, reached: set[str]) -> dict[str, ProjectContext | None]:
    """What ``index`` gives each kernel file of ``reached``: its context before the names
    each source is parsed for, with the census."""
    found = {}
    for display in sorted(reached):
        context = _bare(index, display)
        found[display] = with_census(index, display, context) if context is not None else None
    return found


def _bare(index: ProjectIndex, display: str) -> ProjectContext | None:
    """The context ``index`` gives the kernel file ``display`` before the census and the
    names each source is parsed for: empty when it read the file and found no launch."""
    context = followed_callers(index, display)
    return ProjectContext() if context is None and display in index.files else context


def _edited_words(
    saved: dict[str, Any],
    edit: Edit,
    display: str,
    stat: str | None,
    old_words: list[str] | None,
    ambiguous: set[str],
) -> dict[str, set[str]] | None:
    """The names the edited file ``display`` writes or wrote, and those of the files that
    may reach other files through its changed imports; None when they cannot be known."""
    path, data = edit.files[display]
    module = edit.modules(path)[0]
    old = saved["byte_facts"].get(display)
    if old is None and stat is not None:
        old = edit.store.entries.get(f"s:{path}:{stat}")
    facts = edit.facts[display]
    if module in ambiguous or not isinstance(old, dict) or "w" not in old:
        return None
    if old.get("t") != facts.triton:
        return None
    imported = set(old["w"].split())
    now = _words_of(display, path, data)
    found = {display: now | imported | set(old_words or ())}
    changed = imported ^ facts.words()
    if not changed:
        return found
    tail = module.rsplit(".", 1)[-1]
    every = edit.files.keys()
    holding = edit.search.holding(tail, every) & edit.search.holding_any(changed, every)
    for other in sorted(holding):
        if other == display:
            continue
        other_path, other_data = edit.files[other]
        other_words = _words_of(other, other_path, other_data)
        if tail in other_words and other_words & changed:
            found[other] = other_words
    return found


def _reached(saved: dict[str, Any], edit: Edit, words: dict[str, set[str]]) -> set[str] | None:
    """The kernel files whose contexts the edits may change: those an edited file (or one
    reaching through it) is, or is a source of, or writes a tree name of; and the edited
    files that may hold kernels now."""
    touched = set(words)
    every = set().union(*words.values())
    reached = {display for display in edit.edited if edit.facts[display].kernels}
    for display, names in saved["names"].items():
        context = saved["contexts"].get(display)
        sources = context["sources"] if isinstance(context, dict) else ()
        if display in touched or touched.intersection(sources) or every.intersection(names):
            reached.add(display)
    return reached if len(reached) <= MAX_REACHED else None


def _woken_alike(
    index: ProjectIndex, saved: dict[str, Any], edit: Edit, ambiguous: set[str]
) -> dict[str, int] | None:
    """The files that never name Triton and that a build over every kernel may have read in
    passes the partial index did not (the last build woke them earlier, for other kernels
    maybe), where they would add to what it found: each with the pass it woke in then.
    None when one whose module another file shares woke in another pass in the two, or an
    edited one does, and the partial index resolved a name through that module (which of
    the files a name resolves to depends on which are read)."""
    was: dict[str, int] = saved["woken"]
    edited = {d for d in edit.edited if not edit.facts[d].triton}
    for display in set(was) | set(index.woken) | edited:
        module = edit.modules(edit.files[display][0])[0]
        if module not in ambiguous or module not in index.looked_up:
            continue
        if display in edit.edited or was.get(display) != index.woken.get(display):
            return None
    kernels = {k for d in index.only or () if d in index.files for k in index.files[d].kernels}
    unsure = {}
    for display, first in was.items():
        own = index.woken.get(display)
        if own is not None and own <= first:
            continue  # the partial index read it as long as any build would
        passes = index.searches[first - 1 : own - 1 if own is not None else None]
        if _adds(display, edit, passes, kernels if own is None else set()):
            unsure[display] = first
    return unsure


def _adds(
    display: str, edit: Edit, searches: list[dict[str, frozenset[str]]], kernels: set[str]
) -> bool:
    """Whether the file, indexed, could add to what ``searches`` found (a launch, a returned
    kernel, a call of a name searched for, under its own name or an alias; ``C.apply`` only
    where it writes ``C``) or to the census of ``kernels`` (a mention). Its outline is read
    only when it imports one of the names under another (a package's ``__init__`` that lists
    every op need not be outlined)."""
    path, data = edit.files[display]
    entry = ProjectFile(display, path, data, *edit.modules(path))
    if edit.search.holding_any(kernels, (display,)) and entry.written(kernels):
        return True
    for search in searches:
        if not edit.search.holding_any(search, (display,)):
            continue
        names = {n for n, owners in search.items() if not owners or entry.words & owners}
        written = entry.words & names
        if written and _aliased(entry.text, written):
            entry.parse()
            aliases = {n for n, target in entry.imports.items() if target.split(".")[-1] in names}
            if any(entry.uses(names, after, aliases) for after in (LAUNCH, LINE_END, CALL)):
                return True
        elif written:
            starts = line_starts(entry.text)
            for after in (LAUNCH, LINE_END, CALL):
                if next(occurrences(entry.text, starts, written, after), None) is not None:
                    return True
    return False


def _aliased(text: str, names: set[str]) -> bool:
    """Whether ``text`` may import one of ``names`` under another name (``kern as k``)."""
    return re.search(rf"\b(?:{'|'.join(map(re.escape, sorted(names)))})\s+as\b", text) is not None


def _contexts(
    saved: dict[str, Any],
    edit: Edit,
    index: ProjectIndex,
    reached: set[str],
    other: ProjectIndex | None,
) -> Updated:
    """The contexts of ``reached`` from ``index``; the others kept, with the names their
    shared sources are parsed for (`ProjectContext.host_names`) made the union again."""
    contexts = dict(saved["contexts"])
    bare = {display: _bare(index, display) for display in reached}
    paths = {p for c in bare.values() if c is not None for p in c.sources}
    paths.update(
        p for d in reached if isinstance(contexts.get(d), dict) for p in contexts[d]["sources"]
    )
    kept = _kept_sharing(contexts, paths, reached, edit.files)
    wanted: dict[str, set[str]] = {}
    for context in [*bare.values(), *kept.values()]:
        for path in context.sources if context is not None else ():
            if path in paths:
                wanted.setdefault(path, set()).update(wanted_names(context, path))
    for display, context in kept.items():
        shared = {p: frozenset(wanted[p]) for p in context.sources if p in paths}
        if any(context.host_names.get(p) != names for p, names in shared.items()):
            shared = {**context.host_names, **shared}
            contexts[display] = encoded(dataclasses.replace(context, host_names=shared))
    names = dict(saved["names"])
    for display, context in bare.items():
        if context is not None:
            shared = {p: frozenset(wanted.get(p, ())) for p in context.sources}
            context = with_census(index, display, dataclasses.replace(context, host_names=shared))
            names[display] = sorted(tree_names(index, display))
        contexts[display] = encoded(context)
    files = set(saved["kernel_files"]) - reached
    files.update(set(index.kernel_files()) & reached)
    woken = {**index.woken, **saved["woken"]}  # the earlier pass where both woke one
    woken.update((d, min(p, index.woken.get(d, p))) for d, p in saved["woken"].items())
    return Updated(contexts, sorted(files), names, woken, [index, *([other] if other else [])])


def _kept_sharing(
    contexts: dict[str, Any],
    paths: set[str],
    reached: set[str],
    files: dict[str, tuple[Path, bytes]],
) -> dict[str, ProjectContext]:
    """The kept contexts that read one of ``paths``, decoded."""
    kept = {}
    for display, record in contexts.items():
        if display in reached or not isinstance(record, dict):
            continue
        if paths.intersection(record["sources"]):
            context = decoded(record, files)
            if context is not MISSING and context is not None:
                kept[display] = context
    return kept


def _words_of(display: str, path: Path, data: bytes) -> set[str]:
    """Every identifier the file writes (what `ProjectFile.written` reads)."""
    return ProjectFile(display, path, data).words


def names_of(index: ProjectIndex, displays: Iterable[str]) -> dict[str, list[str]]:
    """`caller_tree.tree_names` of each of ``displays``, for the record of a whole build."""
    return {display: sorted(tree_names(index, display)) for display in displays}
