"""Findings as LSP diagnostics, and the rule pages a hover shows."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from lsprotocol import types

from triton_lint.docs import render_rule
from triton_lint.finding import Finding, RelatedLocation, Severity
from triton_lint.lsp.positions import LineIndex
from triton_lint.reporters.common import RULES_URL
from triton_lint.rules import rules_by_code

SOURCE = "triton-lint"

_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}


def to_diagnostic(finding: Finding, index: LineIndex, uri: str) -> types.Diagnostic:
    """The diagnostic of one finding: same code, severity, range and message as the CLI."""
    related = [
        types.DiagnosticRelatedInformation(
            location=_location(location, finding.path, index, uri), message=location.message
        )
        for location in finding.related
    ]
    return types.Diagnostic(
        range=index.range(finding.span),
        message=finding.message,
        severity=_SEVERITY[finding.severity],
        code=finding.code,
        code_description=types.CodeDescription(href=RULES_URL.format(code=finding.code)),
        source=SOURCE,
        related_information=related or None,
    )


def _location(location: RelatedLocation, path: str, index: LineIndex, uri: str) -> types.Location:
    """A related location; in another file, columns are taken as code points (its text is not
    at hand, and static findings point into their own file)."""
    if location.path == path:
        return types.Location(uri=uri, range=index.range(location.span))
    span = location.span
    return types.Location(
        uri=Path(location.path).resolve().as_uri(),
        range=types.Range(
            start=types.Position(line=span.line - 1, character=span.column - 1),
            end=types.Position(line=span.end_line - 1, character=span.end_column - 1),
        ),
    )


@cache
def rule_page(code: str) -> str | None:
    """The rule's documentation page (what, why, example, fix) with a link to it."""
    rule = rules_by_code().get(code)
    if rule is None:
        return None
    return f"{render_rule(rule).rstrip()}\n\n[rules/{code}.md]({RULES_URL.format(code=code)})\n"
