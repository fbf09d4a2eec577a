"""`--show-fixes`: a finding's fix as the few lines it changes, numbered, ``-`` then ``+``."""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

from triton_lint.finding import Finding
from triton_lint.fingerprint import split_lines
from triton_lint.fixes import apply_fixes
from triton_lint.reporters.snippet import layout, strip_ending

if TYPE_CHECKING:
    from triton_lint.reporters.snippet import SnippetWriter


def fix_diff(text: str, finding: Finding, writer: SnippetWriter) -> list[str]:
    """The lines the fix removes and adds; nothing when it changes nothing."""
    fixed, applied = apply_fixes(text, [finding], unsafe=True)
    if not applied or fixed == text:
        return []
    before, after = split_lines(text), split_lines(fixed)
    paint = writer.paint
    out = [writer.bar()]
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for tag, a1, a2, b1, b2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        for number in range(a1 + 1, a2 + 1):
            shown = layout(strip_ending(before[number - 1]))[0]
            out.append(
                writer.numbered(number, paint("-", "removed") + " ", paint(shown, "removed"))
            )
        for number in range(b1 + 1, b2 + 1):
            shown = layout(strip_ending(after[number - 1]))[0]
            out.append(writer.numbered(number, paint("+", "added") + " ", paint(shown, "added")))
    return out
