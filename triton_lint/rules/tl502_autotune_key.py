"""TL502: an autotune ``key`` that names an unused parameter or misses a size."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import libcst as cst

from triton_lint.finding import Category, Finding, Severity
from triton_lint.model.callers import free_names
from triton_lint.model.calls import tl_short
from triton_lint.model.host import assignment_before, dimension_axis
from triton_lint.model.kernel import Kernel, LaunchSite, Param
from triton_lint.model.pointers import dereferenced_params
from triton_lint.model.tree import iter_nodes
from triton_lint.model.usage import Usage, is_per_call_size
from triton_lint.rules.base import Rule

#: Calls whose first argument is a tile shape.
_SHAPED = {"zeros", "full", "empty"}


class AutotuneKey(Rule):
    code = "TL502"
    name = "autotune-key"
    category = Category.PERFORMANCE
    severity = Severity.WARNING
    summary = "Autotune `key` names a parameter the kernel never reads, or omits a loop-bound size"
    rationale = """\
`@triton.autotune` re-runs the benchmark for every new tuple of `key` values. A key entry that
is not a parameter makes the decorator fail; one the kernel never reads (often a value that
changes every step, such as a sequence offset) re-tunes for nothing, costing a full benchmark
sweep per new value. Conversely, an integer size that bounds the kernel's loops (`K` in a
GEMM) but is missing from the key makes the config tuned for the first size be reused for
every other size (information, or a warning when a `@triton.heuristics` entry reads the size:
then a compiled choice depends on it); so does a size a heuristic turns into the other tile
(`BLOCK_N = next_power_of_2(N)` beside a tuned `BLOCK_M`), unless the key names that tile
itself (a warning). Per-call sizes (`T`, `M`,
`seq_len`, `n_rows`) are deliberately kept out of keys, so they are not suggested. An unread
key that only buckets a size on purpose is left alone: a name saying so (`bucket_M`, `M_key`)
or a value every launch in the file computes from another argument it passes
(`_M_NPO2 = triton.next_power_of_2(M)` beside `M`); a dimension read off a tensor's shape
(`B, H, D = x.shape`) is not such a bucket, but it changes only with the input's shape, which
training often keeps fixed (information). A tensor's element count beside dimensions of the
same tensor that the kernel reads (`num_elements = x.numel()` with `rows, cols = x.shape`
passed and read) buckets those sizes into their product and is left alone, as is a key entry
the grid is built from: the grid holds it (even one a loop assigns before the launch), every
size it is computed from (`M=E * N` beside a grid `(E * (N // block), ...)`), or a host size
it is a factor of (`B` beside `grid = (M,)` with `M = B * L`). An unread key of
a kernel the indexed project never launches is information, saying that no launch was found
(a key that is not a parameter stays an error: the decorator fails whether or not it runs)."""
    fix = """\
Key on the sizes that change the best config (`key=["M", "N", "K"]`) and nothing else."""
    bad = """\
import triton
import triton.language as tl


@triton.autotune(
    configs=[triton.Config({"BLOCK_K": 64}), triton.Config({"BLOCK_K": 128})],
    key=["N", "step"],  # <- TL502
)
@triton.jit
def row_dot(a_ptr, b_ptr, out_ptr, N, K, step, BLOCK_K: tl.constexpr):  # <- TL502
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK_K,), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        offs = k + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + row * K + offs, mask=offs < K, other=0.0)
        b = tl.load(b_ptr + offs, mask=offs < K, other=0.0)
        acc += a * b
    tl.store(out_ptr + row, tl.sum(acc, axis=0), mask=row < N)
"""
    good = """\
import triton
import triton.language as tl


@triton.autotune(
    configs=[triton.Config({"BLOCK_K": 64}), triton.Config({"BLOCK_K": 128})],
    key=["N", "K"],
)
@triton.jit
def row_dot(a_ptr, b_ptr, out_ptr, N, K, BLOCK_K: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK_K,), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        offs = k + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + row * K + offs, mask=offs < K, other=0.0)
        b = tl.load(b_ptr + offs, mask=offs < K, other=0.0)
        acc += a * b
    tl.store(out_ptr + row, tl.sum(acc, axis=0), mask=row < N)
