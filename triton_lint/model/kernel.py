"""The kernel model's data: a file's Triton kernels, their launches and globals, no analysis.

`triton_lint.model.build` fills these classes from a parsed file: every ``@triton.jit``
function (kernels and device helpers alike), its parameters and which are ``tl.constexpr``, the
definitions of every local name, every call and memory access with the branches it sits in, the
decorators, and the launch sites ``kernel[grid](...)`` in the same file. Analyses (provenance,
reaching definitions, masked lanes, ...) sit in the modules above this one and are computed
when a rule first asks for them, through `Kernel.facts`. This module imports no other part of
the model but the syntax helpers, so every layer can import it (see ``model/README.md``).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import libcst as cst

from triton_lint.finding import Span
from triton_lint.model.evaluate import UNKNOWN, evaluate
from triton_lint.model.names import TL, Aliases
from triton_lint.model.positions import Positions
from triton_lint.model.tree import branch_tests, iter_children, iter_nodes

if TYPE_CHECKING:
    from triton_lint.model.project import ProjectContext

AccessKind = Literal["load", "store", "atomic"]
#: An analysis of one kernel, built from it on first use (see `Kernel.facts`).
Fact = TypeVar("Fact")


@dataclass
class Param:
    """A kernel parameter."""

    name: str
    index: int
    node: cst.Param
    annotation: str | None  # canonical path of the annotation, e.g. "triton.language.constexpr"
    is_constexpr: bool
    default: cst.BaseExpression | None


@dataclass(frozen=True)
class Branch:
    """One arm of an ``if`` statement or ``a if c else b`` expression that encloses a node."""

    node: cst.If | cst.IfExp
    arm: Literal["body", "orelse"]

    @property
    def test(self) -> cst.BaseExpression:
        return self.node.test


@dataclass
class Definition:
    """One assignment to a local name (``x = …``, ``x += …``, ``for x in …``, unpacking)."""

    name: str
    node: cst.CSTNode
    value: cst.BaseExpression | None
    kind: Literal["assign", "augassign", "for", "unpack", "walrus"]
    branches: tuple[Branch, ...]
    order: int


@dataclass
class MemoryAccess:
    """A ``tl.load``/``tl.store``/``tl.atomic_*`` (or tensor-descriptor) access."""

    kind: AccessKind
    op: str  # "load", "store", "atomic_add", "descriptor.load", ...
    call: cst.Call
    pointer: cst.BaseExpression | None
    value: cst.BaseExpression | None
    mask: cst.BaseExpression | None  # None when absent or an explicit `mask=None`
    other: cst.BaseExpression | None
    boundary_check: cst.BaseExpression | None
    branches: tuple[Branch, ...]
    via_descriptor: bool = False


@dataclass
class CallSite:
    """A call inside a kernel; ``path`` is canonical when it resolves to Triton."""

    path: str | None
    name: str | None  # the literal dotted text of the callee (``print``, ``tl.sum``, ``helper``)
    node: cst.Call
    branches: tuple[Branch, ...]

    @property
    def tl_name(self) -> str | None:
        """Name relative to ``triton.language`` (``sum``, ``math.exp``), or None."""
        if self.path is not None and self.path.startswith(TL + "."):
            return self.path[len(TL) + 1 :]
        return None


@dataclass
class AutotuneConfig:
    """One ``triton.Config({...}, num_warps=…)`` of an autotune decorator."""

    node: cst.CSTNode
    values: dict[str, cst.BaseExpression]  # meta-parameter -> expression
    env: dict[str, Any]  # bindings of comprehension variables, when expanded


@dataclass
class Autotune:
    node: cst.Call
    configs: list[AutotuneConfig]
    configs_resolved: bool  # False when configs come from a call or a name we cannot read
    key: list[str]
    reset_to_zero: list[str]
    restore_value: list[str]

    @property
    def key_is_literal(self) -> bool:
        """``key=`` is a literal list of strings (so `key` was read fully)."""
        expr = None
        for index, arg in enumerate(self.node.args):
            if (arg.keyword is not None and arg.keyword.value == "key") or (
                arg.keyword is None and index == 1
            ):
                expr = arg.value
        return isinstance(expr, cst.List | cst.Tuple) and all(
            isinstance(e.value, cst.SimpleString) for e in expr.elements
        )


@dataclass
class ValueSource:
    """Where a constexpr parameter gets a value: its default, a launch, or an autotune config."""

    value: Any  # evaluated value, or UNKNOWN
    node: cst.BaseExpression
    top: cst.CSTNode  # the top-level statement holding ``node`` (for positions)
    origin: Literal["default", "launch", "autotune", "heuristics"]


@dataclass
class LaunchSite:
    """``kernel[grid](args...)``, in the kernel's file or (``module`` set) another file of the
    project; ``caller_holding``/``caller_guards`` are what the launching function's callers
    establish (`triton_lint.model.callers`), in the launching function's own names."""

    kernel_name: str
    call: cst.Call
    top: cst.CSTNode
    grid: cst.BaseExpression
    grid_dims: list[cst.BaseExpression] | None  # elements of the grid tuple, when resolvable
    args: list[cst.BaseExpression]
    keywords: dict[str, cst.BaseExpression]
    #: Host names assigned exactly once, directly in the enclosing function body, to the
    #: expression they come from (``a, b = rhs`` binds both ``a`` and ``b`` to ``rhs``, or to
    #: the matching element of a tuple literal). Only for tracing where a value comes from,
    #: not for evaluating it.
    host_definitions: dict[str, cst.BaseExpression] = field(default_factory=dict)
    #: Every name local to the enclosing host functions (parameters and any binding).
    host_locals: frozenset[str] = frozenset()
    #: The top-level statement holding ``grid_dims`` when it is not ``top`` (a module-level
    #: ``def grid(meta)`` or ``grid = lambda meta: ...``), for positions.
    grid_top: cst.CSTNode | None = None
    #: Host names bound only by plain assignments, more than once (``s0, s1 = x.stride()`` in
    #: one arm of an ``if``, ``s0 = s1 = 0`` in the other): every value they can hold.
    host_alternatives: dict[str, list[cst.BaseExpression]] = field(default_factory=dict)
    #: The file holding the launch when it is not the kernel's (its positions, its globals).
    module: ModuleModel | None = None
    #: The innermost host function around the launch.
    function: cst.FunctionDef | None = None
    #: Conditions true at every call of the launching function in the project (asserts and
    #: ``if`` tests around the calls, through up to two levels of callers), and what the early
    #: exits before the launch or a call leave true (``if m >= 4096: return``: ``m < 4096``)
    #: and the predicate helpers their tests call return (`triton_lint.model.predicates`).
    caller_holding: list[cst.BaseExpression] = field(default_factory=list)
    #: ``caller_holding`` and the tests of ``if ...: raise`` that run before every call, but
    #: not what an early exit leaves true (``not (x and helper(d))`` checks nothing of ``d``).
    caller_guards: list[cst.BaseExpression] = field(default_factory=list)
    #: The launching file's `ModuleModel.memo` (one walk of ``top`` for all its launches).
    memo: dict[tuple[str, int], Any] | None = field(default=None, repr=False, compare=False)
    _local: tuple[list[cst.BaseExpression], list[cst.BaseExpression]] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    def bound_arguments(self, kernel: Kernel) -> dict[str, cst.BaseExpression]:
        """Parameter name -> argument expression, positional and keyword."""
        bound: dict[str, cst.BaseExpression] = {}
        for param, arg in zip(kernel.params, self.args, strict=False):
            bound[param.name] = arg
        bound.update({k: v for k, v in self.keywords.items() if k in kernel.params_by_name})
        return bound

    def holding_tests(self) -> Iterator[cst.BaseExpression]:
        """Host conditions true wherever the launch runs: the tests of the ``if`` statements
        whose body holds it (not those whose ``else`` does), and of ``assert`` statements
        in the launch's top-level statement."""
        yield from self._local_tests()[0]
        yield from self.caller_holding

    def guard_tests(self) -> Iterator[cst.BaseExpression]:
        """Host conditions in the launch's top-level statement that can stop a bad size before
        the kernel sees it: ``assert`` tests, tests of ``if ...: raise``, and tests of the
        ``if`` statements around the launch."""
        yield from self._local_tests()[1]
        yield from self.caller_guards

    def _local_tests(self) -> tuple[list[cst.BaseExpression], list[cst.BaseExpression]]:
        """The holding and guard tests of the launch's top-level statement, found the first
        time a rule asks (rules ask for every launch, many times) from one walk of the
        statement that the launches in it share (kept in ``memo``)."""
        if self._local is None:
            key = ("branch tests", id(self.top))
            memo = self.memo if self.memo is not None else {}
            if key not in memo:
                memo[key] = branch_tests(self.top)
            tests, raising, around = memo[key]
            enclosing = around.get(id(self.call), ())
            holding: list[cst.BaseExpression] = []
            guards: list[cst.BaseExpression] = []
            for node in tests:
                if isinstance(node, cst.Assert):
                    holding.append(node.test)
                    guards.append(node.test)
                    continue
                assert isinstance(node, cst.If)
                if id(node) in enclosing:
                    holding.append(node.test)
                if id(node) in enclosing or id(node) in raising:
                    guards.append(node.test)
            self._local = (holding, guards)
        return self._local


