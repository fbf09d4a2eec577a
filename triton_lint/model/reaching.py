"""Reaching definitions: which assignments of a name may reach one use of it.

Straight-line order, ``if`` arms and loop back edges decide it, so ``x = tl.where(mask, x, 0.0)``
kills the earlier ``x``. Provenance and every dataflow question above it read this.
"""

from __future__ import annotations

import libcst as cst

from triton_lint.model.kernel import Definition, Kernel
from triton_lint.model.structure import Context, Structure
from triton_lint.model.tree import iter_nodes


class Reaching:
    """Reaching-definition queries over one kernel (cached per use)."""

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self.structure = kernel.facts(Structure)
        self._def_of_node: dict[int, list[Definition]] = {}
        self._reaching: dict[int, tuple[cst.Name, list[Definition], bool]] = {}
        self._has_jumps: bool | None = None
        for definitions in kernel.definitions.values():
            for definition in definitions:
                self._def_of_node.setdefault(id(definition.node), []).append(definition)

    def reaching(self, use: cst.Name) -> list[Definition]:
        """Definitions of ``use``'s name that may reach this use."""
        return self.reaching_with_entry(use)[0]

    def reaching_with_entry(self, use: cst.Name) -> tuple[list[Definition], bool]:
        """The definitions that may reach ``use``, and whether the name's value on entry to
        the kernel (a parameter, a global) may reach it too: no definition always runs
        first."""
        cached = self._reaching.get(id(use))
        if cached is not None and cached[0] is use:
            return cached[1], cached[2]
        found, entry = self._reaching_uncached(use)
        self._reaching[id(use)] = (use, found, entry)
        return found, entry

    def _reaching_uncached(self, use: cst.Name) -> tuple[list[Definition], bool]:
        definitions = self.kernel.definitions.get(use.value, [])
        if not definitions:
            return [], True
        if not self.structure.contains(use):
            return list(definitions), True  # not inside this kernel's tree: be conservative
        structure = self.structure
        use_pos = structure.position(use)
        use_ctx = structure.context(use)
        ordered = sorted(definitions, key=structure.definition_position)
        before = [d for d in ordered if structure.definition_position(d) < use_pos]
        after = [d for d in ordered if structure.definition_position(d) >= use_pos]
        found: list[Definition] = []
        # Loops whose every iteration reassigns the name before the use: a later definition
        # cannot come around their back edge.
        killing: set[int] = set()
        entry = True
        use_arms = dict(use_ctx.arms)
        # later plain assignments on the way to the use: one in the same block as an earlier
        # definition, or in a block around it, overwrites it on every path to the use
        shadows: list[Context] = []
        for definition in reversed(before):
            if definition.node is self._enclosing_statement(use):
                continue  # `x = f(x)`: the use reads the earlier value
            ctx = structure.context(structure.definition_anchor(definition))
            if any(use_arms.get(branch, arm) != arm for branch, arm in ctx.arms):
                after.append(definition)  # the other arm of an `if`: only around a loop
                continue
            if any(_encloses(shadow, ctx) for shadow in shadows):
                continue
            found.append(definition)
            if definition.kind in ("assign", "unpack") and not self._jumps:
                shadows.append(ctx)
            if definition.kind != "augassign" and self._dominates(definition, use_ctx):
                killing = set(structure.context(structure.definition_anchor(definition)).loops)
                if isinstance(definition.node, cst.For):
                    killing.add(id(definition.node))  # its target is set on every iteration
                entry = False
                break
        for definition in after:
            ctx = structure.context(structure.definition_anchor(definition))
            if (set(ctx.loops) & set(use_ctx.loops)) - killing:
                found.append(definition)  # a loop back edge carries it around
        return found, entry

    @property
    def _jumps(self) -> bool:
        """The kernel has a ``break`` or ``continue``, which can leave a block before a later
        assignment in it runs."""
        if self._has_jumps is None:
            self._has_jumps = any(
                type(node) is cst.Break or type(node) is cst.Continue
                for node in iter_nodes(self.kernel.node)
            )
        return self._has_jumps

    def _enclosing_statement(self, node: cst.CSTNode) -> cst.CSTNode | None:
        for parent in self.structure.ancestors(node):
            if id(parent) in self._def_of_node:
                return parent
            if isinstance(parent, cst.BaseStatement | cst.BaseSmallStatement):
                return parent
        return None

    def _dominates(self, definition: Definition, use_ctx: Context) -> bool:
        """A definition outside branches/loops the use is not in always runs before it."""
        ctx = self.structure.context(self.structure.definition_anchor(definition))
        if isinstance(definition.node, cst.For) and id(definition.node) not in use_ctx.loops:
            return False  # the loop may not run; in its body, the target is always assigned
        arms_ok = ctx.arms == use_ctx.arms[: len(ctx.arms)]
        loops_ok = ctx.loops == use_ctx.loops[: len(ctx.loops)]
        return arms_ok and loops_ok

    def definition_values(self, use: cst.Name) -> list[tuple[Definition, cst.BaseExpression]]:
        return [(d, d.value) for d in self.reaching(use) if d.value is not None]


def _encloses(outer: Context, inner: Context) -> bool:
    """``outer``'s block is ``inner``'s or one around it: whatever runs in ``inner`` runs on
    through a later statement of ``outer``."""
    return (
        outer.arms == inner.arms[: len(outer.arms)]
        and outer.loops == inner.loops[: len(outer.loops)]
    )
