"""Non-negative buffers: a pointer parameter whose every launch passes a buffer that an
earlier launch of the same host function filled with values >= 0 (a first-stage kernel's
``tl.max(tl.abs(x))`` partial norms). A 0 fill on a load of such a buffer is neutral for a
max, as an integer 0 fill of lengths is (`MaskedLanes`)."""

from __future__ import annotations

import libcst as cst

from triton_lint.model.calls import tl_short
from triton_lint.model.evaluate import evaluate
from triton_lint.model.kernel import Kernel, LaunchSite, MemoryAccess
from triton_lint.model.pointers import pointer_bases
from triton_lint.model.reaching import Reaching

#: Elementwise functions whose result is >= 0 whatever their argument.
_NON_NEGATIVE = {"abs", "sqrt", "sqrt_rn", "rsqrt", "exp", "exp2", "sigmoid"}
#: Functions >= 0 when every argument is (sums, products, the max of a row of norms).
_CLOSED = {"sum", "max", "min", "minimum", "cdiv", "fma"}


class Signs:
    """Which of one kernel's values and stored buffers are non-negative."""

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self._stores: dict[str, list[MemoryAccess]] = {}

    def writes(self, param: str) -> bool:
        """The kernel stores through pointer parameter ``param``."""
        return bool(self._stores_through(param))

    def stores_non_negative(self, param: str) -> bool:
        """Every store through pointer parameter ``param`` writes a value >= 0 (and there is
        at least one)."""
        stores = self._stores_through(param)
        return bool(stores) and all(
            a.value is not None and self.non_negative(a.value) for a in stores
        )

    def _stores_through(self, param: str) -> list[MemoryAccess]:
        if param not in self._stores:
            self._stores[param] = [
                a
                for a in self.kernel.accesses
                if a.kind == "store" and a.pointer is not None
                if param in {p.name for p in pointer_bases(self.kernel, a.pointer)}
            ]
        return self._stores[param]

    def non_negative(self, expr: cst.BaseExpression, depth: int = 6) -> bool:
        """``expr`` is >= 0 by construction: ``abs``, ``sqrt``, ``exp``, ``x * x``, and sums,
        products, casts, broadcasts and maxima of such values, through names assigned once."""
        if depth < 0:
            return False
        if isinstance(expr, cst.Integer | cst.Float):
            value = evaluate(expr)
            return isinstance(value, int | float) and value >= 0
        if isinstance(expr, cst.Name):
            definitions = self.kernel.facts(Reaching).reaching(expr)
            return bool(definitions) and all(
                d.kind == "assign" and d.value is not None and self.non_negative(d.value, depth - 1)
                for d in definitions
            )
        if isinstance(expr, cst.BinaryOperation):
            operator = expr.operator
            square = (
                isinstance(operator, cst.Multiply)
                and self.kernel.code(expr.left) == self.kernel.code(expr.right)
            ) or (isinstance(operator, cst.Power) and evaluate(expr.right) == 2)
            if square:
                return True
            if isinstance(operator, cst.Add | cst.Multiply | cst.Divide | cst.FloorDivide):
                return self.non_negative(expr.left, depth - 1) and self.non_negative(
                    expr.right, depth - 1
                )
            return False
        if isinstance(expr, cst.Call):
            return self._call(expr, depth)
        if isinstance(expr, cst.Subscript):  # `total[:, None]`: a broadcast keeps the sign
            return self.non_negative(expr.value, depth - 1)
        return False

    def _call(self, call: cst.Call, depth: int) -> bool:
        func = call.func
        if isinstance(func, cst.Attribute) and tl_short(self.kernel, call) is None:
            # `x.to(tl.float32)`: a cast keeps the sign
            return func.attr.value in ("to", "cast") and self.non_negative(func.value, depth - 1)
        short = tl_short(self.kernel, call)
        args = [a.value for a in call.args if a.keyword is None]
        if short in _NON_NEGATIVE:
            return True
        if short == "maximum":
            return any(self.non_negative(a, depth - 1) for a in args)
        if short in _CLOSED or short == "cast":
            operands = args[:1] if short in ("sum", "max", "min", "cast") else args
            return bool(operands) and all(self.non_negative(a, depth - 1) for a in operands)
        return False


def loads_non_negative_buffer(kernel: Kernel, access: MemoryAccess) -> bool:
    """Every launch of ``kernel`` in the file passes, as the base of ``access``'s pointer, a
    host buffer that an earlier launch in the same host function handed to a kernel whose
    every store into it writes values >= 0."""
    if access.pointer is None:
        return False
    bases = pointer_bases(kernel, access.pointer)
    if len(bases) != 1 or not kernel.launches:
        return False
    param = bases[0].name
    for site in kernel.launches:
        argument = site.bound_arguments(kernel).get(param)
        if not isinstance(argument, cst.Name) or not _filled_before(kernel, site, argument):
            return False
    return True


def _filled_before(kernel: Kernel, site: LaunchSite, buffer: cst.Name) -> bool:
    """The last launch before ``site`` in its host function that writes ``buffer`` (passes it
    to a parameter its kernel stores through) writes only values >= 0."""
    filled = False
    for earlier in kernel.module.launches:
        if earlier is site:
            return filled
        producer = kernel.module.kernels_by_name.get(earlier.kernel_name)
        if earlier.top is not site.top or producer is None:
            continue
        for name, value in earlier.bound_arguments(producer).items():
            if isinstance(value, cst.Name) and value.value == buffer.value:
                signs = producer.facts(Signs)
                if signs.writes(name):
                    filled = signs.stores_non_negative(name)
    return False
