"""What the project index keeps of the project's files between runs, in the results cache
(`triton_lint.cache.LintCache.load_index`): by stat signature (``s:``, `project.filefacts`),
by read digest (``r:``, `project.run`), a snapshot of the index's answers (``x:``,
`project.snapshot`), and what outlining each file found, by content digest (``w:``, ``o:``,
``u:``, ``once:``, ``m:``, `project.project_file`).

The outlines are most of the bytes (4 of 6 MB on 2,000 kernel-dense files) and a run that
answers from the snapshot reads none of them: they are kept apart and loaded on first use.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

#: The key prefixes of what the index found by outlining a file's text (by content digest).
OUTLINE_PREFIXES = ("w:", "o:", "u:", "once:", "m:")


@dataclass
class Store:
    """The entries by key, which this run used, whether it added any; ``load`` reads the
    outlines kept apart (None once they are in ``entries``)."""

    entries: dict[str, Any] = field(default_factory=dict)
    used: set[str] = field(default_factory=set)
    changed: bool = False
    load: Callable[[], dict[str, Any]] | None = None
    #: what the index read of each file in the last build (`project.views`), kept apart:
    #: a run reads it only when a file changed, and writes it only after a build
    load_views: Callable[[], dict[str, Any]] | None = None
    new_views: dict[str, Any] | None = None
    _views: dict[str, Any] | None = None
    #: files a reader may outline from their text before the store loads every kept
    #: outline (a partial index reads a few files: `project.incremental`)
    spare: int = 0

    def mark_changed(self) -> None:
        self.changed = True

    @property
    def outlines(self) -> dict[str, Any]:
        """``entries``, with the outlines loaded (what the index reads and writes)."""
        if self.load is not None:
            loaded, self.load = self.load(), None
            for key, value in loaded.items():
                self.entries.setdefault(key, value)
        return self.entries

    def views(self) -> dict[str, Any]:
        """The last build's views (loaded on first use)."""
        if self._views is None:
            self._views = self.load_views() if self.load_views is not None else {}
        return self._views

    def kept(self) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """The entries this run used (others belong to files since changed), as the part
        read by stat signature and the outlines (None when this run never loaded them: the
        kept ones still hold)."""
        kept: dict[str, Any] = {}
        outlines: dict[str, Any] | None = None if self.load is not None else {}
        for key in sorted(self.used):
            if not key.startswith(OUTLINE_PREFIXES):
                kept[key] = self.entries[key]
            elif outlines is not None:
                outlines[key] = self.entries[key]
        return kept, outlines
