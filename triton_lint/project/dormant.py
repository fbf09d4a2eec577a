"""The files of a project that never name Triton, kept aside until their imports show that they
launch or call what the project index follows: an API module that imports a kernel module
(``from fla.ops.x.kernels import fn``) or a launching function through a package's
``__init__``, a layer that calls a launching function, a package ``__init__`` that re-exports
one.

A monorepo holds thousands of such files; outlining each (`triton_lint.project.outline`)
would cost more than linting the kernels. Their import statements are found instead by
regular expressions over the bytes that start with a literal (``import``, ``from``), which the
engine skips to, in two steps: the words written after ``import`` (a wanted module's last
component or a wanted name is always among them), once per file; then, for the few files
whose words hold one, the statements read exactly (relative ones against the file's
package).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from triton_lint.project.filefacts import FileFacts

#: The modules wanted -> the names wanted from each (kernels, launching functions).
Wanted = dict[str, set[str]]
#: A path -> (its dotted module, whether it is a package's ``__init__``): the index's
#: `ModuleNames`, which keeps the work (a stat per directory) once per directory.
ModuleOf = Callable[[Path], tuple[str, bool]]


class DormantFiles:
    """Files that never name Triton, by display path, until the index wakes them."""

    def __init__(self, module_of: ModuleOf) -> None:
        self.module_of = module_of
        self.files: dict[str, tuple[Path, bytes]] = {}
        self._by_tail: dict[str, list[str]] = {}
        self._facts: dict[str, FileFacts] = {}
        self._words: dict[str, set[str]] = {}
        self._statements: dict[str, list[tuple[str, str]]] = {}
        #: display -> the names looked for in its bytes (`project.views` asks them again)
        self.searched: dict[str, set[str]] = {}

    def add(self, display: str, path: Path, data: bytes, facts: FileFacts) -> None:
        self.files[display] = (path, data)
        self._facts[display] = facts
        tail = path.parent.name if path.name == "__init__.py" else path.stem
        self._by_tail.setdefault(tail, []).append(display)

    def importing(self, wanted: Wanted) -> list[str]:
        """The files whose imports name a wanted module (``import a.b``, ``from a import b``,
        ``from . import b``) or a wanted name from it (``from a.b import fn``) or from a
        package above it (a re-export: ``from a import fn`` for ``fn`` of ``a.b``)."""
        needles = {m.rsplit(".", 1)[-1] for m in wanted}
        needles |= {name for names in wanted.values() for name in names}
        by_name: dict[str, list[str]] = {}
        for module, names in wanted.items():
            for name in names:
                by_name.setdefault(name, []).append(module)
        found = []
        for display, (_, data) in self.files.items():
            if display not in self._words:
                self._words[display] = self._facts[display].words()
            if self._words[display] & needles:
                searched = self.searched.setdefault(display, set())

                def contains(name: str, data: bytes = data, searched: set[str] = searched) -> bool:
                    searched.add(name)
                    return name.encode() in data

                if any(
                    _wants(wanted, by_name, module, name, contains)
                    for module, name in self._imports(display)
                ):
                    found.append(display)
        return found

    def _imports(self, display: str) -> list[tuple[str, str]]:
        """(module, name) of each ``from module import name`` of the file, and (module, "")
        of each ``import module`` (read once)."""
        if display not in self._statements:
            self._statements[display] = [
                (self._relative(display, level, module) if level else module, name)
                for level, module, name in self._facts[display].statements()
            ]
        return self._statements[display]

    def _relative(self, display: str, level: int, rest: str) -> str:
        module, is_package = self.module_of_file(display)
        parts = module.split(".") if module else []
        package = parts if is_package else parts[:-1]
        anchor = package[: len(package) - level + 1] if level > 1 else package
        return ".".join([*anchor, rest] if rest else anchor)

    def module_of_file(self, display: str) -> tuple[str, bool]:
        return self.module_of(self.files[display][0])

    def named(self, module: str) -> str | None:
        """The dormant file imported as ``module`` (its last component: the file's stem, or
        its directory's name for a package's ``__init__``); None when there is none or two."""
        found = [
            display
            for display in self._by_tail.get(module.rsplit(".", 1)[-1], ())
            if display in self.files and self.module_of_file(display)[0] == module
        ]
        return found[0] if len(found) == 1 else None

    def take(self, display: str) -> tuple[Path, bytes, tuple[str, bool]]:
        """Remove ``display`` (the index reads it now): its path, bytes and module."""
        module = self.module_of_file(display)
        path, data = self.files.pop(display)
        return path, data, module


def _wants(
    wanted: Wanted,
    by_name: dict[str, list[str]],
    module: str,
    name: str,
    contains: Callable[[str], bool],
) -> bool:
    """``from module import name`` imports a wanted name of a wanted module, the module
    itself or everything in it (``*``) while the file writes one of its wanted names, or a
    wanted name re-exported by a package above its module. Other names of a wanted module
    (its classes, its constants) say nothing: a file that imports only those neither
    launches its kernels nor calls its launching functions."""
    whole = module if not name or name == "*" else f"{module}.{name}"
    if whole in wanted:
        return any(contains(wanted_name) for wanted_name in wanted[whole])
    return any(
        target == module or target.startswith(f"{module}.") for target in by_name.get(name, ())
    )
