"""Fast traversal of libcst trees.

``CSTNode.children`` and ``CSTVisitor`` run a visitor object over every node, which costs more
than parsing on large kernels. Reading the dataclass fields directly is several times faster.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import cache
from typing import Any

import libcst as cst


@cache
def _field_names(node_type: type) -> tuple[str, ...]:
    return tuple(
        f.name
        for f in dataclasses.fields(node_type)
        if not f.name.startswith(("whitespace", "lpar", "rpar"))
    )


def iter_children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """Direct children of ``node`` in source order (whitespace and parentheses skipped).

    A list, not a generator: every caller consumes all of them, and this is the hottest
    function of a run (`_children_reader`)."""
    reader = _READERS.get(type(node))
    if reader is None:
        reader = _READERS[type(node)] = _children_reader(type(node))
    return reader(node)


class _NodeTypes(dict[type, bool]):
    """Type -> whether it is a CST node, filled on first sight. ``isinstance`` against
    libcst's abstract base classes goes through ``ABCMeta`` and dominated the walks' cost."""

    def __missing__(self, value_type: type) -> bool:
        known = self[value_type] = issubclass(value_type, cst.CSTNode)
        return known


_NODE_TYPES = _NodeTypes()
_READERS: dict[type, Callable[[cst.CSTNode], list[cst.CSTNode]]] = {}


def _children_reader(node_type: type) -> Callable[[cst.CSTNode], list[cst.CSTNode]]:
    """A function reading the child fields of one node type, one attribute read per field:
    a loop over the field names with ``getattr`` cost a third more per call."""
    if node_type is cst.IfExp:  # `body if test else orelse`: fields are test-first
        return lambda node: [node.body, node.test, node.orelse]  # type: ignore[attr-defined]
    lines = ["def children(node):", "    out = []"]
    for name in _field_names(node_type):
        lines += [
            f"    value = node.{name}",
            "    kind = type(value)",
            "    if kind is tuple or kind is list:",
            "        out += [item for item in value if NODES[type(item)]]",
            "    elif NODES[kind]:",
            "        out.append(value)",
        ]
    lines.append("    return out")
    namespace: dict[str, Any] = {"NODES": _NODE_TYPES}
    exec("\n".join(lines), namespace)  # field names are identifiers of libcst's dataclasses
    return namespace["children"]


def iter_nodes(node: cst.CSTNode, *, skip: tuple[type, ...] = ()) -> Iterator[cst.CSTNode]:
    """``node`` and all its descendants, depth first; subtrees of ``skip`` types are not entered."""
    pending = [node]
    while pending:
        current = pending.pop()
        yield current
        if skip and current is not node and _is_skipped(type(current), skip):
            continue
        pending.extend(reversed(iter_children(current)))


@cache
def _is_skipped(node_type: type, skip: tuple[type, ...]) -> bool:
    """``issubclass`` once per node type: through ``ABCMeta`` it cost more than the walk."""
    return issubclass(node_type, skip)


#: The ``assert`` and ``if`` statements under a statement in walk order, the ids of those
#: ``if`` statements whose body raises, and for each call the ids of those whose body holds it.
BranchTests = tuple[list[cst.CSTNode], set[int], dict[int, tuple[int, ...]]]


def branch_tests(top: cst.CSTNode) -> BranchTests:
    """One walk of ``top`` that every launch in it reads its asserts and ``if`` tests from
    (`LaunchSite.holding_tests`): walking a class per launch in it cost more than the rules."""
    tests: list[cst.CSTNode] = []
    raising: set[int] = set()
    around: dict[int, tuple[int, ...]] = {}
    pending: list[tuple[cst.CSTNode, tuple[int, ...]]] = [(top, ())]
    while pending:
        node, ifs = pending.pop()
        kind = type(node)
        if kind is cst.Call:
            around[id(node)] = ifs
        elif kind is cst.Raise:
            raising.update(ifs)
        elif kind is cst.Assert:
            tests.append(node)
        elif kind is cst.If:
            tests.append(node)
            body = node.body  # type: ignore[attr-defined]
            inner = (*ifs, id(node))
            children = iter_children(node)
            pending.extend((c, inner if c is body else ifs) for c in reversed(children))
            continue
        pending.extend((child, ifs) for child in reversed(iter_children(node)))
    return tests, raising, around


class FieldVisitor:
    """A visitor over the dataclass fields (see the module docstring for why not ``CSTVisitor``).

    ``visit_<NodeType>(node)`` is called for each node that has one; returning ``False`` skips
    the node's children. Subclasses walk a subtree with `walk`.
    """

    def walk(self, node: cst.CSTNode) -> None:
        pending = [node]
        while pending:
            current = pending.pop()
            method = _visit_method(type(self), type(current))
            if method is not None and method(self, current) is False:
                continue
            pending.extend(reversed(iter_children(current)))


@cache
def _visit_method(visitor: type, node_type: type) -> Callable[..., bool | None] | None:
    return getattr(visitor, f"visit_{node_type.__name__}", None)


def statement_blocks(node: cst.CSTNode) -> Iterator[cst.BaseSuite]:
    """The blocks of a compound statement: body, ``elif``/``else`` arms, handlers, finally."""
    body = getattr(node, "body", None)
    if isinstance(body, cst.BaseSuite):
        yield body
    orelse = getattr(node, "orelse", None)
    if isinstance(orelse, cst.If):
        yield from statement_blocks(orelse)
    elif orelse is not None and isinstance(getattr(orelse, "body", None), cst.BaseSuite):
        yield orelse.body
    for handler in getattr(node, "handlers", ()):
        yield handler.body
    final = getattr(node, "finalbody", None)
    if final is not None:
        yield final.body


def block_statements(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Statements directly inside the indented blocks of a compound statement."""
    for block in statement_blocks(node):
        if isinstance(block, cst.IndentedBlock):
            yield from block.body


