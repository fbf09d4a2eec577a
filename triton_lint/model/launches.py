"""Launch sites: ``kernel[grid](args...)`` of this file's kernels, with their grids and the
host values around them."""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable, Iterator

import libcst as cst

from triton_lint.model.dispatch import Helper, dispatch_helpers, dispatched
from triton_lint.model.evaluate import UNKNOWN, evaluate
from triton_lint.model.host import (
    assignment_before,
    bind_call,
    function_facts,
    host_alternatives,
    returned_value,
    simple_assignments,
)
from triton_lint.model.kernel import LaunchSite, ModuleModel
from triton_lint.model.names import dotted_name
from triton_lint.model.tree import iter_children, iter_nodes


def find_launches(model: ModuleModel) -> None:
    """Record the launches of ``model``'s kernels in its own file, visiting only the top-level
    statements that mention one."""
    find_launches_in(model, model, None)


def find_launches_in(
    host: ModuleModel,
    sink: ModuleModel,
    names: dict[str, str] | None,
    helpers: dict[str, str] | None = None,
) -> None:
    """Record in ``sink`` the launches of its kernels that ``host``'s code holds: by their own
    names (``names`` None: the same file), or by the dotted names ``names`` maps to them; also
    of those a dispatch helper returns, the host's own or one of the sink's that ``helpers``
    maps the host's dotted names to."""
    finder = _LaunchFinder(host, sink, names)
    shorts = sink.kernels_by_name if names is None else {n.rsplit(".", 1)[-1] for n in names}
    # `kernel[grid]`, and `wrap_triton(kernel)[grid]` (torch.library's launch wrapper)
    tops = statements_mentioning(host, shorts, r"\s*\)?\s*\[")
    # `return kernel` in a dispatch helper, and the statements that call the helper
    returning = statements_mentioning(host, shorts, r"(?=[ \t]*(?:#[^\n]*)?(?:\r?\n|$))")
    finder.returns = dispatch_helpers(host, returning, finder.kernel_named)
    own = [sink.functions[name] for name in (helpers or {}).values() if name in sink.functions]
    theirs = dispatch_helpers(
        sink, own, lambda name: name if name in sink.kernels_by_name else None
    )
    for dotted, name in (helpers or {}).items():
        if name in theirs and dotted not in finder.returns:
            finder.returns[dotted] = theirs[name]
    if finder.returns:
        seen = {id(top) for top in tops}
        shorts = {name.rsplit(".", 1)[-1] for name in finder.returns}
        calling = statements_mentioning(host, shorts, r"\s*\(")
        tops += [top for top in calling if id(top) not in seen]
        order = {id(top): position for position, top in enumerate(host.module.body)}
        tops.sort(key=lambda top: order[id(top)])
    for top in tops:
        finder.top = top
        finder.walk(top)


def statements_mentioning(
    model: ModuleModel, shorts: Iterable[str], after: str
) -> list[cst.CSTNode]:
    """Top-level statements whose lines contain one of the names followed by ``after``
    (``kernel_name[``): the only ones worth visiting."""
    names = "|".join(re.escape(name) for name in shorts)
    if not names:
        return []
    pattern = re.compile(rf"\b(?:{names}){after}")
    starts = [m.start() for m in pattern.finditer(model.text)]
    if not starts:
        return []
    newlines = _newlines(model)
    lines = sorted({bisect_left(newlines, start) + 1 for start in starts})
    info = model.positions.line_info()
    found = []
    for top in model.module.body:
        _, first, last = info[id(top)]
        position = bisect_left(lines, first)  # the first matched line at or after ``first``
        if position < len(lines) and lines[position] <= last:
            found.append(top)
    return found


def _newlines(model: ModuleModel) -> list[int]:
    """Offsets of the file's newline characters: a match's line is one more than the number
    before it (read once per file, though every kernel and launching function asks)."""
    key = ("newlines", 0)
    if key not in model.memo:
        model.memo[key] = [m.start() for m in re.finditer("\n", model.text)]
    return model.memo[key]


