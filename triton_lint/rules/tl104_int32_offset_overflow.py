"""TL104: a program-id or loaded index times a runtime size, computed in int32, in an address."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from triton_lint.finding import Applicability, Category, Finding, Fix, RelatedLocation, Severity
from triton_lint.model.arithmetic import index_sources, is_quotient_by, is_remainder
from triton_lint.model.calls import cast_dtype, program_id_axis, tl_short
from triton_lint.model.dependencies import Dependencies
from triton_lint.model.host_args import Stride, launch_strides
from triton_lint.model.kernel import Definition, Kernel, Param
from triton_lint.model.names import dotted_name
from triton_lint.model.provenance import Prov, Provenance
from triton_lint.model.reaching import Reaching
from triton_lint.model.structure import Structure
from triton_lint.model.tree import iter_nodes
from triton_lint.model.usage import Usage
from triton_lint.rules._overflow_evidence import (
    bounded_program_ids,
    extent_fits,
    one_dimensional,
    warning_evidence,
)
from triton_lint.rules.base import Rule

_INDEX = Prov.PROGRAM_ID | Prov.LOADED
#: The last word of a tensor name that says it is a lookup table (a block table, an index or
#: position list, per-row scales): rows of a few entries, far below 2**31 elements in all.
_TABLE_WORDS = frozenset(
    {"table", "tables", "indices", "index", "idx", "ids", "indptr", "loc", "locs"}
    | {"locations", "slot", "slots", "mapping", "mappings", "positions", "pos", "lens"}
    | {"seqlens", "lengths", "offsets", "counts", "scale", "scales", "lse"}
)
#: Words a tensor name may end with that say nothing about its contents.
_FILLER_WORDS = frozenset({"tensor", "buffer", "buf", "ptr", "gpu", "cpu", "1d", "2d", "3d"})


class Int32OffsetOverflow(Rule):
    code = "TL104"
    name = "int32-offset-overflow"
    category = Category.MEMORY_SAFETY
    severity = Severity.WARNING
    summary = "Pointer offset multiplies a program-id or loaded index by a runtime size in int32"
    rationale = """\
`tl.program_id` returns int32, and so does a load from an int32 index tensor; Triton passes
strides and sizes that fit in 32 bits as int32 too. Their product is computed in int32 and
wraps once it passes 2**31: `row * stride` for a 16k x 128k activation, `token * hidden` for
a long-context KV cache, `block_id * block_stride` in a paged cache. The wrapped offset reads
or writes the wrong memory (or faults) only for the largest inputs, which is why this is the
most frequently fixed kernel bug in public Triton projects. One finding is reported per index
source (its other products are counted in the message), at the product that spans the most:
one a launch in the file shows covers a whole tensor (the size is `x.stride(0)`), else the
one multiplying the most sizes. A constexpr that is a tensor dimension counts as a size
(`row * vocab_size`, `(bos * H + i_h) * K`); products with a tile size, a constexpr the kernel
needs at compile time (`pid * BLOCK` with `tl.arange(0, BLOCK)`), and products where either
factor is widened (also by a jit helper in the file whose every return is widened) are not
reported, nor products whose size every launch in the file fills with an inner stride
(`q.stride(1)`, the second element of `q.stride()`, of `*(s.stride(0), s.stride(1))` or of a
`**dict(...)`): a head or column index times it stays inside one slice of the tensor's
outermost dimension, which would itself need 2**31 elements. Nor is a row index times
`t.stride(0)` where a host test bounds `t.numel()` by 2**31 (an `assert`, an `if`, or a
predicate helper the callers call, also imported). Coordinates are left alone too:
a product inside a factor widened before a runtime size scales it (`n0 = block * n_block`
then `n0.to(tl.int64) * stride`), reflected positions (`period - y % period`), and indices
defined in one arm of an `if` on a compile-time flag whose other arm defines them widened
(`if UPCAST: rm = (...).to(tl.int64) else: rm = ...`: the host picks the int32 arm only when
the sizes fit).

