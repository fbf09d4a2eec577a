"""TL401: debug printing left in a kernel."""

from __future__ import annotations

from collections.abc import Iterator

from triton_lint.finding import Category, Finding, Severity
from triton_lint.model.kernel import Kernel
from triton_lint.rules.base import Rule

_PRINTS = {"device_print", "static_print"}


class DebugPrint(Rule):
    code = "TL401"
    name = "debug-print"
    category = Category.BEST_PRACTICE
    severity = Severity.WARNING
    summary = "`tl.device_print`, `print` or `tl.static_print` left in a kernel"
    rationale = """\
`tl.device_print` (and `print`, which Triton compiles to it) makes every program print every
lane: it floods the output, serialises the kernel on a lock and can slow it down by orders of
magnitude. `tl.static_print` prints at every compilation. Prints inside `@triton.jit(debug=True)`
kernels or under a constexpr flag (`if DEBUG:`, compiled out when off) are deliberate and not
reported."""
    fix = """\
Delete the print, or gate it on a constexpr flag (`if DEBUG: tl.device_print("x", x)`) so it is
compiled out by default."""
    bad = """\
import triton
import triton.language as tl


@triton.jit
def relu(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.device_print("x", x)  # <- TL401
    tl.store(x_ptr + offs, tl.maximum(x, 0), mask=offs < n)
"""
    good = """\
import triton
import triton.language as tl


@triton.jit
def relu(x_ptr, n, BLOCK: tl.constexpr, DEBUG: tl.constexpr = False):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    if DEBUG:
        tl.device_print("x", x)
    tl.store(x_ptr + offs, tl.maximum(x, 0), mask=offs < n)
"""

    def check_kernel(self, kernel: Kernel) -> Iterator[Finding]:
        if kernel.debug:
            return
        for call in kernel.calls:
            tl_name = call.tl_name
            if tl_name in _PRINTS:
                what = f"`tl.{tl_name}`"
            elif call.path is None and call.name == "print":
                what = "`print`"
            else:
                continue
            if any(kernel.is_compile_time(branch.test) for branch in call.branches):
                continue
            yield self.finding(
                kernel,
                call.node,
                f"{what} left in the kernel: remove it or gate it on a constexpr flag",
            )
