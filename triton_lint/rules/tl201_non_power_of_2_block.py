"""TL201: a block size that is not a power of 2."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import libcst as cst

from triton_lint.finding import Category, Finding, Severity
from triton_lint.model.evaluate import UNKNOWN, evaluate, is_power_of_two
from triton_lint.model.kernel import Kernel
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
parameter defaults, `kernel[grid](..., BLOCK=...)` launches and `triton.Config` values."""
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
