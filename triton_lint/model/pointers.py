"""Pointer parameters: which runtime parameters a kernel uses as the base of an address, and
whether it builds pointers from integers itself (TL211, TL302, TL501, TL502)."""

from __future__ import annotations

import libcst as cst

from triton_lint.model.kernel import Kernel, Param
from triton_lint.model.usage import Usage


def pointer_bases(kernel: Kernel, expr: cst.BaseExpression) -> list[Param]:
    """Runtime parameters that are the base of a pointer expression: the additive terms of
    ``x_ptr + offs`` (through local definitions), not the ones scaled by ``*`` or passed
    through calls (offsets and strides)."""
    found: dict[str, Param] = {}
    seen: set[str] = set()

    def walk(node: cst.BaseExpression, depth: int) -> None:
        if depth > 12:
            return
        if isinstance(node, cst.Name):
            if node.value in seen:
                return
            seen.add(node.value)
            param = kernel.params_by_name.get(node.value)
            if (
                param is not None
                and not param.is_constexpr
                and param.name not in kernel.facts(Usage).compared_names
            ):
                found[param.name] = param
            for definition in kernel.definitions.get(node.value, []):
                if definition.value is not None and definition.kind != "for":
                    walk(definition.value, depth + 1)
        elif isinstance(node, cst.BinaryOperation) and isinstance(
            node.operator, cst.Add | cst.Subtract
        ):
            walk(node.left, depth + 1)
            if isinstance(node.operator, cst.Add):
                walk(node.right, depth + 1)
        elif isinstance(node, cst.IfExp):
            walk(node.body, depth + 1)
            walk(node.orelse, depth + 1)
        elif isinstance(node, cst.Subscript):
            walk(node.value, depth + 1)
        elif isinstance(node, cst.Call):
            path = kernel.module.aliases.resolve(node.func)
            short = path.rsplit(".", 1)[-1] if path else None
            if short in ("multiple_of", "max_contiguous", "max_constancy", "advance"):
                if node.args:
                    walk(node.args[0].value, depth + 1)
            elif short == "make_block_ptr" and node.args:
                walk(node.args[0].value, depth + 1)
            elif (
                short is None
                and isinstance(node.func, cst.Attribute)
                and node.func.attr.value in ("to", "cast")
            ):
                walk(node.func.value, depth + 1)

    walk(expr, 0)
    return list(found.values())


def dereferenced_params(kernel: Kernel) -> dict[str, Param]:
    """Parameters used as the base pointer of a load, store or atomic (or block pointer)."""
    out: dict[str, Param] = {}
    for access in kernel.accesses:
        if access.pointer is not None:
            for param in pointer_bases(kernel, access.pointer):
                out[param.name] = param
    for call in kernel.calls_to("make_block_ptr", "make_tensor_descriptor"):
        args = [a.value for a in call.node.args if a.keyword is None]
        base = args[0] if args else None
        for a in call.node.args:
            if a.keyword is not None and a.keyword.value == "base":
                base = a.value
        if base is not None:
            for param in pointer_bases(kernel, base):
                out[param.name] = param
    return out


def casts_int_to_pointer(kernel: Kernel) -> bool:
    """The kernel builds pointers from integers itself (``x.to(tl.pointer_type(...))``)."""
    return any(True for _ in kernel.calls_to("pointer_type")) or any(
        call.name is not None and call.name.endswith("int_to_ptr") for call in kernel.calls
    )
