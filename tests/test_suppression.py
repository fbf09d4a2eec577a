"""``noqa_edit``: the edit that silences one code on one line (the editor's quick fix)."""

from __future__ import annotations

import pytest

from triton_lint.suppression import noqa_edit, parse_suppressions


@pytest.mark.parametrize(
    ("source", "line", "expected"),
    [
        ("x = f(a)\n", 1, "x = f(a)  # noqa: TL101\n"),
        ("x = f(a)   \n", 1, "x = f(a)  # noqa: TL101\n"),
        ("x = f(a)  # noqa: TL104\n", 1, "x = f(a)  # noqa: TL104, TL101\n"),
        ("x = f(a)  # why: reasons\n", 1, "x = f(a)  # why: reasons  # noqa: TL101\n"),
        ("x = f(a,\r\n  b)\r\n", 1, "x = f(a,  # noqa: TL101\r\n  b)\r\n"),
        ("s = 'é'; x = f(a)\n", 1, "s = 'é'; x = f(a)  # noqa: TL101\n"),
    ],
)
def test_noqa_edit(source, line, expected):
    start, end, content = noqa_edit(source, line, "TL101")
    lines = source.splitlines(keepends=True)
    text = lines[line - 1]
    lines[line - 1] = text[: start - 1] + content + text[end - 1 :]
    edited = "".join(lines)
    assert edited == expected
    assert parse_suppressions(edited).suppresses(line, "TL101")


@pytest.mark.parametrize(
    ("source", "line"),
    [
        ('x = """a\nb"""\n', 1),  # the line ends inside a string
        ("x = 1 + \\\n  2\n", 1),  # a backslash continuation
        ("x = (\n", 1),  # cannot be tokenized
        ("x = 1\n", 3),  # no such line
    ],
)
def test_no_noqa_edit_where_a_comment_cannot_silence_the_line(source, line):
    assert noqa_edit(source, line, "TL101") is None
