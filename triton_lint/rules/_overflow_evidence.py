"""TL104's evidence that an int32 product reaches 2**31 on workloads the kernel is written for,
and the launch facts that bound a program id or a stride so that it never can.

A product is a warning only with evidence stated in its message: the kernel backs a generic
op (an aten override, a general GEMM), so its tensors can be any size; it indexes full rows
of activations (logits rows, hidden rows) by a row count; or another kernel of the same file
already widens the same product. Without evidence the product overflows only at sizes the
host decides (router logits of a few hundred experts, a decode batch), and is information.
"""

from __future__ import annotations

import re

import libcst as cst

from triton_lint.model.calls import program_id_axis, tl_short
from triton_lint.model.evaluate import UNKNOWN, evaluate
from triton_lint.model.host_args import Stride
from triton_lint.model.host_tests import literal_range
from triton_lint.model.kernel import Kernel, LaunchSite
from triton_lint.model.names import dotted_name
from triton_lint.model.provenance import Prov, Provenance
from triton_lint.model.tree import iter_nodes

#: Host text that says a file registers aten operator overrides (a `Library("aten", ...)`,
#: an `impl("aten::...")`, or FlagGems' per-op dispatch log): the tensors are any the user
#: passes. Calling an aten op (`torch.ops.aten.mm`) is no such evidence.
_ATEN = re.compile(r"""Library\(\s*["']aten["']|impl\(\s*["']aten::|debug\(\s*["']GEMS[ _]""")
#: Tensors whose rows are a vocabulary (logits), unless they are routing scores.
_LOGITS = re.compile(r"logits?", re.IGNORECASE)
#: Words of a tensor or file name that say its rows are routing scores (a few hundred
#: experts per token), not a vocabulary or hidden row.
_ROUTING = re.compile(r"router|routing|gate|gating|expert|score", re.IGNORECASE)
#: Words of a tensor name that say its rows are per-request sampling or speculative-decoding
#: state (draft tokens, candidates, bitmasks): a decode batch of short rows, whatever width
#: parameter the kernel also takes.
_PER_REQUEST = re.compile(r"draft|candidate|bitmask|correct|bonus|accept|topk|argmax", re.I)
#: Kernel parameters that size a full activation row (hidden, vocab, intermediate).
_ROW_WIDTH = re.compile(
    r"^(hidden(_size|_dim)?|vocab(_size)?|n_?vocab|intermediate(_size)?|n_cols|d_model|"
    r"embed(_dim)?|hidden_states?_dim|(y_)?num_columns|ncols)$",
    re.IGNORECASE,
)
#: Grid sizes that are a core or multiprocessor count (a persistent launch).
_CORE_COUNT = re.compile(r"(num|n|total)_?(cores?|sms?|core_num)|sm_count|multi_processor_count")
#: Host calls that allocate a tensor of the shape they are given.
_ALLOCATORS = {"empty", "zeros", "ones", "full", "new_empty", "new_zeros", "new_ones", "new_full"}


def warning_evidence(
    kernel: Kernel, size: cst.BaseExpression, strides: list[Stride], rows: bool
) -> str | None:
    """Why workloads the kernel is written for reach 2**31 elements in this product, or None."""
    if _ATEN.search(kernel.module.text):
        return "the kernel backs an aten operator, whose tensors can be any size"
    params = {p.name for p in kernel.params}
    if {"M", "N", "K"} <= params and any(True for _ in kernel.calls_to("dot")):
        return "a general GEMM: M, N and K are whatever the caller multiplies"
    if not rows:
        return None  # a head or batch index (grid axis 1/2), or a loaded id: host-decided
    twin = _widened_twin(kernel, size)
    if twin is not None:
        return f"kernel `{twin}` of this file already widens the same product"
    if _ROUTING.search(kernel.module.path.replace("\\", "/").rsplit("/", 1)[-1]):
        return None  # a router's rows: a few hundred experts per token
    if strides and all(s.axis in (0, -2) for s in strides):
        names = [s.tensor.rsplit(".", 1)[-1] for s in strides]
        if any(_ROUTING.search(n) or _PER_REQUEST.search(n) for n in names):
            return None
        vocab = any("vocab" in p.lower() for p in params)
        if vocab and all(_LOGITS.search(n) for n in names):
            return f"a row index times the row stride of `{names[0]}`, a vocabulary row per token"
        width = next((p for p in params if _ROW_WIDTH.match(p)), None)
        if width is not None:
            return (
                f"a row index times a row stride of `{names[0]}`, a full `{width}` row per "
                "token: batch x sequence rows of it pass 2**31"
            )
    return None


def _widened_twin(kernel: Kernel, size: cst.BaseExpression) -> str | None:
    """Another kernel of the file multiplies a widened index by a size of the same text."""
    for other, factor in _products(kernel).get(kernel.code(size), ()):
        if other is not kernel and Prov.WIDENED in other.facts(Provenance).of(factor):
            return other.name
    return None


