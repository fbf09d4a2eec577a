"""Dataflow facts over one kernel: reaching definitions, dependencies and masked-lane values.

`Kernel.dataflow` exposes one `DataFlow` per kernel. Its queries answer what the provenance
flags (a flow-insensitive union) cannot:

* `reaching(name_node)`: the definitions of a name that reach one use (straight-line order,
  ``if`` arms, loop back edges), so ``x = tl.where(mask, x, 0.0)`` kills the earlier ``x``;
* `closure(expr)`: every expression node a value is computed from, following reaching
  definitions (used for "which ``program_id`` axes does this address depend on", "was this
  value shifted by a max", "where does this index come from");
* `masked_lanes(expr)`: for each masked load feeding ``expr``, what its masked-off lanes hold
  after the arithmetic in between (``0``, ``-inf``, undefined, or a non-neutral value), which
  is what decides whether a reduction over ``expr`` is correct;
* `reductions()`: the reductions (``tl.sum/max/min/argmax/argmin/cumsum/reduce/dot``) in the
  kernel with their operands and axis;
* `lane_layouts(expr)`: for each masked load feeding ``expr``, whether its 2-D axes reach
  ``expr`` as loaded or swapped by a transpose (``.T``, ``tl.trans``, ``tl.permute(x, (1, 0))``),
  which is what `mask_axes(mask, layout)` needs to say where its masked-off lanes sit;
* `pid_axes(expr)`, `kernel_pid_axes()`, `in_loop(node)`, `mask_axes(mask)`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import libcst as cst

from triton_lint.model.evaluate import UNKNOWN, evaluate
from triton_lint.model.names import TL, dotted_name
from triton_lint.model.provenance import Prov, is_wide_dtype
from triton_lint.model.tree import iter_children

if TYPE_CHECKING:
    from triton_lint.model.kernel import Definition, Kernel, MemoryAccess
    from triton_lint.model.lane_bounds import LaneBounds

#: Masked-off lane values. ``undef``: a masked load without ``other=``; ``absmin``: 0 where
#: every real lane is >= 0 (so 0 is neutral for max too); ``shifted``: a non-neutral finite
#: value produced by arithmetic (``x - mean`` on a 0 fill); ``nan``: ``-inf - -inf`` and the
#: like; ``unknown``: cannot tell (never reported).
LANE_VALUES = ("zero", "absmin", "one", "-inf", "+inf", "undef", "shifted", "nan", "unknown")

REDUCTIONS = {
    "sum": "sum",
    "xor_sum": "sum",
    "cumsum": "sum",
    "max": "max",
    "argmax": "max",
    "min": "min",
    "argmin": "min",
    "cumprod": "prod",
    "prod": "prod",
    "reduce": "reduce",
    "associative_scan": "reduce",
    "dot": "dot",
    "dot_scaled": "dot",
}
NEUTRAL = {
    "sum": {"zero", "absmin"},
    "dot": {"zero", "absmin"},
    "max": {"-inf", "absmin"},
    "min": {"+inf"},
    "prod": {"one"},
    "reduce": set(LANE_VALUES) - {"undef"},
}
#: The ``other=`` text a safe fix inserts, per reduction kind.
NEUTRAL_TEXT = {"sum": "0.0", "dot": "0.0", "max": '-float("inf")', "min": 'float("inf")'}

_EXP = {"exp", "exp2", "fast_expf", "expf"}
_BUILTINS = {"range", "min", "max", "len", "int", "float", "bool", "abs", "print", "isinstance"}
_CAST_METHODS = {"to", "cast"}


@dataclass(frozen=True)
class Reduction:
    """A reduction call: ``kind`` groups ops by neutral element (sum, max, min, dot, ...)."""

    call: cst.Call
    op: str  # "sum", "argmax", "dot", ...
    kind: str
    operands: tuple[cst.BaseExpression, ...]
    axis: Any  # an int, None (all axes), or UNKNOWN


@dataclass(frozen=True)
class Context:
    """Where a node sits: the ``if`` arms and loops around it, by identity."""

    arms: tuple[tuple[int, str], ...]
    loops: tuple[int, ...]


class DataFlow:
    """Dataflow queries over one kernel (built lazily, cached)."""

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self._parent: dict[int, cst.CSTNode] = {}
        self._pre: dict[int, int] = {}
        self._last: dict[int, int] = {}
        self._build_parents(kernel.node)
        self._context: dict[int, Context] = {}
        self._lanes: dict[int, dict[int, frozenset[str]]] = {}
        self._layouts: dict[int, dict[int, frozenset[str]]] = {}
        self._busy: set[tuple[int, int]] = set()
        self._bounded_aranges: set[int] | None = None
        self._fill_override: dict[int, str] = {}
        self._visiting_helpers = False
        self._lane_bounds: LaneBounds | None = None
        self._def_of_node: dict[int, list[Definition]] = {}
        self._reaching: dict[int, tuple[cst.Name, list[Definition], bool]] = {}
        for definitions in kernel.definitions.values():
            for definition in definitions:
                self._def_of_node.setdefault(id(definition.node), []).append(definition)

    # -- structure ---------------------------------------------------------------------
    def _build_parents(self, root: cst.CSTNode) -> None:
        """Parent links and pre-order numbers (source order) of every node in the kernel."""
        counter = 0
        stack: list[tuple[cst.CSTNode, bool]] = [(root, False)]
        while stack:
            node, done = stack.pop()
            if done:
                self._last[id(node)] = counter
                continue
            counter += 1
            self._pre[id(node)] = counter
            stack.append((node, True))
            kids = list(iter_children(node))
            for child in kids:
                self._parent[id(child)] = node
            stack.extend((child, False) for child in reversed(kids))

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self._parent.get(id(node))

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        current = self.parent(node)
        while current is not None and current is not self.kernel.node:
            yield current
            current = self.parent(current)

    def context(self, node: cst.CSTNode) -> Context:
        key = id(node)
        if key not in self._context:
            arms: list[tuple[int, str]] = []
            loops: list[int] = []
            child = node
            for parent in self.ancestors(node):
                if isinstance(parent, cst.If | cst.IfExp):
                    if child is parent.body:
                        arms.append((id(parent), "body"))
                    elif child is parent.orelse:
                        arms.append((id(parent), "orelse"))
                elif isinstance(parent, cst.For | cst.While) and child is parent.body:
                    loops.append(id(parent))
                child = parent
            self._context[key] = Context(tuple(reversed(arms)), tuple(reversed(loops)))
        return self._context[key]

    def early_exit_tests(self, node: cst.CSTNode) -> list[cst.BaseExpression]:
        """Tests of ``if cond: return`` statements that run before ``node``."""
        tests = []
        position = self._position(node)
        for candidate_id, parent in self._parent.items():
            if not isinstance(parent, cst.If) or id(parent.body) != candidate_id:
                continue
            body = parent.body
            if self._position(parent) >= position or not isinstance(body, cst.IndentedBlock):
                continue
            last = body.body[-1] if body.body else None
            if isinstance(last, cst.SimpleStatementLine) and any(
                isinstance(small, cst.Return) for small in last.body
            ):
                tests.append(parent.test)
        return tests

    def in_loop(self, node: cst.CSTNode) -> bool:
        """True when ``node`` is inside the body of a ``for``/``while`` loop of the kernel."""
        return bool(self.context(node).loops)

    def _position(self, node: cst.CSTNode) -> int:
        return self._pre.get(id(node), 0)

    def _def_position(self, definition: Definition) -> int:
        """Where a definition takes effect: after its statement (a loop target: its header)."""
        node = definition.node
        if isinstance(node, cst.For):
            return self._last.get(id(node.iter), 0)
        return self._last.get(id(node), 0)

    def _def_anchor(self, definition: Definition) -> cst.CSTNode:
        node = definition.node
        return node.target if isinstance(node, cst.For) else node

    # -- reaching definitions ----------------------------------------------------------
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
        if id(use) not in self._parent:
            return list(definitions), True  # not inside this kernel's tree: be conservative
        use_pos = self._position(use)
        use_ctx = self.context(use)
        ordered = sorted(definitions, key=self._def_position)
        before = [d for d in ordered if self._def_position(d) < use_pos]
        after = [d for d in ordered if self._def_position(d) >= use_pos]
        found: list[Definition] = []
        # Loops whose every iteration reassigns the name before the use: a later definition
        # cannot come around their back edge.
        killing: set[int] = set()
        entry = True
        use_arms = dict(use_ctx.arms)
        for definition in reversed(before):
            if definition.node is self._enclosing_statement(use):
                continue  # `x = f(x)`: the use reads the earlier value
            arms = self.context(self._def_anchor(definition)).arms
            if any(use_arms.get(branch, arm) != arm for branch, arm in arms):
                after.append(definition)  # the other arm of an `if`: only around a loop
                continue
            found.append(definition)
            if definition.kind != "augassign" and self._dominates(definition, use_ctx):
                killing = set(self.context(self._def_anchor(definition)).loops)
                if isinstance(definition.node, cst.For):
                    killing.add(id(definition.node))  # its target is set on every iteration
                entry = False
                break
        for definition in after:
            ctx = self.context(self._def_anchor(definition))
            if (set(ctx.loops) & set(use_ctx.loops)) - killing:
                found.append(definition)  # a loop back edge carries it around
        return found, entry

    def _enclosing_statement(self, node: cst.CSTNode) -> cst.CSTNode | None:
        for parent in self.ancestors(node):
            if id(parent) in self._def_of_node:
                return parent
            if isinstance(parent, cst.BaseStatement | cst.BaseSmallStatement):
                return parent
        return None

    def _dominates(self, definition: Definition, use_ctx: Context) -> bool:
        """A definition outside branches/loops the use is not in always runs before it."""
        ctx = self.context(self._def_anchor(definition))
        if isinstance(definition.node, cst.For) and id(definition.node) not in use_ctx.loops:
            return False  # the loop may not run; in its body, the target is always assigned
        arms_ok = ctx.arms == use_ctx.arms[: len(ctx.arms)]
        loops_ok = ctx.loops == use_ctx.loops[: len(ctx.loops)]
        return arms_ok and loops_ok

    def definition_values(self, use: cst.Name) -> list[tuple[Definition, cst.BaseExpression]]:
        return [(d, d.value) for d in self.reaching(use) if d.value is not None]

    # -- closure -----------------------------------------------------------------------
    def closure(
        self,
        expr: cst.BaseExpression,
        *,
        through_calls: bool = True,
        values_only: bool = False,
        control: bool = False,
        stop_below: Callable[[cst.CSTNode], bool] | None = None,
    ) -> Iterator[cst.CSTNode]:
        """Every node ``expr`` is computed from, following reaching definitions of names.

        Augmented assignments also read their target. ``through_calls=False`` stops at the
        arguments of calls that are not Triton (helpers whose result we cannot see into).
        ``control=True`` also follows the tests of the branches a definition sits in
        (control dependence). ``values_only=True`` follows data only: it does not enter
        the pointer and mask of a
        load (the loaded value does not depend on the address arithmetic) nor subscripts.
        ``stop_below(node)`` True yields ``node`` but not what it is computed from.
        """
        seen: set[int] = set()
        pending: list[cst.CSTNode] = [expr]
        while pending:
            node = pending.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            yield node
            if stop_below is not None and stop_below(node):
                continue
            if isinstance(node, cst.Name):
                for definition in self.reaching(node):
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
            elif isinstance(node, cst.Lambda) or self._stop(node, through_calls, values_only):
                continue
            elif values_only and isinstance(node, cst.Subscript):
                pending.append(node.value)
            else:
                pending.extend(iter_children(node))

    def _stop(self, node: cst.CSTNode, through_calls: bool, values_only: bool) -> bool:
        if not isinstance(node, cst.Call):
            return False
        if not through_calls and self.is_opaque(node):
            return True
        return values_only and self._is_load(node)

    def _is_load(self, call: cst.Call) -> bool:
        access = self.kernel.access_for_call(call)
        return access is not None and access.kind == "load"

    def fill_value(self, node: cst.BaseExpression) -> Any:
        """Float value of a fill such as ``float("-inf")``, ``-math.inf``, ``NEG_INF``."""
        return _float_value(self.kernel, node)

    def _target_reads(self, definition: Definition) -> list[cst.BaseExpression]:
        """Values an augmented assignment's target held before it: the definitions that
        reach its target (``dt += bias`` reads the load before it, not a later
        ``dt = tl.log(...)``)."""
        target = definition.node.target if isinstance(definition.node, cst.AugAssign) else None
        if isinstance(target, cst.Name) and id(target) in self._parent:
            return [d.value for d in self.reaching(target) if d.value is not None]
        return [d.value for d in self.kernel.definitions.get(definition.name, []) if d.value]

    def is_opaque(self, call: cst.Call) -> bool:
        """A call whose result we cannot see into: a helper, not Triton nor a tensor method."""
        path = self.kernel.module.aliases.resolve(call.func)
        if path is not None:
            return not path.startswith("triton")
        if isinstance(call.func, cst.Attribute):
            flags = self.kernel.prov(call.func.value)
            if flags & (Prov.TENSOR | Prov.LOADED | Prov.ARANGE | Prov.PROGRAM_ID):
                return False  # x.to(...), x.reshape(...)
        return True

    def tl_short(self, call: cst.Call) -> str | None:
        """Short ``triton.language`` name of a call (``exp`` for ``tl.math.exp``), or None.

        ``libdevice.exp`` spellings count as ``exp``.
        """
        path = self.kernel.module.aliases.resolve(call.func)
        if path is not None and path.startswith("triton"):
            return path.rsplit(".", 1)[-1]
        if isinstance(call.func, cst.Attribute):
            text = dotted_name(call.func.value)
            if text is not None and "libdevice" in text:
                return call.func.attr.value
        return None

    def calls_in(self, expr: cst.BaseExpression, *names: str) -> list[cst.Call]:
        wanted = set(names)
        return [
            node
            for node in self.closure(expr)
            if isinstance(node, cst.Call) and self.tl_short(node) in wanted
        ]

    def additive_terms(self, expr: cst.BaseExpression) -> Iterator[cst.CSTNode]:
        """Nodes whose value is summed into ``expr``: through names, ``+``/``-``, casts,
        ``tl.where`` arms and subscripts, but not through products, quotients or other calls
        (a decay factor ``kv * exp(g)`` is not a term of the sum)."""
        seen: set[int] = set()
        pending: list[cst.CSTNode] = [expr]
        while pending:
            node = pending.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            yield node
            if isinstance(node, cst.Name):
                for definition, value in self.definition_values(node):
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
                short = self.tl_short(node)
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

    # -- program ids -------------------------------------------------------------------
    def program_id_axis(self, call: cst.Call) -> Any:
        """The literal axis of a `tl.program_id(axis)` call (UNKNOWN when not a literal)."""
        for arg in call.args:
            if arg.keyword is None or arg.keyword.value == "axis":
                return evaluate(arg.value)
        return UNKNOWN

    def pid_axes(self, expr: cst.BaseExpression) -> set[Any]:
        """Axes of the ``tl.program_id`` calls ``expr`` depends on (UNKNOWN for a variable
        axis or a helper call we cannot see into, meaning "maybe any axis")."""
        axes: set[Any] = set()
        for node in self.closure(expr, control=True):
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
        short = self.tl_short(call)
        name = dotted_name(call.func)
        last = name.rsplit(".", 1)[-1] if name else None
        if short == "program_id" or (short is None and last == "program_id"):
            return {self.program_id_axis(call)}  # also wrappers such as `tle.program_id(0)`
        access = self.kernel.access_for_call(call)
        if access is not None and access.kind == "atomic":
            return {UNKNOWN}  # a ticket (`atomic_add(counter, 1)`) tells programs apart
        path = self.kernel.module.aliases.resolve(call.func)
        if path is not None and path.startswith("triton") and not path.startswith(TL):
            return {UNKNOWN}  # an extension (e.g. a shared-memory pointer): cannot tell
        if short is not None or name is None or not self.is_opaque(call):
            return set()
        if name in _BUILTINS:
            return set()
        helper = self.kernel.module.kernels_by_name.get(name)
        if helper is not None and helper is not self.kernel:
            if self._visiting_helpers:
                return {UNKNOWN}
            self._visiting_helpers = True
            try:
                return helper.dataflow.kernel_pid_axes()
            finally:
                self._visiting_helpers = False
        return {UNKNOWN}

    # -- reductions --------------------------------------------------------------------
    def reductions(self) -> list[Reduction]:
        found: list[Reduction] = []
        for site in self.kernel.calls:
            call = site.node
            short = self.tl_short(call)
            operands: tuple[cst.BaseExpression, ...]
            if short in REDUCTIONS and site.tl_name is not None:
                args = [a for a in call.args if a.keyword is None]
                if not args:
                    continue
                operands = (args[0].value,)
                if short in ("dot", "dot_scaled") and len(args) > 1:
                    operands = (args[0].value, args[1].value)
                axis = _kwarg(call, "axis")
                if axis is None and short not in ("dot", "dot_scaled") and len(args) > 1:
                    axis = args[1].value
                found.append(Reduction(call, short, REDUCTIONS[short], operands, _axis_value(axis)))
            elif (
                isinstance(call.func, cst.Attribute)
                and call.func.attr.value in REDUCTIONS
                and call.func.attr.value not in ("dot", "dot_scaled", "reduce")
                and Prov.TENSOR in self.kernel.prov(call.func.value)
                and site.tl_name is None
            ):
                op = call.func.attr.value
                args = [a for a in call.args if a.keyword is None]
                axis = _kwarg(call, "axis") or (args[0].value if args else None)
                found.append(
                    Reduction(call, op, REDUCTIONS[op], (call.func.value,), _axis_value(axis))
                )
        return found

    # -- masks -------------------------------------------------------------------------
    def mask_axes(self, mask: cst.BaseExpression, layout: str = "same") -> set[int] | None:
        """Axes a 2-D mask constrains (``offs[:, None] < m`` -> {0}); None if unknown.

        ``layout`` is how the masked value reaches the use (see `lane_layouts`): ``"swapped"``
        maps the axes through a 2-D transpose (``w.T`` of a tile masked along axis 0 is masked
        along axis 1); ``"unknown"``, or a transpose of a mask of unknown rank, gives None.
        """
        if layout == "unknown":
            return None
        axes = self._mask_axes(mask)
        if layout != "swapped" or axes is None:
            return axes
        if not self._mask_axes(mask, fallback=False):
            return None  # a mask of 1-D lanes: its rank, so where a transpose puts it, is unknown
        return {1 - axis for axis in axes}

    def _mask_axes(self, mask: cst.BaseExpression, fallback: bool = True) -> set[int] | None:
        axes: set[int] = set()
        saw_lanes = False
        for node in self.closure(mask):
            if isinstance(node, cst.Subscript) and len(node.slice) == 2:
                axis = expanded_axis(node)
                if axis is None:
                    return None
                axes.add(axis)
            elif isinstance(node, cst.Call) and self.tl_short(node) == "arange":
                saw_lanes = True
        if not axes:
            return {0} if saw_lanes and fallback else None
        return axes

    def is_tail_mask(self, mask: cst.BaseExpression) -> bool:
        """Every comparison in ``mask`` bounds lanes from above (``offs < n``): the masked-off
        lanes are at the end, so a forward scan never carries them into valid lanes."""
        found = False
        for node in self.closure(mask):
            if isinstance(node, cst.Comparison):
                for comparison in node.comparisons:
                    op = comparison.operator
                    left_lanes = Prov.ARANGE in self.kernel.prov(node.left)
                    right_lanes = Prov.ARANGE in self.kernel.prov(comparison.comparator)
                    upper = (isinstance(op, cst.LessThan | cst.LessThanEqual) and left_lanes) or (
                        isinstance(op, cst.GreaterThan | cst.GreaterThanEqual) and right_lanes
                    )
                    if not upper:
                        return False
                    found = True
        return found

    def is_lane_mask(self, cond: cst.BaseExpression) -> bool:
        """A condition built from ``tl.arange`` lanes (or a load's mask): a re-mask."""
        flags = self.kernel.prov(cond)
        if flags & (Prov.ARANGE | Prov.WRAPPED) and Prov.LOADED not in flags:
            return True
        masks = {_code(self.kernel, a.mask) for a in self.kernel.accesses if a.mask is not None}
        return _code(self.kernel, cond) in masks

    def _memoized(
        self,
        cache: dict[int, dict[int, frozenset[str]]],
        expr: cst.BaseExpression,
        compute: Callable[[cst.BaseExpression], dict[int, frozenset[str]]],
    ) -> dict[int, frozenset[str]]:
        """``compute(expr)`` once per node; a node met again while it is being computed (a
        loop-carried definition) contributes nothing on that path."""
        key = id(expr)
        if key in cache:
            return cache[key]
        busy = (id(cache), key)
        if busy in self._busy:
            return {}
        self._busy.add(busy)
        try:
            result = compute(expr)
        finally:
            self._busy.discard(busy)
        cache[key] = result
        return result

    # -- masked lanes ------------------------------------------------------------------
    def masked_lanes(self, expr: cst.BaseExpression) -> dict[int, frozenset[str]]:
        """id(load access call) -> the values its masked-off lanes may hold in ``expr``."""
        return self._memoized(self._lanes, expr, self._lanes_of)

    def lanes_with_fill(
        self, expr: cst.BaseExpression, load: cst.Call, fill: str
    ) -> frozenset[str]:
        """Masked lanes of ``load`` in ``expr`` if the load had ``other=`` of class ``fill``."""
        saved = self._lanes
        self._lanes = {}
        self._fill_override = {id(load): fill}
        try:
            return self.masked_lanes(expr).get(id(load), frozenset())
        finally:
            self._fill_override = {}
            self._lanes = saved

    def load_fill(self, access: MemoryAccess) -> str:
        """Class of a masked load's ``other=`` ("undef" when absent)."""
        return "undef" if access.other is None else self._fill_class(access.other)

    def _fill_class(self, other: cst.BaseExpression) -> str:
        """An integer ``other=0`` fills an integer tensor, in kernels almost always lengths,
        counts or indices (>= 0), so 0 is neutral for their max too."""
        if isinstance(other, cst.Integer) and evaluate(other) == 0:
            return "absmin"
        return _classify(self.kernel, other)

    def load_of(self, call_id: int) -> MemoryAccess | None:
        for access in self.kernel.accesses:
            if id(access.call) == call_id:
                return access
        return None

    def _lanes_of(self, node: cst.BaseExpression) -> dict[int, frozenset[str]]:
        if isinstance(node, cst.Name):
            merged: dict[int, set[str]] = {}
            reaching = self.reaching(node)
            overwritten = self._remasked_before(reaching)
            for definition in reaching:
                if id(definition.node) in overwritten:
                    continue  # its value reaches only through the re-mask after it
                parts = []
                if definition.value is not None and definition.kind != "for":
                    value_lanes = self.masked_lanes(definition.value)
                    if definition.kind == "augassign" and isinstance(
                        definition.node, cst.AugAssign
                    ):
                        target = definition.node.target
                        old = self.masked_lanes(target)
                        clean = None
                        fill = self._additive_mask(definition.value)
                        if (
                            old
                            and fill is not None
                            and isinstance(definition.node.operator, cst.AddAssign)
                        ):
                            value_lanes = {load: frozenset({fill}) for load in old}
                        else:
                            if old and not value_lanes:
                                clean = self._clean_class(definition.value)
                            elif value_lanes and not old:
                                clean = self._clean_class(target)
                            value_lanes = _binary(
                                definition.node.operator,
                                old,
                                value_lanes,
                                clean,
                                left_masked=bool(old),
                            )
                    parts.append(value_lanes)
                for part in parts:
                    for load, values in part.items():
                        merged.setdefault(load, set()).update(values)
            return {k: frozenset(v) for k, v in merged.items()}
        if isinstance(node, cst.Call):
            return self._call_lanes(node)
        if isinstance(node, cst.BinaryOperation):
            left = self.masked_lanes(node.left)
            right = self.masked_lanes(node.right)
            if isinstance(node.operator, cst.Add):
                # ``qk + tl.where(mask, 0, -inf)``: an additive re-mask sets the masked lanes
                for lanes, bias in ((left, node.right), (right, node.left)):
                    fill = self._additive_mask(bias)
                    if lanes and fill is not None:
                        return {load: frozenset({fill}) for load in lanes}
            constant = None
            if left and not right:
                constant = self._clean_class(node.right)
            elif right and not left:
                constant = self._clean_class(node.left)
            return _binary(node.operator, left, right, constant, left_masked=bool(left))
        if isinstance(node, cst.UnaryOperation):
            inner = self.masked_lanes(node.expression)
            if isinstance(node.operator, cst.Minus):
                return _map(inner, _NEGATE)
            return inner
        if isinstance(node, cst.Subscript):
            return self.masked_lanes(node.value)
        if isinstance(node, cst.IfExp):
            return _join(self.masked_lanes(node.body), self.masked_lanes(node.orelse))
        if isinstance(node, cst.Attribute) and node.attr.value == "T":
            return self.masked_lanes(node.value)
        return {}

    def _remasked_before(self, reaching: list[Definition]) -> set[int]:
        """Definitions a later re-mask among ``reaching`` overwrites, so that only the
        re-masked value reaches: an additive ``x += tl.where(mask, 0, -inf)`` in the same block
        (under an ``if`` the old value reaches too), or a `_guarded_remask`."""
        out: set[int] = set()
        for aug in reaching:
            if aug.kind != "augassign" or not isinstance(aug.node, cst.AugAssign):
                continue
            if aug.value is None or self._additive_mask(aug.value) is None:
                continue
            for old in self.reaching(aug.node.target):
                if old.branches == aug.branches and old.order < aug.order:
                    out.add(id(old.node))
        for remask in reaching:
            kept = self._guarded_remask(remask)
            if kept is not None:
                out.update(id(old.node) for old in self.reaching(kept) if old.order < remask.order)
        return out

    def _guarded_remask(self, definition: Definition) -> cst.Name | None:
        """``x`` of ``x = tl.where(mask, x, fill)`` (or ``where(mask, fill, x)``) under an
        ``if`` on a runtime test, such as ``if start + BLOCK > n:``: a re-mask of the tiles
        that need one, so the value before it does not reach past it. Under a compile-time
        flag (``if IS_CAUSAL:``) the unmasked value reaches on the other path."""
        value = definition.value
        if definition.kind != "assign" or not definition.branches:
            return None
        if not (isinstance(value, cst.Call) and self.tl_short(value) == "where"):
            return None
        if any(self.kernel.is_compile_time(branch.test) for branch in definition.branches):
            return None
        args = [a.value for a in value.args if a.keyword is None]
        arms = [arm for arm in args[1:] if isinstance(arm, cst.Name)]
        kept = [arm for arm in arms if arm.value == definition.name]
        return kept[0] if len(args) == 3 and kept else None

    def _helper_selects(self, call: cst.Call) -> bool:
        """``call`` is to a ``@triton.jit`` helper of this file that calls ``tl.where``."""
        helper = self.kernel.module.kernels_by_name.get(dotted_name(call.func) or "")
        return helper is not None and any(helper.calls_to("where"))

    def _clean_class(self, node: cst.BaseExpression) -> str | None:
        """Class of an operand without masked lanes: a constant's sign, ``"tensor"`` for an
        elementwise tensor (an accumulator, lane offsets), or None for a broadcast scalar
        (a parameter, a reduction result, a scalar load) that shifts every lane alike."""
        constant = _constant(self.kernel, node)
        if constant is not None:
            return constant
        if self._is_broadcast(node, 4):
            return None
        flags = self.kernel.prov(node)
        if not flags & (Prov.TENSOR | Prov.LOADED | Prov.ARANGE | Prov.WRAPPED):
            return None  # parameters and program ids: scalars
        return "tensor"

    def _is_broadcast(self, node: cst.BaseExpression, depth: int) -> bool:
        """A reduction result (``mean = tl.sum(x) / n``, ``m[:, None]``) or a scalar load."""
        if depth <= 0:
            return False
        if isinstance(node, cst.Subscript):
            return self._is_broadcast(node.value, depth - 1)
        if isinstance(node, cst.BinaryOperation):
            return self._is_broadcast(node.left, depth - 1) or self._is_broadcast(
                node.right, depth - 1
            )
        if isinstance(node, cst.Name):
            values = self.definition_values(node)
            return bool(values) and all(self._is_broadcast(value, depth - 1) for _, value in values)
        if isinstance(node, cst.Call):
            short = self.tl_short(node)
            if short in REDUCTIONS and short not in ("dot", "dot_scaled", "cumsum", "cumprod"):
                return True
            access = self.kernel.access_for_call(node)
            if access is not None and access.kind == "load" and access.pointer is not None:
                pointer = self.kernel.prov(access.pointer)
                return not pointer & (Prov.ARANGE | Prov.WRAPPED | Prov.BLOCK_PTR | Prov.DESCRIPTOR)
            if isinstance(node.func, cst.Attribute) and node.func.attr.value in ("to", "cast"):
                return self._is_broadcast(node.func.value, depth - 1)
        return False

    def _call_lanes(self, call: cst.Call) -> dict[int, frozenset[str]]:
        kernel = self.kernel
        access = kernel.access_for_call(call)
        if access is not None:
            if access.kind != "load" or access.mask is None or access.via_descriptor:
                return {}
            if id(call) in self._fill_override:
                return {id(call): frozenset({self._fill_override[id(call)]})}
            return {id(call): frozenset({self.load_fill(access)})}
        short = self.tl_short(call)
        args = [a.value for a in call.args if a.keyword is None]
        if isinstance(call.func, cst.Attribute) and short is None:
            method = call.func.attr.value
            receiver = self.masked_lanes(call.func.value)
            if method in ("to", "cast", "reshape", "trans", "permute", "broadcast_to", "view"):
                return receiver
            if method in REDUCTIONS:
                return {}
            return _map(receiver, _OPAQUE)
        if short is None:
            # a helper that selects with `tl.where` may re-mask: its lanes are unknown
            table = _OPAQUE_ALL if self._helper_selects(call) else _OPAQUE
            merged: dict[int, frozenset[str]] = {}
            for arg in args:
                merged = _join(merged, _map(self.masked_lanes(arg), table))
            return merged
        if short == "dot" and len(args) >= 2:
            # output lanes of masked rows of ``a`` or masked columns of ``b``
            return _map(self._dot_lanes(args[0], args[1], self.masked_lanes), _DOT_MAP)
        if short in REDUCTIONS or short in ("load", "program_id", "arange", "zeros", "full"):
            return {}
        if short == "where" and len(args) == 3:
            if self.is_lane_mask(args[0]):
                other = self.masked_lanes(args[2])
                if other:
                    return other
                return {}  # re-masked with a clean value: the rule checks that value itself
            body, orelse = self.masked_lanes(args[1]), self.masked_lanes(args[2])
            return _map(_join(body, orelse), _OPAQUE_KEEP_UNDEF)
        first = self.masked_lanes(args[0]) if args else {}
        if short in ("cast", "reshape", "trans", "permute", "broadcast_to", "expand_dims", "view"):
            return first
        if short in _EXP:
            return _map(first, _EXP_MAP)
        if short in ("log", "log2"):
            return _map(first, _LOG_MAP)
        if short == "abs":
            return _map(first, _ABS_MAP)
        if short in ("maximum", "minimum") and len(args) == 2:
            second = self.masked_lanes(args[1])
            return _map(_join(first, second), _OPAQUE)
        merged = first
        for arg in args[1:]:
            merged = _join(merged, self.masked_lanes(arg))
        return _map(merged, _OPAQUE)

    # -- lane layouts ------------------------------------------------------------------
    def lane_layouts(self, expr: cst.BaseExpression) -> dict[int, frozenset[str]]:
        """id(masked load call) -> how its 2-D axes reach ``expr``: ``"same"`` (as loaded),
        ``"swapped"`` (through an odd number of 2-D transposes: ``x.T``, ``tl.trans(x)``,
        ``x.trans()``, ``tl.trans(x, 1, 0)``, ``tl.permute(x, (1, 0))``) or ``"unknown"`` (another
        permutation). Follows the same paths as `masked_lanes`, over-approximating."""
        return self._memoized(self._layouts, expr, self._layouts_of)

    def _layouts_of(self, node: cst.BaseExpression) -> dict[int, frozenset[str]]:
        if isinstance(node, cst.Name):
            merged: dict[int, frozenset[str]] = {}
            for definition in self.reaching(node):
                if definition.value is None or definition.kind == "for":
                    continue
                merged = _join(merged, self.lane_layouts(definition.value))
                if definition.kind == "augassign" and isinstance(definition.node, cst.AugAssign):
                    merged = _join(merged, self.lane_layouts(definition.node.target))
            return merged
        if isinstance(node, cst.Call):
            return self._call_layouts(node)
        if isinstance(node, cst.BinaryOperation):
            return _join(self.lane_layouts(node.left), self.lane_layouts(node.right))
        if isinstance(node, cst.UnaryOperation):
            return self.lane_layouts(node.expression)
        if isinstance(node, cst.Subscript):
            return self.lane_layouts(node.value)
        if isinstance(node, cst.IfExp):
            return _join(self.lane_layouts(node.body), self.lane_layouts(node.orelse))
        if isinstance(node, cst.Attribute) and node.attr.value == "T":
            return _permute_layouts(self.lane_layouts(node.value), "swapped")
        return {}

    def _call_layouts(self, call: cst.Call) -> dict[int, frozenset[str]]:
        access = self.kernel.access_for_call(call)
        if access is not None:
            if access.kind != "load" or access.mask is None or access.via_descriptor:
                return {}
            return {id(call): frozenset({"same"})}
        short = self.tl_short(call)
        args = [a.value for a in call.args if a.keyword is None]
        if isinstance(call.func, cst.Attribute) and short is None:
            method = call.func.attr.value
            receiver = self.lane_layouts(call.func.value)
            if method in ("trans", "permute"):
                return _permute_layouts(receiver, _transpose(call, args, method))
            if method in REDUCTIONS:
                return {}
            return receiver
        if short == "dot" and len(args) >= 2:
            return self._dot_lanes(args[0], args[1], self.lane_layouts)
        if short in REDUCTIONS or short in ("load", "program_id", "arange", "zeros", "full"):
            return {}
        if short in ("trans", "permute") and args:
            first = self.lane_layouts(args[0])
            return _permute_layouts(first, _transpose(call, args[1:], short))
        merged: dict[int, frozenset[str]] = {}
        for arg in args:
            merged = _join(merged, self.lane_layouts(arg))
        return merged

    def _dot_lanes(
        self,
        a: cst.BaseExpression,
        b: cst.BaseExpression,
        lanes: Callable[[cst.BaseExpression], dict[int, frozenset[str]]],
    ) -> dict[int, frozenset[str]]:
        """``lanes`` of the loads whose masked lanes ``tl.dot(a, b)`` carries into its result:
        those masked only along the rows of ``a`` (axis 0) or the columns of ``b`` (axis 1),
        which stay where they are. Lanes masked along K are combined, not carried."""
        carried: dict[int, frozenset[str]] = {}
        for operand, axis in ((a, 0), (b, 1)):
            layouts = self.lane_layouts(operand)
            for load, values in lanes(operand).items():
                access = self.load_of(load)
                if access is None or access.mask is None:
                    continue
                axes = [self.mask_axes(access.mask, layout) for layout in layouts.get(load, ())]
                if axes and all(found == {axis} for found in axes):
                    carried = _join(carried, {load: values})
        return carried

    def _additive_mask(self, expr: cst.BaseExpression) -> str | None:
        """The fill class of ``tl.where(lane_mask, 0, fill)`` (added to re-mask), else None."""
        fill = self.where_fill(expr)
        if fill is None:
            return None
        args = [a.value for a in expr.args if a.keyword is None]  # type: ignore[attr-defined]
        return fill if _constant(self.kernel, args[1]) == "zero" else None

    def where_fill(self, expr: cst.BaseExpression) -> str | None:
        """If ``expr`` is ``tl.where(lane_mask, x, fill)``, the class of ``fill``."""
        if isinstance(expr, cst.Call) and self.tl_short(expr) == "where":
            args = [a.value for a in expr.args if a.keyword is None]
            if len(args) == 3 and self.is_lane_mask(args[0]):
                return _classify(self.kernel, args[2])
        return None

    # -- widening ----------------------------------------------------------------------
    def is_widening(self, node: cst.CSTNode) -> bool:
        """``x.to(tl.int64)``, ``x.cast(tl.int64)`` or ``tl.cast(x, tl.int64)``."""
        return is_wide_dtype(self.cast_dtype(node))

    def cast_dtype(self, node: cst.CSTNode) -> str | None:
        """The canonical dtype path of ``x.to(dtype)``, ``x.cast(dtype)`` or
        ``tl.cast(x, dtype)`` (``triton.language.int64``), else None."""
        parts = self.cast_parts(node)
        return self.kernel.module.aliases.resolve(parts[1]) if parts is not None else None

    def cast_parts(self, node: cst.CSTNode) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
        """``(x, dtype)`` of ``x.to(dtype)``, ``x.cast(dtype)`` or ``tl.cast(x, dtype)``."""
        if not isinstance(node, cst.Call):
            return None
        positional = [arg.value for arg in node.args if arg.keyword is None]
        if self.tl_short(node) == "cast":  # tl.cast(x, dtype), before the method spelling
            source = positional[0] if positional else None
            dtype = positional[1] if len(positional) > 1 else _kwarg(node, "dtype")
        elif isinstance(node.func, cst.Attribute) and node.func.attr.value in _CAST_METHODS:
            source = node.func.value
            dtype = positional[0] if positional else _kwarg(node, "dtype")
        else:
            return None
        return None if source is None or dtype is None else (source, dtype)

    def lane_sources(self, expr: cst.BaseExpression) -> tuple[list[cst.Call], list[cst.Call]]:
        """The ``tl.arange`` calls whose lanes reach ``expr`` arithmetically, and the loads
        whose values do (a gather's index vector). Loads are not entered."""
        aranges: list[cst.Call] = []
        loads: list[cst.Call] = []
        for node in self.closure(expr, values_only=True):
            if isinstance(node, cst.Call):
                if self.tl_short(node) == "arange":
                    aranges.append(node)
                elif self._is_load(node):
                    loads.append(node)
        return aranges, loads

    def extension_pointer(self, pointer: cst.BaseExpression) -> bool:
        """The pointer comes from a Triton extension outside ``triton.language`` (e.g. a
        shared-memory ``local_ptr``), whose bounds the kernel allocated itself."""
        for node in self.closure(pointer, values_only=True):
            if isinstance(node, cst.Call):
                path = self.kernel.module.aliases.resolve(node.func)
                if path is not None and path.startswith("triton.") and not path.startswith(TL):
                    return True
        return False

    @property
    def lane_bounds(self) -> LaneBounds:
        """Evidence that lanes can run past the end of a tensor (see `lane_bounds`)."""
        if self._lane_bounds is None:
            from triton_lint.model.lane_bounds import LaneBounds  # it reads this module

            self._lane_bounds = LaneBounds(self)
        return self._lane_bounds

    def whole_extent(self, arange: cst.Call) -> bool:
        """``name = tl.arange(0, 256)``: lanes over a fixed extent, not shifted by a tile,
        program or loop offset (a fixed-size dimension such as a head or a lookup table)."""
        args = [a.value for a in arange.args if a.keyword is None]
        if len(args) != 2 or evaluate(args[0]) != 0:
            return False
        # a constexpr extent (HEAD_DIM) counts when the kernel never bounds these lanes in
        # any mask: the author treats them as the whole dimension
        if not isinstance(args[1], cst.Integer) and (
            not self.kernel.is_compile_time(args[1]) or id(arange) in self._masked_aranges()
        ):
            return False
        parent = self.parent(arange)
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
            target = parent.targets[0].target
            if isinstance(target, cst.Name):
                flags = self.kernel.name_prov(target.value)
                return not flags & (Prov.PROGRAM_ID | Prov.LOOP | Prov.RUNTIME | Prov.LOADED)
        return False

    def _masked_aranges(self) -> set[int]:
        """``tl.arange`` calls that appear anywhere in an access mask of the kernel (a wider
        set than `lane_bounds`' end-of-dimension bounds)."""
        if self._bounded_aranges is None:
            found: set[int] = set()
            for access in self.kernel.accesses:
                if access.mask is not None:
                    for node in self.closure(access.mask):
                        if isinstance(node, cst.Call) and self.tl_short(node) == "arange":
                            found.add(id(node))
            self._bounded_aranges = found
        return self._bounded_aranges

    def is_quotient_by(self, expr: cst.BaseExpression, divisor: cst.BaseExpression) -> bool:
        """``expr`` is ``x // divisor`` (directly or through a name), so ``expr * divisor``
        is at most ``x``."""
        text = _code(self.kernel, divisor)
        values: list[cst.BaseExpression] = [expr]
        if isinstance(expr, cst.Name):
            values = [value for _, value in self.definition_values(expr)]
        return bool(values) and all(
            isinstance(value, cst.BinaryOperation)
            and isinstance(value.operator, cst.FloorDivide)
            and _code(self.kernel, value.right) == text
            for value in values
        )

    def is_remainder(self, expr: cst.BaseExpression) -> bool:
        """``expr`` is ``a % n`` (possibly through names, subscripts, casts, ``(a % n) // g``,
        ``n - a % n`` and the arms of a ``tl.where``: a reflected coordinate)."""
        pending: list[cst.BaseExpression] = [expr]
        seen: set[int] = set()
        found = False
        while pending:
            node = pending.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            if isinstance(node, cst.Subscript):
                pending.append(node.value)
            elif isinstance(node, cst.Name):
                values = self.definition_values(node)
                if not values:
                    return False
                pending.extend(value for _, value in values)
            elif isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Modulo):
                found = True
            elif isinstance(node, cst.BinaryOperation) and isinstance(
                node.operator, cst.FloorDivide
            ):
                pending.append(node.left)  # (rows % H) // G is below H too
            elif isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Subtract):
                pending.append(node.right)  # period - (y % period): reflected back inside
            elif isinstance(node, cst.Call) and self.tl_short(node) == "where":
                arms = [arg.value for arg in node.args if arg.keyword is None][1:]
                if len(arms) != 2:
                    return False
                pending.extend(arms)
            elif (parts := self.cast_parts(node)) is not None:
                pending.append(parts[0])
            else:
                return False
        return found

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
        seen: set[int] = set()
        pending: list[cst.CSTNode] = [expr]
        while pending:
            node = pending.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            if isinstance(node, cst.Name):
                for definition in self.reaching(node):
                    if definition.kind == "for":
                        if loop_starts:
                            pending.extend(_range_start(definition.value))
                    elif definition.value is not None:
                        pending.append(definition.value)
                continue
            if not isinstance(node, cst.Lambda) and descend(node):
                pending.extend(iter_children(node))

    def index_sources(self, expr: cst.BaseExpression) -> list[cst.Call]:
        """``tl.program_id``/``tl.load`` calls an index derives from, not through a widening."""
        found: list[cst.Call] = []

        def descend(node: cst.CSTNode) -> bool:
            if not isinstance(node, cst.Call):
                return True
            if self.is_widening(node):
                return False
            access = self.kernel.access_for_call(node)
            if self.tl_short(node) == "program_id" or (
                access is not None and access.kind == "load"
            ):
                found.append(node)
                return False
            return True

        self.trace(expr, descend, loop_starts=True)
        return sorted(found, key=self._position)


