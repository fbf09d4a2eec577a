"""Which ``tl.arange`` lanes can run past the end of a tensor, by the kernel's own word.

An unmasked access over a whole tile is correct whenever the tile exactly covers the
dimension (a head of ``HEAD_DIM`` lanes, a swizzled scale block, ``static_range`` chunks), and
the linter cannot see the sizes the host passes. Launch grids and loops are no help: production
kernels launch ``cdiv(n, BLOCK)`` programs and loop ``range(0, n, BLOCK)`` over sizes the host
has checked to be multiples. What the linter can see is the kernel saying a tile may be
partial: **another access bounds the same lanes with a mask** (``offs_n < N``), directly or
through an identical recomputation (``offs_bn`` and ``offs_cn`` both being
``pid_n * BLOCK_N + tl.arange(0, BLOCK_N)``).

Lanes are followed through arithmetic only: not through ``%``, ``//``, ``minimum``/``maximum``/
``clamp``, ``tl.where``, reductions, loads or helper calls, each of which can bring them back
into range. The evidence is voided where only whole tiles run: inside a loop whose trip count
is a floor division of the bound (``range(K // BLOCK_K)``), under a runtime ``if`` or after an
early ``return`` that tests the bound, or when ``tl.static_assert`` bounds the tile extent.
Lanes at a coordinate read from memory by a scalar load (varlen's chunk table) are bounded
like a program's tile, but only for recomputations of the same lanes; a vector load (a
gather's index vector) reaching the compared lanes makes the mask no evidence.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from triton_lint.model.calls import is_opaque, tl_short
from triton_lint.model.dependencies import Dependencies
from triton_lint.model.earlier_tiles import earlier_tiles_only
from triton_lint.model.kernel import Kernel, LaunchSite, MemoryAccess
from triton_lint.model.masks import Masks
from triton_lint.model.provenance import Prov, Provenance
from triton_lint.model.reductions import REDUCTIONS
from triton_lint.model.structure import Structure
from triton_lint.model.tree import keyword_arg

_SPACE = re.compile(r"\s+")
_CASTS = {"to", "cast"}
#: Calls whose result can be back in range whatever the lanes were: clamps, selections and
#: every reduction.
_RANGE_RESTORING = {"minimum", "maximum", "clamp", "where", "sort", "histogram", "gather"} | set(
    REDUCTIONS
)

#: A lane dimension: the ``tl.arange`` extent and the offsets added to it.
LaneKey = tuple[str, tuple[str, ...]]


@dataclass(frozen=True)
class MaskBound:
    """An access whose mask compares some lanes against a bound."""

    access: MemoryAccess
    aranges: frozenset[int]  # ids of the compared ``tl.arange`` calls
    keys: frozenset[LaneKey]
    limits: frozenset[str]  # runtime names on the bound side (``N``, ``seq_len``)
    #: texts of the program shifts of the compared lanes (``pid_n * BLOCK_N``): the tile
    #: coordinate the mask bounds
    shifts: frozenset[str] = frozenset()
    #: loop variables that shift the compared lanes (``i + r < N`` in ``for i in range(0, N,
    #: B)``): the mask bounds those shifted lanes, not ``r`` alone
    loop_shifts: frozenset[str] = frozenset()
    #: the compared lanes start at a coordinate read from memory (``i_t = tl.load(chunk_indices
    #: + ...)``): the mask bounds only recomputations of the same lanes (same key)
    loaded_start: bool = False


@dataclass(frozen=True)
class Evidence:
    """The access that says the lanes of another access can run past the end."""

    access: MemoryAccess
    text: str  # the ``mask=...`` or ``boundary_check=...`` of that access, or the grid axis
    #: "mask", "block" (a checked block pointer), "index" (a gather index), "grid" (a
    #: launch rounds the grid up: ``launch`` is it and ``access`` the unmasked access), or
    #: "loop" (``loop`` walks a runtime extent in tiles: ``text`` is the extent, ``step`` the
    #: tile, ``access`` the unmasked access)
    kind: str = "mask"
    launch: LaunchSite | None = None
    loop: cst.For | None = None
    step: str = ""


class LaneBounds:
    """Evidence queries over one kernel's dataflow (built lazily, cached)."""

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self.dependencies = kernel.facts(Dependencies)
        self.structure = kernel.facts(Structure)
        self.prov = kernel.facts(Provenance)
        self._bounds: list[MaskBound] | None = None
        self._asserted: set[str] | None = None

    # -- lanes -------------------------------------------------------------------------
    def lanes(self, expr: cst.BaseExpression) -> list[cst.Call]:
        """The ``tl.arange`` calls whose lanes reach ``expr`` through arithmetic alone."""
        found: list[cst.Call] = []

        def descend(node: cst.CSTNode) -> bool:
            if isinstance(node, cst.BinaryOperation):
                # wrapped or compressed lanes (``offs % n``, ``offs // PAGE``)
                return not isinstance(node.operator, cst.Modulo | cst.FloorDivide)
            if not isinstance(node, cst.Call):
                return True
            short = tl_short(self.kernel, node)
            if short == "arange":
                found.append(node)
                return False
            # a loaded value (a gather index) is not these lanes
            restored = short in _RANGE_RESTORING or is_opaque(self.kernel, node)
            return not restored and self.kernel.access_for_call(node) is None

        self.dependencies.trace(expr, descend, loop_starts=False)
        return found

    def lane_key(self, arange: cst.Call) -> LaneKey:
        """``pid_n * BLOCK_N + tl.arange(0, BLOCK_N)`` -> ``("0,BLOCK_N", ("pid_n*BLOCK_N",))``,
        the same for every recomputation of that expression (casts are looked through)."""
        terms = sorted(self.text(t) for t in self._lane_offsets(arange))
        extent = ",".join(self.text(a.value) for a in arange.args)
        return extent, tuple(terms)

    def _lane_offsets(self, arange: cst.Call) -> list[cst.CSTNode]:
        """The offsets added to ``arange`` where it is built (``start`` in ``start + arange``)."""
        top: cst.CSTNode = arange
        while True:
            parent = self.structure.parent(top)
            if isinstance(parent, cst.BinaryOperation) and isinstance(
                parent.operator, cst.Add | cst.Subtract
            ):
                top = parent
            elif (isinstance(parent, cst.Arg) and self._is_cast_arg(parent)) or (
                isinstance(parent, cst.Attribute)
                and parent.attr.value in _CASTS
                and isinstance(self.structure.parent(parent), cst.Call)
            ):
                top = self.structure.parent(parent)  # type: ignore[assignment]
            else:
                break
        return [t for t in self._terms(top) if t is not arange]

    def _is_cast_arg(self, arg: cst.Arg) -> bool:
        call = self.structure.parent(arg)
        return (
            isinstance(call, cst.Call)
            and tl_short(self.kernel, call) == "cast"
            and bool(call.args)
            and call.args[0] is arg
        )

    def _terms(self, node: cst.CSTNode) -> list[cst.CSTNode]:
        """The addends of a ``+``/``-`` chain, casts unwrapped."""
        if isinstance(node, cst.BinaryOperation) and isinstance(
            node.operator, cst.Add | cst.Subtract
        ):
            return self._terms(node.left) + self._terms(node.right)
        if isinstance(node, cst.Call):
            if isinstance(node.func, cst.Attribute) and node.func.attr.value in _CASTS:
                return self._terms(node.func.value)
            if tl_short(self.kernel, node) == "cast" and node.args:
                return self._terms(node.args[0].value)
        return [node]

    def display(self, node: cst.CSTNode) -> str:
        """Source text on one line, for messages."""
        text = self.kernel.module.module.code_for_node(node)
        return re.sub(r"\s+", " ", text).replace("( ", "(").replace(" )", ")").strip()

    def text(self, node: cst.CSTNode) -> str:
        """Source text without whitespace: equal for identical recomputations."""
        return _SPACE.sub("", self.kernel.module.module.code_for_node(node))

    # -- masks -------------------------------------------------------------------------
    def mask_bounds(self) -> list[MaskBound]:
        """Every access whose mask compares ``tl.arange`` lanes with a bound."""
        if self._bounds is None:
            self._bounds = []
            for access in self.kernel.accesses:
                if access.mask is not None:
                    bound = self._mask_bound(access)
                    if bound is not None:
                        self._bounds.append(bound)
        return self._bounds

    def _mask_bound(self, access: MemoryAccess) -> MaskBound | None:
        """The lanes the mask compares with a bound: a runtime one (``offs < n``), or a
        compile-time one for shifted tiles; a compile-time bound on a whole-extent row
        (``offs < NOPE_DIM``) marks a sub-range of the row, not a tensor's end."""
        assert access.mask is not None
        aranges: dict[int, cst.Call] = {}
        limits: set[str] = set()
        shifts: set[str] = set()
        loops: set[str] = set()
        loaded = False
        for node in self.dependencies.closure(access.mask, values_only=True):
            if isinstance(node, cst.Comparison):
                for lanes, bound in _upper_bounds(node):
                    found = self.lanes(lanes)
                    names = self._runtime_names(bound)
                    gathered = _loads_reaching(self.kernel, lanes)
                    # a compile-time bound counts for tiles shifted along the dimension
                    # (``i_k * BK + tl.arange(0, BK) < K``), not for one whole-extent row
                    # compared with a sub-range (``tl.arange(0, HEAD) < NOPE``)
                    shifted = any(self.lane_key(call)[1] for call in found)
                    if (
                        found
                        and (names or shifted)
                        and gathered != "vector"
                        and not self.lanes(bound)
                    ):
                        loaded |= gathered == "scalar"
                        aranges.update((id(call), call) for call in found)
                        limits |= names
                        shifts |= self._program_shifts(lanes)
                        loops |= _loop_variables(self.kernel, lanes)
        if not aranges:
            return None
        keys = frozenset(self.lane_key(call) for call in aranges.values())
        return MaskBound(
            access,
            frozenset(aranges),
            keys,
            frozenset(limits),
            frozenset(shifts),
            frozenset(loops),
            loaded,
        )

    def _program_shifts(self, expr: cst.BaseExpression) -> set[str]:
        """Texts of the program-dependent products ``expr`` is computed from (``pid_n *
        BLOCK_N``): where a program's tile starts."""
        return {
            self.text(node)
            for node in self.dependencies.closure(expr, values_only=True)
            if isinstance(node, cst.BinaryOperation)
            and isinstance(node.operator, cst.Multiply)
            and Prov.PROGRAM_ID in self.prov.of(node)
        }

    def _runtime_names(self, expr: cst.BaseExpression) -> set[str]:
        names = set()
        for node in self.dependencies.closure(expr, values_only=True):
            if isinstance(node, cst.Name) and not self.prov.is_compile_time(node):
                names.add(node.value)
        return names

    # -- evidence ----------------------------------------------------------------------
    def evidence(self, access: MemoryAccess) -> Evidence | None:
        """The masked access that says the lanes of the unmasked ``access`` can run past the
        end of the tensor, or None when nothing in the kernel says so."""
        assert access.pointer is not None
        aranges = [a for a in self.lanes(access.pointer) if not self.asserted_extent(a)]
        ids = {id(call) for call in aranges}
        # an unshifted ``tl.arange(0, BLOCK)`` elsewhere may index another dimension: only
        # shifted lanes (``pid * BLOCK + tl.arange(0, BLOCK)``) match by recomputation
        keys = {key for key in map(self.lane_key, aranges) if key[1]}
        shifts = self._program_shifts(access.pointer)
        for bound in self.mask_bounds():
            if bound.access is access or not (bound.aranges & ids or bound.keys & keys):
                continue
            if bound.loaded_start and not bound.keys & keys:
                continue  # the same lanes at a coordinate read from memory: another dimension
            if self._peeled(access, bound.access) or self._other_arm(access, bound.access):
                continue
            if self._whole_tiles_only(access, bound.limits) or earlier_tiles_only(
                self.kernel, access, bound.loop_shifts, bound.limits
            ):
                continue
            if bound.shifts and not bound.shifts & shifts:
                # the same lanes at another tile coordinate: a tile-major destination such
                # as a swizzled scale layout (`pid * TILE_NUMEL + r % 32 * 16 + ...`)
                continue
            if self._next_block(access, bound, aranges):
                continue
            if bound.loop_shifts and not bound.loop_shifts & _loop_variables(
                self.kernel, access.pointer
            ):
                continue  # `i + r < N` bounds lanes the loop shifts; `access` stores `r`
            assert bound.access.mask is not None
            return Evidence(bound.access, f"mask={self.display(bound.access.mask)}")
        return None

    def _next_block(self, access: MemoryAccess, bound: MaskBound, aranges: list[cst.Call]) -> bool:
        """``scratch + NUM_BINS + bins`` with ``bins = tl.arange(0, NUM_BINS)``, where the
        masked access reads ``scratch + bins``: the access adds the lanes' own constexpr
        extent, so it addresses the next whole block of that size (the second half of a
        scratch buffer), which the mask's bound on the first block says nothing about."""
        if access.pointer is None or bound.access.pointer is None:
            return False  # `tl.load(mask=...)` without a pointer: nothing to compare
        added = {self.text(t) for t in self._terms(access.pointer)}
        masked = {self.text(t) for t in self._terms(bound.access.pointer)}
        for arange in aranges:
            if id(arange) not in bound.aranges or len(arange.args) != 2:
                continue
            extent = arange.args[1].value
            if not self.prov.is_compile_time(extent):
                continue
            if self.text(extent) in added - masked:
                return True
        return False

    def block_evidence(self, access: MemoryAccess) -> Evidence | None:
        """Another access checks the bounds of a block pointer over the same tensor shape
        (``boundary_check=(0, 1)``): the unchecked ``access`` may see a partial block too."""
        assert access.pointer is not None
        shapes = self._block_shapes(access.pointer)
        if not shapes:
            return None
        for other in self.kernel.accesses:
            check = other.boundary_check
            if other is access or check is None or other.pointer is None:
                continue
            if not shapes & self._block_shapes(other.pointer):
                continue
            if self._peeled(access, other) or self._other_arm(access, other):
                continue
            tests = [b.test for b in access.branches if not self.prov.is_compile_time(b.test)]
            if tests:
                continue  # a runtime branch (``if not is_tail:``) may be the whole-block path
            return Evidence(other, f"boundary_check={self.display(check)}", "block")
        return None

    def _block_shapes(self, pointer: cst.BaseExpression) -> set[str]:
        """Texts of the ``shape`` of the ``tl.make_block_ptr`` calls a pointer comes from."""
        shapes = set()
        for node in self.dependencies.closure(pointer, values_only=True):
            if isinstance(node, cst.Call) and tl_short(self.kernel, node) == "make_block_ptr":
                shape = keyword_arg(node, "shape")
                positional = [a.value for a in node.args if a.keyword is None]
                if shape is None and len(positional) > 1:
                    shape = positional[1]
                if shape is not None:
                    shapes.add(self.text(shape))
        return shapes

    def asserted_extent(self, arange: cst.Call) -> bool:
        """``tl.static_assert(TILE <= size)`` bounds the extent of ``tl.arange(0, TILE)``."""
        if self._asserted is None:
            self._asserted = set()
            for site in self.kernel.calls:
                if tl_short(self.kernel, site.node) == "static_assert" and site.node.args:
                    test = site.node.args[0].value
                    if isinstance(test, cst.Comparison):
                        self._asserted.add(self.text(test.left))
        return bool(arange.args) and self.text(arange.args[-1].value) in self._asserted

    def _other_arm(self, access: MemoryAccess, masked: MemoryAccess) -> bool:
        """The two accesses sit in different arms of one ``if`` (``if EVEN:`` whole tiles,
        ``else:`` masked): the branch, not the mask, decides which lanes run."""
        arms = dict(self.structure.context(access.call).arms)
        return any(
            node in arms and arms[node] != arm
            for node, arm in self.structure.context(masked.call).arms
        )

    def _peeled(self, access: MemoryAccess, masked: MemoryAccess) -> bool:
        """``access`` is in a loop the masked access is not in: the loop covers the whole
        tiles and the masked access the tail peeled off after (or before) it."""
        inner = set(self.structure.context(access.call).loops)
        return bool(inner - set(self.structure.context(masked.call).loops))

    def _whole_tiles_only(self, access: MemoryAccess, limits: frozenset[str]) -> bool:
        """The access runs only for whole tiles: in a ``range(K // BLOCK)`` loop, or under a
        runtime test (an ``if`` around it, an early ``return`` before it) of the bound."""
        tests = [b.test for b in access.branches if not self.prov.is_compile_time(b.test)]
        tests += self.structure.early_exit_tests(access.call)
        if any(self._runtime_names(test) & limits for test in tests):
            return True
        return any(
            isinstance(loop, cst.For)
            and self._floor_divides(loop.iter)
            and bool(self._runtime_names(loop.iter) & limits)
            for loop in self.structure.ancestors(access.call)
        )

    def _floor_divides(self, expr: cst.BaseExpression) -> bool:
        return any(
            isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.FloorDivide)
            for node in self.dependencies.closure(expr, values_only=True)
        )


