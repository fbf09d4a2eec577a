"""The results cache: a file whose bytes, path and settings were linted before is not again.

An entry is keyed on the file's content, its reported path, the rules that apply to it and
the Triton version checked against, under a directory named for the linter's own code (its
version and a stamp of its source files), so an upgrade or a local edit of a rule never
reuses old answers. Files with findings are cached too; a file on which a rule crashed is not.

Entries are small JSON files written atomically (a temporary file renamed over the entry), so
runs sharing the directory never read half an entry; an unreadable entry is a miss. Entries
unused for `ENTRY_DAYS` and directories of other linter versions untouched for `STALE_DAYS` are
removed, at most once a day; an entry read is marked in use (its modification time) at most
once a day.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from triton_lint import __version__

DEFAULT_DIR = ".triton_lint_cache"
ENTRY_DAYS = 30
STALE_DAYS = 7
_DAY = 86400.0
_PRUNED = ".last-pruned"
_INDEX = "project-index"  # JSON, named apart from the entries
_OUTLINES = "project-outlines"
_VIEWS = "project-views"


def tool_stamp() -> str:
    """The linter's version, Python's, and the size and mtime of every source file of the
    package: a rule edited in a checkout changes the stamp as a release would."""
    digest = hashlib.blake2b(digest_size=8)
    digest.update(f"{__version__}|{sys.version_info[:2]}".encode())
    package = Path(__file__).parent
    for path in sorted(_package_files(package)):
        stat = path.stat()
        digest.update(f"{path.relative_to(package)}|{stat.st_size}|{stat.st_mtime_ns}".encode())
    return f"{__version__}-{digest.hexdigest()}"


def _package_files(directory: Path) -> Iterable[Path]:
    for entry in os.scandir(directory):
        if entry.is_dir() and entry.name != "__pycache__":
            yield from _package_files(Path(entry.path))
        elif entry.name.endswith((".py", ".json")):
            yield Path(entry.path)


def entry_key(path: str, codes: Iterable[str], target: str, data: bytes, project: str = "") -> str:
    """The key of one file's results: what it holds, where, which rules, which Triton, and
    the digest of the other files of the project its findings read (`ProjectContext.digest`):
    editing a caller in another file re-lints the kernel's file."""
    digest = hashlib.blake2b(digest_size=20)
    digest.update(f"{path}\0{','.join(sorted(codes))}\0{target}\0{project}\0".encode())
    digest.update(data)
    return digest.hexdigest()


class LintCache:
    """One cache directory, for the linter version running now."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.entries = directory / tool_stamp()
        self._entries = str(self.entries)  # joined as strings for each entry read

    def get(self, key: str) -> dict[str, Any] | None:
        path = os.path.join(self._entries, key[:2], f"{key[2:]}.json")  # thousands per warm run
        try:
            with open(path, "rb") as stream:
                data = json.loads(stream.read())
                touched = os.fstat(stream.fileno()).st_mtime
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict):
            return None
        if time.time() - touched > _DAY:  # still in use: not pruned (a warm run over
            with contextlib.suppress(OSError):  # thousands of files writes no metadata)
                os.utime(path)
        return data

    def put(self, key: str, value: dict[str, Any]) -> None:
        """Write an entry atomically; a cache that cannot be written is no error."""
        self.put_file(self._path(key), value)

    def put_file(self, path: Path, value: dict[str, Any]) -> None:
        """Write ``value`` as JSON to ``path`` atomically (a temporary file renamed over it)."""
        try:
            self._prepare(path.parent)
            handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        except OSError:
            return
        try:
            # `json.dumps` encodes in C; `json.dump` to a stream runs the pure-Python encoder
            text = json.dumps(value, separators=(",", ":"))
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                stream.write(text)
            os.replace(temporary, path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temporary)  # a full disk: leave no half-written file behind

    def load_index(self, name: str = _INDEX) -> dict[str, Any]:
        """What the project index read of each file in the last run (`project.store.Store`):
        by stat signature (``name`` `_OUTLINES`: by content digest, read when first needed)."""
        try:
            data = json.loads((self.entries / name).read_bytes())
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def load_outlines(self) -> dict[str, Any]:
        return self.load_index(_OUTLINES)

    def load_views(self) -> dict[str, Any]:
        return self.load_index(_VIEWS)

    def save_index(
        self,
        entries: dict[str, Any],
        outlines: dict[str, Any] | None,
        views: dict[str, Any] | None = None,
    ) -> None:
        """Keep the project index's reads for the next run (atomically, like an entry); the
        outlines only when this run loaded them, the views when this run built the index."""
        self.put_file(self.entries / _INDEX, entries)
        if outlines is not None:
            self.put_file(self.entries / _OUTLINES, outlines)
        if views is not None:
            self.put_file(self.entries / _VIEWS, views)

    def _path(self, key: str) -> Path:
        return self.entries / key[:2] / f"{key[2:]}.json"

    def _prepare(self, directory: Path) -> None:
        if directory.is_dir():
            return
        if not self.directory.is_dir():
            self.directory.mkdir(parents=True, exist_ok=True)
            # Like ruff's and pytest's caches: never committed, skipped by backup tools.
            (self.directory / ".gitignore").write_text("# created by triton-lint\n*\n")
            (self.directory / "CACHEDIR.TAG").write_text(
                "Signature: 8a477f597d28d172789f06886806bc55\n"
                "# This is a cache directory created by triton-lint.\n"
            )
        directory.mkdir(parents=True, exist_ok=True)

    def prune(self, now: float | None = None) -> None:
        """Drop old entries and other versions' directories, at most once a day."""
        now = time.time() if now is None else now
        marker = self.directory / _PRUNED
        try:
            if now - marker.stat().st_mtime < _DAY:
                return
        except FileNotFoundError:
            pass
        except OSError:
            return
        try:
            children = list(os.scandir(self.directory))
        except OSError:
            return
        for child in children:
            if not child.is_dir(follow_symlinks=False):
                continue
            if child.path == str(self.entries):
                _prune_entries(Path(child.path), now - ENTRY_DAYS * _DAY)
            elif _age(child, now) > STALE_DAYS * _DAY:
                shutil.rmtree(child.path, ignore_errors=True)
        with contextlib.suppress(OSError):
            marker.touch()
            os.utime(marker, (now, now))


def _age(entry: os.DirEntry[str], now: float) -> float:
    try:
        return now - entry.stat(follow_symlinks=False).st_mtime
    except OSError:
        return 0.0


def _prune_entries(directory: Path, cutoff: float) -> None:
    for shard in os.scandir(directory):
        if not shard.is_dir(follow_symlinks=False):
            continue
        for entry in os.scandir(shard.path):
            try:
                if entry.stat(follow_symlinks=False).st_mtime < cutoff:
                    os.unlink(entry.path)
            except OSError:
                continue
