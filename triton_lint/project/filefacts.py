"""What a run reads of every file's bytes before anything else, kept by the file's stat
signature (resolved path, size, modification time in nanoseconds) in the index store: whether
it names Triton, whether it may hold kernels, the words and statements of its imports
(`triton_lint.project.dormant`). A warm run over a project of thousands of files then scans
none of the unchanged ones again (a monorepo's bytes are tens of megabytes).

A file modified less than `RACY_NS` before the run started reading is not kept: a write in
the same tick of the clock as the read could leave the signature unchanged for other bytes
(git's "racy" entries).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from triton_lint.engine import may_hold_kernels

_IMPORTED = re.compile(rb"import[ \t]+(?:\([^)]*\)|[^\n]*)")
_FROM_IMPORT = re.compile(rb"from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]*(\([^)]*\)|[^\n]*)")
_PLAIN_IMPORT = re.compile(rb"import[ \t]+([^\n(]*)")
_WORD = re.compile(rb"\w+")
_COMMENT = re.compile(rb"#[^\n]*")

#: A file written this close to the run's start is read afresh (coarse clocks of some file
#: systems included).
RACY_NS = 2_000_000_000


@dataclass
class FileFacts:
    """The byte facts of one file, each computed once and kept in ``record`` (the store's
    entry for the file's signature, or a fresh dict when it is not kept)."""

    data: bytes
    record: dict[str, Any] = field(default_factory=dict)
    on_change: Callable[[], None] | None = None

    @property
    def triton(self) -> bool:
        """Whether the bytes name Triton (else the file is dormant in the index)."""
        return self._get("t", lambda: b"triton" in self.data)

    @property
    def kernels(self) -> bool:
        """`engine.may_hold_kernels` of the bytes."""
        return self._get("k", lambda: may_hold_kernels(self.data))

    def words(self) -> set[str]:
        """The words written after ``import`` in the file (kept as one string: JSON reads one
        long string many times faster than as many short ones)."""
        return set(self._get("w", lambda: " ".join(sorted(import_words(self.data)))).split())

    def statements(self) -> list[tuple[int, str, str]]:
        """(leading dots, module, name) of each import statement's names (name "" for a
        plain ``import module``)."""
        found = self._get("i", lambda: [list(s) for s in import_statements(self.data)])
        return [(level, module, name) for level, module, name in found]

    def _get(self, key: str, compute: Callable[[], Any]) -> Any:
        if key not in self.record:
            self.record[key] = compute()
            if self.on_change is not None:
                self.on_change()
        return self.record[key]


def file_facts(
    path: Path, data: bytes, entries: dict[str, Any] | None, since_ns: int
) -> tuple[str | None, FileFacts]:
    """The store key of ``path``'s signature (None when it is not kept) and its facts, read
    from ``entries`` where an earlier run kept them."""
    if entries is None:
        return None, FileFacts(data)
    try:
        status = os.stat(path)
    except OSError:
        return None, FileFacts(data)
    if status.st_size != len(data) or status.st_mtime_ns >= since_ns - RACY_NS:
        return None, FileFacts(data)
    key = f"s:{path}:{status.st_size}:{status.st_mtime_ns}"
    return key, FileFacts(data, entries.setdefault(key, {}))


def import_words(data: bytes) -> set[str]:
    """The words written after ``import`` in ``data`` (a wanted module's last component or a
    wanted name is always among them)."""
    return {word.decode("ascii") for word in _WORD.findall(b" ".join(_IMPORTED.findall(data)))}


def import_statements(data: bytes) -> list[tuple[int, str, str]]:
    """(leading dots, module, name) of each name of each ``from module import name`` of
    ``data``, then (0, module, "") of each ``import module``."""
    found: list[tuple[int, str, str]] = []
    for dots, base, names in _FROM_IMPORT.findall(data):
        module = base.decode("ascii", "replace")
        for part in _COMMENT.sub(b"", names).strip(b"()").split(b","):
            if words := part.split():
                found.append((len(dots), module, words[0].decode("ascii", "replace")))
    for names in _PLAIN_IMPORT.findall(data):
        for part in names.split(b","):
            if words := part.split():
                found.append((0, words[0].decode("ascii", "replace"), ""))
    return found
