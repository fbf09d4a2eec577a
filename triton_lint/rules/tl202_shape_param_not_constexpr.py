"""TL202: a runtime parameter used where Triton needs a compile-time size."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from triton_lint.finding import Category, Finding, Severity
from triton_lint.model.kernel import Kernel
from triton_lint.model.provenance import Provenance
from triton_lint.rules.base import Rule

_SHAPE_FUNCS = {"zeros", "full", "reshape", "broadcast_to", "view"}


class ShapeParamNotConstexpr(Rule):
    code = "TL202"
    name = "shape-param-not-constexpr"
    category = Category.CORRECTNESS
    severity = Severity.ERROR
    summary = "Parameter used as a `tl.arange` bound or tensor shape is not `tl.constexpr`"
    rationale = """\
`tl.arange` bounds and tensor shapes must be known when the kernel is compiled. A parameter
without the `tl.constexpr` annotation is a runtime value, so the kernel fails to compile
("arange's arguments must be of type tl.constexpr") the first time it is launched."""
    fix = """\
Annotate the parameter `BLOCK: tl.constexpr` (and pass a power of 2), or keep the runtime size
as a separate parameter and use it in the mask: `offs = tl.arange(0, BLOCK)`, `mask = offs < n`."""
    bad = """\
import triton
import triton.language as tl


@triton.jit
def fill(out_ptr, n, BLOCK):
    offs = tl.arange(0, BLOCK)  # <- TL202
    tl.store(out_ptr + offs, tl.zeros((BLOCK,), dtype=tl.float32), mask=offs < n)  # <- TL202
"""
    good = """\
import triton
import triton.language as tl


@triton.jit
def fill(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros((BLOCK,), dtype=tl.float32), mask=offs < n)
"""

    def check_kernel(self, kernel: Kernel) -> Iterator[Finding]:
        for call in kernel.calls:
            name = call.tl_name
            if name is None:
                continue
            short = name.rsplit(".", 1)[-1]
            if short == "arange":
                exprs = [a.value for a in call.node.args[:2]]
                what = "`tl.arange` bound"
            elif short in _SHAPE_FUNCS:
                exprs = _shape_elements(call.node, short)
                what = f"`tl.{short}` shape"
            else:
                continue
            runtime = []
            for expr in exprs:
                if kernel.facts(Provenance).is_compile_time(expr):
                    continue
                runtime += [
                    p.name
                    for p in kernel.params_in(expr)
                    if not p.is_constexpr and not _constexpr_from_callers(kernel, p.name)
                ]
            if runtime:
                names = ", ".join(f"`{n}`" for n in dict.fromkeys(runtime))
                yield self.finding(
                    kernel,
                    call.node,
                    f"{what} uses {names}, which is not `tl.constexpr`: the kernel fails to "
                    "compile; annotate it `: tl.constexpr`",
                )


def _constexpr_from_callers(kernel: Kernel, param: str) -> bool:
    """A jit helper's parameter is compile-time when every call from another jit function
    of the file passes a compile-time value (Triton specialises helpers per call)."""
    found = False
    for caller in kernel.module.kernels:
        if caller is kernel:
            continue
        for site in caller.calls:
            if site.name is None or site.name.rsplit(".", 1)[-1] != kernel.name:
                continue
            arg = _argument(kernel, site.node, param)
            if arg is None or not caller.facts(Provenance).is_compile_time(arg):
                return False
            found = True
    return found


def _argument(kernel: Kernel, call: cst.Call, param: str) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == param:
            return arg.value
    index = kernel.params_by_name[param].index
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    return positional[index] if index < len(positional) else None


def _shape_elements(call: cst.Call, short: str) -> list[cst.BaseExpression]:
    if short in ("reshape", "broadcast_to", "view"):
        args = [a.value for a in call.args[1:] if a.keyword is None]
    else:
        args = [a.value for a in call.args[:1] if a.keyword is None]
    args += [a.value for a in call.args if a.keyword is not None and a.keyword.value == "shape"]
    elements: list[cst.BaseExpression] = []
    for arg in args:
        if isinstance(arg, cst.Tuple | cst.List):
            elements += [el.value for el in arg.elements]
        else:
            elements.append(arg)
    return elements
