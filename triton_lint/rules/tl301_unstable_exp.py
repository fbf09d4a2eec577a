"""TL301: `exp` of a value that is neither shifted by a maximum nor clamped."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from triton_lint.finding import Category, Finding, Severity
from triton_lint.model.calls import is_loop_header, is_opaque, tl_short
from triton_lint.model.dependencies import Dependencies
from triton_lint.model.fixed_constexprs import FixedConstexprs
from triton_lint.model.kernel import Kernel
from triton_lint.model.lane_values import classify
from triton_lint.model.masks import expanded_axis
from triton_lint.model.names import dotted_name
from triton_lint.model.provenance import Prov, Provenance
from triton_lint.model.reaching import Reaching
from triton_lint.model.reductions import reductions
from triton_lint.model.shifts import EXP_HELPERS
from triton_lint.model.tree import iter_nodes, product_factors
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


#: Why a pairwise decay whose guard every launch selects is information.
_DEAD_ARM = (
    " (info: it sits under a compile-time branch that no launch in the project takes, or in a "
    "helper only called there: every launch fixes the constexpr test the other way, so no "
    "compiled kernel runs it; a new launch that sets the flag would)"
)
_UNLAUNCHED = (
    " (info: every launch in the project passes the compile-time flag whose `tl.where` "
    "selects the valid half, so the compiled specialisations discard the overflow; the "
    "other one still sums it)"
)

#: What a softcap's overflow needs: a warning, not an error (vLLM's attention softcap of this
#: form returned NaN for scores above 88 times its cap and was fixed, vllm#56578).
_SOFTCAP = (
    " (a softcap `tanh(x / c) * c`: the cap divides the input and scales the result, so it "
    "overflows only for inputs above {multiple} times the cap (fp32); logits large enough to "
    "need a cap can reach that, and `1 - 2 / (exp(2 * y) + 1)` saturates instead)"
)
#: The largest argument whose exponential is finite in fp32.
_OVERFLOW = {"exp": 88.7, "exp2": 128.0}


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
line: `2 / inf` is 0) are not reported. A `tl.where` that fills masked scores with `-inf`
bounds nothing from above (it makes the masked lanes 0, not the others small), so attention
scores masked that way and never shifted by their maximum are reported. A softcap
`tanh(x / c) * c` written as such a ratio, whose exponent is `x / c` (times a constant) and
whose result is scaled by the same `c`, is a warning: it overflows only for inputs about 44
(`exp(2 * y)`) or 88 (`exp(y)`) times the cap, but logits large enough to need a cap reach
that (vLLM's attention softcap of this form returned NaN for scores above 4400 with Gemma-2's
cap of 50 and was rewritten as `1 - 2 / (exp(2 * y) + 1)`).

Two more forms overflow in shipped state-space and linear-attention kernels. A pairwise
difference `exp(a[:, None] - b[None, :])` of cumulative log-decays is positive on one side of
the diagonal, so once a chunk's decays add up past 88 that half is `inf`, and `inf * 0` in a
masked position is NaN in the `tl.dot` it reaches (mamba clamped it with `tl.minimum(..., 0)`).
It is reported when no `tl.where` selects the valid half and no clamp bounds it before the
sum; a `tl.where` under a compile-time flag (`if IS_CAUSAL:`) leaves the other
specialisation unguarded; where every launch in the project passes the literal that selects the
`tl.where` (sglang's mamba chunk scan is launched with `IS_CAUSAL=True` only), the finding is
information: the compiled kernels are correct, the clamp upstream added is defensive. Helpers
imported under an exponential's name (fla's `exp2`, vLLM's `fast_exp`) count for this form. And
a softplus written `log(1 + exp(x))` is `inf` for x > 88 where the answer is x; it is reported
unless a `tl.where` on the input takes the large values another way (`where(x <= 20, log(1 +
exp(x)), x)`). Any of these forms under a compile-time branch that every launch in the
project fixes the other way (`if USE_SOFTCAP:` with the only launch passing `False`), or in a
helper called only there, is information: no compiled kernel runs it."""
    fix = """\
Subtract the row maximum before exponentiating: `z = x - tl.max(x, axis=0)`,
`num = tl.exp(z)`, `out = num / tl.sum(num, axis=0)`; in an online softmax subtract the running
max `m_new`; or clamp the argument with `tl.minimum(x, 80.0)`. Clamp a pairwise decay with
`tl.exp(tl.minimum(a[:, None] - b[None, :], 0.0))`, and write softplus as
`tl.where(x <= 20.0, tl.log(1 + tl.exp(x)), x)`."""
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
        summed: set[int] = set()  # exp calls whose values are summed (softmax, logsumexp)
        for reduction in reductions(kernel):
            if reduction.kind in ("sum", "dot"):
                for operand in reduction.operands:
                    summed.update(
                        id(node) for node in kernel.facts(Dependencies).additive_terms(operand)
                    )
        divided = _divided_by_themselves(kernel)
        unselected = _reaching_sums_unselected(kernel)
        launched = _reaching_sums_unselected(kernel, launched_only=True) if unselected else set()
        softplus = _softplus_terms(kernel)
        fixed = kernel.facts(FixedConstexprs)
        helper_unreached = not kernel.is_entry_point and fixed.never_called()
        for site in kernel.calls:
            call = site.node
            short = _exp_name(kernel, call)
            if short is None:
                continue
            args = [a.value for a in call.args if a.keyword is None]
            if not args:
                continue
            arg = args[0]
            code = kernel.module.module.code_for_node(arg)
            if id(call) in unselected and _outer_difference(kernel, arg):
                yield self.finding(
                    kernel,
                    call,
                    f"`{short}({code})` of a difference between every pair of positions is "
                    "positive on half the tile and overflows to inf once the values drift "
                    "apart (a cumulative sum over a long chunk); `inf * 0` then puts NaN in the "
                    "sum it reaches. Clamp it (`tl.minimum(a[:, None] - b[None, :], 0.0)`) or "
                    "select the valid half with `tl.where(causal, ..., 0.0)`"
                    + ("" if id(call) in launched else _UNLAUNCHED),
                    severity=None if id(call) in launched else Severity.INFO,
                )
                continue
            if id(call) not in summed and id(call) not in divided and id(call) not in softplus:
                continue
            if tl_short(kernel, call) is None:
                continue  # a helper: fla's gate decays `exp2(g_last)` sum into transforms
            flags = kernel.facts(Provenance).of(arg)
            if not flags & (Prov.LOADED | Prov.TENSOR) and kernel.is_entry_point:
                continue  # scalar arithmetic on parameters (a helper's are its caller's tensors)
            if self._bounded(kernel, arg):
                continue
            severity: Severity | None = None  # None: the rule's own
            if id(call) in softplus and id(call) not in summed:
                message = (
                    f"softplus as `log(1 + {short}({code}))` overflows to inf for inputs above "
                    "88 (fp32), where the answer is the input itself; select it with "
                    f"`tl.where({code} <= 20.0, tl.log(1 + tl.{short}({code})), {code})`"
                )
            elif id(call) in summed:
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
                multiple = _softcap_multiple(kernel, call, divided[id(call)], short)
                if multiple is not None:
                    message += _SOFTCAP.format(multiple=multiple)
                    severity = Severity.WARNING
            if helper_unreached or fixed.dead(call):
                yield self.finding(kernel, call, message + _DEAD_ARM, severity=Severity.INFO)
            else:
                yield self.finding(kernel, call, message, severity=severity)

    @staticmethod
    def _bounded(kernel: Kernel, arg: cst.BaseExpression) -> bool:
        closure = kernel.facts(Dependencies).closure(
            arg, values_only=True, stop_below=lambda node: _minus_infinity(kernel, node)
        )
        for node in closure:
            if _minus_infinity(kernel, node):
                continue  # a masked lane's fill: exp gives 0 there and bounds nothing else
            if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
                return True
            if (
                isinstance(node, cst.BinaryOperation)
                and isinstance(node.operator, cst.Subtract)
                and not kernel.facts(Provenance).is_compile_time(node.right)
            ):
                return True
            if isinstance(node, cst.Call):
                short = tl_short(kernel, node)
                if short == "where" and _fills_minus_inf(kernel, node):
                    continue  # masks lanes to -inf (exp gives 0) but leaves the others as big
                if short in _BOUNDING:
                    return True
                if short is None and is_opaque(kernel, node) and not is_loop_header(node):
                    return True  # a helper we cannot see into
        return False


