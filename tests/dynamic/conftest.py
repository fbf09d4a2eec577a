"""Shared helpers for the dynamic-engine tests."""

from __future__ import annotations

import pathlib

FIXTURES = pathlib.Path(__file__).resolve().parents[2] / "fixtures" / "dynamic"


def line_of(path: pathlib.Path, text: str, after: str | None = None) -> int:
    """1-based line of the first line containing `text` (after the line containing `after`)."""
    lines = path.read_text().splitlines()
    start = 0
    if after is not None:
        start = next(i for i, line in enumerate(lines) if after in line) + 1
    for i in range(start, len(lines)):
        if text in lines[i]:
            return i + 1
    raise AssertionError(f"{text!r} not found in {path}")