# -- lane value algebra ---------------------------------------------------------------------

_NEGATE = {"-inf": "+inf", "+inf": "-inf", "absmin": "zero"}
_EXP_MAP = {
    "-inf": "absmin",
    "zero": "one",
    "absmin": "one",
    "one": "shifted",
    "+inf": "+inf",
    "shifted": "shifted",
}
_LOG_MAP = {"zero": "-inf", "absmin": "-inf", "one": "zero", "-inf": "nan"}
_ABS_MAP = {"zero": "absmin", "absmin": "absmin", "-inf": "+inf", "+inf": "+inf"}
# A dot product over a zero-filled row or column is zero; any other fill gives an unknown value.
_DOT_MAP = {"zero": "zero", "absmin": "zero"}
_OPAQUE: dict[str, str] = {}  # any value -> unknown (undef stays undef)
_OPAQUE_KEEP_UNDEF: dict[str, str] = {}
_OPAQUE_ALL = {"undef": "unknown"}  # any value, undefined lanes too -> unknown


def _map(lanes: dict[int, frozenset[str]], table: dict[str, str]) -> dict[int, frozenset[str]]:
    out: dict[int, frozenset[str]] = {}
    for load, values in lanes.items():
        mapped = set()
        for value in values:
            if value == "undef":
                mapped.add(table.get("undef", "undef"))
            elif value in table:
                mapped.add(table[value])
            elif table is _NEGATE and value in ("zero", "nan", "unknown", "shifted"):
                mapped.add(value)
            else:
                mapped.add("unknown")
        out[load] = frozenset(mapped)
    return out


