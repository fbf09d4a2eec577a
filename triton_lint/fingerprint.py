"""Fingerprints that identify a finding across unrelated edits (SARIF, baselines).

A fingerprint never contains a line number: it hashes the kernel name, the rule code and the
whitespace-normalised source the finding points at, and appends an occurrence index that tells
apart identical code flagged twice in the same kernel. Inserting or deleting unrelated lines
above a finding leaves its fingerprint unchanged; editing the flagged code changes it.
"""

from __future__ import annotations

import hashlib
import re

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


def fingerprint(finding: Finding, source_text: str | None) -> str:
    """``HASH:N``: HASH of kernel + rule + normalised flagged code, N its occurrence index.

    N counts how often the same normalised code occurs earlier in the file, so two identical
    statements flagged in one kernel get ``:0`` and ``:1``. Without the source (an unreadable
    file) the message stands in for the code.
    """
    if not source_text:
        return f"{_digest(finding, normalise(finding.message))}:0"
    lines = split_lines(source_text)
    code, start = flagged_code(finding.span, lines)
    line = min(finding.span.line, len(lines) + 1) - 1
    prefix = "".join(lines[:line]) + (lines[line][:start] if line < len(lines) else "")
    before = normalise(prefix)
    occurrence = before.count(code) if code else 0
    return f"{_digest(finding, code)}:{occurrence}"
