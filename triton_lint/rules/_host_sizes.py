"""What host code around a launch says about how many values a size parameter takes: a
literal range a host test puts on it, that it is the size of a model parameter, a tile (a
loop step, a divisor the host asserts) or a feature dimension named beside the rows."""

from __future__ import annotations

import re

import libcst as cst

from triton_lint.model.evaluate import UNKNOWN
from triton_lint.model.host import dimension_axis
from triton_lint.model.host_tests import asserted_divisor, literal_range
from triton_lint.model.kernel import Kernel, LaunchSite, Param
from triton_lint.model.names import dotted_name
from triton_lint.model.usage import Usage, is_per_call_size

#: The most values a host range test may leave a parameter (`assert 2 <= m <= 8`: 7).
_FEW_VALUES = 16


def range_asserted(kernel: Kernel, site: LaunchSite, argument: cst.BaseExpression) -> bool:
    """The launch runs under a host test that bounds the argument between literals a few
    values apart (``assert 2 <= m <= 8``, ``if m <= 8:``): a handful of compilations, the
    author's choice."""
    bounds = literal_range(kernel, site, argument)
    return bounds is not None and bounds[1] - bounds[0] + 1 <= _FEW_VALUES


#: Host tensors that hold model parameters (a weight, a bias, a learned lookup table), not
#: per-request tables (`block_table`, `page_table`), whose sizes change with the batch.
_MODEL_TENSOR = re.compile(r"(^|_)(weight|bias|table|embedding|codebook|lut)s?$", re.IGNORECASE)
_REQUEST_TABLE = re.compile(r"(block|page|req|token|slot|kv|seq|cache|index)_?tables?$", re.I)
#: Host calls that build a tensor of another's shape, or view it.
_SAME_SHAPE = {"empty_like", "zeros_like", "ones_like", "full_like", "contiguous", "float"}
_SAME_SHAPE |= {"to", "detach", "clone", "half", "bfloat16"}


def model_tensor_size(site: LaunchSite, expr: cst.BaseExpression) -> bool:
    """``x.numel()``, ``x.shape[i]`` or ``x.size(i)`` of a tensor that is, or has the shape
    of, a model parameter (``dtable = torch.empty_like(readout_table)``): a model size."""
    if isinstance(expr, cst.Name) and expr.value in site.host_definitions:
        expr = site.host_definitions[expr.value]
    if (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Attribute)
        and expr.func.attr.value == "numel"
    ):
        tensor = expr.func.value
    elif isinstance(dimension_axis(expr), int):
        owner = expr.value if isinstance(expr, cst.Subscript) else expr.func
        assert isinstance(owner, cst.Attribute)
        tensor = owner.value
    else:
        return False
    return is_model_tensor(site, tensor)


def is_model_tensor(site: LaunchSite, tensor: cst.BaseExpression) -> bool:
    """``tensor`` is, or has the shape of, a model parameter (a weight, a bias, a learned
    table) through the host function's single assignments and same-shape calls
    (``torch.empty_like(readout_table)``, ``weight.contiguous()``). A name on the way counts:
    the launching function's parameter ``weight`` stays a weight whatever a caller names the
    tensor it passes (``wo_a_bf16_gemv(o, wo_a)``)."""
    for _ in range(4):
        if _names_model_tensor(tensor):
            return True
        if isinstance(tensor, cst.Name) and tensor.value in site.host_definitions:
            tensor = site.host_definitions[tensor.value]
        elif (
            isinstance(tensor, cst.Call)
            and (dotted_name(tensor.func) or "").rsplit(".", 1)[-1] in _SAME_SHAPE
        ):
            func = tensor.func
            if isinstance(func, cst.Attribute) and not tensor.args:
                tensor = func.value  # `x.contiguous()`, `x.float()`
            elif tensor.args and (dotted_name(tensor.func) or "").endswith("_like"):
                tensor = tensor.args[0].value
            elif isinstance(func, cst.Attribute):
                tensor = func.value  # `x.to(dtype)`
            else:
                return False
        else:
            break
    return _names_model_tensor(tensor)


def _names_model_tensor(tensor: cst.BaseExpression) -> bool:
    """``weight``, ``self.bias``, ``readout_table``: a name that says model parameter."""
    last = (dotted_name(tensor) or "").rsplit(".", 1)[-1]
    return bool(_MODEL_TENSOR.search(last)) and not _REQUEST_TABLE.search(last)


def fixed_values(kernel: Kernel, param: Param) -> bool:
    """Set by autotune/heuristics, or every launch in the file passes a known constant or a
    value a host test bounds to a few values (`range_asserted`)."""
    sources = kernel.value_sources(param.name)
    if any(s.origin in ("autotune", "heuristics") for s in sources):
        return True
    launches = [s for s in sources if s.origin == "launch"]
    if launches and all(s.value is not UNKNOWN for s in launches):
        return True
    passing = [
        (site, argument)
        for site in kernel.launches
        if (argument := site.bound_arguments(kernel).get(param.name)) is not None
    ]
    return bool(passing) and all(range_asserted(kernel, *pair) for pair in passing)


def tile_size(
    kernel: Kernel, param: Param, passed: list[tuple[LaunchSite, cst.BaseExpression]]
) -> bool:
    """The kernel steps a loop by ``param`` (``range(0, end, S)``: a chunk size), or every
    launch passes a value a host test asserts divides another (``assert h % m_size == 0``:
    a grouping factor)."""
    steps = kernel.facts(Usage).loop_steps
    if any(isinstance(step, cst.Name) and step.value == param.name for step in steps):
        return True
    return bool(passed) and all(asserted_divisor(kernel, site, arg) for site, arg in passed)


#: Size names that say nothing of which dimension they count.
_GENERIC = {"size", "length", "len", "total"}


def generic_feature_size(site: LaunchSite, argument: cst.BaseExpression) -> bool:
    """``argument`` is a host name that says nothing of what it counts (``size``) bound to a
    later dimension of a tensor whose first dimension the launching function binds to a
    per-call name (``num_tokens, top_k, size = inputs.shape``): a feature dimension."""
    if not (isinstance(argument, cst.Name) and argument.value.lower() in _GENERIC):
        return False
    value = site.host_definitions.get(argument.value)
    if value is None or dimension_axis(value) in (None, 0):
        return False
    owner = value.value if isinstance(value, cst.Subscript) else value.func
    if not isinstance(owner, cst.Attribute):
        return False
    tensor = dotted_name(owner.value)
    for name, other in site.host_definitions.items():
        if name.lower() in _GENERIC or len(name) == 1 or not is_per_call_size(name):
            continue
        if dimension_axis(other) == 0:
            first = other.value if isinstance(other, cst.Subscript) else other.func
            if isinstance(first, cst.Attribute) and dotted_name(first.value) == tensor:
                return tensor is not None
    return False


def alias_of(site: LaunchSite, value: cst.BaseExpression | None) -> cst.BaseExpression | None:
    """What a chain of plain names stands for (``S`` bound to ``M``, ``M = s.shape[-1]``)."""
    for _ in range(3):
        if not (isinstance(value, cst.Name) and value.value in site.host_definitions):
            break
        value = site.host_definitions[value.value]
    return value
