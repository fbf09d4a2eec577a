"""The values masked-off lanes can hold, and how arithmetic changes them.

A masked load's dropped lanes hold its ``other=`` (or nothing defined: ``undef``); ``exp``,
``log``, negation and binary operators map those classes (``exp(-inf)`` is 0, ``-inf - -inf`` is
NaN). `triton_lint.model.lanes` applies this algebra along a kernel's dataflow.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import libcst as cst

from triton_lint.model.evaluate import UNKNOWN, evaluate
from triton_lint.model.kernel import Kernel
from triton_lint.model.names import CONSTEXPR

#: Masked-off lane values. ``undef``: a masked load without ``other=``; ``absmin``: 0 where
#: every real lane is >= 0 (so 0 is neutral for max too); ``shifted``: a non-neutral finite
#: value produced by arithmetic (``x - mean`` on a 0 fill); ``nan``: ``-inf - -inf`` and the
#: like; ``unknown``: cannot tell (never reported).
LANE_VALUES = ("zero", "absmin", "one", "-inf", "+inf", "undef", "shifted", "nan", "unknown")

NEGATE = {"-inf": "+inf", "+inf": "-inf", "absmin": "zero"}
EXP_MAP = {
    "-inf": "absmin",
    "zero": "one",
    "absmin": "one",
    "one": "shifted",
    "+inf": "+inf",
    "shifted": "shifted",
}
LOG_MAP = {"zero": "-inf", "absmin": "-inf", "one": "zero", "-inf": "nan"}
ABS_MAP = {"zero": "absmin", "absmin": "absmin", "-inf": "+inf", "+inf": "+inf"}
# A dot product over a zero-filled row or column is zero; any other fill gives an unknown value.
DOT_MAP = {"zero": "zero", "absmin": "zero"}
OPAQUE: dict[str, str] = {}  # any value -> unknown (undef stays undef)
OPAQUE_KEEP_UNDEF: dict[str, str] = {}
OPAQUE_ALL = {"undef": "unknown"}  # any value, undefined lanes too -> unknown


def map_lanes(lanes: dict[int, frozenset[str]], table: dict[str, str]) -> dict[int, frozenset[str]]:
    out: dict[int, frozenset[str]] = {}
    for load, values in lanes.items():
        mapped = set()
        for value in values:
            if value == "undef":
                mapped.add(table.get("undef", "undef"))
            elif value in table:
                mapped.add(table[value])
            elif table is NEGATE and value in ("zero", "nan", "unknown", "shifted"):
                mapped.add(value)
            else:
                mapped.add("unknown")
        out[load] = frozenset(mapped)
    return out


def join_lanes(
    a: dict[int, frozenset[str]], b: dict[int, frozenset[str]]
) -> dict[int, frozenset[str]]:
    out = dict(a)
    for load, values in b.items():
        out[load] = out.get(load, frozenset()) | values
    return out


def binary_lanes(
    operator: cst.BaseBinaryOp | cst.BaseAugOp,
    left: dict[int, frozenset[str]],
    right: dict[int, frozenset[str]],
    constant: str | None,
    *,
    left_masked: bool = True,
) -> dict[int, frozenset[str]]:
    """Masked lanes of ``left OP right``; ``constant`` classifies a clean operand."""
    op = type(operator).__name__.replace("Assign", "")
    if left and right:
        out: dict[int, frozenset[str]] = {}
        for load in set(left) | set(right):
            lv = left.get(load)
            rv = right.get(load)
            if lv is None or rv is None:
                # the other operand holds real data (or its own load's fill) at these lanes:
                # a 0 times it stays 0, as times a clean tensor (`_with_clean`)
                out[load] = frozenset(
                    "undef"
                    if v == "undef"
                    else "zero"
                    if op == "Multiply" and v in ("zero", "absmin")
                    else "unknown"
                    for v in (lv or rv or frozenset())
                )
                continue
            out[load] = frozenset(_pair(op, x, y) for x in lv for y in rv)
        return out
    lanes = left or right
    if not lanes:
        return {}
    out = {}
    for load, values in lanes.items():
        out[load] = frozenset(_with_clean(op, v, constant, left_masked) for v in values)
    return out


def _pair(op: str, x: str, y: str) -> str:
    if "undef" in (x, y):
        return "undef"
    if "nan" in (x, y):
        return "nan"
    if "unknown" in (x, y):
        return "unknown"
    zeros = ("zero", "absmin")
    finite = ("zero", "absmin", "one", "shifted")
    if op in ("Add", "Subtract"):
        if x in zeros and y in zeros:
            return "zero"
        if x in finite and y in finite:
            if op == "Add" and {x, y} <= {"zero", "absmin", "one"} and "one" in (x, y):
                return "one"
            return "shifted"
        if x == y == "-inf":
            return "-inf" if op == "Add" else "nan"
        if x == y == "+inf":
            return "+inf" if op == "Add" else "nan"
        if x in finite:
            return y if op == "Add" else NEGATE.get(y, y)
        if y in finite:
            return x
        return "nan"  # inf - inf
    if op == "Multiply":
        if x == y and x in zeros:
            return "absmin"  # x * x of a 0 fill
        if x in zeros and y in zeros:
            return "zero"
        if x in finite and y in finite:
            if x in zeros or y in zeros:
                return "zero"
            return "one" if x == y == "one" else "shifted"
        if x in ("-inf", "+inf") and y in ("-inf", "+inf"):
            return "+inf" if x == y else "-inf"
        if x in zeros or y in zeros:
            return "nan"  # 0 * inf
        return "unknown"
    if op == "Divide" and x in finite and y in ("one", "shifted"):
        return "zero" if x in zeros else "shifted"
    return "unknown"


def _with_clean(op: str, value: str, constant: str | None, left_masked: bool) -> str:
    """``masked OP clean`` (or ``clean OP masked`` when not left_masked)."""
    if value in ("undef", "unknown", "nan"):
        return value
    zeros = ("zero", "absmin")
    if constant == "tensor":
        if op == "Multiply" and value in zeros:
            return "zero"
        return "unknown"  # lane-wise with real data (an accumulator): nothing to say
    if op in ("Add", "Subtract"):
        if constant in ("zero",):
            return "zero" if value in zeros else value
        if value in ("-inf", "+inf"):
            if not left_masked and op == "Subtract":
                return "+inf" if value == "-inf" else "-inf"
            if constant in ("-inf", "+inf"):
                return "unknown"
            return value
        if value in zeros:
            return "shifted"  # x - mean: masked lanes are no longer 0
        return "unknown"
    if op == "Multiply":
        if value in zeros:
            return "zero" if constant not in ("-inf", "+inf") else "nan"
        if value in ("-inf", "+inf"):
            if constant == "zero":
                return "nan"
            if constant == "negative":
                return "+inf" if value == "-inf" else "-inf"
            return value  # scaled by a (positive) softmax scale
        return "unknown"
    if op == "Divide" and left_masked:
        if value in zeros:
            return "zero"
        if value in ("-inf", "+inf"):
            return value if constant != "negative" else "unknown"
        return "unknown"
    return "unknown"


def float_value(kernel: Kernel, node: cst.BaseExpression) -> Any:
    """Value of a fill expression: literals, ``float("inf")``, ``math.inf``, constexpr globals."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = float_value(kernel, node.expression)
        return -inner if isinstance(inner, (int, float)) else UNKNOWN
    if (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Name)
        and node.func.value == "float"
        and node.args
    ):
        arg = evaluate(node.args[0].value)
        if isinstance(arg, str):
            try:
                return float(arg)
            except ValueError:
                return UNKNOWN
        return arg if isinstance(arg, (int, float)) else UNKNOWN
    if isinstance(node, cst.Attribute) and node.attr.value in ("inf", "infinity"):
        return math.inf
    if isinstance(node, cst.Attribute) and node.attr.value == "nan":
        return math.nan
    if isinstance(node, cst.Name):
        glob = kernel.module.globals.get(node.value)
        if glob is not None and glob.value is not None and node.value not in kernel.definitions:
            return float_value(kernel, glob.value)
        return UNKNOWN
    if (
        isinstance(node, cst.Call)
        and node.args
        and kernel.module.aliases.resolve(node.func) in CONSTEXPR
    ):
        return float_value(kernel, node.args[0].value)  # `tl.constexpr(-1e30)`
    return evaluate(node)


