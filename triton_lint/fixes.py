"""Apply the fixes findings carry: select, apply, re-lint until stable, write safely.

- `--fix` applies fixes whose applicability is ``safe``; `--unsafe-fixes` adds ``unsafe`` ones.
- Edits are applied to the text the findings were computed from. Fixes whose edits overlap an
  already accepted fix wait for the next round: the file is re-linted and fixed again until no
  fix applies (at most `MAX_ITERATIONS` rounds, as ruff does).
- A round that would produce code Python cannot parse is rolled back.
- Writing keeps the file's encoding (PEP 263 cookie, UTF-8 BOM) and line endings (inserted
  text uses the file's newline), goes through a temporary file and a rename, and refuses to
  touch a file whose bytes changed since it was read.
"""

from __future__ import annotations

import ast
import difflib
import io
import os
import shutil
import tempfile
import tokenize
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from triton_lint.finding import Applicability, Edit, Finding, Fix, Span
from triton_lint.fingerprint import split_lines

MAX_ITERATIONS = 100


class FixError(Exception):
    """A fixed file could not be written (it changed, or the text cannot be encoded)."""


@dataclass
class FixOutcome:
    """What fixing one file did: the text before and after, and how many fixes applied."""

    path: str
    original: str
    fixed: str
    applied: int = 0
    applied_codes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.fixed != self.original


def is_applicable(fix: Fix | None, unsafe: bool) -> bool:
    if fix is None or not fix.edits:
        return False
    return fix.applicability is Applicability.SAFE or unsafe


def fixable(findings: Iterable[Finding], unsafe: bool) -> list[Finding]:
    """Findings whose fix the chosen mode applies."""
    return [f for f in findings if is_applicable(f.fix, unsafe)]


def newline_of(text: str) -> str:
    """The file's newline: that of its first line (``\\n`` when it has none)."""
    for line in split_lines(text):
        if line.endswith("\r\n"):
            return "\r\n"
        if line.endswith("\r"):
            return "\r"
        if line.endswith("\n"):
            return "\n"
    return "\n"


def in_newlines(content: str, newline: str) -> str:
    """An edit's text with the file's newline (rules write ``\\n``)."""
    if newline == "\n":
        return content
    return content.replace("\r\n", "\n").replace("\n", newline)


class _Offsets:
    """Maps 1-based (line, column) positions of a text to string offsets."""

    def __init__(self, text: str) -> None:
        self.size = len(text)
        self.starts: list[int] = []
        self.lengths: list[int] = []  # without the line ending
        offset = 0
        for line in split_lines(text):
            self.starts.append(offset)
            self.lengths.append(len(line.rstrip("\r\n")))
            offset += len(line)

    def offset(self, line: int, column: int) -> int:
        if line < 1:
            return 0
        if line > len(self.starts):
            return self.size
        return self.starts[line - 1] + min(max(column - 1, 0), self.lengths[line - 1])

    def range(self, span: Span) -> tuple[int, int]:
        start = self.offset(span.line, span.column)
        return start, max(self.offset(span.end_line, span.end_column), start)


def _overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    if a[0] == a[1] == b[0] == b[1]:  # two insertions at the same point
        return True
    return a[0] < b[1] and b[0] < a[1]


def _fix_position(finding: Finding) -> tuple[int, int, str]:
    assert finding.fix is not None
    first = min((e.span.line, e.span.column) for e in finding.fix.edits)
    return (*first, finding.code)


