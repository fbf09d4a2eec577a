"""Masked lanes: for each masked load feeding an expression, what its masked-off lanes hold
after the arithmetic in between (0, ``-inf``, undefined, or a non-neutral value), which decides
whether a reduction over the expression is correct (TL103, TL205, TL304)."""

from __future__ import annotations

import libcst as cst

from triton_lint.model.calls import tl_short
from triton_lint.model.dependencies import Dependencies
from triton_lint.model.evaluate import evaluate
from triton_lint.model.kernel import Definition, Kernel, MemoryAccess
from triton_lint.model.lane_direction import filled_where_true, scaled_absmin
from triton_lint.model.lane_values import (
    ABS_MAP,
    DOT_MAP,
    EXP_MAP,
    LOG_MAP,
    NEGATE,
    OPAQUE,
    OPAQUE_ALL,
    OPAQUE_KEEP_UNDEF,
    LaneMemo,
    binary_lanes,
    classify,
    constant_class,
    join_lanes,
    map_lanes,
)
from triton_lint.model.layouts import Layouts
from triton_lint.model.masks import Masks, expanded_axis
from triton_lint.model.names import dotted_name
from triton_lint.model.provenance import Prov, Provenance
from triton_lint.model.reaching import Reaching
from triton_lint.model.reductions import REDUCTIONS
from triton_lint.model.signs import loads_non_negative_buffer
from triton_lint.model.tree import keyword_arg

_EXP = {"exp", "exp2", "fast_expf", "expf"}
#: Provenance of a value that differs from lane to lane.
_PER_LANE = Prov.TENSOR | Prov.LOADED | Prov.ARANGE | Prov.WRAPPED


