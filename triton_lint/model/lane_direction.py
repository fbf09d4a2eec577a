"""Masked-lane values that arithmetic keeps neutral, for `MaskedLanes`: ``tl.where(cond, fill,
x)`` whose ``cond`` grows true the way a tail-masked load of ``x`` drops lanes (a causal mask
over keys past the end) fills them, and a 0 below real lanes >= 0 stays below them when both
are scaled by a value >= 0 (softmax probabilities)."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from triton_lint.model.dependencies import Dependencies
from triton_lint.model.kernel import Kernel
from triton_lint.model.masks import Masks
from triton_lint.model.reaching import Reaching
from triton_lint.model.signs import Signs
from triton_lint.model.tree import iter_nodes


def holds_on_dropped_lanes(
    kernel: Kernel, cond: cst.BaseExpression, mask: cst.BaseExpression
) -> bool:
    """``cond`` is true on the lanes the tail mask ``mask`` drops: it compares lanes that
    grow in the direction the mask cuts off (``T - kv + row - col < 1`` against
    ``kv + col < T``), so ``tl.where(cond, fill, x)`` fills them, like ``tl.where(mask, x,
    fill)`` does (the same trust in the bound as that form)."""
    if isinstance(cond, cst.Name):
        values = kernel.facts(Reaching).definition_values(cond)
        if len(values) != 1:
            return False
        cond = values[0][1]
    if not (isinstance(cond, cst.Comparison) and len(cond.comparisons) == 1):
        return False
    masks = kernel.facts(Masks)
    if not masks.is_tail_mask(mask):
        return False
    aranges, _ = masks.lane_sources(mask)
    if not aranges or not _mask_bounds(kernel, mask) & _names(cond):
        return False  # compared with another size than the load's bound: the lanes past it may
        # still fail the condition (`q + m >= n + w` with a window `w`)
    op = cond.comparisons[0].operator
    for arange in aranges:
        left = _lane_sign(kernel, cond.left, arange, 6)
        right = _lane_sign(kernel, cond.comparisons[0].comparator, arange, 6)
        if left is None or right is None:
            return False
        sign = _combine(left, -right)
        grows_true = (isinstance(op, cst.LessThan | cst.LessThanEqual) and sign == -1) or (
            isinstance(op, cst.GreaterThan | cst.GreaterThanEqual) and sign == 1
        )
        if not grows_true:
            return False
    return True


def _mask_bounds(kernel: Kernel, mask: cst.BaseExpression) -> set[str]:
    """The names a tail mask bounds its lanes by (``T`` of ``o_kv < T``)."""
    bounds: set[str] = set()
    for node in kernel.facts(Dependencies).closure(mask):
        if isinstance(node, cst.Comparison):
            for comparison in node.comparisons:
                upper = isinstance(comparison.operator, cst.LessThan | cst.LessThanEqual)
                bounds |= _names(comparison.comparator if upper else node.left)
    return bounds


def _names(expr: cst.BaseExpression) -> set[str]:
    return {node.value for node in iter_nodes(expr) if type(node) is cst.Name}


def _lane_sign(
    kernel: Kernel, expr: cst.BaseExpression, arange: cst.Call, depth: int
) -> int | None:
    """+1 or -1: ``arange``'s lanes enter ``expr`` added or subtracted; 0: they do not
    enter it; None: some other way (a product, a gather), or too deep to tell."""
    if depth <= 0:
        return None
    if expr is arange:
        return 1
    if isinstance(expr, cst.Subscript):
        return _lane_sign(kernel, expr.value, arange, depth - 1)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        inner = _lane_sign(kernel, expr.expression, arange, depth - 1)
        return None if inner is None else -inner
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add | cst.Subtract):
        left = _lane_sign(kernel, expr.left, arange, depth - 1)
        right = _lane_sign(kernel, expr.right, arange, depth - 1)
        if left is None or right is None:
            return None
        return _combine(left, -right if isinstance(expr.operator, cst.Subtract) else right)
    if isinstance(expr, cst.Name):
        values = kernel.facts(Reaching).definition_values(expr)
        signs = {_lane_sign(kernel, value, arange, depth - 1) for _, value in values}
        return signs.pop() if len(signs) == 1 else (0 if not signs else None)
    if (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Attribute)
        and expr.func.attr.value in ("to", "cast")
    ):
        return _lane_sign(kernel, expr.func.value, arange, depth - 1)
    if any(node is arange for node in kernel.facts(Dependencies).closure(expr, values_only=True)):
        return None
    return 0


def _combine(left: int, right: int) -> int | None:
    """The sign of a sum of two terms of known lane signs; None when they cancel unknowably."""
    if left and right and left != right:
        return None
    return left or right


def filled_where_true(
    kernel: Kernel,
    lanes_of: Callable[[cst.BaseExpression], dict[int, frozenset[str]]],
    cond: cst.BaseExpression,
    fill: cst.BaseExpression,
    kept: dict[int, frozenset[str]],
) -> dict[int, frozenset[str]] | None:
    """``tl.where(cond, fill, x)`` with ``cond`` true on the lanes a masked load of ``x``
    drops (a causal mask over keys past the end): that load's lanes take the clean
    ``fill``; the other loads' lanes keep their value. None when no load is filled."""
    if not kept or lanes_of(fill):
        return None
    left: dict[int, frozenset[str]] = {}
    for load, values in kept.items():
        access = kernel.access_by_id(load)
        mask = None if access is None else access.mask
        if mask is None or not holds_on_dropped_lanes(kernel, cond, mask):
            left[load] = values
    return left if len(left) < len(kept) else None


def scaled_absmin(
    kernel: Kernel,
    node: cst.BinaryOperation,
    left: dict[int, frozenset[str]],
    right: dict[int, frozenset[str]],
    out: dict[int, frozenset[str]],
) -> dict[int, frozenset[str]]:
    """A 0 below real lanes >= 0 (``exp`` of a ``-inf`` fill) stays below them when both
    are multiplied or divided by a value >= 0: ``p / tl.sum(p)`` keeps it neutral for a
    max."""
    masked, clean = (left, node.right) if left and not right else (right, node.left)
    scales = isinstance(node.operator, cst.Multiply) or (
        isinstance(node.operator, cst.Divide) and masked is left
    )
    if not (scales and masked and not (left and right)):
        return out
    if not any("absmin" in values for values in masked.values()):
        return out
    if not kernel.facts(Signs).non_negative(clean):
        return out
    return {
        load: (values - {"zero"}) | {"absmin"} if masked[load] == frozenset({"absmin"}) else values
        for load, values in out.items()
    }