def _join(a: dict[int, frozenset[str]], b: dict[int, frozenset[str]]) -> dict[int, frozenset[str]]:
    out = dict(a)
    for load, values in b.items():
        out[load] = out.get(load, frozenset()) | values
    return out


def _binary(
    operator: cst.BaseBinaryOp | cst.BaseAugOp,
    left: dict[int, frozenset[str]],
    right: dict[int, frozenset[str]],
    constant: str | None,
    *,
    left_masked: bool = True,
) -> dict[int, frozenset[str]]:
    """Masked lanes of ``left OP right``; ``constant`` classifies a clean operand."""
    op = type(operator).__name__.replace("Assign", "")
    if left and right:
        out: dict[int, frozenset[str]] = {}
        for load in set(left) | set(right):
            lv = left.get(load)
            rv = right.get(load)
            if lv is None or rv is None:
                out[load] = frozenset(
                    "undef" if v == "undef" else "unknown" for v in (lv or rv or frozenset())
                )
                continue
            out[load] = frozenset(_pair(op, x, y) for x in lv for y in rv)
        return out
    lanes = left or right
    if not lanes:
        return {}
    out = {}
    for load, values in lanes.items():
        out[load] = frozenset(_with_clean(op, v, constant, left_masked) for v in values)
    return out


