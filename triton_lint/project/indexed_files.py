"""The files a project index reads and how a name written in one resolves to another's:
the files that name Triton from the start, the others (`project.dormant`) once the index
wakes them, each by its dotted module (`project.modules`); a module two files share
resolves to neither."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from triton_lint.model.project import FunctionKey
from triton_lint.project.byte_search import ByteSearch
from triton_lint.project.dormant import DormantFiles, Wanted
from triton_lint.project.filefacts import FileFacts
from triton_lint.project.modules import ModuleNames
from triton_lint.project.project_file import ProjectFile, Universe
from triton_lint.project.store import Store

#: (display path, resolved path, bytes) of each file; each file's byte facts by display path.
Files = Iterable[tuple[str, Path, bytes]]
Facts = dict[str, FileFacts]


class IndexedFiles:
    """The files of one run the index reads, and name resolution across them."""

    def __init__(
        self,
        files: Files,
        store: Store | None = None,
        facts: Facts | None = None,
        modules: ModuleNames | None = None,
        only: set[str] | None = None,
        search: ByteSearch | None = None,
        early: dict[str, int] | None = None,
    ) -> None:
        #: the kernel files followed (None: all); a partial index serves
        #: `project.incremental`, which also needs what had been asked when each file woke
        self.only = only
        #: the files' bytes, searched first for the names of a pass (a partial index)
        self.search = search
        #: files that never name Triton to wake before a pass whatever the kernels followed
        #: need (display -> the pass): a whole build may have woken them for others
        self._early = dict(early or {})
        #: each file woken -> the first pass over the files it took part in (`_passes`)
        self.woken: dict[str, int] = {}
        #: in a partial index, the names each pass over the files searched for, each with
        #: the classes it is a method of when too common to search alone (``C.apply``)
        self.searches: list[dict[str, frozenset[str]]] = []
        #: the modules a name was resolved through (`_module`)
        self.looked_up: set[str] = set()
        self._passes = 0
        self.files: dict[str, ProjectFile] = {}
        self.facts = dict(facts or {})  # kept by stat signature in ``store``: `filefacts`
        self.by_module: dict[str, ProjectFile] = {}
        self.store = store
        #: every name the index asks the files about (`project.views`)
        self.universe = Universe()
        #: files that never name Triton, read once their imports name what the index follows
        self.dormant = DormantFiles(module_name := modules or ModuleNames())
        self._ambiguous: set[str] = set()
        for display, path, data in files:
            facts = self.facts.setdefault(display, FileFacts(data))
            if not facts.triton:
                self.dormant.add(display, path, data, facts)
                continue
            entry = ProjectFile(display, path, data, store=store, universe=self.universe)
            entry.module, entry.is_package = module_name(path)
            self.files[display] = entry
            if entry.module in self.by_module:
                self._ambiguous.add(entry.module)
            self.by_module.setdefault(entry.module, entry)
        for module in self._ambiguous:  # two files import as one name: which one is unknown
            del self.by_module[module]
        self._read()
        self._wake_early(every=True)

    def _read(self) -> None:
        """What a subclass reads of the files once they are known."""

    def _admit(self, wanted: Wanted) -> None:
        """Index the files that never name Triton but import what ``wanted`` names."""
        for display in self.dormant.importing(wanted):
            self._wake(display)

    def _pass(
        self, names: set[str], owners: dict[str, frozenset[str]] | None = None
    ) -> list[ProjectFile]:
        """Start a pass over the files for ``names`` (the ones woken later take part in
        the next): the files to ask, all of them, or with `search` those whose bytes hold
        one of the names (every other file writes none: the universe has the names)."""
        self._wake_early()
        self._passes += 1
        files = list(self.files.values())
        if self.search is None:
            return files
        self.searches.append({name: (owners or {}).get(name, frozenset()) for name in names})
        self.universe.add_set(set(names))
        holding = self.search.holding_any(names, self.files)
        return [entry for entry in files if entry.display in holding]

    def _wake_early(self, every: bool = False) -> None:
        """Wake the files of `_early` due before the next pass (``every``: all left)."""
        for display, first in sorted(self._early.items()):
            if first <= self._passes + 1 or every:
                del self._early[display]
                if display in self.dormant.files:
                    self._wake(display)

    def candidates(self, names: set[str]) -> list[ProjectFile]:
        """The indexed files that may write one of ``names`` (all, without `search`)."""
        if self.search is None:
            return list(self.files.values())
        holding = self.search.holding_any(names, self.files)
        return [entry for entry in self.files.values() if entry.display in holding]

    def _wake(self, display: str) -> None:
        path, data, (module, is_package) = self.dormant.take(display)
        self.woken[display] = self._passes + 1
        entry = ProjectFile(display, path, data, module, is_package, self.store, self.universe)
        self.files[display] = entry
        if entry.module in self.by_module:
            del self.by_module[entry.module]
            self._ambiguous.add(entry.module)
        elif entry.module not in self._ambiguous:
            self.by_module[entry.module] = entry

    def _module(self, module: str) -> ProjectFile | None:
        """The indexed file imported as ``module``; one that never names Triton is indexed
        now (a package's ``__init__`` that re-exports a launching function)."""
        self.looked_up.add(module)
        if module not in self.by_module and module not in self._ambiguous:
            display = self.dormant.named(module)
            if display is not None:
                self._wake(display)
        return self.by_module.get(module)

    def _function_key(self, entry: ProjectFile, dotted: str, caller: str) -> FunctionKey | None:
        """The project function a call's dotted name names (``self.helper`` inside a method of
        the same class included)."""
        if dotted.startswith("self.") and "." in caller:
            return entry.display, f"{caller.rsplit('.', 1)[0]}.{dotted[5:]}"
        target = self.locate_in(entry, dotted)
        return (target[0].display, target[1]) if target is not None else None

    def resolve(self, entry: ProjectFile, dotted: str) -> str | None:
        """The fully qualified name a dotted name in ``entry`` refers to, through its imports
        and its own top-level definitions; None for anything else (a local, an attribute)."""
        first, _, rest = dotted.partition(".")
        if first in entry.imports:
            base = entry.imports[first]
        elif entry.defines(first):
            base = f"{entry.module}.{first}" if entry.module else first
        else:
            return None
        return f"{base}.{rest}" if rest else base

    def locate_in(self, entry: ProjectFile, dotted: str) -> tuple[ProjectFile, str] | None:
        """The file and name a dotted name written in ``entry`` refers to: ``entry`` itself for
        its own top-level definitions (also when another file shares its module name)."""
        first = dotted.split(".")[0]
        if entry.defines(first) and first not in entry.imports:
            return entry, dotted
        return self.locate(self.resolve(entry, dotted))

    def locate(self, qualified: str | None, depth: int = 0) -> tuple[ProjectFile, str] | None:
        """The file and the name in it that a qualified name refers to, following re-exports
        (``from .kernels import kern`` in a package's ``__init__``) a few steps."""
        if qualified is None or depth > 4:
            return None
        parts = qualified.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            entry = self._module(".".join(parts[:cut]))
            if entry is None:
                continue
            name = ".".join(parts[cut:])
            entry.parse()
            if entry.defines(name.split(".")[0]):
                return entry, name
            return self.locate(self.resolve(entry, name), depth + 1)
        return None
