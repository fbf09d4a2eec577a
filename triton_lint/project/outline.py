"""A file's outline read line by line, without a syntax tree: its imports, its top-level names
and kernels, and which function each line belongs to. The project index reads every file of
a Triton project this way: building even the stdlib's tree of each costs more than linting
the kernels that need one, and the index asks only where names are imported, defined and
used. What the lines cannot say (a ``def`` in a multi-line string) makes a name unresolved,
never a wrong fact: the kernel file's lint reads the launch again from libcst's tree.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

_DEF = re.compile(r"(?:async\s+)?def\s+(\w+)")
_CLASS = re.compile(r"class\s+(\w+)")
_ASSIGN = re.compile(r"(\w+)\s*(?::[^=]*)?=(?!=)")
_IMPORT = re.compile(r"import\s+(.+)")
_FROM = re.compile(r"from\s+(\.*)([\w.]*)\s+import\s+(.+)")
#: A decorator whose last name contains ``jit`` (as the engine's prefilter reads one).
_JIT = re.compile(r"@\s*(?:\w+\s*\.\s*)*\w*jit\w*\b(?!\s*\.)")
_STRINGS = re.compile(r"'''|\"\"\"|'(?:\\.|[^'\\])*'|\"(?:\\.|[^\"\\])*\"|#.*")
_PREFIX = re.compile(r"(?:[A-Za-z_]\w*[ \t]*\.[ \t]*)+$")
#: First characters of the statements read inside a class or function (`@`, ``def``,
#: ``async def``, ``class``, ``import``, ``from``).
_OPENERS = frozenset("@dacif")
_IMPORTS = ("import", "from")


@dataclass
class Outline:
    """What the index needs of one file."""

    imports: dict[str, str] = field(default_factory=dict)  # local name -> dotted target
    relative: dict[str, tuple[int, str]] = field(default_factory=dict)  # name -> (level, path)
    defined: set[str] = field(default_factory=set)
    kernels: set[str] = field(default_factory=set)
    #: qualified name of the innermost function holding each line ("" outside functions)
    scopes: list[str] = field(default_factory=list)


def outline(text: str) -> Outline:
    """Read ``text``'s outline in one pass over its lines."""
    found = Outline()
    stack: list[tuple[int, str, bool]] = []  # (indent, qualified name, is a function)
    decorators: list[str] = []
    depth = 0  # open brackets: continuation lines do not open or close scopes
    quote: str | None = None  # inside a triple-quoted string
    pending = ""  # a statement continued over lines (an import in parentheses)
    scope = ""
    scopes = found.scopes
    for line in text.splitlines():
        code, quote = _code_of(line, quote)
        stripped = code.strip()
        if depth == 0 and stripped:
            indent = len(code) - len(code.lstrip())
            innermost = stack[-1] if stack else None
            while stack and stack[-1][0] >= indent:
                stack.pop()
            if not stack or stripped[0] in _OPENERS:  # inside a function: only defs matter
                _statement(found, stripped, indent, stack, decorators)
            elif decorators:
                decorators.clear()
            if (stack[-1] if stack else None) is not innermost:
                scope = next((n for _, n, f in reversed(stack) if f), "")
            pending = stripped if stripped[0] in "if" and stripped.startswith(_IMPORTS) else ""
        elif pending:
            pending += " " + stripped
        scopes.append(scope)
        if "(" in code or ")" in code or "[" in code or "]" in code or "{" in code or "}" in code:
            depth = max(0, depth + _balance(code))
        if pending and depth == 0:
            _import(found, pending, stack)
            pending = ""
    return found


def _code_of(line: str, quote: str | None) -> tuple[str, str | None]:
    """The line without strings and comments, and the triple quote still open after it."""
    if quote is None and "'" not in line and '"' not in line and "#" not in line:
        return line, None
    if quote is not None:
        end = line.find(quote)
        if end < 0:
            return "", quote
        line = " " * (end + 3) + line[end + 3 :]
    parts: list[str] = []
    position = 0
    for match in _STRINGS.finditer(line):
        token = match.group()
        if match.start() < position:
            continue
        if token in ("'''", '"""'):
            end = line.find(token, match.end())
            if end < 0:
                parts.append(line[position : match.start()])
                return "".join(parts), token
            parts.append(line[position : match.start()] + '""')
            position = end + 3
            continue
        parts.append(line[position : match.start()] + ('""' if token[0] != "#" else ""))
        position = match.end()
    parts.append(line[position:])
    return "".join(parts), None


