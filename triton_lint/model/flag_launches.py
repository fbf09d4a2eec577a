"""What a launch's grid holds on the host path that turns a constexpr flag on.

A kernel often keeps a mode behind a constexpr flag (``if QUANT:``) that the host turns on in
one branch, building the launch's keyword arguments there (``kwargs = {"QUANT": True, ...}``)
and sizing the grid for that mode in the same branch: ``assert ngroups == 1`` before a grid
``(cdiv(M, rows), ngroups)``, or ``block = next_power_of_2(hidden)`` before ``(rows,
cdiv(hidden, block))``. Code under the flag then runs only with the grid that branch builds.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from triton_lint.model.earlier_tiles import ceil_division
from triton_lint.model.evaluate import evaluate
from triton_lint.model.host_tests import conjuncts, equality_sides
from triton_lint.model.kernel import Kernel, LaunchSite
from triton_lint.model.launches import dict_items
from triton_lint.model.names import dotted_name


def single_program_when_set(kernel: Kernel, flag: str, axis: int) -> bool:
    """Every launch of ``kernel`` runs one program on grid ``axis`` whenever it turns the
    constexpr ``flag`` on: it leaves the flag at a false default, or turns it on in a host
    branch that pins that axis to 1. False when no launch is known."""
    param = kernel.params_by_name.get(flag)
    if param is None or not param.is_constexpr or not kernel.launches:
        return False
    default_off = param.default is not None and evaluate(param.default) in (False, 0)
    for site in kernel.launches:
        bound = site.bound_arguments(kernel).get(flag)
        if bound is not None:
            if evaluate(bound) in (False, 0):
                continue
            if evaluate(bound) is not True or not _one(site, axis, []):
                return False
            continue
        branches = list(_setting_branches(site, flag))
        spread = any(arg.star == "**" for arg in site.call.args)
        if not branches and default_off and not spread:
            continue  # never turned on by this launch
        if not branches or not all(_one(site, axis, body) for body in branches):
            return False
    return True


def _setting_branches(site: LaunchSite, flag: str) -> Iterator[list[cst.BaseStatement]]:
    """The bodies of the host ``if`` statements, in the launching function, that build a dict
    turning ``flag`` on (``{"QUANT": True}``, ``dict(QUANT=True)``); an empty body for such a
    dict outside any ``if`` (it holds wherever the launch runs)."""
    if site.function is None:
        return
    yield from _walk(site.function.body, [], flag)


def _walk(
    node: cst.CSTNode, body: list[cst.BaseStatement], flag: str
) -> Iterator[list[cst.BaseStatement]]:
    if isinstance(node, cst.If):
        yield from _walk(node.test, body, flag)
        yield from _walk(node.body, _statements(node.body), flag)
        if isinstance(node.orelse, cst.If):
            yield from _walk(node.orelse, body, flag)
        elif node.orelse is not None:
            yield from _walk(node.orelse.body, _statements(node.orelse.body), flag)
        return
    if isinstance(node, (cst.FunctionDef, cst.Lambda)):
        return
    if _turns_on(node, flag):
        yield body
        return
    for child in node.children:
        yield from _walk(child, body, flag)


def _statements(block: cst.BaseSuite) -> list[cst.BaseStatement]:
    return list(block.body) if isinstance(block, cst.IndentedBlock) else []


def _turns_on(node: cst.CSTNode, flag: str) -> bool:
    """``node`` is a ``{"FLAG": True}`` or ``dict(FLAG=True)`` (`launches.dict_items`)."""
    value = dict_items(node).get(flag) if isinstance(node, cst.BaseExpression) else None
    return value is not None and evaluate(value) is True


def _one(site: LaunchSite, axis: int, body: list[cst.BaseStatement]) -> bool:
    """Grid ``axis`` of ``site`` is 1 given the statements of ``body``: a literal 1, a name
    an ``assert name == 1`` there pins, or ``cdiv(n, b)`` with ``b = next_power_of_2(n)``."""
    dims = site.grid_dims
    if dims is None or axis >= len(dims):
        return dims is not None  # an axis the grid leaves out has one program
    dim = dims[axis]
    if evaluate(dim) == 1:
        return True
    asserted, assigned = _facts(body)
    if isinstance(dim, cst.Name) and asserted.get(dim.value) == 1:
        return True
    division = ceil_division(dim)
    if division is None or not isinstance(division[1], cst.Name):
        return False
    tile = assigned.get(division[1].value)
    return (
        isinstance(tile, cst.Call)
        and (dotted_name(tile.func) or "").endswith("next_power_of_2")
        and len(tile.args) == 1
        and tile.args[0].value.deep_equals(division[0])
    )


def _facts(
    body: list[cst.BaseStatement],
) -> tuple[dict[str, object], dict[str, cst.BaseExpression]]:
    """Names the top-level ``assert name == literal`` tests of ``body`` pin, and the value of
    each name a top-level ``name = value`` there assigns."""
    asserted: dict[str, object] = {}
    assigned: dict[str, cst.BaseExpression] = {}
    for statement in body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.Assert):
                for test in conjuncts(small.test):
                    sides = equality_sides(test)
                    if sides is not None and isinstance(sides[0], cst.Name):
                        asserted[sides[0].value] = evaluate(sides[1])
            elif (
                isinstance(small, cst.Assign)
                and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name)
            ):
                assigned[small.targets[0].target.value] = small.value
    return asserted, assigned
