"""TL302: accumulating in fp16/bf16."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from triton_lint.finding import Category, Finding, Severity
from triton_lint.model.calls import cast_parts, is_low_precision, tl_short
from triton_lint.model.kernel import Definition, Kernel
from triton_lint.model.pointers import pointer_bases
from triton_lint.model.reaching import Reaching
from triton_lint.model.reductions import reductions
from triton_lint.model.structure import Structure
from triton_lint.model.tree import iter_nodes, keyword_arg
from triton_lint.rules.base import Rule


class LowPrecisionAccumulation(Rule):
    code = "TL302"
    name = "low-precision-accumulation"
    category = Category.NUMERICS
    severity = Severity.WARNING
    summary = "Accumulator, `tl.dot` result or reduction in fp16/bf16"
    rationale = """\
fp16 has 11 bits of mantissa and bf16 has 8: a running sum in either stops growing once the
total is large compared with each addend (a bf16 sum of 4096 ones is 256), so a loss, a norm or
a K-loop of a matmul loses most of its digits. Tensor cores accumulate in fp32 for this reason.
Reported: `tl.zeros(..., dtype=tl.float16)` accumulators updated in a loop, a running sum
(`acc += ...` across loop iterations) typed `x_ptr.dtype.element_ty` of a tensor the kernel
only reads (half precision whenever that input is; a max, a count typed like an integer output
and a `tl.static_range` selection are left alone), `tl.dot(..., out_dtype=tl.float16)`, and
`tl.sum`/`tl.cumsum` of values explicitly cast to fp16/bf16 or to the input's own element type
(`x_ptr.dtype.element_ty`, or a dtype constexpr the launch fills from `x.dtype`), alone or as a
factor of a product with no fp32 factor. fp32 accumulators cast to the output type only at the
store are fine, and so is a half tile declared before a loop that every iteration assigns
afresh before reading it (it carries nothing). Information only: a `tl.dot` whose half sum
stops at one product (no accumulator, its result not added to one nor passed to another dot
as its accumulator), and any of these in a kernel that rounds through that half type on purpose
(`(ms + eps).to(tl.bfloat16).to(tl.float32)`: it reproduces a half-precision reference, which
an fp32 sum would no longer match)."""
    fix = """\
Accumulate in fp32 (`acc = tl.zeros((BM, BN), dtype=tl.float32)`, `tl.dot(a, b, acc)`,
`tl.sum(x.to(tl.float32))`) and cast once when storing: `tl.store(p, acc.to(tl.float16))`."""
    bad = """\
import triton
import triton.language as tl


@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, K, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float16)  # <- TL302
    for k in range(0, K, BLOCK):
        a = tl.load(a_ptr + offs[:, None] * K + k + offs[None, :])
        b = tl.load(b_ptr + (k + offs[:, None]) * BLOCK + offs[None, :])
        acc += tl.dot(a, b, out_dtype=tl.float16)  # <- TL302
    tl.store(c_ptr + offs[:, None] * BLOCK + offs[None, :], acc)
"""
    good = """\
import triton
import triton.language as tl


