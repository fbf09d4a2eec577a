"""TL304: `exp(m_old - m_new)` with a running max that starts at -inf and no guard."""

from __future__ import annotations

import math
from collections.abc import Iterator

import libcst as cst

from triton_lint.finding import Category, Finding, Severity
from triton_lint.model.calls import tl_short
from triton_lint.model.dependencies import Dependencies
from triton_lint.model.kernel import Kernel
from triton_lint.model.lane_values import float_value
from triton_lint.model.reaching import Reaching
from triton_lint.model.structure import Structure
from triton_lint.model.tree import Worklist, iter_children, iter_nodes
from triton_lint.rules.base import Rule

_EXP = ("exp", "exp2")


class RunningMaxNan(Rule):
    code = "TL304"
    name = "running-max-nan"
    category = Category.NUMERICS
    severity = Severity.WARNING
    default_enabled = False
    precision = "medium"
    summary = "Online-softmax rescale `exp(m_old - m_new)` with a running max that starts at -inf"
    rationale = """\
An online softmax keeps a running max `m` initialised to `-inf` and rescales with
`alpha = exp(m_old - m_new)`. When every score of a row seen so far is masked to `-inf`
(a fully masked row, a causal block above the diagonal, an empty sequence), `m_new` is still
`-inf` and `-inf - (-inf)` is NaN, which then poisons the accumulator. Kernels that start the
running max at a large finite negative value, or guard the rescale with `tl.where`, are not
reported, nor are running maxima of scores that are never filled with -inf.

Off by default, on the corpus's evidence: it reports 71 running maxima in the 7 libraries of
`docs/corpus.md` (1.3 per 100 kernels), and of the 7 findings still open after triage rounds
1-2 (`bench/triage.tsv`), 2 are true positives and 5 debatable: the NaN needs a row with no
valid score (an empty sequence, a row past `M` whose store is masked), which most kernels
rule out by construction (a causal diagonal, a host that never launches empty rows). On by
default it would add about one finding per 77 kernels, read debatable more than twice as
often as true; enable it where empty or fully masked rows can happen (varlen batches, sparse
masks)."""
    fix = """\
Start the running max at a finite value (`m_i = tl.full([BLOCK_M], -1.0e30, tl.float32)`) or
guard: `alpha = tl.where(m_new == float("-inf"), 1.0, tl.exp(m_i - m_new))` (and likewise for
the probabilities)."""
    bad = """\
import triton
import triton.language as tl


@triton.jit
def attn(s_ptr, o_ptr, n, BLOCK: tl.constexpr):
    rows = tl.arange(0, BLOCK)
    m_i = tl.full([BLOCK], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        cols = start + rows
        s_ptrs = s_ptr + rows[:, None] * n + cols[None, :]
        s = tl.load(s_ptrs, mask=cols[None, :] < n, other=float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp(m_i - m_new)  # <- TL304
        l_i = l_i * alpha + tl.sum(tl.exp(s - m_new[:, None]), 1)
        m_i = m_new
    tl.store(o_ptr + rows, l_i)
"""
    good = """\
import triton
import triton.language as tl


@triton.jit
def attn(s_ptr, o_ptr, n, BLOCK: tl.constexpr):
    rows = tl.arange(0, BLOCK)
    m_i = tl.full([BLOCK], -1.0e30, tl.float32)
    l_i = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        s = tl.load(s_ptr + rows[:, None] * n + start + rows[None, :])
        m_new = tl.maximum(m_i, tl.max(s, 1))
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(tl.exp(s - m_new[:, None]), 1)
        m_i = m_new
    tl.store(o_ptr + rows, l_i)
"""

    def check_kernel(self, kernel: Kernel) -> Iterator[Finding]:
        for site in kernel.calls:
            if tl_short(kernel, site.node) not in _EXP:
                continue
            args = [a.value for a in site.node.args if a.keyword is None]
            if not args:
                continue
            guarded = False
            rescale = None
            for node in self._argument_nodes(kernel, args[0]):
                if isinstance(node, cst.Call) and tl_short(kernel, node) == "where":
                    guarded = guarded or self._tests_infinity(kernel, node)
                if (
                    isinstance(node, cst.BinaryOperation)
                    and isinstance(node.operator, cst.Subtract)
                    and self._starts_at_minus_inf(kernel, node.left)
                    and self._is_running_max(kernel, node.right)
                    and not self._finite_operand(kernel, node.right)
                ):
                    rescale = node
            for ancestor in kernel.facts(Structure).ancestors(site.node):
                if isinstance(ancestor, cst.Call) and tl_short(kernel, ancestor) == "where":
                    guarded = guarded or self._tests_infinity(kernel, ancestor)
            if rescale is not None and not guarded:
                yield self.finding(
                    kernel,
                    site.node,
                    "running max starts at -inf: for a row with every score masked, "
                    f"`{kernel.module.module.code_for_node(rescale)}` is `-inf - (-inf)` = NaN; "
                    "start the max at a finite value (-1e30) or guard with `tl.where`",
                )

    @staticmethod
    def _argument_nodes(kernel: Kernel, arg: cst.BaseExpression) -> Iterator[cst.CSTNode]:
        """The exponent's own expression and the definitions of the names it uses directly
        (``alpha = exp(m_i - m_new)`` or ``d = m_i - m_new; exp(d)``), not the whole closure."""
        roots: list[cst.CSTNode] = [arg]
        pending: list[cst.CSTNode] = [arg]
        while pending:
            node = pending.pop()
            if isinstance(node, cst.Name):
                roots.extend(value for _, value in kernel.facts(Reaching).definition_values(node))
            else:
                pending.extend(iter_children(node))
        for root in roots:
            yield from iter_nodes(root)

    @staticmethod
    def _tests_infinity(kernel: Kernel, where: cst.Call) -> bool:
        """``tl.where(m == -inf, ...)``: a guard (a causal ``tl.where`` is not one)."""
        if not where.args:
            return False
        for node in kernel.facts(Dependencies).closure(where.args[0].value, values_only=True):
            if isinstance(node, cst.Comparison):
                operands = [node.left, *(c.comparator for c in node.comparisons)]
                if any(float_value(kernel, o) in (math.inf, -math.inf) for o in operands):
                    return True
        return False

    @staticmethod
    def _starts_at_minus_inf(kernel: Kernel, expr: cst.BaseExpression) -> bool:
        """``expr`` is the running max itself: a name whose definitions are copies,
        ``tl.maximum`` updates and an initialisation to exactly -inf."""
        pending = Worklist(expr)
        for node in pending:
            if isinstance(node, cst.Subscript):
                pending.append(node.value)
            elif isinstance(node, cst.Name):
                pending.extend(value for _, value in kernel.facts(Reaching).definition_values(node))
            elif isinstance(node, cst.Call):
                short = tl_short(kernel, node)
                args = [a.value for a in node.args if a.keyword is None]
                if short == "full":
                    value = next(
                        (a.value for a in node.args if a.keyword and a.keyword.value == "value"),
                        args[1] if len(args) > 1 else None,
                    )
                    if value is not None and float_value(kernel, value) == -math.inf:
                        return True
                elif short == "maximum":
                    pending.extend(args)
            elif isinstance(node, cst.BinaryOperation) and isinstance(
                node.operator, cst.Subtract | cst.Add
            ):
                value = float_value(kernel, node.right)
                if (
                    value in (math.inf, -math.inf)
                    and isinstance(node.left, cst.Call)
                    and tl_short(kernel, node.left) == "zeros"
                ):
                    return True
        return False

    @staticmethod
    def _is_running_max(kernel: Kernel, expr: cst.BaseExpression) -> bool:
        """A running max whose scores can be -inf (masked with a -inf fill): only then can a
        row's max stay -inf and the rescale give NaN."""
        for node in kernel.facts(Dependencies).closure(expr, values_only=True):
            if isinstance(node, cst.Call) and tl_short(kernel, node) == "maximum":
                for arg in node.args[1:]:
                    if RunningMaxNan._can_be_minus_inf(kernel, arg.value):
                        return True
        return False

    @staticmethod
    def _finite_operand(kernel: Kernel, expr: cst.BaseExpression) -> bool:
        """The new max is a ``tl.maximum`` with an operand guarded finite (SGLang's
        ``row_max_fixed = tl.where(row_max == -inf, -1e20, row_max)``): it is never -inf,
        so ``m_old - m_new`` is at worst -inf, whose exp is 0."""
        values: list[cst.BaseExpression] = [expr]
        if isinstance(expr, cst.Name):
            values = [v for _, v in kernel.facts(Reaching).definition_values(expr)]
        for value in values:
            if not (isinstance(value, cst.Call) and tl_short(kernel, value) == "maximum"):
                return False
            guarded = False
            for arg in value.args:
                operand = arg.value
                sources = [operand]
                if isinstance(operand, cst.Name):
                    sources = [v for _, v in kernel.facts(Reaching).definition_values(operand)]
                guarded = guarded or (
                    bool(sources)
                    and all(
                        isinstance(v, cst.Call)
                        and tl_short(kernel, v) == "where"
                        and RunningMaxNan._tests_infinity(kernel, v)
                        for v in sources
                    )
                )
            if not guarded:
                return False
        return bool(values)

    @staticmethod
    def _can_be_minus_inf(kernel: Kernel, scores: cst.BaseExpression) -> bool:
        for node in kernel.facts(Dependencies).closure(scores):
            if isinstance(node, cst.Call) and tl_short(kernel, node) == "full":
                continue  # the running max's own -inf initialisation
            if (
                isinstance(node, cst.UnaryOperation | cst.Call | cst.Attribute)
                and float_value(kernel, node) == -math.inf
            ):
                parent = kernel.facts(Structure).parent(node)
                if not (
                    isinstance(parent, cst.Arg)
                    and isinstance(kernel.facts(Structure).parent(parent), cst.Call)
                    and tl_short(kernel, kernel.facts(Structure).parent(parent)) == "full"
                ):
                    return True
        return False
