"""Masks: which axes a mask constrains, whether it bounds lanes from above, and which
``tl.arange`` lanes a kernel bounds anywhere or treats as a whole fixed-size dimension."""

from __future__ import annotations

import libcst as cst

from triton_lint.model.calls import is_load, tl_short
from triton_lint.model.dependencies import Dependencies
from triton_lint.model.evaluate import evaluate
from triton_lint.model.kernel import Kernel
from triton_lint.model.names import TL
from triton_lint.model.provenance import Prov, Provenance
from triton_lint.model.structure import Structure


class Masks:
    """Mask and lane-extent queries over one kernel (cached where a rule asks repeatedly)."""

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self.dependencies = kernel.facts(Dependencies)
        self._bounded_aranges: set[int] | None = None
        self._axes: dict[tuple[int, bool], set[int] | None] = {}

    def mask_axes(self, mask: cst.BaseExpression, layout: str = "same") -> set[int] | None:
        """Axes a 2-D mask constrains (``offs[:, None] < m`` -> {0}); None if unknown.

        ``layout`` is how the masked value reaches the use (see `lane_layouts`): ``"swapped"``
        maps the axes through a 2-D transpose (``w.T`` of a tile masked along axis 0 is masked
        along axis 1); ``"unknown"``, or a transpose of a mask of unknown rank, gives None.
        """
        if layout == "unknown":
            return None
        axes = self._mask_axes(mask)
        if layout != "swapped" or axes is None:
            return axes
        if not self._mask_axes(mask, fallback=False):
            return None  # a mask of 1-D lanes: its rank, so where a transpose puts it, is unknown
        return {1 - axis for axis in axes}

    def _mask_axes(self, mask: cst.BaseExpression, fallback: bool = True) -> set[int] | None:
        # Rules ask for the same masks again and again (every use of a masked value).
        key = (id(mask), fallback)
        if key not in self._axes:
            self._axes[key] = self._find_mask_axes(mask, fallback)
        axes = self._axes[key]
        return None if axes is None else set(axes)

    def _find_mask_axes(self, mask: cst.BaseExpression, fallback: bool) -> set[int] | None:
        axes: set[int] = set()
        saw_lanes = False
        for node in self.dependencies.closure(mask):
            if isinstance(node, cst.Subscript) and len(node.slice) == 2:
                axis = expanded_axis(node)
                if axis is None:
                    return None
                axes.add(axis)
            elif isinstance(node, cst.Call) and tl_short(self.kernel, node) == "arange":
                saw_lanes = True
        if not axes:
            return {0} if saw_lanes and fallback else None
        return axes

    def is_tail_mask(self, mask: cst.BaseExpression) -> bool:
        """Every comparison in ``mask`` bounds lanes from above (``offs < n``): the masked-off
        lanes are at the end, so a forward scan never carries them into valid lanes."""
        found = False
        prov = self.kernel.facts(Provenance)
        for node in self.dependencies.closure(mask):
            if isinstance(node, cst.Comparison):
                for comparison in node.comparisons:
                    op = comparison.operator
                    left_lanes = Prov.ARANGE in prov.of(node.left)
                    right_lanes = Prov.ARANGE in prov.of(comparison.comparator)
                    upper = (isinstance(op, cst.LessThan | cst.LessThanEqual) and left_lanes) or (
                        isinstance(op, cst.GreaterThan | cst.GreaterThanEqual) and right_lanes
                    )
                    if not upper:
                        return False
                    found = True
        return found

    def is_lane_mask(self, cond: cst.BaseExpression) -> bool:
        """A condition built from ``tl.arange`` lanes (or a load's mask): a re-mask."""
        flags = self.kernel.facts(Provenance).of(cond)
        if flags & (Prov.ARANGE | Prov.WRAPPED) and Prov.LOADED not in flags:
            return True
        masks = {self.kernel.code(a.mask) for a in self.kernel.accesses if a.mask is not None}
        return self.kernel.code(cond) in masks

    def lane_sources(self, expr: cst.BaseExpression) -> tuple[list[cst.Call], list[cst.Call]]:
        """The ``tl.arange`` calls whose lanes reach ``expr`` arithmetically, and the loads
        whose values do (a gather's index vector). Loads are not entered."""
        aranges: list[cst.Call] = []
        loads: list[cst.Call] = []
        for node in self.dependencies.closure(expr, values_only=True):
            if isinstance(node, cst.Call):
                if tl_short(self.kernel, node) == "arange":
                    aranges.append(node)
                elif is_load(self.kernel, node):
                    loads.append(node)
        return aranges, loads

    def extension_pointer(self, pointer: cst.BaseExpression) -> bool:
        """The pointer comes from a Triton extension outside ``triton.language`` (e.g. a
        shared-memory ``local_ptr``), whose bounds the kernel allocated itself."""
        for node in self.dependencies.closure(pointer, values_only=True):
            if isinstance(node, cst.Call):
                path = self.kernel.module.aliases.resolve(node.func)
                if path is not None and path.startswith("triton.") and not path.startswith(TL):
                    return True
        return False

    def whole_extent(self, arange: cst.Call) -> bool:
        """``name = tl.arange(0, 256)``: lanes over a fixed extent, not shifted by a tile,
        program or loop offset (a fixed-size dimension such as a head or a lookup table)."""
        args = [a.value for a in arange.args if a.keyword is None]
        if len(args) != 2 or evaluate(args[0]) != 0:
            return False
        # a constexpr extent (HEAD_DIM) counts when the kernel never bounds these lanes in
        # any mask: the author treats them as the whole dimension
        if not isinstance(args[1], cst.Integer) and (
            not self.kernel.facts(Provenance).is_compile_time(args[1])
            or id(arange) in self._masked_aranges()
        ):
            return False
        parent = self.kernel.facts(Structure).parent(arange)
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
            target = parent.targets[0].target
            if isinstance(target, cst.Name):
                flags = self.kernel.facts(Provenance).of_name(target.value)
                return not flags & (Prov.PROGRAM_ID | Prov.LOOP | Prov.RUNTIME | Prov.LOADED)
        return False

    def _masked_aranges(self) -> set[int]:
        """``tl.arange`` calls that appear anywhere in an access mask of the kernel (a wider
        set than `lane_bounds`' end-of-dimension bounds)."""
        if self._bounded_aranges is None:
            found: set[int] = set()
            for access in self.kernel.accesses:
                if access.mask is not None:
                    for node in self.dependencies.closure(access.mask):
                        if isinstance(node, cst.Call) and tl_short(self.kernel, node) == "arange":
                            found.add(id(node))
            self._bounded_aranges = found
        return self._bounded_aranges


def expanded_axis(node: cst.BaseExpression) -> int | None:
    """The axis a 1-D vector lies along once expanded to 2-D: 0 for ``x[:, None]``, 1 for
    ``x[None, :]``; None for anything else."""
    if not isinstance(node, cst.Subscript) or len(node.slice) != 2:
        return None
    kinds = [_slice_kind(el) for el in node.slice]
    return {("full", "none"): 0, ("none", "full"): 1}.get((kinds[0], kinds[1]))


def _slice_kind(element: cst.SubscriptElement) -> str:
    inner = element.slice
    if isinstance(inner, cst.Slice):
        return "full" if inner.lower is None and inner.upper is None else "other"
    if isinstance(inner, cst.Index) and isinstance(inner.value, cst.Name):
        return "none" if inner.value.value == "None" else "other"
    return "other"
