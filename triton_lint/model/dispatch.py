"""Dispatch helpers: a host function that returns one of several kernels by the size it is
given (``if s <= 1536: return small_kernel`` then ``return large_kernel``), and the launch
``kern = pick(s); kern[grid](...)`` or ``pick(s)[grid](...)`` of what it returns.

Each kernel the helper returns on exactly one path gets that path's conditions (the tests of
the ``if`` statements around its ``return``, and the negated tests of earlier ``if``
statements whose body always leaves), written in the launching function's names through the
call's arguments. A kernel returned on several paths, or from inside a loop, ``with`` or
``try``, is launched with no condition: unknown, not guessed. Only a top-level function of the
launching file is a helper.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import libcst as cst

from triton_lint.model.host import bind_call, function_facts
from triton_lint.model.kernel import ModuleModel
from triton_lint.model.names import dotted_name
from triton_lint.model.tree import iter_nodes

#: The kernels a helper returns, each with the conditions of its one return path (None:
#: unknown).
Returns = dict[str, list[cst.BaseExpression] | None]
#: A returned dotted name -> the launched kernel's name, or None for anything else.
Resolve = Callable[[str], str | None]
#: ``a <= b`` -> ``a > b``: the negation of a single comparison.
_NEGATED: dict[type[cst.BaseCompOp], Callable[[], cst.BaseCompOp]] = {
    cst.LessThan: cst.GreaterThanEqual,
    cst.LessThanEqual: cst.GreaterThan,
    cst.GreaterThan: cst.LessThanEqual,
    cst.GreaterThanEqual: cst.LessThan,
    cst.Equal: cst.NotEqual,
    cst.NotEqual: cst.Equal,
}
CONSTANTS = {"True", "False", "None"}


@dataclass(frozen=True)
class Helper:
    """A dispatch helper: its file's model, its definition, what it returns."""

    model: ModuleModel
    function: cst.FunctionDef
    returns: Returns


def dispatch_helpers(
    host: ModuleModel, tops: list[cst.CSTNode], resolve: Resolve
) -> dict[str, Helper]:
    """The top-level functions among ``tops`` that return one of the kernels ``resolve``
    names, by name, with what each returns."""
    found: dict[str, Helper] = {}
    for top in tops:
        if isinstance(top, cst.FunctionDef) and host.functions.get(top.name.value) is top:
            paths: list[tuple[str, list[cst.BaseExpression] | None]] = []
            _returns(top.body, [], paths, resolve)
            if paths:
                found[top.name.value] = Helper(host, top, _per_kernel(paths))
    return found


def dispatched(helpers: dict[str, Helper], call: cst.Call) -> dict[str, list[cst.BaseExpression]]:
    """The kernels ``call`` of a dispatch helper (by the dotted name it is called) can
    return, each with the conditions that hold when it does, in the caller's names (a
    condition reading anything but the helper's unchanged parameters is left out)."""
    name = dotted_name(call.func)
    if name not in helpers:
        return {}
    helper = helpers[name]
    bound = bind_call(helper.function, call)
    bindings = function_facts(helper.model, helper.function)[0]
    params = {param for param in bound if bindings.get(param) == 1}
    found: dict[str, list[cst.BaseExpression]] = {}
    for kernel, conditions in helper.returns.items():
        found[kernel] = [
            substitute(test, bound)
            for test in conditions or ()
            if reads(test) <= params | CONSTANTS
        ]
    return found


def _per_kernel(paths: list[tuple[str, list[cst.BaseExpression] | None]]) -> Returns:
    found: Returns = {}
    for kernel, conditions in paths:
        found[kernel] = None if kernel in found else conditions
    return found


