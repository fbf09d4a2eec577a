"""Where a file sits in the project's import namespace: the index resolves `import pkg.ops`
and relative imports by these names, so a `src/` layout and nested packages need no
configuration."""

from __future__ import annotations

from pathlib import Path


def module_name(path: Path) -> tuple[str, bool]:
    """The dotted module ``path`` is imported as: the directories above it that are packages
    (hold an ``__init__.py``), so ``src/pkg/ops.py`` is ``pkg.ops``; and whether it is a
    package's ``__init__``."""
    parts = [] if path.name == "__init__.py" else [path.stem]
    directory = path.parent
    while (directory / "__init__.py").is_file() and directory.parent != directory:
        parts.append(directory.name)
        directory = directory.parent
    return ".".join(reversed(parts)), path.name == "__init__.py"
