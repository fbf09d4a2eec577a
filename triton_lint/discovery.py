"""Which files to lint: recurse into directories, skip the usual non-source trees."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Callable, Iterator
from pathlib import Path

from triton_lint.config import Config

SKIPPED_DIRS = {
    ".git",
    ".hg",
    ".svn",
    ".bzr",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    ".eggs",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    "__pycache__",
    "__pypackages__",
    "_build",
    "build",
    "buck-out",
    "dist",
    "node_modules",
    "site-packages",
}


def is_excluded(path: Path, config: Config) -> bool:
    """Whether ``path`` matches an ``exclude`` glob (relative path or any path component)."""
    if not config.exclude:
        return False
    try:
        relative = path.resolve().relative_to(config.root).as_posix()
    except ValueError:
        relative = path.as_posix()
    for pattern in config.exclude:
        pattern = pattern.rstrip("/")
        if fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(relative, pattern + "/*"):
            return True
        if "/" not in pattern and any(fnmatch.fnmatch(part, pattern) for part in path.parts):
            return True
    return False


def _is_virtualenv(directory: Path) -> bool:
    return (directory / "pyvenv.cfg").is_file()


def iter_python_files(root: Path, config_for: Callable[[Path], Config]) -> Iterator[Path]:
    """``*.py`` files under ``root`` in sorted order, skipping excluded and tool directories."""
    for dirpath, dirnames, filenames in os.walk(root):
        directory = Path(dirpath)
        config = config_for(directory)
        kept = []
        for name in sorted(dirnames):
            child = directory / name
            if name in SKIPPED_DIRS or child.is_symlink() or _is_virtualenv(child):
                continue
            if is_excluded(child, config):
                continue
            kept.append(name)
        dirnames[:] = kept
        for name in sorted(filenames):
            if name.endswith(".py"):
                path = directory / name
                if not is_excluded(path, config):
                    yield path
