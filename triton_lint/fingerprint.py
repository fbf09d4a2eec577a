"""Fingerprints that identify a finding across unrelated edits (SARIF, baselines).

A fingerprint never contains a line number: it hashes the kernel name, the rule code and the
whitespace-normalised source the finding points at, and appends an occurrence index that tells
apart identical code flagged twice in the same kernel. Inserting or deleting unrelated lines
above a finding leaves its fingerprint unchanged; editing the flagged code changes it.
"""

from __future__ import annotations

import bisect
import hashlib
import re
from functools import lru_cache

from triton_lint.finding import Finding, Span

#: Bump when the recipe changes; baselines written by another version are then all "new".
VERSION = "v1"

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
_SPACE = re.compile(r"\s+")


def split_lines(text: str) -> list[str]:
    """Lines of ``text`` with their endings, split only on ``\\r\\n``, ``\\r`` and ``\\n``.

    This is how Python's tokenizer (and so libcst's positions) counts lines; `str.splitlines`
    also splits on form feeds and Unicode separators and would disagree.
    """
    return _LINE.findall(text)


def normalise(code: str) -> str:
    """Collapse every run of whitespace (line breaks included) to nothing."""
    return _SPACE.sub("", code)


def flagged_code(span: Span, lines: list[str]) -> tuple[str, int]:
    """The normalised source inside ``span`` and the 0-based column it starts at.

    A span too short to identify anything (a syntax error's one character) stands for its
    whole line.
    """
    if not lines or span.line < 1 or span.line > len(lines):
        return "", 0
    first = span.line - 1
    last = min(max(span.end_line, span.line), len(lines)) - 1
    start = max(span.column - 1, 0)
    if first == last:
        text = lines[first][start : max(span.end_column - 1, start)]
    else:
        parts = [lines[first][start:]]
        parts.extend(lines[first + 1 : last])
        parts.append(lines[last][: max(span.end_column - 1, 0)])
        text = "".join(parts)
    if len(normalise(text)) < 3:
        return normalise(lines[first]), 0
    return normalise(text), start


def _digest(finding: Finding, code: str) -> str:
    key = "\0".join((VERSION, finding.kernel or "", finding.code, code))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:20]


@lru_cache(maxsize=32)
def _source(text: str) -> tuple[list[str], list[int], str]:
    """Lines, the normalised length before each line, and the whole normalised text."""
    lines = split_lines(text)
    before: list[int] = []
    total = 0
    for line in lines:
        before.append(total)
        total += len(normalise(line))
    return lines, before, normalise(text)


@lru_cache(maxsize=4096)
def _ends(text: str, code: str) -> list[int]:
    """End positions (in the normalised text) of the non-overlapping occurrences of ``code``."""
    _, _, whole = _source(text)
    ends: list[int] = []
    position = whole.find(code)
    while position >= 0:
        ends.append(position + len(code))
        position = whole.find(code, position + len(code))
    return ends


def fingerprint(finding: Finding, source_text: str | None) -> str:
    """``HASH:N``: HASH of kernel + rule + normalised flagged code, N its occurrence index.

    N counts how often the same normalised code occurs earlier in the file, so two identical
    statements flagged in one kernel get ``:0`` and ``:1``. Without the source (an unreadable
    file) the message stands in for the code.
    """
    if not source_text:
        return f"{_digest(finding, normalise(finding.message))}:0"
    lines, before, _ = _source(source_text)
    code, start = flagged_code(finding.span, lines)
    if not code:
        return f"{_digest(finding, code)}:0"
    line = min(finding.span.line, len(lines) + 1) - 1
    if line < len(lines):
        prefix = before[line] + len(normalise(lines[line][:start]))
    else:
        prefix = len(_source(source_text)[2])
    occurrence = bisect.bisect_right(_ends(source_text, code), prefix)
    return f"{_digest(finding, code)}:{occurrence}"
