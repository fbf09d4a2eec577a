"""Which lines of a kernel load from or store to a pointer parameter (child only, CUDA backend).

A native run knows which tensor was touched out of bounds (its red zone changed) but not by
which instruction. The kernel's source says which accesses can reach that tensor: the loads,
stores and atomics whose pointer expression derives from the parameter the tensor was passed as.
Derivation is read flow-insensitively through assignments, which is enough to name the line.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from functools import cache
from typing import Any

_READS = frozenset({"load"})
_WRITES = frozenset(
    {"store", "atomic_add", "atomic_max", "atomic_min", "atomic_xchg", "atomic_cas"}
)
_WRITES_ALSO = frozenset({"atomic_and", "atomic_or", "atomic_xor"})


def python_function(kernel: Any) -> Any:
    """The Python function under a JITFunction, Autotuner or Heuristics wrapper."""
    fn = kernel
    for _ in range(8):
        inner = getattr(fn, "fn", None)
        if inner is None:
            break
        fn = inner
    return fn


@cache
def _accesses(fn: Any) -> tuple[str, tuple[tuple[str, int, frozenset[str]], ...]]:
    """(file, ((op, absolute line, names the pointer expression uses), ...))."""
    try:
        lines, start = inspect.getsourcelines(fn)
        path = inspect.getsourcefile(fn) or ""
    except (OSError, TypeError):
        return "", ()
    try:
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except SyntaxError:
        return path, ()
    derived: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            used = _names(node.value)
            for target in targets:
                for name in _names(target):
                    derived.setdefault(name, set()).update(used)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        op = node.func.attr
        if op not in _READS | _WRITES | _WRITES_ALSO:
            continue
        pointer = (
            node.args[0]
            if node.args
            else next((k.value for k in node.keywords if k.arg in ("pointer", "ptr")), None)
        )
        if pointer is None:
            continue
        found.append((op, start + node.lineno - 1, frozenset(_closure(_names(pointer), derived))))
    return path, tuple(sorted(found, key=lambda a: a[1]))


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _closure(names: set[str], derived: dict[str, set[str]]) -> set[str]:
    seen = set(names)
    todo = list(names)
    while todo:
        for source in derived.get(todo.pop(), ()):
            if source not in seen:
                seen.add(source)
                todo.append(source)
    return seen


def access_lines(kernel: Any, param: str, write: bool) -> tuple[str, list[int]]:
    """(file, lines) of the stores/atomics (`write`) or loads that can touch `param`."""
    path, accesses = _accesses(python_function(kernel))
    ops = _WRITES | _WRITES_ALSO if write else _READS
    return path, [line for op, line, names in accesses if op in ops and param in names]
