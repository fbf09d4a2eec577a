"""Lanes whose last tile is partial only for some sizes, with values that reach no reduction.

An unmasked load over ``pid * BLOCK + tl.arange(0, BLOCK)`` that another access masks against
``n`` runs past ``n`` on the last tile. How often depends on what the launches give ``BLOCK``:

- autotune configs, while a host assert fixes ``n`` to a multiple of a granularity ``g``
  (``assert M % 128 == 0``): only configs whose ``BLOCK`` does not divide ``g`` (256) overrun,
  and only for the sizes that are odd multiples of ``g``; configs that all divide ``g`` never do;
- ``next_power_of_2(n)`` (or ``min(C, next_power_of_2(n))``) of the same extent: the tile covers
  ``n`` exactly unless ``n`` is neither a power of 2 nor a multiple of ``C``.

TL101 reads this (with no reduction reached by the loaded values: the lanes past the end only
reach outputs the stores mask off) as the information tier: the overrun is real but narrow.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from triton_lint.model.dependencies import Dependencies
from triton_lint.model.evaluate import evaluate
from triton_lint.model.host import bind_call, function_facts
from triton_lint.model.host_tests import zero_remainders
from triton_lint.model.kernel import Kernel, LaunchSite, MemoryAccess
from triton_lint.model.lane_bounds import Evidence, LaneBounds
from triton_lint.model.names import dotted_name
from triton_lint.model.reductions import reductions
from triton_lint.model.tree import iter_nodes

#: Source text of a node of the launching file.
Code = Callable[[cst.CSTNode], str]
#: The condition is never met: every tile size the launches give divides the extent.
NEVER = ""


class PartialTiles:
    """When the lanes of an unmasked load run past the bound a masked access compares them with."""

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self.bounds = kernel.facts(LaneBounds)

    def only_for(self, access: MemoryAccess, evidence: Evidence) -> str | None:
        """The sizes for which the lanes of ``access`` overrun (a phrase for a message), or
        `NEVER`, when every known launch sizes its tiles so that only some sizes (or none)
        leave a partial last tile and the loaded values reach no reduction; None otherwise
        (the default or every configuration can overrun, or nothing is known)."""
        if evidence.kind != "mask" or access.pointer is None or not self.kernel.launches:
            return None
        pairs = self._bounded_extents(access, evidence.access)
        if not pairs or self._reaches_reduction(access):
            return None
        conditions: list[str] = []
        for block, bound in pairs:
            condition = self._condition(block, bound)
            if condition is None:
                return None
            if condition != NEVER and condition not in conditions:
                conditions.append(condition)
        return " or ".join(conditions)

    def _bounded_extents(self, access: MemoryAccess, masked: MemoryAccess) -> list[tuple[str, str]]:
        """(``BLOCK``, ``n``) for each ``tl.arange(0, BLOCK)`` lane of ``access`` that the mask
        of ``masked`` compares against the parameter ``n`` (``offs < n``)."""
        assert access.pointer is not None and masked.mask is not None
        extents = {
            self.bounds.text(a.args[-1].value) for a in self.bounds.lanes(access.pointer) if a.args
        }
        pairs: list[tuple[str, str]] = []
        deps = self.kernel.facts(Dependencies)
        for node in deps.closure(masked.mask):
            if not isinstance(node, cst.Comparison) or len(node.comparisons) != 1:
                continue
            compare = node.comparisons[0]
            bound = compare.comparator
            if not isinstance(compare.operator, cst.LessThan) or not isinstance(bound, cst.Name):
                continue
            if bound.value not in self.kernel.params_by_name:
                continue
            for arange in self.bounds.lanes(node.left):
                block = self.bounds.text(arange.args[-1].value) if arange.args else ""
                if block in extents and (block, bound.value) not in pairs:
                    pairs.append((block, bound.value))
        return pairs

    def _reaches_reduction(self, access: MemoryAccess) -> bool:
        """A sum, max, dot, scan... reads the loaded values (`reductions`, with operands
        passed by keyword): the lanes past the end would mix into the lanes in range. A
        dot's accumulator (`tl.dot(a, b, acc)`) is added element by element, as are the
        lanes outside a reduction's input."""
        deps = self.kernel.facts(Dependencies)
        for reduction in reductions(self.kernel):
            operands = [*reduction.operands] + [
                a.value
                for a in reduction.call.args
                if a.keyword is not None and a.keyword.value in ("input", "other", "a", "b")
            ]
            for operand in operands:
                if any(n is access.call for n in deps.closure(operand, values_only=True)):
                    return True
        return False

    def _condition(self, block: str, bound: str) -> str | None:
        """The sizes for which tiles of ``block`` leave ``bound`` partial, at every launch."""
        found: list[str] = []
        for site in self.kernel.launches:
            passed = site.bound_arguments(self.kernel)
            if bound not in passed:
                return None
            if block in passed:
                condition = self._power_of_two(site, passed[block], passed[bound], bound, block)
            else:
                condition = self._autotuned(site, passed[bound], bound, block)
            if condition is None:
                return None
            found.append(condition)
        partial = [c for c in found if c != NEVER]
        return partial[0] if partial else NEVER

    def _autotuned(
        self, site: LaunchSite, argument: cst.BaseExpression, bound: str, block: str
    ) -> str | None:
        """``block`` comes from autotune configs and a host test fixes ``argument`` to a
        multiple of ``g``: the configs whose ``block`` does not divide ``g`` overrun."""
        tune = self.kernel.autotune
        if tune is None or not tune.configs_resolved or not tune.configs:
            return None
        sizes = [evaluate(c.values[block], c.env) if block in c.values else 0 for c in tune.configs]
        if not all(isinstance(s, int) and s > 0 for s in sizes):
            return None
        granularity = _asserted_multiple(site, argument, self._code(site))
        if granularity is None:
            return None
        failing = sorted({s for s in sizes if granularity % s})
        if not failing:
            return NEVER
        if len(failing) == len(set(sizes)):
            return None  # every config can overrun
        picks = "/".join(str(s) for s in failing)
        if failing == [2 * granularity]:
            size = f"an odd multiple of {granularity}"
        else:
            size = f"not a multiple of it (the host asserts `{bound} % {granularity} == 0`)"
        return f"autotune picks `{block}={picks}` and `{bound}` is {size}"

    def _power_of_two(
        self,
        site: LaunchSite,
        block_argument: cst.BaseExpression,
        bound_argument: cst.BaseExpression,
        bound: str,
        block: str,
    ) -> str | None:
        """Every way of reaching the launch sizes ``block`` as ``next_power_of_2`` (capped by
        ``min(C, ...)``) of the value it passes as ``bound``."""
        code = self._code(site)
        caps: set[int | None] = set()
        for names in _bindings(self.kernel, site):
            tile = _resolve(block_argument, names)
            extent = _resolve(bound_argument, names)
            form = _next_power_of_two(tile)
            if form is None or code(_resolve(form[0], names)) != code(extent):
                return None
            caps.add(form[1])
        if len(caps) != 1:
            return None
        (cap,) = caps
        if cap is None:
            return f"`{bound}` is not a power of 2 (`{block}` is `next_power_of_2` of it)"
        return (
            f"`{bound}` is neither a power of 2 nor a multiple of {cap} "
            f"(`{block}` is `min({cap}, next_power_of_2({bound}))`)"
        )

    def _code(self, site: LaunchSite) -> Code:
        return (site.module or self.kernel.module).module.code_for_node