def iter_small_statements(body: Sequence[cst.CSTNode]) -> Iterator[cst.BaseSmallStatement]:
    """Every small statement (assignment, import, ...) in ``body`` and nested blocks."""
    pending = list(reversed(body))
    while pending:
        node = pending.pop()
        if isinstance(node, cst.SimpleStatementLine):
            yield from node.body
            continue
        for block in statement_blocks(node):
            if isinstance(block, cst.SimpleStatementSuite):
                yield from block.body
            elif isinstance(block, cst.IndentedBlock):
                pending.extend(reversed(block.body))


def product_factors(expr: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    """The factors of a product chain: ``a * b * c`` gives ``a``, ``b``, ``c`` (any other
    expression is its own one factor)."""
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Multiply):
        yield from product_factors(expr.left)
        yield from product_factors(expr.right)
    else:
        yield expr


def keyword_arg(call: cst.Call, name: str) -> cst.BaseExpression | None:
    """The value of ``name=...`` in ``call``, or None."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    return None


class Worklist:
    """Nodes to visit once each (by identity), last added first: the loop of every walk that
    follows values through definitions (``for node in work: ... work.extend(...)``)."""

    def __init__(self, *start: cst.CSTNode) -> None:
        self._pending = list(start)
        self._seen: set[int] = set()

    def __iter__(self) -> Iterator[cst.CSTNode]:
        while self._pending:
            node = self._pending.pop()
            if id(node) not in self._seen:
                self._seen.add(id(node))
                yield node

    def append(self, node: cst.CSTNode) -> None:
        self._pending.append(node)

    def extend(self, nodes: Iterable[cst.CSTNode]) -> None:
        self._pending.extend(nodes)


#: A statement on the way to a call: run before it (False), or holding it in its body (True).
PathStep = tuple[cst.BaseStatement, bool]
_ENTERED = (cst.If, cst.For, cst.While, cst.With, cst.Try)
#: A way as a linked list, last step first: ``(way before it, step)``, ``None`` for no step.
_Link = tuple["_Link", PathStep] | None


class BlockPaths(Mapping[int, tuple[PathStep, ...]]):
    """Each call's way (see `block_paths`), by the call's id. Ways are kept as linked steps that
    share their common start, and a call's tuple is built when it is first read: a tuple per
    statement of a block copied every statement before it, quadratic in a long caller."""

    def __init__(self, links: dict[int, _Link]) -> None:
        self._links = links
        self._built: dict[int, tuple[PathStep, ...]] = {}

    def __getitem__(self, call_id: int) -> tuple[PathStep, ...]:
        link = self._links[call_id]
        built = self._built.get(id(link))
        if built is None:
            steps: list[PathStep] = []
            rest = link
            while rest is not None:
                rest, step = rest
                steps.append(step)
            built = self._built[id(link)] = tuple(reversed(steps))
        return built

    def __iter__(self) -> Iterator[int]:
        return iter(self._links)

    def __len__(self) -> int:
        return len(self._links)


def block_paths(function: cst.FunctionDef) -> BlockPaths:
    """For each call under ``function``, by id, the statements on the way to it: in each block
    from the function's body inwards, ``(stmt, False)`` for the statements before the one that
    holds the call, then ``(stmt, True)`` where that one is an ``if``/``for``/``while``/``with``/
    ``try`` whose body holds it (the way goes on in that body), else the way ends there. One
    walk of the function, linear in its nodes, that every call's caller facts read
    (`triton_lint.model.callers`): a walk per call and per fact was quadratic in a long caller's
    statements."""
    links: dict[int, _Link] = {}

    def record(node: cst.CSTNode, link: _Link) -> None:
        for found in iter_nodes(node):
            if type(found) is cst.Call:
                links[id(found)] = link

    pending: list[tuple[cst.BaseSuite, _Link]] = [(function.body, None)]
    while pending:
        block, before = pending.pop()
        if not isinstance(block, cst.IndentedBlock):
            continue
        for stmt in block.body:
            if isinstance(stmt, _ENTERED):
                inner = stmt.body
                path: _Link = (before, (stmt, True))
                if isinstance(inner, cst.IndentedBlock):
                    pending.append((inner, path))
                else:
                    record(inner, path)
                for child in iter_children(stmt):
                    if child is not inner:
                        record(child, before)
            else:
                record(stmt, before)
            before = (before, (stmt, False))
    return BlockPaths(links)
