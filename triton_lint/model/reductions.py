"""The reductions of a kernel (``tl.sum/max/min/argmax/cumsum/reduce/dot`` and the tensor
methods), grouped by the neutral element their masked-off lanes must hold."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import libcst as cst

from triton_lint.model.calls import tl_short
from triton_lint.model.evaluate import UNKNOWN, evaluate
from triton_lint.model.kernel import Kernel
from triton_lint.model.lane_values import LANE_VALUES
from triton_lint.model.provenance import Prov, Provenance
from triton_lint.model.tree import keyword_arg

REDUCTIONS = {
    "sum": "sum",
    "xor_sum": "sum",
    "cumsum": "sum",
    "max": "max",
    "argmax": "max",
    "min": "min",
    "argmin": "min",
    "cumprod": "prod",
    "prod": "prod",
    "reduce": "reduce",
    "associative_scan": "reduce",
    "dot": "dot",
    "dot_scaled": "dot",
}
NEUTRAL = {
    "sum": {"zero", "absmin"},
    "dot": {"zero", "absmin"},
    "max": {"-inf", "absmin"},
    "min": {"+inf"},
    "prod": {"one"},
    "reduce": set(LANE_VALUES) - {"undef"},
}
#: The ``other=`` text a safe fix inserts, per reduction kind.
NEUTRAL_TEXT = {"sum": "0.0", "dot": "0.0", "max": '-float("inf")', "min": 'float("inf")'}


@dataclass(frozen=True)
class Reduction:
    """A reduction call: ``kind`` groups ops by neutral element (sum, max, min, dot, ...)."""

    call: cst.Call
    op: str  # "sum", "argmax", "dot", ...
    kind: str
    operands: tuple[cst.BaseExpression, ...]
    axis: Any  # an int, None (all axes), or UNKNOWN


def reductions(kernel: Kernel) -> list[Reduction]:
    """Every reduction call of the kernel with its operands and axis."""
    found: list[Reduction] = []
    for site in kernel.calls:
        call = site.node
        short = tl_short(kernel, call)
        operands: tuple[cst.BaseExpression, ...]
        if short in REDUCTIONS and site.tl_name is not None:
            args = [a for a in call.args if a.keyword is None]
            if not args:
                continue
            operands = (args[0].value,)
            if short == "dot" and len(args) > 1:
                operands = (args[0].value, args[1].value)
            elif short == "dot_scaled":
                operands = _scaled_operands(call, args)
            axis = keyword_arg(call, "axis")
            if axis is None and short not in ("dot", "dot_scaled") and len(args) > 1:
                axis = args[1].value
            found.append(Reduction(call, short, REDUCTIONS[short], operands, _axis_value(axis)))
        elif (
            isinstance(call.func, cst.Attribute)
            and call.func.attr.value in REDUCTIONS
            and call.func.attr.value not in ("dot", "dot_scaled", "reduce")
            and Prov.TENSOR in kernel.facts(Provenance).of(call.func.value)
            and site.tl_name is None
        ):
            op = call.func.attr.value
            args = [a for a in call.args if a.keyword is None]
            axis = keyword_arg(call, "axis") or (args[0].value if args else None)
            found.append(Reduction(call, op, REDUCTIONS[op], (call.func.value,), _axis_value(axis)))
    return found


def _scaled_operands(call: cst.Call, args: list[cst.Arg]) -> tuple[cst.BaseExpression, ...]:
    """The two matrices of ``tl.dot_scaled(lhs, lhs_scale, lhs_format, rhs, rhs_scale, ...)``:
    a scale multiplies its matrix's values (a scale fill of 127 is 2**0 on a 0 value), so
    only the matrices' masked lanes reach the sum."""
    rhs = args[3].value if len(args) > 3 else keyword_arg(call, "rhs")
    return (args[0].value,) if rhs is None else (args[0].value, rhs)


def _axis_value(node: cst.BaseExpression | None) -> Any:
    if node is None:
        return None
    value = evaluate(node)
    return value if isinstance(value, int) or value is None else UNKNOWN
