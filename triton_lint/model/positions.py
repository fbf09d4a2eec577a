"""Source positions, computed only for the statements that need them.

libcst's position metadata roughly triples parse cost when computed for a whole module, so
positions are resolved per top-level statement (a kernel, or a host function with a launch)
and shifted by that statement's line offset. The offsets come from the stdlib ``ast`` (five
times faster than libcst), falling back to code generation if ``ast`` disagrees.
"""

from __future__ import annotations

import ast

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from triton_lint.finding import Span


class Positions:
    """Lazily maps nodes of a parsed module to 1-based spans."""

    def __init__(self, module: cst.Module, text: str) -> None:
        self._module = module
        self._text = text
        self._lines: dict[int, tuple[int, int, int]] | None = None
        self._ranges: dict[int, dict[cst.CSTNode, CodeRange]] = {}

    def line_info(self) -> dict[int, tuple[int, int, int]]:
        """id(top-level statement) -> (line offset, first line, last line) in the file."""
        if self._lines is None:
            self._lines = self._from_ast() or self._from_codegen()
        return self._lines

    def _from_ast(self) -> dict[int, tuple[int, int, int]] | None:
        try:
            tree = ast.parse(self._text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        nodes = tree.body
        info: dict[int, tuple[int, int, int]] = {}
        index = 0
        for stmt in self._module.body:
            count = len(stmt.body) if isinstance(stmt, cst.SimpleStatementLine) else 1
            group = nodes[index : index + count]
            index += count
            if len(group) != count:
                return None
            first_node = group[0]
            decorators = getattr(first_node, "decorator_list", [])
            first = min([first_node.lineno, *(d.lineno for d in decorators)])
            last = group[-1].end_lineno or first
            offset = first - 1 - len(getattr(stmt, "leading_lines", ()))
            info[id(stmt)] = (offset, first, last)
        return info if index == len(nodes) else None

    def _from_codegen(self) -> dict[int, tuple[int, int, int]]:
        code_for = self._module.code_for_node
        line = sum(code_for(item).count("\n") for item in self._module.header)
        info: dict[int, tuple[int, int, int]] = {}
        for stmt in self._module.body:
            lines = code_for(stmt).count("\n")
            info[id(stmt)] = (line, line + 1, line + lines)
            line += lines
        return info

    def _ranges_for(self, stmt: cst.CSTNode) -> dict[cst.CSTNode, CodeRange]:
        key = id(stmt)
        if key not in self._ranges:
            sub = self._module.with_changes(body=[stmt], header=[], footer=[])
            wrapper = MetadataWrapper(sub, unsafe_skip_copy=True)
            self._ranges[key] = dict(wrapper.resolve(PositionProvider))
        return self._ranges[key]

    def span(self, top_level: cst.CSTNode, node: cst.CSTNode) -> Span:
        """Span of ``node``, which lives inside the top-level statement ``top_level``."""
        code_range = self._ranges_for(top_level).get(node)
        offset = self.line_info().get(id(top_level), (0, 1, 1))[0]
        if code_range is None:
            return Span(offset + 1, 1, offset + 1, 1)
        return Span(
            line=code_range.start.line + offset,
            column=code_range.start.column + 1,
            end_line=code_range.end.line + offset,
            end_column=code_range.end.column + 1,
        )
