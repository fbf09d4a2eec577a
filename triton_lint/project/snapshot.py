"""The project index of a warm run whose files read as the last run read them: what that
run's index answered (the kernel files, each asked-for kernel file's `ProjectContext`) is
kept in the index store under the run's layout (each file's display path, resolved path and
the package its directory is, in the order the index reads them: a file added or gone, or
an ``__init__.py`` added above the project, is another layout), with each file's stat
signature and the digest of what the index read of it (`project.views`).

A warm run answers from that record without building the index when every file either keeps
its stat signature (resolved path, size, modification time: the key `project.filefacts` keeps
a file's byte facts by) or, changed or written too close to the run's start to trust its time
stamp, gives the index's logged questions the same answers (an edit inside a function body
that adds no launch, call or mention of what the index follows). Otherwise the index is built
as before. The snapshot holds no bytes: a context's sources are the files' current bytes.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from triton_lint.model.project import ProjectContext
from triton_lint.project.byte_search import ByteSearch
from triton_lint.project.context_json import MISSING, decoded, encoded
from triton_lint.project.filefacts import FileFacts
from triton_lint.project.incremental import Edit, names_of, updated
from triton_lint.project.index import ProjectIndex
from triton_lint.project.modules import ModuleNames
from triton_lint.project.project_file import ProjectFile
from triton_lint.project.store import Store
from triton_lint.project.view_layers import (
    MAX_ASKED,
    MAX_LAYERS,
    consolidated,
    layer_holds,
    new_layer,
    refreshed,
    well_formed,
)
from triton_lint.project.views import View, asks_of, view, widened

#: The index store's key prefix of a snapshot (`Store`'s others: ``w:``, ``o:``, ``u:``,
#: ``once:``, ``m:`` by content digest, ``s:`` by stat signature, ``r:`` a file's read digest).
PREFIX = "x:"


def layout(entries: list[tuple[str, Path, bytes]], modules: ModuleNames) -> str:
    """The store key of a snapshot of these files: each one's display path, resolved path
    and module (the packages above it), in the order the index reads them."""
    digest = hashlib.blake2b(digest_size=16)
    for display, path, _ in entries:
        module, is_package = modules(path)  # kept: the index asks them again
        digest.update(f"{display}\0{path}\0{module}\0{is_package}\n".encode())
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
        key: str,
        stats: dict[str, str | None],
        modules: ModuleNames,
    ) -> None:
        self.files = files  # display -> (path, bytes)
        self.facts = facts
        self._build = build
        self._index: ProjectIndex | None = None
        self._store = store
        self._key = key
        self._modules = modules  # the index's too: a directory is asked once per run
        #: display -> its size and modification time (None: its stat is not trusted)
        self._stats = {display: _short(key) for display, key in stats.items()}
        self._checked = False
        self._changed: set[str] = set()  # files read again whose answers held
        self._saved_record: dict[str, Any] | None = None
        self._contexts: dict[str, ProjectContext | None] = {}
        self._from_saved: set[str] = set()  # contexts answered from the last run's record
        #: whether the record was brought up to date after edits (`project.incremental`)
        self._updated_in_place = False

    @property
    def index(self) -> ProjectIndex:
        if self._index is None:
            self._index = self._build()
        return self._index

    @property
    def _saved(self) -> dict[str, Any] | None:
        """The last run's answers, when every file changed since reads as that run read it,
        or brought up to date in the terms of the edits (`project.incremental`)."""
        if not self._checked:
            self._checked = True
            saved = self._store.entries.get(self._key) if self._store is not None else None
            if _well_formed(saved):
                self._saved_record = self._up_to_date(saved)
        return self._saved_record

    def _up_to_date(self, saved: dict[str, Any]) -> dict[str, Any] | None:
        if len(saved["stats"]) != len(self.files):
            return None
        was = dict(zip(self.files, saved["stats"], strict=True))
        changed = [d for d, stat in self._stats.items() if stat is None or stat != was[d]]
        if not changed:
            return saved
        self._changed = set(changed)
        token = saved.get("views")
        files = self._views(token) if isinstance(token, str) else {}
        if not files:
            return None
        views = {**files, **saved["replaced"]}
        universe = frozenset(self._store.views()["universe"])  # type: ignore[union-attr]
        edited: dict[str, tuple[str | None, list[str] | None]] = {}
        fresh: dict[str, tuple[ProjectFile, View]] = {}  # each changed file read afresh
        for display in changed:
            if display not in views:
                return None
            _, asks, digest, words = views[display]
            path, data = self.files[display]
            entry = ProjectFile(display, path, data, *self._modules(path))
            spec = json.loads(asks)
            now = view(spec, self.facts[display], entry if spec["entry"] else None, universe)
            fresh[display] = entry, now
            if now != (digest, words) or not all(
                layer_holds(layer, display, self.facts[display], entry, words is not None)
                for layer in saved["layers"]
            ):
                written = [w for layer in saved["layers"] for w in layer["words"].get(display, ())]
                edited[display] = (was[display], [*(words or ()), *written])
        if not edited:
            return saved
        return self._updated(saved, views, universe, edited, fresh)

    def _updated(
        self,
        saved: dict[str, Any],
        views: dict[str, list[Any]],
        universe: frozenset[str],
        edited: dict[str, tuple[str | None, list[str] | None]],
        fresh: dict[str, tuple[ProjectFile, View]],
    ) -> dict[str, Any] | None:
        """``saved`` after ``edited`` changed answers, with a layer of views for what the
        partial index asked (`project.view_layers`); None when the index must be built."""
        layers = saved["layers"]
        if len(layers) >= MAX_LAYERS:  # edits piling up: their questions as one layer
            layers = [consolidated(layers)]
        complete = all(display in saved["contexts"] for display in saved["kernel_files"])
        if len(layers[0]["asks"] if layers else ()) > MAX_ASKED or not complete:
            return None
        data = {display: data for display, (_, data) in self.files.items()}
        words = {display: entry[3] for display, entry in views.items()}
        search = ByteSearch(data, words, universe, layers, edited)
        edit = Edit(self.files, self.facts, self._modules, self._store, edited, search)  # type: ignore[arg-type]
        update = updated(saved, edit)
        if update is None:
            return None
        replaced = dict(saved["replaced"])
        for display in edited:
            entry, now = fresh[display]
            replaced[display] = [self._stats[display], views[display][1], *now]
            outlined = views[display][3] is not None
            layers = [
                refreshed(layer, display, self.facts[display], entry, outlined) for layer in layers
            ]
        outlined = {display for display, entry in views.items() if entry[3] is not None}
        asked = [new_layer(index, self.files, self.facts, outlined) for index in update.indexes]
        layers = [*layers, asked[0] if len(asked) == 1 else consolidated(asked)]
        self._updated_in_place = True
        return {
            **saved,
            "contexts": update.contexts,
            "kernel_files": update.kernel_files,
            "names": update.names,
            "woken": update.woken,
            "replaced": replaced,
            "layers": layers,
        }

    def _views(self, token: Any = None) -> dict[str, list[Any]]:
        """The last build's (stat, asks as JSON, `views.View`) of each file, when it is this
        layout's and well formed (and, given ``token``, written by the build whose record
        holds it: runs sharing the cache write the record and the views apart); else empty."""
        views = self._store.views() if self._store is not None else {}
        if views.get("key") != self._key or not _views_well_formed(views):
            return {}
        if token is not None and views.get("token") != token:
            return {}
        return views["files"]

    def kernel_files(self) -> list[str]:
        """`ProjectIndex.kernel_files`."""
        if self._index is None and self._saved is not None:
            return list(self._saved["kernel_files"])
        return self.index.kernel_files()

    def context_for(self, display: str) -> ProjectContext | None:
        """`ProjectIndex.context_for`, once per file of a run."""
        if display not in self._contexts:
            context = MISSING
            if self._index is None and self._saved is not None:
                saved = self._saved["contexts"]
                context = decoded(saved[display], self.files) if display in saved else MISSING
                if context is not MISSING:
                    self._from_saved.add(display)
            if context is MISSING:
                context = self.index.context_for(display)
            self._contexts[display] = context  # type: ignore[assignment]
        return self._contexts[display]

    def remember(self) -> None:
        """Keep this run's answers under its key (call when the run has asked all)."""
        store = self._store
        if store is None:
            return
        store.used.add(self._key)
        if self._index is None and self._saved is not None:
            store.used.update(store.entries)  # nothing was read again: all still holds
            for display, was in zip(self.files, self._saved["stats"], strict=True):
                if display in self._changed and was is not None:  # its bytes' old facts
                    store.used.discard(f"s:{self.files[display][0]}:{was}")
            stats = list(self._stats.values())
            if self._saved["stats"] != stats or self._updated_in_place:
                changed = {d: _byte_facts(self.facts[d]) for d in self._changed}
                byte_facts = {**self._saved["byte_facts"], **changed}
                store.entries[self._key] = {**self._saved, "stats": stats, "byte_facts": byte_facts}
                store.changed = True
            return
        index = self.index
        contexts = {  # those from the record asked again: their reads are logged with the rest
            display: encoded(index.context_for(display) if display in self._from_saved else context)
            for display, context in self._contexts.items()
        }
        universe = index.universe.names()
        before = self._views()
        added = universe.difference(store.views().get("universe", ())) if before else set()
        files = {}
        for display in self.files:
            facts, entry = self.facts[display], index.files.get(display)
            asked = asks_of(facts, entry, index.dormant.searched.get(display, set()))
            asks = json.dumps(asked, separators=(",", ":"))
            stat, last = self._stats[display], before.get(display)
            if stat is not None and last is not None and last[:2] == [stat, asks]:
                # the same bytes asked the same: the same answers, over the new universe
                files[display] = [*last[:3], widened(last[3], entry, universe, added)]
            else:
                files[display] = [stat, asks, *view(asked, facts, entry, universe)]
        for display in index.files:  # a later edit's old import words (`incremental`)
            self.facts[display].words()
        modules = Counter(self._modules(path)[0] for path, _ in self.files.values())
        token = os.urandom(8).hex()  # pairs this record with these views
        store.entries[self._key] = {
            "kernel_files": index.kernel_files(),
            "contexts": contexts,
            "stats": list(self._stats.values()),
            "views": token,
            "names": names_of(index, [d for d, c in contexts.items() if c is not None]),
            "woken": index.woken,
            "ambiguous": sorted(module for module, count in modules.items() if count > 1),
            "replaced": {},
            "layers": [],
            "byte_facts": {
                d: _byte_facts(self.facts[d]) for d, s in self._stats.items() if s is None
            },
        }
        store.new_views = {
            "key": self._key,
            "token": token,
            "universe": sorted(universe),
            "files": files,
        }
        store.changed = True


def _byte_facts(facts: FileFacts) -> dict[str, Any]:
    """What a later edit's partial update reads of a file's bytes as they were now (whether
    they name Triton, the words of their imports): kept in the record for the files whose
    stat signature does not keep them (`project.incremental`)."""
    return {"t": facts.triton, "w": " ".join(sorted(facts.words()))}


def _short(key: str | None) -> str | None:
    """A stat signature key without its path (the layout holds the path)."""
    return None if key is None else ":".join(key.rsplit(":", 2)[1:])


def _well_formed(saved: object) -> bool:
    return (
        isinstance(saved, dict)
        and all(
            isinstance(saved.get(key), kind)
            for key, kind in (
                ("kernel_files", list),
                ("contexts", dict),
                ("stats", list),
                ("names", dict),
                ("woken", dict),
                ("ambiguous", list),
                ("replaced", dict),
                ("byte_facts", dict),
            )
        )
        and well_formed(saved.get("layers"))
    )


def _views_well_formed(views: dict[str, Any]) -> bool:
    files = views.get("files")
    return (
        isinstance(files, dict)
        and isinstance(views.get("universe"), list)
        and all(isinstance(v, list) and len(v) == 4 for v in files.values())
    )
