"""TL203's test that a constexpr's value is already carried by another constexpr that stays
one: a constexpr the kernel needs at compile time, or a tensor's stride (which TL203 never asks
to drop). Every launch passes it a factor of what it passes the other (``BATCH=batch`` beside
``ROWS=batch * seq * heads``, ``SEQ=x.shape[1]`` beside ``M=rows`` with ``rows = x.numel() //
3072``), a value an object the other holds (a device mesh built from ``num_blocks``), or a
dimension that a stride of an earlier axis spans (``S`` with ``N == F * S`` beside
``stride_b=qkv.stride(0)``), so the kernel compiles once per value of the other anyway and
dropping the annotation saves no compilation."""

from __future__ import annotations

import libcst as cst

from triton_lint.model.host import bind_call, dimension_axis, is_shape, returned_value
from triton_lint.model.host_args import stride_call
from triton_lint.model.host_tests import conjuncts, equality_sides
from triton_lint.model.kernel import Kernel, LaunchSite, Param
from triton_lint.model.names import dotted_name
from triton_lint.model.tree import iter_children, product_factors

#: Host calls whose value keeps every factor of their first argument (not ``cdiv``, which
#: rounds: ``cdiv(blocks, world)`` takes one value for several ``blocks``).
_KEEPS_FACTORS = {"int", "abs"}


def carrying_constexpr(kernel: Kernel, param: Param, needed: set[str]) -> str | None:
    """The name of another constexpr, in ``needed`` (used at compile time) or passed a
    tensor's stride at every launch, of which every launch passing ``param`` passes a
    multiple of ``param``'s value (see the module docstring), else None."""
    bindings = [(site, site.bound_arguments(kernel)) for site in kernel.launches]
    passing = [(site, bound) for site, bound in bindings if param.name in bound]
    if not passing:
        return None
    for other in kernel.params:
        if other.name == param.name or not other.is_constexpr:
            continue
        if other.name not in needed and not _strides(passing, other.name):
            continue  # a stride stays constexpr (TL203 leaves strides alone): a carrier too
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
    if tensor is not None and f"numel:{tensor}" in factors:
        return True
    dimensions = [value, *_asserted_products(site, value)]
    return any(_under_stride(dimension, factors) for dimension in dimensions)


def _strides(passing: list[tuple[LaunchSite, dict]], name: str) -> bool:
    """Every launch passing the parameter passes ``name`` a tensor's stride (``x.stride(0)``)."""
    return all(_stride(bound.get(name)) is not None for _, bound in passing)


def _stride(value: cst.BaseExpression | None) -> tuple[str, int] | None:
    """``("x", 0)`` for ``x.stride(0)`` (`host_args.stride_call`), a non-negative axis only."""
    found = stride_call(value) if value is not None else None
    return found if found is not None and found[1] >= 0 else None


def _under_stride(value: cst.BaseExpression, factors: set[str]) -> bool:
    """``value`` is a dimension ``x.shape[k]`` of a tensor whose stride over an earlier axis is
    among ``factors``: for a contiguous ``x`` that stride is a multiple of the dimension."""
    tensor = _dimension_owner(value)
    axis = dimension_axis(value)
    return (
        tensor is not None
        and isinstance(axis, int)
        and any(f"stride:{tensor}:{j}" in factors for j in range(max(axis, 0)))
    )


def _asserted_products(site: LaunchSite, value: cst.BaseExpression) -> list[cst.BaseExpression]:
    """What a host test asserts a product holding ``value`` equal to (``assert N == F * S``
    gives ``N``'s definition for ``S``): ``value`` is a factor of it."""
    if not isinstance(value, cst.Name):
        return []
    found: list[cst.BaseExpression] = []
    for test in site.holding_tests():
        for part in conjuncts(test):
            sides = equality_sides(part)
            for this, other in (sides, sides[::-1]) if sides else ():
                multiplicands = {f.value for f in product_factors(this) if isinstance(f, cst.Name)}
                if value.value in multiplicands and isinstance(other, cst.Name):
                    found.append(site.host_definitions.get(other.value, other))
    return found


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
            elif (stride := _stride(node)) is not None:
                found.add(f"stride:{stride[0]}:{stride[1]}")
            else:
                pending.extend((arg, depth) for arg in _held_arguments(kernel, site, node))
    return found


def _held_arguments(kernel: Kernel, site: LaunchSite, call: cst.Call) -> list[cst.BaseExpression]:
    """The arguments of a call of a host function of the launching file that returns an object
    holding them as they are: ``_block_mesh(num_blocks)`` with ``def _block_mesh(n): return
    tle.device_mesh({"block": [("x", int(n))]})``. Each value of such an argument makes its own
    object, so a constexpr taking the object compiles once per value of the argument."""
    module = site.module or kernel.module
    function = module.functions.get(call.func.value) if isinstance(call.func, cst.Name) else None
    value = returned_value(function) if function is not None else None
    if not isinstance(value, cst.Call):
        return []
    uses: dict[str, list[bool]] = {}
    _record_uses(value, False, uses)
    held = {name for name, kept in uses.items() if all(kept)}
    return [arg for name, arg in bind_call(function, call).items() if name in held]


def _record_uses(node: cst.CSTNode, kept: bool, uses: dict[str, list[bool]]) -> None:
    """For each name ``node`` reads, whether each read sits as an element of a container
    literal (through ``int()`` only): the container holds that very value."""
    if isinstance(node, cst.Name):
        uses.setdefault(node.value, []).append(kept)
    elif isinstance(node, cst.Tuple | cst.List | cst.Set):
        for element in node.elements:
            _record_uses(element.value, True, uses)
    elif isinstance(node, cst.Dict):
        for element in node.elements:
            for part in iter_children(element):
                _record_uses(part, True, uses)
    elif isinstance(node, cst.Call) and (dotted_name(node.func) or "") in _KEEPS_FACTORS:
        for arg in node.args:
            _record_uses(arg.value, kept, uses)
    elif isinstance(node, cst.Call):
        for arg in node.args:
            _record_uses(arg.value, False, uses)
    else:
        for child in iter_children(node):
            _record_uses(child, False, uses)
