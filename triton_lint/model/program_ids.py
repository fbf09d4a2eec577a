"""Which grid axes a value depends on: the ``tl.program_id`` calls it is computed from,
directly, through control dependence, or inside a ``@triton.jit`` helper of the same file."""

from __future__ import annotations

from typing import Any

import libcst as cst

from triton_lint.model.calls import is_opaque, program_id_axis, tl_short
from triton_lint.model.dependencies import Dependencies
from triton_lint.model.evaluate import UNKNOWN
from triton_lint.model.kernel import Kernel
from triton_lint.model.names import TL, dotted_name

_BUILTINS = {"range", "min", "max", "len", "int", "float", "bool", "abs", "print", "isinstance"}
#: Attributes fixed when the kernel compiles: ``q.dtype`` is the same in every program, even
#: when ``q`` was loaded at a per-program address.
_TYPE_ATTRIBUTES = {"dtype", "element_ty", "shape"}


class ProgramIds:
    """Program-id axes of one kernel's values (helpers followed once, not recursively)."""

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self._visiting_helpers = False

    def pid_axes(self, expr: cst.BaseExpression) -> set[Any]:
        """Axes of the ``tl.program_id`` calls ``expr`` depends on (UNKNOWN for a variable
        axis or a helper call we cannot see into, meaning "maybe any axis")."""
        axes: set[Any] = set()
        closure = self.kernel.facts(Dependencies).closure(
            expr, control=True, stop_below=_type_attribute
        )
        for node in closure:
            if isinstance(node, cst.Call):
                axes |= self._call_pid_axes(node)
        return axes

    def kernel_pid_axes(self) -> set[Any]:
        """Grid axes the kernel reads, directly or through helpers (UNKNOWN: cannot tell)."""
        axes: set[Any] = set()
        for site in self.kernel.calls:
            axes |= self._call_pid_axes(site.node)
        return axes

    def _call_pid_axes(self, call: cst.Call) -> set[Any]:
        short = tl_short(self.kernel, call)
        name = dotted_name(call.func)
        last = name.rsplit(".", 1)[-1] if name else None
        if short == "program_id" or (short is None and last == "program_id"):
            return {program_id_axis(call)}  # also wrappers such as `tle.program_id(0)`
        access = self.kernel.access_for_call(call)
        if access is not None and access.kind == "atomic":
            return {UNKNOWN}  # a ticket (`atomic_add(counter, 1)`) tells programs apart
        path = self.kernel.module.aliases.resolve(call.func)
        if path is not None and path.startswith("triton") and not path.startswith(TL):
            return {UNKNOWN}  # an extension (e.g. a shared-memory pointer): cannot tell
        if short is not None or name is None or not is_opaque(self.kernel, call):
            return set()
        if name in _BUILTINS:
            return set()
        helper = self.kernel.module.kernels_by_name.get(name)
        if helper is not None and helper is not self.kernel:
            if self._visiting_helpers:
                return {UNKNOWN}
            self._visiting_helpers = True
            try:
                return helper.facts(ProgramIds).kernel_pid_axes()
            finally:
                self._visiting_helpers = False
        return {UNKNOWN}


def _type_attribute(node: cst.CSTNode) -> bool:
    """``x.dtype``, ``x.dtype.element_ty``, ``x.shape``: compile-time facts of a value."""
    return isinstance(node, cst.Attribute) and node.attr.value in _TYPE_ATTRIBUTES
