"""Predicate helpers: a host function whose body only returns a test of its parameters
(``return 0 < num_tokens <= 32``, also wrapped in ``bool(...)`` and among other ``and``
terms), called in an ``if`` test or bound once to a flag that an ``if`` reads
(``direct = use_direct(x, num_tokens=M)`` then ``if direct:``). Where that ``if`` holds, so do
the helper's comparisons of its unchanged parameters, with the call's arguments in their place
(``0 < M <= 32``).

One level, one file: the helper is a top-level function of the file holding the test (a
helper that calls another helper, or one imported from another file, is not read), and only
terms of the ``and`` that are comparisons reading nothing but its parameters and constants
are kept: what the rest of the predicate says stays unknown.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from triton_lint.model.dispatch import CONSTANTS, reads, substitute
from triton_lint.model.host import bind_call, function_facts
from triton_lint.model.kernel import ModuleModel
from triton_lint.model.names import dotted_name


def predicate_tests(
    host: ModuleModel, function: cst.FunctionDef, test: cst.BaseExpression
) -> list[cst.BaseExpression]:
    """The comparisons that hold where ``test`` (an ``if`` test in ``function``, or what an
    early exit leaves true) is true, read through the predicate helpers its ``and`` terms
    call directly or through a flag ``function`` binds once."""
    found: list[cst.BaseExpression] = []
    for term in _conjuncts(test):
        call: cst.BaseExpression | None = term
        if isinstance(term, cst.Name):
            call = function_facts(host, function)[1].get(term.value)
        if isinstance(call, cst.Call) and isinstance(call.func, cst.Name):
            found.extend(_returned_comparisons(host, call))
    return found


def _returned_comparisons(host: ModuleModel, call: cst.Call) -> list[cst.BaseExpression]:
    helper = host.functions.get(call.func.value) if isinstance(call.func, cst.Name) else None
    if helper is None or not isinstance(helper.body, cst.IndentedBlock):
        return []
    body = [stmt for stmt in helper.body.body if not _docstring(stmt)]
    if len(body) != 1 or not isinstance(body[0], cst.SimpleStatementLine):
        return []
    returned = body[0].body[0]
    if not isinstance(returned, cst.Return) or returned.value is None:
        return []
    value = returned.value
    if isinstance(value, cst.Call) and dotted_name(value.func) == "bool" and len(value.args) == 1:
        value = value.args[0].value
    bound = bind_call(helper, call)
    bindings = function_facts(host, helper)[0]
    params = {param for param in bound if bindings.get(param) == 1}
    return [
        substitute(term, bound)
        for term in _conjuncts(value)
        if isinstance(term, cst.Comparison) and reads(term) <= params | CONSTANTS
    ]


def _conjuncts(test: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        yield from _conjuncts(test.left)
        yield from _conjuncts(test.right)
    else:
        yield test


def _docstring(stmt: cst.BaseStatement) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, cst.SimpleString | cst.ConcatenatedString)
    )
