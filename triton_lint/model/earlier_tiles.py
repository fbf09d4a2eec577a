"""Lanes that only cover the tiles before the program's own: in bounds by the grid.

A causal kernel walks the tiles before its own with ``for start in range(0, pid * BLOCK,
BLOCK)`` and lanes ``start + tl.arange(0, BLOCK)``: every lane is below ``pid * BLOCK``. When
every launch sizes that grid axis ``cdiv(n, BLOCK)`` with ``n`` the value passed for the
bound a mask compares the lanes with, the program's own tile starts below ``n``, so the
earlier tiles are whole and a mask on them (``start + r < n``) is redundant, not evidence that
an unmasked access of the same lanes runs past the end.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import libcst as cst

from triton_lint.model.calls import tl_short
from triton_lint.model.dependencies import Dependencies
from triton_lint.model.evaluate import evaluate
from triton_lint.model.kernel import Kernel, MemoryAccess
from triton_lint.model.names import dotted_name
from triton_lint.model.program_ids import ProgramIds
from triton_lint.model.provenance import Provenance
from triton_lint.model.structure import Structure
from triton_lint.model.tree import iter_nodes

_SPACE = re.compile(r"\s+")


def ceil_division(
    expr: cst.BaseExpression,
) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
    """(numerator, denominator) of a ``cdiv(n, b)`` or ``(n + b - 1) // b`` inside ``expr``."""
    for node in iter_nodes(expr):
        name = dotted_name(node.func) if isinstance(node, cst.Call) else None
        if name is not None and name.endswith("cdiv") and len(node.args) == 2:
            return node.args[0].value, node.args[1].value
        if (
            isinstance(node, cst.BinaryOperation)
            and isinstance(node.operator, cst.FloorDivide)
            and isinstance(node.left, cst.BinaryOperation)
            and isinstance(node.left.operator, cst.Subtract)
            and evaluate(node.left.right) == 1
        ):
            numerator = node.left.left  # `n + b` of `(n + b - 1) // b`: `n`
            if (
                isinstance(numerator, cst.BinaryOperation)
                and isinstance(numerator.operator, cst.Add)
                and numerator.right.deep_equals(node.right)
            ):
                numerator = numerator.left
            return numerator, node.right
    return None


def earlier_tiles_only(
    kernel: Kernel, access: MemoryAccess, loop_shifts: frozenset[str], limits: frozenset[str]
) -> bool:
    """``access``'s lanes are ``v + tl.arange(0, B)`` for the variable ``v`` of an enclosing
    ``for v in range(0, pid * B, B)`` (``v`` among the loop variables a mask shifts its
    compared lanes by, ``loop_shifts``), and every launch of the kernel sizes ``pid``'s grid
    axis ``cdiv(n, B)`` with ``n`` what it passes for one of the mask's bounds (``limits``):
    the lanes stay below the program's own tile start, which stays below ``n``."""
    structure = kernel.facts(Structure)
    for loop in structure.ancestors(access.call):
        if not (isinstance(loop, cst.For) and isinstance(loop.target, cst.Name)):
            continue
        if loop.target.value not in loop_shifts:
            continue
        tile = _own_tile_bound(kernel, loop)
        if tile is None:
            continue
        axis, step = tile
        if _shifted_lanes(kernel, access, loop.target.value, step) and _grid_covers(
            kernel, axis, step, limits
        ):
            return True
    return False


def _own_tile_bound(kernel: Kernel, loop: cst.For) -> tuple[object, str] | None:
    """(grid axis, tile text) of ``range(0, pid * B, B)`` (``tl.range`` too)."""
    iterable = loop.iter
    if not isinstance(iterable, cst.Call):
        return None
    if (dotted_name(iterable.func) or "").split(".")[-1] != "range":
        return None
    args = [a.value for a in iterable.args if a.keyword is None]
    if len(args) != 3 or evaluate(args[0]) != 0:
        return None
    stop, step = args[1], args[2]
    if not kernel.facts(Provenance).is_compile_time(step):
        return None
    if not (isinstance(stop, cst.BinaryOperation) and isinstance(stop.operator, cst.Multiply)):
        return None
    tile = _text(kernel, step)
    factors = {_text(kernel, stop.left): stop.right, _text(kernel, stop.right): stop.left}
    program = factors.get(tile)
    if program is None or not _is_program_id(kernel, program):
        return None  # `(pid + 1) * BLOCK` reaches the program's own tile
    axes = kernel.facts(ProgramIds).pid_axes(program)
    return (next(iter(axes)), tile) if len(axes) == 1 else None


