"""Shared reasoning of the mask rules (TL101/TL102): when is a memory access unguarded?"""

from __future__ import annotations

import re

import libcst as cst

from triton_lint.model.evaluate import evaluate
from triton_lint.model.kernel import Kernel, MemoryAccess
from triton_lint.model.provenance import Prov

_SPACE = re.compile(r"\s+")


def pointer_text(kernel: Kernel, node: cst.CSTNode) -> str:
    return _SPACE.sub("", kernel.module.module.code_for_node(node))


def unguarded_reason(kernel: Kernel, access: MemoryAccess) -> str | None:
    """Why ``access`` can touch memory out of bounds, or None when it is guarded.

    Guarded means: a mask (keyword or positional), a block pointer with a non-empty
    ``boundary_check``, a tensor descriptor (the copy engine clips), a scalar pointer (no
    ``tl.arange`` lanes), lanes wrapped with ``%``/``minimum``, or the unmasked fast path of a
    constexpr branch whose other arm masks the same access (``if EVEN_N:``).
    """
    if access.via_descriptor or access.pointer is None or access.op == "atomic_cas":
        return None
    flags = kernel.prov(access.pointer)
    if Prov.BLOCK_PTR in flags:
        check = access.boundary_check
        if check is None or evaluate(check) in ([], ()):
            return "block pointer without boundary_check"
        return None
    if access.mask is not None or Prov.ARANGE not in flags:
        return None
    if _masked_in_sibling_arm(kernel, access):
        return None
    if _lanes_in_range(kernel, access.pointer):
        return None
    return "no mask"


def _lanes_in_range(kernel: Kernel, pointer: cst.BaseExpression) -> bool:
    """Every lane source is in range by construction: a literal-extent ``tl.arange`` (a
    fixed-size dimension) or a gather whose index vector was loaded with every lane defined
    (unmasked, or masked with an ``other=`` fill)."""
    flow = kernel.dataflow
    if flow.extension_pointer(pointer):
        return True  # a shared-memory buffer from a Triton extension, not global memory
    aranges, loads = flow.lane_sources(pointer)
    if not all(flow.whole_extent(call) for call in aranges):
        return False
    for call in loads:
        access = kernel.access_for_call(call)
        if access is None:
            return False
        if access.mask is not None and access.other is None:
            return False  # masked-off lanes of the index are undefined
    return True


def _masked_in_sibling_arm(kernel: Kernel, access: MemoryAccess) -> bool:
    assert access.pointer is not None
    text = pointer_text(kernel, access.pointer)
    for branch in reversed(access.branches):
        if not kernel.is_compile_time(branch.test):
            continue
        other_arm = "orelse" if branch.arm == "body" else "body"
        for candidate in kernel.accesses:
            if candidate is access or candidate.kind != access.kind:
                continue
            if not any(b.node is branch.node and b.arm == other_arm for b in candidate.branches):
                continue
            guarded = candidate.mask is not None or candidate.boundary_check is not None
            if (
                guarded
                and candidate.pointer is not None
                and pointer_text(kernel, candidate.pointer) == text
            ):
                return True
    return False
