"""Shared reasoning of the mask rules (TL101/TL102): when is a memory access unguarded?"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from triton_lint.finding import RelatedLocation
from triton_lint.model.evaluate import evaluate
from triton_lint.model.kernel import Kernel, MemoryAccess
from triton_lint.model.lane_bounds import Evidence
from triton_lint.model.provenance import Prov


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
    flags = kernel.prov(access.pointer)
    block = Prov.BLOCK_PTR in flags
    if block:
        check = access.boundary_check
        if check is not None and evaluate(check) not in ([], ()):
            return None
    elif access.mask is not None or Prov.ARANGE not in flags:
        return None
    if _masked_in_sibling_arm(kernel, access):
        return None
    bounds = kernel.dataflow.lane_bounds
    if block:
        evidence = bounds.block_evidence(access)
    else:
        evidence = _undefined_index(kernel, access.pointer)
        if evidence is None:
            if _lanes_in_range(kernel, access.pointer):
                return None
            evidence = bounds.evidence(access)
    return Unguarded(block_pointer=block, evidence=evidence)


def evidence_phrase(kernel: Kernel, evidence: Evidence) -> str:
    """What says the tile can be partial, for the message."""
    line = kernel.span(evidence.access.call).line
    if evidence.kind == "index":
        return (
            f"its index vector is loaded at line {line} with `{evidence.text}` and no "
            "`other=`, so the masked-off lanes hold garbage addresses"
        )
    what = "lanes" if evidence.kind == "mask" else "tensor shape"
    return f"line {line} bounds the same {what} with `{evidence.text}`"


def related_location(kernel: Kernel, evidence: Evidence) -> RelatedLocation:
    """The masked access that bounds the same lanes."""
    span = kernel.span(evidence.access.call)
    return RelatedLocation(kernel.module.path, span, f"bounded with `{evidence.text}`")


def _undefined_index(kernel: Kernel, pointer: cst.BaseExpression) -> Evidence | None:
    """A gather through an index vector loaded with a mask and no ``other=``: its masked-off
    lanes hold garbage, so the unmasked gather reads wherever they point."""
    flow = kernel.dataflow
    for call in flow.lane_sources(pointer)[1]:
        index = kernel.access_for_call(call)
        if index is not None and index.mask is not None and index.other is None:
            return Evidence(index, f"mask={flow.lane_bounds.display(index.mask)}", "index")
    return None


def _lanes_in_range(kernel: Kernel, pointer: cst.BaseExpression) -> bool:
    """Every ``tl.arange`` reaching the pointer is in range by construction: a literal or
    never-bounded constexpr extent (a fixed-size dimension), or an extent bounded by
    ``tl.static_assert``. Gathered lanes are in range when their index vector has every lane
    defined, which ``_undefined_index`` checks first."""
    flow = kernel.dataflow
    if flow.extension_pointer(pointer):
        return True  # a shared-memory buffer from a Triton extension, not global memory
    asserted = flow.lane_bounds.asserted_extent
    return all(flow.whole_extent(call) or asserted(call) for call in flow.lane_sources(pointer)[0])


def _masked_in_sibling_arm(kernel: Kernel, access: MemoryAccess) -> bool:
    assert access.pointer is not None
    text = kernel.dataflow.lane_bounds.text
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
