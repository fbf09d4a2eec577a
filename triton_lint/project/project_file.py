"""One file of the project as the index reads it, and a log of what the index asked of its
text: a warm run whose edited files answer every logged question as before keeps the last
run's index (`triton_lint.project.views`).

Every read of a file's text by the index goes through a method here that logs it: the
outline, the words it is asked about (`written`), the uses of names (`uses`), the counts the
launch census takes, whether it may define kernels, the names an autograd function's
``forward`` runs by.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Callable, Iterable, Set
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from triton_lint.engine import may_define_kernels
from triton_lint.project.autograd_apply import autograd_functions
from triton_lint.project.outline import Outline, line_starts, occurrences, outline
from triton_lint.project.store import Store
from triton_lint.source import decode

_WORD = re.compile(r"[A-Za-z_]\w*")


class Universe:
    """Every name the index asked any file about (the sets by identity: the index passes
    the same large sets for every file)."""

    def __init__(self) -> None:
        self._sets: dict[int, Set[str]] = {}

    def add_set(self, names: Set[str]) -> None:
        self._sets.setdefault(id(names), names)

    def names(self) -> frozenset[str]:
        return frozenset().union(*self._sets.values())


@dataclass
class Asked:
    """What the index asked of one file's text beyond its outline and its words."""

    parsed: bool = False
    words: bool = False
    may_define: bool = False
    once: bool = False
    uses: set[tuple[str, tuple[str, ...]]] = field(default_factory=set)
    counts: set[str] = field(default_factory=set)
    word_counts: set[str] = field(default_factory=set)
    marked: set[str] = field(default_factory=set)
    autograd: set[str] = field(default_factory=set)
    defined: set[str] = field(default_factory=set)


