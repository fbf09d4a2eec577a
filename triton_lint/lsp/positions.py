"""Positions between the linter (1-based lines, columns in code points) and LSP clients.

LSP positions are 0-based and count columns in the code units the client negotiated (UTF-16
unless it asked otherwise); lines end only at ``\\n``, ``\\r\\n`` and ``\\r``, as Python's
tokenizer counts them (`str.splitlines` would also split at form feeds).
"""

from __future__ import annotations

from lsprotocol import types

from triton_lint.finding import Span
from triton_lint.fingerprint import split_lines


class LineIndex:
    """One text's lines, to convert spans to ranges and client positions back."""

    def __init__(self, text: str, encoding: str = types.PositionEncodingKind.Utf16) -> None:
        self.lines = [line.rstrip("\r\n") for line in split_lines(text)]
        self.encoding = str(encoding)

    def _width(self, text: str) -> int:
        """``text``'s length in the client's code units."""
        if self.encoding == "utf-8":
            return len(text.encode("utf-8"))
        if self.encoding == "utf-32":
            return len(text)
        return len(text.encode("utf-16-le")) // 2

    def position(self, line: int, column: int) -> types.Position:
        """The LSP position of 1-based ``line`` and ``column`` (clamped into the text)."""
        if line > len(self.lines):
            return types.Position(line=len(self.lines), character=0)
        text = self.lines[max(line, 1) - 1]
        return types.Position(line=max(line, 1) - 1, character=self._width(text[: column - 1]))

    def range(self, span: Span) -> types.Range:
        return types.Range(
            start=self.position(span.line, span.column),
            end=self.position(span.end_line, span.end_column),
        )

    def location(self, position: types.Position) -> tuple[int, int]:
        """The 1-based line and column of a client's position."""
        if position.line >= len(self.lines):
            return len(self.lines) + 1, 1
        text = self.lines[position.line]
        width = 0
        for index, character in enumerate(text):
            if width >= position.character:
                return position.line + 1, index + 1
            width += self._width(character)
        return position.line + 1, len(text) + 1
