"""``path:line:col: CODE message`` lines and a summary, as flake8 and ruff print them."""

from __future__ import annotations

from collections import Counter

from triton_lint.finding import Applicability
from triton_lint.reporters.statistics import count_by_code
from triton_lint.run import RunResult


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def summary_lines(result: RunResult) -> list[str]:
    """The closing lines: totals, counts per code, fixes, baseline."""
    lines = [
        f"Found {_plural(len(result.findings), 'finding')} in "
        f"{_plural(result.files_checked, 'file')}."
    ]
    counts = count_by_code(result.findings)
    if counts:
        lines.append("By code: " + ", ".join(f"{code} {count}" for code, _, count in counts) + ".")
    fixed = Counter(code for outcome in result.fixed for code in outcome.applied_codes)
    if fixed:
        by_code = ", ".join(f"{code} {count}" for code, count in sorted(fixed.items()))
        lines.append(
            f"Fixed {_plural(sum(fixed.values()), 'finding')} in "
            f"{_plural(len(result.fixed), 'file')} ({by_code})."
        )
    safe = sum(1 for f in result.findings if f.fix and f.fix.applicability is Applicability.SAFE)
    unsafe = sum(
        1 for f in result.findings if f.fix and f.fix.applicability is Applicability.UNSAFE
    )
    if safe or unsafe:
        text = f"[*] {safe} fixable with `--fix`"
        if unsafe:
            text += f" ({unsafe} more with `--fix --unsafe-fixes`)"
        lines.append(text + ".")
    if result.baselined or result.resolved_baseline:
        lines.append(
            f"Baseline: {_plural(result.baselined, 'finding')} hidden, "
            f"{result.resolved_baseline} resolved since the baseline was written."
        )
    return lines


def render_text(result: RunResult, statistics: bool) -> str:
    lines: list[str] = []
    if statistics:
        for code, name, count in count_by_code(result.findings):
            lines.append(f"{count:>5}  {code}  {name}")
    else:
        for finding in result.findings:
            marker = " [*]" if finding.fix is not None else ""
            lines.append(
                f"{finding.path}:{finding.line}:{finding.column}: {finding.code}{marker} "
                f"{finding.message}"
            )
    lines.extend(summary_lines(result))
    return "\n".join(lines) + "\n"
