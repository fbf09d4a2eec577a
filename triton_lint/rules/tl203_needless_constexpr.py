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
from triton_lint.model.evaluate import evaluate
from triton_lint.model.host import dimension_axis
from triton_lint.model.kernel import Kernel, LaunchSite, Param
from triton_lint.model.names import dotted_name
from triton_lint.model.tree import iter_children, iter_nodes
from triton_lint.model.usage import Usage, is_flag_like, is_per_call_size
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
#: Largest/smallest finite values of the narrow types quantization kernels clamp to: float8
#: e4m3fn (448), e4m3fnuz (240, or 224 as vLLM uses on ROCm), e5m2 (57344), fp4 e2m1 (6),
#: int8 (127, -128), uint8 (255), float16 (65504), bfloat16 and float32.
_DTYPE_LIMITS = {448.0, 240.0, 224.0, 57344.0, 6.0, 127.0, 128.0, 255.0, 65504.0}
_DTYPE_LIMITS |= {3.3895313892515355e38, 3.4028234663852886e38}
#: Host calls whose result depends only on a dtype.
_DTYPE_CALLS = {"finfo", "iinfo"}
#: Host calls whose result depends on their arguments alone (``table.get(key)``, ``math.ceil``).
_PURE_CALLS = {"float", "int", "abs", "min", "max", "round", "ceil", "floor", "get", "cdiv", "str"}
_PURE_CALLS |= {"next_power_of_2", "split", "rsplit", "replace", "lower", "upper", "strip"}
_PURE_CALLS |= {"removeprefix"}


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
of a called jit function, or a `tl.static_assert` operand. Parameters set by
`@triton.autotune` configs or `@triton.heuristics`, boolean switches and parameters every
launch in the file passes as a literal take a small fixed set of values and are left alone,
as are values a host test bounds to a few literals where the kernel is launched (`assert 2
<= m <= 8`). So are values that change only with something that recompiles the kernel
anyway: values every launch in the file computes from dtype information, from the launch's
other constexpr arguments or from module-level constants alone (`torch.finfo(x.dtype).max`,
a table indexed by a dtype, `str(x.dtype).split(".")[-1]`, `224.0 if use_fnuz else 448.0` or
`triton.cdiv(NT, MAX_NT)` with `use_fnuz`, `NT` and `MAX_NT` also passed as constexprs),
values the host asserts equal to such a value (`assert HC * HC + 2 * HC == M` with `HC` also
passed as a constexpr) and, when no launch in the file passes one, a `*_MAX`/`*_MIN`
parameter whose float default is a narrow type's limit (`448.0` for float8 e4m3, `127.0` for
int8). Only parameters whose values change from call to call are reported (per-call sizes
such as rows, tokens, batch or `n_elements`, values a launch in the file computes from one,
such as `math.ceil(n_rows / sm_count)`, and float hyperparameters such as `eps`, a scale or
a dropout probability), whether the kernel uses them as runtime values or never uses them at
all. Model dimensions, strides and tile sizes are left alone: they cost one compilation per
model shape, and constant-folding them usually pays for it. A one-letter size (`M`, `L`,
`S`) means rows in one kernel and layers or memory slots in another, so where launches in
the file pass it, what they pass decides: `M` from `M, N = x.shape` varies per call,
`L=num_layers` or a tensor's last dimension (`s.shape[-1]`, `_, _, L = s.shape`, or `S` of
`B, T, H, S = g.shape`) does not, nor does the size of a tensor shaped like a model
parameter (`empty_like(readout_table).numel()`), and a one-letter host name computed from
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

Findings are ranked by how often the value changes. A per-call size, or a value a launch in
the file computes from one (`finfo.eps * n_rows`), is a warning: it recompiles as batches and
sequence lengths change. A float hyperparameter is information: it compiles once per value
the program configures, which costs something only when it is swept or scheduled. All 11
shipped-and-fixed TL203 bugs in `bench/recall.tsv` were per-call sizes; hyperparameter
constexprs are common in maintained libraries, some deliberately (to fold the constant).

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
        for param, severity in self._needless(kernel):
            used = kernel.facts(Usage).reads(param.name)
            what = "only used as a runtime value" if used else "never used"
            tiers.setdefault(severity, []).append((param, what))
        for severity in (Severity.WARNING, Severity.INFO):
            if severity in tiers:
                yield self._tier_finding(kernel, severity, tiers[severity])

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
            if _compile_key_constant(kernel, param):
                continue  # changes only with a dtype, which recompiles the kernel anyway
            severity = _variation(kernel, param)
            if severity is not None:  # None: a model dimension or stride, one per model shape
                yield param, severity

    def _tier_finding(
        self, kernel: Kernel, severity: Severity, params: list[tuple[Param, str]]
    ) -> Finding:
        tier = (
            " (info: a hyperparameter, one compilation per configured value unless the "
            "program sweeps or schedules it)"
            if severity is Severity.INFO
            else ""
        )
        (first, what), rest = params[0], params[1:]
        if rest:
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
            if len(node.value) == 1 and dimension_axis(alias_of(site, value)) == -1:
                continue  # `M = s.shape[-1]`: a feature dimension, whatever its letter
            if len(node.value) > 1 or value is None or not _of_names(site, value):
                # a one-letter name computed from other names (`s = int(num_shared_experts)`)
                # is judged by them; from a tensor or a helper (`M, N = x.shape`), by its letter
                names.add(node.value)
            values = [value] if value is not None else site.host_alternatives.get(node.value, [])
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
            _PURE_CALLS - {"get"}
        ):
            return False
        if isinstance(node, cst.Attribute) and node.attr.value == "shape":
            return False
    values = [site.host_definitions.get(name) for name in free_names(expr)]
    return all(v is None or (depth and _of_names(site, v, depth - 1)) for v in values)


