"""TL301: `exp` of a value that is neither shifted by a maximum nor clamped."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from triton_lint.finding import Category, Finding, Severity
from triton_lint.model.kernel import Kernel
from triton_lint.model.provenance import Prov
from triton_lint.model.tree import iter_nodes
from triton_lint.rules.base import Rule

_EXP = ("exp", "exp2")
# Calls that bound their result: a clamp, a max, a log (exp(log x) = x), a where-select.
_BOUNDING = {
    "minimum",
    "clamp",
    "max",
    "maximum",
    "min",
    "log",
    "log2",
    "log1p",
    "logsigmoid",
    "where",
    "sigmoid",
    "tanh",
    "cumsum",
}


class UnstableExp(Rule):
    code = "TL301"
    name = "unstable-exp"
    category = Category.NUMERICS
    severity = Severity.ERROR
    summary = "`exp`/`exp2` of a value that is neither shifted by its maximum nor clamped"
    rationale = """\
`exp(x)` overflows to `inf` in fp32 for x > 88 (and in fp16 for x > 11); a softmax computed as
`exp(x) / sum(exp(x))` then yields `inf / inf = NaN` for large logits, which real models
produce, and so does a ratio with the same exponential above and below the line: `tanh` written
as `(exp(y) - exp(-y)) / (exp(y) + exp(-y))` (a softcap) or `exp(x) / (1 + exp(x))`.
Subtracting the maximum first (`exp(x - max(x))`, or the running max of an online softmax)
keeps every exponent <= 0. Only exponentials that are summed (a `tl.sum`, a `tl.dot` operand,
directly or through `+`, casts and `tl.where`) or divided by themselves are checked: a decay
factor such as `state * exp(g)` of a log-space gate is bounded by construction. The sigmoid
form `1 / (1 + exp(-x))`, `exp(-abs(x))`, `exp(tl.minimum(x, c))`, shifts by any other runtime
value (`x - lse`, `x - m_new`) and `1 - 2 / (exp(2 * y) + 1)` (an exponential only below the
line: `2 / inf` is 0) are not reported."""
    fix = """\
Subtract the row maximum before exponentiating: `z = x - tl.max(x, axis=0)`,
`num = tl.exp(z)`, `out = num / tl.sum(num, axis=0)`; in an online softmax subtract the running
max `m_new`; or clamp the argument with `tl.minimum(x, 80.0)`."""
    bad = """\
import triton
import triton.language as tl


@triton.jit
def softmax(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=-float("inf"))
    num = tl.exp(x)  # <- TL301
    tl.store(y_ptr + offs, num / tl.sum(num, axis=0), mask=offs < n)
"""
    good = """\
import triton
import triton.language as tl


@triton.jit
def softmax(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=-float("inf"))
    num = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + offs, num / tl.sum(num, axis=0), mask=offs < n)


