"""Where a file sits in the project's import namespace: the index resolves `import pkg.ops`
and relative imports by these names, so a `src/` layout and nested packages need no
configuration."""

from __future__ import annotations

from pathlib import Path


class ModuleNames:
    """The dotted module each file is imported as: the directories above it that are packages
    (hold an ``__init__.py``), so ``src/pkg/ops.py`` is ``pkg.ops``; and whether it is a
    package's ``__init__``. Which directories are packages is asked once per directory (a
    stat each) for the files of one index, not once per file."""

    def __init__(self) -> None:
        self._packages: dict[Path, tuple[str, ...]] = {}

    def __call__(self, path: Path) -> tuple[str, bool]:
        own = [] if path.name == "__init__.py" else [path.stem]
        return ".".join([*self.package(path.parent), *own]), path.name == "__init__.py"

    def package(self, directory: Path) -> tuple[str, ...]:
        """The dotted parts of ``directory`` as a package (none when it is not one)."""
        if directory not in self._packages:
            if (directory / "__init__.py").is_file() and directory.parent != directory:
                self._packages[directory] = (*self.package(directory.parent), directory.name)
            else:
                self._packages[directory] = ()
        return self._packages[directory]
