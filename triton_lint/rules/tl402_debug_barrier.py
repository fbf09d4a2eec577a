"""TL402: ``tl.debug_barrier()`` in a kernel (off by default)."""

from __future__ import annotations

from collections.abc import Iterator

from triton_lint.finding import Category, Finding, Severity
from triton_lint.model.kernel import Kernel
from triton_lint.rules.base import Rule


class DebugBarrier(Rule):
    code = "TL402"
    name = "debug-barrier"
    category = Category.PERFORMANCE
    severity = Severity.INFO
    default_enabled = False
    summary = "`tl.debug_barrier()` in a kernel"
    rationale = """\
`tl.debug_barrier()` synchronises all threads of a program. Added while debugging, it costs a
stall on every call. It is off by default because production kernels also use it as a real fix
(ordering shared-memory reuse between loop iterations, working around compiler races): enable
it with `--select TL402` to audit each use."""
    fix = """\
Remove the barrier if it was only for debugging; if it fixes a real race, keep it and add a
comment saying which, with `# noqa: TL402`."""
    bad = """\
import triton
import triton.language as tl


@triton.jit
def add(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.debug_barrier()  # <- TL402
    tl.store(y_ptr + offs, x, mask=offs < n)
"""
    good = """\
import triton
import triton.language as tl


@triton.jit
def add(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, x, mask=offs < n)
"""

    def check_kernel(self, kernel: Kernel) -> Iterator[Finding]:
        for call in kernel.calls_to("debug_barrier"):
            yield self.finding(
                kernel,
                call.node,
                "`tl.debug_barrier()` stalls every program: remove it unless it fixes a race",
            )
