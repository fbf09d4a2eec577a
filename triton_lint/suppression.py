"""``# noqa`` comments: inline (``# noqa: TL101``) and file-level (``# triton-lint: noqa``)."""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field

from triton_lint.fingerprint import split_lines

_FILE = re.compile(r"#\s*triton-lint\s*:\s*noqa\b(?P<rest>.*)", re.IGNORECASE)
_INLINE = re.compile(r"#\s*noqa\b(?P<rest>.*)", re.IGNORECASE)
_CODES = re.compile(r"^\s*:\s*(?P<codes>[A-Z]+[0-9]+(?:\s*[,\s]\s*[A-Z]+[0-9]+)*)\s*,?")
_CODE = re.compile(r"[A-Z]+[0-9]+")


@dataclass
class Suppressions:
    """Which codes are silenced where; ``None`` means every code."""

    file_codes: set[str] | None = field(default_factory=set)
    file_all: bool = False
    lines: dict[int, set[str] | None] = field(default_factory=dict)
    warnings: list[tuple[int, str]] = field(default_factory=list)

    def suppresses(self, line: int, code: str) -> bool:
        if self.file_all or (self.file_codes and code in self.file_codes):
            return True
        if line not in self.lines:
            return False
        codes = self.lines[line]
        return codes is None or code in codes


def _parse_codes(rest: str) -> set[str] | str | None:
    """Codes after ``noqa``: a set, None for a bare directive, or an error message."""
    stripped = rest.lstrip()
    if not stripped.startswith(":"):
        return None
    match = _CODES.match(stripped)
    if match is None:
        return "expected a comma-separated list of codes such as `TL101` after `noqa:`"
    return set(_CODE.findall(match.group("codes")))


def _comments(text: str) -> list[tuple[int, str]]:
    try:
        tokens = tokenize.generate_tokens(io.StringIO(text).readline)
        return [(tok.start[0], tok.string) for tok in tokens if tok.type == tokenize.COMMENT]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        # Unparseable files still honour directives: fall back to a line scan.
        return [
            (n, line[line.index("#") :])
            for n, line in enumerate(text.splitlines(), 1)
            if "#" in line
        ]


def parse_suppressions(text: str) -> Suppressions:
    """Find every directive; malformed ones become warnings and suppress nothing."""
    result = Suppressions()
    if "noqa" not in text.lower():
        return result
    for line, comment in _comments(text):
        file_match = _FILE.search(comment)
        if file_match is not None:
            codes = _parse_codes(file_match.group("rest"))
            if codes is None:
                result.file_all = True
            elif isinstance(codes, str):
                result.warnings.append(
                    (line, f"malformed `# triton-lint: noqa` directive: {codes}")
                )
            else:
                assert result.file_codes is not None
                result.file_codes |= codes
            continue
        inline = _INLINE.search(comment)
        if inline is None:
            continue
        codes = _parse_codes(inline.group("rest"))
        if isinstance(codes, str):
            result.warnings.append((line, f"malformed `# noqa` directive: {codes}"))
        elif codes is None:
            result.lines[line] = None
        else:
            existing = result.lines.get(line, set())
            result.lines[line] = None if existing is None else existing | codes
    return result


_INLINE_CODES = re.compile(
    r"#\s*noqa\s*:\s*[A-Z]+[0-9]+(?:\s*[,\s]\s*[A-Z]+[0-9]+)*", re.IGNORECASE
)


def noqa_edit(text: str, line: int, code: str) -> tuple[int, int, str] | None:
    """The edit that silences ``code`` on ``line``: ``(start, end, replacement)``, 1-based
    columns on that line, end exclusive.

    A ``# noqa: CODES`` comment already on the line gets the code added to its list; any other
    line gets ``  # noqa: CODE`` at its end. None when no comment can silence it there (the line
    ends inside a string or a backslash continuation, or the file cannot be tokenized): the
    edit is checked by reading the directives of the edited text back.
    """
    lines = split_lines(text)
    if not 1 <= line <= len(lines):
        return None
    body = lines[line - 1].rstrip("\r\n")
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    comment = next(
        (tok for tok in tokens if tok.type == tokenize.COMMENT and tok.start[0] == line), None
    )
    existing = _INLINE_CODES.search(comment.string) if comment is not None else None
    if comment is not None and existing is not None:
        column = comment.start[1] + existing.end()
        edit = (column + 1, column + 1, f", {code}")
    else:
        kept = len(body.rstrip())
        edit = (kept + 1, len(body) + 1, f"  # noqa: {code}")
    start, end, replacement = edit
    edited = body[: start - 1] + replacement + body[end - 1 :]
    new_text = "".join([*lines[: line - 1], edited + lines[line - 1][len(body) :], *lines[line:]])
    try:
        edited_tokens = tokenize.generate_tokens(io.StringIO(new_text).readline)
        if any(tok.type == tokenize.ERRORTOKEN for tok in edited_tokens):
            return None
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    if not parse_suppressions(new_text).suppresses(line, code):
        return None
    return edit
