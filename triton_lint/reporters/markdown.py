"""A Markdown audit report for a pull-request comment or ``$GITHUB_STEP_SUMMARY``.

Sections: a summary table by category, findings grouped by kernel (with the source and how to
fix), recommendations (the distinct fixes, most impactful first) and, when a dynamic run
produced them, the stress matrix and a performance table. GitHub caps a step summary at 1 MiB:
the report stays under `MAX_BYTES` by dropping the least severe kernel sections and says so.
Inside GitHub Actions, file links point at the commit being checked.
"""

from __future__ import annotations

import os
import re
import textwrap
from collections import Counter
from dataclasses import dataclass, field
from urllib.parse import quote

from triton_lint.dynamic.dynamic_report import DynamicReport, StressCell
from triton_lint.finding import Applicability, Category, Finding, Severity
from triton_lint.fingerprint import split_lines
from triton_lint.reporters.common import (
    RULES_URL,
    SEVERITY_RANK,
    display_path,
    how_to_fix,
    relative_path,
    source_texts,
)
from triton_lint.reporters.compile_table import compile_section
from triton_lint.reporters.statistics import count_by_code
from triton_lint.run import RunResult

#: GitHub rejects step summaries over 1 MiB; keep a margin for what other steps append.
MAX_BYTES = 1_000_000
#: A kernel with more findings than this shows them inside a collapsed ``<details>``.
COLLAPSE_AFTER = 3
#: At most this many source lines are quoted per finding.
MAX_SOURCE_LINES = 8

_CATEGORY_TITLES = {
    Category.CORRECTNESS: "Correctness",
    Category.MEMORY_SAFETY: "Memory safety",
    Category.NUMERICS: "Numerics",
    Category.PERFORMANCE: "Performance",
    Category.BEST_PRACTICE: "Best practice",
}
_SEVERITY_ICON = {Severity.ERROR: "🔴", Severity.WARNING: "🟠", Severity.INFO: "🔵"}
_STATUS_ICON = {
    "pass": "✅",
    "fail": "❌",
    "error": "💥",
    "timeout": "⏱️",
    "skip": "⏭️",
}


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _severity_count(count: int, severity: Severity) -> str:
    if severity is Severity.INFO:
        return f"{count} info"
    return _plural(count, severity.value)


def _cell(text: str) -> str:
    """Text safe inside a table cell."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _one_paragraph(text: str) -> str:
    return " ".join(text.split())


def _fence(code: str, language: str = "python") -> str:
    """A fenced block longer than any backtick run in ``code``."""
    longest = max((len(run) for run in re.findall(r"`+", code)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{code}\n{fence}"


def _link(path: str, line: int) -> str:
    """A link to ``path`` at ``line``: the commit's blob on GitHub Actions, else relative."""
    relative = relative_path(path)
    shown = relative or path
    server = os.environ.get("GITHUB_SERVER_URL")
    repository = os.environ.get("GITHUB_REPOSITORY")
    sha = os.environ.get("GITHUB_SHA")
    if relative is not None and server and repository and sha:
        target = f"{server}/{repository}/blob/{sha}/{quote(shown)}#L{line}"
    else:
        target = f"{quote(shown)}#L{line}"
    return f"[{_cell(shown)}:{line}]({target})"


def _source(finding: Finding, lines: list[str] | None) -> str | None:
    if not lines or finding.span.line > len(lines):
        return None
    last = min(max(finding.span.end_line, finding.span.line), len(lines))
    last = min(last, finding.span.line + MAX_SOURCE_LINES - 1)
    chunk = [line.rstrip("\r\n") for line in lines[finding.span.line - 1 : last]]
    return textwrap.dedent("\n".join(chunk)).strip("\n") or None


@dataclass
class _Group:
    """The findings of one kernel (or of a file's module level)."""

    path: str
    kernel: str | None
    line: int
    findings: list[Finding] = field(default_factory=list)

    @property
    def rank(self) -> tuple[int, str, int]:
        worst = min(SEVERITY_RANK[f.severity] for f in self.findings)
        return (worst, self.path, self.line)


