"""Source positions, computed only for the statements that need them.

libcst's positions come from generating the code of a tree, which costs more than parsing it.
A finding needs the position of a few nodes, so only the innermost statement around each is
generated: a simple statement whole, a compound statement (``if``, ``for``, ``def``, ...)
without its indented blocks. The statement's first line and indentation come from the stdlib
``ast`` (five times faster than libcst), whose statements are paired with libcst's one block
at a time. Wherever the two disagree, or a node sits where a partial statement cannot place
it (an ``elif`` test, a one-line ``else:`` body), the whole top-level statement is generated.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata.position_provider import PositionProvidingCodegenState

from triton_lint.finding import Span
from triton_lint.model.tree import iter_children

#: Compound statements generated header-only: their indented blocks become ``: pass``.
_HEADER_ONLY = (cst.If, cst.For, cst.While, cst.With, cst.FunctionDef, cst.ClassDef)
_COMPOUND = frozenset(
    {cst.If, cst.For, cst.While, cst.With, cst.FunctionDef, cst.ClassDef}
    | {cst.Try, cst.TryStar, cst.Match}
)
_PASS = cst.SimpleStatementSuite(body=[cst.Pass()])
_INDENT = re.compile(r"[ \t\f]*")
_NEWLINE = re.compile(r"\r\n|\r|\n")
#: A node's generated position by ``id``: the node (kept alive, so no other node takes its
#: ``id``), its first line and column and its last line and end column (libcst's numbers).
_Range = tuple[cst.CSTNode, int, int, int, int]


class _Mismatch(Exception):
    """libcst's and ast's statements do not pair up."""


@dataclass
class _TopIndex:
    """One top-level statement: each node's innermost generable statement (None where only
    the whole top-level statement places it) and each statement's (first line, indent)."""

    owner: dict[int, cst.CSTNode | None] = field(default_factory=dict)
    start: dict[int, tuple[int, int]] = field(default_factory=dict)


class Positions:
    """Lazily maps nodes of a parsed module to 1-based spans."""

    def __init__(self, module: cst.Module, text: str, syntax: ast.Module | None = None) -> None:
        self._module = module
        self._text = text
        self._syntax = syntax  # the stdlib's tree of the text, when the caller has it
        self._lines: dict[int, tuple[int, int, int]] | None = None
        self._ast: dict[int, ast.stmt] = {}
        self._indexes: dict[int, _TopIndex | None] = {}
        self._ranges: dict[int, tuple[int, dict[int, _Range]]] = {}
        self._line_starts: list[int] | None = None

    def line_info(self) -> dict[int, tuple[int, int, int]]:
        """id(top-level statement) -> (line offset, first line, last line) in the file."""
        if self._lines is None:
            self._lines = self._from_ast() or self._from_codegen()
        return self._lines

    def _from_ast(self) -> dict[int, tuple[int, int, int]] | None:
        try:
            tree = self._syntax or ast.parse(self._text)
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
            first = _first_line(group[0])
            last = group[-1].end_lineno or first
            offset = first - 1 - len(getattr(stmt, "leading_lines", ()))
            info[id(stmt)] = (offset, first, last)
            if count == 1:
                self._ast[id(stmt)] = group[0]
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

    def span(self, top_level: cst.CSTNode, node: cst.CSTNode) -> Span:
        """Span of ``node``, which lives inside the top-level statement ``top_level``."""
        offset, ranges = self._statement_ranges(top_level, node)
        found = ranges.get(id(node))
        if found is None:
            offset, ranges = self._whole(top_level)
            found = ranges.get(id(node))
        if found is None:
            return Span(offset + 1, 1, offset + 1, 1)
        _, line, column, end_line, end_column = found
        return Span(line + offset, column + 1, end_line + offset, end_column + 1)

    # -- the innermost statement ----------------------------------------------------------
    def _statement_ranges(
        self, top: cst.CSTNode, node: cst.CSTNode
    ) -> tuple[int, dict[int, _Range]]:
        index = self._index(top)
        owner = index.owner.get(id(node)) if index is not None else None
        if owner is None or index is None or id(owner) not in index.start:
            return self._whole(top)
        key = id(owner)
        if key not in self._ranges:
            first, column = index.start[key]
            indent = _INDENT.match(self._line(first)).group()
            generated = _header_only(owner)
            offset = first - 1 - _lines_before_code(owner)
            ranges = _generate(generated, self._module, [indent])
            if len(indent) != column or not _starts_at(generated, ranges, offset, first):
                return self._whole(top)
            self._ranges[key] = (offset, ranges)
        return self._ranges[key]

    def _line(self, number: int) -> str:
        """Line ``number`` of the file, numbered as Python does (``\\r\\n``, ``\\r``, ``\\n``)."""
        if self._line_starts is None:
            self._line_starts = [0, *(m.end() for m in _NEWLINE.finditer(self._text))]
        start = self._line_starts[number - 1] if number <= len(self._line_starts) else 0
        match = _NEWLINE.search(self._text, start)
        return self._text[start : match.start() if match else len(self._text)]

    def _index(self, top: cst.CSTNode) -> _TopIndex | None:
        key = id(top)
        if key not in self._indexes:
            self.line_info()
            tree = self._ast.get(key)
            index = None
            if tree is not None and isinstance(top, cst.BaseCompoundStatement):
                index = _TopIndex()
                index.start[key] = (_first_line(tree), tree.col_offset)
                try:
                    _pair_blocks(top, tree, index)
                except _Mismatch:
                    index = None
                else:
                    _assign_owners(top, index)
            self._indexes[key] = index
        return self._indexes[key]

    # -- the whole top-level statement --------------------------------------------------
    def _whole(self, top: cst.CSTNode) -> tuple[int, dict[int, _Range]]:
        key = -id(top)  # never an id() of a statement generated on its own
        if key not in self._ranges:
            offset = self.line_info().get(id(top), (0, 1, 1))[0]
            self._ranges[key] = (offset, _generate(top, self._module, []))
        return self._ranges[key]


