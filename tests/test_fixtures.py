"""Every fixture under ``fixtures/TL*/`` yields exactly the findings its ``# <- CODE`` marks.

A ``# <+ CODE`` mark is a related location of a finding of CODE (a parameter grouped into
another's finding); where a fixture has one, the related locations of that code's findings
must be exactly the marked lines. All rules run (including those off by default), so a
fixture also proves that no other rule fires on it. A fixture may pin the Triton version with
a first-lines comment ``# triton-lint-test: target-version=3.3``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from triton_lint.docs import example_expectations
from triton_lint.engine import lint_text
from triton_lint.rules import all_rules

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
FILES = sorted(FIXTURES.glob("TL*/**/*.py"))
_TARGET = re.compile(r"#\s*triton-lint-test:\s*target-version=(\S+)")
_RELATED = re.compile(r"#\s*<\+\s*(TL\d{3})")


def _expected_from_markers(path: Path) -> tuple[str, set[tuple[int, str]]]:
    text = path.read_text(encoding="utf-8")
    _, expected = example_expectations(text)
    return text, expected


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(FIXTURES)) for p in FILES])
def test_fixture_findings_are_exactly_the_marked_ones(path):
    text, expected = _expected_from_markers(path)
    target = _TARGET.search(text)
    result = lint_text(str(path), text, list(all_rules()), target.group(1) if target else "3.9")
    assert not result.crashes
    assert {(f.line, f.code) for f in result.findings} == expected
    related = {
        (number, match.group(1))
        for number, line in enumerate(text.splitlines(), 1)
        if (match := _RELATED.search(line))
    }
    codes = {code for _, code in related}
    found = {(r.span.line, f.code) for f in result.findings if f.code in codes for r in f.related}
    assert found == related


def test_every_rule_has_bad_and_good_fixtures():
    for rule in all_rules():
        folder = FIXTURES / rule.code
        names = [p.name for p in folder.glob("*.py")]
        assert any(n.startswith("bad") for n in names), f"{rule.code}: no bad fixture"
        assert any(n.startswith("good") for n in names), f"{rule.code}: no good fixture"


def test_bad_fixtures_produce_their_rule():
    for path in FILES:
        if path.name.startswith("bad"):
            _, expected = _expected_from_markers(path)
            assert path.parent.name in {code for _, code in expected}, path
