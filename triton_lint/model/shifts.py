"""Maxima used only as the shift of a log-sum-exp, where a raised maximum cancels.

``m = tl.max(x)`` in ``exp(x - m)``, ``log(s) + m`` and a running max ``tl.maximum(m_prev, m)``
carried into ``exp(m_prev - m)``: any finite ``m`` at least the true maximum gives the same
result, up to underflow. A use that stores, compares or returns ``m`` gives no such guarantee.
"""

from __future__ import annotations

import libcst as cst

from triton_lint.model.calls import is_opaque, tl_short
from triton_lint.model.kernel import Definition, Kernel
from triton_lint.model.names import dotted_name
from triton_lint.model.reaching import Reaching
from triton_lint.model.structure import Structure
from triton_lint.model.tree import iter_nodes

#: Helpers that wrap `tl.exp` under their own name (fla's `exp`/`exp2`, vLLM's `fast_exp`),
#: imported from another file so their body cannot be read: the exponential each computes
#: (TL301 reads them as exponentials too).
EXP_HELPERS = {"exp": "exp", "exp2": "exp2", "fast_exp": "exp", "fast_exp2": "exp2"}
_EXP = set(EXP_HELPERS)
_LOG = {"log", "log2"}


class LogSumExpShifts:
    """Which maxima of a kernel are used only as a log-sum-exp shift."""

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self.structure = kernel.facts(Structure)
        self.reaching = kernel.facts(Reaching)
        self._uses: dict[str, list[cst.Name]] | None = None

    def only_shift(self, value: cst.BaseExpression) -> bool:
        """``value`` (a ``tl.max`` call) reaches only ``exp`` arguments as the subtrahend,
        ``log`` results as a term, and running maxima used the same way; at least one
        exponential among them."""
        exps: list[cst.Call] = []
        return self._used_as_shift(value, set(), exps) and bool(exps)

    def _used_as_shift(self, node: cst.CSTNode, seen: set[int], exps: list[cst.Call]) -> bool:
        if id(node) in seen:
            return True  # a running max carried around a loop: its other uses decide
        seen.add(id(node))
        parent = self.structure.parent(node)
        if isinstance(parent, cst.Assign) and parent.value is node:
            return all(
                self._definition_used_as_shift(parent, target.target, seen, exps)
                for target in parent.targets
            )
        if isinstance(parent, cst.Subscript) and parent.value is node:
            return self._used_as_shift(parent, seen, exps)  # a broadcast `m[:, None]`
        call = self._call_of_argument(node)
        if call is not None and tl_short(self.kernel, call) == "maximum":
            return self._used_as_shift(call, seen, exps)
        if isinstance(parent, cst.BinaryOperation):
            other = parent.left if parent.right is node else parent.right
            if isinstance(parent.operator, cst.Add | cst.Subtract) and self._is(other, _LOG):
                return True  # `log(s) + m`: the shift added back
            if isinstance(parent.operator, cst.Subtract) and self._subtracted(parent, node):
                outer = self._call_of_argument(parent)
                if outer is not None and self._is(outer, _EXP):
                    exps.append(outer)
                    return True
        return False

    def _definition_used_as_shift(
        self, assign: cst.Assign, target: cst.BaseExpression, seen: set[int], exps: list[cst.Call]
    ) -> bool:
        if not isinstance(target, cst.Name):
            return False
        definition = next(
            (d for d in self.kernel.definitions.get(target.value, []) if d.node is assign), None
        )
        if definition is None:
            return False
        return all(self._used_as_shift(use, seen, exps) for use in self._uses_of(definition))

    def _uses_of(self, definition: Definition) -> list[cst.Name]:
        """The reads of the name that ``definition`` may reach."""
        if self._uses is None:
            self._uses = {}
            for node in iter_nodes(self.kernel.node.body):
                if isinstance(node, cst.Name) and not self._is_target(node):
                    self._uses.setdefault(node.value, []).append(node)
        return [
            use
            for use in self._uses.get(definition.name, [])
            if any(d is definition for d in self.reaching.reaching(use))
        ]

    def _is_target(self, name: cst.Name) -> bool:
        parent = self.structure.parent(name)
        return (
            (isinstance(parent, cst.AssignTarget) and parent.target is name)
            or (isinstance(parent, cst.Attribute) and parent.attr is name)
            or (isinstance(parent, cst.Arg) and parent.keyword is name)
            or (isinstance(parent, cst.For) and parent.target is name)
        )

    def _subtracted(self, difference: cst.BinaryOperation, node: cst.CSTNode) -> bool:
        """``x - m``, or ``m_prev - m_new`` where ``m_new = tl.maximum(m_prev, ...)``: the
        rescale of an online accumulator, which the new maximum bounds."""
        if difference.right is node:
            return True
        right = difference.right
        if not isinstance(node, cst.Name) or not isinstance(right, cst.Name):
            return False
        values = [value for _, value in self.reaching.definition_values(right)]
        return bool(values) and all(
            isinstance(value, cst.Call)
            and tl_short(self.kernel, value) == "maximum"
            and any(
                isinstance(a.value, cst.Name) and a.value.value == node.value for a in value.args
            )
            for value in values
        )

    def _call_of_argument(self, node: cst.CSTNode) -> cst.Call | None:
        parent = self.structure.parent(node)
        if isinstance(parent, cst.Arg) and parent.keyword is None:
            call = self.structure.parent(parent)
            if isinstance(call, cst.Call):
                return call
        return None

    def _is(self, node: cst.CSTNode, names: set[str]) -> bool:
        """A call of Triton's ``exp``/``log`` family, or of a helper under one of ``names``."""
        if not isinstance(node, cst.Call):
            return False
        short = tl_short(self.kernel, node)
        if short is not None:
            return short in names
        name = dotted_name(node.func)
        if name is None or name in self.kernel.module.kernels_by_name:
            return False
        return is_opaque(self.kernel, node) and name.rsplit(".", 1)[-1] in names
