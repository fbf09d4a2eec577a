"""Shared helpers for the test suite."""

from __future__ import annotations

from pathlib import Path

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


@pytest.fixture
def repo() -> Path:
    return REPO


@pytest.fixture(autouse=True)
def _results_cache_outside_the_checkout(tmp_path_factory, monkeypatch):
    """Runs of the CLI in tests keep their results cache in a temporary directory."""
    monkeypatch.setenv("TRITON_LINT_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))