def _groups(result: RunResult) -> list[_Group]:
    kernel_lines: dict[tuple[str, str], int] = {}
    for file in result.files:
        for name, line in file.kernel_lines.items():
            kernel_lines.setdefault((file.path, name), line)
    groups: dict[tuple[str, str | None], _Group] = {}
    for finding in result.findings:
        key = (finding.path, finding.kernel)
        if key not in groups:
            line = kernel_lines.get((finding.path, finding.kernel or ""), finding.span.line)
            groups[key] = _Group(finding.path, finding.kernel, line)
        groups[key].findings.append(finding)
    return sorted(groups.values(), key=lambda g: g.rank)


def _finding_block(finding: Finding, lines: list[str] | None) -> str:
    icon = _SEVERITY_ICON[finding.severity]
    parts = [
        f"#### {icon} {finding.severity.value} · [{finding.code}]"
        f"({RULES_URL.format(code=finding.code)}) `{finding.name}` · "
        f"{_link(finding.path, finding.span.line)}",
        "",
        finding.message,
    ]
    source = _source(finding, lines)
    if source is not None:
        parts += ["", _fence(source)]
    advice = how_to_fix(finding.code)
    if advice:
        parts += ["", f"**How to fix:** {_one_paragraph(advice)}"]
    if finding.fix is not None:
        flag = (
            "`--fix`"
            if finding.fix.applicability is Applicability.SAFE
            else "`--fix --unsafe-fixes`"
        )
        parts += ["", f"**Automatic fix** ({flag}): {finding.fix.message}."]
    witness = finding.properties.get("witness")
    if witness:
        parts += ["", f"**Witness:** `{witness}`"]
    for related in finding.related:
        parts += ["", f"- {related.message}: {_link(related.path, related.span.line)}"]
    return "\n".join(parts)


def _group_section(group: _Group, texts: dict[str, str]) -> str:
    title = f"`{group.kernel}`" if group.kernel else "module level"
    counts = Counter(f.severity for f in group.findings)
    tally = ", ".join(
        f"{_plural(counts[s], s.value)}"
        for s in (Severity.ERROR, Severity.WARNING, Severity.INFO)
        if counts[s]
    )
    text = texts.get(group.path)
    lines = split_lines(text) if text is not None else None
    blocks = "\n\n".join(_finding_block(f, lines) for f in group.findings)
    head = f"### {title} — {_link(group.path, group.line)}\n\n{tally}."
    if len(group.findings) > COLLAPSE_AFTER:
        summary = f"{_plural(len(group.findings), 'finding')} in {title}"
        return f"{head}\n\n<details>\n<summary>{summary}</summary>\n\n{blocks}\n\n</details>"
    return f"{head}\n\n{blocks}"


def _summary_table(result: RunResult) -> str:
    rows = ["| Category | Status | Findings |", "|---|---|---:|"]
    for category, title in _CATEGORY_TITLES.items():
        found = [f for f in result.findings if f.category is category]
        if any(f.severity is Severity.ERROR for f in found):
            status = "❌ fail"
        elif found:
            status = "⚠️ review"
        else:
            status = "✅ pass"
        rows.append(f"| {title} | {status} | {len(found)} |")
    rows.append(f"| **Total** | | **{len(result.findings)}** |")
    return "\n".join(rows)


def _recommendations(result: RunResult) -> str | None:
    by_code: dict[str, list[Finding]] = {}
    for finding in result.findings:
        by_code.setdefault(finding.code, []).append(finding)
    if not by_code:
        return None

    def impact(item: tuple[str, list[Finding]]) -> tuple[int, int, str]:
        code, found = item
        return (min(SEVERITY_RANK[f.severity] for f in found), -len(found), code)

    items = []
    for number, (code, found) in enumerate(sorted(by_code.items(), key=impact), 1):
        worst = min((f.severity for f in found), key=SEVERITY_RANK.__getitem__)
        advice = how_to_fix(code)
        advice = _one_paragraph(advice) if advice else "See the rule's documentation."
        automatic = sum(1 for f in found if f.fix is not None)
        extra = f" {automatic} can be fixed automatically." if automatic else ""
        items.append(
            f"{number}. **[{code}]({RULES_URL.format(code=code)}) `{found[0].name}`** "
            f"({_plural(len(found), 'finding')}, {worst.value}): {advice}{extra}"
        )
    safe = sum(1 for f in result.findings if f.fix and f.fix.applicability is Applicability.SAFE)
    fixes = "1 safe fix" if safe == 1 else f"{safe} safe fixes"
    tail = f"\n\nRun `triton-lint --fix` to apply {fixes}." if safe else ""
    return "\n".join(items) + tail


