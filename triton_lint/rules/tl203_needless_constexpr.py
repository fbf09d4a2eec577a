"""TL203: a ``tl.constexpr`` parameter that is never needed at compile time."""

from __future__ import annotations

import re
from collections.abc import Iterator

import libcst as cst

from triton_lint.finding import Applicability, Category, Edit, Finding, Fix, Severity, Span
from triton_lint.model.evaluate import UNKNOWN
from triton_lint.model.kernel import Kernel, Param
from triton_lint.model.usage import is_flag_like, is_per_call_size
from triton_lint.rules.base import Rule

#: Float hyperparameters.
_FLOAT_NAME = re.compile(
    r"^(eps|epsilon|.*_eps|alpha|beta|gamma|momentum|lr|temperature|"
    r"softcap|.*_scale|scale|sm_scale|rope_theta|theta|p|dropout_p)$",
    re.IGNORECASE,
)
#: Backend options (fields of CUDAOptions/HIPOptions) that a launch passes by keyword; a kernel
#: parameter with one of these names receives the launch option, fixed per call site.
_LAUNCH_OPTIONS = {
    "num_warps",
    "num_stages",
    "num_ctas",
    "maxnreg",
    "waves_per_eu",
    "matrix_instr_nonkdim",
    "kpack",
    "enable_fp_fusion",
    "launch_cooperative_grid",
    "launch_pdl",
    "sanitize_overflow",
    "allow_flush_denorm",
}


class NeedlessConstexpr(Rule):
    code = "TL203"
    name = "needless-constexpr"
    category = Category.PERFORMANCE
    severity = Severity.WARNING
    summary = "`tl.constexpr` parameter never used where Triton needs a compile-time value"
    rationale = """\
Triton compiles one binary per distinct tuple of constexpr values. A parameter annotated
`tl.constexpr` that is only used as a runtime value (a row count used as a `range` bound, an
`eps` added to a variance, a scale multiplied into a tensor) buys nothing, but every new value
compiles the kernel again: a row count that changes with each batch, or a float hyperparameter
swept in a loop, turns each call into a multi-second compilation. A parameter is needed at
compile time when it (or local arithmetic on it) is a `tl.arange` bound or tensor shape, a
`tl.static_range` bound, the test of an `if` or a ternary, a compile-time keyword such as
`dtype=`, `num_stages=`, `eviction_policy=`, `axis=`, a constexpr parameter of a called jit
function, or a `tl.static_assert` operand. Parameters set by `@triton.autotune` configs or
`@triton.heuristics`, boolean switches and parameters every launch in the file passes as a
literal take a small fixed set of values and are left alone. Only parameters whose values
change from call to call are reported (per-call sizes such as rows, tokens, batch or
`n_elements`, and float hyperparameters such as `eps` or a scale), plus constexprs that are
never used at all: model dimensions and strides used as runtime values are left alone,
because constant-folding them is worth the one compilation per model shape."""
    fix = """\
Drop the `: tl.constexpr` annotation so the value is passed at run time (Triton still
specializes integers equal to 1 and multiples of 16, so there is no loss for sizes). The fix
is marked unsafe: a helper that receives the parameter as a constexpr may need updating."""
    bad = """\
import triton
import triton.language as tl


@triton.jit
def rms_norm(
    x_ptr,
    w_ptr,
    out_ptr,
    n_cols,
    n_rows: tl.constexpr,  # <- TL203
    eps: tl.constexpr,  # <- TL203
    BLOCK: tl.constexpr,
):
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    for row in range(tl.program_id(0), n_rows, tl.num_programs(0)):
        x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
        rstd = 1 / tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)
        tl.store(out_ptr + row * n_cols + cols, x * rstd * w, mask=mask)
"""
    good = """\
import triton
import triton.language as tl


@triton.jit
def rms_norm(
    x_ptr, w_ptr, out_ptr, n_cols, n_rows, eps, HAS_WEIGHT: tl.constexpr, BLOCK: tl.constexpr
):
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    for row in range(tl.program_id(0), n_rows, tl.num_programs(0)):
        x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
        y = x / tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)
        if HAS_WEIGHT:
            y *= tl.load(w_ptr + cols, mask=mask, other=0.0)
        tl.store(out_ptr + row * n_cols + cols, y, mask=mask)
"""

    def check_kernel(self, kernel: Kernel) -> Iterator[Finding]:
        if not kernel.is_entry_point:
            return  # a helper's constexprs come from its caller's constexprs: no new compiles
        usage = kernel.usage
        needed = usage.compile_time_params()
        for param in kernel.params:
            if not param.is_constexpr or param.name in needed:
                continue
            if param.name in _LAUNCH_OPTIONS:
                continue  # a launch option, fixed per call site
            if _fixed_values(kernel, param) or is_flag_like(param):
                continue
            used = usage.reads(param.name)
            if used and not _varies_per_call(kernel, param):
                continue  # a model dimension or stride: constant folding pays for one compile
            what = "only used as a runtime value" if used else "never used"
            yield self.finding(
                kernel,
                param.node.name,
                f"`{param.name}` is `tl.constexpr` but {what}: every distinct value compiles "
                "the kernel again; pass it as a runtime argument",
                fix=_drop_annotation(kernel, param),
            )


def _fixed_values(kernel: Kernel, param: Param) -> bool:
    """Set by autotune/heuristics, or every launch in the file passes a known constant."""
    sources = kernel.value_sources(param.name)
    if any(s.origin in ("autotune", "heuristics") for s in sources):
        return True
    launches = [s for s in sources if s.origin == "launch"]
    if not launches:
        return False
    return all(s.value is not UNKNOWN for s in launches)


def _drop_annotation(kernel: Kernel, param: Param) -> Fix | None:
    node = param.node
    if node.annotation is None:
        return None
    name = kernel.span(node.name)
    if node.default is not None:
        default = kernel.span(node.default)
        end_line, end_column, content = default.line, default.column, "="
    else:
        annotation = kernel.span(node.annotation.annotation)
        end_line, end_column, content = annotation.end_line, annotation.end_column, ""
    edit = Edit(Span(name.end_line, name.end_column, end_line, end_column), content)
    return Fix(Applicability.UNSAFE, f"Drop `: tl.constexpr` from `{param.name}`", (edit,))


def _varies_per_call(kernel: Kernel, param: Param) -> bool:
    """A float hyperparameter, a per-call size (rows, tokens, batch), or a value that a launch
    in this file computes from a float."""
    if is_per_call_size(param.name) or _FLOAT_NAME.match(param.name):
        return True
    default = param.node.default
    if isinstance(default, cst.Float):
        return True
    return any(
        isinstance(s.value, float) or isinstance(s.node, cst.Float)
        for s in kernel.value_sources(param.name)
    )