def apply_fixes(text: str, findings: Iterable[Finding], unsafe: bool) -> tuple[str, list[Finding]]:
    """Apply every applicable, non-overlapping fix once; return the text and the fixed findings.

    Fixes are taken in source order; one that overlaps an accepted fix is skipped (the caller
    re-lints and tries again). Identical fixes (two findings, one edit) are applied once.
    """
    offsets = _Offsets(text)
    newline = newline_of(text)
    accepted: list[tuple[int, int, str]] = []
    applied: list[Finding] = []
    seen: set[tuple[Edit, ...]] = set()
    candidates = sorted(fixable(findings, unsafe), key=_fix_position)
    for finding in candidates:
        fix = finding.fix
        assert fix is not None
        if fix.edits in seen:
            applied.append(finding)
            continue
        ranges = [offsets.range(edit.span) for edit in fix.edits]
        if any(_overlaps(r, (s, e)) for r in ranges for s, e, _ in accepted):
            continue
        if any(_overlaps(a, b) for i, a in enumerate(ranges) for b in ranges[i + 1 :]):
            continue  # a malformed fix
        seen.add(fix.edits)
        applied.append(finding)
        for (start, end), edit in zip(ranges, fix.edits, strict=True):
            accepted.append((start, end, in_newlines(edit.content, newline)))
    pieces: list[str] = []
    position = 0
    for start, end, content in sorted(accepted, key=lambda item: (item[0], item[1])):
        pieces.append(text[position:start])
        pieces.append(content)
        position = end
    pieces.append(text[position:])
    return "".join(pieces), applied


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True


def fix_text(
    path: str,
    text: str,
    findings: list[Finding],
    relint: Callable[[str], list[Finding]],
    unsafe: bool = False,
) -> tuple[FixOutcome, list[Finding]]:
    """Fix ``text`` until no applicable fix is left; return the outcome and final findings.

    ``findings`` are those of ``text``; ``relint`` lints a candidate text with the same rules.
    """
    outcome = FixOutcome(path, text, text)
    current_findings = findings
    for _ in range(MAX_ITERATIONS):
        if not fixable(current_findings, unsafe):
            break
        candidate, applied = apply_fixes(outcome.fixed, current_findings, unsafe)
        if not applied or candidate == outcome.fixed:
            break
        if _parses(outcome.fixed) and not _parses(candidate):
            codes = ", ".join(sorted({f.code for f in applied}))
            outcome.warnings.append(
                f"{path}: fixes for {codes} would make the file unparsable; not applied "
                "(please report this)"
            )
            break
        outcome.fixed = candidate
        outcome.applied += len(applied)
        outcome.applied_codes.extend(f.code for f in applied)
        current_findings = relint(candidate)
    else:
        outcome.warnings.append(f"{path}: fixes did not converge after {MAX_ITERATIONS} rounds")
    return outcome, current_findings


def encoding_of(data: bytes) -> str:
    """The encoding Python reads ``data`` with (``utf-8-sig`` keeps a BOM on write)."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return encoding


def write_fixed(path: Path, original: bytes, text: str) -> None:
    """Write ``text`` to ``path`` in the original encoding, atomically.

    Raises `FixError` when the file's bytes are no longer ``original`` (it changed since it was
    read) or the text cannot be encoded in the file's encoding.
    """
    encoding = encoding_of(original)
    try:
        data = text.encode(encoding)
    except UnicodeEncodeError as error:
        raise FixError(
            f"{path}: the fixed text cannot be encoded as {encoding}: {error}"
        ) from error
    try:
        current = path.read_bytes()
    except OSError as error:
        raise FixError(f"{path}: cannot re-read before writing: {error}") from error
    if current != original:
        raise FixError(f"{path}: changed since it was read; not fixed")
    directory = path.resolve().parent
    handle, temp = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        shutil.copymode(path, temp)
        if path.read_bytes() != original:  # last look before the rename
            raise FixError(f"{path}: changed since it was read; not fixed")
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def unified_diff(path: str, before: str, after: str) -> str:
    """A unified diff (``--- a/PATH`` / ``+++ b/PATH``) of one file's fix."""
    lines = difflib.unified_diff(
        split_lines(before),
        split_lines(after),
        fromfile=f"a/{path}",
        tofile=f"b/{path}",
    )
    out: list[str] = []
    for line in lines:
        out.append(
            line if line.endswith(("\n", "\r")) else line + "\n\\ No newline at end of file\n"
        )
    return "".join(out)
