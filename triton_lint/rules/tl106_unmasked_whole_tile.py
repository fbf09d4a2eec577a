"""TL106: an unmasked vector access whose tile the kernel never bounds (off by default)."""

from __future__ import annotations

from collections.abc import Iterator

from triton_lint.finding import Category, Finding, Severity
from triton_lint.model.kernel import Kernel
from triton_lint.rules._bounds import unguarded
from triton_lint.rules.base import Rule


class UnmaskedWholeTile(Rule):
    code = "TL106"
    name = "unmasked-whole-tile"
    category = Category.MEMORY_SAFETY
    severity = Severity.WARNING
    default_enabled = False
    summary = "Vector load/store without a mask on lanes nothing in the kernel bounds"
    rationale = """\
A kernel that masks nothing is either exactly tiled (the host only launches sizes that are
multiples of the block: a head of `HEAD_DIM` lanes, a padded scale layout, a checked
`n % BLOCK == 0`) or broken for every other size, and only the host code can tell which.
TL101/TL102 report unmasked accesses when the kernel itself bounds the same lanes elsewhere
or a launch rounds the grid up with `triton.cdiv`;
this rule reports the rest: vector loads and stores (and block pointers without
`boundary_check`) with no mask and no sign either way. It is off by default because most such
accesses in production libraries are deliberate; turn it on (`--extend-select TL106`) to
review generated kernels, or code where every unmasked tile should carry a `# noqa` that
names the guarantee."""
    fix = """\
Mask the access (`mask=offs < n`), or state the guarantee: a constexpr flag such as `EVEN_N`
with a masked branch, `tl.static_assert` on the extent, or `# noqa: TL106` with a comment
naming the host check."""
    bad = """\
import triton
import triton.language as tl


@triton.jit
def copy(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)  # <- TL106
    tl.store(y_ptr + offs, x)  # <- TL106
"""
    good = """\
import triton
import triton.language as tl


@triton.jit
def copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, x, mask=offs < n)
"""

    def check_kernel(self, kernel: Kernel) -> Iterator[Finding]:
        for access in kernel.accesses:
            found = unguarded(kernel, access)
            if found is None or found.evidence is not None:
                continue
            what = "load" if access.kind == "load" else "store"
            if found.block_pointer:
                message = (
                    f"block-pointer {what} without `boundary_check`: correct only if the host "
                    "keeps every dimension a multiple of the block"
                )
            else:
                message = (
                    f"unmasked vector {what}: nothing in the kernel bounds these lanes, so it is "
                    "correct only if the host keeps the size a multiple of the block"
                )
            yield self.finding(kernel, access.call, message)