"""

    def check_kernel(self, kernel: Kernel) -> Iterator[Finding]:
        tune = kernel.autotune
        if tune is None or not tune.key_is_literal:
            return
        usage = kernel.facts(Usage)
        key_node = next(
            (a.value for a in tune.node.args if a.keyword is not None and a.keyword.value == "key"),
            tune.node,
        )
        for entry in tune.key:
            param = kernel.params_by_name.get(entry)
            if param is None:
                if any(p.node.star for p in kernel.params):
                    continue  # **kwargs kernels
                yield self.finding(
                    kernel,
                    key_node,
                    f"autotune key `{entry}` is not a parameter of `{kernel.name}`: the "
                    "decorator fails",
                    severity=Severity.ERROR,
                )
            elif (
                not usage.reads(entry)
                and not _keying_only(entry)
                and not _bucket_of_another_argument(kernel, entry)
                and not _sizes_the_grid(kernel, entry)
                and not _total_of_read_dimensions(kernel, usage, entry)
            ):
                if kernel.unlaunched:
                    tier = " (info: no launch of this kernel was found in the project)"
                elif _passes_a_dimension(kernel, entry):
                    tier = " (info: a size of the input, new only when the shapes change)"
                else:
                    tier = ""
                yield self.finding(
                    kernel,
                    key_node,
                    f"autotune key `{entry}` is never read by the kernel: every new value "
                    f"re-runs the benchmark for nothing{tier}",
                    severity=Severity.INFO if tier else None,
                )
        tuned = set(tune.key) | {name for c in tune.configs for name in c.values}
        pointers = dereferenced_params(kernel)
        loops = usage.loop_bound_params()
        for param in _sizes_choosing_the_build(kernel, usage, set(tune.key)):
            if param.is_constexpr or param.name in tuned or param.name in pointers:
                continue
            if is_per_call_size(re.sub(r"_(q|k|kv)$", "", param.name)):
                continue  # keying on a per-call size (`seqlen_q`) would re-tune every step
            if "ptr" in param.name.lower() or "stride" in param.name.lower():
                continue
            heuristic = _heuristic_reading(kernel, param.name)
            because = (
                f" (the heuristic for `{heuristic}` reads it, so the best config depends on it)"
                if heuristic
                else ""
            )
            role = "bounds a loop" if param in loops else "sets a tile shape"
            yield self.finding(
                kernel,
                param.node.name,
                f"`{param.name}` {role} but is not in the autotune key: the config tuned "
                f"for the first `{param.name}` is reused for every other value{because}",
                severity=Severity.WARNING if heuristic else Severity.INFO,
            )
            break


def _sizes_choosing_the_build(kernel: Kernel, usage: Usage, key: set[str]) -> list[Param]:
    """The parameters whose value changes what the tuned config runs: the loop bounds, then
    the sizes a ``@triton.heuristics`` entry turns into a tile shape (``BLOCK_N =
    next_power_of_2(N)`` used in ``tl.arange``: the tile beside the tuned one grows with
    ``N``). A heuristic that only tests an argument (``HAS_SCALE``) chooses no shape, and a
    size whose tile is itself in the key (``key=["BLOCK_SIZE_T"]``) is keyed by its bucket."""
    loops = usage.loop_bound_params()
    shapes = _tile_shape_names(kernel)
    read = []
    for param in kernel.params:
        if param in loops or param.is_constexpr:
            continue
        tiles = {t for t, expr in kernel.heuristics.items() if _reads_arg(expr, param.name)}
        if tiles & shapes and not tiles & key:
            read.append(param)
    return loops + read


def _tile_shape_names(kernel: Kernel) -> set[str]:
    """Names in the extents of ``tl.arange`` and the shapes of ``tl.zeros``/``tl.full``: the
    tile sizes the compiled kernel is built with."""
    names: set[str] = set()
    for call in iter_nodes(kernel.node.body):
        if not isinstance(call, cst.Call):
            continue
        short = tl_short(kernel, call)
        args = call.args if short == "arange" else call.args[:1] if short in _SHAPED else ()
        for arg in args:
            names |= {n.value for n in iter_nodes(arg.value) if isinstance(n, cst.Name)}
    return names


def _keying_only(name: str) -> bool:
    """A parameter passed only to key the autotuner (``bucket_M``, ``M_key``): deliberate."""
    lowered = name.lower()
    return any(word in lowered for word in ("bucket", "key", "hint", "tune"))


def _heuristic_reading(kernel: Kernel, param: str) -> str | None:
    """The ``@triton.heuristics`` entry whose function reads ``args["param"]``: the size
    changes a compiled choice, so a key without it reuses a config across those choices."""
    return next((name for name, expr in kernel.heuristics.items() if _reads_arg(expr, param)), None)


def _reads_arg(expr: cst.BaseExpression, param: str) -> bool:
    """A heuristic's function reads ``args["param"]``."""
    return any(
        isinstance(node, cst.SubscriptElement)
        and isinstance(node.slice, cst.Index)
        and isinstance(node.slice.value, cst.SimpleString)
        and node.slice.value.evaluated_value == param
        for node in iter_nodes(expr)
    )


def _reads_a_dimension(expr: cst.BaseExpression) -> bool:
    """``q.shape[0]``, ``x.size(1)``, ``x.numel()``, ``len(x)``: a size read off a tensor,
    not a bucket computed from another size."""
    while isinstance(expr, cst.Subscript):
        expr = expr.value
    if isinstance(expr, cst.Attribute):
        return expr.attr.value == "shape"
    if isinstance(expr, cst.Call):
        func = expr.func
        if isinstance(func, cst.Attribute):
            return func.attr.value in {"size", "numel", "dim"}
        return isinstance(func, cst.Name) and func.value == "len"
    return False