@dataclass
class ProjectFile:
    """One file of the project as the index reads it (`triton_lint.project.outline`); what
    it reads is kept in ``store`` by content digest, so a warm run reads no unchanged file's
    lines again."""

    display: str
    path: Path
    data: bytes
    module: str = ""
    is_package: bool = False
    store: Store | None = None
    universe: Universe = field(default_factory=Universe)
    asked: Asked = field(default_factory=Asked)
    found: dict[str, Any] | None = None  # the outline as stored (before resolving imports)
    _text: str | None = None
    _outline: Outline | None = None
    _words: set[str] | None = None
    _starts: list[int] | None = None
    _digest: str | None = None
    _word_counts: Counter[str] | None = None
    _marked: set[str] | None = None
    _may_define: bool | None = None
    _autograd: dict[str, list[str]] | None = None
    _from_text: bool = False  # read from its text while the store is not loaded (`spare`)
    imports: dict[str, str] = field(default_factory=dict)
    defined: set[str] = field(default_factory=set)
    kernels: set[str] = field(default_factory=set)

    @property
    def text(self) -> str:
        if self._text is None:
            try:
                self._text = decode(self.data)
            except (SyntaxError, UnicodeError, LookupError):
                self._text = ""
        return self._text

    @property
    def digest(self) -> str:
        if self._digest is None:
            self._digest = hashlib.blake2b(self.data, digest_size=16).hexdigest()
        return self._digest

    @property
    def words(self) -> set[str]:
        """Every identifier the file writes (read through `written`, which logs the ask)."""
        if self._words is None:
            self._words = set(self._stored(f"w:{self.digest}", self._find_words).split())
        return self._words

    def written(self, names: Set[str]) -> set[str]:
        """The ones of ``names`` the file writes (to pick the files worth reading further)."""
        self.asked.words = True
        self.universe.add_set(names)
        return self.words & names

    def _find_words(self) -> str:
        return " ".join(sorted(set(_WORD.findall(self.text))))  # one string: JSON reads it fast

    def may_define(self) -> bool:
        """`engine.may_define_kernels` of the text."""
        self.asked.may_define = True
        if self._may_define is None:
            self._may_define = self._stored(
                f"m:{self.digest}", lambda: may_define_kernels(self.text)
            )
        return self._may_define

    def parse(self) -> bool:
        """Read the file's outline: imports, top-level names, kernels (once)."""
        if self.found is None:
            self.asked.parsed = True
            self.found = found = self._stored(f"o:{self.digest}", self._find_outline)
            self.imports = dict(found["imports"])
            self.defined = set(found["defined"])
            self.kernels = set(found["kernels"])
            package = self.package()
            for local, (level, rest) in found["relative"].items():
                anchor = package[: len(package) - level + 1] if level > 1 else package
                self.imports[local] = ".".join([*anchor, rest])
        return True

    def defines(self, name: str) -> bool:
        """Whether the file defines ``name`` at its top level (read after `parse`)."""
        self.asked.defined.add(name)
        return name in self.defined

    def package(self) -> list[str]:
        """The package the file's relative imports start from."""
        parts = self.module.split(".") if self.module else []
        return parts if self.is_package else parts[:-1]

    def _find_outline(self) -> dict[str, Any]:
        read = self._lines()
        return {
            "imports": read.imports,
            "relative": {k: list(v) for k, v in read.relative.items()},
            "defined": sorted(read.defined),
            "kernels": sorted(read.kernels),
        }

    def _lines(self) -> Outline:
        if self._outline is None:
            self._outline = outline(self.text)
        return self._outline

    def uses(self, names: Set[str], after: str, extra: Iterable[str] = ()) -> list[tuple[str, str]]:
        """(qualified name of the function holding it or "", dotted name) of each use of one
        of ``names`` or ``extra`` (the file's own aliases of them) followed by ``after`` (a
        launch ``[``, a call ``(``)."""
        extra = set(extra)
        self.universe.add_set(names)
        self.universe.add_set(extra)
        self.asked.words = True
        wanted = (names & self.words) | (extra & self.words)
        if not wanted:
            return []
        key = tuple(sorted(wanted))
        self.asked.uses.add((after, key))
        return self.uses_of(key, after)

    def uses_of(self, wanted: tuple[str, ...], after: str) -> list[tuple[str, str]]:
        """`uses` of exactly ``wanted`` (sorted), kept by content digest."""
        stored_key = f"u:{self.digest}:{after}:{','.join(wanted)}"
        found = self._stored(stored_key, lambda: self._find_uses(set(wanted), after))
        return [tuple(use) for use in found]  # type: ignore[misc]

    def _find_uses(self, wanted: set[str], after: str) -> list[list[str]]:
        scopes = self._lines().scopes
        if self._starts is None:
            self._starts = line_starts(self.text)
        return [
            [scopes[line] if line < len(scopes) else "", dotted]
            for line, dotted in occurrences(self.text, self._starts, wanted, after)
        ]

    def count(self, name: str) -> int:
        """How often ``name`` appears in the text, inside longer words too."""
        self.asked.counts.add(name)
        return self.text.count(name)

    def word_count(self, name: str) -> int:
        """How often ``name`` appears as a whole word (what ``\\bname\\b`` matches)."""
        self.asked.word_counts.add(name)
        if self._word_counts is None:
            self._word_counts = Counter(re.findall(r"\w+", self.text))
        return self._word_counts[name]

    def is_marked(self, name: str) -> bool:
        """Whether ``name`` is written right after a ``.`` or a quote (an attribute, a
        string: what ``[.'"]\\s*name\\b`` finds)."""
        self.asked.marked.add(name)
        if self._marked is None:
            self._marked = set(re.findall(r"[.'\"]\s*(\w+)", self.text))
        return name in self._marked

    def autograd_calls(self, owner: str) -> list[str]:
        """The names ``owner.forward`` runs by (`autograd_apply.autograd_functions`)."""
        self.asked.autograd.add(owner)
        if self._autograd is None:
            self._autograd = autograd_functions(self.text)
        return self._autograd.get(owner, [])

    def defined_once(self) -> set[str]:
        """The kernels the file defines and never names again (a vendor backend's own copy
        of a helper): such a file does not refer to another file's kernel of that name."""
        if not self.kernels:  # not read, or no kernels
            return set()
        self.asked.once = True

        def written_once() -> str:
            counts = Counter(word for word in _WORD.findall(self.text) if word in self.kernels)
            return " ".join(sorted(k for k in self.kernels if counts[k] <= 1))

        return set(self._stored(f"once:{self.digest}", written_once).split())

    def _stored(self, key: str, compute: Callable[[], Any]) -> Any:
        if self.store is None:
            return compute()
        if self.store.load is not None and (self._from_text or self.store.spare > 0):
            if not self._from_text:  # a few files outlined: cheaper than loading them all
                self.store.spare -= 1
                self._from_text = True
            return compute()
        entries = self.store.outlines
        if key not in entries:
            entries[key] = compute()
            self.store.changed = True
        self.store.used.add(key)
        return entries[key]
