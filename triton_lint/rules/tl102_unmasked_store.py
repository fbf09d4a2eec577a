"""TL102: a vector store or atomic without a mask."""

from __future__ import annotations

from collections.abc import Iterator

from triton_lint.finding import Category, Finding, Severity
from triton_lint.model.kernel import Kernel
from triton_lint.rules._bounds import evidence_phrase, related_location, unguarded
from triton_lint.rules.base import Rule


class UnmaskedStore(Rule):
    code = "TL102"
    name = "unmasked-store"
    category = Category.MEMORY_SAFETY
    severity = Severity.ERROR
    summary = (
        "Vector `tl.store` or `tl.atomic_*` without a mask on lanes the kernel bounds elsewhere"
    )
    rationale = """\
An unmasked store of `tl.arange` lanes writes past the end of the output whenever the size is
not a multiple of the block: it silently corrupts whatever tensor lives next in memory (often
another activation or the optimizer state) or faults. Atomics (`tl.atomic_add`, ...) have the
same problem and are harder to spot because they usually accumulate into small buffers.

As for TL101, the store is reported only when the kernel itself says the tile can be partial:
another access masks the same lanes against the end of their dimension (the load masks `offs <
n`, the store does not), checks the bounds of a block pointer over the same shape, a launch
rounds the grid axis the lanes move with up with `triton.cdiv` (see TL101; bitsandbytes' absmax
store of a group of blocks per program), the kernel takes an `n_elements` it never compares, or
a loop walks a runtime size in tiles of the lanes' extent (`for off in range(0, n, BLOCK)`, see
TL101). Stores into exactly tiled buffers, in the other arm of an `if EVEN_N:` branch, in a
whole-tile loop with a peeled tail, or through lanes wrapped with `%`/`//` are not reported.
Nor is a store of the masked lanes at another tile coordinate than the one the mask bounds: a
scale swizzle loads `pid_r * BLOCK_R + rows < n_rows` and stores each program's whole tile
at `pid * TILE_NUMEL + rows % 32 * 16 + ...` of a destination the host pads to whole tiles
(vLLM's qutlass, torchao's MX formats); nor one that adds the lanes' own constexpr extent
(`scratch + NUM_BINS + bins` with `bins = tl.arange(0, NUM_BINS)`, the next whole block of a
scratch buffer whose first block the mask bounds). Unmasked stores the kernel gives no sign
about are TL106 (off by default)."""
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
            found = unguarded(kernel, access)
            if found is None or found.evidence is None:
                continue  # nothing says the tile can be partial: TL106's business
            what = "`tl.store`" if access.kind == "store" else f"`tl.{access.op}`"
            phrase = evidence_phrase(kernel, found.evidence)
            if found.block_pointer:
                message = (
                    f"block-pointer {what} without `boundary_check`, but {phrase}: a partial "
                    "block writes out of bounds; pass `boundary_check=(0, 1)`"
                )
            else:
                message = (
                    f"{what} of `tl.arange` lanes has no mask, but {phrase}: the lanes past "
                    "the end write out of bounds; add `mask=offs < n`"
                )
            finding = self.finding(kernel, access.call, message)
            finding.related = (related_location(kernel, found.evidence),)
            yield finding
