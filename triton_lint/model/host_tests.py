"""Host tests that hold where a kernel is launched (`LaunchSite.holding_tests`): divisibility
of a size by a tile (torchao's blockwise quantizers assert both dimensions divisible by the
block they launch with, so tiles never run past them), and literal ranges (SGLang's
``assert 2 <= m <= 8`` leaves a handful of values)."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from triton_lint.model.evaluate import evaluate
from triton_lint.model.host import dimension_axis
from triton_lint.model.kernel import Kernel, LaunchSite


class HostDivisibility:
    """Which (size, tile) parameter pairs every launch of the kernel asserts divisible."""

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self._answers: dict[tuple[str, str], bool] = {}

    def divides(self, size: str, tile: str) -> bool:
        """Every launch of the kernel in this file (at least one) passes values for ``size``
        and ``tile`` and runs under a host test ``size_value % tile_value == 0`` (an
        ``assert`` or the ``if`` around the launch; conjuncts of ``and`` count)."""
        key = (size, tile)
        if key not in self._answers:
            sites = self.kernel.launches
            self._answers[key] = bool(sites) and all(
                self._asserted(site, size, tile) for site in sites
            )
        return self._answers[key]

    def _asserted(self, site: LaunchSite, size: str, tile: str) -> bool:
        bound = site.bound_arguments(self.kernel)
        if size not in bound or tile not in bound:
            return False  # an autotuned tile, or a size the launch does not name
        sizes = self._texts(site, bound[size])
        tiles = self._texts(site, bound[tile])
        for test in site.holding_tests():
            for left, right in zero_remainders(test):
                if self._text(left) in sizes and self._text(right) in tiles:
                    return True
        return False

    def _texts(self, site: LaunchSite, argument: cst.BaseExpression) -> set[str]:
        """What a launch argument goes by on the host: its text, and the value its name is
        assigned (``M, N = x.size()`` makes ``M`` ``x.size(0)``)."""
        texts = {self._text(argument)}
        if isinstance(argument, cst.Name) and argument.value in site.host_definitions:
            texts.add(self._text(site.host_definitions[argument.value]))
        return texts

    def _text(self, expr: cst.BaseExpression) -> str:
        """Source text, with a tensor dimension in one spelling (``x.shape[0]``,
        ``x.size(0)`` and ``x.size()[0]`` are one value)."""
        axis = dimension_axis(expr)
        if isinstance(axis, int):
            owner = expr.value if isinstance(expr, cst.Subscript) else expr.func
            assert isinstance(owner, cst.Attribute)
            return f"{self.kernel.code(owner.value)}.dim[{axis}]"
        if (
            isinstance(expr, cst.Subscript)
            and len(expr.slice) == 1
            and isinstance(expr.slice[0].slice, cst.Index)
            and isinstance(expr.value, cst.Call)
            and isinstance(expr.value.func, cst.Attribute)
            and expr.value.func.attr.value == "size"
            and not expr.value.args
        ):
            index = evaluate(expr.slice[0].slice.value)
            if isinstance(index, int):
                return f"{self.kernel.code(expr.value.func.value)}.dim[{index}]"
        return self.kernel.code(expr)


def asserted_divisor(kernel: Kernel, site: LaunchSite, argument: cst.BaseExpression) -> bool:
    """A holding test of ``site`` asserts that the host value ``argument`` divides another
    (``assert h % m_size == 0``): a tile or grouping factor, not a size of its own."""
    text = kernel.code(argument)
    return any(
        kernel.code(divisor) == text
        for test in site.holding_tests()
        for _, divisor in zero_remainders(test)
    )


def zero_remainders(
    test: cst.BaseExpression,
) -> list[tuple[cst.BaseExpression, cst.BaseExpression]]:
    """``(a, b)`` for every conjunct ``a % b == 0`` or ``not a % b`` of ``test``."""
    found = []
    for term in conjuncts(test):
        if isinstance(term, cst.UnaryOperation) and isinstance(term.operator, cst.Not):
            remainder = term.expression
        elif (
            isinstance(term, cst.Comparison)
            and len(term.comparisons) == 1
            and isinstance(term.comparisons[0].operator, cst.Equal)
            and evaluate(term.comparisons[0].comparator) == 0
        ):
            remainder = term.left
        else:
            continue
        if isinstance(remainder, cst.BinaryOperation) and isinstance(
            remainder.operator, cst.Modulo
        ):
            found.append((remainder.left, remainder.right))
    return found


def literal_range(
    kernel: Kernel, site: LaunchSite, argument: cst.BaseExpression
) -> tuple[int, int] | None:
    """The literal bounds (inclusive) a holding test of ``site`` puts on the host value
    ``argument`` (``assert 2 <= m <= 8`` gives (2, 8); a size with only an upper bound starts
    at 0), the narrowest over the tests; None when no test bounds it from above."""
    text = kernel.code(argument)
    best: tuple[int, int] | None = None
    for test in site.holding_tests():
        low, high = 0, None
        for left, operator, right in _comparisons(test):
            for this, other, flipped in ((left, right, False), (right, left, True)):
                bound = evaluate(other)
                if kernel.code(this) != text or not isinstance(bound, int):
                    continue
                upper = isinstance(operator, cst.LessThan | cst.LessThanEqual) != flipped
                strict = int(isinstance(operator, cst.LessThan | cst.GreaterThan))
                if isinstance(operator, cst.Equal):
                    low, high = bound, bound
                elif isinstance(
                    operator,
                    cst.LessThan | cst.LessThanEqual | cst.GreaterThan | cst.GreaterThanEqual,
                ):
                    if upper:
                        high = bound - strict if high is None else min(high, bound - strict)
                    else:
                        low = max(low, bound + strict)
        if high is not None and (best is None or high - low < best[1] - best[0]):
            best = (low, high)
    return best


def _comparisons(
    test: cst.BaseExpression,
) -> Iterator[tuple[cst.BaseExpression, cst.BaseCompOp, cst.BaseExpression]]:
    """Each ``a op b`` of the conjuncts of ``test``, chains split (``2 <= m <= 8``)."""
    for term in conjuncts(test):
        if isinstance(term, cst.Comparison):
            left = term.left
            for target in term.comparisons:
                yield left, target.operator, target.comparator
                left = target.comparator


def is_last_dimension(site: LaunchSite, value: cst.BaseExpression) -> bool:
    """``value`` is the last dimension of a tensor: ``x.shape[-1]``, or ``x.shape[i]`` where a
    holding test of ``site`` fixes the rank at ``i + 1`` (``assert x.dim() == 2``,
    ``x.ndim == 2``, ``len(x.shape) == 2``; conjuncts of ``and`` count)."""
    axis = dimension_axis(value)
    if axis == -1:
        return True
    if not isinstance(axis, int):
        return False
    owner = value.value if isinstance(value, cst.Subscript) else value.func  # type: ignore[attr-defined]
    tensor = _CODE.code_for_node(owner.value)
    return any(rank == (tensor, axis + 1) for test in site.holding_tests() for rank in _ranks(test))


#: Renders host expressions of any file to compare them.
_CODE = cst.Module(body=[])


def equality_sides(
    test: cst.BaseExpression,
) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
    """The two sides of a single ``a == b`` test; None for any other test."""
    if (
        isinstance(test, cst.Comparison)
        and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, cst.Equal)
    ):
        return test.left, test.comparisons[0].comparator
    return None


def _ranks(test: cst.BaseExpression) -> Iterator[tuple[str, object]]:
    """``(x, k)`` for every conjunct of ``test`` that says tensor ``x`` has ``k`` dimensions."""
    for term in conjuncts(test):
        sides = equality_sides(term)
        if sides is None:
            continue
        left, right = sides
        for side, other in ((left, right), (right, left)):
            tensor = _rank_of(side)
            if tensor is not None:
                yield _CODE.code_for_node(tensor), evaluate(other)


def _rank_of(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """The tensor ``x`` of ``x.dim()``, ``x.ndim`` or ``len(x.shape)``."""
    if isinstance(expr, cst.Call) and not expr.args and isinstance(expr.func, cst.Attribute):
        return expr.func.value if expr.func.attr.value in ("dim", "ndimension") else None
    if isinstance(expr, cst.Attribute) and expr.attr.value == "ndim":
        return expr.value
    if (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Name)
        and expr.func.value == "len"
        and len(expr.args) == 1
        and isinstance(shape := expr.args[0].value, cst.Attribute)
        and shape.attr.value == "shape"
    ):
        return shape.value
    return None


def conjuncts(test: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
    """The terms of ``a and b and c`` (a test that is not an ``and`` is its own one term)."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        yield from conjuncts(test.left)
        yield from conjuncts(test.right)
    else:
        yield test
