"""``rules/*.md`` and the README's rule table are generated from the rule modules."""

from __future__ import annotations

from triton_lint.docs import render_dynamic, render_rule, rule_table
from triton_lint.dynamic.codes import CODES
from triton_lint.rules import all_rules


def test_rule_pages_are_in_sync(repo):
    regenerate = "run `python -m triton_lint.docs` to regenerate"
    pages = {p.name for p in (repo / "rules").glob("TL*.md")}
    expected = {f"{r.code}.md" for r in all_rules()} | {f"{c}.md" for c in CODES}
    assert pages == expected, regenerate
    for rule in all_rules():
        page = (repo / "rules" / f"{rule.code}.md").read_text(encoding="utf-8")
        assert page == render_rule(rule), f"rules/{rule.code}.md is stale: {regenerate}"
    for code in CODES.values():
        page = (repo / "rules" / f"{code.code}.md").read_text(encoding="utf-8")
        assert page == render_dynamic(code), f"rules/{code.code}.md is stale: {regenerate}"


def test_static_and_dynamic_codes_never_collide():
    assert not {r.code for r in all_rules()} & set(CODES)


def test_readme_rule_table_is_in_sync(repo):
    readme = (repo / "README.md").read_text(encoding="utf-8")
    assert rule_table() in readme, "README rule table is stale: paste `rule_table()` output"