def _is_program_id(kernel: Kernel, expr: cst.BaseExpression) -> bool:
    """``tl.program_id(a)`` itself (cast or not), directly or through a name set once."""
    value = _set_once(kernel, _uncast(expr))
    if value is None:
        return False
    value = _uncast(value)
    return isinstance(value, cst.Call) and tl_short(kernel, value) == "program_id"


def _set_once(kernel: Kernel, expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """``expr``, or for a name the value of its one definition; None for a name defined
    more than once or by a definition the model records no value for."""
    if not isinstance(expr, cst.Name):
        return expr
    definitions = kernel.definitions.get(expr.value, [])
    return definitions[0].value if len(definitions) == 1 else None


def _shifted_lanes(kernel: Kernel, access: MemoryAccess, var: str, tile: str) -> bool:
    """A sum of the loop variable and ``tl.arange(0, tile)`` reaches the pointer, with no
    compile-time shift besides (``start + r``, ``k_ptr + start + r``; not ``start + r + 1``)."""
    assert access.pointer is not None
    structure = kernel.facts(Structure)
    provenance = kernel.facts(Provenance)
    for node in kernel.facts(Dependencies).closure(access.pointer, values_only=True):
        if not (isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add)):
            continue
        parent = structure.parent(node)
        if isinstance(parent, cst.BinaryOperation) and isinstance(
            parent.operator, cst.Add | cst.Subtract
        ):
            continue  # part of a longer sum
        terms = [_uncast(term) for term in _addends(node)]
        shifted = [t for t in terms if isinstance(t, cst.Name) and t.value == var]
        lanes = [t for t in terms if _arange(kernel, t, tile)]
        rest = [t for t in terms if not any(t is u for u in shifted + lanes)]
        if (
            len(shifted) == 1
            and len(lanes) == 1
            and not any(provenance.is_compile_time(t) for t in rest)
        ):
            return True
    return False


def _addends(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The terms of a ``+`` chain (a subtracted term stays a term: it is a shift too)."""
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
        return _addends(node.left) + _addends(node.right)
    return [node]


def _arange(kernel: Kernel, expr: cst.BaseExpression, tile: str) -> bool:
    """``tl.arange(0, tile)``, directly or through a name with that single definition."""
    value = _set_once(kernel, expr)
    if not (isinstance(value, cst.Call) and tl_short(kernel, value) == "arange"):
        return False
    args = [a.value for a in value.args]
    return len(args) == 2 and evaluate(args[0]) == 0 and _text(kernel, args[1]) == tile


def _grid_covers(kernel: Kernel, axis: object, tile: str, limits: frozenset[str]) -> bool:
    """Every launch sizes ``axis`` as ``cdiv(n, tile)`` with ``n`` passed for a limit."""
    code = kernel.module.module.code_for_node
    if not kernel.launches:
        return False
    for site in kernel.launches:
        dims = site.grid_dims or []
        if not isinstance(axis, int) or axis >= len(dims):
            return False
        division = ceil_division(dims[axis])
        if division is None:
            return False
        numerator, denominator = division
        passed = site.bound_arguments(kernel)
        if not _same_tile(code, denominator, tile, passed.get(tile)):
            return False
        bounds = {_SPACE.sub("", code(passed[n])) for n in limits if n in passed}
        if _SPACE.sub("", code(numerator)) not in bounds:
            return False
    return True


def _same_tile(
    code: Callable[[cst.CSTNode], str],
    denominator: cst.BaseExpression,
    tile: str,
    passed: cst.BaseExpression | None,
) -> bool:
    """The grid divides by the kernel's tile: ``META['BLOCK']`` or what the launch passes."""
    if isinstance(denominator, cst.Subscript) and len(denominator.slice) == 1:
        index = denominator.slice[0].slice
        if isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString):
            return index.value.evaluated_value == tile
    return passed is not None and _SPACE.sub("", code(denominator)) == _SPACE.sub("", code(passed))


def _uncast(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``v.to(tl.int64)`` -> ``v``."""
    while (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Attribute)
        and expr.func.attr.value in ("to", "cast")
    ):
        expr = expr.func.value
    return expr


def _text(kernel: Kernel, node: cst.CSTNode) -> str:
    return _SPACE.sub("", kernel.module.module.code_for_node(node))
