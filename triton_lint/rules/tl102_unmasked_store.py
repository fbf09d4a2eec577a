"""TL102: a vector store or atomic without a mask."""

from __future__ import annotations

from collections.abc import Iterator

from triton_lint.finding import Category, Finding, Severity
from triton_lint.model.kernel import Kernel
from triton_lint.rules._bounds import unguarded_reason
from triton_lint.rules.base import Rule


class UnmaskedStore(Rule):
    code = "TL102"
    name = "unmasked-store"
    category = Category.MEMORY_SAFETY
    severity = Severity.ERROR
    summary = "Vector `tl.store` or `tl.atomic_*` without a mask"
    rationale = """\
An unmasked store of `tl.arange` lanes writes past the end of the output whenever the size is
not a multiple of the block: it silently corrupts whatever tensor lives next in memory (often
another activation or the optimizer state) or faults. Atomics (`tl.atomic_add`, ...) have the
same problem and are harder to spot because they usually accumulate into small buffers.
Scalar stores, wrapped offsets, block pointers with `boundary_check`, tensor descriptors and
the unmasked arm of an `if EVEN_N:` branch whose other arm masks the same store are not
reported."""
    fix = """\
Store with the same mask the loads use: `tl.store(y_ptr + offs, y, mask=offs < n)`; for atomics
`tl.atomic_add(ptr + offs, val, mask=offs < n)`; for block pointers `boundary_check=(0, 1)`."""
    bad = """\
import triton
import triton.language as tl


@triton.jit
def scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, x * 2)  # <- TL102
"""
    good = """\
import triton
import triton.language as tl


@triton.jit
def scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, x * 2, mask=mask)
"""

    def check_kernel(self, kernel: Kernel) -> Iterator[Finding]:
        for access in kernel.accesses:
            if access.kind == "load":
                continue
            reason = unguarded_reason(kernel, access)
            if reason is None:
                continue
            what = "`tl.store`" if access.kind == "store" else f"`tl.{access.op}`"
            if reason == "no mask":
                message = (
                    f"{what} of `tl.arange` lanes has no mask: lanes past the end of the "
                    "tensor write out of bounds; add `mask=offs < n`"
                )
            else:
                message = (
                    f"block-pointer {what} without `boundary_check`: a partial tile writes "
                    "out of bounds; pass `boundary_check=(0, 1)`"
                )
            yield self.finding(kernel, access.call, message)
