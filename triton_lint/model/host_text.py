"""The part of another file of the project that a kernel file's lint reads: the top-level
statements and methods that launch its kernels or call a launching function, the functions,
classes and methods those name (helpers whose checks hold before a call), and every other
top-level statement (imports, constants); the other functions, classes and methods become
blank lines.

libcst builds its tree at about 1 MB/s: a model file of 80 KB that calls one launching
function costs more to parse whole than the kernel file's own lint. Blank lines keep every
kept line where it was, so positions, spans and the text of kept lines are those of the file.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_left

from triton_lint.model.project import ProjectContext

_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
#: A name written on its own (not ``obj.name``) where it can name a helper of the file: called
#: (``get_config(M)``), closing a launch's grid (``kern[grid]``) or assigned (``grid = fn``).
_WORD = re.compile(
    r"(?<![\w.])(?<!def )(?<!class )([A-Za-z_]\w*)(?=\s*[(\]]|\s*$)|(?<=[^=!<>]=)\s*([A-Za-z_]\w*)",
    re.M,
)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def wanted_names(project: ProjectContext, path: str) -> frozenset[str]:
    """The last components of the names ``path``'s launches and calls are found by."""
    dotted = set(project.kernel_refs.get(path, ())) | set(project.dispatch_refs.get(path, ()))
    for by_file in project.callers.values():
        dotted.update(by_file.get(path, ()))
    return frozenset(name.rsplit(".", 1)[-1] for name in dotted)


