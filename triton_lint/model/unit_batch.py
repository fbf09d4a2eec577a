"""Whether every caller of a launching function asserts that the batch of what it returns is 1.

A host function ``f`` that launches a kernel with ``b`` of ``b, h, n, d = q.shape`` (``q`` a
parameter of ``f``) compiles once per batch when ``b`` is a constexpr; but when every call of
``f`` in the project is followed, in the same block of its caller, by ``assert
out.shape[0] == 1`` (or ``out.size(0) == 1``, or ``if out.shape[0] != 1: raise``) on a name
bound from the call's result, the batch takes one value. A caller that only returns (part
of) the result is followed one level up, through `callers.MAX_DEPTH` levels in all: there a
name bound from the element of the caller's result that the launching function's result
reaches (``output = output + o`` then ``return output, kv``) must be asserted on. One call
path without such an assert, a caller the index does not know, or more callers than it
follows: unknown (None).
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst

from triton_lint.model.callers import MAX_DEPTH, CallerIndex, free_names, qualified_name
from triton_lint.model.host import dimension_axis, is_shape
from triton_lint.model.host_tests import conjuncts
from triton_lint.model.kernel import LaunchSite, ModuleModel
from triton_lint.model.launches import calls_of
from triton_lint.model.names import dotted_name
from triton_lint.model.project import FunctionKey
from triton_lint.model.tree import iter_nodes

#: An assert's location: (display path of its file, line).
Evidence = tuple[str, int]
#: Positions of a call's result that carry the launching function's result: None for all (a
#: non-tuple result is position None too).
Positions = frozenset[int | None] | None
#: Methods that return a tensor of the same leading dimension as the one they are called on.
_SAME_SHAPE = {"contiguous", "clone", "detach", "float", "half", "bfloat16", "to"}


def unit_batch_asserts(model: ModuleModel, site: LaunchSite) -> list[Evidence] | None:
    """The asserts, one per call path of the launching function, that the leading dimension
    of what it returns is 1; None unless every known call path has one."""
    index = model.memo.get(("caller index", 0))
    host = site.module or model
    if not isinstance(index, CallerIndex) or site.function is None:
        return None
    name = qualified_name(host, site.function, site.top)
    if name is None:
        return None
    key = ("unit batch", id(site.function))
    if key not in model.memo:
        model.memo[key] = _asserts(index, (host.path, name), 0, None)
    return model.memo[key]


def leading_dimension_parameter(site: LaunchSite, expr: cst.BaseExpression) -> str | None:
    """The parameter of the launching function whose leading dimension ``expr`` is: ``b`` of
    ``b, h, n, d = q.shape``, ``q.shape[0]`` or ``q.size(0)`` (directly or through a single
    assignment), with ``q`` a parameter that the function rebinds, if at all, only to a
    same-shape copy of itself (``q = q.contiguous()``)."""
    function = site.function
    if function is None:
        return None
    if isinstance(expr, cst.Name):
        found = _unpacked_first(function, expr.value)
        if found is None:
            value = site.host_definitions.get(expr.value)
            found = _leading_of(value) if value is not None else None
    else:
        found = _leading_of(expr)
    if found is None:
        return None
    params = {p.name.value for p in (*function.params.posonly_params, *function.params.params)}
    if found not in params or not _same_shape_rebinds(function, found):
        return None
    return found


def _asserts(
    index: CallerIndex, key: FunctionKey, depth: int, positions: Positions
) -> list[Evidence] | None:
    project = index.project
    if project is None or key in project.unbounded or key not in project.callers:
        return None
    found: list[Evidence] = []
    for path, names in project.callers[key].items():
        host = index.hosts(path)
        if host is None:
            return None
        calls = list(calls_of(host, set(names)))
        if not calls:
            return None
        for call, caller, top in calls:
            if caller is None:
                return None
            evidence = _call_path(index, host, caller, top, call, depth, positions)
            if evidence is None:
                return None
            found += evidence
    return found


def _call_path(
    index: CallerIndex,
    host: ModuleModel,
    caller: cst.FunctionDef,
    top: cst.CSTNode,
    call: cst.Call,
    depth: int,
    positions: Positions,
) -> list[Evidence] | None:
    """The assert after ``call`` in ``caller``, or those of the callers of ``caller`` when it
    returns what the call's result reaches."""
    located = _statement_of(caller.body, call)
    if located is None:
        return None
    block, at = located
    bound = _bound_by(block[at], call, positions)
    for stmt in block[at + 1 :]:
        test = _unit_test(stmt)
        if test is not None and test in bound:
            return [(host.path, host.span(top, stmt).line)]
        bound -= _assigned(stmt)
        if not bound:
            break
    name = qualified_name(host, caller, top)
    if depth + 1 >= MAX_DEPTH or name is None:
        return None
    returned = _returned_positions(caller, _bound_by(block[at], call, positions), block[at], call)
    if returned is None:
        return None
    return _asserts(index, (host.path, name), depth + 1, returned)