def _asserted_multiple(site: LaunchSite, argument: cst.BaseExpression, code: Code) -> int | None:
    """``g`` of a holding host test ``argument % g == 0`` (or ``not argument % g``)."""
    text = code(argument)
    for test in site.holding_tests():
        for left, right in zero_remainders(test):
            if code(left) == text and isinstance(divisor := evaluate(right), int) and divisor > 0:
                return divisor
    return None


def _bindings(kernel: Kernel, site: LaunchSite) -> list[dict[str, cst.BaseExpression]]:
    """The host value of each name at the launch, once per way of reaching it: the launching
    function's definitions (and what its callers pass), or for a function nested in another
    (FLA's ``fwd_inner``) one map per call of it there, its parameters bound to that call's
    arguments read through the enclosing function's single definitions."""
    function = site.function
    outer = _enclosing(site.top, function) if function is not None else None
    if function is None or outer is None:
        return [dict(site.host_definitions)]
    _, definitions = function_facts(site.module or kernel.module, outer)
    calls = [
        node
        for node in iter_nodes(outer.body)
        if isinstance(node, cst.Call) and dotted_name(node.func) == function.name.value
    ]
    found = []
    for call in calls:
        names = dict(definitions)
        names.update(site.host_definitions)
        # the call's arguments in the enclosing function's names (`V=V`, `BV=BV` there)
        names.update({p: _resolve(a, definitions) for p, a in bind_call(function, call).items()})
        found.append(names)
    return found or [dict(site.host_definitions)]


def _enclosing(top: cst.CSTNode, function: cst.FunctionDef) -> cst.FunctionDef | None:
    """The function whose body defines ``function`` directly (a closure over its names)."""
    for node in iter_nodes(top):
        if (
            isinstance(node, cst.FunctionDef)
            and isinstance(node.body, cst.IndentedBlock)
            and any(stmt is function for stmt in node.body.body)
        ):
            return node
    return None


def _resolve(expr: cst.BaseExpression, names: dict[str, cst.BaseExpression]) -> cst.BaseExpression:
    """``expr`` through up to four plain names (``BV`` → ``BM`` → ``min(64, ...)``)."""
    for _ in range(4):
        if isinstance(expr, cst.Name) and expr.value in names and names[expr.value] is not expr:
            expr = names[expr.value]
        else:
            break
    return expr


def _next_power_of_two(
    expr: cst.BaseExpression,
) -> tuple[cst.BaseExpression, int | None] | None:
    """(``n``, ``C``) of ``min(C, next_power_of_2(n))``, (``n``, None) of ``next_power_of_2(n)``."""
    if not isinstance(expr, cst.Call):
        return None
    name = (dotted_name(expr.func) or "").rsplit(".", 1)[-1]
    args = [a.value for a in expr.args]
    if name == "next_power_of_2" and len(args) == 1:
        return args[0], None
    if name != "min" or len(args) != 2:
        return None
    for cap, other in ((args[0], args[1]), (args[1], args[0])):
        inner = _next_power_of_two(other)
        if isinstance(evaluate(cap), int) and inner is not None and inner[1] is None:
            return inner[0], evaluate(cap)
    return None