def _products(kernel: Kernel) -> dict[str, list[tuple[Kernel, cst.BaseExpression]]]:
    """Every product of every kernel of the file, by the text of one factor: (kernel, the
    other factor), in the file's order. Built once per file (`ModuleModel.memo`): each
    TL104 warning asked every other kernel again, quadratic in the kernels of a file."""
    key = ("overflow_products", 0)
    memo = kernel.module.memo
    if key not in memo:
        table: dict[str, list[tuple[Kernel, cst.BaseExpression]]] = {}
        for other in kernel.module.kernels:
            for node in iter_nodes(other.node.body):
                if isinstance(node, cst.BinaryOperation) and isinstance(
                    node.operator, cst.Multiply
                ):
                    for factor, rest in ((node.left, node.right), (node.right, node.left)):
                        table.setdefault(other.code(rest), []).append((other, factor))
        memo[key] = table
    return memo[key]


def bounded_program_ids(
    kernel: Kernel,
    index: cst.BaseExpression,
    sources: list[cst.Call],
    host_bounds: bool = False,
) -> bool:
    """Every source is a program id on an axis every launch sizes with a literal or a core
    count (``grid = (num_cores,)``), or (``host_bounds``) a size a host test bounds by a
    literal, and the index is no grid-stride loop variable: the program id stays small."""
    if Prov.LOOP in kernel.facts(Provenance).of(index) or not kernel.launches:
        return False
    for source in sources:
        if tl_short(kernel, source) != "program_id":
            return False
        axis = program_id_axis(source)
        if not isinstance(axis, int):
            return False
        for site in kernel.launches:
            dims = site.grid_dims
            if dims is None or axis >= len(dims):
                return False
            if not _few_programs(kernel, site, dims[axis], host_bounds):
                return False
    return True


def _few_programs(
    kernel: Kernel, site: LaunchSite, dim: cst.BaseExpression, host_bounds: bool
) -> bool:
    """A literal grid size, a size a host test bounds by a literal (``if n <= 1536:``, also
    set by a dispatch helper's branch), or a core or multiprocessor count."""
    value = evaluate(dim)
    if isinstance(value, int) and value is not UNKNOWN:
        return value <= 65535
    bounds = literal_range(kernel, site, dim) if host_bounds else None
    if bounds is not None and bounds[1] <= 65535:
        return True
    if isinstance(dim, cst.Name) and dim.value in site.host_definitions:
        dim = site.host_definitions[dim.value]
    name = dotted_name(dim.func) if isinstance(dim, cst.Call) else dotted_name(dim)
    return name is not None and bool(_CORE_COUNT.search(name.rsplit(".", 1)[-1].lower()))


def one_dimensional(stride: Stride) -> bool:
    """The stride is ``t.stride(0)`` of a tensor the launching function allocates with one
    dimension (``out = torch.empty(steps)``): its stride is 1, not a row of anything."""
    if stride.axis not in (0, -1):
        return False
    if re.fullmatch(r"(vec|vector)\d*", stride.tensor.rsplit(".", 1)[-1], re.IGNORECASE):
        return True  # `vec1.stride(0)` of `addr`/`ger`: a vector's element step
    value = stride.site.host_definitions.get(stride.tensor)
    if not isinstance(value, cst.Call):
        return False
    callee = (dotted_name(value.func) or "").rsplit(".", 1)[-1]
    if callee not in _ALLOCATORS:
        return False
    shape = [a.value for a in value.args if a.keyword is None]
    if callee.startswith("full") or callee == "new_full":
        shape = shape[:1]
    if len(shape) != 1:
        return False
    only = shape[0]
    if isinstance(only, cst.Tuple | cst.List):
        if len(only.elements) != 1:
            return False
        only = only.elements[0].value
    if isinstance(only, cst.Name):
        return not re.search(r"shape|size|dims", only.value, re.IGNORECASE)
    return isinstance(only, cst.Integer | cst.BinaryOperation) or (
        isinstance(only, cst.Subscript) and not isinstance(only.slice[0].slice, cst.Slice)
    )


def extent_fits(stride: Stride) -> bool:
    """A test holding at the launch says ``stride.tensor`` has at most 2**31 elements
    (``weight.numel() < 2**31``, also read from a predicate helper its callers call): a
    row of it times its row stride stays inside it."""
    return any(numel_below(test, stride.tensor) for test in stride.site.holding_tests())


def numel_below(test: cst.BaseExpression, tensor: str) -> bool:
    """``test`` says ``tensor.numel()`` is at most 2**31 (``< 2**31``, ``<= 2**31``)."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    left, operator, right = test.left, test.comparisons[0].operator, test.comparisons[0].comparator
    if isinstance(operator, cst.GreaterThan | cst.GreaterThanEqual):
        left, right = right, left  # `2**31 > t.numel()`
    numel = (
        isinstance(left, cst.Call) and not left.args and dotted_name(left.func) == f"{tensor}.numel"
    )
    limit = evaluate(right)
    ordered = cst.LessThan | cst.LessThanEqual | cst.GreaterThan | cst.GreaterThanEqual
    # offsets stay below numel, so `numel <= 2**31` keeps them within int32
    return numel and isinstance(limit, int) and isinstance(operator, ordered) and limit <= 2**31