class MaskedLanes:
    """Masked-lane values of one kernel's expressions (memoized per node)."""

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self.reaching = kernel.facts(Reaching)
        self.prov = kernel.facts(Provenance)
        self.masks = kernel.facts(Masks)
        self._memo = LaneMemo()
        self._fill_override: dict[int, str] = {}

    def masked_lanes(self, expr: cst.BaseExpression) -> dict[int, frozenset[str]]:
        """id(load access call) -> the values its masked-off lanes may hold in ``expr``."""
        return self._memo.get(expr, self._lanes_of)

    def lanes_with_fill(
        self, expr: cst.BaseExpression, load: cst.Call, fill: str
    ) -> frozenset[str]:
        """Masked lanes of ``load`` in ``expr`` if the load had ``other=`` of class ``fill``."""
        saved = self._memo
        self._memo = LaneMemo()
        self._fill_override = {id(load): fill}
        try:
            return self.masked_lanes(expr).get(id(load), frozenset())
        finally:
            self._fill_override = {}
            self._memo = saved

    def load_fill(self, access: MemoryAccess) -> str:
        """Class of a masked load's ``other=`` ("undef" when absent). A 0 fill of a buffer an
        earlier launch filled with values >= 0 is neutral for their max too."""
        if access.other is None:
            return "undef"
        fill = self._fill_class(access.other)
        if fill == "zero" and loads_non_negative_buffer(self.kernel, access):
            return "absmin"
        return fill

    def backend_fill(self, access: MemoryAccess) -> str | None:
        """Class of what the backends put in the masked-off lanes of a load without
        ``other=`` (None when ``other=`` is given). The language leaves them undefined, but the
        NVIDIA and AMD lowerings and the interpreter all fill 0; of a buffer an earlier launch
        filled with values >= 0 that 0 is neutral for their max too."""
        if access.other is not None:
            return None
        return "absmin" if loads_non_negative_buffer(self.kernel, access) else "zero"

    def _fill_class(self, other: cst.BaseExpression) -> str:
        """An integer ``other=0`` fills an integer tensor, in kernels almost always lengths,
        counts or indices (>= 0), so 0 is neutral for their max too."""
        if isinstance(other, cst.Integer) and evaluate(other) == 0:
            return "absmin"
        return classify(self.kernel, other)

    def _lanes_of(self, node: cst.BaseExpression) -> dict[int, frozenset[str]]:
        if isinstance(node, cst.Name):
            merged: dict[int, set[str]] = {}
            reaching = self.reaching.reaching(node)
            overwritten = self._remasked_before(reaching)
            for definition in reaching:
                if id(definition.node) in overwritten:
                    continue  # its value reaches only through the re-mask after it
                parts = []
                if definition.value is not None and definition.kind != "for":
                    value_lanes = self.masked_lanes(definition.value)
                    if definition.kind == "augassign" and isinstance(
                        definition.node, cst.AugAssign
                    ):
                        target = definition.node.target
                        old = self.masked_lanes(target)
                        clean = None
                        fill = self._additive_mask(definition.value)
                        if (
                            old
                            and fill is not None
                            and isinstance(definition.node.operator, cst.AddAssign)
                        ):
                            value_lanes = {load: frozenset({fill}) for load in old}
                        else:
                            if old and not value_lanes:
                                clean = self._clean_class(definition.value)
                            elif value_lanes and not old:
                                clean = self._clean_class(target)
                            value_lanes = binary_lanes(
                                definition.node.operator,
                                old,
                                value_lanes,
                                clean,
                                left_masked=bool(old),
                            )
                    parts.append(value_lanes)
                for part in parts:
                    for load, values in part.items():
                        merged.setdefault(load, set()).update(values)
            return {k: frozenset(v) for k, v in merged.items()}
        if isinstance(node, cst.Call):
            return self._call_lanes(node)
        if isinstance(node, cst.BinaryOperation):
            left = self.masked_lanes(node.left)
            right = self.masked_lanes(node.right)
            if isinstance(node.operator, cst.Add):
                # ``qk + tl.where(mask, 0, -inf)``: an additive re-mask sets the masked lanes
                for lanes, bias in ((left, node.right), (right, node.left)):
                    fill = self._additive_mask(bias)
                    if lanes and fill is not None:
                        return {load: frozenset({fill}) for load in lanes}
            constant = None
            if left and not right:
                constant = self._clean_class(node.right)
            elif right and not left:
                constant = self._clean_class(node.left)
            out = binary_lanes(node.operator, left, right, constant, left_masked=bool(left))
            return scaled_absmin(self.kernel, node, left, right, out)
        if isinstance(node, cst.UnaryOperation):
            inner = self.masked_lanes(node.expression)
            if isinstance(node.operator, cst.Minus):
                return map_lanes(inner, NEGATE)
            return inner
        if isinstance(node, cst.Subscript):
            return self.masked_lanes(node.value)
        if isinstance(node, cst.IfExp):
            return join_lanes(self.masked_lanes(node.body), self.masked_lanes(node.orelse))
        if isinstance(node, cst.Attribute) and node.attr.value == "T":
            return self.masked_lanes(node.value)
        return {}

    def _remasked_before(self, reaching: list[Definition]) -> set[int]:
        """Definitions a later re-mask among ``reaching`` overwrites, so that only the
        re-masked value reaches: an additive ``x += tl.where(mask, 0, -inf)`` in the same block
        (under an ``if`` the old value reaches too), or a `_guarded_remask`."""
        out: set[int] = set()
        for aug in reaching:
            if aug.kind != "augassign" or not isinstance(aug.node, cst.AugAssign):
                continue
            if aug.value is None or self._additive_mask(aug.value) is None:
                continue
            for old in self.reaching.reaching(aug.node.target):
                if old.branches == aug.branches and old.order < aug.order:
                    out.add(id(old.node))
        for remask in reaching:
            kept = self._guarded_remask(remask)
            if kept is not None:
                out.update(
                    id(old.node) for old in self.reaching.reaching(kept) if old.order < remask.order
                )
        return out

    def _guarded_remask(self, definition: Definition) -> cst.Name | None:
        """``x`` of ``x = tl.where(mask, x, fill)`` (or ``where(mask, fill, x)``) under an
        ``if`` on a runtime test, such as ``if start + BLOCK > n:``: a re-mask of the tiles
        that need one, so the value before it does not reach past it. Under a compile-time
        flag (``if IS_CAUSAL:``) the unmasked value reaches on the other path."""
        value = definition.value
        if definition.kind != "assign" or not definition.branches:
            return None
        if not (isinstance(value, cst.Call) and tl_short(self.kernel, value) == "where"):
            return None
        if any(self.prov.is_compile_time(branch.test) for branch in definition.branches):
            return None
        args = [a.value for a in value.args if a.keyword is None]
        arms = [arm for arm in args[1:] if isinstance(arm, cst.Name)]
        kept = [arm for arm in arms if arm.value == definition.name]
        return kept[0] if len(args) == 3 and kept else None

    def _helper_selects(self, call: cst.Call) -> bool:
        """``call`` is to a ``@triton.jit`` helper of this file that calls ``tl.where``."""
        helper = self.kernel.module.kernels_by_name.get(dotted_name(call.func) or "")
        return helper is not None and any(helper.calls_to("where"))

    def _clean_class(self, node: cst.BaseExpression) -> str | None:
        """Class of an operand without masked lanes: a constant's sign, ``"tensor"`` for an
        elementwise tensor (an accumulator, lane offsets), or None for a broadcast scalar
        (a parameter, a reduction result, a scalar load) that shifts every lane alike."""
        constant = constant_class(self.kernel, node)
        if constant is not None:
            return constant
        if is_broadcast(self.kernel, node, 4):
            return None
        flags = self.prov.of(node)
        if not flags & _PER_LANE:
            return None  # parameters and program ids: scalars
        return "tensor"

    def _call_lanes(self, call: cst.Call) -> dict[int, frozenset[str]]:
        kernel = self.kernel
        access = kernel.access_for_call(call)
        if access is not None:
            if access.kind != "load" or access.mask is None or access.via_descriptor:
                return {}
            if id(call) in self._fill_override:
                return {id(call): frozenset({self._fill_override[id(call)]})}
            return {id(call): frozenset({self.load_fill(access)})}
        short = tl_short(self.kernel, call)
        args = [a.value for a in call.args if a.keyword is None]
        if isinstance(call.func, cst.Attribute) and short is None:
            method = call.func.attr.value
            receiver = self.masked_lanes(call.func.value)
            if method in ("to", "cast", "reshape", "trans", "permute", "broadcast_to", "view"):
                return receiver
            if method in REDUCTIONS:
                return {}
            return map_lanes(receiver, OPAQUE)
        if short is None:
            # a helper that selects with `tl.where` may re-mask: its lanes are unknown
            table = OPAQUE_ALL if self._helper_selects(call) else OPAQUE
            merged: dict[int, frozenset[str]] = {}
            for arg in args:
                merged = join_lanes(merged, map_lanes(self.masked_lanes(arg), table))
            return merged
        if short == "dot" and len(args) >= 2:
            # output lanes of masked rows of ``a`` or masked columns of ``b``
            carried = self.kernel.facts(Layouts).dot_carried(args[0], args[1], self.masked_lanes)
            return map_lanes(carried, DOT_MAP)
        if short in REDUCTIONS or short in ("load", "program_id", "arange", "zeros", "full"):
            return {}
        if short == "where" and len(args) == 3:
            if self.masks.is_lane_mask(args[0]):
                other = self.masked_lanes(args[2])
                filled = filled_where_true(self.kernel, self.masked_lanes, args[0], args[1], other)
                if filled is not None:
                    return filled
                if other:
                    return other
                return {}  # re-masked with a clean value: the rule checks that value itself
            body, orelse = self.masked_lanes(args[1]), self.masked_lanes(args[2])
            return map_lanes(join_lanes(body, orelse), OPAQUE_KEEP_UNDEF)
        first = self.masked_lanes(args[0]) if args else {}
        if short in ("cast", "reshape", "trans", "permute", "broadcast_to", "expand_dims", "view"):
            return first
        if short in _EXP:
            return map_lanes(first, EXP_MAP)
        if short in ("log", "log2"):
            return map_lanes(first, LOG_MAP)
        if short == "abs":
            return map_lanes(first, ABS_MAP)
        if short in ("maximum", "minimum") and len(args) == 2:
            second = self.masked_lanes(args[1])
            return map_lanes(join_lanes(first, second), OPAQUE)
        merged = first
        for arg in args[1:]:
            merged = join_lanes(merged, self.masked_lanes(arg))
        return map_lanes(merged, OPAQUE)

    def _additive_mask(self, expr: cst.BaseExpression) -> str | None:
        """The fill class of ``tl.where(lane_mask, 0, fill)`` (added to re-mask), else None."""
        fill = self.where_fill(expr)
        if fill is None:
            return None
        args = [a.value for a in expr.args if a.keyword is None]  # type: ignore[attr-defined]
        return fill if constant_class(self.kernel, args[1]) == "zero" else None

    def where_fill(self, expr: cst.BaseExpression) -> str | None:
        """If ``expr`` is ``tl.where(lane_mask, x, fill)``, the class of ``fill``."""
        if isinstance(expr, cst.Call) and tl_short(self.kernel, expr) == "where":
            args = [a.value for a in expr.args if a.keyword is None]
            if len(args) == 3 and self.masks.is_lane_mask(args[0]):
                return classify(self.kernel, args[2])
        return None