def _fills_minus_inf(kernel: Kernel, where: cst.Call) -> bool:
    """``tl.where(mask, s, float("-inf"))``: an arm is minus infinity or a large negative fill
    (a masked score), so the select bounds nothing from above."""
    arms = [a.value for a in where.args if a.keyword is None][1:]
    return any(_minus_infinity(kernel, arm) for arm in arms)


def _minus_infinity(kernel: Kernel, node: cst.CSTNode) -> bool:
    """A fill whose exponential is 0 (``float("-inf")``, ``-math.inf``, ``-1e30``, a global
    ``NEG_INF = -1e30``), as the masked-lane model classifies constants."""
    return (
        isinstance(node, cst.UnaryOperation | cst.Call | cst.Name)
        and classify(kernel, node) == "-inf"
    )


def _exp_name(kernel: Kernel, call: cst.Call) -> str | None:
    """``exp`` or ``exp2`` when ``call`` computes an exponential: Triton's, libdevice's, or a
    helper imported under an exponential's name; else None."""
    short = tl_short(kernel, call)
    if short is not None:
        return short if short in _EXP else None
    name = dotted_name(call.func)
    if name is None or name in kernel.module.kernels_by_name or not is_opaque(kernel, call):
        return None
    return EXP_HELPERS.get(name.rsplit(".", 1)[-1])