def _pair(op: str, x: str, y: str) -> str:
    if "undef" in (x, y):
        return "undef"
    if "nan" in (x, y):
        return "nan"
    if "unknown" in (x, y):
        return "unknown"
    zeros = ("zero", "absmin")
    finite = ("zero", "absmin", "one", "shifted")
    if op in ("Add", "Subtract"):
        if x in zeros and y in zeros:
            return "zero"
        if x in finite and y in finite:
            if op == "Add" and {x, y} <= {"zero", "absmin", "one"} and "one" in (x, y):
                return "one"
            return "shifted"
        if x == y == "-inf":
            return "-inf" if op == "Add" else "nan"
        if x == y == "+inf":
            return "+inf" if op == "Add" else "nan"
        if x in finite:
            return y if op == "Add" else _NEGATE.get(y, y)
        if y in finite:
            return x
        return "nan"  # inf - inf
    if op == "Multiply":
        if x == y and x in zeros:
            return "absmin"  # x * x of a 0 fill
        if x in zeros and y in zeros:
            return "zero"
        if x in finite and y in finite:
            if x in zeros or y in zeros:
                return "zero"
            return "one" if x == y == "one" else "shifted"
        if x in ("-inf", "+inf") and y in ("-inf", "+inf"):
            return "+inf" if x == y else "-inf"
        if x in zeros or y in zeros:
            return "nan"  # 0 * inf
        return "unknown"
    if op == "Divide" and x in finite and y in ("one", "shifted"):
        return "zero" if x in zeros else "shifted"
    return "unknown"


