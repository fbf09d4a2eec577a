"""TL206: a call to a host (Python/torch/numpy) function inside a kernel."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from triton_lint.finding import Category, Finding, Severity
from triton_lint.model.kernel import Kernel
from triton_lint.model.provenance import Provenance
from triton_lint.model.usage import Usage
from triton_lint.rules.base import Rule

_HOST_ROOTS = {"torch", "numpy", "math", "random", "os", "cupy", "jax"}


class HostCallInKernel(Rule):
    code = "TL206"
    name = "host-call-in-kernel"
    category = Category.CORRECTNESS
    severity = Severity.ERROR
    summary = "Call to a host function (`torch.*`, `math.*`, `triton.next_power_of_2`) in a kernel"
    rationale = """\
A kernel body is compiled, not run by Python. Triton can call `tl.*`, `libdevice.*`, other
`@triton.jit` functions and a few builtins (`range`, `min`, `max`, `len`, `isinstance`, `int`,
`float`). A plain function defined in the file is a non-constexpr global (NameError at
compile time); `torch.*`, `numpy.*`, `math.*` and host helpers such as
`triton.next_power_of_2` receive Triton tensors they cannot handle and fail to compile. Calls
whose arguments are all compile-time constants are left alone: Triton evaluates them while
compiling."""
    fix = """\
Use the `tl` equivalent (`tl.exp`, `tl.sqrt`, `tl.cdiv`, `tl.maximum`), make the helper a
`@triton.jit` function, or compute the value on the host and pass it in (as `tl.constexpr` if
it is a block size)."""
    bad = """\
import math

import triton
import triton.language as tl


@triton.jit
def gelu(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    y = 0.5 * x * (1 + math.erf(x / math.sqrt(2.0)))  # <- TL206
    tl.store(out_ptr + offs, y, mask=offs < n)
"""
    good = """\
import triton
import triton.language as tl


@triton.jit
def gelu(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    y = 0.5 * x * (1 + tl.math.erf(x * 0.7071067811865476))
    tl.store(out_ptr + offs, y, mask=offs < n)
"""

    def check_kernel(self, kernel: Kernel) -> Iterator[Finding]:
        module = kernel.module
        local = kernel.facts(Usage).local_names
        for call in kernel.calls:
            path = call.path
            if path is not None:
                root = path.split(".")[0]
                host = root in _HOST_ROOTS or (
                    root == "triton"
                    and not path.startswith(("triton.language", "triton.experimental"))
                )
                if not host or _all_compile_time(kernel, call.node):
                    continue
                yield self.finding(
                    kernel,
                    call.node.func,
                    f"`{call.name}` is a host function: it cannot run on Triton tensors inside a "
                    "kernel (compile error); use the `tl` equivalent or compute it on the host",
                )
                continue
            func = call.node.func
            if not isinstance(func, cst.Name) or func.value in local:
                continue
            name = func.value
            if name in module.kernels_by_name:
                continue
            definition = module.functions.get(name)
            if definition is None or definition.decorators:
                continue
            yield self.finding(
                kernel,
                func,
                f"`{name}` is a plain Python function, not `@triton.jit`: Triton refuses to "
                "call it from a kernel; decorate it with `@triton.jit`",
            )


def _all_compile_time(kernel: Kernel, call: cst.Call) -> bool:
    """Every argument is a constant: literals, constexprs, or host objects such as
    ``torch.float32`` (``torch.finfo(torch.float32).max`` runs while compiling)."""
    return all(
        kernel.facts(Provenance).is_compile_time(arg.value) or _host_constant(kernel, arg.value)
        for arg in call.args
    )


def _host_constant(kernel: Kernel, expr: cst.BaseExpression) -> bool:
    path = kernel.module.aliases.resolve(expr)
    return path is not None and path.split(".")[0] in _HOST_ROOTS