def is_broadcast(
    kernel: Kernel, node: cst.BaseExpression, depth: int, expanded: bool = False
) -> bool:
    """The same value in every lane: a reduction result (``mean = tl.sum(x) / n``, ``m[:,
    None]``) or a scalar load. A reduction of a 2-D tile along one axis (``tl.sum(w[:, None] *
    tile, axis=0)``) keeps the other axis's lanes unless it is expanded again (``expanded``:
    reached through ``[:, None]``)."""
    if depth <= 0:
        return False
    prov = kernel.facts(Provenance)
    if isinstance(node, cst.Subscript):
        widened = expanded or expanded_axis(node) is not None
        return is_broadcast(kernel, node.value, depth - 1, widened)
    if isinstance(node, cst.BinaryOperation):
        # every operand a broadcast or a scalar (`tl.sum(x) / n`); a product with a per-lane
        # tensor (`p * tl.sum(x)[:, None]`) is per-lane
        sides = (node.left, node.right)
        broadcast = [is_broadcast(kernel, side, depth - 1, expanded) for side in sides]
        return any(broadcast) and all(
            b or not prov.of(side) & _PER_LANE for b, side in zip(broadcast, sides, strict=True)
        )
    if isinstance(node, cst.Name):
        values = kernel.facts(Reaching).definition_values(node)
        return bool(values) and all(
            is_broadcast(kernel, value, depth - 1, expanded) for _, value in values
        )
    if isinstance(node, cst.Call):
        short = tl_short(kernel, node)
        if short in REDUCTIONS and short not in ("dot", "dot_scaled", "cumsum", "cumprod"):
            return expanded or not _keeps_lanes(kernel, node)
        access = kernel.access_for_call(node)
        if access is not None and access.kind == "load" and access.pointer is not None:
            pointer = prov.of(access.pointer)
            return not pointer & (Prov.ARANGE | Prov.WRAPPED | Prov.BLOCK_PTR | Prov.DESCRIPTOR)
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in ("to", "cast"):
            return is_broadcast(kernel, node.func.value, depth - 1, expanded)
    return False


def _keeps_lanes(kernel: Kernel, reduction: cst.Call) -> bool:
    """A reduction along one axis of a 2-D operand (one built from ``x[:, None]`` or
    ``x[None, :]``): its result is a vector along the other axis."""
    axis = keyword_arg(reduction, "axis")
    positional = [a.value for a in reduction.args if a.keyword is None]
    if axis is None and len(positional) >= 2:
        axis = positional[1]
    if axis is None or evaluate(axis) is None or not positional:
        return False
    return any(
        expanded_axis(node) is not None
        for node in kernel.facts(Dependencies).closure(positional[0])
        if isinstance(node, cst.Subscript)
    )