def _generate(node: cst.CSTNode, module: cst.Module, indent: list[str]) -> dict[int, _Range]:
    """Positions of every node under ``node``, generated as if indented by ``indent``.

    This is what ``MetadataWrapper.resolve(PositionProvider)`` computes, without the wrapper's
    extra visit of the whole tree and for a statement at any depth.
    """
    state = _Recorder(
        default_indent=module.default_indent,
        default_newline=module.default_newline,
        provider=None,  # positions go to ``found``
        indent_tokens=list(indent),
    )
    state.found = {}
    node._codegen(state)
    return state.found


class _Recorder(PositionProvidingCodegenState):
    """libcst's code generation recording `PositionProvider`'s positions, lighter: a tuple
    per node instead of a ``CodeRange`` of two ``CodePosition`` objects, and a syntactic
    position recorded by a small object instead of a generator-based context manager (the
    two were half the time of generating a statement)."""

    found: dict[int, _Range]

    def before_codegen(self, node: cst.CSTNode) -> None:
        self._stack.append((self.line, self.column))  # type: ignore[arg-type]

    def after_codegen(self, node: cst.CSTNode) -> None:
        line, column = self._stack.pop()  # type: ignore[misc]
        if id(node) not in self.found:  # a syntactic position recorded inside stays
            self.found[id(node)] = (node, line, column, self.line, self.column)

    def record_syntactic_position(  # type: ignore[override]
        self,
        node: cst.CSTNode,
        *,
        start_node: cst.CSTNode | None = None,
        end_node: cst.CSTNode | None = None,
    ) -> _Syntactic:
        return _Syntactic(self, node, start_node, end_node)


class _Syntactic:
    """The position of ``node`` without its surrounding whitespace, from where the code
    generated inside the ``with`` starts and ends (or from the nodes libcst names)."""

    __slots__ = ("column", "end_node", "line", "node", "start_node", "state")

    def __init__(
        self,
        state: _Recorder,
        node: cst.CSTNode,
        start_node: cst.CSTNode | None,
        end_node: cst.CSTNode | None,
    ) -> None:
        self.state, self.node, self.start_node, self.end_node = state, node, start_node, end_node
        self.line, self.column = state.line, state.column

    def __enter__(self) -> None:
        return None

    def __exit__(self, *_: object) -> None:
        state, found = self.state, self.state.found
        start = (self.line, self.column)
        if self.start_node is not None:
            start = found[id(self.start_node)][1:3]
        end = (state.line, state.column)
        if self.end_node is not None:
            end = found[id(self.end_node)][3:5]
        found[id(self.node)] = (self.node, *start, *end)


