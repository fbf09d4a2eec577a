"""TL203's test that a constexpr's value is already carried by another constexpr the kernel
needs at compile time: every launch passes it a factor of what it passes the other
(``BATCH=batch`` beside ``ROWS=batch * seq * heads``, ``SEQ=x.shape[1]`` beside ``M=rows``
with ``rows = x.numel() // 3072``), so the kernel compiles once per value of the other anyway
and dropping the annotation saves no compilation."""

from __future__ import annotations

import libcst as cst

from triton_lint.model.host import dimension_axis, is_shape
from triton_lint.model.kernel import Kernel, LaunchSite, Param
from triton_lint.model.names import dotted_name

#: Host calls whose value keeps every factor of their first argument (not ``cdiv``, which
#: rounds: ``cdiv(blocks, world)`` takes one value for several ``blocks``).
_KEEPS_FACTORS = {"int", "abs"}


def carrying_constexpr(kernel: Kernel, param: Param, needed: set[str]) -> str | None:
    """The name of another constexpr in ``needed`` (used at compile time) of which every
    launch passing ``param`` passes a multiple of ``param``'s value, else None."""
    bindings = [(site, site.bound_arguments(kernel)) for site in kernel.launches]
    passing = [(site, bound) for site, bound in bindings if param.name in bound]
    if not passing:
        return None
    for other in kernel.params:
        if other.name == param.name or not other.is_constexpr or other.name not in needed:
            continue
        if all(
            other.name in bound and _factor_of(kernel, site, bound[param.name], bound[other.name])
            for site, bound in passing
        ):
            return other.name
    return None


def _factor_of(
    kernel: Kernel, site: LaunchSite, value: cst.BaseExpression, total: cst.BaseExpression
) -> bool:
    """``value`` (or what a chain of host names binds it to) is a factor of ``total``: one of
    its operands through products, dividends of a literal divisor, ``int`` and single host
    assignments, or a dimension of a tensor whose ``numel()`` is one."""
    factors = _factors(kernel, site, total)
    code = kernel.module.module.code_for_node
    for _ in range(3):
        if code(value) in factors:
            return True
        if not (isinstance(value, cst.Name) and value.value in site.host_definitions):
            break
        value = site.host_definitions[value.value]
    tensor = _dimension_owner(value)
    return tensor is not None and f"numel:{tensor}" in factors


def _dimension_owner(value: cst.BaseExpression) -> str | None:
    """The tensor ``x`` of ``x.shape[i]``, ``x.size(i)`` or ``x.shape`` (what an unpacking
    ``b, s = x.shape`` binds each name to)."""
    if is_shape(value):
        owner: cst.BaseExpression = value
    elif isinstance(value, cst.Subscript) and dimension_axis(value) is not None:
        owner = value.value
    elif isinstance(value, cst.Call) and dimension_axis(value) is not None:
        owner = value.func
    else:
        return None
    return dotted_name(owner.value) if isinstance(owner, cst.Attribute) else None


def _factors(kernel: Kernel, site: LaunchSite, total: cst.BaseExpression) -> set[str]:
    """The source of every factor of ``total``, and ``numel:x`` for each ``x.numel()``."""
    code = kernel.module.module.code_for_node
    found: set[str] = set()
    pending: list[tuple[cst.BaseExpression, int]] = [(total, 4)]
    while pending:
        node, depth = pending.pop()
        found.add(code(node))
        if isinstance(node, cst.Name):
            if depth and node.value in site.host_definitions:
                pending.append((site.host_definitions[node.value], depth - 1))
        elif isinstance(node, cst.BinaryOperation):
            if isinstance(node.operator, cst.Multiply):
                pending.extend(((node.left, depth), (node.right, depth)))
            elif isinstance(node.operator, cst.FloorDivide | cst.Divide) and isinstance(
                node.right, cst.Integer
            ):
                pending.append((node.left, depth))  # `x.numel() // 3072`: the other dims
        elif isinstance(node, cst.Call):
            callee = (dotted_name(node.func) or "").rsplit(".", 1)[-1]
            if callee in _KEEPS_FACTORS and node.args:
                pending.append((node.args[0].value, depth))
            elif callee == "numel" and isinstance(node.func, cst.Attribute) and not node.args:
                found.add(f"numel:{dotted_name(node.func.value)}")
    return found
