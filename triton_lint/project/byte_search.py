"""Which files write a name, for a partial index (`project.incremental`): it asks every file
about a handful of names, and most files write none of them. A name the last build asked
about is looked up in what it kept (each file's words among those names, `project.views`,
and each layer's since, `project.view_layers`); any other name, or a file those do not
answer for (edited since, never outlined), is searched for in the bytes."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any


class ByteSearch:
    """The files (display -> bytes) that may write each name asked for, among the files
    asked about: a superset of those whose words hold it. A file whose text is not its
    bytes read as UTF-8 (a coding cookie in its first two lines) may write every name."""

    def __init__(
        self,
        files: dict[str, bytes],
        words: dict[str, list[str] | None],
        universe: Iterable[str],
        layers: list[dict[str, Any]],
        edited: Iterable[str],
    ) -> None:
        self._files = files
        edited = set(edited)
        #: the files kept words answer for, and the names they answer
        self._kept = {d: w for d, w in words.items() if w is not None and d not in edited}
        self._universe = frozenset(universe)
        self._layers = layers
        self._always = frozenset(d for d, data in files.items() if not _utf8(data))
        self._unkept = [d for d in files if d not in self._kept]
        self._found: dict[str, frozenset[str]] = {}

    def holding(self, name: str, among: Collection[str]) -> frozenset[str]:
        """The files of ``among`` that may write ``name``."""
        if name not in self._found:
            if name in self._universe:
                found = {d for d, words in self._kept.items() if name in words}
            else:
                found = set(self._in_layers(name))
            needle = name.encode()
            found.update(d for d in self._unkept if needle in self._files[d])
            self._found[name] = self._always | found
        return frozenset(d for d in self._found[name] if d in among)

    def holding_any(self, names: Iterable[str], among: Collection[str]) -> frozenset[str]:
        return frozenset().union(*(self.holding(name, among) for name in names))

    def _in_layers(self, name: str) -> Iterable[str]:
        for layer in self._layers:
            if name in layer["universe"]:
                return (d for d in layer["words"] if d in self._kept and name in layer["words"][d])
        needle = name.encode()  # a name no build asked about: every file's bytes
        return (d for d in self._kept if needle in self._files[d])


def _utf8(data: bytes) -> bool:
    """Whether the text is the bytes read as UTF-8: no coding cookie in the first two lines
    (a name is then in the text only if its UTF-8 bytes are in the bytes)."""
    end = data.find(b"\n", data.find(b"\n") + 1)
    return b"coding" not in (data if end < 0 else data[:end])
