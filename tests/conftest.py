"""Shared helpers for the test suite."""

from __future__ import annotations

import os
import pty
import subprocess
from pathlib import Path
from typing import Any

import pytest

from triton_lint.api import available_versions
from triton_lint.engine import lint_text
from triton_lint.rules import all_rules, rules_by_code

REPO = Path(__file__).resolve().parent.parent


def lint_codes(
    source: str, *codes: str, path: str = "example.py", target: str | None = None
) -> set[tuple[int, str]]:
    """(line, code) pairs produced by the given rules (all rules when none given).

    The target Triton version defaults to the newest known one, not the installed triton's,
    so results do not depend on the machine (the GPU machines have an older Triton).
    """
    rules = [rules_by_code()[c] for c in codes] if codes else list(all_rules())
    result = lint_text(path, source, rules, target or available_versions()[-1])
    assert not result.crashes, result.crashes
    return {(f.line, f.code) for f in result.findings}


def run_on_pty(
    command: list[str], *, stdout_too: bool, cwd: Path | None = None, env: Any = None
) -> bytes:
    """What ``command`` writes to a pseudo-terminal on its stderr (and stdout with
    ``stdout_too``; otherwise stdout is dropped): how it behaves when a person watches."""
    leader, follower = pty.openpty()
    stdout = follower if stdout_too else subprocess.DEVNULL
    with subprocess.Popen(command, cwd=cwd, env=env, stdout=stdout, stderr=follower) as proc:
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
        proc.wait(timeout=600)
    os.close(leader)
    return b"".join(chunks)


def apply_edits(text: str, edits: list[Any]) -> str:
    """Apply LSP edits (UTF-16 positions, lines split as the protocol says) to ``text``."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(position: Any) -> int:
        if position.line >= len(lines):
            return len(text)
        line = lines[position.line]
        units = 0
        for index, character in enumerate(line):
            if units >= position.character:
                return starts[position.line] + index
            units += len(character.encode("utf-16-le")) // 2
        return starts[position.line] + len(line)

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character))[::-1]:
        start, end = offset(edit.range.start), offset(edit.range.end)
        text = text[:start] + edit.new_text + text[end:]
    return text


@pytest.fixture
def repo() -> Path:
    return REPO


@pytest.fixture(autouse=True)
def _results_cache_outside_the_checkout(tmp_path_factory, monkeypatch):
    """Runs of the CLI in tests keep their results cache in a temporary directory."""
    monkeypatch.setenv("TRITON_LINT_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))


@pytest.fixture(autouse=True)
def _plain_text_reports(monkeypatch):
    """The text report's style and colour depend on the environment (CI, pre-commit, colour
    variables): tests start from none of them, as on a developer's pipe."""
    for name in ("CI", "PRE_COMMIT", "NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(name, raising=False)