def calls_of(
    host: ModuleModel, names: set[str]
) -> Iterator[tuple[cst.Call, cst.FunctionDef | None, cst.CSTNode]]:
    """Calls in ``host`` whose callee is one of the dotted ``names``, with the innermost
    function around each and its top-level statement."""
    shorts = {name.rsplit(".", 1)[-1] for name in names}
    for top in statements_mentioning(host, shorts, r"\s*\("):
        for name, call, function in _calls_in(host, top):
            if name in names:
                yield call, function, top


def _calls_in(
    host: ModuleModel, top: cst.CSTNode
) -> list[tuple[str, cst.Call, cst.FunctionDef | None]]:
    """Every call under ``top`` by a dotted name, with the innermost function around it, in
    source order: walked once per statement, though the callers of several functions ask."""
    key = ("calls", id(top))
    if key not in host.memo:
        found = []
        pending: list[tuple[cst.CSTNode, cst.FunctionDef | None]] = [(top, None)]
        while pending:
            node, function = pending.pop()
            kind = type(node)  # not isinstance: through ABCMeta it cost more than the walk
            if kind is cst.FunctionDef:
                function = node  # type: ignore[assignment]
            elif kind is cst.Call:
                name = dotted_name(node.func)
                if name is not None:
                    found.append((name, node, function))
            pending.extend((child, function) for child in reversed(iter_children(node)))
        host.memo[key] = found
    return host.memo[key]