def relevant_text(text: str, names: frozenset[str]) -> tuple[str, set[str]]:
    """``text`` with the top-level functions and classes, and the methods of a class that
    uses one of ``names`` (followed by ``[`` or ``(``; not an autograd function, whose ``ctx``
    flags read every method), that neither use one nor are named by a kept statement made
    blank; and the module-level names made blank (still names of the file). ``text`` itself
    when it does not parse (libcst reports why)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return text, set()
    if not names:
        return text, set()
    lines = _LINES.findall(text)
    names = names | _dispatch_helpers(tree, text, names)
    pattern = re.compile(rf"\b(?:{'|'.join(map(re.escape, sorted(names)))})\s*\)?\s*[\[(]")
    newlines = [m.start() for m in re.finditer("\n", text)]
    used = {bisect_left(newlines, m.start()) + 1 for m in pattern.finditer(text)}
    if "\r" in text:  # a lone \r ends a line too
        used = {_line_of(lines, m.start()) for m in pattern.finditer(text)}

    def uses(first: int, last: int) -> bool:
        return any(first <= line <= last for line in used)

    units: list[tuple[int, int, ast.stmt, bool]] = []  # (first, last, node, top-level)
    kept_lines: list[tuple[int, int]] = []
    for node in tree.body:
        first, last = _first_line(node), node.end_lineno or node.lineno
        if isinstance(node, ast.ClassDef) and uses(first, last) and not _autograd(node):
            kept_lines.append((first, _first_line(node.body[0]) - 1))  # decorators, header
            units += [(_first_line(s), s.end_lineno or s.lineno, s, False) for s in node.body]
        else:
            units.append((first, last, node, True))
    kept = [not isinstance(node, _SCOPES) or uses(first, last) for first, last, node, _ in units]
    kept_lines += [
        (first, last) for (first, last, _, _), keep in zip(units, kept, strict=True) if keep
    ]
    words = {
        word
        for first, last in kept_lines
        for line in lines[first - 1 : last]
        for pair in _WORD.findall(line)
        for word in pair
    }
    dropped: set[str] = set()
    blanked = False
    for position, (first, last, node, top_level) in enumerate(units):
        if kept[position] or _defines(node) & words:
            continue
        blanked = True
        if top_level:
            dropped.add(node.name)  # type: ignore[attr-defined]
        _blank(lines, first, last)
    for first, last in _unread_assignments(units, lines, used):
        blanked = True
        _blank(lines, first, last)
    return ("".join(lines), dropped) if blanked else (text, dropped)


def _blank(lines: list[str], first: int, last: int) -> None:
    """Lines ``first`` to ``last`` (1-based) of ``lines`` made empty, their line ends kept,
    so every later line keeps its number."""
    for index in range(first - 1, min(last, len(lines))):
        line = lines[index]
        lines[index] = line[len(line.rstrip("\r\n")) :]


def _unread_assignments(
    units: list[tuple[int, int, ast.stmt, bool]], lines: list[str], used: set[int]
) -> list[tuple[int, int]]:
    """The lines of the top-level assignments to names that no kept line mentions, even
    through another such assignment that one mentions (``_cache = {}`` next to a launching
    function that never reads it): a statement added at the end of a launching file then
    leaves the digest of what its kernel files' lints read as it was. An assignment on a
    line of ``used`` (a launch, a call of a launching function) or sharing a line with
    another statement is kept. The names stay out of the blank names: nothing
    kept reads them."""
    owners = [0] * (len(lines) + 2)
    for first, last, _, _ in units:
        for line in range(first, min(last, len(lines)) + 1):
            owners[line] += 1
    pending: dict[tuple[int, int], set[str]] = {}
    for first, last, node, top_level in units:
        targets = _assigned(node) if top_level else set()
        span = range(first, min(last, len(lines)) + 1)
        if targets and all(owners[line] == 1 and line not in used for line in span):
            pending[(first, last)] = targets
    if not pending:
        return []
    inside = {line for first, last in pending for line in range(first, last + 1)}
    read = {
        word
        for number, line in enumerate(lines, start=1)
        if number not in inside
        for word in _IDENTIFIER.findall(line)
    }
    changed = True
    while changed:
        changed = False
        for span, targets in list(pending.items()):
            if targets & read:
                del pending[span]
                read.update(
                    word
                    for line in lines[span[0] - 1 : span[1]]
                    for word in _IDENTIFIER.findall(line)
                )
                changed = True
    return sorted(pending)


_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


def _assigned(node: ast.stmt) -> set[str]:
    """The names a plain top-level assignment binds (``X = ...``, ``a, b = ...``,
    ``X: int = ...``); none for any other statement."""
    if isinstance(node, ast.AnnAssign):
        targets = [node.target]
    elif isinstance(node, ast.Assign):
        targets = node.targets
    else:
        return set()
    names: set[str] = set()
    for target in targets:
        parts = target.elts if isinstance(target, ast.Tuple | ast.List) else [target]
        if not all(isinstance(part, ast.Name) for part in parts):
            return set()
        names.update(part.id for part in parts)  # type: ignore[attr-defined]
    return names


def _dispatch_helpers(tree: ast.Module, text: str, names: frozenset[str]) -> set[str]:
    """Top-level functions that ``return`` one of ``names`` (a kernel a dispatch helper
    picks): the statements that call them launch it (`triton_lint.model.dispatch`)."""
    alternatives = "|".join(map(re.escape, sorted(names)))
    returning = re.compile(
        rf"^[ \t]*return[ \t]+(?:[\w.]+\.)?(?:{alternatives})[ \t]*(?:#.*)?$", re.M
    )
    lines = {text.count("\n", 0, m.start()) + 1 for m in returning.finditer(text)}
    return {
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
        and any(node.lineno <= line <= (node.end_lineno or node.lineno) for line in lines)
    }


def _autograd(node: ast.ClassDef) -> bool:
    """A class with ``forward`` and ``backward`` methods: the ``ctx`` flags read all of it."""
    methods = {s.name for s in node.body if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)}
    return {"forward", "backward"} <= methods


def _first_line(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", [])
    return min([node.lineno, *(d.lineno for d in decorators)])


def _defines(node: ast.stmt) -> set[str]:
    """The names under which the model's helper table (`ModuleModel.functions`) holds a
    function or class: a function's own name, a class's methods' bare names (a class's own
    name calls its constructor, which has no checks the caller facts read)."""
    if isinstance(node, ast.ClassDef):
        return {s.name for s in node.body if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)}
    return {node.name} if isinstance(node, _SCOPES) else set()


def _line_of(lines: list[str], offset: int) -> int:
    position = 0
    for number, line in enumerate(lines, start=1):
        position += len(line)
        if offset < position:
            return number
    return len(lines)
