"""Baselines: write, then report only new findings; count the resolved ones."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from triton_lint.cli import cli

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "TL401" / "bad_fixable.py"


def _run(*args: str):
    return CliRunner().invoke(cli, list(args))


def test_baseline_round_trip(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copy(FIXTURE, tmp_path / "k.py")
    written = _run("k.py", "--isolated", "--write-baseline", "baseline.json")
    assert written.exit_code == 0, written.output
    data = json.loads((tmp_path / "baseline.json").read_text())
    assert data["format"] == "triton-lint-baseline"
    assert len(data["findings"]) == 4
    assert {e["path"] for e in data["findings"]} == {"k.py"}

    # Nothing new: exit 0, every finding hidden.
    clean = _run("k.py", "--isolated", "--baseline", "baseline.json")
    assert clean.exit_code == 0, clean.output
    assert "Found 0 findings" in clean.output
    assert "4 findings hidden" in clean.output

    # Lines moved and a new print added: only the new one is reported.
    text = (tmp_path / "k.py").read_text()
    text = text.replace(
        "    pid = tl.program_id(0)\n",
        "    pid = tl.program_id(0)\n\n    # moved\n    tl.device_print('new', pid)\n",
    )
    (tmp_path / "k.py").write_text(text)
    new = _run("k.py", "--isolated", "--baseline", "baseline.json", "--format", "json")
    assert new.exit_code == 1
    findings = json.loads(new.stdout)
    assert [f["line"] for f in findings] == [10]

    # A baselined finding removed: reported as resolved.
    text = text.replace("    tl.static_print(BLOCK)  # <- TL401\n", "")
    (tmp_path / "k.py").write_text(text)
    resolved = _run("k.py", "--isolated", "--baseline", "baseline.json")
    assert "1 resolved since the baseline" in resolved.output


def test_subset_run_does_not_resolve_other_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copy(FIXTURE, tmp_path / "a.py")
    shutil.copy(FIXTURE, tmp_path / "b.py")
    assert _run("a.py", "b.py", "--isolated", "--write-baseline", "bl.json").exit_code == 0
    only_a = _run("a.py", "--isolated", "--baseline", "bl.json")
    assert only_a.exit_code == 0
    assert "resolved" not in only_a.output or "0 resolved" in only_a.output


def test_bad_baseline_is_a_usage_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copy(FIXTURE, tmp_path / "k.py")
    (tmp_path / "bl.json").write_text("{}")
    result = _run("k.py", "--baseline", "bl.json")
    assert result.exit_code == 2
    assert "not a triton-lint baseline" in result.output
    assert _run("k.py", "--baseline", "missing.json").exit_code == 2
