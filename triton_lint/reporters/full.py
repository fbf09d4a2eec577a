"""The full text format: each finding's line, then its source with the span underlined, the
related locations that carry the evidence, a dynamic finding's witness, and the fix.

Every finding starts with the concise format's ``path:line:col: CODE message`` line, so what
matches that line (``grep``, CI problem matchers) works on either format. Source comes from the
text the run linted; a file is read from disk only when a finding points into a file the run
did not keep (a dynamic finding's wrapper), and only once. A location whose line is gone (the
file changed since the finding was made) prints without a snippet.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from triton_lint.finding import Applicability, Finding, RelatedLocation, Severity
from triton_lint.fingerprint import split_lines
from triton_lint.reporters.common import how_to_fix, source_texts
from triton_lint.reporters.fix_diff import fix_diff
from triton_lint.reporters.snippet import Mark, SnippetWriter
from triton_lint.reporters.terminal import Palette
from triton_lint.reporters.text import render_text, summary_lines
from triton_lint.reporters.witness import witness_lines
from triton_lint.run import RunResult
from triton_lint.source import decode

#: Lines shown around a finding's span (related locations show their own lines only).
CONTEXT = 2
#: The stress-case bracket a dynamic message ends with; the witness lines say it instead.
_COMBO = re.compile(r" \[[^\[\]]*; pattern [^;\[\]]+; [^;\[\]]+\]$")
_SENTENCE_END = re.compile(r"\.\s+(?=[A-Z])")


@dataclass(frozen=True)
class FullOptions:
    paint: Palette = field(default_factory=Palette)
    show_fixes: bool = False


class Sources:
    """The lines of each file a finding points into: the linted text, else read once."""

    def __init__(self, result: RunResult) -> None:
        self._texts = source_texts(result)
        self._lines: dict[str, list[str] | None] = {}

    def text(self, path: str) -> str | None:
        if path not in self._texts:
            self._texts[path] = _read(path)
        return self._texts[path]

    def lines(self, path: str) -> list[str] | None:
        if path not in self._lines:
            text = self.text(path)
            self._lines[path] = None if text is None else split_lines(text)
        return self._lines[path]


def _read(path: str) -> str | None:
    if path == "-":
        return None
    try:
        with open(path, "rb") as handle:
            return decode(handle.read())
    except (OSError, SyntaxError, UnicodeDecodeError, LookupError):
        return None


def first_sentence(text: str) -> str:
    """The first sentence of a documented fix, on one line."""
    flat = " ".join(text.split())
    for match in _SENTENCE_END.finditer(flat):
        prefix = flat[: match.start()]
        if prefix.count("(") <= prefix.count(")") and prefix.count("`") % 2 == 0:
            return prefix + "."
    return flat


def _help(finding: Finding) -> str | None:
    fix = finding.fix
    if fix is not None and fix.edits:
        how = "--fix" if fix.applicability is Applicability.SAFE else "--fix --unsafe-fixes"
        return f"{fix.message} ({fix.applicability.value} fix: `{how}`)"
    documented = how_to_fix(finding.code)
    return first_sentence(documented) if documented else None


def _header(finding: Finding, paint: Palette, message: str) -> str:
    marker = " [*]" if finding.fix is not None else ""
    role = finding.severity.value
    location = paint(f"{finding.path}:{finding.line}:{finding.column}:", "path")
    return f"{location} {paint(finding.code, role)}{marker} {message}"


def _primary_role(severity: Severity) -> str:
    return f"primary-{severity.value}"


def _related(related: RelatedLocation, sources: Sources, writer: SnippetWriter) -> list[str]:
    """A related location's own snippet (no context), or its label alone when stale."""
    paint = writer.paint
    place = f"{related.path}:{related.span.line}:{related.span.column}"
    out = [writer.bar(), f"{' ' * writer.gutter}{paint(':::', 'gutter')} {place}", writer.bar()]
    lines = sources.lines(related.path)
    mark = Mark(related.span, related.message, False, "secondary")
    shown = writer.render(lines, mark, 0) if lines is not None else None
    return out + (shown or [writer.bar(f" {paint(related.message, 'secondary')}")])


def render_finding(finding: Finding, sources: Sources, options: FullOptions) -> list[str]:
    """One finding's block: its line, snippet, related locations, witness, help and fix."""
    paint = options.paint
    witness = finding.properties.get("witness")
    message = _COMBO.sub("", finding.message) if isinstance(witness, dict) else finding.message
    out = [_header(finding, paint, message)]
    numbers = [finding.span.end_line + CONTEXT] + [r.span.end_line for r in finding.related]
    writer = SnippetWriter(len(str(max(numbers))), paint)
    lines = sources.lines(finding.path)
    primary = Mark(
        finding.span, f"{finding.code} {finding.name}", True, _primary_role(finding.severity)
    )
    snippet = writer.render(lines, primary, CONTEXT) if lines is not None else None
    if snippet is not None:
        out += [writer.bar(), *snippet]
    for related in finding.related:
        out += _related(related, sources, writer)
    if isinstance(witness, dict):
        out += [writer.bar(), *witness_lines(witness, writer.gutter, paint)]
    help_text = _help(finding)
    if help_text:
        if not isinstance(witness, dict):
            out.append(writer.bar())
        out.append(f"{' ' * writer.gutter} {paint('= help:', 'help')} {help_text}")
    if options.show_fixes and finding.fix is not None and finding.fix.edits:
        text = sources.text(finding.path)
        if text is not None:
            out += fix_diff(text, finding, writer)
    return out


def render_full(result: RunResult, statistics: bool, options: FullOptions) -> str:
    """The report: every finding's block, a blank line between them, then the summary."""
    if statistics:
        return render_text(result, statistics)
    sources = Sources(result)
    lines: list[str] = []
    for finding in result.findings:
        lines += render_finding(finding, sources, options)
        lines.append("")
    lines.extend(summary_lines(result))
    return "\n".join(lines) + "\n"
