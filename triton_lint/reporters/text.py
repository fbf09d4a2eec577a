"""``path:line:col: CODE message`` lines and a summary, as flake8 and ruff print them."""

from __future__ import annotations

from triton_lint.reporters.statistics import count_by_code
from triton_lint.run import RunResult


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def render_text(result: RunResult, statistics: bool) -> str:
    lines: list[str] = []
    if statistics:
        for code, name, count in count_by_code(result.findings):
            lines.append(f"{count:>5}  {code}  {name}")
    else:
        for finding in result.findings:
            lines.append(
                f"{finding.path}:{finding.line}:{finding.column}: {finding.code} {finding.message}"
            )
    lines.append(
        f"Found {_plural(len(result.findings), 'finding')} in "
        f"{_plural(result.files_checked, 'file')}."
    )
    return "\n".join(lines) + "\n"
