"""Shared reasoning of the mask rules (TL101/TL102): when is a memory access unguarded?"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import libcst as cst

from triton_lint.finding import RelatedLocation
from triton_lint.model.callers import free_name_nodes
from triton_lint.model.calls import (
    cast_parts,
    is_loop_header,
    is_opaque,
    program_id_axis,
    tl_short,
)
from triton_lint.model.dependencies import Dependencies
from triton_lint.model.earlier_tiles import ceil_division
from triton_lint.model.evaluate import UNKNOWN, evaluate
from triton_lint.model.host_tests import literal_range
from triton_lint.model.kernel import Kernel, LaunchSite, MemoryAccess
from triton_lint.model.lane_bounds import Evidence, LaneBounds
from triton_lint.model.masks import Masks
from triton_lint.model.names import dotted_name
from triton_lint.model.program_ids import ProgramIds
from triton_lint.model.provenance import Prov, Provenance
from triton_lint.model.structure import Structure
from triton_lint.model.tree import iter_nodes


@dataclass(frozen=True)
class Unguarded:
    """An access that can touch memory past the end of its tensor, and why."""

    block_pointer: bool  # a block pointer without ``boundary_check``
    evidence: Evidence | None  # what says the tile can be partial (None: nothing does)


def unguarded(kernel: Kernel, access: MemoryAccess) -> Unguarded | None:
    """Why ``access`` can touch memory out of bounds, or None when it is guarded.

    Guarded means: a mask (keyword or positional), a block pointer with a non-empty
    ``boundary_check``, a tensor descriptor (the copy engine clips), a scalar pointer (no
    ``tl.arange`` lanes), lanes wrapped with ``%``/``minimum``, the unmasked fast path of a
    branch whose other arm masks the same access (``if EVEN_N:``, ``if not is_tail:``).
    The result carries the evidence (`lane_bounds`) that the tile can be partial: TL101/TL102
    report accesses with evidence, TL106 those without (an exactly tiled dimension, or a
    bug the kernel gives no sign of).
    """
    if access.via_descriptor or access.pointer is None or access.op == "atomic_cas":
        return None
    flags = kernel.facts(Provenance).of(access.pointer)
    block = Prov.BLOCK_PTR in flags
    if block:
        check = access.boundary_check
        if check is not None and evaluate(check) not in ([], ()):
            return None
    elif access.mask is not None or Prov.ARANGE not in flags:
        return None
    if _masked_in_sibling_arm(kernel, access):
        return None
    bounds = kernel.facts(LaneBounds)
    if block:
        evidence = bounds.block_evidence(access)
    else:
        evidence = _undefined_index(kernel, access.pointer)
        if evidence is None:
            in_range = _lanes_in_range(kernel, access.pointer)
            if not in_range:
                evidence = (
                    bounds.evidence(access)
                    or _rounded_up_grid(kernel, access)
                    or _unchecked_size(kernel, access)
                )
            evidence = evidence or _partial_loop_tile(kernel, access)
            if in_range and evidence is None:
                return None
    return Unguarded(block_pointer=block, evidence=evidence)


def evidence_phrase(kernel: Kernel, evidence: Evidence) -> str:
    """What says the tile can be partial, for the message."""
    if evidence.loop is not None:
        line = kernel.span(evidence.loop).line
        return (
            f"the loop at line {line} walks the runtime `{evidence.text}` in tiles of "
            f"`{evidence.step}`, so its last tile runs past the end unless `{evidence.text}` "
            f"is a multiple of `{evidence.step}`"
        )
    if evidence.kind == "size":
        return (
            f"the kernel takes the element count `{evidence.text}` and never compares "
            "anything with it, so the mask it was passed for is missing"
        )
    if evidence.launch is not None:
        line = kernel.module.span(evidence.launch.top, evidence.launch.call).line
        return (
            f"the launch at line {line} rounds its grid up with `{evidence.text}`, so the "
            "last program's tile runs past the end unless the size is a multiple of the block"
        )
    line = kernel.span(evidence.access.call).line
    if evidence.kind == "index":
        return (
            f"its index vector is loaded at line {line} with `{evidence.text}` and no "
            "`other=`, so the masked-off lanes hold garbage addresses"
        )
    what = "lanes" if evidence.kind == "mask" else "tensor shape"
    return f"line {line} bounds the same {what} with `{evidence.text}`"


def related_location(kernel: Kernel, evidence: Evidence) -> RelatedLocation:
    """The masked access that bounds the same lanes, the launch that rounds up, or the loop
    that walks a runtime extent in tiles."""
    if evidence.loop is not None:
        span = kernel.span(evidence.loop.iter)
        return RelatedLocation(
            kernel.module.path, span, f"`{evidence.text}` walked in tiles of `{evidence.step}`"
        )
    if evidence.kind == "size":
        span = kernel.span(kernel.params_by_name[evidence.text].node.name)
        return RelatedLocation(kernel.module.path, span, f"`{evidence.text}`, never compared")
    if evidence.launch is not None:
        span = kernel.module.span(evidence.launch.top, evidence.launch.call)
        return RelatedLocation(kernel.module.path, span, f"grid rounded up: `{evidence.text}`")
    span = kernel.span(evidence.access.call)
    return RelatedLocation(kernel.module.path, span, f"bounded with `{evidence.text}`")


def _rounded_up_grid(kernel: Kernel, access: MemoryAccess) -> Evidence | None:
    """A launch whose grid axis is ``triton.cdiv(n, BLOCK)`` (or ``(n + B - 1) // B``) while
    ``access``'s lanes move with that axis's program id: the host expects a partial last
    tile, so the unmasked lanes of the last program run past ``n``. A host ``assert n %
    BLOCK == 0`` (or an ``if ...: raise`` on it) in the launching function says otherwise."""
    axes = _affine_program_axes(kernel, access)
    if axes is None:
        return None
    if any(
        kernel.facts(ProgramIds).pid_axes(test) & axes
        for test in kernel.facts(Structure).early_exit_tests(access.call)
    ):
        return None  # programs past a runtime bound return: the host pads to whole tiles
    for site in kernel.launches:
        for axis, dim in enumerate(site.grid_dims or []):
            if axis not in axes:
                continue
            division = ceil_division(dim)
            numerator = division[0] if division is not None else None
            if numerator is None or evaluate(numerator) is not UNKNOWN:
                continue  # a fixed extent (`cdiv(512, bd)`): its tiling is the author's choice
            if _divisibility_checked(site, numerator) or _pinned(kernel, site, numerator):
                continue
            text = kernel.module.module.code_for_node(dim)
            return Evidence(access, text, "grid", launch=site)
    return None


#: Parameter names of a flat element count (`n_elements` in Triton's tutorials); `n`, `N` and
#: `size` also name rows and widths that a whole-row tile (`pid * D + tl.arange(0, D)`) never
#: needs to compare.
_ELEMENT_COUNT = re.compile(
    r"^(n_?elements?|n_?elems?|numel|num_?elements|total_?elements)$", re.IGNORECASE
)


def _unchecked_size(kernel: Kernel, access: MemoryAccess) -> Evidence | None:
    """The kernel takes a runtime element count (``n_elements``) that nothing in it compares,
    clamps or hands to a helper, while ``access``'s lanes are ``pid * BLOCK + tl.arange(0,
    BLOCK)`` with no wrap or gather: the count was passed for a mask the access lacks."""
    counts = [p.name for p in kernel.params if not p.is_constexpr and _ELEMENT_COUNT.match(p.name)]
    if not counts or not _program_tiled(kernel, access):
        return None
    used = _compared_names(kernel)
    unchecked = [name for name in counts if name not in used]
    return Evidence(access, unchecked[0], "size") if unchecked else None


def _program_tiled(kernel: Kernel, access: MemoryAccess) -> bool:
    """Lanes an affine function of a program id and ``tl.arange`` only (casts too)."""
    return bool(_affine_program_axes(kernel, access))


def _affine_program_axes(kernel: Kernel, access: MemoryAccess) -> set[object] | None:
    """The program-id axes ``access``'s lanes move with, where they are an affine function
    of program ids and ``tl.arange`` (casts too); None for lanes wrapped by ``%``, clamped
    (``tl.minimum``), gathered (a loaded index) or computed by a helper."""
    assert access.pointer is not None
    axes: set[object] = set()
    for node in kernel.facts(Dependencies).closure(access.pointer):
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo):
            return None  # wrapped lanes stay in range
        if not isinstance(node, cst.Call):
            continue
        short = tl_short(kernel, node)
        if short == "program_id":
            axes.add(program_id_axis(node))
        elif short not in _AFFINE_CALLS and cast_parts(kernel, node) is None:
            return None
    return axes


def _compared_names(kernel: Kernel) -> set[str]:
    """Names the kernel compares, clamps, loops up to or hands to a helper."""
    found: set[str] = set()
    for node in iter_nodes(kernel.node.body):
        if isinstance(node, cst.Comparison):
            found |= {n.value for n in iter_nodes(node) if isinstance(n, cst.Name)}
        elif isinstance(node, cst.Call) and (
            tl_short(kernel, node) in ("minimum", "maximum", "clamp", "where", "range")
            or is_opaque(kernel, node)
        ):
            found |= {
                n.value for arg in node.args for n in iter_nodes(arg) if isinstance(n, cst.Name)
            }
    return found


def _partial_loop_tile(kernel: Kernel, access: MemoryAccess) -> Evidence | None:
    """A loop around ``access`` that walks a runtime extent in tiles (``for k in range(0, K,
    BLOCK_K)``, ``range(tl.cdiv(K, BLOCK_K))``) and moves its ``tl.arange(0, BLOCK_K)`` lanes
    (an offset computed from the loop variable, or a pointer advanced in the loop body): the
    last iteration's tile runs past ``K`` unless ``K`` is a multiple of ``BLOCK_K``, which
    `_divisible` looks for. Lanes wrapped or clamped on the way (``%``, ``tl.minimum``,
    ``tl.where``) stay in range; lanes shifted, or an extent computed, by a helper the linter
    cannot see into (``prev_multiple_of(N, TILE)``) are not judged."""
    assert access.pointer is not None
    structure = kernel.facts(Structure)
    dependencies = kernel.facts(Dependencies)
    closure = list(dependencies.closure(access.pointer))
    if _through_helper(kernel, dependencies.additive_terms(access.pointer)):
        return None  # lanes shifted by a helper's result (`prev_multiple_of(N, TILE)`)
    names = {node.value for node in closure if isinstance(node, cst.Name)}
    wrapped = {
        id(inner)
        for node in closure
        if _wraps(kernel, node)
        for inner in dependencies.closure(node)
    }
    extents = {
        kernel.code(args[1])
        for arange in kernel.facts(Masks).lane_sources(access.pointer)[0]
        if id(arange) not in wrapped and len(args := _positional(arange)) == 2
    }
    child: cst.CSTNode = access.call
    for loop in structure.ancestors(access.call):
        inside = isinstance(loop, cst.For) and child is loop.body
        child = loop
        if not inside:
            continue
        tiled = _tiled_extent(kernel, loop.iter)
        if tiled is None or kernel.code(tiled[1]) not in extents:
            continue
        extent, step = tiled
        if not (_loop_var(loop) in names or _advanced_in(loop, names)):
            continue
        if _through_helper(kernel, dependencies.closure(extent)):
            continue
        if _divisible(kernel, extent, step):
            continue
        return Evidence(access, kernel.code(extent), "loop", loop=loop, step=kernel.code(step))
    return None


def _through_helper(kernel: Kernel, nodes: Iterable[cst.CSTNode]) -> bool:
    """A value computed by a helper the linter cannot see into."""
    return any(
        isinstance(node, cst.Call) and is_opaque(kernel, node) and not is_loop_header(node)
        for node in nodes
    )


def _positional(call: cst.Call) -> list[cst.BaseExpression]:
    return [arg.value for arg in call.args if arg.keyword is None]


def _wraps(kernel: Kernel, node: cst.CSTNode) -> bool:
    """Lanes brought back into range: ``x % n``, ``tl.minimum``, ``tl.where``."""
    if isinstance(node, cst.BinaryOperation):
        return isinstance(node.operator, cst.Modulo)
    return isinstance(node, cst.Call) and tl_short(kernel, node) in ("minimum", "where")


def _tiled_extent(
    kernel: Kernel, iterable: cst.BaseExpression
) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
    """(extent, tile) of ``range(start, K, BLOCK)`` or ``range([start,] cdiv(K, BLOCK))``
    (also ``tl.range``) when ``K`` is a runtime value and ``BLOCK`` a compile-time one."""
    if not isinstance(iterable, cst.Call):
        return None
    callee = dotted_name(iterable.func) or ""
    if callee.split(".")[-1] != "range" or callee.startswith(("np.", "numpy.")):
        return None
    args = _positional(iterable)
    if len(args) == 3:
        extent, step = args[1], args[2]
    elif args and isinstance(args[-1], cst.Call):
        division = args[-1]
        name = dotted_name(division.func) or ""
        parts = _positional(division)
        if not name.endswith("cdiv") or len(parts) != 2:
            return None
        extent, step = parts
    else:
        return None
    provenance = kernel.facts(Provenance)
    if provenance.is_compile_time(extent) or not provenance.is_compile_time(step):
        return None
    if evaluate(extent) is not UNKNOWN:
        return None
    return extent, step


def _loop_var(loop: cst.For) -> str | None:
    return loop.target.value if isinstance(loop.target, cst.Name) else None


def _advanced_in(loop: cst.For, names: set[str]) -> bool:
    """The loop body advances a pointer the access reads (``a_ptrs += BLOCK_K * stride_ak``)."""
    return any(
        isinstance(node, cst.AugAssign)
        and isinstance(node.target, cst.Name)
        and node.target.value in names
        and isinstance(node.operator, cst.AddAssign | cst.SubtractAssign)
        for node in iter_nodes(loop.body)
    )


def _divisible(kernel: Kernel, extent: cst.BaseExpression, step: cst.BaseExpression) -> bool:
    """Something says ``extent`` is a whole number of tiles: it is rounded down with ``//``
    or ``%``, or built as a multiple of the tile (``tl.cdiv(K, BLOCK) * BLOCK - BLOCK``: the
    tail is peeled off), the kernel assumes or asserts it (``tl.assume(K % BLOCK_K == 0)``,
    ``tl.multiple_of``, ``tl.static_assert``), or the file takes it (or the value a launch
    passes for it) modulo something, or the host takes something modulo the tile: a host
    ``assert K % BLOCK_K == 0``, a dispatch test ``K % 64 == 0``, an ``if K % BLOCK_K:``
    tail, an ``assert buffer.shape[0] % BLOCK == 0`` over segments padded to the tile."""
    dependencies = kernel.facts(Dependencies)
    tile = kernel.code(step)
    for n in dependencies.closure(extent):
        if not isinstance(n, cst.BinaryOperation):
            continue
        if isinstance(n.operator, cst.Modulo | cst.FloorDivide):
            return True  # `full = N // BLOCK * BLOCK`, `N - N % BLOCK`: whole tiles
        if isinstance(n.operator, cst.Multiply) and tile in (
            kernel.code(n.left),
            kernel.code(n.right),
        ):
            return True  # `tl.cdiv(N, BLOCK) * BLOCK - BLOCK`: a multiple of the tile
    params = {n.value for n in iter_nodes(extent) if isinstance(n, cst.Name)}
    for node in iter_nodes(kernel.node.body):
        if (
            isinstance(node, cst.Call)
            and tl_short(kernel, node) in ("assume", "multiple_of", "static_assert")
            and any(isinstance(n, cst.Name) and n.value in params for n in iter_nodes(node))
        ):
            return True
    code = kernel.module.module.code_for_node
    sizes = _host_texts(kernel, params)
    tiles = _host_texts(kernel, {n.value for n in iter_nodes(step) if isinstance(n, cst.Name)})
    in_kernels = {id(n) for k in kernel.module.kernels for n in iter_nodes(k.node)}
    return any(
        isinstance(node, cst.BinaryOperation)
        and isinstance(node.operator, cst.Modulo)
        and (
            code(node.left).strip() in sizes
            or (id(node) not in in_kernels and code(node.right).strip() in tiles)
        )
        for node in iter_nodes(kernel.module.module)
    )


def _host_texts(kernel: Kernel, params: set[str]) -> set[str]:
    """The source texts a value goes by in the file: the parameter names, what launches pass
    for them, and what those names are assigned on the host."""
    code = kernel.module.module.code_for_node
    texts = set(params)
    for site in kernel.launches:
        for name, argument in site.bound_arguments(kernel).items():
            if name in params:
                texts.add(code(argument))
                value = site.host_definitions.get(code(argument))
                if value is not None:
                    texts.add(code(value))
    return texts


#: Calls that keep lanes an affine function of ``tl.arange`` and the program id (casts too).
_AFFINE_CALLS = {"arange", "multiple_of", "max_contiguous", "max_constancy"}


def _divisibility_checked(site: LaunchSite, numerator: cst.BaseExpression) -> bool:
    """A host guard of the launch (see `LaunchSite.guard_tests`) that takes the numerator's
    names modulo something (``assert M % BLOCK_M == 0``)."""
    names = {n.value for n in iter_nodes(numerator) if isinstance(n, cst.Name)}
    return any(
        isinstance(part, cst.BinaryOperation)
        and isinstance(part.operator, cst.Modulo)
        and any(isinstance(n, cst.Name) and n.value in names for n in iter_nodes(part))
        for test in site.guard_tests()
        for part in iter_nodes(test)
    )


def _pinned(kernel: Kernel, site: LaunchSite, numerator: cst.BaseExpression) -> bool:
    """Every name of the numerator is pinned to one literal by a host test (``assert D ==
    256``): a fixed extent, whose tiling is the author's choice (`cdiv(512, bd)`)."""
    names = list(free_name_nodes(numerator))
    return bool(names) and all(
        (bounds := literal_range(kernel, site, name)) is not None and bounds[0] == bounds[1]
        for name in names
    )