def _divided_by_themselves(kernel: Kernel) -> dict[int, cst.BinaryOperation]:
    """Exp calls that are a term or factor of a quotient's numerator and a term of its
    denominator, with that quotient: ``(p - q) / (p + q)`` with ``p = exp(y)`` is
    ``inf / inf`` for large ``y``. A quotient that a ``tl.where`` on the exponent's own value
    selects is the stable two-sided form (``where(x >= 0, 1 / (1 + exp(-x)), exp(x) / (1 +
    exp(x)))``)."""
    exps = {id(site.node): site.node for site in kernel.calls if _exp_name(kernel, site.node)}
    if not exps:
        return {}
    selected: dict[int, list[set[int]]] | None = None
    found: dict[int, cst.BinaryOperation] = {}
    for node in iter_nodes(kernel.node.body):
        if not (isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Divide)):
            continue
        above = [exps[id(t)] for t in _terms_and_factors(kernel, node.left) if id(t) in exps]
        if not above:
            continue
        below = {id(term) for term in kernel.facts(Dependencies).additive_terms(node.right)}
        for call in above:
            if id(call) not in below or not call.args:
                continue
            if selected is None:
                selected = _selected_quotients(kernel)
            exponent = {id(n) for n in kernel.facts(Dependencies).closure(call.args[0].value)}
            if any(exponent & test for test in selected.get(id(node), [])):
                continue
            found.setdefault(id(call), node)
    return found


def _softcap_multiple(
    kernel: Kernel, call: cst.Call, quotient: cst.BinaryOperation, short: str
) -> int | None:
    """How many times the cap an input must exceed for ``call`` to overflow when the
    ``quotient`` it sits on both sides of is a softcap ``tanh(x / c) * c``: the exponent is
    ``x / c`` (times a positive literal) and the quotient is scaled by the same ``c``, in its
    numerator or as a factor of a product. None for any other ratio."""
    arg = call.args[0].value
    factor = 1.0
    if isinstance(arg, cst.BinaryOperation) and isinstance(arg.operator, cst.Multiply):
        for constant, rest in ((arg.left, arg.right), (arg.right, arg.left)):
            if isinstance(constant, cst.Integer | cst.Float):
                factor, arg = float(constant.evaluated_value), rest
                break
    cap = _divisor(kernel, arg)
    if cap is None or factor <= 0 or not _scaled_by(kernel, quotient, cap):
        return None
    return int(_OVERFLOW[short] / factor)


def _divisor(kernel: Kernel, expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """``c`` when ``expr`` is ``x / c``, directly or as every definition of a name."""
    values = [expr]
    if isinstance(expr, cst.Name):
        values = [d.value for d in kernel.facts(Reaching).reaching(expr)]
    divisors = [
        value.right
        for value in values
        if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Divide)
    ]
    if not divisors or len(divisors) != len(values):
        return None
    if any(not _same_value(kernel, d, divisors[0]) for d in divisors[1:]):
        return None
    return divisors[0]


def _scaled_by(kernel: Kernel, quotient: cst.BinaryOperation, cap: cst.BaseExpression) -> bool:
    """``quotient`` is multiplied by ``cap``: ``c * (p - q) / (p + q)``, ``(p - q) / (p + q)
    * c``, or a name bound to the quotient times ``c``."""
    if any(_same_value(kernel, f, cap) for f in product_factors(quotient.left)):
        return True
    reaching = kernel.facts(Reaching)
    for node in iter_nodes(kernel.node.body):
        if not (isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Multiply)):
            continue
        factors = list(product_factors(node))
        for factor in factors:
            bound = factor is quotient or (
                isinstance(factor, cst.Name)
                and any(d.value is quotient for d in reaching.reaching(factor))
            )
            if bound and any(_same_value(kernel, f, cap) for f in factors if f is not factor):
                return True
    return False


