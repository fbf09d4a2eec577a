"""The version of an installed distribution, as ``importlib.metadata.version`` gives it, read
without importing ``importlib.metadata`` (with the ``email`` package it parses metadata with,
a fifth of the start-up of a warm run) where the answer is plain: the first directory of
``sys.path`` that holds a distribution of that name holds one ``.dist-info`` directory of it,
whose ``METADATA`` names a ``Version``. Anything else (an ``.egg-info``, a zip file or an egg
on the path, a second match, another finder that lists distributions) goes to
``importlib.metadata`` itself.
"""

from __future__ import annotations

import os
import re
import sys
from importlib.machinery import PathFinder

_SEPARATORS = re.compile(r"[-_.]+")
_KINDS = (".dist-info", ".egg-info", ".egg")


def distribution_version(name: str) -> str | None:
    """The version of the distribution ``name`` on ``sys.path``; None if none is installed."""
    plain = _plain_version(name)
    if plain is not None:
        return plain[0]
    import importlib.metadata

    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _normalized(name: str) -> str:
    return _SEPARATORS.sub("-", name).lower().replace("-", "_")


def _plain_version(name: str) -> tuple[str | None] | None:
    """``(version,)`` or ``(None,)`` (not installed) where the search is plain; else None."""
    if any(
        finder is not PathFinder and hasattr(finder, "find_distributions")
        for finder in sys.meta_path
    ):
        return None
    wanted = _normalized(name)
    for entry in sys.path:
        if entry.lower().endswith(".egg") or (entry and os.path.isfile(entry)):
            return None  # an egg or a zip file: importlib.metadata reads inside it
        try:
            children = os.listdir(entry or ".")
        except OSError:
            continue
        found = [
            child
            for child in children
            if child.lower().endswith(_KINDS)
            and _normalized(child.lower().rpartition(".")[0].partition("-")[0]) == wanted
        ]
        if not found:
            continue
        if len(found) > 1 or not found[0].lower().endswith(".dist-info"):
            return None
        version = _metadata_version(os.path.join(entry or ".", found[0], "METADATA"))
        return (version,) if version is not None else None
    return (None,)


def _metadata_version(path: str) -> str | None:
    """The ``Version`` header of a ``METADATA`` file, as the ``email`` parser reads it."""
    try:
        with open(path, encoding="utf-8") as stream:
            for line in stream:
                if not line.strip():
                    return None  # the end of the headers
                if line[:8].lower() == "version:":
                    return line[8:].lstrip(" \t").rstrip("\r\n")
    except (OSError, UnicodeError):
        return None
    return None
