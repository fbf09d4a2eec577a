"""Reading host code around launches: which value a host name holds where a kernel is launched.

Launch sites (`triton_lint.model.launches`) record, for each launch, the names its enclosing
function binds once (``block = triton.next_power_of_2(n)``), those it binds several times by
plain assignments, and the one assignment that last runs before the launch. This module reads
those bindings; it knows nothing of kernels.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import libcst as cst

from triton_lint.model.evaluate import UNKNOWN, evaluate
from triton_lint.model.names import dotted_name
from triton_lint.model.tree import (
    block_statements,
    iter_nodes,
    iter_small_statements,
    statement_blocks,
)


def assignment_before(
    function: cst.FunctionDef, call: cst.Call, name: str
) -> cst.BaseExpression | None:
    """The value of the ``name = value`` that last runs before ``call`` on every path: an
    assignment in a block around the call, with no other binding of ``name`` in a branch or
    loop between them (``grid = (...)`` before each of several launches)."""
    value: cst.BaseExpression | None = None
    block: cst.BaseSuite | None = function.body
    while isinstance(block, cst.IndentedBlock):
        for stmt in block.body:
            if not any(node is call for node in iter_nodes(stmt)):
                value = _rebinding(stmt, name, value)
                continue
            if isinstance(stmt, cst.SimpleStatementLine):
                return value
            if isinstance(stmt, cst.For | cst.While) and name in set(_assigned_names(stmt)):
                # a binding later in the loop body reaches the next iteration, unless one
                # before the call in the body runs first on every iteration
                value = None
            block = next(
                (b for b in statement_blocks(stmt) if any(n is call for n in iter_nodes(b))),
                None,
            )
            if block is None:
                return value  # the call is in the statement's header (an `if` test)
            break
        else:
            return None
    return None


def _rebinding(
    stmt: cst.CSTNode, name: str, value: cst.BaseExpression | None
) -> cst.BaseExpression | None:
    """``name``'s known value after ``stmt``: a single-target ``name = v`` gives ``v``, any
    other binding (in a branch, a loop, a tuple target) makes it unknown."""
    if isinstance(stmt, cst.SimpleStatementLine):
        for small in stmt.body:
            if name in assigned_targets(small):
                single = isinstance(small, cst.Assign) and len(small.targets) == 1
                value = small.value if single else None
        return value
    return None if name in set(_assigned_names(stmt)) else value


def simple_assignments(
    node: cst.FunctionDef,
) -> Iterator[tuple[str, cst.BaseExpression]]:
    """``name = value`` statements directly in a host function body (last one wins)."""
    body = node.body
    if not isinstance(body, cst.IndentedBlock):
        return
    nested: set[str] = set()  # names also assigned in branches/loops: value unknown
    for stmt in body.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            for child in block_statements(stmt):
                nested.update(_assigned_names(child))
    direct: list[tuple[str, cst.BaseExpression]] = []
    for stmt in body.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1:
                    target = small.targets[0].target
                    if isinstance(target, cst.Name) and target.value not in nested:
                        direct.append((target.value, small.value))
    counts: dict[str, int] = {}
    for name, _ in direct:
        counts[name] = counts.get(name, 0) + 1
    for name, value in direct:
        if counts[name] == 1:  # reassigned (`grid = ...` per launch): depends on the launch
            yield name, value


def assigned_targets(small: cst.CSTNode) -> Iterator[str]:
    """Names an assignment statement binds, through tuple and list unpacking."""
    if isinstance(small, cst.Assign):
        for target in small.targets:
            yield from _target_names(target.target)
    elif isinstance(small, cst.AnnAssign | cst.AugAssign):
        yield from _target_names(small.target)


def _target_names(target: cst.CSTNode) -> Iterator[str]:
    """Names a binding target binds: ``a``, ``a, (b, *c)``, ``[a, b]``."""
    if isinstance(target, cst.Name):
        yield target.value
    elif isinstance(target, cst.Tuple | cst.List):
        for element in target.elements:
            yield from _target_names(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from _target_names(target.value)


#: Nested scopes: their names are bound in the function, their bodies are not entered.
_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


def function_bindings(node: cst.FunctionDef) -> dict[str, int]:
    """How many times each name is bound in a host function, its parameters included."""
    counts: dict[str, int] = {}
    params = node.params
    names = [p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)]
    names += [
        s.name.value for s in (params.star_arg, params.star_kwarg) if isinstance(s, cst.Param)
    ]
    for child in iter_nodes(node.body, skip=_SCOPES):
        if type(child) in _BINDERS:  # most nodes bind nothing: skip the isinstance chain
            names.extend(_bound_names(child))
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    return counts


def function_facts(
    model: Any, function: cst.FunctionDef
) -> tuple[dict[str, int], dict[str, cst.BaseExpression]]:
    """How often ``function`` (a host function of ``model``'s file) binds each name, and its
    single definitions: read once per function (``model.memo``), though the
    launches, the callers of several kernels and the autograd flags all ask. Callers must
    not change what they get."""
    key = ("bindings", id(function))
    if key not in model.memo:
        counts = function_bindings(function)
        model.memo[key] = counts, dict(host_definitions(function, counts))
    return model.memo[key]


#: The node types `_bound_names` reads (libcst has no subclasses of them).
_BINDERS = frozenset(
    {
        cst.FunctionDef,
        cst.ClassDef,
        cst.AssignTarget,
        cst.AnnAssign,
        cst.AugAssign,
        cst.For,
        cst.CompFor,
        cst.NamedExpr,
        cst.AsName,
        cst.ImportAlias,
        cst.Global,
        cst.Nonlocal,
    }
)


def _bound_names(node: cst.CSTNode) -> Iterator[str]:
    """Names one node binds: a target, a ``def``/``class`` name, an import, ``as`` names;
    ``global``/``nonlocal`` count as bindings (rebound elsewhere: never a single definition)."""
    if isinstance(node, cst.FunctionDef | cst.ClassDef):
        yield node.name.value
    elif isinstance(
        node,
        cst.AssignTarget | cst.AnnAssign | cst.AugAssign | cst.For | cst.CompFor | cst.NamedExpr,
    ):
        yield from _target_names(node.target)
    elif isinstance(node, cst.AsName):
        yield from _target_names(node.name)
    elif isinstance(node, cst.ImportAlias) and node.asname is None:
        yield node.evaluated_name.split(".")[0]
    elif isinstance(node, cst.Global | cst.Nonlocal):
        for item in node.names:
            yield item.name.value


def host_definitions(
    node: cst.FunctionDef, bindings: dict[str, int]
) -> Iterator[tuple[str, cst.BaseExpression]]:
    """``name = value`` and ``a, b = value`` directly in a host function body or a ``with``
    block of it (which always runs), for names bound nowhere else in the function (not
    parameters, not reassigned, not assigned in a branch or a loop)."""
    body = node.body
    if not isinstance(body, cst.IndentedBlock):
        return
    statements = list(body.body)
    while statements:
        stmt = statements.pop(0)
        if isinstance(stmt, cst.With) and isinstance(stmt.body, cst.IndentedBlock):
            statements[:0] = stmt.body.body  # `with torch.cuda.device(x.device):`
            continue
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.Assign) and len(small.targets) == 1:
                target, value = small.targets[0].target, small.value
            elif isinstance(small, cst.AnnAssign) and small.value is not None:
                target, value = small.target, small.value
            else:
                continue
            for name, source in _unpack(target, value):
                if bindings.get(name) == 1:
                    yield name, source


def host_alternatives(
    node: cst.FunctionDef, bindings: dict[str, int]
) -> dict[str, list[cst.BaseExpression]]:
    """Names a host function binds more than once, all by plain assignments (at any depth),
    with every value they can hold after the function body: a value that a later statement
    of the body overwrites on every path (``n, _, s = x.size()`` before ``if a: s = w - 1
    else: s = w``) is left out."""
    body = node.body
    if not isinstance(body, cst.IndentedBlock):
        return {}
    found = _plain_values(body.body)
    plain = {n for n, v in found.items() if len(v) > 1 and len(v) == bindings.get(n)}
    live: dict[str, list[cst.BaseExpression]] = {}
    for stmt in body.body:
        overwritten = _always_assigned(stmt)
        for name, values in _plain_values([stmt]).items():
            if name in plain:
                live[name] = values if name in overwritten else [*live.get(name, []), *values]
    return {name: live[name] for name in plain}


def _plain_values(statements: Sequence[cst.CSTNode]) -> dict[str, list[cst.BaseExpression]]:
    """Every value each name is given by a plain assignment in ``statements``, at any depth."""
    found: dict[str, list[cst.BaseExpression]] = {}
    for small in iter_small_statements(statements):
        if not isinstance(small, cst.Assign):
            continue
        for target in small.targets:  # `a = b = 0` binds both to the value
            for name, source in _unpack(target.target, small.value):
                found.setdefault(name, []).append(source)
    return found


def _always_assigned(stmt: cst.CSTNode) -> set[str]:
    """Names ``stmt`` assigns on every path through it: a plain assignment line, or an ``if``
    whose every arm (``elif`` and ``else`` included) assigns them directly in its block."""
    if isinstance(stmt, cst.SimpleStatementLine):
        return set(_plain_values([stmt]))
    if not isinstance(stmt, cst.If) or stmt.orelse is None:
        return set()
    arms: list[set[str]] = []
    for block in (stmt.body, stmt.orelse):
        if isinstance(block, cst.If):
            arms.append(_always_assigned(block))
        else:
            inner = block.body if isinstance(block, cst.Else) else block
            statements = inner.body if isinstance(inner, cst.IndentedBlock) else []
            arms.append(set().union(*(_always_assigned(s) for s in statements)))
    return arms[0] & arms[1]


def _unpack(
    target: cst.BaseExpression, value: cst.BaseExpression
) -> Iterator[tuple[str, cst.BaseExpression]]:
    if isinstance(target, cst.Name):
        yield target.value, value
    elif isinstance(target, cst.Tuple | cst.List):
        elements = [el.value for el in target.elements]
        if isinstance(value, cst.Tuple | cst.List) and len(value.elements) == len(elements):
            pairs = [(el, v.value) for el, v in zip(elements, value.elements, strict=True)]
        elif (aligned := _around_star(target, value)) is not None:
            pairs = aligned
        else:
            # ``a, b = x.stride()`` binds ``a`` to ``x.stride()[0]``; from a starred target on,
            # positions are unknown and the whole value stands in.
            pairs, starred = [], False
            for position, element in enumerate(target.elements):
                starred = starred or isinstance(element, cst.StarredElement)
                pairs.append((element.value, value if starred else _element(value, position)))
            if _names_only_the_last(elements) or _names_four_dimensions(target, value):
                # ``_, _, L = x.shape`` asks for the last dimension, as ``x.shape[-1]`` does,
                # and so does the last of ``B, T, H, S = g.shape`` (a feature size)
                pairs[-1] = (elements[-1], _element(value, -1))
        for element, source in pairs:
            yield from _unpack(element, source)


def _around_star(
    target: cst.Tuple | cst.List, value: cst.BaseExpression
) -> list[tuple[cst.BaseExpression, cst.BaseExpression]] | None:
    """``B, H, T, M = *q.shape[:3], s.shape[-1]``: the elements before and after the one
    starred value bind by position from either end, and the targets in between to that
    value's elements (``q.shape[:3][0]``, ...)."""
    if not isinstance(value, cst.Tuple | cst.List):
        return None
    if any(isinstance(el, cst.StarredElement) for el in target.elements):
        return None
    stars = [i for i, el in enumerate(value.elements) if isinstance(el, cst.StarredElement)]
    names = [el.value for el in target.elements]
    if len(stars) != 1:
        return None
    star = stars[0]
    after = len(value.elements) - star - 1
    spread = len(names) - star - after
    if spread < 0:
        return None
    values = [el.value for el in value.elements]
    return [
        *zip(names[:star], values[:star], strict=True),
        *((names[star + i], _element(values[star], i)) for i in range(spread)),
        *zip(names[star + spread :], values[star + 1 :], strict=True),
    ]


def _names_only_the_last(elements: list[cst.BaseExpression]) -> bool:
    """``_, _, L``: every target but the last is discarded."""
    return len(elements) > 1 and all(
        isinstance(el, cst.Name) and el.value == "_" for el in elements[:-1]
    )


def _names_four_dimensions(target: cst.Tuple | cst.List, value: cst.BaseExpression) -> bool:
    """``B, T, H, S = g.shape``: a shape of four or more dimensions unpacked whole, whose last
    is a feature size (head or state dimension); in ``B, T = x.shape`` the last may be a
    length."""
    return (
        len(target.elements) >= 4
        and not any(isinstance(el, cst.StarredElement) for el in target.elements)
        and (is_shape(value) or (is_size_call(value) and not value.args))
    )


def _element(value: cst.BaseExpression, position: int) -> cst.Subscript:
    """``value[position]``, a node made for tracing (it has no position in the file)."""
    number: cst.BaseExpression = cst.Integer(str(abs(position)))
    if position < 0:
        number = cst.UnaryOperation(cst.Minus(), number)
    return cst.Subscript(value, [cst.SubscriptElement(cst.Index(number))])


def _assigned_names(node: cst.CSTNode) -> Iterator[str]:
    """Names assigned by simple statements in ``node`` and the blocks nested in it."""
    for small in iter_small_statements([node]):
        yield from assigned_targets(small)


def returned_value(node: cst.FunctionDef) -> cst.BaseExpression | None:
    """The value of the first top-level ``return`` (also of ``def grid(meta): return ...``)."""
    body = node.body
    if isinstance(body, cst.SimpleStatementSuite):
        lines: list[cst.BaseSmallStatement] = list(body.body)
    elif isinstance(body, cst.IndentedBlock):
        lines = [
            small
            for stmt in body.body
            if isinstance(stmt, cst.SimpleStatementLine)
            for small in stmt.body
        ]
    else:
        return None
    return next((small.value for small in lines if isinstance(small, cst.Return)), None)


def is_shape(expr: cst.BaseExpression) -> bool:
    """``x.shape``."""
    return isinstance(expr, cst.Attribute) and expr.attr.value == "shape"


def is_size_call(expr: cst.BaseExpression) -> bool:
    """``x.size(...)``."""
    return (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Attribute)
        and expr.func.attr.value == "size"
    )