#: What a launch argument is computed from: constants, values already in the compile key
#: (dtype information, other constexpr arguments of the launch), or anything else.
_CONST, _KEYED, _OTHER = 0, 1, 2


def _compile_key_constant(kernel: Kernel, param: Param) -> bool:
    """Every launch in the file passes a value derived from what already selects the binary
    (dtype information, the launch's other constexpr arguments) or from module-level
    constants; with no launch passing it, a range-bound name whose default is a dtype limit."""
    passing = [site for site in kernel.launches if param.name in site.bound_arguments(kernel)]
    if passing:
        return all(
            _HostOrigin(kernel, site, param.name).of_argument() <= _KEYED for site in passing
        )
    if param.default is None or not re.search("max|min", param.name, re.IGNORECASE):
        return False
    value = evaluate(param.default)
    return isinstance(value, float) and abs(value) in _DTYPE_LIMITS


class _HostOrigin:
    """What a launch argument is computed from: constants (literals, module-level names), values
    in the compile key (dtype information, the launch's other constexpr arguments), or anything
    else (parameters, shapes, unknown calls), following the host function's single
    assignments."""

    def __init__(self, kernel: Kernel, site: LaunchSite, param: str) -> None:
        self.kernel = kernel
        self.site = site
        self.bound = site.bound_arguments(kernel)
        self.argument = self.bound[param]
        # Arguments of the other constexpr parameters: a value chosen by one of them adds no
        # compilation of its own.
        module = kernel.module.module
        self.flags = {
            module.code_for_node(expr)
            for name, expr in self.bound.items()
            if name != param and kernel.params_by_name[name].is_constexpr
        }
        self.visiting: set[str] = set()

    def of_argument(self) -> int:
        return self.of(self.argument)

    def of(self, node: cst.CSTNode) -> int:
        if self.kernel.module.module.code_for_node(node) in self.flags:
            return _KEYED  # also passed as another constexpr: `NT_GRID = cdiv(NT, MAX)`
        if isinstance(node, cst.Integer | cst.Float | cst.Imaginary | cst.SimpleString):
            return _CONST
        if isinstance(node, cst.Name):
            return self._name(node.value)
        if isinstance(node, cst.Attribute):
            return _KEYED if node.attr.value == "dtype" else self.of(node.value)
        if isinstance(node, cst.Call):
            return self._call(node)
        if isinstance(node, cst.Subscript):
            parts = [self.of(node.value)]
            for element in node.slice:
                index = element.slice
                if isinstance(index, cst.Index):
                    parts.append(self.of(index.value))
                else:
                    parts.extend(self.of(p) for p in (index.lower, index.upper, index.step) if p)
            return max(parts)
        if isinstance(node, cst.IfExp):
            return max(self.of(node.test), self.of(node.body), self.of(node.orelse))
        if isinstance(node, cst.UnaryOperation):
            return self.of(node.expression)
        if isinstance(node, cst.BinaryOperation | cst.BooleanOperation):
            return max(self.of(node.left), self.of(node.right))
        if isinstance(node, cst.Comparison):
            return max([self.of(node.left), *(self.of(c.comparator) for c in node.comparisons)])
        if isinstance(node, cst.Tuple | cst.List):
            return max([_CONST, *(self.of(el.value) for el in node.elements)])
        return _OTHER

    def _name(self, name: str) -> int:
        if name in ("True", "False", "None"):
            return _CONST
        site = self.site
        if name in self.visiting:
            return _OTHER
        self.visiting.add(name)
        try:
            if self._asserted_keyed(name):
                return _KEYED  # `assert HC * HC + 2 * HC == M`: M changes only with HC
            if name in site.host_definitions:
                return self.of(site.host_definitions[name])
        finally:
            self.visiting.discard(name)
        if name in site.host_locals:
            # A parameter or reassigned local: only its name can tell it holds a dtype.
            return _KEYED if name.lower().endswith("dtype") else _OTHER
        if name in self.kernel.module.module_names:
            return _CONST  # a module-level constant: one value per process
        return _OTHER

    def _asserted_keyed(self, name: str) -> bool:
        """The host asserts ``name`` equal to a value in the compile key (an expression of
        the launch's other constexpr arguments, of dtypes or of constants)."""
        for test in self.site.holding_tests():
            if not (
                isinstance(test, cst.Comparison)
                and len(test.comparisons) == 1
                and isinstance(test.comparisons[0].operator, cst.Equal)
            ):
                continue
            left, right = test.left, test.comparisons[0].comparator
            for this, other in ((left, right), (right, left)):
                if isinstance(this, cst.Name) and this.value == name and self.of(other) <= _KEYED:
                    return True
        return False

    def _call(self, node: cst.Call) -> int:
        func = node.func
        if isinstance(func, cst.Attribute):
            callee = func.attr.value
        elif isinstance(func, cst.Name):
            callee = func.value
        else:
            return _OTHER
        if callee in _DTYPE_CALLS or callee.lower().endswith("dtype"):
            return _KEYED  # torch.finfo(x.dtype), current_platform.fp8_dtype()
        if callee not in _PURE_CALLS:
            return _OTHER
        parts = [self.of(arg.value) for arg in node.args]
        if isinstance(func, cst.Attribute):
            parts.append(self.of(func.value))  # the table of `table.get(key)`
        return max([_CONST, *parts])