def _with_clean(op: str, value: str, constant: str | None, left_masked: bool) -> str:
    """``masked OP clean`` (or ``clean OP masked`` when not left_masked)."""
    if value in ("undef", "unknown", "nan"):
        return value
    zeros = ("zero", "absmin")
    if constant == "tensor":
        if op == "Multiply" and value in zeros:
            return "zero"
        return "unknown"  # lane-wise with real data (an accumulator): nothing to say
    if op in ("Add", "Subtract"):
        if constant in ("zero",):
            return "zero" if value in zeros else value
        if value in ("-inf", "+inf"):
            if not left_masked and op == "Subtract":
                return "+inf" if value == "-inf" else "-inf"
            if constant in ("-inf", "+inf"):
                return "unknown"
            return value
        if value in zeros:
            return "shifted"  # x - mean: masked lanes are no longer 0
        return "unknown"
    if op == "Multiply":
        if value in zeros:
            return "zero" if constant not in ("-inf", "+inf") else "nan"
        if value in ("-inf", "+inf"):
            if constant == "zero":
                return "nan"
            if constant == "negative":
                return "+inf" if value == "-inf" else "-inf"
            return value  # scaled by a (positive) softmax scale
        return "unknown"
    if op == "Divide" and left_masked:
        if value in zeros:
            return "zero"
        if value in ("-inf", "+inf"):
            return value if constant != "negative" else "unknown"
        return "unknown"
    return "unknown"


