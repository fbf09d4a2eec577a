"""TL203: a ``tl.constexpr`` parameter that is never needed at compile time."""

from __future__ import annotations

import re
from collections.abc import Iterator

import libcst as cst

from triton_lint.finding import (
    Applicability,
    Category,
    Edit,
    Finding,
    Fix,
    RelatedLocation,
    Severity,
    Span,
)
from triton_lint.model.callers import free_names
from triton_lint.model.host_tests import is_last_dimension
from triton_lint.model.kernel import Kernel, LaunchSite, Param
from triton_lint.model.names import dotted_name
from triton_lint.model.tree import iter_children, iter_nodes
from triton_lint.model.unit_batch import leading_dimension_parameter, unit_batch_asserts
from triton_lint.model.usage import Usage, is_flag_like, is_per_call_size
from triton_lint.rules._carried_key import carrying_constexpr
from triton_lint.rules._compile_key import PURE_CALLS, compile_key_constant
from triton_lint.rules._host_sizes import (
    alias_of,
    fixed_values,
    generic_feature_size,
    model_tensor_size,
    tile_size,
)
from triton_lint.rules.base import Rule

#: Float hyperparameters.
_FLOAT_NAME = re.compile(
    r"^(eps|epsilon|.*_eps|alpha|beta|gamma|momentum|lr|temperature|"
    r"softcap|.*_scale|scale|sm_scale|rope_theta|theta|p|.*dropout.*)$",
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
    groups_occurrences = True
    summary = "`tl.constexpr` parameter never used where Triton needs a compile-time value"
    rationale = """\
Triton compiles one binary per distinct tuple of constexpr values. A parameter annotated
`tl.constexpr` that is only used as a runtime value (a row count used as a `range` bound, an
`eps` added to a variance, a scale multiplied into a tensor) buys nothing, but every new
value compiles the kernel again: a row count that changes with each batch, or a float
hyperparameter swept in a loop, turns each call into a multi-second compilation. A parameter
is needed at compile time when it (or local arithmetic on it) is a `tl.arange` bound or
tensor shape, a `tl.static_range` bound, the test of an `if` or a ternary, a compile-time
keyword such as `dtype=`, `num_stages=`, `eviction_policy=`, `axis=`, a constexpr parameter
of a called jit function, a `tl.static_assert` operand, or an argument of a function of a
Triton extension language (`triton.experimental.*`, such as `tle.distributed_barrier(mesh)`),
whose compile-time parameters are unknown here. Parameters set by
`@triton.autotune` configs or `@triton.heuristics`, boolean switches and parameters every
launch in the file passes as a literal take a small fixed set of values and are left alone,
as are values a host test bounds to a few literals where the kernel is launched (`assert 2
<= m <= 8`). So are values that change only with something that recompiles the kernel
anyway: values every launch in the file computes from dtype information, from the launch's
other constexpr arguments or from module-level constants alone (`torch.finfo(x.dtype).max`,
a table indexed by a dtype, `str(x.dtype).split(".")[-1]`, `224.0 if use_fnuz else 448.0` or
`triton.cdiv(NT, MAX_NT)` with `use_fnuz`, `NT` and `MAX_NT` also passed as constexprs),
values the host asserts equal to such a value (`assert HC * HC + 2 * HC == M` with `HC` also
passed as a constexpr), values computed from those and a model parameter's dimensions
(`state_len = width - 1 + (seqlen - 1)` with `_, width = weight.shape` and `seqlen` also passed
as a constexpr: one value per model and draft length) and, when no launch in the file passes
one, a `*_MAX`/`*_MIN` parameter whose float default is a narrow type's limit (`448.0` for
float8 e4m3, `127.0` for int8). Only parameters whose values change from call to call are
reported (per-call sizes such as rows, tokens, batch or `n_elements`, values a launch in the
file computes from one, such as `math.ceil(n_rows / sm_count)`, and float hyperparameters such
as `eps`, a scale or a dropout probability), whether the kernel uses them as runtime values or
never uses them at all. Model dimensions, strides and tile sizes are left alone: they cost one
compilation per model shape, and constant-folding them usually pays for it. A one-letter size
(`M`, `L`, `S`) means rows in one kernel and layers or memory slots in another, so where launches in
the file pass it, what they pass decides: `M` from `M, N = x.shape` varies per call,
`L=num_layers` or a tensor's last dimension (`s.shape[-1]`, `_, _, L = s.shape`, `S` of
`B, T, H, S = g.shape`, or `M` of `K2, M = phi.shape` where a caller asserts `phi.dim() ==
2`) does not, nor does the size of a tensor shaped like a model
parameter (`empty_like(readout_table).numel()`, or `rows` of `groups, rows, dim = weight.shape`
where `weight` is the launching function's parameter, whatever its callers name the tensor
they pass), and a one-letter host name computed from
the launching function's parameters is read through them (`s = int(num_shared_experts)` is a
model size), as are the parameters of a helper nested in the host function and called there
once (`post(s, z, M)` with `M = s.shape[-1]`). Any other name is judged the same way when
every launch passes it a named value: `ROWS=rows_per_request` is a speculative config's draft
length and `BS=block_size` a block size, not rows or a batch. Whatever its name, a parameter
the kernel steps a loop by (`range(0, end, S)`) is a chunk size, and one every launch fills
with a value a host test asserts divides another (`assert h % m_size == 0`) a grouping
factor: tiles, left alone. A name that says nothing of what it counts (`size`) is a
feature dimension when the launching function binds it to a later dimension of a tensor whose
first dimension has a per-call name (`num_tokens, top_k, size = inputs.shape`).

A per-call size is information, naming the other parameter, when every launch passes it a
factor of what it passes another constexpr the kernel needs at compile time (`BATCH=batch`
beside `ROWS=batch * seq * heads`, `SEQ=x.shape[1]` beside `M=x.numel() // 3072`), a value
an object passed as such a constexpr holds (`NUM_BLOCKS=num_blocks` beside
`mesh=_block_mesh(num_blocks)`, a host function of the file returning
`tle.device_mesh({"block": [("x", int(num_blocks))]})`), or a dimension that a constexpr
stride of the same tensor spans (`S` with `assert N == F * S`, `N = qkv.shape[1]`, beside
`stride_b=qkv.stride(0)`: for a contiguous `qkv` the stride is a multiple of `N`, and TL203
leaves strides constexpr): the kernel already compiles once per value of that one, so this
adds no compilation. So is one
that is an entry of the kernel's `@triton.autotune` key and read by the kernel (`key=["M",
"N"]`): every new value re-runs the autotuner, benchmarking each config, whether or not it is
constexpr, so the author tunes per value and expects few values. A key entry the kernel never
reads is no such choice and stays a warning. A batch that every caller asserts is 1 is
information too: a constexpr every launch fills from the leading dimension of a tensor
parameter of the launching function (`b` of `b, h, n, d = q.shape`, `q.shape[0]`,
`q.size(0)`) when every call of that function the project index follows (through `apply`
for an autograd function's `forward`, and through callers that return what it returns, two
levels in all) is followed by `assert out.shape[0] == 1` (or `out.size(0)`, or `if
out.shape[0] != 1: raise`) on its result; the message names each assert. One call path
without it, or callers the index does not know, keeps the warning; other dimensions are
judged as above.

Findings are ranked by how often the value changes. A per-call size, or a value a launch in
the file computes from one (`finfo.eps * n_rows`), is a warning: it recompiles as batches and
sequence lengths change. A float hyperparameter is information: it compiles once per value
the program configures, which costs something only when it is swept or scheduled. All 11
shipped-and-fixed TL203 bugs in `bench/recall.tsv` were per-call sizes; hyperparameter
constexprs are common in maintained libraries, some deliberately (to fold the constant).
When the run indexed the project and found no launch of the kernel anywhere (dead code, or a
launch the index cannot follow), its findings are information and say so: no call shows the
value changing. A file linted on its own, outside a project run, knows nothing of launches
elsewhere and keeps the tiers above.

A kernel gets one finding per tier, at its first such parameter, with the others as related
locations: together they make one compile key that changes per call, and dropping the
annotation from only one of `batch_size` and `seq_len` still compiles the kernel for every
new batch."""
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
        """One finding per kernel and tier: the parameters of a tier together make the compile
        key change (dropping one of two per-call sizes still recompiles per call), so the
        first one carries the finding and the others are related locations."""
        if not kernel.is_entry_point:
            return  # a helper's constexprs come from its caller's constexprs: no new compiles
        tiers: dict[Severity, list[tuple[Param, str]]] = {}
        noted: dict[str, list[tuple[Param, str]]] = {}
        unlaunched: bool | None = None
        needed = kernel.facts(Usage).compile_time_params()
        for param, severity in self._needless(kernel):
            used = kernel.facts(Usage).reads(param.name)
            what = "only used as a runtime value" if used else "never used"
            if unlaunched is None:
                unlaunched = kernel.unlaunched
            severity = Severity.INFO if unlaunched else severity  # no call shows a value
            carrier = carrying_constexpr(kernel, param, needed)
            if carrier is not None:
                noted.setdefault(_carried_note(carrier), []).append((param, what))
            elif severity is Severity.WARNING and _tuned_per_value(kernel, param):
                noted.setdefault(_TUNED_NOTE, []).append((param, what))
            elif severity is Severity.WARNING and (asserted := _unit_batch(kernel, param)):
                noted.setdefault(_unit_batch_note(asserted), []).append((param, what))
            else:
                tiers.setdefault(severity, []).append((param, what))
        for severity in (Severity.WARNING, Severity.INFO):
            if severity in tiers:
                yield self._tier_finding(kernel, severity, tiers[severity])
        for note, params in noted.items():
            yield self._tier_finding(kernel, Severity.INFO, params, note)

    def _needless(self, kernel: Kernel) -> Iterator[tuple[Param, Severity]]:
        """Constexpr parameters never needed at compile time whose value changes, with how
        often it changes."""
        needed = kernel.facts(Usage).compile_time_params()
        for param in kernel.params:
            if not param.is_constexpr or param.name in needed:
                continue
            if param.name in _LAUNCH_OPTIONS:
                continue  # a launch option, fixed per call site
            if fixed_values(kernel, param) or is_flag_like(param):
                continue
            if compile_key_constant(kernel, param):
                continue  # changes only with a dtype, which recompiles the kernel anyway
            severity = _variation(kernel, param)
            if severity is not None:  # None: a model dimension or stride, one per model shape
                yield param, severity

    def _tier_finding(
        self,
        kernel: Kernel,
        severity: Severity,
        params: list[tuple[Param, str]],
        note: str | None = None,
    ) -> Finding:
        tier = (
            ""
            if severity is Severity.WARNING
            else " (info: no launch of this kernel was found in the project, so no call shows "
            "its value changing)"
            if kernel.unlaunched
            else " (info: a hyperparameter, one compilation per configured value unless the "
            "program sweeps or schedules it)"
        )
        (first, what), rest = params[0], params[1:]
        if note is not None:
            subject = _enumerate([f"`{p.name}`" for p, _ in params])
            message = (
                f"{subject} {'are' if rest else 'is'} `tl.constexpr` but "
                f"{'never needed at compile time' if rest else what} (info: {note}); a "
                "runtime argument would still do"
            )
        elif rest:
            names = _enumerate([f"`{p.name}` ({w})" for p, w in params])
            message = (
                f"{names} are `tl.constexpr` but never needed at compile time: every distinct "
                f"combination of values compiles the kernel again{tier}; pass them as runtime "
                "arguments"
            )
        else:
            message = (
                f"`{first.name}` is `tl.constexpr` but {what}: every distinct value compiles "
                f"the kernel again{tier}; pass it as a runtime argument"
            )
        edits = [edit for p, _ in params if (edit := _drop_annotation(kernel, p)) is not None]
        names = _enumerate([f"`{p.name}`" for p, _ in params])
        fix = (
            Fix(Applicability.UNSAFE, f"Drop `: tl.constexpr` from {names}", tuple(edits))
            if edits
            else None
        )
        finding = self.finding(kernel, first.node.name, message, severity=severity, fix=fix)
        finding.related = tuple(
            RelatedLocation(
                finding.path,
                kernel.span(p.node.name),
                f"`{p.name}` is `tl.constexpr` but {w}",
            )
            for p, w in rest
        )
        return finding


#: Why a per-call size that is also an autotune key is information.
_TUNED_NOTE = (
    "also an autotune key, so every new value re-runs the autotuner, benchmarking each config, "
    "whether or not it is `tl.constexpr`: the author tunes the kernel per value and expects few "
    "of them"
)


def _carried_note(carrier: str) -> str:
    return (
        f"every launch passes a factor of what it passes `{carrier}` (or a value that object "
        "holds, or a dimension that stride spans), a constexpr that stays in the compile key, "
        f"so the kernel already compiles once per value of `{carrier}` and this adds no "
        "compilation of its own"
    )


def _unit_batch(kernel: Kernel, param: Param) -> list[str]:
    """Where the callers assert that the batch is 1, when every launch fills ``param`` from
    the leading dimension of a tensor parameter of the launching function (``b`` of ``b, h,
    n, d = q.shape``) and every call path of that function asserts that the leading dimension
    of what it returns is 1 (`model.unit_batch`); empty otherwise."""
    found: set[tuple[str, int]] = set()
    launches = 0
    for site in kernel.launches:
        argument = site.bound_arguments(kernel).get(param.name)
        if argument is None:
            continue
        launches += 1
        if leading_dimension_parameter(site, argument) is None:
            return []
        asserts = unit_batch_asserts(kernel.module, site)
        if asserts is None:
            return []
        found.update(asserts)
    return [f"{path}:{line}" for path, line in sorted(found)] if launches else []


def _unit_batch_note(asserts: list[str]) -> str:
    return (
        f"{'every' if len(asserts) > 1 else 'a'} caller asserts the batch is 1: "
        f"{', '.join(asserts)}, so it takes one value"
    )


def _tuned_per_value(kernel: Kernel, param: Param) -> bool:
    """``param`` is an entry of the kernel's ``@triton.autotune`` key that the kernel reads:
    the author tunes per value on purpose, so each new value re-runs the autotuner whether or
    not it is constexpr. A key entry the kernel never reads is no such choice (a batch size
    left in the key re-tunes for nothing) and stays a warning."""
    return (
        kernel.autotune is not None
        and param.name in kernel.autotune.key
        and kernel.facts(Usage).reads(param.name)
    )


def _enumerate(items: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _drop_annotation(kernel: Kernel, param: Param) -> Edit | None:
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
    return Edit(Span(name.end_line, name.end_column, end_line, end_column), content)


def _variation(kernel: Kernel, param: Param) -> Severity | None:
    """How often the value changes: per call (WARNING) for a per-call size (rows, tokens,
    batch) or a value a launch in this file computes from one (`ceil(n_rows / sm_count)`,
    `finfo.eps * n_rows`); per configuration (INFO) for a float hyperparameter (`eps`, a scale, a
    dropout probability), which compiles once per value the program uses; None for a model
    dimension or stride, fixed per model shape."""
    passed = [
        (site, argument)
        for site in kernel.launches
        if (argument := site.bound_arguments(kernel).get(param.name)) is not None
    ]
    if tile_size(kernel, param, passed):
        return None  # a tile or chunk size, whatever its name: one per configuration
    if passed and all(generic_feature_size(site, argument) for site, argument in passed):
        return None  # `size` of `num_tokens, top_k, size = x.shape`: the rows are named
    if "stride" not in param.name.lower() and any(
        is_per_call_size(n) for site, argument in passed for n in _host_names(site, argument)
    ):
        return Severity.WARNING
    if passed and all(model_tensor_size(site, argument) for site, argument in passed):
        return None  # `dtable.numel()` of `empty_like(readout_table)`: one per model shape
    named = bool(passed) and all(_host_names(site, argument) for site, argument in passed)
    if is_per_call_size(param.name) and not ((len(param.name) == 1 or named) and passed):
        # a one-letter size (`M`, `L`, `S`) names rows in one kernel and memory slots or
        # layers in another, and `ROWS`/`BS` may hold a config's draft length or a block
        # size: where launches pass it, what they pass decides (above)
        return Severity.WARNING
    if (
        _FLOAT_NAME.match(param.name)
        or isinstance(param.node.default, cst.Float)
        or any(
            isinstance(s.value, float) or isinstance(s.node, cst.Float)
            for s in kernel.value_sources(param.name)
        )
    ):
        return Severity.INFO
    return None


def _host_names(site: LaunchSite, expr: cst.BaseExpression, depth: int = 4) -> set[str]:
    """Host names whose value flows into a launch argument, through the host function's single
    assignments (``rows_per_program = math.ceil(n_rows / sm_count)`` gives ``n_rows``) and
    every value of a name assigned in each branch of an ``if``.
    Only values are followed: not a tensor's attributes (``c.stride(0)`` does not change with
    ``c``'s row count), not containers (``s[4]``), not the tests of ``x if M <= 256 else y``,
    not divisors (``numel // M`` can cancel out), not into comparisons (a truth value), and
    not through bucketing (``next_power_of_2``, ``log2``), which leaves a handful of values."""
    names: set[str] = set()
    pending: list[cst.CSTNode] = [expr]
    while pending:
        node = pending.pop()
        if isinstance(node, cst.Attribute | cst.Subscript):
            continue
        if isinstance(node, cst.Name):
            value = site.host_definitions.get(node.value)
            values = [value] if value is not None else site.host_alternatives.get(node.value, [])
            last = [_last_dimension(site, v) for v in values]
            if len(node.value) == 1 and last and all(last):
                continue  # `M = s.shape[-1]` (in each arm): a feature dimension
            if len(node.value) > 1 or value is None or not _of_names(site, value):
                # a one-letter name computed from other names (`s = int(num_shared_experts)`)
                # is judged by them; from a tensor or a helper (`M, N = x.shape`), by its letter
                names.add(node.value)
            for source in values if depth > 0 else []:  # `NT = cdiv(T, BT)` / `len(indices)`
                names |= _host_names(site, source, depth - 1)
        elif isinstance(node, cst.Call):
            callee = dotted_name(node.func) or ""
            if callee.endswith(("power_of_2", "log2")):
                continue
            arguments = [arg.value for arg in node.args]
            pending.extend(arguments[:1] if callee.endswith("cdiv") else arguments)
        elif isinstance(node, cst.BinaryOperation) and isinstance(
            node.operator, cst.Divide | cst.FloorDivide
        ):
            pending.append(node.left)
        elif isinstance(node, cst.IfExp):
            pending.extend((node.body, node.orelse))
        elif isinstance(node, cst.Comparison) or (
            isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not)
        ):
            continue  # a truth value: two values, whatever it compares (`seq >= LONG`)
        else:
            pending.extend(iter_children(node))
    return names


def _of_names(site: LaunchSite, expr: cst.BaseExpression, depth: int = 3) -> bool:
    """``expr`` is computed from literals, the host function's parameters and named fields
    of an object (``config.num_shared_experts``, what a caller passes for a parameter) alone,
    through arithmetic, pure calls and single assignments (``int(num_shared_experts)``): those
    names say what it holds. Not so from a tensor or a helper (``x.shape``, ``prepare(a)[0]``)."""
    for node in iter_nodes(expr):
        callee = (dotted_name(node.func) or "") if isinstance(node, cst.Call) else "int"
        if isinstance(node, cst.Subscript | cst.Lambda) or callee.rsplit(".", 1)[-1] not in (
            PURE_CALLS - {"get"}
        ):
            return False
        if isinstance(node, cst.Attribute) and node.attr.value == "shape":
            return False
    values = [site.host_definitions.get(name) for name in free_names(expr)]
    return all(v is None or (depth and _of_names(site, v, depth - 1)) for v in values)


def _last_dimension(site: LaunchSite, value: cst.BaseExpression) -> bool:
    """``value`` stands for a tensor's last dimension (``s.shape[-1]``, or ``phi.shape[1]``
    with a holding test ``phi.dim() == 2``)."""
    value = alias_of(site, value)
    return value is not None and is_last_dimension(site, value)
