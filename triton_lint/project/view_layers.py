"""What a partial index (`project.incremental`) asked of the files, kept as a layer over the
last whole build's views (`project.views`): a later warm run checks an edited file against the
build's view of it and against every layer.

A layer holds the names the partial index asked about (its universe) with the words each file
writes among them, listed only for the files that write one, and the digest of the answers
of each file the partial index asked more than its words (outlined it, looked for uses,
counted). The files an edit did not change read as before to every earlier question, so
their earlier views still hold; together the questions are all those a whole build would
have asked, and some more, which only makes a later check stricter.

An edited file whose answers changed gets its views afresh: the whole build's questions
(`replaced`) and each layer's, answered by its new bytes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from triton_lint.project.filefacts import FileFacts
from triton_lint.project.index import ProjectIndex
from triton_lint.project.project_file import Asked, ProjectFile
from triton_lint.project.views import asks_of, view

#: More layers than this are consolidated into one (`consolidated`).
MAX_LAYERS = 8
#: A consolidated layer asking more files than this, and the index is built again.
MAX_ASKED = 2_000
#: A layer: {"universe": names, "words": {display: names}, "woken": displays,
#: "asks": {display: [[asks, digest], ...]}}
Layer = dict[str, Any]


def new_layer(
    index: ProjectIndex,
    files: dict[str, tuple[Path, bytes]],
    facts: dict[str, FileFacts],
    outlined: set[str],
) -> Layer:
    """What the partial ``index`` asked: the words among every name it asked about of every
    file it reads or the last whole build ``outlined`` (a build over every kernel may read
    it), and the answers of the files it asked more."""
    universe = sorted(index.universe.names())
    among = outlined.union(index.files)
    words = {}
    search = index.search
    holding = search.holding_any(universe, among) if search is not None else among
    for display in sorted(holding):  # the others are asked no words (`project.views`)
        entry = index.files.get(display) or ProjectFile(display, *files[display])
        written = sorted(entry.words.intersection(universe))
        if written:
            words[display] = written
    asks = {}
    plain = (Asked(), Asked(words=True))
    for display in sorted({*index.files, *index.dormant.searched}):
        entry = index.files.get(display)
        searched = index.dormant.searched.get(display, set())
        if (entry is None or entry.asked in plain) and not searched:
            continue  # asked its words at most: the layer's words answer that
        asked = asks_of(facts[display], entry, searched)
        asks[display] = [
            [json.dumps(asked, separators=(",", ":")), _digest(asked, facts[display], entry)]
        ]
    return {"universe": universe, "words": words, "asks": asks, "woken": sorted(index.woken)}


def consolidated(layers: list[Layer]) -> Layer:
    """One layer asking what ``layers`` asked: the union of their names (a file's words
    among them, the union of its words among each), and each file's questions (one digest
    for the same questions: every layer holds the file's current answers)."""
    words: dict[str, set[str]] = {}
    asks: dict[str, dict[str, str]] = {}
    for layer in layers:
        for display, written in layer["words"].items():
            words.setdefault(display, set()).update(written)
        for display, pairs in layer["asks"].items():
            asks.setdefault(display, {}).update((asked, digest) for asked, digest in pairs)
    return {
        "universe": sorted({name for layer in layers for name in layer["universe"]}),
        "woken": sorted({display for layer in layers for display in layer["woken"]}),
        "words": {display: sorted(written) for display, written in words.items()},
        "asks": {
            display: [list(pair) for pair in sorted(p.items())] for display, p in asks.items()
        },
    }


def layer_holds(
    layer: Layer, display: str, fresh: FileFacts, entry: ProjectFile | None, outlined: bool
) -> bool:
    """Whether ``display``, read afresh (``entry``: a `ProjectFile` of its current bytes),
    answers ``layer`` as before; its words count when the last whole build ``outlined``
    it or the layer's index woke it (no index asks a sleeping file's words)."""
    written = (
        _written(entry, display, fresh, layer) if _reads_words(layer, display, outlined) else []
    )
    if written != layer["words"].get(display, []):
        return False
    return all(
        _digest(json.loads(asks), fresh, entry) == digest
        for asks, digest in layer["asks"].get(display, ())
    )


def refreshed(
    layer: Layer, display: str, fresh: FileFacts, entry: ProjectFile, outlined: bool
) -> Layer:
    """``layer`` with ``display`` answered by its current bytes."""
    words = dict(layer["words"])
    written = (
        _written(entry, display, fresh, layer) if _reads_words(layer, display, outlined) else []
    )
    if written:
        words[display] = written
    else:
        words.pop(display, None)
    asks = dict(layer["asks"])
    if display in asks:
        asks[display] = [[a, _digest(json.loads(a), fresh, entry)] for a, _ in asks[display]]
    return {**layer, "words": words, "asks": asks}


def well_formed(layers: object) -> bool:
    return isinstance(layers, list) and all(
        isinstance(layer, dict)
        and isinstance(layer.get("universe"), list)
        and isinstance(layer.get("words"), dict)
        and isinstance(layer.get("asks"), dict)
        and isinstance(layer.get("woken"), list)
        for layer in layers
    )


def _reads_words(layer: Layer, display: str, outlined: bool) -> bool:
    return bool(layer["universe"]) and (outlined or display in layer["woken"])


def _written(entry: ProjectFile | None, display: str, facts: FileFacts, layer: Layer) -> list[str]:
    if entry is None:
        entry = ProjectFile(display, Path(display), facts.data)
    return sorted(entry.words.intersection(layer["universe"]))


def _digest(asks: dict[str, Any], facts: FileFacts, entry: ProjectFile | None) -> str:
    """The digest of the answers to ``asks`` but the words (which the layer keeps apart)."""
    return view(asks, facts, entry, frozenset())[0]