def _float_value(kernel: Kernel, node: cst.BaseExpression) -> Any:
    """Value of a fill expression: literals, ``float("inf")``, ``math.inf``, constexpr globals."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = _float_value(kernel, node.expression)
        return -inner if isinstance(inner, (int, float)) else UNKNOWN
    if (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Name)
        and node.func.value == "float"
        and node.args
    ):
        arg = evaluate(node.args[0].value)
        if isinstance(arg, str):
            try:
                return float(arg)
            except ValueError:
                return UNKNOWN
        return arg if isinstance(arg, (int, float)) else UNKNOWN
    if isinstance(node, cst.Attribute) and node.attr.value in ("inf", "infinity"):
        return math.inf
    if isinstance(node, cst.Attribute) and node.attr.value == "nan":
        return math.nan
    if isinstance(node, cst.Name):
        glob = kernel.module.globals.get(node.value)
        if glob is not None and glob.value is not None and node.value not in kernel.definitions:
            value = glob.value
            if (
                isinstance(value, cst.Call)
                and value.args
                and dotted_name(value.func)
                in (
                    "tl.constexpr",
                    "triton.language.constexpr",
                    "constexpr",
                )
            ):
                value = value.args[0].value
            return _float_value(kernel, value)
        return UNKNOWN
    if (
        isinstance(node, cst.Call)
        and node.args
        and dotted_name(node.func)
        in (
            "tl.constexpr",
            "triton.language.constexpr",
        )
    ):
        return _float_value(kernel, node.args[0].value)
    return evaluate(node)


def _classify(kernel: Kernel, node: cst.BaseExpression) -> str:
    value = _float_value(kernel, node)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "unknown"
    if value != value:
        return "nan"
    if value == 0:
        return "zero"
    if value == 1:
        return "one"
    if value <= -1e4:
        return "-inf"  # a large negative fill (-1e9, -65504) works as -inf for max
    if value >= 1e4:
        return "+inf"
    return "shifted"


def _constant(kernel: Kernel, node: cst.BaseExpression) -> str | None:
    """Class of a clean operand: "zero", "negative", "-inf"/"+inf", or None (some value)."""
    value = _float_value(kernel, node)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if value == 0:
            return "zero"
        if value in (math.inf, -math.inf):
            return "+inf" if value > 0 else "-inf"
        if value < 0:
            return "negative"
    return None


def _range_start(iterable: cst.BaseExpression | None) -> list[cst.BaseExpression]:
    """What a loop variable's value derives from: the start of ``range(start, stop)``
    (``range(n)`` counts from 0; the stop is a bound, not a source of the index)."""
    if isinstance(iterable, cst.Call):
        args = [a.value for a in iterable.args if a.keyword is None]
        name = dotted_name(iterable.func) or ""
        if name.rsplit(".", 1)[-1] in ("range", "static_range"):
            return args[:1] if len(args) >= 2 else []
    return [iterable] if iterable is not None else []


def _kwarg(call: cst.Call, name: str) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    return None


def _transpose(call: cst.Call, dims: list[cst.BaseExpression], op: str) -> str:
    """The layout change of ``tl.trans``/``tl.permute`` (or the methods) given the dims after
    the tensor: ``"swapped"`` for (1, 0) and for ``trans`` without dims, ``"same"`` for
    (0, 1), ``"unknown"`` otherwise."""
    given = _kwarg(call, "dims")
    if given is None and len(dims) == 1:
        given = dims[0]
    if given is not None:
        value = evaluate(given)
    elif dims:
        value = [evaluate(d) for d in dims]
    else:
        return "swapped" if op == "trans" else "unknown"
    if value in ([1, 0], (1, 0)):
        return "swapped"
    if value in ([0, 1], (0, 1)):
        return "same"
    return "unknown"


def _permute_layouts(lanes: dict[int, frozenset[str]], change: str) -> dict[int, frozenset[str]]:
    """Compose a layout change onto every load's layouts."""
    if change == "same":
        return lanes
    flip = {"same": "swapped", "swapped": "same", "unknown": "unknown"}
    return {
        load: frozenset(flip[v] if change == "swapped" else "unknown" for v in values)
        for load, values in lanes.items()
    }