@dataclass
class Global:
    name: str
    node: cst.CSTNode
    value: cst.BaseExpression | None
    is_constexpr: bool
    top: cst.CSTNode  # the top-level statement holding it (for positions)


class Kernel:
    """One ``@triton.jit`` function and the facts rules need about it."""

    def __init__(self, module: ModuleModel, node: cst.FunctionDef, top: cst.CSTNode) -> None:
        self.module = module
        self.node = node
        self.top = top
        self.name = node.name.value
        self.jit_options: dict[str, cst.BaseExpression] = {}
        self.autotune: Autotune | None = None
        self.heuristics: dict[str, cst.BaseExpression] = {}
        self.params: list[Param] = []
        self.params_by_name: dict[str, Param] = {}
        self.definitions: dict[str, list[Definition]] = {}
        self.accesses: list[MemoryAccess] = []
        self.calls: list[CallSite] = []
        self._access_by_call: dict[int, MemoryAccess] = {}
        self._facts: dict[type, Any] = {}

    def facts(self, analysis: Callable[[Kernel], Fact]) -> Fact:
        """The analysis ``analysis(self)``, built on the first request and cached: a run whose
        rules never ask for dataflow never pays for it (``kernel.facts(Provenance)``)."""
        found = self._facts.get(analysis)  # type: ignore[call-overload]
        if found is None:
            found = self._facts[analysis] = analysis(self)  # type: ignore[index]
        return found

    def add_access(self, access: MemoryAccess) -> None:
        self.accesses.append(access)
        self._access_by_call[id(access.call)] = access

    # -- queries -----------------------------------------------------------------------
    def span(self, node: cst.CSTNode) -> Span:
        return self.module.span(self.top, node)

    def code(self, node: cst.CSTNode) -> str:
        """The source text of ``node`` (stripped), for comparing expressions."""
        return self.module.module.code_for_node(node).strip()

    def params_in(self, node: cst.BaseExpression) -> list[Param]:
        """Parameters ``node`` reads, directly or through local definitions, in source order."""
        found: dict[str, Param] = {}
        seen: set[str] = set()
        pending: list[cst.CSTNode] = [node]
        while pending:
            current = pending.pop()
            if isinstance(current, cst.Name):
                name = current.value
                if name in seen:
                    continue
                seen.add(name)
                if name in self.params_by_name:
                    found[name] = self.params_by_name[name]
                for definition in self.definitions.get(name, []):
                    if definition.value is not None:
                        pending.append(definition.value)
            elif isinstance(current, cst.Attribute):
                pending.append(current.value)
            elif not isinstance(current, cst.Lambda):
                pending.extend(iter_children(current))
        return sorted(found.values(), key=lambda p: p.index)

    def access_for_call(self, call: cst.Call) -> MemoryAccess | None:
        return self._access_by_call.get(id(call))

    def access_by_id(self, call_id: int) -> MemoryAccess | None:
        """The access whose call has this ``id`` (masked-lane maps are keyed by it)."""
        return self._access_by_call.get(call_id)

    @property
    def launches(self) -> list[LaunchSite]:
        return [site for site in self.module.launches if site.kernel_name == self.name]

    @property
    def unlaunched(self) -> bool:
        """The run indexed the project and found no launch of this kernel, and no file names
        it but its definition (an alias such as ``k = kern.fn if varlen else kern``, or
        ``kern[grid]`` kept for later, launches it where no launch site shows): no call shows
        what its arguments hold. False for a file linted alone (`ModuleModel.project` None):
        nothing is known."""
        project = self.module.project
        if project is None or self.name not in project.unreferenced or self.launches:
            return False
        return len(re.findall(rf"\b{re.escape(self.name)}\b", self.module.text)) <= 1

    @property
    def debug(self) -> bool:
        """True for ``@triton.jit(debug=True)``."""
        value = self.jit_options.get("debug")
        return value is not None and evaluate(value) is True

    def value_sources(self, param: str) -> list[ValueSource]:
        """Every place in the file that gives constexpr ``param`` a value."""
        sources: list[ValueSource] = []
        found = self.params_by_name.get(param)
        if found is not None and found.default is not None:
            sources.append(ValueSource(evaluate(found.default), found.default, self.top, "default"))
        if self.autotune is not None:
            for config in self.autotune.configs:
                if param in config.values:
                    expr = config.values[param]
                    sources.append(
                        ValueSource(evaluate(expr, config.env), expr, self.top, "autotune")
                    )
        if param in self.heuristics:
            expr = self.heuristics[param]
            sources.append(ValueSource(self._heuristic_value(expr), expr, self.top, "heuristics"))
        for site in self.launches:
            bound = site.bound_arguments(self)
            if param in bound:
                expr = bound[param]
                sources.append(
                    ValueSource(self.module.evaluate_at(site, expr), expr, site.top, "launch")
                )
        return sources

    def _heuristic_value(self, expr: cst.BaseExpression) -> Any:
        """The constant a ``@triton.heuristics`` entry always returns (``lambda args: 1``, or a
        function of this file whose every reachable ``return`` gives one literal), else
        UNKNOWN: a heuristic that computes its value from the arguments varies with them."""
        if isinstance(expr, cst.Lambda):
            return evaluate(expr.body)
        function = self.module.functions.get(expr.value) if isinstance(expr, cst.Name) else None
        if function is None or not isinstance(function.body, cst.IndentedBlock):
            return UNKNOWN
        values = []
        for statement in function.body.body:
            returns = [n for n in iter_nodes(statement) if isinstance(n, cst.Return)]
            values.extend(evaluate(r.value) if r.value is not None else None for r in returns)
            if isinstance(statement, cst.SimpleStatementLine) and returns:
                break  # what follows an unconditional return never runs
        if not values or any(v is UNKNOWN or v != values[0] for v in values):
            return UNKNOWN
        return values[0]

    def calls_to(self, *tl_names: str) -> Iterator[CallSite]:
        """Calls to the given ``triton.language`` functions (short names, e.g. ``"sum"``)."""
        wanted = set(tl_names)
        for call in self.calls:
            name = call.tl_name
            if name is not None and (name in wanted or name.rsplit(".", 1)[-1] in wanted):
                yield call

    @property
    def is_entry_point(self) -> bool:
        """Launched from the host (not only a device helper): launched or tuned in this file,
        or not called by another jit function here and reading `tl.program_id`."""
        if self.launches or self.autotune is not None or self.heuristics:
            return True
        if any(call.name == self.name for other in self.module.kernels for call in other.calls):
            return False
        return any(True for _ in self.calls_to("program_id"))