class _LaunchFinder:
    """Finds ``kernel[grid](...)`` launches of this file's kernels, with their grids, keeping
    the host scopes (functions) around each."""

    def __init__(self, model: ModuleModel, sink: ModuleModel, names: dict[str, str] | None) -> None:
        self.model = model
        self.sink = sink
        self.names = names
        self.top: cst.CSTNode = model.module
        self.scopes: list[dict[str, cst.BaseExpression]] = [{}]
        self.definitions: list[dict[str, cst.BaseExpression]] = [{}]
        self.alternatives: list[dict[str, list[cst.BaseExpression]]] = [{}]
        self.locals: list[frozenset[str]] = [frozenset()]
        self.function_defs: list[dict[str, cst.FunctionDef]] = [{}]
        self.functions: list[cst.FunctionDef] = []
        self.kernel_nodes = {id(k.node) for k in model.kernels}
        self.returns: dict[str, Helper] = {}

    def kernel_named(self, name: str) -> str | None:
        """The kernel of the sink a dotted name of the host names, or None."""
        short: str | None = name
        if self.names is not None:
            short = self.names.get(name)
        return short if short in self.sink.kernels_by_name else None

    def walk(self, top: cst.CSTNode) -> None:
        """Visit ``top`` in source order (a field walk: libcst's visitor rebuilds every node)."""
        pending: list[cst.CSTNode | None] = [top]  # None: leave the innermost function
        while pending:
            node = pending.pop()
            if node is None:
                self._leave_function()
                continue
            kind = type(node)  # not isinstance: through ABCMeta it cost more than the walk
            if kind is cst.FunctionDef:
                if id(node) in self.kernel_nodes:
                    continue  # kernels launch nothing; skip their bodies
                self._enter_function(node)  # type: ignore[arg-type]
                pending.append(None)
            elif kind is cst.Call:
                self._call(node)
            pending.extend(reversed(iter_children(node)))

    def _enter_function(self, node: cst.FunctionDef) -> None:
        self.function_defs[-1][node.name.value] = node
        self.scopes.append(dict(simple_assignments(node)))
        bindings, definitions = function_facts(self.model, node)
        definitions = dict(definitions)
        if self.functions:
            definitions = {**self._nested_bindings(node, bindings), **definitions}
        self.definitions.append(definitions)
        self.alternatives.append(host_alternatives(node, bindings))
        self.locals.append(self.locals[-1] | frozenset(bindings))
        self.function_defs.append({})
        self.functions.append(node)

    def _nested_bindings(
        self, node: cst.FunctionDef, bindings: dict[str, int]
    ) -> dict[str, cst.BaseExpression]:
        """A helper nested in a host function and called there once (``bwd_post(s, z, ss, B,
        H, T, M, ...)``): its parameters hold that call's arguments, which read the enclosing
        function's definitions (``M = s.shape[-1]``)."""
        outer = self.functions[-1]
        calls = [
            call
            for call in iter_nodes(outer)
            if type(call) is cst.Call
            and isinstance(call.func, cst.Name)
            and call.func.value == node.name.value
        ]
        if len(calls) != 1:
            return {}
        found = {
            name: value
            for name, value in self.definitions[-1].items()
            if name not in bindings and value is not None
        }
        for name, value in bind_call(node, calls[0]).items():
            if bindings.get(name) == 1:  # a parameter the helper does not reassign
                found[name] = value
        return found

    def _leave_function(self) -> None:
        self.scopes.pop()
        self.definitions.pop()
        self.alternatives.pop()
        self.locals.pop()
        self.function_defs.pop()
        self.functions.pop()

    def _call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Subscript) or not func.slice:
            return
        launched = func.value
        if isinstance(launched, cst.Call) and launched.args:
            # torch's `wrap_triton(kernel)[grid](...)` / `capture_triton(kernel)[grid](...)`
            wrapper = dotted_name(launched.func) or ""
            if wrapper.endswith(("wrap_triton", "capture_triton")):
                launched = launched.args[0].value
        if not all(isinstance(element.slice, cst.Index) for element in func.slice):
            return
        name = dotted_name(launched)
        short: str | None = None
        if name is not None:
            short = name.rsplit(".", 1)[-1]
            if self.names is not None:
                short = self.names.get(name)
        if short is not None and short in self.sink.kernels_by_name:
            self._record(node, func, short, [])
            return
        for kernel, conditions in self._dispatched(launched).items():
            self._record(node, func, kernel, conditions)

    def _dispatched(self, launched: cst.BaseExpression) -> dict[str, list[cst.BaseExpression]]:
        """``pick(s)[grid]`` or ``kern = pick(s)`` then ``kern[grid]``: the kernels the
        dispatch helper returns, with the conditions under which it returns each."""
        if not self.returns:
            return {}
        if isinstance(launched, cst.Name):  # bound once in the launching function
            launched = self.definitions[-1].get(launched.value, launched)
        if not isinstance(launched, cst.Call):
            return {}
        return dispatched(self.returns, launched)

    def _record(
        self,
        node: cst.Call,
        func: cst.Subscript,
        short: str,
        conditions: list[cst.BaseExpression],
    ) -> None:
        grid = _grid_expression(func)
        if (
            isinstance(grid, cst.Name)
            and self.functions
            and (grid.value in self.alternatives[-1] or grid.value not in self.scopes[-1])
        ):
            # reassigned per launch, or assigned only in the branch that holds the launch
            # (`else: grid = (1, 1, 1)` before a `with` block around it)
            grid = assignment_before(self.functions[-1], node, grid.value) or grid
        dims, grid_top = self._grid_dims(grid)
        site = LaunchSite(
            kernel_name=short,
            call=node,
            top=self.top,
            grid=grid,
            grid_dims=dims,
            grid_top=grid_top,
            args=_positional_args(node),
            keywords=_keyword_args(node, self.definitions[-1]),
            host_definitions=self.definitions[-1],
            host_alternatives=self.alternatives[-1],
            host_locals=self.locals[-1],
            module=self.model if self.model is not self.sink else None,
            function=self.functions[-1] if self.functions else None,
            caller_holding=list(conditions),
            caller_guards=list(conditions),
            memo=self.model.memo,
        )
        self.sink.add_launch(site, dict(self.scopes[-1]))

    def _grid_dims(
        self, grid: cst.BaseExpression
    ) -> tuple[list[cst.BaseExpression] | None, cst.CSTNode | None]:
        """The grid's elements, through names bound to a tuple, a lambda or a `def grid(meta)`
        in the launching function, a function around it or the module (innermost first); and
        the top-level statement holding them when that is not the launch's."""
        top = None
        seen = 0
        while isinstance(grid, cst.Name) and seen < 4:
            seen += 1
            found, found_top = self._lookup(grid.value)
            if found is None:
                return None, None
            grid, top = found, found_top or top
        if isinstance(grid, cst.Lambda):
            grid = grid.body
        if isinstance(grid, cst.Tuple | cst.List):
            return [el.value for el in grid.elements], top
        return None, None

    def _lookup(self, name: str) -> tuple[cst.BaseExpression | None, cst.CSTNode | None]:
        for level in range(len(self.scopes) - 1, 0, -1):
            if name in self.scopes[level]:
                return self.scopes[level][name], None
            if name in self.function_defs[level]:
                return returned_value(self.function_defs[level][name]), None
            if name in self.locals[level]:
                return None, None  # a local bound some other way shadows outer names
        if name in self.model.functions:
            function = self.model.functions[name]
            return returned_value(function), self.model.function_tops[name]
        glob = self.model.globals.get(name)
        return (glob.value, glob.top) if glob is not None else (None, None)