def _returns(
    suite: cst.BaseSuite | cst.BaseStatement,
    conditions: list[cst.BaseExpression],
    out: list[tuple[str, list[cst.BaseExpression] | None]],
    resolve: Resolve,
) -> None:
    """Append (kernel, conditions) for every ``return kernel`` under ``suite``."""
    if isinstance(suite, cst.SimpleStatementSuite | cst.SimpleStatementLine):
        for small in suite.body:
            kernel = _returned(small, resolve)
            if kernel is not None:
                out.append((kernel, list(conditions)))
        return
    if isinstance(suite, cst.IndentedBlock):
        for stmt in suite.body:
            _returns(stmt, conditions, out, resolve)
            if isinstance(stmt, cst.If) and leaves(stmt.body):
                conditions = [*conditions, negated(stmt.test)]
        return
    if isinstance(suite, cst.If):
        _returns(suite.body, [*conditions, suite.test], out, resolve)
        orelse = suite.orelse
        rest = [*conditions, negated(suite.test)]
        if isinstance(orelse, cst.Else):
            _returns(orelse.body, rest, out, resolve)
        elif isinstance(orelse, cst.If):
            _returns(orelse, rest, out, resolve)
        return
    for node in iter_nodes(suite):  # a loop, `with` or `try`: the path is unknown
        kernel = _returned(node, resolve)
        if kernel is not None:
            out.append((kernel, None))


def _returned(node: cst.CSTNode, resolve: Resolve) -> str | None:
    if not isinstance(node, cst.Return) or node.value is None:
        return None
    name = dotted_name(node.value)
    return resolve(name) if name is not None else None


def leaves(suite: cst.BaseSuite) -> bool:
    """The block always ends in ``return`` or ``raise``."""
    last: cst.CSTNode = suite
    if isinstance(suite, cst.IndentedBlock):
        if not suite.body or not isinstance(suite.body[-1], cst.SimpleStatementLine):
            return False
        last = suite.body[-1]
    body = getattr(last, "body", ())
    return bool(body) and isinstance(body[-1], cst.Return | cst.Raise)


def exit_test(stmt: cst.BaseStatement) -> cst.BaseExpression | None:
    """What an early exit leaves true after it: ``not test`` of ``if test:`` (no ``else``)
    whose body always ends in ``return`` or ``raise``."""
    if isinstance(stmt, cst.If) and stmt.orelse is None and leaves(stmt.body):
        return negated(stmt.test)
    return None


def negated(test: cst.BaseExpression) -> cst.BaseExpression:
    """``not test``; a single comparison with its operator turned (``s > 1536``)."""
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        turned = _NEGATED.get(type(target.operator))
        if turned is not None:
            return test.with_changes(comparisons=[target.with_changes(operator=turned())])
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return test.expression
    return cst.UnaryOperation(cst.Not(), cst.ensure_type(_parenthesized(test), cst.BaseExpression))


def _parenthesized(test: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(test, cst.Name | cst.Attribute | cst.Call | cst.Subscript) or test.lpar:
        return test
    return test.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def reads(test: cst.BaseExpression) -> set[str]:
    """Names ``test`` reads as values (not attribute names, not keywords)."""
    skipped = {id(node.attr) for node in iter_nodes(test) if isinstance(node, cst.Attribute)} | {
        id(node.keyword) for node in iter_nodes(test) if isinstance(node, cst.Arg) and node.keyword
    }
    return {
        node.value
        for node in iter_nodes(test)
        if isinstance(node, cst.Name) and id(node) not in skipped
    }


def substitute(
    test: cst.BaseExpression, values: dict[str, cst.BaseExpression]
) -> cst.BaseExpression:
    """``test`` with the names it reads as values replaced by ``values``."""

    class _Names(cst.CSTTransformer):
        def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
            value = values.get(original.value)
            if value is None:
                return updated
            return _parenthesized(value)

        def leave_Attribute(
            self, original: cst.Attribute, updated: cst.Attribute
        ) -> cst.BaseExpression:
            return updated.with_changes(attr=original.attr)  # the attribute's name is no value

        def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
            return updated.with_changes(keyword=original.keyword)

    return cst.ensure_type(test.visit(_Names()), cst.BaseExpression)
