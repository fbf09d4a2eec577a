"""Blocks and scalars: whether a kernel expression is (plausibly) a block tensor, for rules
that warn about Python operators on blocks (TL207)."""

from __future__ import annotations

import libcst as cst

from triton_lint.model.kernel import Kernel
from triton_lint.model.names import TL

#: tl functions whose result is a scalar whatever their arguments.
_SCALAR_RESULTS = {
    "sum",
    "max",
    "min",
    "argmax",
    "argmin",
    "reduce",
    "xor_sum",
    "reduce_or",
    "program_id",
    "num_programs",
    "cdiv",
}
_BLOCK_SOURCES = {"arange", "zeros", "full", "zeros_like", "full_like", "rand", "randn", "randint"}


class Blocks:
    """Which expressions of one kernel are block tensors (memoized per node)."""

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self._memo: dict[int, bool] = {}

    def is_block(self, expr: cst.BaseExpression, _depth: int = 0) -> bool:
        """Whether ``expr`` is (plausibly) a block tensor, not a scalar: it derives from
        ``tl.arange``/``tl.zeros``/... through elementwise operations, and no reduction over
        all axes made it scalar. Reductions with ``axis=`` keep a block when the input is 2-D; they
        are treated as scalar (the conservative answer for rules that warn about blocks)."""
        if _depth > 12:
            return False
        memo = self._memo
        key = id(expr)
        if key in memo:
            return memo[key]
        memo[key] = False  # a cycle through loop-carried definitions adds nothing
        result = memo[key] = self._is_block(expr, _depth + 1)
        return result

    def _is_block(self, expr: cst.BaseExpression, depth: int) -> bool:
        kernel = self.kernel
        if isinstance(expr, cst.Name):
            if expr.value in kernel.params_by_name and not kernel.definitions.get(expr.value):
                return False
            return any(
                d.value is not None and d.kind != "for" and self.is_block(d.value, depth)
                for d in kernel.definitions.get(expr.value, [])
            )
        if isinstance(expr, cst.Call):
            path = kernel.module.aliases.resolve(expr.func)
            if path is not None and path.startswith(TL + "."):
                short = path.rsplit(".", 1)[-1]
                if short in _SCALAR_RESULTS:
                    return False
                if short in _BLOCK_SOURCES:
                    shape = expr.args[0].value if expr.args else None
                    return not (
                        short in ("zeros", "full")
                        and isinstance(shape, cst.List | cst.Tuple)
                        and not shape.elements
                    )  # tl.zeros([]) is a scalar
                args = [a.value for a in expr.args if a.keyword is None]
                if short in ("load", "atomic_add", "atomic_cas", "atomic_xchg"):
                    return bool(args) and self.is_block(args[0], depth)
                return any(self.is_block(a, depth) for a in args)
            if isinstance(expr.func, cst.Attribute):
                if expr.func.attr.value in _SCALAR_RESULTS:
                    return False
                return self.is_block(expr.func.value, depth)
            return False
        if isinstance(expr, cst.BinaryOperation):
            return self.is_block(expr.left, depth) or self.is_block(expr.right, depth)
        if isinstance(expr, cst.Comparison):
            return self.is_block(expr.left, depth) or any(
                self.is_block(c.comparator, depth) for c in expr.comparisons
            )
        if isinstance(expr, cst.UnaryOperation):
            return self.is_block(expr.expression, depth)
        if isinstance(expr, cst.BooleanOperation):
            return self.is_block(expr.left, depth) or self.is_block(expr.right, depth)
        if isinstance(expr, cst.Subscript | cst.Attribute):
            if isinstance(expr, cst.Attribute) and expr.attr.value in ("shape", "dtype", "numel"):
                return False
            return self.is_block(expr.value, depth)
        if isinstance(expr, cst.IfExp):
            return self.is_block(expr.body, depth) or self.is_block(expr.orelse, depth)
        return False
