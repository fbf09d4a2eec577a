"""What the project index read of each file, as a digest a later run can compare: the index is
a function of its answers to the questions it asked the files (`project.project_file` logs
them), so a warm run whose edited files give every logged question the answer they gave
before would build the same index, and keeps the last run's (`project.snapshot`). Editing a
function body, a comment or a kernel's code leaves the outline, the launches and calls found
and the census's counts as they were; adding a launch, an import, a call of a launching
function or another mention of a kernel's name changes an answer and builds the index again.

The words a file is asked about are compared over every name the index asked any file about
(its universe), not question by question: the index asks each file about the same few large
sets of names. They are kept beside the digest of the other answers: a build that asks about
one more name (the caller an edit added) changes every file's words among the universe, and
an unchanged file's are brought up to date from its words (`widened`) without asking it the
rest again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Set
from typing import Any

from triton_lint.project.filefacts import FileFacts
from triton_lint.project.project_file import ProjectFile

#: A file's logged questions, as JSON (`asks_of`).
Asks = dict[str, Any]
#: A file's answers as a later run compares them: the digest of all but its words, and its
#: words among the universe (None when it was not asked for them).
View = tuple[str, list[str] | None]


def asks_of(facts: FileFacts, entry: ProjectFile | None, searched: set[str]) -> Asks:
    """The questions the index asked of one file: its byte facts, the names looked for in
    the bytes of a file that never names Triton, and what it read of the text of one it
    indexed (None when it indexed none)."""
    asked = entry.asked if entry is not None else None
    return {
        "facts": sorted(key for key in facts.record if key in _ASK_FACT),
        "searched": sorted(searched),
        "entry": None
        if asked is None
        else {
            "parsed": asked.parsed,
            "words": asked.words,
            "may_define": asked.may_define,
            "once": asked.once,
            "uses": sorted([after, list(wanted)] for after, wanted in asked.uses),
            "counts": sorted(asked.counts),
            "word_counts": sorted(asked.word_counts),
            "marked": sorted(asked.marked),
            "autograd": sorted(asked.autograd),
            "defined": sorted(asked.defined),
        },
    }


def view(asks: Asks, facts: FileFacts, entry: ProjectFile | None, universe: frozenset[str]) -> View:
    """The answers ``facts`` and ``entry`` (the file's current bytes) give to ``asks``."""
    answers: dict[str, Any] = {
        "facts": {key: _fact(facts, key) for key in asks["facts"]},
        "searched": [name for name in asks["searched"] if name.encode() in facts.data],
    }
    spec = asks["entry"]
    words = None
    if spec is not None:
        if entry is None:
            return "", None
        answers["entry"] = _text_answers(spec, entry)
        words = sorted(entry.words & universe) if spec["words"] else None
    encoded = json.dumps(answers, separators=(",", ":")).encode()  # built in a fixed order
    return hashlib.blake2b(encoded, digest_size=16).hexdigest(), words


def widened(
    words: list[str] | None, entry: ProjectFile | None, now: frozenset[str], added: Set[str]
) -> list[str] | None:
    """An unchanged file's words among the universe ``now``, from those among the last one
    (which ``now`` has with ``added``)."""
    if words is None or entry is None:
        return words
    return sorted({word for word in words if word in now} | (entry.words & added))


def _text_answers(spec: dict[str, Any], entry: ProjectFile) -> Any:
    if spec["parsed"]:
        entry.parse()
    marked = {name for name in spec["marked"] if entry.is_marked(name)}
    uses = spec["uses"]
    return {
        "outline": _outline(entry) if spec["parsed"] else None,
        "defined": [entry.defines(name) for name in spec["defined"]],
        "may_define": entry.may_define() if spec["may_define"] else None,
        "once": sorted(entry.defined_once()) if spec["once"] else None,
        "uses": [[after, wanted, entry.uses_of(tuple(wanted), after)] for after, wanted in uses],
        "counts": [entry.text.count(name) for name in spec["counts"]],
        "word_counts": [entry.word_count(name) for name in spec["word_counts"]],
        "marked": sorted(marked),
        "autograd": [entry.autograd_calls(owner) for owner in spec["autograd"]],
    }


def _outline(entry: ProjectFile) -> list[Any]:
    """The outline but its top-level names, which count only as asked (`defined`): a
    constant or a helper added that no file names changes nothing the index read."""
    found = entry.found or {}
    return [found.get("imports"), found.get("relative"), found.get("kernels")]


#: Each byte fact by its key in `FileFacts.record`: asking computes it into the record.
_ASK_FACT: dict[str, Callable[[FileFacts], object]] = {
    "t": lambda facts: facts.triton,
    "k": lambda facts: facts.kernels,
    "w": FileFacts.words,
    "i": FileFacts.statements,
}


def _fact(facts: FileFacts, key: str) -> Any:
    """The recorded value of the byte fact ``key`` (the JSON form the store keeps)."""
    _ASK_FACT[key](facts)
    return facts.record[key]