def _header_only(stmt: cst.CSTNode) -> cst.CSTNode:
    if not isinstance(stmt, _HEADER_ONLY):
        return stmt
    changes: dict[str, object] = {}
    if isinstance(stmt.body, cst.IndentedBlock):
        changes["body"] = _PASS
    if getattr(stmt, "orelse", None) is not None:
        changes["orelse"] = None
    return stmt.with_changes(**changes) if changes else stmt


def _lines_before_code(stmt: cst.CSTNode) -> int:
    """Comment and blank lines libcst keeps with a statement, above its first code line."""
    count = len(getattr(stmt, "leading_lines", ()))
    decorators = getattr(stmt, "decorators", ())
    if decorators:
        count += len(decorators[0].leading_lines)
    return count


def _starts_at(stmt: cst.CSTNode, ranges: dict[int, _Range], offset: int, first: int) -> bool:
    """The generated statement's first code line is the one ast reported."""
    anchor = stmt.decorators[0] if getattr(stmt, "decorators", ()) else stmt
    found = ranges.get(id(anchor))
    return found is not None and found[1] + offset == first


def _first_line(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", [])
    return min([node.lineno, *(d.lineno for d in decorators)])


def _pair(body: list[cst.CSTNode], nodes: list[ast.stmt], index: _TopIndex) -> None:
    """Record where each statement of a libcst block starts, from the same block in ast."""
    position = 0
    for stmt in body:
        count = len(stmt.body) if isinstance(stmt, cst.SimpleStatementLine) else 1
        group = nodes[position : position + count]
        position += count
        if len(group) != count:
            raise _Mismatch
        index.start[id(stmt)] = (_first_line(group[0]), group[0].col_offset)
        if count == 1 and not isinstance(stmt, cst.SimpleStatementLine):
            _pair_blocks(stmt, group[0], index)
    if position != len(nodes):
        raise _Mismatch


def _block(suite: cst.CSTNode | None) -> list[cst.CSTNode] | None:
    return list(suite.body) if isinstance(suite, cst.IndentedBlock) else None


def _pair_block(suite: cst.CSTNode | None, nodes: list[ast.stmt], index: _TopIndex) -> None:
    body = _block(suite)
    if body is not None:
        _pair(body, nodes, index)


def _pair_blocks(stmt: cst.CSTNode, node: ast.stmt, index: _TopIndex) -> None:
    """Pair the blocks nested in one compound statement."""
    if isinstance(stmt, cst.SimpleStatementLine):
        raise _Mismatch
    body = getattr(node, "body", None)
    if isinstance(body, list):
        _pair_block(stmt.body, body, index)
    orelse = getattr(stmt, "orelse", None)
    if isinstance(orelse, cst.If):
        _pair([orelse], node.orelse, index)
    elif orelse is not None:
        _pair_block(orelse.body, node.orelse, index)
    if isinstance(stmt, cst.Try | cst.TryStar):
        if len(stmt.handlers) != len(node.handlers):
            raise _Mismatch
        for handler, handler_node in zip(stmt.handlers, node.handlers, strict=True):
            _pair_block(handler.body, handler_node.body, index)
        if stmt.finalbody is not None:
            _pair_block(stmt.finalbody.body, node.finalbody, index)
    elif isinstance(stmt, cst.Match):
        if len(stmt.cases) != len(node.cases):
            raise _Mismatch
        for case, case_node in zip(stmt.cases, node.cases, strict=True):
            _pair_block(case.body, case_node.body, index)


def _assign_owners(top: cst.CSTNode, index: _TopIndex) -> None:
    """Each node's innermost statement whose own code places it (see the module docstring)."""
    elifs: set[int] = set()
    pending: list[tuple[cst.CSTNode, cst.CSTNode | None]] = [(top, None)]
    while pending:
        node, owner = pending.pop()
        kind = type(node)  # not `isinstance`: ABCMeta checks would dominate this walk
        if kind is cst.SimpleStatementLine:
            owner = node
        elif kind in _COMPOUND:
            index.owner[id(node)] = None  # a whole compound statement: its full code
            # An `elif` generated alone would read `if`: its test is placed by the top.
            owner = None if id(node) in elifs else node
            orelse = getattr(node, "orelse", None)
            if isinstance(orelse, cst.If):
                elifs.add(id(orelse))
            for child in iter_children(node):
                # `elif` and `else` lines come after the blocks a header-only statement drops
                pending.append((child, None if child is orelse else owner))
            continue
        index.owner[id(node)] = owner
        pending.extend((child, owner) for child in iter_children(node))
