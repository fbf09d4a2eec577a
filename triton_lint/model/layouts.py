"""Lane layouts: whether a masked load's 2-D axes reach a value as loaded or swapped by a
transpose (``.T``, ``tl.trans``, ``tl.permute(x, (1, 0))``), which is what `Masks.mask_axes`
needs to say where the masked-off lanes sit, and which lanes ``tl.dot`` carries to its result."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from triton_lint.model.calls import tl_short
from triton_lint.model.evaluate import evaluate
from triton_lint.model.kernel import Kernel
from triton_lint.model.lane_values import LaneMemo, join_lanes
from triton_lint.model.masks import Masks
from triton_lint.model.reaching import Reaching
from triton_lint.model.reductions import REDUCTIONS
from triton_lint.model.tree import keyword_arg


class Layouts:
    """Layouts of the masked loads feeding each expression of one kernel (memoized)."""

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self._memo = LaneMemo()

    def lane_layouts(self, expr: cst.BaseExpression) -> dict[int, frozenset[str]]:
        """id(masked load call) -> how its 2-D axes reach ``expr``: ``"same"`` (as loaded),
        ``"swapped"`` (through an odd number of 2-D transposes: ``x.T``, ``tl.trans(x)``,
        ``x.trans()``, ``tl.trans(x, 1, 0)``, ``tl.permute(x, (1, 0))``) or ``"unknown"`` (another
        permutation). Follows the same paths as `masked_lanes`, over-approximating."""
        return self._memo.get(expr, self._layouts_of)

    def _layouts_of(self, node: cst.BaseExpression) -> dict[int, frozenset[str]]:
        if isinstance(node, cst.Name):
            merged: dict[int, frozenset[str]] = {}
            for definition in self.kernel.facts(Reaching).reaching(node):
                if definition.value is None or definition.kind == "for":
                    continue
                merged = join_lanes(merged, self.lane_layouts(definition.value))
                if definition.kind == "augassign" and isinstance(definition.node, cst.AugAssign):
                    merged = join_lanes(merged, self.lane_layouts(definition.node.target))
            return merged
        if isinstance(node, cst.Call):
            return self._call_layouts(node)
        if isinstance(node, cst.BinaryOperation):
            return join_lanes(self.lane_layouts(node.left), self.lane_layouts(node.right))
        if isinstance(node, cst.UnaryOperation):
            return self.lane_layouts(node.expression)
        if isinstance(node, cst.Subscript):
            return self.lane_layouts(node.value)
        if isinstance(node, cst.IfExp):
            return join_lanes(self.lane_layouts(node.body), self.lane_layouts(node.orelse))
        if isinstance(node, cst.Attribute) and node.attr.value == "T":
            return _permute_layouts(self.lane_layouts(node.value), "swapped")
        return {}

    def _call_layouts(self, call: cst.Call) -> dict[int, frozenset[str]]:
        access = self.kernel.access_for_call(call)
        if access is not None:
            if access.kind != "load" or access.mask is None or access.via_descriptor:
                return {}
            return {id(call): frozenset({"same"})}
        short = tl_short(self.kernel, call)
        args = [a.value for a in call.args if a.keyword is None]
        if isinstance(call.func, cst.Attribute) and short is None:
            method = call.func.attr.value
            receiver = self.lane_layouts(call.func.value)
            if method in ("trans", "permute"):
                return _permute_layouts(receiver, _transpose(call, args, method))
            if method in REDUCTIONS:
                return {}
            return receiver
        if short == "dot" and len(args) >= 2:
            return self.dot_carried(args[0], args[1], self.lane_layouts)
        if short in REDUCTIONS or short in ("load", "program_id", "arange", "zeros", "full"):
            return {}
        if short in ("trans", "permute") and args:
            first = self.lane_layouts(args[0])
            return _permute_layouts(first, _transpose(call, args[1:], short))
        merged: dict[int, frozenset[str]] = {}
        for arg in args:
            merged = join_lanes(merged, self.lane_layouts(arg))
        return merged

    def dot_carried(
        self,
        a: cst.BaseExpression,
        b: cst.BaseExpression,
        lanes: Callable[[cst.BaseExpression], dict[int, frozenset[str]]],
    ) -> dict[int, frozenset[str]]:
        """``lanes`` of the loads whose masked lanes ``tl.dot(a, b)`` carries into its result:
        those masked only along the rows of ``a`` (axis 0) or the columns of ``b`` (axis 1),
        which stay where they are. Lanes masked along K are combined, not carried."""
        masks = self.kernel.facts(Masks)
        carried: dict[int, frozenset[str]] = {}
        for operand, axis in ((a, 0), (b, 1)):
            layouts = self.lane_layouts(operand)
            for load, values in lanes(operand).items():
                access = self.kernel.access_by_id(load)
                if access is None or access.mask is None:
                    continue
                axes = [masks.mask_axes(access.mask, layout) for layout in layouts.get(load, ())]
                if axes and all(found == {axis} for found in axes):
                    carried = join_lanes(carried, {load: values})
        return carried


def _transpose(call: cst.Call, dims: list[cst.BaseExpression], op: str) -> str:
    """The layout change of ``tl.trans``/``tl.permute`` (or the methods) given the dims after
    the tensor: ``"swapped"`` for (1, 0) and for ``trans`` without dims, ``"same"`` for
    (0, 1), ``"unknown"`` otherwise."""
    given = keyword_arg(call, "dims")
    if given is None and len(dims) == 1:
        given = dims[0]
    if given is not None:
        value = evaluate(given)
    elif dims:
        value = [evaluate(d) for d in dims]
    else:
        return "swapped" if op == "trans" else "unknown"
    if value in ([1, 0], (1, 0)):
        return "swapped"
    if value in ([0, 1], (0, 1)):
        return "same"
    return "unknown"


def _permute_layouts(lanes: dict[int, frozenset[str]], change: str) -> dict[int, frozenset[str]]:
    """Compose a layout change onto every load's layouts."""
    if change == "same":
        return lanes
    flip = {"same": "swapped", "swapped": "same", "unknown": "unknown"}
    return {
        load: frozenset(flip[v] if change == "swapped" else "unknown" for v in values)
        for load, values in lanes.items()
    }
