"""The part of another file of the project that a kernel file's lint reads: the top-level
statements and methods that launch its kernels or call a launching function, the functions,
classes and methods those name (helpers whose checks hold before a call), and every other
top-level statement (imports, constants); the other functions, classes and methods become
blank lines. In a kept function that does not launch, the statements no caller fact reads
(`_unread`: neither on the way to a call, nor a check, nor binding a name the kept ones
read) become blank lines too.

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
#: Statements a helper's readers take from its whole body (its checks, what it returns).
_EXITS = (ast.Return, ast.Raise, ast.Assert, ast.Yield, ast.YieldFrom, ast.Break, ast.Continue)
#: Compound statements whose body the walk to a call enters (`callers._path_to`).
_PATH = (ast.If, ast.For, ast.While, ast.With)


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
    helpers = {
        n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    words = _words(lines, kept_lines, set())
    tails = [
        _unread(node, lines, names, helpers)
        if isinstance(node, ast.FunctionDef) and (keep or _defines(node) & words)
        else []
        for (_, _, node, _), keep in zip(units, kept, strict=True)
    ]
    skipped = {index for tail in tails for first, last in tail for index in range(first, last + 1)}
    words = _words(lines, kept_lines, skipped)
    dropped: set[str] = set()
    blanked = bool(skipped)
    for first, last in (span for tail in tails for span in tail):
        for index in range(first - 1, min(last, len(lines))):
            lines[index] = lines[index][len(lines[index].rstrip("\r\n")) :]
    for position, (first, last, node, top_level) in enumerate(units):
        if kept[position] or _defines(node) & words:
            continue
        blanked = True
        if top_level:
            dropped.add(node.name)  # type: ignore[attr-defined]
        for index in range(first - 1, min(last, len(lines))):
            line = lines[index]
            lines[index] = line[len(line.rstrip("\r\n")) :]
    return ("".join(lines), dropped) if blanked else (text, dropped)


def _unread(
    function: ast.FunctionDef, lines: list[str], names: frozenset[str], helpers: set[str]
) -> list[tuple[int, int]]:
    """The line spans of the statements of ``function`` that no caller fact reads. Kept: the
    statements that name one of ``names``, where an ``if``, ``for``, ``while`` or ``with``
    that names one in its body keeps its header and, in that body, what this keeps (the walk
    to a call, `callers._path_to`); the statements that return, raise, assert, ``break`` or
    ``continue`` (a helper's readers take its checks and what it returns; early exits); those
    that call a function of the file by its bare name (``get_config(M)``: its checks hold
    after it); a docstring; those after a ``return`` or ``raise`` of their block
    (`dispatch.leaves` reads a block's last statement); and those binding a name a kept
    statement reads or binds (`host.function_facts` counts every binding of a name in the
    function; a name bound once is a single definition). Nothing for a function that
    launches (``kern[grid](...)``, ``.run(``: launch facts read all of it) or declares
    ``global``/``nonlocal`` names."""
    first, last = _first_line(function), function.end_lineno or function.lineno
    source = "".join(lines[first - 1 : last])
    if "](" in source.replace(" ", "") or ".run(" in source:
        return []
    if any(isinstance(n, ast.Global | ast.Nonlocal) for n in ast.walk(function)):
        return []
    mention = re.compile(rf"\b(?:{'|'.join(map(re.escape, sorted(names)))})\b")
    read = _names_in(list(ast.walk(function.args)))
    candidates: list[tuple[tuple[int, int], list[ast.AST]]] = []

    def named(start: int, end: int) -> bool:
        return any(mention.search(line) for line in lines[start - 1 : end])

    def walk(block: list[ast.stmt]) -> None:
        spans = [(_first_line(s), s.end_lineno or s.lineno) for s in block]
        exits = [i for i, s in enumerate(block) if isinstance(s, ast.Return | ast.Raise)]
        tail = exits[-1] if exits else len(block)  # dead code after it: `dispatch.leaves`
        for index, stmt in enumerate(block):
            start, end = spans[index]
            nodes = list(ast.walk(stmt))
            shared = (index > 0 and start <= spans[index - 1][1]) or (
                index + 1 < len(block) and spans[index + 1][0] <= end
            )
            inner = stmt.body if isinstance(stmt, _PATH) else []
            if (
                not shared
                and inner
                and _first_line(inner[0]) > _header_end(stmt)
                and named(_first_line(inner[0]), inner[-1].end_lineno or inner[-1].lineno)
            ):
                read.update(_names_in(_outside(stmt, inner)))
                walk(inner)
            elif (
                shared
                or index > tail
                or (index == 0 and _docstring(stmt))
                or named(start, end)
                or any(isinstance(n, _EXITS) or _helper_call(n, helpers) for n in nodes)
            ):
                read.update(_names_in(nodes))
            else:
                candidates.append((spans[index], nodes))

    walk(function.body)
    changed = True
    while changed:  # a kept statement's names are read too
        changed = False
        for candidate in list(candidates):
            if read & {name for n in candidate[1] for name in _binds(n)}:
                candidates.remove(candidate)
                read.update(_names_in(candidate[1]))
                changed = True
    tops = {(_first_line(s), s.end_lineno or s.lineno) for s in function.body}
    if len(tops) - sum(span in tops for span, _ in candidates) < 2:
        return []  # a one-statement helper is read as a predicate (`predicates`)
    return [span for span, _ in candidates]


def _docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)


def _header_end(stmt: ast.stmt) -> int:
    """The last line of a compound statement's header (its test, target, items)."""
    nodes = [getattr(stmt, field, None) for field in ("test", "target", "iter")]
    for item in getattr(stmt, "items", ()):
        nodes += [item.context_expr, item.optional_vars]
    return max([stmt.lineno, *(n.end_lineno or n.lineno for n in nodes if n is not None)])


def _outside(stmt: ast.stmt, body: list[ast.stmt]) -> list[ast.AST]:
    """The nodes of ``stmt`` but those of ``body`` (its header, its ``else``)."""
    inside = {id(n) for s in body for n in ast.walk(s)}
    return [n for n in ast.walk(stmt) if id(n) not in inside]


def _words(lines: list[str], spans: list[tuple[int, int]], skipped: set[int]) -> set[str]:
    """The names `_WORD` finds on the lines of ``spans`` but those in ``skipped``."""
    return {
        word
        for first, last in spans
        for number in range(first, min(last, len(lines)) + 1)
        if number not in skipped
        for pair in _WORD.findall(lines[number - 1])
        for word in pair
    }


def _names_in(nodes: list[ast.AST]) -> set[str]:
    return {n.id for n in nodes if isinstance(n, ast.Name)} | {
        name for n in nodes for name in _binds(n)
    }


def _helper_call(node: ast.AST, helpers: set[str]) -> bool:
    return (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in helpers
    )


def _binds(node: ast.AST) -> list[str]:
    """The names ``node`` binds, deletes or declares (a conservative superset)."""
    if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
        return [node.id]
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.alias):
        return [(node.asname or node.name).split(".")[0]]
    if isinstance(node, ast.Global | ast.Nonlocal):
        return list(node.names)
    if isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
        return [node.name]
    if isinstance(node, ast.arg):
        return [node.arg]
    return []


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