def _stress_matrix(report: DynamicReport) -> str | None:
    if not report.stress:
        return None
    if any(cell.pattern for cell in report.stress):
        return _pattern_matrix(report)
    variants = list(dict.fromkeys(cell.variant for cell in report.stress))
    rows: dict[tuple[str, str], dict[str, str]] = {}
    for cell in report.stress:
        icon = _STATUS_ICON.get(cell.status, cell.status)
        text = icon + (" " + ", ".join(cell.codes) if cell.codes else "")
        rows.setdefault((cell.kernel, cell.case), {})[cell.variant] = text
    lines = [
        "| Kernel | Case | " + " | ".join(_cell(v) for v in variants) + " |",
        "|---|---|" + "---|" * len(variants),
    ]
    for (kernel, case), cells in rows.items():
        values = " | ".join(cells.get(v, "") for v in variants)
        lines.append(f"| `{_cell(kernel)}` | {_cell(case)} | {values} |")
    legend = ", ".join(f"{icon} {name}" for name, icon in _STATUS_ICON.items())
    return "\n".join(lines) + f"\n\n{legend}."


#: Rows of the stress matrix shown before the rest is summarised (GitHub's 1 MiB limit).
MAX_MATRIX_ROWS = 2000


def _status_text(cell: StressCell) -> str:
    icon = _STATUS_ICON.get(cell.status, cell.status)
    return icon + (" " + ", ".join(cell.codes) if cell.codes else "")


def _pattern_matrix(report: DynamicReport) -> str:
    """One row per case and variant (sizes; dtypes; layout), one column per value pattern."""
    patterns = list(dict.fromkeys(cell.pattern for cell in report.stress))
    rows: dict[tuple[str, str, str], dict[str, str]] = {}
    for cell in report.stress:
        rows.setdefault((cell.case, cell.kernel, cell.variant), {})[cell.pattern] = _status_text(
            cell
        )
    lines = [
        "| Case | Kernel | Sizes; dtypes; layout | "
        + " | ".join(_cell(p or "-") for p in patterns)
        + " |",
        "|---|---|---|" + "---|" * len(patterns),
    ]
    for n, ((case, kernel, variant), cells) in enumerate(rows.items()):
        if n == MAX_MATRIX_ROWS:
            lines.append(
                f"\n{len(rows) - n} more rows not shown; use `--format json` for every finding."
            )
            break
        values = " | ".join(cells.get(p, "") for p in patterns)
        kernel_text = f"`{_cell(kernel)}`" if kernel else "-"
        lines.append(f"| {_cell(case)} | {kernel_text} | {_cell(variant)} | {values} |")
    counts = Counter(cell.status for cell in report.stress)
    totals = ", ".join(f"{counts[s]} {s}" for s in _STATUS_ICON if counts[s])
    legend = ", ".join(f"{icon} {name}" for name, icon in _STATUS_ICON.items())
    where = f" on {report.device}" if report.device else ""
    return (
        f"{_plural(len(report.stress), 'combination')} executed{where}: {totals}.\n\n"
        + "\n".join(lines)
        + f"\n\n{legend}; a blank cell was not run (other layouts run with the first pattern)."
    )


def _number(value: float | None, digits: int, suffix: str = "") -> str:
    return "n/a" if value is None else f"{value:.{digits}f}{suffix}"


def performance_section(report: DynamicReport) -> str | None:
    """The performance table (and its plot and notes); None without timings."""
    if not report.performance:
        return None
    flops = any(row.tflops is not None for row in report.performance)
    lines = [
        "| Case | Kernel | Size | Triton ms | PyTorch ms | torch.compile ms | Speedup "
        "| vs compile | GB/s | % of peak |" + (" TFLOP/s |" if flops else ""),
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|" + ("---:|" if flops else ""),
    ]
    for row in report.performance:
        lines.append(
            f"| {_cell(row.case) or '-'} | `{_cell(row.kernel)}` | {_cell(row.size)} "
            f"| {_number(row.triton_ms, 3)} "
            f"| {_number(row.torch_ms, 3)} | {_number(row.compile_ms, 3)} "
            f"| {_number(row.speedup, 2, 'x')} | {_number(row.speedup_compiled, 2, 'x')} "
            f"| {_number(row.bandwidth_gbs, 1)} | {_number(row.percent_of_peak, 1, '%')} |"
            + (f" {_number(row.tflops, 1)} |" if flops else "")
        )
    text = "\n".join(lines)
    text += (
        "\n\nMedian of `triton.testing.do_bench`; speedups above 1x mean the Triton wrapper is "
        "faster; GB/s counts the inputs read and the returned outputs written once."
    )
    if report.performance_plot:
        text += f"\n\n![Time and bandwidth against size]({report.performance_plot})"
    if report.performance_note:
        text += "\n\n" + _one_paragraph(report.performance_note)
    return text


