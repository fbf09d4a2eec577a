"""Fingerprints survive unrelated edits and tell duplicates apart."""

from __future__ import annotations

from pathlib import Path

from triton_lint.engine import lint_text
from triton_lint.fingerprint import fingerprint
from triton_lint.rules import all_rules

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "TL401" / "bad_fixable.py"


def _prints(text: str) -> list[str]:
    result = lint_text("k.py", text, list(all_rules()))
    return [fingerprint(f, text) for f in result.findings]


def test_stable_when_lines_are_inserted_above():
    text = FIXTURE.read_text(encoding="utf-8")
    before = _prints(text)
    assert len(before) == 4
    moved = text.replace(
        "    pid = tl.program_id(0)\n",
        "    pid = tl.program_id(0)\n    # a comment\n    unused = pid + 1\n\n",
    )
    moved = "# header\n\n" + moved
    assert _prints(moved) == before


def test_stable_under_reindentation_and_spacing():
    text = FIXTURE.read_text(encoding="utf-8")
    spaced = text.replace('tl.device_print("x", x)', 'tl.device_print( "x",  x )')
    assert _prints(spaced) == _prints(text)


def test_changes_when_the_flagged_code_changes():
    text = FIXTURE.read_text(encoding="utf-8")
    changed = text.replace('tl.device_print("x", x)', 'tl.device_print("y", x)')
    assert _prints(changed)[0] != _prints(text)[0]
    assert _prints(changed)[1:] == _prints(text)[1:]


def test_changes_with_the_kernel_name():
    text = FIXTURE.read_text(encoding="utf-8")
    assert _prints(text.replace("def scale(", "def scale2("))[0] != _prints(text)[0]


def test_duplicates_get_distinct_occurrence_indexes():
    text = FIXTURE.read_text(encoding="utf-8").replace(
        '    tl.device_print("x", x)  # <- TL401\n',
        '    tl.device_print("x", x)\n    tl.device_print("x", x)\n',
    )
    prints = _prints(text)
    assert prints[0] != prints[1]
    assert prints[0].split(":")[0] == prints[1].split(":")[0]
    assert [p.split(":")[1] for p in prints[:2]] == ["0", "1"]