Findings are ranked by evidence. A product that spans a whole tensor (it multiplies two or
more sizes, `pid * N * K`, or it is a program id on grid axis 0 times a row stride a launch in
the file passes for a tensor whose name does not say it is a lookup table) is a **warning**
only where the file shows that workloads the kernel is written for pass 2**31 elements, and
the message names that evidence: the kernel backs a generic op (the file overrides aten
operators, or the kernel is a general GEMM with `M`, `N`, `K` and `tl.dot`), so its tensors
can be any size; a row index times the row stride of logits (a vocabulary row per token) or
of a tensor whose row is a full `hidden_size`/`vocab_size`/`intermediate_size`/`n_cols` row;
or another kernel of the file already widens a product with the same size. Rows of routers,
samplers and speculative decoding (`router_logits`, `draft_*`, files named for them) are a
decode batch, not a sequence, and give no evidence. Every other product is **info**: a whole
tensor without evidence (router logits of a few hundred experts per token overflow only at
millions of tokens), a program id on axis 1 or 2 (a head or batch index, at most 65535
strides), a loaded index (block and slot ids, often loaded from int64 tables), or a size no
launch in the file explains. Info products hold nearly half of the shipped and later fixed
int32 overflows the project's recall benchmark catches (paged-cache block ids, FLA's varlen
offsets on grid axes 1/2). A program id on an axis every launch sizes with a literal or a
core count (`grid = (num_cores,)`) and no grid-stride loop is not reported, nor the
`out.stride(0)` of a tensor the launching function allocates with one dimension (it is 1).
The other products of the same index are related locations of the finding, so a reviewer can
visit each one the widening fixes. Info findings are reported, so `--select`, noqa comments
and `--baseline` work on them as usual, and `--fail-on warning` keeps them out of the exit code."""
    fix = """\
Widen the one index at its source, not every stride: `pid = tl.program_id(0).to(tl.int64)`,
or `idx = tl.load(idx_ptr + i).to(tl.int64)`. (Widening all strides costs registers and
throughput; a serving engine that did so measured a large slowdown.) A constexpr-gated
`if INT64_INDEX: pid = pid.to(tl.int64)` also counts. The fix is marked unsafe: it changes
the index type of the code that follows."""
    bad = """\
import torch
import triton
import triton.language as tl


@triton.jit
def rownorm(x_ptr, y_ptr, stride, hidden_size, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < hidden_size, other=0.0)  # <- TL104
    tl.store(y_ptr + row * stride + cols, x / tl.sum(x, axis=0), mask=cols < hidden_size)


