"""Fast traversal of libcst trees.

``CSTNode.children`` and ``CSTVisitor`` run a visitor object over every node, which costs more
than parsing on large kernels. Reading the dataclass fields directly is several times faster.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from functools import cache

import libcst as cst


@cache
def _field_names(node_type: type) -> tuple[str, ...]:
    return tuple(
        f.name
        for f in dataclasses.fields(node_type)
        if not f.name.startswith(("whitespace", "lpar", "rpar"))
    )


def iter_children(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Direct children of ``node`` in source order (whitespace and parentheses skipped)."""
    for name in _field_names(type(node)):
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            yield value
        elif isinstance(value, (tuple, list)):
            for item in value:
                if isinstance(item, cst.CSTNode):
                    yield item


def iter_nodes(node: cst.CSTNode, *, skip: tuple[type, ...] = ()) -> Iterator[cst.CSTNode]:
    """``node`` and all its descendants, depth first; subtrees of ``skip`` types are not entered."""
    pending = [node]
    while pending:
        current = pending.pop()
        yield current
        if current is not node and isinstance(current, skip):
            continue
        children = list(iter_children(current))
        pending.extend(reversed(children))
