"""TL101: a vector load without a mask."""

from __future__ import annotations

from collections.abc import Iterator

from triton_lint.finding import Category, Finding, Severity
from triton_lint.model.kernel import Kernel
from triton_lint.rules._bounds import unguarded_reason
from triton_lint.rules.base import Rule


class UnmaskedLoad(Rule):
    code = "TL101"
    name = "unmasked-load"
    category = Category.MEMORY_SAFETY
    severity = Severity.ERROR
    summary = "Vector `tl.load` without a mask (or a block-pointer load without `boundary_check`)"
    rationale = """\
Offsets built from `tl.arange(0, BLOCK)` cover a whole block. Unless the problem size is a
multiple of `BLOCK`, the last program's lanes run past the end of the tensor, and an unmasked
load reads memory that belongs to something else: garbage values, a wrong result that only
shows for some sizes, or an illegal-address fault. Scalar loads (`tl.load(ptr + pid)`), loads
whose offsets are wrapped with `%`, tensor-descriptor loads and the unmasked fast path of an
`if EVEN_N:` branch whose other arm masks the same load are not reported."""
    fix = """\
Pass a mask that keeps the lanes inside the tensor, and an `other=` value that is neutral for
what the value feeds (0 for sums, `-inf` for maxima): `tl.load(x_ptr + offs, mask=offs < n,
other=0.0)`. For block pointers pass `boundary_check=(0, 1)` (and `padding_option="zero"`).
If the host guarantees divisibility, make that a constexpr flag (`EVEN_N`) and mask the other
branch, or suppress the line with `# noqa: TL101`."""
    bad = """\
import triton
import triton.language as tl


@triton.jit
def copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)  # <- TL101
    tl.store(y_ptr + offs, x, mask=offs < n)
"""
    good = """\
import triton
import triton.language as tl


@triton.jit
def copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x, mask=mask)
"""

    def check_kernel(self, kernel: Kernel) -> Iterator[Finding]:
        for access in kernel.accesses:
            if access.kind != "load":
                continue
            reason = unguarded_reason(kernel, access)
            if reason == "no mask":
                yield self.finding(
                    kernel,
                    access.call,
                    "`tl.load` of `tl.arange` lanes has no mask: lanes past the end of the "
                    "tensor read out of bounds; add `mask=offs < n` and a neutral `other=`",
                )
            elif reason is not None:
                yield self.finding(
                    kernel,
                    access.call,
                    "block-pointer load without `boundary_check`: a partial tile reads out of "
                    'bounds; pass `boundary_check=(0, 1)` and `padding_option="zero"`',
                )
