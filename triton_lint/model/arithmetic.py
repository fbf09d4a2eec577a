"""Integer index arithmetic: quotients, remainders, and what an index derives from.

TL104 and the lane-bound evidence read these to tell an offset that stays in range
(``(rows % H) // G``, ``n // B * B``) from one that grows with the grid.
"""

from __future__ import annotations

import libcst as cst

from triton_lint.model.calls import cast_parts, is_widening, tl_short
from triton_lint.model.dependencies import Dependencies
from triton_lint.model.kernel import Kernel
from triton_lint.model.provenance import Prov, Provenance
from triton_lint.model.reaching import Reaching
from triton_lint.model.structure import Structure
from triton_lint.model.tree import Worklist

_INDEX = Prov.PROGRAM_ID | Prov.LOADED | Prov.ARANGE | Prov.WRAPPED | Prov.LOOP


def is_quotient_by(kernel: Kernel, expr: cst.BaseExpression, divisor: cst.BaseExpression) -> bool:
    """``expr`` is ``x // divisor`` (directly or through a name), so ``expr * divisor``
    is at most ``x``."""
    text = kernel.code(divisor)
    values: list[cst.BaseExpression] = [expr]
    if isinstance(expr, cst.Name):
        values = [value for _, value in kernel.facts(Reaching).definition_values(expr)]
    return bool(values) and all(
        isinstance(value, cst.BinaryOperation)
        and isinstance(value.operator, cst.FloorDivide)
        and kernel.code(value.right) == text
        for value in values
    )


def is_remainder(kernel: Kernel, expr: cst.BaseExpression) -> bool:
    """``expr`` is ``a % n`` (possibly through names, subscripts, casts, ``(a % n) // g``,
    ``n - a % n``, the arms of a ``tl.where``: a reflected coordinate, and ``(a % n) * h``
    times sizes: ``slot % block_size * num_heads`` stays below ``block_size * num_heads``)."""
    prov = kernel.facts(Provenance)
    pending = Worklist(expr)
    found = False
    for node in pending:
        if isinstance(node, cst.Subscript):
            pending.append(node.value)
        elif isinstance(node, cst.Name):
            values = kernel.facts(Reaching).definition_values(node)
            if not values:
                return False
            pending.extend(value for _, value in values)
        elif isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo):
            found = True
        elif isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.FloorDivide):
            pending.append(node.left)  # (rows % H) // G is below H too
        elif isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Subtract):
            pending.append(node.right)  # period - (y % period): reflected back inside
        elif isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Multiply):
            indices = [side for side in (node.left, node.right) if prov.of(side) & _INDEX]
            if len(indices) != 1:
                return False  # `i * j` of two indices, or no index to bound
            pending.append(indices[0])  # the other factor is a size: the bound scales by it
        elif isinstance(node, cst.Call) and tl_short(kernel, node) == "where":
            arms = [arg.value for arg in node.args if arg.keyword is None][1:]
            if len(arms) != 2:
                return False
            pending.extend(arms)
        elif (parts := cast_parts(kernel, node)) is not None:
            pending.append(parts[0])
        else:
            return False
    return found


def index_sources(kernel: Kernel, expr: cst.BaseExpression) -> list[cst.Call]:
    """``tl.program_id``/``tl.load`` calls an index derives from, not through a widening."""
    found: list[cst.Call] = []

    def descend(node: cst.CSTNode) -> bool:
        if not isinstance(node, cst.Call):
            return True
        if is_widening(kernel, node):
            return False
        access = kernel.access_for_call(node)
        if tl_short(kernel, node) == "program_id" or (access is not None and access.kind == "load"):
            found.append(node)
            return False
        return True

    kernel.facts(Dependencies).trace(expr, descend, loop_starts=True)
    return sorted(found, key=kernel.facts(Structure).position)
