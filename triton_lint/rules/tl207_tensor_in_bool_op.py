"""TL207: Python ``and``/``or``/``not`` applied to tensors."""

from __future__ import annotations

from collections.abc import Iterator

from triton_lint.finding import Category, Finding, Severity
from triton_lint.model.blocks import Blocks
from triton_lint.model.kernel import Kernel
from triton_lint.model.provenance import COMPILE_TIME, Prov, Provenance
from triton_lint.model.usage import Usage
from triton_lint.rules.base import Rule
from triton_lint.target import minor

_SYMBOL = {"and": "&", "or": "|", "not": "~"}


class TensorInBoolOp(Rule):
    code = "TL207"
    name = "tensor-in-bool-op"
    category = Category.CORRECTNESS
    severity = Severity.WARNING
    summary = "Python `and`/`or`/`not` applied to tensors instead of `&`/`|`/`~`"
    rationale = """\
`and`, `or` and `not` are Python's short-circuit operators. On tensors Triton rewrites them
into elementwise operations, but only partly: Triton 3.3 rejects chains of more than two
operands (`a and b and c`), Triton 3.4+ compiles `and`/`or` on block tensors elementwise with
a deprecation warning ("Logical operators 'and' and 'or' are deprecated for non-scalar
tensors"; `not` calls the tensor's elementwise `__not__`, without a warning), and the
interpreter (`TRITON_INTERPRET=1`) applies Python's operators: `and` keeps one operand, so
`mask = (rm[:, None] < M) and (rn[None, :] < N)` becomes one of the two masks, the mask loses
a dimension and the kernel reads out of bounds; `not mask` is one scalar for the whole block.
Reported as an error where the target Triton rejects the expression, a warning for `and`/`or`
on blocks, and information for `not` on a block (correct when compiled, wrong only under the
interpreter); operands that are all constexpr, and scalar conditions on targets that accept
them, are left alone."""
    fix = """\
Use the elementwise operators and parenthesize the comparisons:
`mask = (rm[:, None] < M) & (rn[None, :] < N)`; `~mask` for `not mask`."""
    bad = """\
import triton
import triton.language as tl


@triton.jit
def copy_tile(x_ptr, out_ptr, M, N, stride, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rm[:, None] < M) and (rn[None, :] < N)  # <- TL207
    x = tl.load(x_ptr + rm[:, None] * stride + rn[None, :], mask=mask, other=0.0)
    tl.store(out_ptr + rm[:, None] * stride + rn[None, :], x, mask=mask)
"""
    good = """\
import triton
import triton.language as tl


@triton.jit
def copy_tile(
    x_ptr,
    out_ptr,
    M,
    N,
    stride,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    EVEN_M: tl.constexpr,
    EVEN_N: tl.constexpr,
):
    pid_m = tl.program_id(0)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    if EVEN_M and EVEN_N:
        x = tl.load(x_ptr + rm[:, None] * stride + rn[None, :])
    else:
        mask = (rm[:, None] < M) & (rn[None, :] < N)
        x = tl.load(x_ptr + rm[:, None] * stride + rn[None, :], mask=mask, other=0.0)
    if pid_m * BLOCK_M < M and M > 0:
        tl.store(out_ptr + rm[:, None] * stride + rn[None, :], x, mask=(rm[:, None] < M))
"""

    def check_kernel(self, kernel: Kernel) -> Iterator[Finding]:
        target = minor(kernel.module.target_version)
        for op in kernel.facts(Usage).bool_ops:
            chained = op.operator != "not" and len(op.operands) > 2 and target < (3, 4)
            if not chained and op.in_condition:
                continue  # conditions are scalar (Triton rejects block-shaped `if` tests)
            if not chained and not any(
                kernel.facts(Blocks).is_block(operand) for operand in op.operands
            ):
                continue
            if all(_constexpr(kernel, operand) for operand in op.operands):
                continue
            if chained:
                yield self.finding(
                    kernel,
                    op.node,
                    f"chained `{op.operator}` with {len(op.operands)} operands: Triton "
                    f'{kernel.module.target_version} rejects it ("chained boolean operators are '
                    'not supported"); split it with parentheses or use '
                    f"`{_SYMBOL[op.operator]}`",
                    severity=Severity.ERROR,
                )
                continue
            if op.operator == "not":
                yield self.finding(kernel, op.node, _NOT_MESSAGE, severity=Severity.INFO)
                continue
            yield self.finding(kernel, op.node, _message(op.operator))


#: Compiled Triton calls the tensor's `__not__` (elementwise, no warning) on every version; only
#: the interpreter applies Python's `not`, so the finding is information.
_NOT_MESSAGE = (
    "Python `not` on a block tensor: correct when compiled (Triton applies it elementwise), "
    "wrong under `TRITON_INTERPRET=1`, where Python's `not` gives one scalar for the whole "
    "block; use `~`"
)


def _message(operator: str) -> str:
    """Compiled Triton deprecates `and`/`or` on blocks; the interpreter keeps one operand."""
    return (
        f"Python `{operator}` on a block tensor: Triton deprecates `and`/`or` on non-scalar "
        "tensors, and the interpreter keeps only one operand (Python semantics); use "
        f"`{_SYMBOL[operator]}` with parenthesized comparisons"
    )


def _constexpr(kernel: Kernel, expr) -> bool:
    flags = kernel.facts(Provenance).of(expr)
    return bool(flags) and not (flags & ~(COMPILE_TIME | Prov.GLOBAL))
