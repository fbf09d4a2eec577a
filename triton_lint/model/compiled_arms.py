"""The ``if`` arms no compiled specialisation of a kernel holds, when the project shows every
launch of it.

Triton folds an ``if`` on a constexpr at compile time and never generates the arm its value
does not take. A kernel written for several modes (``if IS_KDA:``) that every launch in the
project compiles for one mode (``IS_KDA=False``) holds code no compiled kernel contains: a
finding there describes nothing that runs. This is `FixedConstexprs` read strictly: it holds
only when the launches seen are all the launches (`every_launch_known`), and a value counts
only when each launch writes it as a literal, or leaves it to a default (or to autotune
configs) with no ``*args``/``**kwargs`` that could set it; a ``@triton.heuristics`` entry
overrides what a launch passes, so its own constant (or UNKNOWN) is the value.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from typing import Any

import libcst as cst

from triton_lint.finding import Span
from triton_lint.model.evaluate import UNKNOWN, evaluate
from triton_lint.model.fixed_constexprs import Arm, FixedConstexprs
from triton_lint.model.host import bind_call
from triton_lint.model.kernel import Kernel, ModuleModel
from triton_lint.model.provenance import Provenance
from triton_lint.model.tree import iter_nodes


def every_launch_known(kernel: Kernel) -> bool:
    """The project was indexed, and the kernel's launches are all the places it is named: in
    its own file, its definition and one name per launch; in the other files, imports and the
    launches the index counted (`ProjectContext.launch_counts`), all of them found here."""
    project = kernel.module.project
    foreign = project.launch_counts.get(kernel.name) if project is not None else None
    sites = kernel.launches
    if foreign is None or not sites:
        return False
    own = sum(1 for site in sites if site.module is None)
    if len(sites) - own != foreign:
        return False
    mentions = re.findall(rf"\b{re.escape(kernel.name)}\b", kernel.module.text)
    return len(mentions) == 1 + own


class CompiledArms(FixedConstexprs):
    """Constexpr values every launch of the project fixes, read strictly, and the arms they
    make dead."""

    def __init__(self, kernel: Kernel) -> None:
        super().__init__(kernel)
        self._known: bool | None = None
        self._spans: list[Span] | None = None

    def _fixed(self, name: str) -> Any:
        param = self.kernel.params_by_name.get(name)
        if param is None or not param.is_constexpr or name in self.kernel.definitions:
            return UNKNOWN  # a name the kernel rebinds is not the launch's value
        if self._known is None:
            self._known = every_launch_known(self.kernel)
        if not self._known:
            return UNKNOWN
        sources = self.kernel.value_sources(name)
        tuned = [s.value for s in sources if s.origin == "heuristics"]
        if tuned:
            return tuned[0]  # a heuristic overrides whatever the launch passes
        tuner = self.kernel.autotune
        configs = [s.value for s in sources if s.origin == "autotune"]
        default = evaluate(param.default) if param.default is not None else UNKNOWN
        if tuner is not None and len(configs) < len(tuner.configs):
            configs.append(default)  # a config that leaves it to the default
        values: list[Any] = []
        for site in self.kernel.launches:
            written = bind_call(self.kernel.node, site.call).get(name)
            if written is not None:
                values.append(evaluate(written))
            elif any(arg.star for arg in site.call.args):
                return UNKNOWN  # `*args`/`**kwargs` may set it
            elif tuner is not None and not tuner.configs_resolved:
                return UNKNOWN  # configs the linter cannot read may set it
            else:
                values.extend(configs or [default])
        if not values or any(v is UNKNOWN or v != values[0] for v in values):
            return UNKNOWN
        return values[0]

    def _evaluate_test(self, test: cst.BaseExpression) -> Arm | None:
        if not self.kernel.facts(Provenance).is_compile_time(test):
            return None
        names = {n.value for n in iter_nodes(test) if type(n) is cst.Name}
        env = {n: self.value(n) for n in names if n in self.kernel.params_by_name}
        result = truth(test, {n: v for n, v in env.items() if v is not UNKNOWN})
        return None if result is UNKNOWN else "body" if result else "orelse"

    def dead_spans(self) -> list[Span]:
        """The spans of the arms the fixed values never take."""
        if self._spans is None:
            self._spans = []
            for node in iter_nodes(self.kernel.node.body):
                if type(node) is cst.If or type(node) is cst.IfExp:
                    taken = self.taken_arm(node)
                    dead = node.orelse if taken == "body" else node.body if taken else None
                    if dead is not None:
                        self._spans.append(self.kernel.span(dead))
        return self._spans


_COMPARISONS: dict[type, Callable[[Any, Any], Any]] = {
    cst.Equal: operator.eq,
    cst.NotEqual: operator.ne,
    cst.LessThan: operator.lt,
    cst.LessThanEqual: operator.le,
    cst.GreaterThan: operator.gt,
    cst.GreaterThanEqual: operator.ge,
    cst.Is: operator.is_,
    cst.IsNot: operator.is_not,
}


def truth(test: cst.BaseExpression, env: dict[str, Any]) -> Any:
    """The value of an ``if`` test built from constants, ``env``'s names, comparisons,
    ``not``, ``and`` and ``or`` (a known side decides ``False and x``), else UNKNOWN."""
    kind = type(test)
    if kind is cst.UnaryOperation and type(test.operator) is cst.Not:
        inner = truth(test.expression, env)
        return UNKNOWN if inner is UNKNOWN else not inner
    if kind is cst.BooleanOperation:
        left, right = truth(test.left, env), truth(test.right, env)
        decides = type(test.operator) is cst.Or  # `True or x`, `False and x`
        if (left is not UNKNOWN and bool(left) is decides) or (
            right is not UNKNOWN and bool(right) is decides
        ):
            return decides
        return UNKNOWN if left is UNKNOWN or right is UNKNOWN else decides is False
    if kind is cst.Comparison:
        left = evaluate(test.left, env)
        for target in test.comparisons:
            compare = _COMPARISONS.get(type(target.operator))
            right = evaluate(target.comparator, env)
            if compare is None or left is UNKNOWN or right is UNKNOWN:
                return UNKNOWN
            if not compare(left, right):
                return False
            left = right
        return True
    return evaluate(test, env)


def in_dead_arm(model: ModuleModel, kernel_name: str | None, span: Span) -> bool:
    """A finding of ``kernel_name`` at ``span`` in this file starts inside an arm no compiled
    specialisation of the kernel holds (`CompiledArms`)."""
    start = (span.line, span.column)
    for kernel in model.kernels:
        if kernel.name != kernel_name:
            continue
        for dead in kernel.facts(CompiledArms).dead_spans():
            if (dead.line, dead.column) <= start < (dead.end_line, dead.end_column):
                return True
    return False