@triton.jit
def silu(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    y = x / (1.0 + tl.exp(-x)) + tl.exp(-tl.abs(x)) + tl.exp(tl.minimum(x, 20.0))
    tl.store(y_ptr + offs, y, mask=offs < n)
"""

    def check_kernel(self, kernel: Kernel) -> Iterator[Finding]:
        flow = kernel.dataflow
        summed: set[int] = set()  # exp calls whose values are summed (softmax, logsumexp)
        for reduction in flow.reductions():
            if reduction.kind in ("sum", "dot"):
                for operand in reduction.operands:
                    summed.update(id(node) for node in flow.additive_terms(operand))
        divided = _divided_by_themselves(kernel)
        for site in kernel.calls:
            call = site.node
            short = flow.tl_short(call)
            if short not in _EXP:
                continue
            args = [a.value for a in call.args if a.keyword is None]
            if not args or (id(call) not in summed and id(call) not in divided):
                continue
            arg = args[0]
            flags = kernel.prov(arg)
            if not flags & (Prov.LOADED | Prov.TENSOR) and kernel.is_entry_point:
                continue  # scalar arithmetic on parameters (a helper's are its caller's tensors)
            if self._bounded(kernel, arg):
                continue
            code = kernel.module.module.code_for_node(arg)
            if id(call) in summed:
                message = (
                    f"`{short}({code})` is not shifted by a maximum or clamped: it overflows to "
                    "inf for large inputs (x > 88 in fp32) and a normalisation then gives NaN; "
                    f"subtract the max first (`{short}({code} - tl.max({code}, axis=0))`) or "
                    "clamp with `tl.minimum`"
                )
            else:
                message = (
                    f"`{short}({code})` is on both sides of a division: it overflows to inf for "
                    "large inputs (x > 88 in fp32) and `inf / inf` is NaN; keep the exponential "
                    "below the line only (`tanh(y) = 1 - 2 / (exp(2 * y) + 1)`, "
                    "`sigmoid(x) = 1 / (1 + exp(-x))`) or clamp with `tl.minimum`"
                )
            yield self.finding(kernel, call, message)

    @staticmethod
    def _bounded(kernel: Kernel, arg: cst.BaseExpression) -> bool:
        flow = kernel.dataflow
        for node in flow.closure(arg, values_only=True):
            if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
                return True
            if (
                isinstance(node, cst.BinaryOperation)
                and isinstance(node.operator, cst.Subtract)
                and not kernel.is_compile_time(node.right)
            ):
                return True
            if isinstance(node, cst.Call):
                short = flow.tl_short(node)
                if short in _BOUNDING:
                    return True
                if short is None and flow.is_opaque(node):
                    return True  # a helper we cannot see into
        return False


def _divided_by_themselves(kernel: Kernel) -> set[int]:
    """Exp calls that are a term or factor of a quotient's numerator and a term of its
    denominator: ``(p - q) / (p + q)`` with ``p = exp(y)`` is ``inf / inf`` for large ``y``.
    A quotient that a ``tl.where`` on the exponent's own value selects is the stable
    two-sided form (``where(x >= 0, 1 / (1 + exp(-x)), exp(x) / (1 + exp(x)))``)."""
    flow = kernel.dataflow
    exps = {id(site.node): site.node for site in kernel.calls if flow.tl_short(site.node) in _EXP}
    if not exps:
        return set()
    selected: dict[int, list[set[int]]] | None = None
    found: set[int] = set()
    for node in iter_nodes(kernel.node.body):
        if not (isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Divide)):
            continue
        above = [exps[id(t)] for t in _terms_and_factors(kernel, node.left) if id(t) in exps]
        if not above:
            continue
        below = {id(term) for term in flow.additive_terms(node.right)}
        for call in above:
            if id(call) not in below or not call.args:
                continue
            if selected is None:
                selected = _selected_quotients(kernel)
            exponent = {id(n) for n in flow.closure(call.args[0].value)}
            if any(exponent & test for test in selected.get(id(node), [])):
                continue
            found.add(id(call))
    return found


def _selected_quotients(kernel: Kernel) -> dict[int, list[set[int]]]:
    """Quotients that are an arm of a ``tl.where``, with the nodes its condition reads."""
    flow = kernel.dataflow
    selected: dict[int, list[set[int]]] = {}
    for site in kernel.calls_to("where"):
        args = [a.value for a in site.node.args if a.keyword is None]
        if len(args) != 3:
            continue
        test = {id(n) for n in flow.closure(args[0])}
        for arm in args[1:]:
            for term in flow.additive_terms(arm):
                selected.setdefault(id(term), []).append(test)
    return selected


def _terms_and_factors(kernel: Kernel, expr: cst.BaseExpression) -> Iterator[cst.CSTNode]:
    """Additive terms of ``expr`` and of its products' factors: ``x * (p - q)`` has ``p``."""
    flow = kernel.dataflow
    pending = [expr]
    seen: set[int] = set()
    while pending:
        for term in flow.additive_terms(pending.pop()):
            if id(term) in seen:
                continue
            seen.add(id(term))
            yield term
            if isinstance(term, cst.BinaryOperation) and isinstance(term.operator, cst.Multiply):
                pending.extend((term.left, term.right))