def _same_value(kernel: Kernel, a: cst.BaseExpression, b: cst.BaseExpression) -> bool:
    """The same name reached by the same definitions (a parameter, a global), or the same
    attribute or literal."""
    if isinstance(a, cst.Name) and isinstance(b, cst.Name):
        reaching = kernel.facts(Reaching)
        return a.value == b.value and {id(d.node) for d in reaching.reaching(a)} == {
            id(d.node) for d in reaching.reaching(b)
        }
    if isinstance(a, cst.Attribute | cst.Integer | cst.Float) and type(a) is type(b):
        code = kernel.module.module.code_for_node
        return code(a) == code(b)
    return False


def _selected_quotients(kernel: Kernel) -> dict[int, list[set[int]]]:
    """Quotients that are an arm of a ``tl.where``, with the nodes its condition reads."""
    selected: dict[int, list[set[int]]] = {}
    for site in kernel.calls_to("where"):
        args = [a.value for a in site.node.args if a.keyword is None]
        if len(args) != 3:
            continue
        test = {id(n) for n in kernel.facts(Dependencies).closure(args[0])}
        for arm in args[1:]:
            for term in kernel.facts(Dependencies).additive_terms(arm):
                selected.setdefault(id(term), []).append(test)
    return selected


def _terms_and_factors(kernel: Kernel, expr: cst.BaseExpression) -> Iterator[cst.CSTNode]:
    """Additive terms of ``expr`` and of its products' factors: ``x * (p - q)`` has ``p``."""
    pending = [expr]
    seen: set[int] = set()
    while pending:
        for term in kernel.facts(Dependencies).additive_terms(pending.pop()):
            if id(term) in seen:
                continue
            seen.add(id(term))
            yield term
            if isinstance(term, cst.BinaryOperation) and isinstance(term.operator, cst.Multiply):
                pending.extend((term.left, term.right))


def _reaching_sums_unselected(kernel: Kernel, launched_only: bool = False) -> set[int]:
    """Exp calls whose values reach a ``tl.sum`` or ``tl.dot`` operand through products and
    casts without passing through a ``tl.where`` (which discards the lanes it masks off,
    ``inf`` included) or a clamp. With ``launched_only``, an ``if FLAG:`` arm that every
    launch's constexpr value selects always runs (`FixedConstexprs`): its ``where`` guards
    every path of the specialisations the project compiles."""

    def selects(node: cst.CSTNode) -> bool:
        return isinstance(node, cst.Call) and tl_short(kernel, node) in (
            "where",
            "minimum",
            "clamp",
        )

    found: set[int] = set()
    live = kernel.facts(FixedConstexprs).reaching if launched_only else None
    for reduction in reductions(kernel):
        if reduction.kind not in ("sum", "dot"):
            continue
        for operand in reduction.operands:
            for node in kernel.facts(Dependencies).closure(
                operand, values_only=True, stop_below=selects, definitions=live
            ):
                if isinstance(node, cst.Call) and _exp_name(kernel, node):
                    found.add(id(node))
    return found


def _outer_difference(kernel: Kernel, arg: cst.BaseExpression) -> bool:
    """``arg`` is ``a[:, None] - b[None, :]`` of loaded values, not clamped: every pair of
    positions, so the difference is positive on one side of the diagonal whatever the
    values' order (cumulative log-decays ``dA_cs_m - dA_cs_k``)."""
    outer = False
    for node in kernel.facts(Dependencies).closure(arg, values_only=True):
        if isinstance(node, cst.Call) and tl_short(kernel, node) in _BOUNDING:
            return False
        if (
            isinstance(node, cst.BinaryOperation)
            and isinstance(node.operator, cst.Subtract)
            and {expanded_axis(node.left), expanded_axis(node.right)} == {0, 1}
            and Prov.LOADED in kernel.facts(Provenance).of(node.left)
            and Prov.LOADED in kernel.facts(Provenance).of(node.right)
        ):
            outer = True
    return outer


def _softplus_terms(kernel: Kernel) -> set[int]:
    """Exp calls that are a term of a ``log``/``log1p`` argument (``log(1 + exp(x))``) whose
    value no ``tl.where`` selects (``where(z > 20, x, log(1 + exp(z)))``, directly or through
    names), which takes the large inputs another way."""
    selected: set[int] = set()
    for where in kernel.calls_to("where"):
        for arm in [a.value for a in where.node.args if a.keyword is None][1:]:
            selected.update(
                id(node) for node in kernel.facts(Dependencies).closure(arm, values_only=True)
            )
    found: set[int] = set()
    for site in kernel.calls:
        if tl_short(kernel, site.node) not in ("log", "log1p") or not site.node.args:
            continue
        if id(site.node) in selected:
            continue
        for term in kernel.facts(Dependencies).additive_terms(site.node.args[0].value):
            if isinstance(term, cst.Call) and _exp_name(kernel, term):
                found.add(id(term))
    return found
