"""What the same-file launches pass for a kernel parameter, read from the host code.

The kernel alone cannot tell a row stride from a head stride; the launch usually can:
``x.stride(0)`` steps over the outermost dimension, so an index times it spans the whole
tensor, while ``x.stride(2)`` steps inside one outer slice. These facts are read from the
launch's arguments and the host function's single assignments (``s0, s1 = x.stride()``).
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from triton_lint.model.evaluate import evaluate
from triton_lint.model.kernel import Kernel, LaunchSite
from triton_lint.model.names import dotted_name

_MAX_HOPS = 8  # host names followed before giving up (``a = b``, ``b = x.stride(0)``)


@dataclass(frozen=True)
class Stride:
    """``tensor.stride(axis)`` passed at a launch."""

    tensor: str
    axis: int
    node: cst.BaseExpression  # the launch argument as written
    site: LaunchSite

    @property
    def inner(self) -> bool:
        """A stride inside the outermost dimension (``x.stride(1)``, ``x.stride(-1)``)."""
        return self.axis > 0 or self.axis == -1


def launch_strides(kernel: Kernel, param: str) -> list[Stride] | None:
    """The stride each same-file launch passes for ``param``; None when no launch passes it,
    or when one passes anything but a single tensor stride (a conditional ``0`` aside)."""
    strides: list[Stride] = []
    for site in kernel.launches:
        argument = site.bound_arguments(kernel).get(param)
        if argument is None:
            continue
        found = _strides_of(site, argument, _MAX_HOPS)
        if not found:
            return None
        strides.extend(Stride(tensor, axis, argument, site) for tensor, axis in found)
    return strides or None


def _strides_of(
    site: LaunchSite, expr: cst.BaseExpression, hops: int
) -> list[tuple[str, int]] | None:
    """``(tensor, axis)`` for each value ``expr`` can take, or None when one is not a stride."""
    if isinstance(expr, cst.IfExp):
        return _every_stride(site, [expr.body, expr.orelse], hops)
    if isinstance(expr, cst.Name):
        values = site.host_alternatives.get(expr.value, [])
        if expr.value in site.host_definitions:
            values = [site.host_definitions[expr.value]]
        return _every_stride(site, values, hops - 1) if hops > 0 else None
    if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Name) and hops > 0:
        # `strides[1]` with `strides = q.stride()` in the host function
        value = site.host_definitions.get(expr.value.value)
        if value is not None:
            return _strides_of(site, expr.with_changes(value=value), hops - 1)
    stride = stride_call(expr)
    return None if stride is None else [stride]


def _every_stride(
    site: LaunchSite, values: list[cst.BaseExpression], hops: int
) -> list[tuple[str, int]] | None:
    """The strides of every value a launch argument can take; a literal ``0`` (a broadcast
    operand) adds nothing, anything else that is not a stride makes the answer None."""
    candidates = [value for value in values if not _is_zero(value)]
    found = [_strides_of(site, value, hops) for value in candidates]
    if not candidates or any(f is None for f in found):
        return None
    return [pair for f in found for pair in f or ()]


def stride_call(expr: cst.BaseExpression) -> tuple[str, int] | None:
    """``x.stride(k)``, ``x.stride(dim=k)`` or ``x.stride()[k]`` with a literal ``k``."""
    axis_node: cst.BaseExpression | None = None
    call = expr
    if isinstance(expr, cst.Subscript) and len(expr.slice) == 1:
        index = expr.slice[0].slice
        if not isinstance(index, cst.Index) or not isinstance(expr.value, cst.Call):
            return None
        axis_node, call = index.value, expr.value
        if call.args:
            return None
    if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute):
        return None
    if call.func.attr.value != "stride":
        return None
    tensor = dotted_name(call.func.value)
    if tensor is None:
        return None
    if axis_node is None:
        if len(call.args) != 1 or (call.args[0].keyword and call.args[0].keyword.value != "dim"):
            return None
        axis_node = call.args[0].value
    axis = _literal_int(axis_node)
    return None if axis is None else (tensor, axis)


def _literal_int(node: cst.BaseExpression) -> int | None:
    value = evaluate(node)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _is_zero(node: cst.BaseExpression) -> bool:
    return _literal_int(node) == 0
