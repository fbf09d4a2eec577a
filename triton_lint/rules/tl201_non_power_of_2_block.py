"""TL201: a block size that is not a power of 2."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import libcst as cst

from triton_lint.finding import Category, Finding, RelatedLocation, Severity
from triton_lint.model.evaluate import UNKNOWN, evaluate, is_power_of_two
from triton_lint.model.host import is_shape, is_size_call
from triton_lint.model.kernel import Kernel, LaunchSite
from triton_lint.model.tree import iter_nodes
from triton_lint.rules.base import Rule


class _KernelEnv(Mapping[str, Any]):
    """Names visible to constant folding: one candidate value per constexpr parameter,
    and locals with a single compile-time definition (followed lazily)."""

    def __init__(self, kernel: Kernel, bindings: dict[str, Any]) -> None:
        self.kernel = kernel
        self.bindings = bindings
        self._depth = 0

    def __getitem__(self, name: str) -> Any:
        if name in self.bindings:
            return self.bindings[name]
        definitions = self.kernel.definitions.get(name, [])
        if len(definitions) == 1 and definitions[0].value is not None and self._depth < 8:
            self._depth += 1
            try:
                return evaluate(definitions[0].value, self)
            finally:
                self._depth -= 1
        if name in self.kernel.module.globals and name not in self.kernel.params_by_name:
            value = self.kernel.module.globals[name].value
            if isinstance(value, cst.Call) and value.args:
                value = value.args[0].value  # X = tl.constexpr(64)
            return evaluate(value) if value is not None else UNKNOWN
        raise KeyError(name)

    def __iter__(self) -> Iterator[str]:
        return iter(self.bindings)

    def __len__(self) -> int:
        return len(self.bindings)


class NonPowerOf2Block(Rule):
    code = "TL201"
    name = "non-power-of-2-block"
    category = Category.CORRECTNESS
    severity = Severity.ERROR
    upstream_only = True
    summary = "`tl.arange` range or tensor shape that is not a power of 2"
    rationale = """\
Triton tensors must have power-of-2 dimensions: `tl.arange(0, 96)` or `tl.zeros((64, 48), ...)`
fails to compile. When the size comes from a constexpr default, a launch keyword or an
autotune config, only the users who hit that value (an unusual head dimension, one autotune
config) see the compile error. The rule evaluates every value the file gives the size: literals,
parameter defaults, `kernel[grid](..., BLOCK=...)` launches and `triton.Config` values.
A size passed straight from a tensor dimension (`D=x.shape[-1]`, `B, T, H, K = k.shape`)
compiles for the head sizes the tests use (64, 128) and fails for 80 or 96; it is reported as
information, since whether such a size reaches the kernel depends on the models it serves (on
the 7-library corpus most are model-specific kernels with fixed sizes). So is a size passed
unchanged from a parameter of the launching function (`KV_RATIO=kv_ratio`: lmdeploy's
head-group ratio was 3 for one model), unless the name is a tile size the author picks
(`block_m`, `chunk_size`, `BT`). A `triton.next_power_of_2` on the way, or an
`assert`/`raise`/`if` around the launch that pins the value (`assert D in (64, 128)`,
`if E == triton.next_power_of_2(E):`) leaves it alone; an equality between sizes
(`assert q.size(2) == k.size(2) * kv_ratio`) does not."""
    fix = """\
Round the block up with `triton.next_power_of_2(n)` on the host and mask the extra lanes
(`mask=offs < n`), or pick a power-of-2 block size in the config."""
    bad = """\
import triton
import triton.language as tl