def _loop_variables(kernel: Kernel, expr: cst.BaseExpression) -> set[str]:
    """Names of the ``for`` loop variables ``expr`` is computed from."""
    return {
        node.value
        for node in kernel.facts(Dependencies).closure(expr, values_only=True)
        if isinstance(node, cst.Name)
        and any(d.kind == "for" for d in kernel.definitions.get(node.value, []))
    }


def _upper_bounds(
    node: cst.Comparison,
) -> Iterator[tuple[cst.BaseExpression, cst.BaseExpression]]:
    """``(lanes, bound)`` pairs of ``lanes < bound`` / ``bound > lanes`` comparisons: the
    end of a tensor. Lower bounds (``offs >= start``) and equalities say nothing of it."""
    left = node.left
    for target in node.comparisons:
        right = target.comparator
        if isinstance(target.operator, cst.LessThan | cst.LessThanEqual):
            yield left, right
        elif isinstance(target.operator, cst.GreaterThan | cst.GreaterThanEqual):
            yield right, left
        left = right


def _loads_reaching(kernel: Kernel, lanes: cst.BaseExpression) -> str | None:
    """Which loads reach the compared lanes: "vector" when a vector load does (a gather's
    index vector, whose masked-off lanes say nothing of a tensor's end), "scalar" when only
    scalar loads do (a tile coordinate read from a table, ``i_t = tl.load(chunk_indices +
    i_t * 2 + 1)``: varlen's chunk index shifts the whole tile like a program id), else
    None."""
    found = None
    for load in kernel.facts(Masks).lane_sources(lanes)[1]:
        access = kernel.access_for_call(load)
        pointer = access.pointer if access is not None else None
        if pointer is None or kernel.facts(Provenance).of(pointer) & (Prov.ARANGE | Prov.BLOCK_PTR):
            return "vector"
        found = "scalar"
    return found