def launch(x: torch.Tensor, y: torch.Tensor) -> None:
    rownorm[(x.shape[0],)](x, y, x.stride(0), x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
"""
    good = """\
import torch
import triton
import triton.language as tl


@triton.jit
def rownorm(x_ptr, y_ptr, stride, hidden_size, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < hidden_size, other=0.0)
    tl.store(y_ptr + row * stride + cols, x / tl.sum(x, axis=0), mask=cols < hidden_size)


def launch(x: torch.Tensor, y: torch.Tensor) -> None:
    rownorm[(x.shape[0],)](x, y, x.stride(0), x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
"""

    def check_kernel(self, kernel: Kernel) -> Iterator[Finding]:
        seen: set[int] = set()
        # One finding per index source: widening it there fixes every product it feeds.
        groups: dict[tuple[int, ...], list[_Product]] = {}
        sources_of: dict[tuple[int, ...], list[cst.Call]] = {}
        walked: set[int] = set()  # reached from an earlier address: all below it was walked then
        stop = lambda node: id(node) in walked or _widened_coordinate(kernel, node)  # noqa: E731
        for address in self._addresses(kernel):
            walked |= seen
            for node in kernel.facts(Dependencies).closure(
                address, through_calls=False, stop_below=stop
            ):
                if id(node) in seen:
                    continue
                seen.add(id(node))
                if type(node) is not cst.BinaryOperation or type(node.operator) is not cst.Multiply:
                    continue
                hit = self._check_product(kernel, node)
                if hit is None:
                    continue
                size, sources, strides = hit
                key = tuple(id(source) for source in sources)
                span = _size_factors(kernel, node)
                groups.setdefault(key, []).append(_Product(node, size, strides, span))
                sources_of[key] = sources
        for key, products in groups.items():
            sources = sources_of[key]
            rows = _row_index(kernel, sources)
            # The whole-tensor product convinces: a data tensor's row stride, an outermost
            # stride, else the most sizes (`split * M * N`); then the first in source order.
            order = kernel.facts(Structure).position
            products.sort(
                key=lambda p: (
                    not p.spans_tensor(rows),
                    not p.outermost,
                    -p.size_factors,
                    order(p.node),
                )
            )
            inside = {id(n) for n in iter_nodes(products[0].node)}
            others = [p for p in products[1:] if id(p.node) not in inside]  # not `i * K` of it
            yield self._report(kernel, products[0], sources, others, rows)

    def _addresses(self, kernel: Kernel) -> Iterator[cst.BaseExpression]:
        for access in kernel.accesses:
            if access.pointer is not None:
                yield access.pointer
        for site in kernel.calls_to("make_block_ptr", "make_tensor_descriptor"):
            args = site.node.args
            base = next((a.value for a in args if a.keyword and a.keyword.value == "base"), None)
            if base is None and args and args[0].keyword is None:
                base = args[0].value
            if base is not None:
                yield base

    def _check_product(
        self, kernel: Kernel, node: cst.BinaryOperation
    ) -> tuple[cst.BaseExpression, list[cst.Call], list[Stride]] | None:
        prov = kernel.facts(Provenance)
        left, right = prov.of(node.left), prov.of(node.right)
        if Prov.WIDENED in left or Prov.WIDENED in right:
            return None
        for index, size, index_flags, size_flags in (
            (node.left, node.right, left, right),
            (node.right, node.left, right, left),
        ):
            if not index_flags & _INDEX:
                continue
            if Prov.RUNTIME not in size_flags and not _dimension_constexpr(kernel, size):
                continue  # `pid * BLOCK`: a tile size, or a literal
            if size_flags & (Prov.PROGRAM_ID | Prov.LOADED | Prov.ARANGE):
                continue  # not a size: both factors are indices
            if Prov.BLOCK_PTR in index_flags or Prov.DESCRIPTOR in index_flags:
                continue
            if is_remainder(kernel, index):
                continue  # `offs % D` is below D: a coordinate inside one dimension
            if is_quotient_by(kernel, index, size):
                continue  # `(x // n) * n` never exceeds x (a divmod reconstruction)
            if _launch_constant(kernel, size):
                continue  # every launch passes a constant (a unit stride): like a constexpr
            if _is_float(kernel, index) or _is_float(kernel, size):
                continue  # `(oh + 0.5) * scale`: float arithmetic, not an int32 offset
            if _wide_variant_elsewhere(kernel, index):
                continue  # `if UPCAST: rm = ....to(tl.int64) else: rm = ...`: chosen by size
            strides = _size_strides(kernel, size)
            if strides and all(stride.inner or one_dimensional(stride) for stride in strides):
                continue  # an inner stride: the product stays inside one outermost slice
            sources = index_sources(kernel, index)
            # a host bound on the grid (`if n <= 1536:`) counts for one size only (32 x `N * M`)
            host_bounds = _size_factors(kernel, node) < 2
            if strides and host_bounds and all(map(extent_fits, strides)):
                continue  # the host checks `t.numel() < 2**31`: a row of `t` stays inside it
            if not sources or bounded_program_ids(kernel, index, sources, host_bounds):
                continue  # `grid = (num_cores,)` without a grid-stride loop: a few programs
            return size, sources, strides
        return None

    def _report(
        self,
        kernel: Kernel,
        product: _Product,
        sources: list[cst.Call],
        others: list[_Product],
        rows: bool,
    ) -> Finding:
        node, size = product.node, product.size
        code = kernel.module.module.code_for_node
        edits = []
        described = []
        for source in sources:
            widened = f"{code(source)}.to({_int64(source)})"
            edits.append(self.replace_node(kernel, source, widened))
            kind = "program id" if tl_short(kernel, source) == "program_id" else "loaded index"
            described.append(f"{kind} on line {kernel.span(source).line}")
        first = sources[0]
        example = f"{code(first)}.to({_int64(first)})"
        kind = (
            "runtime"
            if Prov.RUNTIME in kernel.facts(Provenance).of(size)
            else "constexpr dimension"
        )
        size_text = f"{kind} `{code(size).strip()}`"
        if product.outermost:
            stride = product.strides[0]
            line = kernel.module.span(stride.site.top, stride.node).line
            size_text += f" (`{stride.tensor}.stride(0)` at the launch on line {line})"
        message = (
            f"`{code(node)}` multiplies an int32 index ({', '.join(described)}) by the "
            f"{size_text} in int32 and overflows past 2**31 elements"
        )
        if others:
            message += (
                f" ({len(others)} more product{'s' if len(others) > 1 else ''} of this index: "
                "related locations)"
            )
        severity = Severity.WARNING
        evidence = (
            warning_evidence(kernel, size, product.strides, rows)
            if product.spans_tensor(rows)
            else None
        )
        if evidence is not None:
            message += f" (evidence: {evidence})"
        else:
            severity = Severity.INFO
            message += f" (info: {_lower_risk(kernel, product, sources, rows)})"
        message += f"; widen the index at its source: `{example}`"
        fix = Fix(Applicability.UNSAFE, "Widen the index to int64 at its source", tuple(edits))
        finding = self.finding(kernel, node, message, fix=fix, severity=severity)
        finding.related = tuple(
            RelatedLocation(
                finding.path,
                kernel.span(other.node),
                f"`{code(other.node)}`: another product of this index",
            )
            for other in others
        )
        return finding


@dataclass
class _Product:
    """An int32 index times a runtime size, with the strides the launches pass for the size."""

    node: cst.BinaryOperation
    size: cst.BaseExpression
    strides: list[Stride]
    size_factors: int  # runtime sizes and dimension constexprs the whole product multiplies

    @property
    def outermost(self) -> bool:
        """Every launch passes an outermost stride: the product spans the whole tensor."""
        return bool(self.strides) and all(stride.axis == 0 for stride in self.strides)

    def spans_tensor(self, row_index: bool) -> bool:
        """The high-risk tier: two or more sizes multiplied, or a row index (``row_index``:
        program ids on grid axis 0) times the row stride of a tensor that is not a table."""
        if self.size_factors >= 2:
            return True
        return (
            row_index
            and bool(self.strides)
            and all(stride.axis in (0, -2) for stride in self.strides)
            and not all(_is_table(stride.tensor) for stride in self.strides)
        )


def _row_index(kernel: Kernel, sources: list[cst.Call]) -> bool:
    """Every index source is a program id on grid axis 0, the axis of rows and tokens."""
    return all(
        tl_short(kernel, source) == "program_id" and program_id_axis(source) == 0
        for source in sources
    )


def _lower_risk(kernel: Kernel, product: _Product, sources: list[cst.Call], row_index: bool) -> str:
    """Why an info-tier product is ranked below a warning, for its message."""
    if product.spans_tensor(row_index):
        return (
            "it spans a whole tensor, but nothing in this file shows workloads that reach "
            "2**31 elements: no aten operator, general GEMM, full hidden or vocabulary row "
            "per token, or widened twin"
        )
    if any(tl_short(kernel, source) != "program_id" for source in sources):
        return "a loaded index: block ids of a large cache overflow, rows of a small table never do"
    axes = sorted({str(program_id_axis(source)) for source in sources} - {"0"})
    if axes:
        return f"a grid axis {'/'.join(axes)} index, a head or batch of at most 65535"
    tables = [stride.tensor for stride in product.strides if _is_table(stride.tensor)]
    if tables:
        return f"`{tables[0]}` looks like a lookup table"
    return "no launch in this file shows that the size is a row stride"


def _is_table(tensor: str) -> bool:
    """The tensor's name ends with a word of a lookup table (`block_table`, `topk_indices`,
    `seq_lens`, `x_scale`; `block_table_tensor` too)."""
    words = [re.sub(r"\d+$", "", word) for word in re.split(r"[_.]", tensor.lower())]
    words = [word for word in words if word and word not in _FILLER_WORDS]
    return bool(words) and words[-1] in _TABLE_WORDS


def _widened_coordinate(kernel: Kernel, node: cst.CSTNode) -> bool:
    """``node`` is a factor widened to 64 bits before a runtime size scales it
    (`n0.to(tl.int64) * stride`, `(i_t * H + i_h).to(tl.int64) * K * V`): the products inside
    are coordinates along one dimension, and the address arithmetic from there on is 64-bit."""
    product = kernel.facts(Structure).parent(node)
    if not (
        isinstance(product, cst.BinaryOperation) and isinstance(product.operator, cst.Multiply)
    ):
        return False
    if node is product.left:
        factor, other = product.left, product.right
    elif node is product.right:
        factor, other = product.right, product.left
    else:
        return False  # the operator token, not a factor
    return Prov.WIDENED in kernel.facts(Provenance).of(factor) and not kernel.facts(
        Provenance
    ).is_compile_time(other)


def _wide_variant_elsewhere(kernel: Kernel, index: cst.BaseExpression) -> bool:
    """A name in ``index`` is defined only in one arm of an ``if`` on a compile-time flag
    whose other arm defines it widened (`if UPGRADE_C_OFFS: rm = (...).to(tl.int64)` /
    `else: rm = ...`): the host picks the int32 arm only when the sizes fit (FlagGems sets
    such flags from `(M * N).bit_length()` in `@triton.heuristics`)."""
    for name in iter_nodes(index):
        if not isinstance(name, cst.Name):
            continue
        definitions = kernel.facts(Reaching).reaching(name)
        if not definitions or not definitions[0].branches:
            continue
        branch = definitions[0].branches[-1]  # the innermost `if` around the first one
        if not isinstance(branch.node, cst.If) or not kernel.facts(Provenance).is_compile_time(
            branch.test
        ):
            continue
        other = "orelse" if branch.arm == "body" else "body"
        if all(_in_arm(d, branch.node, branch.arm) for d in definitions) and any(
            _in_arm(d, branch.node, other)
            and d.value is not None
            and Prov.WIDENED in kernel.facts(Provenance).of(d.value)
            for d in kernel.definitions.get(name.value, [])
        ):
            return True
    return False


def _in_arm(definition: Definition, node: cst.If, arm: str) -> bool:
    return any(b.node is node and b.arm == arm for b in definition.branches)


def _size_factors(kernel: Kernel, product: cst.BinaryOperation) -> int:
    """How many sizes (runtime values, or constexprs not needed at compile time) the product
    chain multiplies, through parentheses and names defined once as a product: a rough
    measure of how much of a tensor it spans (`pid * C * D` over `pid * stride`)."""
    count = 0
    pending: list[cst.BaseExpression] = [product]
    while pending:
        node = pending.pop()
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Multiply):
            pending.extend((node.left, node.right))
            continue
        if isinstance(node, cst.Name):
            definitions = kernel.definitions.get(node.value, [])
            value = definitions[0].value if len(definitions) == 1 else None
            if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Multiply):
                pending.append(value)
                continue
        flags = kernel.facts(Provenance).of(node)
        if flags & (Prov.PROGRAM_ID | Prov.LOADED | Prov.ARANGE):
            continue  # the index side
        if _size_params(kernel, node):
            count += 1
    return count


def _size_strides(kernel: Kernel, size: cst.BaseExpression) -> list[Stride]:
    """The tensor strides the launches in this file pass for ``size``, when it is one
    parameter (possibly times tile sizes) that every passing launch fills with a stride;
    empty otherwise."""
    sizes = _size_params(kernel, size)
    if len(sizes) != 1:
        return []
    return launch_strides(kernel, sizes[0].name) or []


def _dimension_constexpr(kernel: Kernel, size: cst.BaseExpression) -> bool:
    """``size`` is built from constexpr parameters that are tensor dimensions, not tile sizes:
    none of them is needed at compile time (a `tl.arange` bound, a shape, a `static_range`
    bound, an `if` test), so they only size rows (`row * vocab_size`, `(bos * H + i_h) * K`)."""
    params = kernel.params_in(size)
    return (
        bool(params)
        and all(p.is_constexpr for p in params)
        and _size_params(kernel, size) == params
    )


def _size_params(kernel: Kernel, expr: cst.BaseExpression) -> list[Param]:
    """The parameters ``expr`` reads that can be sizes: runtime ones, and constexprs the kernel
    does not need at compile time (a tile size sets a `tl.arange` bound or a shape)."""
    needed = kernel.facts(Usage).compile_time_params()
    return [p for p in kernel.params_in(expr) if not (p.is_constexpr and p.name in needed)]


def _launch_constant(kernel: Kernel, size: cst.BaseExpression) -> bool:
    """``size`` is a parameter every launch in this file passes as an integer constant."""
    if not isinstance(size, cst.Name) or size.value not in kernel.params_by_name:
        return False
    launches = [s for s in kernel.value_sources(size.value) if s.origin == "launch"]
    return bool(launches) and all(
        isinstance(s.value, int) and not isinstance(s.value, bool) for s in launches
    )


def _is_float(kernel: Kernel, expr: cst.BaseExpression) -> bool:
    """``expr`` is computed in floating point: a float literal or a cast to a float dtype
    reaches it (not through a cast back to an integer type)."""
    found = False

    def descend(node: cst.CSTNode) -> bool:
        nonlocal found
        if isinstance(node, cst.Float):
            found = True
        dtype = cast_dtype(kernel, node)
        if dtype is not None:
            found = found or dtype.rsplit(".", 1)[-1].startswith(("float", "bfloat"))
            return False
        return not found

    kernel.facts(Dependencies).trace(expr, descend, loop_starts=False)
    return found


def _int64(call: cst.Call) -> str:
    """`tl.int64` spelled with the same module alias as the call (`tl.`, `triton.language.`)."""
    name = dotted_name(call.func) or "tl.load"
    head = name.rsplit(".", 1)[0] if "." in name else "tl"
    if head.endswith(".math"):
        head = head[: -len(".math")]
    return f"{head}.int64"