def _statement_of(
    body: cst.BaseSuite, call: cst.Call
) -> tuple[Sequence[cst.BaseStatement], int] | None:
    """The block and position of the simple statement that holds ``call``."""
    if not isinstance(body, cst.IndentedBlock):
        return None
    for position, stmt in enumerate(body.body):
        if not any(node is call for node in iter_nodes(stmt)):
            continue
        if isinstance(stmt, cst.SimpleStatementLine):
            return body.body, position
        for inner in _blocks(stmt):
            found = _statement_of(inner, call)
            if found is not None:
                return found
        return None
    return None


def _blocks(stmt: cst.CSTNode) -> list[cst.BaseSuite]:
    blocks = [getattr(stmt, "body", None), getattr(getattr(stmt, "orelse", None), "body", None)]
    return [b for b in blocks if isinstance(b, cst.BaseSuite)]


def _bound_by(stmt: cst.BaseStatement, call: cst.Call, positions: Positions) -> set[str]:
    """Names ``stmt`` binds to the elements of ``call``'s result at ``positions``
    (``o, kv = f(...)``)."""
    small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and stmt.body else None
    if not isinstance(small, cst.Assign) or small.value is not call or len(small.targets) != 1:
        return set()
    target = small.targets[0].target
    if isinstance(target, cst.Name):
        return {target.value} if positions is None or None in positions else set()
    if not isinstance(target, cst.Tuple | cst.List):
        return set()
    return {
        element.value.value
        for position, element in enumerate(target.elements)
        if isinstance(element.value, cst.Name) and (positions is None or position in positions)
    }


def _unit_test(stmt: cst.BaseStatement) -> str | None:
    """``n`` of ``assert n.shape[0] == 1`` (a conjunct), ``assert n.size(0) == 1`` or ``if
    n.shape[0] != 1: raise ...``."""
    if isinstance(stmt, cst.SimpleStatementLine):
        for small in stmt.body:
            if isinstance(small, cst.Assert):
                for part in conjuncts(small.test):
                    name = _compared_leading(part, cst.Equal)
                    if name is not None:
                        return name
        return None
    if isinstance(stmt, cst.If) and stmt.orelse is None and _raises_only(stmt.body):
        return _compared_leading(stmt.test, cst.NotEqual)
    return None


def _raises_only(body: cst.BaseSuite) -> bool:
    """The block ends in ``raise``."""
    if isinstance(body, cst.SimpleStatementSuite):
        return any(isinstance(s, cst.Raise) for s in body.body)
    last = body.body[-1] if isinstance(body, cst.IndentedBlock) and body.body else None
    smalls = last.body if isinstance(last, cst.SimpleStatementLine) else ()
    return any(isinstance(s, cst.Raise) for s in smalls)


def _compared_leading(test: cst.BaseExpression, operator: type) -> str | None:
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return None
    target = test.comparisons[0]
    if not isinstance(target.operator, operator):
        return None
    for side, other in ((test.left, target.comparator), (target.comparator, test.left)):
        if isinstance(other, cst.Integer) and other.value == "1":
            return _leading_of(side)
    return None