def _header(result: RunResult) -> str:
    counts = Counter(f.severity for f in result.findings)
    lines = [
        "# triton-lint report",
        "",
        f"**{_plural(len(result.findings), 'finding')}** in "
        f"{_plural(result.files_checked, 'file')} checked"
        + "".join(
            f", {_severity_count(counts[s], s)}"
            for s in (Severity.ERROR, Severity.WARNING, Severity.INFO)
            if counts[s]
        )
        + ".",
    ]
    notes = []
    fixed = sum(o.applied for o in result.fixed)
    if fixed:
        notes.append(f"{_plural(fixed, 'finding')} fixed by `--fix`.")
    if result.baselined or result.resolved_baseline:
        notes.append(
            f"Baseline: {_plural(result.baselined, 'known finding')} hidden, "
            f"{result.resolved_baseline} resolved since it was written."
        )
    if result.unreadable:
        notes.append(f"{_plural(len(result.unreadable), 'file')} could not be read.")
    if result.crashes:
        notes.append(f"⚠️ {_plural(len(result.crashes), 'internal error')}: results incomplete.")
    if notes:
        lines += ["", " ".join(notes)]
    if result.unreadable:
        lines.append("")
        lines += [f"- `{_cell(display_path(p))}`: {_cell(r)}" for p, r in result.unreadable[:50]]
        if len(result.unreadable) > 50:
            lines.append(f"- and {len(result.unreadable) - 50} more")
    return "\n".join(lines)


def render_markdown(result: RunResult, statistics: bool) -> str:
    head = _header(result)
    if statistics:
        rows = ["| Code | Name | Count |", "|---|---|---:|"]
        rows += [f"| {c} | `{n}` | {k} |" for c, n, k in count_by_code(result.findings)]
        return f"{head}\n\n## Findings per code\n\n" + "\n".join(rows) + "\n"

    sections = [head, "## Summary", _summary_table(result)]
    tail: list[str] = []
    recommendations = _recommendations(result)
    if recommendations:
        tail += ["## Recommendations", recommendations]
    if result.dynamic is not None:
        matrix = _stress_matrix(result.dynamic)
        if matrix:
            tail += ["## Stress matrix", matrix]
        performance = performance_section(result.dynamic)
        if performance:
            device = f" on {result.dynamic.device}" if result.dynamic.device else ""
            tail += [f"## Performance{device}", performance]
        elif result.dynamic.performance_note:
            tail += ["## Performance", _one_paragraph(result.dynamic.performance_note)]
        compiled = compile_section(result.dynamic.compiled, result.dynamic.compile_archs)
        if compiled:
            tail += ["## Compiled variants per architecture", compiled]

    texts = source_texts(result)
    groups = _groups(result)
    body: list[str] = []
    if groups:
        body.append("## Findings by kernel")
    budget = MAX_BYTES - len("\n\n".join(sections + tail).encode("utf-8")) - 1000
    shown = 0
    for group in groups:
        section = _group_section(group, texts)
        size = len(section.encode("utf-8")) + 2
        if size > budget:
            break
        budget -= size
        body.append(section)
        shown += 1
    if shown < len(groups):
        omitted = groups[shown:]
        missing = sum(len(g.findings) for g in omitted)
        body.append(
            f"> [!WARNING]\n> Report cut to stay under GitHub's 1 MiB summary limit: "
            f"{_plural(missing, 'finding')} in {_plural(len(omitted), 'kernel')} not shown "
            "(the least severe). Use `--format sarif` or `--format json` for every finding."
        )
    return "\n\n".join(sections + body + tail) + "\n"
