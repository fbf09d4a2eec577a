"""Masks: which axes a mask constrains, whether it bounds lanes from above or drops none at
all, and which ``tl.arange`` lanes a kernel bounds anywhere or treats as a whole fixed-size
dimension."""

from __future__ import annotations

import libcst as cst

from triton_lint.model.calls import is_load, is_loop_header, tl_short
from triton_lint.model.dependencies import Dependencies
from triton_lint.model.evaluate import UNKNOWN, evaluate
from triton_lint.model.host_tests import HostDivisibility
from triton_lint.model.kernel import Kernel
from triton_lint.model.names import TL
from triton_lint.model.provenance import Prov, Provenance
from triton_lint.model.reaching import Reaching
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
        for node in self.dependencies.closure(mask, stop_below=self._holds_for_every_lane):
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

    def never_drops(self, mask: cst.BaseExpression) -> bool:
        """Every conjunct of ``mask`` holds for every lane (`_holds_for_every_lane`): the load
        reads every lane it is given, whatever the mask says."""
        terms = self._conjuncts(mask, depth=4)
        return bool(terms) and all(self._holds_for_every_lane(t) for t in terms)

    def _conjuncts(self, mask: cst.BaseExpression, depth: int) -> list[cst.BaseExpression]:
        """``a & b`` / ``a and b``, through names assigned once: ``[a, b]``."""
        if (isinstance(mask, cst.BooleanOperation) and isinstance(mask.operator, cst.And)) or (
            isinstance(mask, cst.BinaryOperation) and isinstance(mask.operator, cst.BitAnd)
        ):
            return [*self._conjuncts(mask.left, depth), *self._conjuncts(mask.right, depth)]
        if isinstance(mask, cst.Name) and depth > 0 and (value := self._single_value(mask)):
            return self._conjuncts(value, depth - 1)
        return [mask]

    def _holds_for_every_lane(self, node: cst.CSTNode) -> bool:
        """``base + tl.arange(0, 1) < N`` where ``for base in range(0, N, BLOCK)``: a tile of
        one lane at a loop index, compared with the loop's own bound, never fails (the last
        tile of a one-lane tile is never partial). Kunlunxin kernels fix such tiles to 1
        with ``@triton.heuristics``. Also `_whole_tiles`."""
        if not (
            isinstance(node, cst.Comparison)
            and len(node.comparisons) == 1
            and isinstance(node.comparisons[0].operator, cst.LessThan)
        ):
            return False
        if self._whole_tiles(node.left, node.comparisons[0].comparator):
            return True
        bound = self.kernel.code(node.comparisons[0].comparator)
        loops = 0
        for term in self._added_terms(node.left, depth=4):
            if self._one_lane(term):
                continue
            if isinstance(term, cst.Name) and self._loop_below(term, bound):
                loops += 1
                continue
            return False
        return loops == 1

    def _whole_tiles(self, lanes: cst.BaseExpression, bound: cst.BaseExpression) -> bool:
        """``pid * BLOCK + tl.arange(0, BLOCK) < M`` (or a loop index stepping by ``BLOCK``
        from 0) where every launch asserts ``M % BLOCK == 0`` on the host for the values it
        passes: a tile never straddles ``M``."""
        if not (isinstance(bound, cst.Name) and bound.value in self.kernel.params_by_name):
            return False
        tiles = [t for t in self._added_terms(lanes, depth=4) if self._tile_lanes(t)]
        if len(tiles) != 1:
            return False
        tile = self._tile_lanes(tiles[0])
        assert tile is not None
        for term in self._added_terms(lanes, depth=4):
            if term is not tiles[0] and not self._multiple_of(term, tile):
                return False
        return self.kernel.facts(HostDivisibility).divides(bound.value, tile)

    def _tile_lanes(self, expr: cst.BaseExpression) -> str | None:
        """The constexpr parameter ``T`` of ``tl.arange(0, T)``."""
        if not (isinstance(expr, cst.Call) and tl_short(self.kernel, expr) == "arange"):
            return None
        args = [a.value for a in expr.args if a.keyword is None]
        if len(args) != 2 or evaluate(args[0]) != 0 or not isinstance(args[1], cst.Name):
            return None
        param = self.kernel.params_by_name.get(args[1].value)
        return param.name if param is not None and param.is_constexpr else None

    def _multiple_of(self, term: cst.BaseExpression, tile: str, depth: int = 4) -> bool:
        """``x * tile`` (through names assigned once and casts), or the index of a loop
        ``range(0, n, tile)``."""
        if isinstance(term, cst.BinaryOperation) and isinstance(term.operator, cst.Multiply):
            return tile in (self.kernel.code(term.left), self.kernel.code(term.right))
        if (
            isinstance(term, cst.Call)
            and isinstance(term.func, cst.Attribute)
            and term.func.attr.value == "to"
            and depth > 0
        ):
            return self._multiple_of(term.func.value, tile, depth - 1)
        if not isinstance(term, cst.Name) or depth == 0:
            return False
        definitions = self.kernel.facts(Reaching).reaching(term)
        if len(definitions) != 1:
            return False
        value = definitions[0].value
        if definitions[0].kind == "assign" and value is not None:
            return self._multiple_of(value, tile, depth - 1)
        if definitions[0].kind != "for" or not isinstance(value, cst.Call):
            return False
        if not is_loop_header(value):
            return False
        args = [a.value for a in value.args if a.keyword is None]
        return len(args) == 3 and evaluate(args[0]) == 0 and self.kernel.code(args[2]) == tile

    def _added_terms(self, expr: cst.BaseExpression, depth: int) -> list[cst.BaseExpression]:
        """The summands of ``expr``, through names assigned once and ``[None, :]``."""
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
            return [*self._added_terms(expr.left, depth), *self._added_terms(expr.right, depth)]
        if expanded_axis(expr) is not None:
            assert isinstance(expr, cst.Subscript)
            return self._added_terms(expr.value, depth)
        if isinstance(expr, cst.Name) and depth > 0 and (value := self._single_value(expr)):
            return self._added_terms(value, depth - 1)
        return [expr]

    def _single_value(self, name: cst.Name) -> cst.BaseExpression | None:
        """The value of the one plain assignment that reaches ``name``."""
        definitions = self.kernel.facts(Reaching).reaching(name)
        if len(definitions) == 1 and definitions[0].kind == "assign":
            return definitions[0].value
        return None

    def _one_lane(self, expr: cst.BaseExpression) -> bool:
        """``tl.arange(0, W)`` where W is 1 wherever the kernel gets it."""
        if not (isinstance(expr, cst.Call) and tl_short(self.kernel, expr) == "arange"):
            return False
        args = [a.value for a in expr.args if a.keyword is None]
        if len(args) != 2 or evaluate(args[0]) != 0:
            return False
        width = evaluate(args[1])
        if width is UNKNOWN and isinstance(args[1], cst.Name):
            # a constexpr parameter: 1 from every default, launch, config and heuristic
            values = {source.value for source in self.kernel.value_sources(args[1].value)}
            width = values.pop() if len(values) == 1 else UNKNOWN
        return width == 1

    def _loop_below(self, name: cst.Name, bound: str) -> bool:
        """``name`` is the index of ``for name in range(start, bound[, step > 0])``."""
        definitions = self.kernel.facts(Reaching).reaching(name)
        if len(definitions) != 1 or definitions[0].kind != "for":
            return False
        loop = definitions[0].value
        if not isinstance(loop, cst.Call) or not is_loop_header(loop):
            return False
        args = [a.value for a in loop.args if a.keyword is None]
        if not 1 <= len(args) <= 3 or self.kernel.code(args[min(1, len(args) - 1)]) != bound:
            return False
        step = evaluate(args[2]) if len(args) == 3 else 1
        return step is UNKNOWN or (isinstance(step, int) and step > 0)

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