def _leading_of(expr: cst.BaseExpression) -> str | None:
    """``n`` of ``n.shape[0]`` or ``n.size(0)``."""
    if dimension_axis(expr) != 0:
        return None
    owner = expr.value if isinstance(expr, cst.Subscript) else expr.func  # type: ignore[attr-defined]
    return owner.value.value if isinstance(owner.value, cst.Name) else None


def _assigned(stmt: cst.CSTNode) -> set[str]:
    names: set[str] = set()
    for node in iter_nodes(stmt):
        targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else []
        targets += [node.target] if isinstance(node, cst.AnnAssign | cst.AugAssign) else []
        for target in targets:
            names |= {n.value for n in iter_nodes(target) if isinstance(n, cst.Name)}
    return names


def _returned_positions(
    function: cst.FunctionDef, bound: set[str], stmt: cst.BaseStatement, call: cst.Call
) -> Positions:
    """Positions of ``function``'s result that every ``return`` computes from the names bound
    to ``call``'s result (``output = output + o``; ``return output, kv``), or from the call
    itself (``return f(...)``); None when one returns nothing of it."""
    small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and stmt.body else None
    direct = isinstance(small, cst.Return) and small.value is call
    derived = set(bound)
    assignments = [
        node for node in iter_nodes(function.body) if isinstance(node, cst.Assign | cst.AugAssign)
    ]
    changed = True
    while changed:  # names computed from the call's result, through the function's assignments
        changed = False
        for node in assignments:
            if free_names(node.value) & derived:
                new = _assigned(node) - derived
                if new:
                    derived |= new
                    changed = True
    returns = [node for node in iter_nodes(function.body) if isinstance(node, cst.Return)]
    if not returns or (not derived and not direct):
        return None
    common: set[int | None] | None = None
    for node in returns:
        value = node.value
        if value is None:
            return None
        if node is small and direct:
            found: set[int | None] = {None}
        elif isinstance(value, cst.Tuple):
            found = {
                position
                for position, element in enumerate(value.elements)
                if free_names(element.value) & derived
            }
        else:
            found = {None} if free_names(value) & derived else set()
        common = found if common is None else common & found
    return frozenset(common) if common else None


def _unpacked_first(function: cst.FunctionDef, name: str) -> str | None:
    """``q`` when ``function`` binds ``name`` once, as the first of ``name, ... = q.shape``."""
    found = None
    for node in iter_nodes(function.body):
        if not isinstance(node, cst.Assign):
            continue
        for target in node.targets:
            if name not in {n.value for n in iter_nodes(target.target) if isinstance(n, cst.Name)}:
                continue
            if found is not None:
                return None  # bound twice
            elements = target.target.elements if isinstance(target.target, cst.Tuple) else ()
            first = elements[0].value if elements else None
            value = node.value
            if (
                isinstance(first, cst.Name)
                and first.value == name
                and is_shape(value)
                and isinstance(value.value, cst.Name)
            ):
                found = value.value.value
            else:
                return None
    return found


def _same_shape_rebinds(function: cst.FunctionDef, name: str) -> bool:
    """Every rebinding of the parameter ``name`` is ``name = name.contiguous()`` (or another
    copy of the same shape)."""
    for node in iter_nodes(function.body):
        if isinstance(node, cst.AugAssign | cst.AnnAssign) and name in _assigned(node):
            return False
        if not isinstance(node, cst.Assign) or name not in _assigned(node):
            continue
        value = node.value
        callee = dotted_name(value.func) if isinstance(value, cst.Call) else None
        if callee is None or callee.rsplit(".", 1)[-1] not in _SAME_SHAPE:
            return False
        if callee.rsplit(".", 1)[0] != name or len(node.targets) != 1:
            return False
        if not isinstance(node.targets[0].target, cst.Name):
            return False
    return True