def classify(kernel: Kernel, node: cst.BaseExpression) -> str:
    value = float_value(kernel, node)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "unknown"
    if value != value:
        return "nan"
    if value == 0:
        return "zero"
    if value == 1:
        return "one"
    if value <= -1e4:
        return "-inf"  # a large negative fill (-1e9, -65504) works as -inf for max
    if value >= 1e4:
        return "+inf"
    return "shifted"


def constant_class(kernel: Kernel, node: cst.BaseExpression) -> str | None:
    """Class of a clean operand: "zero", "negative", "-inf"/"+inf", or None (some value)."""
    value = float_value(kernel, node)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if value == 0:
            return "zero"
        if value in (math.inf, -math.inf):
            return "+inf" if value > 0 else "-inf"
        if value < 0:
            return "negative"
    return None


class LaneMemo:
    """Lane maps computed once per node. A node met again while it is being computed (a
    loop-carried definition) contributes nothing on that path, which ends the recursion."""

    def __init__(self) -> None:
        self._cache: dict[int, dict[int, frozenset[str]]] = {}
        self._busy: set[int] = set()

    def get(
        self,
        expr: cst.BaseExpression,
        compute: Callable[[cst.BaseExpression], dict[int, frozenset[str]]],
    ) -> dict[int, frozenset[str]]:
        key = id(expr)
        if key in self._cache:
            return self._cache[key]
        if key in self._busy:
            return {}
        self._busy.add(key)
        try:
            result = compute(expr)
        finally:
            self._busy.discard(key)
        self._cache[key] = result
        return result
