"""TL211: a launch passes ``t.data_ptr()`` for a parameter the kernel dereferences."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from triton_lint.finding import Category, Finding, Severity
from triton_lint.model.kernel import ModuleModel
from triton_lint.model.pointers import casts_int_to_pointer, dereferenced_params
from triton_lint.rules.base import Rule


class PointerPassedAsInt(Rule):
    code = "TL211"
    name = "pointer-passed-as-int"
    category = Category.CORRECTNESS
    severity = Severity.ERROR
    summary = "Launch passes `t.data_ptr()` for a parameter the kernel loads or stores through"
    rationale = """\
Triton turns a tensor argument into a typed pointer (`*fp16`) and an integer into `i64`. A
kernel that receives `x.data_ptr()` gets an integer, so `tl.load(x_ptr + offs)` fails to compile
("Unsupported ptr type int64 in `tl.load`"), and the launch also loses the dtype that the
kernel's arithmetic was specialized for."""
    fix = """\
Pass the tensor itself (`kernel[grid](x, ...)`); if the kernel really needs an address, cast it
inside: `x_ptr.to(tl.pointer_type(tl.float16))`."""
    bad = """\
import torch
import triton
import triton.language as tl


@triton.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, x * 2, mask=offs < n)


def launch(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n = x.numel()
    scale[(triton.cdiv(n, 1024),)](x.data_ptr(), out, n, BLOCK=1024)  # <- TL211
    return out
"""
    good = """\
import torch
import triton
import triton.language as tl


@triton.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, x * 2, mask=offs < n)


def launch(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n = x.numel()
    scale[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
    return out
"""

    def check(self, module: ModuleModel) -> Iterator[Finding]:
        for kernel in module.kernels:
            if not kernel.launches or casts_int_to_pointer(kernel):
                continue
            dereferenced = dereferenced_params(kernel)
            for site in kernel.launches:
                for name, expr in site.bound_arguments(kernel).items():
                    if name in dereferenced and _is_data_ptr(expr):
                        yield self.finding(
                            kernel,
                            expr,
                            f"`{name}` is loaded or stored through, but the launch passes an "
                            "integer address: pass the tensor itself",
                            top=site.top,
                        )


def _is_data_ptr(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name):
        if expr.func.value == "int" and len(expr.args) == 1:
            return _is_data_ptr(expr.args[0].value)
        return False
    return (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Attribute)
        and expr.func.attr.value == "data_ptr"
        and not expr.args
    )
