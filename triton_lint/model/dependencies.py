"""Dependencies: every expression a value is computed from, through reaching definitions.

`closure` answers "which ``program_id`` axes does this address depend on", "was this value
shifted by a max", "where does this index come from"; `additive_terms` follows only what is
summed into a value; `trace` walks with a caller's own stopping rule.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import libcst as cst

from triton_lint.model.calls import is_load, is_opaque, tl_short
from triton_lint.model.kernel import Definition, Kernel
from triton_lint.model.names import dotted_name
from triton_lint.model.reaching import Reaching
from triton_lint.model.structure import Structure
from triton_lint.model.tree import Worklist, iter_children


class Dependencies:
    """Walks from a value to what it is computed from, in one kernel."""

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self.reaching = kernel.facts(Reaching)

    def closure(
        self,
        expr: cst.BaseExpression,
        *,
        through_calls: bool = True,
        values_only: bool = False,
        control: bool = False,
        stop_below: Callable[[cst.CSTNode], bool] | None = None,
        definitions: Callable[[cst.Name], list[Definition]] | None = None,
    ) -> Iterator[cst.CSTNode]:
        """Every node ``expr`` is computed from, following reaching definitions of names.

        Augmented assignments also read their target. ``through_calls=False`` stops at the
        arguments of calls that are not Triton (helpers whose result we cannot see into).
        ``control=True`` also follows the tests of the branches a definition sits in
        (control dependence). ``values_only=True`` follows data only: it does not enter
        the pointer and mask of a
        load (the loaded value does not depend on the address arithmetic) nor subscripts.
        ``stop_below(node)`` True yields ``node`` but not what it is computed from.
        ``definitions`` replaces `Reaching.reaching` (a view that drops dead arms).
        """
        reaching = definitions or self.reaching.reaching
        pending = Worklist(expr)
        for node in pending:
            yield node
            if stop_below is not None and stop_below(node):
                continue
            kind = type(node)  # `type() is`, not `isinstance`: ABCMeta is slow on this path
            if kind is cst.Name:
                for definition in reaching(node):
                    if definition.value is not None:
                        pending.append(definition.value)
                    if control:  # `if pid_y == 0: off = a`: `off` depends on the test
                        pending.extend(branch.test for branch in definition.branches)
                    if definition.kind == "augassign" and isinstance(
                        definition.node, cst.AugAssign
                    ):
                        target = definition.node.target
                        if isinstance(target, cst.Name):
                            pending.extend(self._target_reads(definition))
            elif kind is cst.Lambda or (
                kind is cst.Call and self._stop(node, through_calls, values_only)
            ):
                continue
            elif values_only and kind is cst.Subscript:
                pending.append(node.value)
            else:
                pending.extend(iter_children(node))

    def _stop(self, node: cst.Call, through_calls: bool, values_only: bool) -> bool:
        if not through_calls and is_opaque(self.kernel, node):
            return True
        return values_only and is_load(self.kernel, node)

    def _target_reads(self, definition: Definition) -> list[cst.BaseExpression]:
        """Values an augmented assignment's target held before it: the definitions that
        reach its target (``dt += bias`` reads the load before it, not a later
        ``dt = tl.log(...)``)."""
        target = definition.node.target if isinstance(definition.node, cst.AugAssign) else None
        if isinstance(target, cst.Name) and self.kernel.facts(Structure).contains(target):
            return [d.value for d in self.reaching.reaching(target) if d.value is not None]
        return [d.value for d in self.kernel.definitions.get(definition.name, []) if d.value]

    def calls_in(self, expr: cst.BaseExpression, *names: str) -> list[cst.Call]:
        wanted = set(names)
        return [
            node
            for node in self.closure(expr)
            if isinstance(node, cst.Call) and tl_short(self.kernel, node) in wanted
        ]

    def additive_terms(self, expr: cst.BaseExpression) -> Iterator[cst.CSTNode]:
        """Nodes whose value is summed into ``expr``: through names, ``+``/``-``, casts,
        ``tl.where`` arms and subscripts, but not through products, quotients or other calls
        (a decay factor ``kv * exp(g)`` is not a term of the sum)."""
        pending = Worklist(expr)
        for node in pending:
            yield node
            if isinstance(node, cst.Name):
                for definition, value in self.reaching.definition_values(node):
                    aug = definition.node
                    if isinstance(aug, cst.AugAssign) and not isinstance(
                        aug.operator, cst.AddAssign | cst.SubtractAssign
                    ):
                        continue  # `kv *= exp(g)`: a factor, not a term
                    pending.append(value)
            elif isinstance(node, cst.BinaryOperation) and isinstance(
                node.operator, cst.Add | cst.Subtract
            ):
                pending.extend((node.left, node.right))
            elif isinstance(node, cst.UnaryOperation):
                pending.append(node.expression)
            elif isinstance(node, cst.Subscript):
                pending.append(node.value)
            elif isinstance(node, cst.Call):
                short = tl_short(self.kernel, node)
                args = [a.value for a in node.args if a.keyword is None]
                if short == "where" and len(args) == 3:
                    pending.extend(args[1:])
                elif isinstance(node.func, cst.Attribute) and node.func.attr.value in (
                    "to",
                    "cast",
                ):
                    pending.append(node.func.value)
                elif short in ("cast", "reshape", "trans", "permute", "broadcast_to"):
                    pending.extend(args[:1])

    def trace(
        self,
        expr: cst.BaseExpression,
        descend: Callable[[cst.CSTNode], bool],
        *,
        loop_starts: bool,
    ) -> None:
        """Walk the expressions ``expr`` is computed from, following the reaching definitions
        of names; ``descend(node)`` sees every other node and returns False to stop below it.
        A loop variable stands for its range start when ``loop_starts`` (an index derived from
        it), and for nothing otherwise (a loop counter is no lane)."""
        pending = Worklist(expr)
        for node in pending:
            if isinstance(node, cst.Name):
                for definition in self.reaching.reaching(node):
                    if definition.kind == "for":
                        if loop_starts:
                            pending.extend(range_start(definition.value))
                    elif definition.value is not None:
                        pending.append(definition.value)
                continue
            if not isinstance(node, cst.Lambda) and descend(node):
                pending.extend(iter_children(node))


def range_start(iterable: cst.BaseExpression | None) -> list[cst.BaseExpression]:
    """What a loop variable's value derives from: the start of ``range(start, stop)``
    (``range(n)`` counts from 0; the stop is a bound, not a source of the index)."""
    if isinstance(iterable, cst.Call):
        args = [a.value for a in iterable.args if a.keyword is None]
        name = dotted_name(iterable.func) or ""
        if name.rsplit(".", 1)[-1] in ("range", "static_range"):
            return args[:1] if len(args) >= 2 else []
    return [iterable] if iterable is not None else []
