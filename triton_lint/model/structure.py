"""Where each node of a kernel sits: its parent, its source order, the ``if`` arms and loops
around it, and the early ``return`` statements before it.

The bottom analysis layer: it reads the kernel's syntax tree and nothing else.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from triton_lint.model.kernel import Definition, Kernel
from triton_lint.model.tree import iter_children


@dataclass(frozen=True)
class Context:
    """Where a node sits: the ``if`` arms and loops around it, by identity."""

    arms: tuple[tuple[int, str], ...]
    loops: tuple[int, ...]


class Structure:
    """Parent links, source order and enclosing branches of one kernel's nodes (cached)."""

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self._parent: dict[int, cst.CSTNode] = {}
        self._pre: dict[int, int] = {}
        self._last: dict[int, int] = {}
        self._build_parents(kernel.node)
        self._context: dict[int, Context] = {}
        self._exits: list[tuple[int, cst.BaseExpression]] | None = None

    def _build_parents(self, root: cst.CSTNode) -> None:
        """Parent links and pre-order numbers (source order) of every node in the kernel.

        The stack holds a node to enter, or the ``id`` (an int) of one whose subtree is done:
        no tuple per push, on the walk every kernel's first analysis pays for."""
        counter = 0
        parents, pre, last = self._parent, self._pre, self._last
        stack: list[cst.CSTNode | int] = [root]
        while stack:
            node = stack.pop()
            if type(node) is int:
                last[node] = counter
                continue
            counter += 1
            key = id(node)
            pre[key] = counter
            stack.append(key)
            kids = iter_children(node)  # type: ignore[arg-type]
            for child in kids:
                parents[id(child)] = node  # type: ignore[assignment]
            stack.extend(reversed(kids))

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self._parent.get(id(node))

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        current = self.parent(node)
        while current is not None and current is not self.kernel.node:
            yield current
            current = self.parent(current)

    def context(self, node: cst.CSTNode) -> Context:
        key = id(node)
        if key not in self._context:
            arms: list[tuple[int, str]] = []
            loops: list[int] = []
            child = node
            for parent in self.ancestors(node):
                kind = type(parent)  # not `isinstance`: ABCMeta checks dominate this loop
                if kind is cst.If or kind is cst.IfExp:
                    if child is parent.body:
                        arms.append((id(parent), "body"))
                    elif child is parent.orelse:
                        arms.append((id(parent), "orelse"))
                elif (kind is cst.For or kind is cst.While) and child is parent.body:
                    loops.append(id(parent))
                child = parent
            self._context[key] = Context(tuple(reversed(arms)), tuple(reversed(loops)))
        return self._context[key]

    def early_exit_tests(self, node: cst.CSTNode) -> list[cst.BaseExpression]:
        """Tests of ``if cond: return`` statements that run before ``node``."""
        position = self.position(node)
        return [test for start, test in self._early_exits() if start < position]

    def _early_exits(self) -> list[tuple[int, cst.BaseExpression]]:
        """(position, test) of every ``if`` whose indented body ends in ``return``."""
        if self._exits is None:
            self._exits = []
            for candidate_id, parent in self._parent.items():
                if type(parent) is not cst.If or id(parent.body) != candidate_id:
                    continue
                body = parent.body
                if not isinstance(body, cst.IndentedBlock):
                    continue
                last = body.body[-1] if body.body else None
                if isinstance(last, cst.SimpleStatementLine) and any(
                    isinstance(small, cst.Return) for small in last.body
                ):
                    self._exits.append((self.position(parent), parent.test))
        return self._exits

    def in_loop(self, node: cst.CSTNode) -> bool:
        """True when ``node`` is inside the body of a ``for``/``while`` loop of the kernel."""
        return bool(self.context(node).loops)

    def position(self, node: cst.CSTNode) -> int:
        """Pre-order number of ``node`` (source order; 0 outside the kernel)."""
        return self._pre.get(id(node), 0)

    def definition_position(self, definition: Definition) -> int:
        """Where a definition takes effect: after its statement (a loop target: its header)."""
        node = definition.node
        if isinstance(node, cst.For):
            return self._last.get(id(node.iter), 0)
        return self._last.get(id(node), 0)

    def definition_anchor(self, definition: Definition) -> cst.CSTNode:
        """The node whose context is the definition's (a loop's target, not its body)."""
        node = definition.node
        return node.target if isinstance(node, cst.For) else node

    def contains(self, node: cst.CSTNode) -> bool:
        """``node`` is inside this kernel's tree (not a rule's or a test's parsed expression)."""
        return id(node) in self._parent