@triton.jit
def rownorm(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    acc = tl.zeros((96,), dtype=tl.float32)  # <- TL201
    tl.store(x_ptr + offs, x / tl.sum(x, axis=0) + acc, mask=offs < n)


def launch(x):
    rownorm[(1,)](x, x.numel(), BLOCK=100)  # <- TL201
"""
    good = """\
import triton
import triton.language as tl


@triton.jit
def rownorm(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(x_ptr + offs, x / tl.sum(x, axis=0), mask=offs < n)


def launch(x):
    rownorm[(1,)](x, x.numel(), BLOCK=triton.next_power_of_2(x.numel()))
"""

    def check_kernel(self, kernel: Kernel) -> Iterator[Finding]:
        reported: set[int] = set()
        for call in kernel.calls_to("arange", "zeros", "full"):
            for size_expr, describe in _sizes(call.tl_name or "", call.node):
                yield from self._check_size(kernel, call.node, size_expr, describe, reported)

    def _check_size(
        self,
        kernel: Kernel,
        call: cst.Call,
        size: cst.BaseExpression,
        describe: str,
        reported: set[int],
    ) -> Iterator[Finding]:
        value = evaluate(size, _KernelEnv(kernel, {}))
        if value is not UNKNOWN:
            if not is_power_of_two(value) and id(call) not in reported:
                reported.add(id(call))
                yield self.finding(
                    kernel, call, f"{describe} is {value}, not a power of 2: this does not compile"
                )
            return
        params = [p for p in kernel.params_in(size) if p.is_constexpr]
        if len(params) != 1:
            return
        param = params[0]
        for source in kernel.value_sources(param.name):
            if source.value is UNKNOWN or id(source.node) in reported:
                continue
            size_value = evaluate(size, _KernelEnv(kernel, {param.name: source.value}))
            if size_value is UNKNOWN or is_power_of_two(size_value):
                continue
            reported.add(id(source.node))
            where = {
                "default": "its default",
                "launch": "this launch",
                "autotune": "this autotune config",
                "heuristics": "a heuristic",
            }[source.origin]
            yield self.finding(
                kernel,
                source.node,
                f"{param.name}={source.value!r} from {where} makes {describe} {size_value}, "
                "not a power of 2: the kernel fails to compile for it",
                top=source.top,
            )
        if isinstance(size, cst.Name) and size.value == param.name:
            yield from self._tensor_dimensions(kernel, param.name, describe, reported, call)

    def _tensor_dimensions(
        self, kernel: Kernel, param: str, describe: str, reported: set[int], call: cst.Call
    ) -> Iterator[Finding]:
        """Launches that fill the size straight from a tensor dimension (`x.shape[-1]`,
        `B, T, H, K = k.shape`) with no `next_power_of_2` and no host check on it."""
        for site in kernel.launches:
            expr = site.bound_arguments(kernel).get(param)
            if expr is None or id(expr) in reported:
                continue
            names: set[str] = set()
            dim = _tensor_dimension(expr, site, names)
            if dim is not None:
                origin = f"the tensor dimension `{kernel.module.module.code_for_node(dim)}`"
                example = "a head size of 80 or 96"
            else:
                names.clear()
                host = _host_parameter(expr, site, names)
                if host is None or _is_tiling_name(host) or _is_tiling_name(param):
                    continue  # a tile size is the author's choice, not the model's
                origin = f"`{host}`, a parameter of the launching function,"
                example = "a head-group ratio of 3 or a width of 80"
            if _checked_on_host(site, names):
                continue
            reported.add(id(expr))
            finding = self.finding(
                kernel,
                expr,
                f"{param} comes from {origin} at this launch and sizes {describe}: a value "
                f"that is not a power of 2 ({example}) fails to compile; pass "
                "`triton.next_power_of_2(...)` and mask the extra lanes, or assert that it is "
                "a power of 2",
                top=site.top,
                severity=Severity.INFO,
            )
            if site.module is not None:  # the kernel is in another file: point at what it sizes
                where = f"{describe} in `{kernel.name}`"
                finding.related = (RelatedLocation(kernel.module.path, kernel.span(call), where),)
            yield finding


def _sizes(name: str, call: cst.Call) -> Iterator[tuple[cst.BaseExpression, str]]:
    short = name.rsplit(".", 1)[-1]
    args = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    positional = [a.value for a in call.args if a.keyword is None]
    if short == "arange":
        start = positional[0] if positional else args.get("start")
        end = positional[1] if len(positional) > 1 else args.get("end")
        if start is None or end is None:
            return
        start_value = evaluate(start)
        if start_value == 0:
            yield end, "the `tl.arange` range"
        else:
            yield (
                cst.BinaryOperation(left=end, operator=cst.Subtract(), right=start),
                "the `tl.arange` range",
            )
        return
    shape = positional[0] if positional else args.get("shape")
    if isinstance(shape, cst.Tuple | cst.List):
        for index, element in enumerate(shape.elements):
            yield element.value, f"dimension {index} of the `tl.{short}` shape"
    elif shape is not None:
        yield shape, f"the `tl.{short}` shape"


def _tensor_dimension(
    expr: cst.BaseExpression, site: LaunchSite, names: set[str]
) -> cst.BaseExpression | None:
    """The `x.shape[i]`/`x.size(i)`/`x.shape` unpacking `expr` comes from, through the host
    function's single assignments (the names passed are added to `names`), else None."""
    for _ in range(5):
        if isinstance(expr, cst.Name):
            names.add(expr.value)
            definition = site.host_definitions.get(expr.value)
            if definition is None:
                return None
            expr = definition
            continue
        if isinstance(expr, cst.Subscript) and is_shape(expr.value):
            return expr
        return expr if is_shape(expr) or is_size_call(expr) else None
    return None


def _host_parameter(expr: cst.BaseExpression, site: LaunchSite, names: set[str]) -> str | None:
    """The name of the launching function's parameter that ``expr`` passes unchanged
    (``KV_RATIO=kv_ratio`` in ``def preprocess(q, k, kv_ratio: int)``), else None."""
    if not isinstance(expr, cst.Name) or expr.value in site.host_definitions:
        return None
    if expr.value in site.host_alternatives:
        return None
    for node in iter_nodes(site.top):
        if not isinstance(node, cst.FunctionDef):
            continue
        params = node.params.params + node.params.kwonly_params + node.params.posonly_params
        if any(param.name.value == expr.value for param in params) and any(
            inner is site.call for inner in iter_nodes(node.body)
        ):
            names.add(expr.value)
            return expr.value
    return None


def _is_tiling_name(name: str) -> bool:
    """``BLOCK_M``, ``block_size``, ``tile_size``, ``chunk_size``, ``BT``, ``BK``: names of
    tile sizes and launch splits, which callers pick from powers of 2."""
    lowered = name.lower()
    if any(word in lowered for word in _TILING_WORDS):
        return True
    return len(name) <= 3 and name[:1] in "Bb" and name[1:].isalpha()


_TILING_WORDS = ("block", "blk", "tile", "chunk", "split", "segment", "warp", "stage")


def _checked_on_host(site: LaunchSite, names: set[str]) -> bool:
    """An `assert`, an `if ...: raise` or an `if` around the launch in the launching statement
    that limits one of the names to chosen values (`assert K in (16, 32, 64, 128)`,
    `if not is_pow2(D): raise`, `if E == triton.next_power_of_2(E): kernel[grid](...)`,
    `assert D & (D - 1) == 0`, `assert D <= 256`). A consistency check between sizes
    (`assert q.shape[2] == kv_ratio * k.shape[2]`) says nothing about powers of 2."""
    return any(
        any(isinstance(n, cst.Name) and n.value in names for n in iter_nodes(test))
        and not _only_equalities(test)
        for test in site.guard_tests()
    )


def _only_equalities(test: cst.BaseExpression) -> bool:
    """``test`` compares sizes only with ``==``/``!=`` to other runtime values, with no
    literal, call, membership or bit test that could pin them to powers of 2."""
    if not isinstance(test, cst.Comparison):
        return False
    if not all(isinstance(t.operator, cst.Equal | cst.NotEqual) for t in test.comparisons):
        return False
    operands = [test.left, *(t.comparator for t in test.comparisons)]
    return all(_is_size_product(operand) for operand in operands)


def _is_size_product(expr: cst.BaseExpression) -> bool:
    """A name, a tensor dimension (``x.shape[2]``, ``x.size(3)``) or a product of them."""
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Multiply):
        return _is_size_product(expr.left) and _is_size_product(expr.right)
    if isinstance(expr, cst.Subscript):
        return is_shape(expr.value)
    return isinstance(expr, cst.Name | cst.Attribute) or is_size_call(expr)