def _passes_a_dimension(kernel: Kernel, param: str) -> bool:
    """A launch passes a size read off a tensor (``B`` of ``B, H, D = x.shape``): the tuner
    re-runs once per input shape, which training often keeps fixed (information)."""
    return any(
        _reads_a_dimension(_host_value(site, argument))
        for site in kernel.launches
        if (argument := site.bound_arguments(kernel).get(param)) is not None
    )


def _bucket_of_another_argument(kernel: Kernel, param: str) -> bool:
    """Every launch in the file computes ``param`` from another argument it passes
    (``next_power_of_2(M)`` beside ``M``): the key buckets that size on purpose."""
    code = kernel.module.module.code_for_node
    passing = [s for s in kernel.launches if param in s.bound_arguments(kernel)]
    for site in passing:
        bound = site.bound_arguments(kernel)
        argument = _host_value(site, bound[param])
        others = {code(expr) for name, expr in bound.items() if name != param}
        used = {node.value for node in iter_nodes(argument) if isinstance(node, cst.Name)}
        if isinstance(argument, cst.Name) or _reads_a_dimension(argument) or not used & others:
            return False
    return bool(passing)


def _total_of_read_dimensions(kernel: Kernel, usage: Usage, param: str) -> bool:
    """Every launch passes ``x.numel()`` for ``param`` beside dimensions of ``x`` that the
    kernel reads (``rows, cols = x.shape``): the key follows the sizes the kernel works on,
    bucketed into their product, as a key on ``rows`` and ``cols`` would."""
    code = kernel.module.module.code_for_node
    passing = [s for s in kernel.launches if param in s.bound_arguments(kernel)]
    for site in passing:
        bound = site.bound_arguments(kernel)
        total = _host_value(site, bound[param])
        if not (
            isinstance(total, cst.Call)
            and isinstance(total.func, cst.Attribute)
            and total.func.attr.value == "numel"
        ):
            return False
        tensor = code(total.func.value)
        read = [v for name, v in bound.items() if name != param and usage.reads(name)]
        if not any(_dimension_owner(_host_value(site, v), code) == tensor for v in read):
            return False
    return bool(passing)


def _dimension_owner(expr: cst.BaseExpression, code: Callable[[cst.CSTNode], str]) -> str | None:
    """The tensor ``x`` of a dimension ``x.shape[i]`` or ``x.size(i)``."""
    if dimension_axis(expr) is None:
        return None
    if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Attribute):
        return code(expr.value.value)
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        return code(expr.func.value)
    return None


def _host_value(site: LaunchSite, argument: cst.BaseExpression) -> cst.BaseExpression:
    """What a launch argument that is a host name holds: its single definition, or the
    assignment that last runs before the launch (``NB = cdiv(T, 2048)`` in the branch that
    launches)."""
    if not isinstance(argument, cst.Name):
        return argument
    if argument.value in site.host_definitions:
        return site.host_definitions[argument.value]
    if site.function is not None:  # the function around the launch (a method too)
        value = assignment_before(site.function, site.call, argument.value)
        if value is not None:
            return value
    return argument


def _sizes_the_grid(kernel: Kernel, param: str) -> bool:
    """A launch sizes its grid with the value it passes for ``param`` (``grid = lambda
    meta: (M, cdiv(K, meta["TILE_K"]))`` beside ``M``), or with the sizes that value is
    computed from (``M=E * N`` beside a grid ``(E * (N // block), ...)``), or a factor of a
    host size the grid holds (``B`` beside ``grid = (M,)`` with ``M = B * L``): the number of
    programs changes with it, and so does the best config."""
    code = kernel.module.module.code_for_node
    for site in kernel.launches:
        argument = site.bound_arguments(kernel).get(param)
        if argument is None:
            continue
        grid = site.grid_dims or [_host_value(site, site.grid)]
        grid = grid + [  # the sizes a host name of the grid is computed from (`M = B * L`)
            value
            for dim in grid
            for n in iter_nodes(dim)
            if isinstance(n, cst.Name) and (value := _host_value(site, n)) is not n
        ]
        texts = {code(n) for dim in grid for n in iter_nodes(dim) if isinstance(n, cst.Name)}
        texts |= {
            code(n).strip("\"'")
            for dim in grid
            for n in iter_nodes(dim)
            if isinstance(n, cst.SimpleString)
        }
        names = free_names(argument) if _plain_arithmetic(argument) else set()
        if code(argument) in texts or param in texts or (names and names <= texts):
            return True  # the value, or every size it is computed from (`M=E * N`)
    return False


def _plain_arithmetic(expr: cst.BaseExpression) -> bool:
    """``expr`` combines host names and literals with operators only (``E * N``): a tensor's
    dimension (``x.shape[0]``) is not the same size as another dimension of ``x`` the grid
    uses, though both read ``x``."""
    return not any(
        isinstance(n, cst.Attribute | cst.Subscript | cst.Call) for n in iter_nodes(expr)
    )