class ModuleModel:
    """A parsed file: its aliases, kernels, globals and launch sites."""

    def __init__(
        self,
        path: str,
        text: str,
        module: cst.Module,
        target_version: str,
        find_launches: Callable[[ModuleModel], None] | None = None,
        syntax: ast.Module | None = None,
        project: ProjectContext | None = None,
    ) -> None:
        self.path = path
        self.target_version = target_version  # Triton "MAJOR.MINOR" the code is checked against
        self.text = text
        self.module = module
        self.lines = text.splitlines()
        self.aliases = Aliases.from_module(module)
        self.positions = Positions(module, text, syntax)
        self.kernels: list[Kernel] = []
        self.kernels_by_name: dict[str, Kernel] = {}
        self._launches: list[LaunchSite] | None = None
        self._find_launches = find_launches
        self.globals: dict[str, Global] = {}
        #: Every name bound by module-level code (assignments, unpacking, defs, classes, imports).
        self.module_names: set[str] = set()
        self.global_constexprs: set[str] = set()
        self.imports: set[str] = set()
        self.functions: dict[str, cst.FunctionDef] = {}  # non-jit functions defined in the file
        self.function_tops: dict[str, cst.CSTNode] = {}  # their top-level statements
        #: id(launch call) -> the host names assigned once before it, to their values
        self._host_values: dict[int, dict[str, cst.BaseExpression]] = {}
        #: The rest of the project, when the run indexed it (launches and callers elsewhere).
        self.project = project
        #: id(top-level statement of another file) -> that file's model (launches there)
        self._owners: dict[int, ModuleModel] = {}
        #: (reader, id(node of this file)) -> what a host reader found there, read once
        #: though several launches and callers ask (`triton_lint.model.host.function_facts`)
        self.memo: dict[tuple[str, int], Any] = {}
        #: Other file -> digest of what the lint read of it (`triton_lint.model.host_reads`)
        self.reads: dict[str, str] = {}

    @property
    def launches(self) -> list[LaunchSite]:
        """The launch sites of this file's kernels, found on the first request: a run whose
        rules never read a launch never walks the host code."""
        if self._launches is None:
            self._launches = []
            if self.kernels and self._find_launches is not None:
                self._find_launches(self)
        return self._launches

    def add_launch(self, site: LaunchSite, host_values: dict[str, cst.BaseExpression]) -> None:
        """Record a launch and the host names assigned once before it (`evaluate_at`)."""
        self.launches.append(site)
        self._host_values[id(site.call)] = host_values
        if site.module is not None:
            for top in (site.top, site.grid_top):
                if top is not None:
                    self._owners[id(top)] = site.module

    def add_host_values(self, site: LaunchSite, values: dict[str, cst.BaseExpression]) -> None:
        """Values the callers of the launching function pass it (`evaluate_at` reads them)."""
        self._host_values[id(site.call)] = {**values, **self._host_values.get(id(site.call), {})}

    def owner(self, top: cst.CSTNode | None) -> ModuleModel:
        """The file holding the top-level statement ``top``: this one, or the one of a launch
        in another file."""
        return self._owners.get(id(top), self) if top is not None else self

    def span(self, top: cst.CSTNode, node: cst.CSTNode) -> Span:
        owner = self._owners.get(id(top))
        if owner is not None:
            return owner.span(top, node)
        return self.positions.span(top, node)

    def evaluate_at(self, site: LaunchSite, expr: cst.BaseExpression) -> Any:
        """Evaluate a launch argument, following simple local assignments in the host code."""
        env = {
            name: evaluate(value)
            for name, value in self._host_values.get(id(site.call), {}).items()
        }
        host = site.module or self
        env.update({g.name: evaluate(g.value) for g in host.globals.values() if g.value})
        return evaluate(expr, {k: v for k, v in env.items() if v is not UNKNOWN})


# -- building -------------------------------------------------------------------------------
