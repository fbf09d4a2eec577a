"""TL205: a kernel reads a module-level name that is not a ``tl.constexpr``."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from triton_lint.finding import Category, Finding, Severity
from triton_lint.model.evaluate import UNKNOWN, evaluate
from triton_lint.model.kernel import Global, Kernel, ModuleModel
from triton_lint.model.usage import Usage
from triton_lint.rules.base import Rule

_HOST_ROOTS = {"torch", "numpy", "math", "os", "sys"}
_VALUE_BUILTINS = {"int", "float", "bool", "str"}


class NonConstexprGlobal(Rule):
    code = "TL205"
    name = "non-constexpr-global"
    category = Category.CORRECTNESS
    severity = Severity.ERROR
    summary = "Kernel reads a module-level value that is not a `tl.constexpr`"
    rationale = """\
Triton's code generator only lets a kernel read module-level names that are modules, jit
functions, `triton.language` objects, dtypes or values created with `tl.constexpr(...)`. Any
other global (`EPS = 1e-6`, `BLOCK = 128`, `DTYPE = torch.float16`) makes the first launch
fail with `NameError: Cannot access global variable EPS from within @jit'ed function`
(older releases silently captured the value, so code written for them breaks on upgrade)."""
    fix = """\
Wrap the value: `EPS = tl.constexpr(1e-6)`, or pass it to the kernel as an argument."""
    bad = """\
import triton
import triton.language as tl

EPS = 1e-6


@triton.jit
def normalize(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + offs, x / (tl.sum(x, axis=0) + EPS), mask=offs < n)  # <- TL205
"""
    good = """\
import triton
import triton.language as tl

EPS = tl.constexpr(1e-6)


@triton.jit
def normalize(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr + offs, x / (tl.sum(x, axis=0) + EPS), mask=offs < n)
"""

    def check_kernel(self, kernel: Kernel) -> Iterator[Finding]:
        if kernel.top is not kernel.node:
            return  # a kernel built inside a factory may read the factory's locals
        module = kernel.module
        usage = kernel.facts(Usage)
        reported: set[str] = set()
        for name in usage.names_read:
            value = name.value
            if value in usage.local_names or value in reported:
                continue
            glob = module.globals.get(value)
            if glob is None or glob.is_constexpr or not _plain_value(module, glob):
                continue
            reported.add(value)
            yield self.finding(
                kernel,
                name,
                f"`{value}` is a module-level value, not a `tl.constexpr`: Triton refuses to "
                f"compile the kernel (NameError); define it as `{value} = tl.constexpr(...)`",
            )


def _plain_value(module: ModuleModel, glob: Global) -> bool:
    """The global certainly holds a plain Python or host value (not a module, function,
    Triton object or constexpr)."""
    value = glob.value
    if value is None or glob.name in module.kernels_by_name or glob.name in module.imports:
        return False
    if isinstance(value, cst.Name) and value.value == "None":
        return False
    if evaluate(value) is not UNKNOWN:
        return True
    if isinstance(value, cst.Attribute):
        path = module.aliases.resolve(value)
        return path is not None and path.split(".")[0] in _HOST_ROOTS
    if isinstance(value, cst.Call):
        if isinstance(value.func, cst.Name) and value.func.value in _VALUE_BUILTINS:
            return True
        path = module.aliases.resolve(value.func)
        return path is not None and path.split(".")[0] in ("os",)
    return False
