"""GitHub Actions workflow commands: one ``::error``/``::warning``/``::notice`` per finding.

GitHub turns them into annotations on the pull request's diff; paths are repo-relative (the
workflow runs in the repository root).
"""

from __future__ import annotations

from triton_lint.finding import Severity
from triton_lint.reporters.common import display_path
from triton_lint.reporters.statistics import count_by_code
from triton_lint.run import RunResult

_COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(result: RunResult, statistics: bool) -> str:
    lines: list[str] = []
    for path, reason in result.unreadable:
        lines.append(f"::error file={escape_property(display_path(path))}::{escape_data(reason)}")
    if statistics:
        for code, name, count in count_by_code(result.findings):
            lines.append(f"::notice title=triton-lint::{escape_data(f'{count} {code} {name}')}")
        return "\n".join(lines) + ("\n" if lines else "")
    for f in result.findings:
        props = [
            f"file={escape_property(display_path(f.path))}",
            f"line={f.span.line}",
            f"endLine={f.span.end_line}",
        ]
        if f.span.line == f.span.end_line:  # GitHub ignores columns on multi-line annotations
            props += [f"col={f.span.column}", f"endColumn={f.span.end_column}"]
        props.append(f"title={escape_property(f'{f.code} {f.name}')}")
        lines.append(f"::{_COMMAND[f.severity]} {','.join(props)}::{escape_data(f.message)}")
    return "\n".join(lines) + ("\n" if lines else "")