def _positional_args(call: cst.Call) -> list[cst.BaseExpression]:
    """Positional arguments, with ``*(a, b)`` and ``*((a, b) if c else (0, 0))`` spread (the
    constant arm is the "absent" value); the positions after any other ``*args`` are unknown."""
    found: list[cst.BaseExpression] = []
    for arg in call.args:
        if arg.keyword is not None or arg.star == "**":
            continue
        if not arg.star:
            found.append(arg.value)
            continue
        elements = _spread_elements(arg.value)
        if elements is None:
            break
        found.extend(elements)
    return found


def _spread_elements(value: cst.BaseExpression) -> list[cst.BaseExpression] | None:
    if isinstance(value, cst.Tuple | cst.List):
        if any(isinstance(el, cst.StarredElement) for el in value.elements):
            return None
        return [el.value for el in value.elements]
    if isinstance(value, cst.IfExp):
        body, orelse = _spread_elements(value.body), _spread_elements(value.orelse)
        if body is None or orelse is None or len(body) != len(orelse):
            return None
        if all(evaluate(el) is not UNKNOWN for el in orelse):
            return body
        if all(evaluate(el) is not UNKNOWN for el in body):
            return orelse
    return None


def _keyword_args(
    call: cst.Call, definitions: dict[str, cst.BaseExpression]
) -> dict[str, cst.BaseExpression]:
    """Keyword arguments, with ``**kwargs`` spread when the host builds it once as
    ``dict(a=..., b=...)`` or ``{"a": ..., "b": ...}``."""
    found: dict[str, cst.BaseExpression] = {}
    for arg in call.args:
        if arg.keyword is not None:
            found[arg.keyword.value] = arg.value
        elif arg.star == "**":
            value = arg.value
            if isinstance(value, cst.Name):
                value = definitions.get(value.value, value)
            found.update(dict_items(value))
    return found


def dict_items(value: cst.BaseExpression) -> dict[str, cst.BaseExpression]:
    """The string keys of a ``{"K": v}`` or ``dict(K=v)`` and their values (none for
    anything else)."""
    if isinstance(value, cst.Call) and dotted_name(value.func) == "dict":
        return {a.keyword.value: a.value for a in value.args if a.keyword is not None}
    if isinstance(value, cst.Dict):
        items = {}
        for element in value.elements:
            if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString):
                key = element.key.evaluated_value
                if isinstance(key, str):
                    items[key] = element.value
        return items
    return {}


def _grid_expression(func: cst.Subscript) -> cst.BaseExpression:
    """The grid of ``kernel[grid](...)``; ``kernel[M, N](...)`` and ``kernel[M,](...)`` are a
    tuple grid written without parentheses."""
    elements = [element.slice.value for element in func.slice]  # type: ignore[union-attr]
    if len(func.slice) == 1 and func.slice[0].comma is cst.MaybeSentinel.DEFAULT:
        return elements[0]
    return cst.Tuple([cst.Element(value) for value in elements])