def dimension_axis(expr: cst.BaseExpression) -> object:
    """The axis of a tensor dimension ``x.shape[i]`` or ``x.size(i)`` (``UNKNOWN`` when it is
    not a literal), or None when ``expr`` is no single dimension."""
    if isinstance(expr, cst.Subscript) and is_shape(expr.value) and len(expr.slice) == 1:
        index = expr.slice[0].slice
        return evaluate(index.value) if isinstance(index, cst.Index) else UNKNOWN
    if isinstance(expr, cst.Call) and is_size_call(expr):
        return evaluate(expr.args[0].value) if len(expr.args) == 1 else None
    return None


def bind_call(function: cst.FunctionDef, call: cst.Call) -> dict[str, cst.BaseExpression]:
    """Parameter -> argument of ``call``; a method's ``self`` takes no argument (called as
    ``obj.m(...)``), nor does the ``ctx`` of an autograd function's static ``forward`` called
    through ``apply`` (``Attention.apply(q, k)``, ``attention_(q, k)`` with ``attention_ =
    Attention.apply``: by any name but ``forward``); nothing is bound past a ``*args``."""
    params = function.params
    positional = [*params.posonly_params, *params.params]
    through_apply = (
        function.name.value == "forward"
        and any(dotted_name(d.decorator) == "staticmethod" for d in function.decorators)
        and not (dotted_name(call.func) or "").endswith("forward")
    )
    if positional and (positional[0].name.value in ("self", "cls") or through_apply):
        positional = positional[1:]
    bound: dict[str, cst.BaseExpression] = {}
    index = 0
    for arg in call.args:
        if arg.star:
            if arg.star == "*":
                index = len(positional)  # positions after it are unknown
            continue
        if arg.keyword is not None:
            bound[arg.keyword.value] = arg.value
        elif index < len(positional):
            bound[positional[index].name.value] = arg.value
            index += 1
    return bound