def _undefined_index(kernel: Kernel, pointer: cst.BaseExpression) -> Evidence | None:
    """A gather through an index vector loaded with a mask and no ``other=``: its masked-off
    lanes hold garbage, so the unmasked gather reads wherever they point."""
    for call in kernel.facts(Masks).lane_sources(pointer)[1]:
        index = kernel.access_for_call(call)
        if index is not None and index.mask is not None and index.other is None:
            return Evidence(index, f"mask={kernel.facts(LaneBounds).display(index.mask)}", "index")
    return None


def _lanes_in_range(kernel: Kernel, pointer: cst.BaseExpression) -> bool:
    """Every ``tl.arange`` reaching the pointer is in range by construction: a literal or
    never-bounded constexpr extent (a fixed-size dimension), or an extent bounded by
    ``tl.static_assert``. Gathered lanes are in range when their index vector has every lane
    defined, which ``_undefined_index`` checks first."""
    masks = kernel.facts(Masks)
    if masks.extension_pointer(pointer):
        return True  # a shared-memory buffer from a Triton extension, not global memory
    asserted = kernel.facts(LaneBounds).asserted_extent
    return all(
        masks.whole_extent(call) or asserted(call) for call in masks.lane_sources(pointer)[0]
    )


def _masked_in_sibling_arm(kernel: Kernel, access: MemoryAccess) -> bool:
    assert access.pointer is not None
    text = kernel.facts(LaneBounds).text
    pointer = text(access.pointer)
    for branch in reversed(access.branches):
        other_arm = "orelse" if branch.arm == "body" else "body"
        for candidate in kernel.accesses:
            if candidate is access or candidate.kind != access.kind:
                continue
            if not any(b.node is branch.node and b.arm == other_arm for b in candidate.branches):
                continue
            guarded = candidate.mask is not None or candidate.boundary_check is not None
            if guarded and candidate.pointer is not None and text(candidate.pointer) == pointer:
                return True
    return False
