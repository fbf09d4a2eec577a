"""How deep the expressions of a parsed file go, cheaply: libcst's native parser overflows its
stack (the process dies) somewhere past 5,000 levels, and newer Pythons accept such code."""

from __future__ import annotations

import ast

from triton_lint.fingerprint import split_lines

#: The deepest nesting handed to libcst: it parsed 5,000 levels on Python 3.11 and 3.12 and
#: crashed at 8,000 (a sum of 8,000 terms, which Python 3.12 accepts).
SAFE_DEPTH = 4_000


def too_deep(tree: ast.Module, text: str, limit: int | None = None) -> bool:
    """Whether any expression of ``tree`` nests more than ``limit`` levels (`SAFE_DEPTH`).

    A level takes at least one character, so only pieces of source at least ``limit`` bytes
    long are walked node by node; the rest is skipped by the positions Python recorded.
    """
    limit = SAFE_DEPTH if limit is None else limit
    starts = [0]
    for line in split_lines(text):
        starts.append(starts[-1] + len(line.encode("utf-8", "surrogatepass")))
    pending: list[ast.AST] = list(tree.body)
    while pending:
        node = pending.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt):
                pending.append(child)
            elif not hasattr(child, "end_lineno"):
                pending.append(child)  # a wrapper without positions: `arguments`, `withitem`
            elif _length(child, starts) >= limit and _depth(child, limit) > limit:
                return True
    return False


def _length(node: ast.AST, starts: list[int]) -> int:
    """The node's source length in bytes (Python's columns count UTF-8 bytes)."""
    end_line = getattr(node, "end_lineno", None) or node.lineno
    end = starts[end_line - 1] + (getattr(node, "end_col_offset", None) or 0)
    return end - (starts[node.lineno - 1] + node.col_offset)


def _depth(root: ast.AST, limit: int) -> int:
    """The nesting depth under ``root``, counted up to just past ``limit``."""
    deepest = 0
    stack = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > deepest:
            deepest = depth
            if deepest > limit:
                break
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return deepest
