"""Every rule's documented examples are executable: bad ones fire where marked, good ones don't."""

from __future__ import annotations

import pytest

from tests.conftest import lint_codes
from triton_lint.docs import example_expectations
from triton_lint.rules import all_rules

RULES = list(all_rules())


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_bad_example_fires_on_marked_lines(rule):
    source, expected = example_expectations(rule.bad)
    assert expected, f"{rule.code}: the bad example marks no line with `# <- {rule.code}`"
    assert {code for _, code in expected} == {rule.code}
    assert lint_codes(source, rule.code) == expected


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_good_example_is_clean(rule):
    source, expected = example_expectations(rule.good)
    assert not expected
    assert lint_codes(source, rule.code) == set()


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_rule_metadata_is_complete(rule):
    assert rule.code.startswith("TL") and len(rule.code) == 5
    assert rule.name == rule.name.lower() and " " not in rule.name
    for text in (rule.summary, rule.rationale, rule.fix):
        assert text.strip()
    assert not rule.summary.endswith(".")
