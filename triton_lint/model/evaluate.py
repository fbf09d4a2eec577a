"""Tiny constant folding over libcst expressions (literals and arithmetic on them)."""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

import libcst as cst


class Unknown:
    """Marker for a value that cannot be known statically."""

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN: Any = Unknown()

_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    cst.Add: operator.add,
    cst.Subtract: operator.sub,
    cst.Multiply: operator.mul,
    cst.FloorDivide: operator.floordiv,
    cst.Divide: operator.truediv,
    cst.Modulo: operator.mod,
    cst.Power: operator.pow,
    cst.LeftShift: operator.lshift,
    cst.RightShift: operator.rshift,
}


def evaluate(node: cst.BaseExpression, env: Mapping[str, Any] | None = None) -> Any:
    """Value of ``node`` if it is built from literals and names bound in ``env``, else UNKNOWN."""
    env = env or {}
    try:
        return _eval(node, env)
    except (ArithmeticError, TypeError, ValueError, SyntaxError, OverflowError):
        return UNKNOWN


@lru_cache(maxsize=4096)
def _literal(text: str) -> Any:
    """A literal's value, once per spelling: `ast.literal_eval` compiles its text each call,
    and the host readers evaluate the same few literals hundreds of thousands of times."""
    return ast.literal_eval(text)


_LITERALS = (cst.Integer, cst.Float, cst.SimpleString)


def _eval(node: cst.BaseExpression, env: Mapping[str, Any]) -> Any:
    kind = type(node)  # `type() in`, not `isinstance`: ABCMeta is slow on this path
    if kind in _LITERALS:
        return _literal(node.value)  # type: ignore[attr-defined]
    if kind is cst.Name:
        if node.value in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[node.value]
        return env.get(node.value, UNKNOWN)
    if isinstance(node, cst.UnaryOperation):
        value = _eval(node.expression, env)
        if value is UNKNOWN:
            return UNKNOWN
        if isinstance(node.operator, cst.Minus):
            return -value
        if isinstance(node.operator, cst.Plus):
            return +value
        if isinstance(node.operator, cst.Not):
            return not value
        return UNKNOWN
    if isinstance(node, cst.BinaryOperation):
        op = _BINOPS.get(type(node.operator))
        left, right = _eval(node.left, env), _eval(node.right, env)
        if op is None or left is UNKNOWN or right is UNKNOWN:
            return UNKNOWN
        if isinstance(node.operator, (cst.Power, cst.LeftShift)) and abs(right) > 64:
            return UNKNOWN
        return op(left, right)
    if isinstance(node, (cst.Tuple, cst.List)):
        values = [_eval(el.value, env) for el in node.elements]
        return UNKNOWN if any(v is UNKNOWN for v in values) else values
    return UNKNOWN


def is_power_of_two(value: Any) -> bool:
    return (
        isinstance(value, int)
        and not isinstance(value, bool)
        and value > 0
        and not value & (value - 1)
    )
