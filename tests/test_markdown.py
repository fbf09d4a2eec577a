"""The Markdown audit report: valid CommonMark, the promised sections, under GitHub's cap."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from triton_lint.dynamic.dynamic_report import DynamicReport, PerfRow, StressCell
from triton_lint.finding import Category, Finding, Severity, Span
from triton_lint.reporters import markdown as md
from triton_lint.reporters.markdown import render_markdown
from triton_lint.run import RunOptions, RunResult, lint_paths
from triton_lint.selection import Layer

REPO = Path(__file__).resolve().parent.parent
SNAPSHOT = Path(__file__).resolve().parent / "snapshots" / "markdown_report.md"


@pytest.fixture(autouse=True)
def _local(monkeypatch):
    monkeypatch.chdir(REPO)
    for name in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_SHA"):
        monkeypatch.delenv(name, raising=False)


def _parse(text: str):
    return MarkdownIt("commonmark").enable("table").parse(text)


def _dynamic() -> DynamicReport:
    return DynamicReport(
        device="NVIDIA H100",
        stress=[
            StressCell("scale", "ragged", "n=1023 fp32", "pass"),
            StressCell("scale", "ragged", "n=1 fp16", "fail", ("TL901",)),
            StressCell("scale", "empty", "n=0 fp32", "skip"),
        ],
        performance=[
            PerfRow("scale", "2^20", 0.021, 0.034, 1200.0, 3350.0),
            PerfRow("scale", "2^24", 0.201, None, None, None),
        ],
    )


def _report_result() -> RunResult:
    options = RunOptions(cli_layer=Layer(select=("ALL",)), isolated=True)
    result = lint_paths([Path("fixtures/TL401/bad_fixable.py")], options)
    result.dynamic = _dynamic()
    return result


def test_snapshot():
    text = render_markdown(_report_result(), False)
    if os.environ.get("UPDATE_SNAPSHOTS"):
        SNAPSHOT.write_text(text, encoding="utf-8")
    assert text == SNAPSHOT.read_text(encoding="utf-8")


def test_report_is_commonmark_with_the_promised_structure():
    options = RunOptions(cli_layer=Layer(select=("ALL",)), isolated=True)
    result = lint_paths([Path("fixtures")], options)
    result.dynamic = _dynamic()
    text = render_markdown(result, False)
    tokens = _parse(text)
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    for title in ("Summary", "Findings by kernel", "Recommendations", "Stress matrix"):
        assert title in headings
    assert "Performance on NVIDIA H100" in headings
    assert sum(1 for t in tokens if t.type == "table_open") == 3
    # one fenced source block per finding, each closed (the parser would swallow the rest)
    fences = [t for t in tokens if t.type == "fence"]
    assert len(fences) == len(result.findings)
    assert all(t.info == "python" for t in fences)
    # <details> blocks are balanced and their Markdown content is parsed, not literal
    html = "".join(t.content for t in tokens if t.type == "html_block")
    assert html.count("<details>") == html.count("</details>") >= 1
    rendered = MarkdownIt("commonmark").enable("table").render(text)
    assert "<h4>" in rendered and "<table>" in rendered
    # the summary table lists every category with a status and a count
    summary = text.split("## Summary", 1)[1].split("##", 1)[0]
    for category in ("Correctness", "Memory safety", "Numerics", "Performance", "Best practice"):
        assert f"| {category} |" in summary


def test_fences_survive_backticks_in_source(tmp_path):
    source = "x = '```'  # a fence inside the code\n"
    finding = Finding(
        str(tmp_path / "k.py"),
        Span(1, 1, 1, 4),
        "TL401",
        "debug-print",
        Severity.WARNING,
        Category.BEST_PRACTICE,
        "m",
        "k",
    )
    (tmp_path / "k.py").write_text(source)
    from triton_lint.engine import FileResult

    result = RunResult(
        findings=[finding], files_checked=1, files=[FileResult(finding.path, text=source)]
    )
    tokens = _parse(render_markdown(result, False))
    fences = [t for t in tokens if t.type == "fence"]
    assert len(fences) == 1 and fences[0].content == source


def test_links_point_at_the_commit_on_github_actions(monkeypatch):
    monkeypatch.setenv("GITHUB_SERVER_URL", "https://github.com")
    monkeypatch.setenv("GITHUB_REPOSITORY", "o/r")
    monkeypatch.setenv("GITHUB_SHA", "abc123")
    text = render_markdown(_report_result(), False)
    assert "(https://github.com/o/r/blob/abc123/fixtures/TL401/bad_fixable.py#L12)" in text


def test_report_stays_under_the_step_summary_cap(monkeypatch):
    monkeypatch.setattr(md, "MAX_BYTES", 6000)
    findings = []
    for kernel in range(40):
        findings.append(
            Finding(
                "fixtures/TL401/bad_fixable.py",
                Span(12, 5, 12, 28),
                "TL401",
                "debug-print",
                Severity.ERROR if kernel == 39 else Severity.WARNING,
                Category.BEST_PRACTICE,
                f"finding in kernel {kernel}",
                f"kernel_{kernel}",
            )
        )
    text = render_markdown(RunResult(findings=findings, files_checked=1), False)
    assert len(text.encode("utf-8")) <= 6000
    assert "not shown" in text and "1 MiB" in text
    assert "kernel_39" in text  # the most severe kernel is kept
    assert "## Recommendations" in text
    _parse(text)


def test_statistics_and_empty_report():
    empty = render_markdown(RunResult(files_checked=2), False)
    assert "**0 findings** in 2 files checked." in empty
    assert "Findings by kernel" not in empty
    stats = render_markdown(_report_result(), True)
    assert "| TL401 | `debug-print` | 4 |" in stats
