"""The small formats: GitHub annotations, JSON Lines, JSON fixes, text summary, --output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from triton_lint.cli import cli
from triton_lint.reporters import REPORTERS
from triton_lint.reporters.github import escape_data, escape_property

REPO = Path(__file__).resolve().parent.parent
FIXTURE = "fixtures/TL401/bad_fixable.py"


@pytest.fixture(autouse=True)
def _in_repo(monkeypatch):
    monkeypatch.chdir(REPO)


def _run(*args: str):
    return CliRunner().invoke(cli, list(args))


def test_github_annotations_use_repo_relative_paths():
    absolute = str(REPO / FIXTURE)
    result = _run(absolute, "--isolated", "--format", "github")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert len(lines) == 4
    assert lines[0] == (
        "::warning file=fixtures/TL401/bad_fixable.py,line=12,endLine=12,col=5,endColumn=28,"
        "title=TL401 debug-print::"
        "`tl.device_print` left in the kernel: remove it or gate it on a constexpr flag"
    )


def test_github_escaping():
    assert escape_data("50%\nnext") == "50%25%0Anext"
    assert escape_property("a:b,c") == "a%3Ab%2Cc"


def test_json_lines_one_object_per_line():
    result = _run(FIXTURE, "--isolated", "--format", "json-lines")
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["line"] for r in rows] == [12, 14, 15, 16]
    assert all(r["code"] == "TL401" for r in rows)


def test_json_findings_carry_their_fix():
    rows = json.loads(_run(FIXTURE, "--isolated", "--format", "json").stdout)
    fix = rows[0]["fix"]
    assert fix["applicability"] == "safe"
    assert fix["edits"] == [
        {
            "content": "",
            "location": {"row": 12, "column": 1},
            "end_location": {"row": 13, "column": 1},
        }
    ]


def test_text_summary_counts_per_code():
    out = _run(FIXTURE, "fixtures/TL101/bad.py", "--isolated").stdout
    assert "Found 7 findings in 2 files." in out
    assert "By code: TL401 4, TL101 3." in out
    assert "[*] 4 fixable with `--fix`." in out
    stats = _run(FIXTURE, "--isolated", "--statistics").stdout
    assert stats.splitlines()[0].split() == ["4", "TL401", "debug-print"]


@pytest.mark.parametrize("name", sorted(REPORTERS))
def test_every_format_writes_to_output(name, tmp_path):
    out = tmp_path / f"report.{name}"
    result = _run(FIXTURE, "--isolated", "--format", name, "--output", str(out))
    assert result.exit_code == 1
    assert result.stdout == ""
    assert out.read_text(encoding="utf-8").strip()


def test_reports_and_fixes_never_import_torch_or_triton(tmp_path):
    import subprocess
    import sys

    target = tmp_path / "k.py"
    target.write_text((REPO / FIXTURE).read_text())
    script = f"""
import sys
from click.testing import CliRunner
from triton_lint.cli import cli
for fmt in ("sarif", "markdown", "github", "json-lines", "json", "text"):
    CliRunner().invoke(cli, [{str(target)!r}, "--isolated", "--format", fmt])
CliRunner().invoke(cli, [{str(target)!r}, "--isolated", "--fix"])
bad = [m for m in ("torch", "triton") if m in sys.modules]
assert not bad, bad
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