def _balance(code: str) -> int:
    return (
        code.count("(")
        + code.count("[")
        + code.count("{")
        - code.count(")")
        - code.count("]")
        - code.count("}")
    )


def _statement(
    found: Outline,
    stripped: str,
    indent: int,
    stack: list[tuple[int, str, bool]],
    decorators: list[str],
) -> None:
    if stripped.startswith("@"):
        decorators.append(stripped)
        return
    top = not stack
    outer_function = any(function for _, _, function in stack)
    prefix = stack[-1][1] if stack else ""
    if (match := _DEF.match(stripped)) is not None:
        name = match.group(1)
        qualified = f"{prefix}.<locals>.{name}" if outer_function else f"{prefix}.{name}"
        stack.append((indent, qualified.lstrip("."), True))
        if top:
            found.defined.add(name)
            if any(_JIT.match(d) for d in decorators):
                found.kernels.add(name)
    elif (match := _CLASS.match(stripped)) is not None:
        stack.append((indent, f"{prefix}.{match.group(1)}".lstrip("."), False))
        if top:
            found.defined.add(match.group(1))
    elif top and (match := _ASSIGN.match(stripped)) is not None:
        found.defined.add(match.group(1))
    decorators.clear()


def _import(found: Outline, statement: str, stack: list[tuple[int, str, bool]]) -> None:
    del stack  # imports anywhere bind names the file's calls may use
    statement = statement.replace("(", " ").replace(")", " ").replace("\\", " ")
    if (match := _FROM.match(statement)) is not None:
        dots, base, names = match.groups()
        for local, name in _aliases(names):
            if name == "*":
                continue
            if dots:
                found.relative[local] = (len(dots), f"{base}.{name}" if base else name)
            else:
                found.imports[local] = f"{base}.{name}"
    elif (match := _IMPORT.match(statement)) is not None:
        for local, name in _aliases(match.group(1)):
            found.imports[local] = name if local != name.split(".")[0] else local
            if local == name.split(".")[0] and "." in name:
                found.imports[local] = local


def _aliases(names: str) -> Iterator[tuple[str, str]]:
    for part in names.split(","):
        words = part.split()
        if len(words) == 3 and words[1] == "as":
            yield words[2], words[0]
        elif len(words) == 1:
            yield words[0].split(".")[0] if "." in words[0] else words[0], words[0]


def line_starts(text: str) -> list[int]:
    """The offset of each line's first character."""
    return [0, *(m.end() for m in re.finditer("\n", text))]


def occurrences(
    text: str, starts: list[int], names: set[str], after: str
) -> Iterator[tuple[int, str]]:
    """(line index, dotted name) of each of ``names`` (last component) written with its
    dotted prefix and followed by ``after``: ``K.kern[``, ``self.op(`` (``starts``: the
    offsets of the lines, from `line_starts`). Each name is found by a plain substring
    search (a regular expression of many alternatives tries each at every position)."""
    following = _following(after)
    found: list[tuple[int, str]] = []
    for name in names:
        start = text.find(name)
        while start >= 0:
            end = start + len(name)
            if (start == 0 or not _is_word(text[start - 1])) and following.match(text, end):
                found.append((start, name))
            start = text.find(name, end)
    for start, name in sorted(found):
        prefix = ""
        line = max(text.rfind("\n", 0, start) + 1, start - 200)  # a prefix is on one line
        if text[line:start].rstrip(" \t").endswith("."):
            before = _PREFIX.search(text, line, start)
            prefix = re.sub(r"\s+", "", before.group()) if before is not None else ""
        yield bisect.bisect_right(starts, start) - 1, prefix + name


def _is_word(character: str) -> bool:
    return character.isalnum() or character == "_"


@functools.lru_cache(maxsize=8)
def _following(after: str) -> re.Pattern[str]:
    return re.compile(after)
