"""TL101: a vector load without a mask."""

from __future__ import annotations

from collections.abc import Iterator

from triton_lint.finding import Category, Finding, Severity
from triton_lint.model.kernel import Kernel
from triton_lint.model.partial_tiles import NEVER, PartialTiles
from triton_lint.rules._bounds import evidence_phrase, related_location, unguarded
from triton_lint.rules.base import Rule


class UnmaskedLoad(Rule):
    code = "TL101"
    name = "unmasked-load"
    category = Category.MEMORY_SAFETY
    severity = Severity.ERROR
    summary = (
        "Vector `tl.load` without a mask (or a block-pointer load without `boundary_check`) "
        "on lanes the kernel bounds elsewhere"
    )
    rationale = """\
Offsets built from `tl.arange(0, BLOCK)` cover a whole block. When the problem size is not a
multiple of `BLOCK`, the last tile's lanes run past the end of the tensor, and an unmasked
load reads memory that belongs to something else: garbage values, a wrong result that only
shows for some sizes, or an illegal-address fault.

Many production kernels leave loads unmasked on purpose, because the tile exactly covers the
dimension (a head of `HEAD_DIM` lanes, a swizzled scale block, sizes the host checked to be
multiples). The linter cannot see those sizes, so it reports an unmasked load only when the
kernel itself says the tile can be partial: another access masks the same lanes against the end
of their dimension (`offs_m < M`; a constexpr `o_k < K` counts for tiles shifted by a program
or loop offset, not for one whole row compared with a sub-range), or checks the bounds of a
block pointer over the same shape, or the load gathers through an index vector whose masked-off
lanes are undefined (loaded with a mask and no `other=`), or a launch in the same file rounds
the grid axis the lanes move with up (`triton.cdiv(M, BLOCK_M)`: the host expects a partial
last tile) with no host `assert M % BLOCK_M == 0` (nor one pinning `M` to a literal, `assert
M == 256`: a fixed extent), no early return of the programs past a
padded bound, and lanes that are `pid * BLOCK + tl.arange` with no clamp or gather on the way
(FlagAttention's `_bwd_preprocess`), or the kernel takes an element count (`n_elements`,
`numel`) that nothing in it compares, clamps or passes on while the lanes are `pid * BLOCK +
tl.arange(0, BLOCK)` (the mask it was passed for is missing), or a loop around the load walks a
runtime size in tiles of the lanes' extent and moves them (`for k in range(0, tl.cdiv(K,
BLOCK_K))` with `a_ptrs += BLOCK_K * stride_ak`, or offsets `k + tl.arange(0, BLOCK_K)`): the
last tile of a GEMM's K loop is partial unless `K % BLOCK_K == 0` (flag-gems' Kunlunxin `addmm`
before 5.0.2). The kernel or its host can say it is whole: an `EVEN_K` branch that masks the
other arm, `tl.assume(K % BLOCK_K == 0)` (or `tl.multiple_of`, `tl.static_assert`) on the size,
a host `assert K % BLOCK_K == 0` at the launch, a size rounded down to whole tiles (`K //
BLOCK_K`, `N - N % BLOCK`), a compile-time size, or lanes clamped on the way. It leaves alone
loads in a different arm of the branch that holds the masked access (`if EVEN:`), loads in a
loop the masked access is not in (whole tiles, with the tail peeled off), loads under a runtime
test of the bound, loads of the tiles before the program's own (`for s in range(0, pid * BLOCK,
BLOCK)` with lanes `s + tl.arange(0, BLOCK)`, where every launch sizes the grid `cdiv(n,
BLOCK)` with `n` the bound the mask compares: those tiles are whole), and lanes brought back
into range by `%`, `//`, `minimum`, `tl.where` or a reduction. Unmasked loads the kernel gives
no sign about are TL106 (off by default).

Information, with the sizes in the message, when every launch makes the partial tile narrow
and the values read past the end reach no reduction (no `tl.sum`, `tl.max` or `tl.dot`
operand; they only reach outputs the stores mask off): the tile comes from autotune configs
while a host test fixes the bound to a multiple of `g` (`assert M % 128 == 0`), and only the
configs wider than `g` fail to divide it ("overruns only when autotune picks `BLOCK_M=256` and
`M` is an odd multiple of 128"; when every config divides `g` no tile is partial and nothing
is reported), or the launch sizes the tile `next_power_of_2` of the bound it passes, capped
or not (`BV = min(64, next_power_of_2(V))`, read through a nested launching function's calls
as in FLA's `fwd_inner`): it overruns only when the bound is neither a power of 2 nor a
multiple of the cap. The triage read those debatable (round 28). An error stays where the
default or every configuration can leave a partial tile, or a reduction mixes the lanes past
the end into the rest (`b_h *= exp(b_gk)` then `tl.sum(b_h * b_k)`, FLA's fused recurrent
kernel)."""
    fix = """\
Pass the mask the other access uses, and an `other=` value that is neutral for what the value
feeds (0 for sums, `-inf` for maxima): `tl.load(x_ptr + offs, mask=offs < n, other=0.0)`. For
block pointers pass `boundary_check=(0, 1)` (and `padding_option="zero"`). If the host
guarantees divisibility, make that a constexpr flag (`EVEN_N`) and mask the other branch, or
suppress the line with `# noqa: TL101`."""
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
            found = unguarded(kernel, access)
            if found is None or found.evidence is None:
                continue  # nothing says the tile can be partial: TL106's business
            phrase = evidence_phrase(kernel, found.evidence)
            if found.block_pointer:
                message = (
                    f"block-pointer load without `boundary_check`, but {phrase}: a partial "
                    "block reads out of bounds; pass `boundary_check=(0, 1)` and "
                    '`padding_option="zero"`'
                )
                severity = self.severity
            else:
                only = kernel.facts(PartialTiles).only_for(access, found.evidence)
                if only == NEVER:
                    continue  # every tile size the launches give divides the extent
                severity = Severity.INFO if only else self.severity
                reach = (
                    f"read out of bounds only when {only}, and no reduction reads them (info: "
                    "a narrow overrun whose values reach only outputs the stores mask off)"
                    if only
                    else "read out of bounds"
                )
                message = (
                    f"`tl.load` of `tl.arange` lanes has no mask, but {phrase}: the lanes past "
                    f"the end {reach}; add `mask=offs < n` and a neutral `other=`"
                )
            finding = self.finding(kernel, access.call, message, severity=severity)
            finding.related = (related_location(kernel, found.evidence),)
            yield finding
