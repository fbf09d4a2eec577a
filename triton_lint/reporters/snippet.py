"""Source snippets: numbered lines with a span underlined at the columns a terminal shows.

Spans count code points (as libcst and the findings do); a terminal shows a tab up to the next
stop of `TAB_WIDTH`, an East Asian wide character in two cells, a combining mark in none. Each
line is laid out once into its displayed text and the cell at which every code point starts, so
the underline lands under the right characters. Control characters are shown as their Unicode
pictures: printing a file's escape sequences would drive the reader's terminal. A span over
several lines is drawn with a rail down the left, its first and last `SPAN_EDGE` lines kept.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from triton_lint.finding import Span
from triton_lint.reporters.terminal import Palette

TAB_WIDTH = 4
#: Lines of a multi-line span kept at each end; the middle of a longer span is elided.
SPAN_EDGE = 3
#: A line longer than this is not shown (minified or generated code would flood the report).
MAX_LINE_CHARS = 1000


@dataclass(frozen=True)
class Mark:
    """A span to underline: the finding's own (``^``) or a related location's (``-``)."""

    span: Span
    label: str
    primary: bool
    role: str  # the palette role of the underline and its label


def layout(line: str) -> tuple[str, list[int] | None]:
    """The line as shown, and the cell each code point starts at (with one past the end);
    None for the cells when they equal the code point indices (printable ASCII)."""
    if line.isascii() and line.isprintable():
        return line, None
    shown: list[str] = []
    cells = [0]
    for char in line:
        if char == "\t":
            width = TAB_WIDTH - cells[-1] % TAB_WIDTH
            shown.append(" " * width)
        elif unicodedata.category(char) == "Cc":
            code = ord(char)
            picture = chr(0x2400 + code) if code < 0x20 else "\u2421" if code == 0x7F else "\ufffd"
            shown.append(picture)
            width = 1
        elif unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
            shown.append(char)
            width = 0
        else:
            shown.append(char)
            width = 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
        cells.append(cells[-1] + width)
    return "".join(shown), cells


def _cell(cells: list[int] | None, index: int) -> int:
    return index if cells is None else cells[index]


def strip_ending(line: str) -> str:
    return line.rstrip("\r\n")


def _bounds(text: str, start: int, end: int) -> tuple[int, int]:
    """(start, end) code point indices of an underline: inside the line, at least one wide,
    without the indentation or trailing blanks a whole-line span (dynamic findings) covers."""
    start = min(max(start, 0), len(text))
    end = min(max(end, start), len(text))
    inner = text[start:end]
    if inner.strip():
        start += len(inner) - len(inner.lstrip())
        end -= len(inner) - len(inner.rstrip())
    return start, end


class SnippetWriter:
    """Writes the snippets of one finding with a shared gutter width."""

    def __init__(self, gutter: int, paint: Palette) -> None:
        self.gutter = gutter
        self.paint = paint

    def bar(self, tail: str = "") -> str:
        """The empty gutter, ``   |``, optionally followed by ``tail``."""
        return f"{' ' * self.gutter} {self.paint('|', 'gutter')}{tail}".rstrip()

    def numbered(self, number: int | str, rail: str, text: str) -> str:
        head = self.paint(f"{number:>{self.gutter}} |", "gutter")
        return f"{head} {rail}{text}".rstrip()

    def render(self, lines: Sequence[str], mark: Mark, context: int) -> list[str] | None:
        """The snippet of ``mark`` with ``context`` lines around it; None when its line is not
        in ``lines`` (the file changed since) or too long to show."""
        span = mark.span
        if not 1 <= span.line <= len(lines):
            return None
        last = min(max(span.end_line, span.line), len(lines))
        if any(len(lines[i - 1]) > MAX_LINE_CHARS for i in range(span.line, last + 1)):
            return None
        single = last == span.line
        rail = "" if single else "  "  # lines outside a multi-line span keep its rail's room
        body = self._single(lines, mark) if single else self._multi(lines, mark, last)
        before = _context(lines, span.line - 1, -1, context)
        after = _context(lines, last + 1, 1, context)
        return [
            *(self.source(lines, n, rail) for n in before),
            *body,
            *(self.source(lines, n, rail) for n in after),
        ]

    def source(self, lines: Sequence[str], number: int, rail: str) -> str:
        """Line ``number`` of ``lines`` as shown, numbered."""
        return self.numbered(number, rail, layout(strip_ending(lines[number - 1]))[0])

    def _label(self, mark: Mark) -> str:
        return self.paint(mark.label, mark.role) if mark.label else ""

    def _single(self, lines: Sequence[str], mark: Mark) -> list[str]:
        span = mark.span
        text = strip_ending(lines[span.line - 1])
        end = span.end_column - 1 if span.end_line == span.line else len(text)
        start, end = _bounds(text, span.column - 1, end)
        shown, cells = layout(text)
        left = _cell(cells, start)
        width = max(_cell(cells, end) - left, 1)
        underline = self.paint(("^" if mark.primary else "-") * width, mark.role)
        label = self._label(mark)
        return [
            self.numbered(span.line, "", shown),
            self.bar(f" {' ' * left}{underline}" + (f" {label}" if label else "")),
        ]

    def _multi(self, lines: Sequence[str], mark: Mark, last: int) -> list[str]:
        span = mark.span
        rail = self.paint("|", mark.role)
        out: list[str] = []
        first_text = strip_ending(lines[span.line - 1])
        start, _ = _bounds(first_text, span.column - 1, len(first_text))
        shown, cells = layout(first_text)
        indent = len(first_text) - len(first_text.lstrip())
        if start <= indent:
            out.append(self.numbered(span.line, self.paint("/", mark.role) + " ", shown))
        else:
            out.append(self.source(lines, span.line, "  "))
            marker = "_" * (_cell(cells, start) + 1) + "^"
            out.append(self.bar(f"  {self.paint(marker, mark.role)}"))
        middle = list(range(span.line + 1, last + 1))
        if len(middle) > 2 * SPAN_EDGE:
            middle = [*middle[: SPAN_EDGE - 1], 0, *middle[-SPAN_EDGE:]]
        for number in middle:
            if number == 0:
                out.append(self.bar(f" {rail} ..."))
                continue
            out.append(self.source(lines, number, rail + " "))
        last_text = strip_ending(lines[last - 1])
        end = span.end_column - 1 if span.end_line == last else len(last_text)
        _, end = _bounds(last_text, 0, end)
        _, cells = layout(last_text)
        caret = _cell(cells, end - 1) if end > 0 else 0
        label = self._label(mark)
        closing = self.paint("_" * (caret + 1) + "^", mark.role)
        out.append(self.bar(f" {rail}{closing}" + (f" {label}" if label else "")))
        return out


def _context(lines: Sequence[str], start: int, step: int, count: int) -> list[int]:
    """Up to ``count`` line numbers from ``start`` going ``step``, in file order, without the
    blank lines at the far edge."""
    numbers = []
    number = start
    while len(numbers) < count and 1 <= number <= len(lines):
        if len(lines[number - 1]) > MAX_LINE_CHARS:
            break
        numbers.append(number)
        number += step
    while numbers and not strip_ending(lines[numbers[-1] - 1]).strip():
        numbers.pop()
    return sorted(numbers)
