"""The part of another file of the project that a kernel file's lint reads: the top-level
statements that launch its kernels or call a launching function, the functions and classes
those name (helpers whose checks hold before a call), and every other top-level statement
(imports, constants); the bodies of the other functions and classes become blank lines.

libcst builds its tree at about 1 MB/s: a model file of 80 KB that calls one launching
function costs more to parse whole than the kernel file's own lint. Blank lines keep every
kept line where it was, so positions, spans and the text of kept lines are those of the file.
"""

from __future__ import annotations

import ast
import re

from triton_lint.model.project import ProjectContext

_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
_WORD = re.compile(r"[A-Za-z_]\w*")
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def wanted_names(project: ProjectContext, path: str) -> frozenset[str]:
    """The last components of the names ``path``'s launches and calls are found by."""
    dotted = set(project.kernel_refs.get(path, ()))
    for by_file in project.callers.values():
        dotted.update(by_file.get(path, ()))
    return frozenset(name.rsplit(".", 1)[-1] for name in dotted)


def relevant_text(text: str, names: frozenset[str]) -> tuple[str, set[str]]:
    """``text`` with the top-level functions and classes that neither use one of ``names``
    (followed by ``[`` or ``(``) nor are named by a statement that does made blank, and the
    names of those made blank (still module-level names of the file); ``text`` itself when
    it does not parse (libcst reports why)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return text, set()
    if not names:
        return text, set()
    lines = _LINES.findall(text)
    pattern = re.compile(rf"\b(?:{'|'.join(map(re.escape, sorted(names)))})\s*\)?\s*[\[(]")
    used = {text.count("\n", 0, m.start()) + 1 for m in pattern.finditer(text)}
    if "\r" in text:  # a lone \r ends a line too
        used = {_line_of(lines, m.start()) for m in pattern.finditer(text)}
    spans = [(_first_line(node), node.end_lineno or node.lineno, node) for node in tree.body]
    kept = [
        not isinstance(node, _SCOPES) or any(first <= line <= last for line in used)
        for first, last, node in spans
    ]
    words = {
        word
        for (first, last, _), keep in zip(spans, kept, strict=True)
        if keep
        for line in lines[first - 1 : last]
        for word in _WORD.findall(line)
    }
    dropped: set[str] = set()
    for position, (first, last, node) in enumerate(spans):
        if kept[position] or _defines(node) & words:
            continue
        dropped.add(node.name)  # type: ignore[attr-defined]
        for index in range(first - 1, min(last, len(lines))):
            line = lines[index]
            lines[index] = line[len(line.rstrip("\r\n")) :]
    return ("".join(lines), dropped) if dropped else (text, dropped)


def _first_line(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", [])
    return min([node.lineno, *(d.lineno for d in decorators)])


def _defines(node: ast.stmt) -> set[str]:
    """The names a top-level function or class gives the file's helpers: its own and, for
    a class, its methods' (the model's helper table holds methods by their bare names)."""
    names = {node.name} if isinstance(node, _SCOPES) else set()
    if isinstance(node, ast.ClassDef):
        names.update(s.name for s in node.body if isinstance(s, _SCOPES))
    return names


def _line_of(lines: list[str], offset: int) -> int:
    position = 0
    for number, line in enumerate(lines, start=1):
        position += len(line)
        if offset < position:
            return number
    return len(lines)
