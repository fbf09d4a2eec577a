"""TL401: debug printing left in a kernel."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from triton_lint.finding import Applicability, Category, Finding, Fix, Severity
from triton_lint.model.kernel import Kernel
from triton_lint.model.provenance import Provenance
from triton_lint.model.structure import Structure
from triton_lint.model.tree import iter_nodes
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
compiled out by default. `triton-lint --fix` deletes the print statement (a print alone in its
block becomes `pass`); the fix is unsafe when the print's arguments call something."""
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
            if any(
                kernel.facts(Provenance).is_compile_time(branch.test) for branch in call.branches
            ):
                continue
            yield self.finding(
                kernel,
                call.node,
                f"{what} left in the kernel: remove it or gate it on a constexpr flag",
                fix=self._removal(kernel, call.node, what),
            )

    def _removal(self, kernel: Kernel, call: cst.Call, what: str) -> Fix | None:
        """Delete the statement; a block it is alone in keeps a ``pass``.

        Only a print that is a statement of its own is removed (not one inside an expression
        or sharing a line with ``;``). Removing a print whose arguments call something (which
        could have effects) is unsafe; otherwise it is safe.
        """
        found = _statement_of(kernel, call)
        if found is None:
            return None
        line, alone = found
        applicability = Applicability.SAFE
        if any(isinstance(n, cst.Call) for arg in call.args for n in iter_nodes(arg.value)):
            applicability = Applicability.UNSAFE
        if alone:
            edit = self.replace_node(kernel, line.body[0], "pass")
            message = f"Replace {what} with `pass`"
        elif isinstance(line, cst.SimpleStatementLine):
            edit = self.delete_lines(kernel, line)
            message = f"Remove {what}"
        else:
            return None
        return Fix(applicability, message, (edit,))


def _statement_of(
    kernel: Kernel, call: cst.Call
) -> tuple[cst.SimpleStatementLine | cst.SimpleStatementSuite, bool] | None:
    """The statement line holding ``call`` as its only statement, and whether it is alone in
    its block (so deleting it would leave the block empty)."""
    expr = kernel.facts(Structure).parent(call)
    if not isinstance(expr, cst.Expr):
        return None
    line = kernel.facts(Structure).parent(expr)
    if isinstance(line, cst.SimpleStatementSuite):
        return (line, True) if len(line.body) == 1 else None
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
        return None
    block = kernel.facts(Structure).parent(line)
    return line, isinstance(block, cst.IndentedBlock) and len(block.body) == 1
