"""Constexpr parameters every launch in the project fixes to one value, and the ``if`` arms
they select.

A kernel written for several specialisations (``if IS_CAUSAL:``) may be launched for only one:
sglang's mamba ``_chunk_scan_fwd_kernel`` takes ``IS_CAUSAL`` but its one launch passes
``True``. The compiler folds the test away, so the other arm never runs, and an assignment in
the taken arm overwrites the name on every path. Only launches say this: a kernel nothing in
the project launches (a library entry point, a device helper) keeps every arm, and so does a
parameter a launch leaves to its default, a ``**kwargs`` or a value the linter cannot read.
Rules ask for it where a dead specialisation would be a false alarm; the reaching definitions
beneath (``reaching``) stay arm-blind for everyone else.
"""

from __future__ import annotations

from typing import Any, Literal

import libcst as cst

from triton_lint.model.evaluate import UNKNOWN, evaluate
from triton_lint.model.kernel import Definition, Kernel
from triton_lint.model.provenance import Provenance
from triton_lint.model.reaching import Reaching
from triton_lint.model.structure import Structure
from triton_lint.model.tree import iter_nodes

Arm = Literal["body", "orelse"]


class FixedConstexprs:
    """Values every launch passes for a constexpr, and the ``if`` arms they make dead."""

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self._values: dict[str, Any] = {}
        self._taken: dict[int, Arm | None] = {}

    def value(self, name: str) -> Any:
        """The one value every launch of the kernel passes for constexpr ``name`` (and every
        autotune config or heuristic that sets it), else UNKNOWN."""
        if name not in self._values:
            self._values[name] = self._fixed(name)
        return self._values[name]

    def _fixed(self, name: str) -> Any:
        param = self.kernel.params_by_name.get(name)
        launches = self.kernel.launches
        if param is None or not param.is_constexpr or not launches:
            return UNKNOWN
        if any(name not in site.bound_arguments(self.kernel) for site in launches):
            return UNKNOWN  # a default, a `**kwargs` or a tuner fills it in
        values = [s.value for s in self.kernel.value_sources(name) if s.origin != "default"]
        if not values or any(v is UNKNOWN or v != values[0] for v in values):
            return UNKNOWN
        return values[0]

    def taken_arm(self, branch: cst.If | cst.IfExp) -> Arm | None:
        """The arm a compile-time test always selects under the fixed values, else None."""
        if id(branch) not in self._taken:
            self._taken[id(branch)] = self._evaluate_test(branch.test)
        return self._taken[id(branch)]

    def _evaluate_test(self, test: cst.BaseExpression) -> Arm | None:
        if not self.kernel.facts(Provenance).is_compile_time(test):
            return None
        names = {n.value for n in iter_nodes(test) if isinstance(n, cst.Name)}
        env = {name: self.value(name) for name in names if name in self.kernel.params_by_name}
        env = {name: value for name, value in env.items() if value is not UNKNOWN}
        if not env:
            return None
        result = evaluate(test, env)
        if result is UNKNOWN:
            return None
        return "body" if result else "orelse"

    def dead(self, node: cst.CSTNode) -> bool:
        """``node`` sits in an ``if`` arm (or a ternary's) that the fixed values never take."""
        structure = self.kernel.facts(Structure)
        child = node
        for parent in structure.ancestors(node):
            if type(parent) is cst.If or type(parent) is cst.IfExp:
                arm = (
                    "body" if child is parent.body else "orelse" if child is parent.orelse else None
                )
                taken = self.taken_arm(parent) if arm is not None else None
                if taken is not None and taken != arm:
                    return True
            child = parent
        return False

    def never_called(self) -> bool:
        """A device helper every call of which, in the launched kernels of its file, sits in an
        arm their launches never take (``if USE_SOFTCAP: apply_softcap(...)`` with every launch
        passing ``USE_SOFTCAP=False``), and no other file of the project names it (linted
        alone, the file is all that is known): no compiled specialisation runs it."""
        project = self.kernel.module.project
        if self.kernel.launches or (
            project is not None and self.kernel.name not in project.unreferenced
        ):
            return False
        calls = [
            (other, call.node)
            for other in self.kernel.module.kernels
            if other is not self.kernel
            for call in other.calls
            if call.name == self.kernel.name
        ]
        return bool(calls) and all(other.facts(FixedConstexprs).dead(node) for other, node in calls)

    def reaching(self, use: cst.Name) -> list[Definition]:
        """`Reaching.reaching`, less the definitions a later assignment overwrites on every
        path once the dead arms are dropped (``x = f(x)`` then ``if IS_CAUSAL: x =
        tl.where(...)`` with ``IS_CAUSAL`` always True: only the ``where`` reaches)."""
        found = self.kernel.facts(Reaching).reaching(use)
        if len(found) < 2:
            return found
        structure = self.kernel.facts(Structure)
        position = structure.position(use)
        killers = [
            structure.definition_position(d)
            for d in found
            if d.kind in ("assign", "unpack")
            and structure.definition_position(d) < position
            and self._always_runs_before(d, use)
        ]
        if not killers:
            return found
        last = max(killers)
        return [
            d
            for d in found
            if not structure.definition_position(d) < last
            or structure.definition_position(d) >= position
        ]

    def _always_runs_before(self, definition: Definition, use: cst.Name) -> bool:
        """Every arm around ``definition`` that is not around ``use`` is always taken, and it
        sits in no loop ``use`` is not in."""
        structure = self.kernel.facts(Structure)
        context = structure.context(structure.definition_anchor(definition))
        use_context = structure.context(use)
        if context.loops != use_context.loops[: len(context.loops)]:
            return False
        outside = [
            b for b in definition.branches if (id(b.node), b.arm) not in set(use_context.arms)
        ]
        return bool(outside) and all(self.taken_arm(b.node) == b.arm for b in outside)
