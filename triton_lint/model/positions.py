"""Source positions, computed only for the statements that need them.

libcst's position metadata roughly triples parse cost when computed for a whole module, so
positions are resolved per top-level statement (a kernel, or a host function with a launch)
and shifted by that statement's line offset.
"""

from __future__ import annotations

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from triton_lint.finding import Span


class Positions:
    """Lazily maps nodes of a parsed module to 1-based spans."""

    def __init__(self, module: cst.Module) -> None:
        self._module = module
        self._offsets: dict[int, int] | None = None
        self._ranges: dict[int, dict[cst.CSTNode, CodeRange]] = {}

    def _line_offsets(self) -> dict[int, int]:
        if self._offsets is None:
            line = sum(self._module.code_for_node(item).count("\n") for item in self._module.header)
            offsets: dict[int, int] = {}
            for stmt in self._module.body:
                offsets[id(stmt)] = line
                line += self._module.code_for_node(stmt).count("\n")
            self._offsets = offsets
        return self._offsets

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
        offset = self._line_offsets().get(id(top_level), 0)
        if code_range is None:
            return Span(offset + 1, 1, offset + 1, 1)
        return Span(
            line=code_range.start.line + offset,
            column=code_range.start.column + 1,
            end_line=code_range.end.line + offset,
            end_column=code_range.end.column + 1,
        )