@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, K, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for k in range(0, K, BLOCK):
        a = tl.load(a_ptr + offs[:, None] * K + k + offs[None, :])
        b = tl.load(b_ptr + (k + offs[:, None]) * BLOCK + offs[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + offs[:, None] * BLOCK + offs[None, :], acc.to(tl.float16))
"""

    def check_kernel(self, kernel: Kernel) -> Iterator[Finding]:
        for finding, half in self._findings(kernel):
            emulated = _emulated(kernel, half)
            if emulated is not None:
                finding.severity = Severity.INFO
                finding.message += (
                    f" (info: the kernel rounds through that type on purpose, `{emulated}`, "
                    "so it reproduces a half-precision reference)"
                )
            yield finding

    def _findings(self, kernel: Kernel) -> Iterator[tuple[Finding, _Half]]:
        """Each finding with the half type its sum runs in."""
        for site in kernel.calls:
            short = tl_short(kernel, site.node)
            if short in ("zeros", "full") and site.tl_name is not None:
                yield from self._accumulator(kernel, site.node, short)
            elif short == "dot" and site.tl_name is not None:
                dtype = is_low_precision(kernel, keyword_arg(site.node, "out_dtype"))
                if dtype is not None:
                    running = _accumulating_dot(kernel, site.node)
                    finding = self.finding(
                        kernel,
                        site.node,
                        f"`tl.dot` accumulates in {dtype} (`out_dtype=tl.{dtype}`): the sum over "
                        "K loses precision; accumulate in fp32 and cast the result at the store"
                        + ("" if running else _ONE_TILE),
                        severity=None if running else Severity.INFO,
                    )
                    yield finding, _Half(dtype, dtype)
        for reduction in reductions(kernel):
            if reduction.op not in ("sum", "cumsum", "xor_sum"):
                continue
            half = self._cast_to_low(kernel, reduction.operands[0])
            if half is not None:
                finding = self.finding(
                    kernel,
                    reduction.call,
                    f"`tl.{reduction.op}` over values cast to {half.text}: the sum is computed "
                    "in that type and loses precision; reduce in fp32 and cast the result",
                )
                yield finding, half

    def _accumulator(
        self, kernel: Kernel, call: cst.Call, short: str
    ) -> Iterator[tuple[Finding, _Half]]:
        positional = [a.value for a in call.args if a.keyword is None]
        dtype_expr = keyword_arg(call, "dtype")
        if dtype_expr is None:
            index = 1 if short == "zeros" else 2
            dtype_expr = positional[index] if len(positional) > index else None
        parent = kernel.facts(Structure).parent(call)
        literal = is_low_precision(kernel, dtype_expr)
        half = None if literal is None else _Half(literal, literal)
        if half is None and dtype_expr is not None and not kernel.facts(Structure).in_loop(parent):
            # The input's own element type: half precision whenever the input is. Only a
            # running sum across iterations is reported; a max or min in that type is exact.
            value = _dtype_value(kernel, dtype_expr)
            if _input_element_type(kernel, value):
                half = _half_kind(kernel, value)
            additive_only = True
        else:
            additive_only = False
        if half is None:
            return
        target = None
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
            target = parent.targets[0].target
        if not isinstance(target, cst.Name):
            return
        for definition in kernel.definitions.get(target.value, []):
            if definition.node is parent or not kernel.facts(Structure).in_loop(definition.node):
                continue
            if (
                _updates(definition, target.value, additive_only)
                and not (additive_only and _unrolled(kernel, definition.node))
                and _carries(kernel, definition, parent)
            ):
                finding = self.finding(
                    kernel,
                    call,
                    f"accumulator `{target.value}` is {half.text} and is updated in a loop: each "
                    "addition rounds to that type; accumulate in `tl.float32` and cast at the "
                    "store",
                )
                yield finding, half
                return

    @staticmethod
    def _cast_to_low(kernel: Kernel, expr: cst.BaseExpression) -> _Half | None:
        """The half-precision type ``expr`` is computed in when every definition of it is a
        cast to one, or a product with such a cast and no fp32 factor; None otherwise."""
        values: list[cst.BaseExpression] = [expr]
        if isinstance(expr, cst.Name):
            values = [value for _, value in kernel.facts(Reaching).definition_values(expr)]
        found = None
        for value in values:
            found = _low_precision_of(kernel, value)
            if found is None:
                return None
        return found


@dataclass(frozen=True)
class _Half:
    """The half-precision type a reported sum runs in: ``text`` names it in the message,
    ``literal`` is ``float16``/``bfloat16`` for a literal dtype and None for the input's own
    element type (which a round trip through a literal half type does not pin down)."""

    text: str
    literal: str | None


def _low_precision_of(kernel: Kernel, value: cst.BaseExpression) -> _Half | None:
    """``float16``/``bfloat16`` for a cast to that type; ``the input element type (`D`)`` for
    a cast to a tensor's own element type (half precision whenever the input is), and a
    product takes the type of its cast factor unless another factor is cast wider."""
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Multiply):
        factors = [cast_parts(kernel, value.left), cast_parts(kernel, value.right)]
        casts = [parts[1] for parts in factors if parts is not None]
        if any(_is_wide_float(kernel, target) for target in casts):
            return None
        kinds = [_half_kind(kernel, target) for target in casts]
        return next((kind for kind in kinds if kind is not None), None)
    parts = cast_parts(kernel, value)
    return None if parts is None else _half_kind(kernel, parts[1])


def _half_kind(kernel: Kernel, dtype: cst.BaseExpression) -> _Half | None:
    literal = is_low_precision(kernel, dtype)
    if literal is not None:
        return _Half(literal, literal)
    if _is_element_type(kernel, dtype):
        code = kernel.module.module.code_for_node(dtype)
        return _Half(
            f"the input's element type (`{code}`, half precision for fp16/bf16 inputs)", None
        )
    return None


def _is_element_type(kernel: Kernel, dtype: cst.BaseExpression) -> bool:
    """``x_ptr.dtype.element_ty``, or a constexpr parameter every launch here fills from a
    host tensor's ``.dtype`` (``torch_to_triton_dtype[X.dtype]``)."""
    if isinstance(dtype, cst.Attribute):
        return dtype.attr.value == "element_ty" and isinstance(dtype.value, cst.Attribute)
    if not isinstance(dtype, cst.Name):
        return False
    param = kernel.params_by_name.get(dtype.value)
    if param is None or not param.is_constexpr:
        return False
    launches = [s for s in kernel.value_sources(param.name) if s.origin == "launch"]
    return bool(launches) and all(
        any(isinstance(n, cst.Attribute) and n.attr.value == "dtype" for n in iter_nodes(s.node))
        for s in launches
    )


def _updates(definition: Definition, name: str, additive_only: bool) -> bool:
    """Whether ``definition`` updates ``name`` from its own value: ``acc += x`` or
    ``acc = acc + x`` (any use of ``acc`` unless ``additive_only``)."""
    if definition.kind == "augassign":
        node = definition.node
        return not additive_only or (
            isinstance(node, cst.AugAssign)
            and isinstance(node.operator, (cst.AddAssign, cst.SubtractAssign))
        )
    value = definition.value
    if value is None:
        return False
    if additive_only:
        return (
            isinstance(value, cst.BinaryOperation)
            and isinstance(value.operator, (cst.Add, cst.Subtract))
            and any(
                isinstance(side, cst.Name) and side.value == name
                for side in (value.left, value.right)
            )
        )
    return any(isinstance(n, cst.Name) and n.value == name for n in iter_nodes(value))


_ONE_TILE = " (info: a single product over one tile, not carried into a running sum across a loop)"


def _accumulating_dot(kernel: Kernel, dot: cst.Call) -> bool:
    """The dot's half-precision sum runs on past one tile: it takes an accumulator
    (``tl.dot(a, b, acc)``), its result is added to one (``acc += tl.dot(...)``, ``acc = acc +
    tl.dot(...)``), or another dot takes its result as the accumulator."""
    if _dot_accumulator(dot) is not None:
        return True
    statement = next(
        (
            node
            for node in kernel.facts(Structure).ancestors(dot)
            if isinstance(node, (cst.Assign, cst.AugAssign))
        ),
        None,
    )
    if isinstance(statement, cst.AugAssign):
        return True
    if not isinstance(statement, cst.Assign) or len(statement.targets) != 1:
        return False
    target = statement.targets[0].target
    if not isinstance(target, cst.Name):
        return False
    if any(
        isinstance(node, cst.Name) and node.value == target.value
        for node in iter_nodes(statement.value)
    ):
        return True
    for site in kernel.calls:
        if site.node is dot or tl_short(kernel, site.node) != "dot":
            continue
        accumulator = _dot_accumulator(site.node)
        if isinstance(accumulator, cst.Name) and accumulator.value == target.value:
            return True
    return False


def _dot_accumulator(dot: cst.Call) -> cst.BaseExpression | None:
    """The accumulator of ``tl.dot(a, b, acc)`` or ``tl.dot(a, b, acc=acc)``."""
    positional = [a.value for a in dot.args if a.keyword is None]
    return positional[2] if len(positional) > 2 else keyword_arg(dot, "acc")


def _emulated(kernel: Kernel, half: _Half) -> str | None:
    """A round trip through the finding's literal half type (``x.to(tl.bfloat16).to(tl.float32)``)
    in the kernel: it rounds to that type on purpose, to match a half-precision reference,
    and accumulating wider would break the match. Returns the round trip's text."""
    if half.literal is None:
        return None
    for site in kernel.calls:
        outer = cast_parts(kernel, site.node)
        if outer is None or not _is_wide_float(kernel, outer[1]):
            continue
        inner = cast_parts(kernel, outer[0])
        dtype = None if inner is None else is_low_precision(kernel, inner[1])
        if dtype is not None and dtype == half.literal:
            return kernel.code(site.node)
    return None


def _carries(kernel: Kernel, update: Definition, init: cst.CSTNode) -> bool:
    """The value ``update`` reads back is the running one: the initial ``tl.zeros`` or a
    value carried round the loop, not one the same iteration assigned afresh (``qk =
    tl.dot(q, k)`` then ``qk = tl.dot(q2, k2, qk)``: the zeros never reach the update)."""
    if update.kind == "augassign":
        return True
    reaching = kernel.facts(Reaching)
    structure = kernel.facts(Structure)
    assert update.value is not None
    for use in iter_nodes(update.value):
        if not isinstance(use, cst.Name) or use.value != update.name:
            continue
        for definition in reaching.reaching(use):
            if definition.node is init or structure.definition_position(
                definition
            ) >= structure.definition_position(update):
                return True  # the initial value, or one from the previous iteration
    return False


def _input_element_type(kernel: Kernel, dtype: cst.BaseExpression) -> bool:
    """``x_ptr.dtype.element_ty`` of a pointer the kernel loads from and never writes (an
    output's type may be an integer count), or a dtype constexpr (see `_is_element_type`)."""
    if not isinstance(dtype, cst.Attribute):
        return isinstance(dtype, cst.Name)
    base = dtype.value.value if isinstance(dtype.value, cst.Attribute) else None
    if not isinstance(base, cst.Name):
        return False
    kinds = {
        access.kind
        for access in kernel.accesses
        if access.pointer is not None
        and any(param.name == base.value for param in pointer_bases(kernel, access.pointer))
    }
    return kinds == {"load"}


def _unrolled(kernel: Kernel, node: cst.CSTNode) -> bool:
    """``node`` sits in a ``tl.static_range`` loop: a few unrolled terms, often a selection."""
    return any(
        isinstance(loop, cst.For)
        and isinstance(loop.iter, cst.Call)
        and tl_short(kernel, loop.iter) == "static_range"
        for loop in kernel.facts(Structure).ancestors(node)
    )


def _dtype_value(kernel: Kernel, dtype: cst.BaseExpression) -> cst.BaseExpression:
    """A local name's single value (``in_dtype = x_ptr.dtype.element_ty``), else ``dtype``."""
    if isinstance(dtype, cst.Name) and dtype.value not in kernel.params_by_name:
        values = [value for _, value in kernel.facts(Reaching).definition_values(dtype)]
        if len(values) == 1:
            return values[0]
    return dtype


def _is_wide_float(kernel: Kernel, dtype: cst.BaseExpression) -> bool:
    path = kernel.module.aliases.resolve(dtype) or ""
    return path.rsplit(".", 1)[-1] in ("float32", "float64", "fp32", "fp64")