def _axis_value(node: cst.BaseExpression | None) -> Any:
    if node is None:
        return None
    value = evaluate(node)
    return value if isinstance(value, int) or value is None else UNKNOWN


def expanded_axis(node: cst.BaseExpression) -> int | None:
    """The axis a 1-D vector lies along once expanded to 2-D: 0 for ``x[:, None]``, 1 for
    ``x[None, :]``; None for anything else."""
    if not isinstance(node, cst.Subscript) or len(node.slice) != 2:
        return None
    kinds = [_slice_kind(el) for el in node.slice]
    return {("full", "none"): 0, ("none", "full"): 1}.get((kinds[0], kinds[1]))


def _slice_kind(element: cst.SubscriptElement) -> str:
    inner = element.slice
    if isinstance(inner, cst.Slice):
        return "full" if inner.lower is None and inner.upper is None else "other"
    if isinstance(inner, cst.Index) and isinstance(inner.value, cst.Name):
        return "none" if inner.value.value == "None" else "other"
    return "other"


def _code(kernel: Kernel, node: cst.BaseExpression) -> str:
    return kernel.module.module.code_for_node(node).strip()


def is_low_precision(kernel: Kernel, node: cst.BaseExpression | None) -> str | None:
    """``float16``/``bfloat16`` when ``node`` names that dtype, else None."""
    if node is None:
        return None
    path = kernel.module.aliases.resolve(node)
    if path is not None and path.startswith(TL + "."):
        short = path.rsplit(".", 1)[-1]
        if short in ("float16", "bfloat16", "fp16", "bf16"):
            return short
    return None
