"""Where a file sits in the project's import namespace: the index resolves `import pkg.ops`
and relative imports by these names, so a `src/` layout and nested packages need no
configuration."""

from __future__ import annotations

import os


class ModuleNames:
    """The dotted module each file is imported as: the directories above it that are packages
    (hold an ``__init__.py``), so ``src/pkg/ops.py`` is ``pkg.ops``; and whether it is a
    package's ``__init__``. Which directories are packages is asked once per directory (a
    stat each) for the files of one run, not once per file; paths are handled as strings (a
    run names thousands of files)."""

    def __init__(self) -> None:
        self._packages: dict[str, tuple[str, ...]] = {}
        self._modules: dict[str, tuple[str, bool]] = {}

    def __call__(self, path: os.PathLike[str] | str) -> tuple[str, bool]:
        path = os.fspath(path)
        if path not in self._modules:
            directory, name = os.path.split(path)
            package = self.package(directory)
            if name == "__init__.py":
                self._modules[path] = ".".join(package), True
            else:
                self._modules[path] = ".".join([*package, os.path.splitext(name)[0]]), False
        return self._modules[path]

    def package(self, directory: os.PathLike[str] | str) -> tuple[str, ...]:
        """The dotted parts of ``directory`` as a package (none when it is not one)."""
        directory = os.fspath(directory)
        if directory not in self._packages:
            parent, name = os.path.split(directory)
            if parent != directory and os.path.isfile(os.path.join(directory, "__init__.py")):
                self._packages[directory] = (*self.package(parent), name)
            else:
                self._packages[directory] = ()
        return self._packages[directory]
