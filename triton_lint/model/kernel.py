"""The kernel model: everything rules need to know about a file's Triton kernels, computed once.

`build_module_model` finds every ``@triton.jit`` function (kernels and device helpers alike),
their parameters and which are ``tl.constexpr``, the definitions of every local name, every
memory access with its mask/other/boundary_check and the constexpr branches it sits in, every
call, the decorators (``@triton.jit(...)`` options, ``@triton.autotune`` configs and keys,
``@triton.heuristics``), and the launch sites ``kernel[grid](...)`` in the same file.
Rules read this model and never walk the syntax tree to re-derive these facts.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import libcst as cst

from triton_lint.finding import Span
from triton_lint.model.evaluate import UNKNOWN, evaluate
from triton_lint.model.names import TL, Aliases, dotted_name
from triton_lint.model.positions import Positions
from triton_lint.model.provenance import COMPILE_TIME, Prov, ProvenanceAnalysis
from triton_lint.model.tree import (
    block_statements,
    iter_children,
    iter_nodes,
    iter_small_statements,
    statement_blocks,
)

if TYPE_CHECKING:
    from triton_lint.model.dataflow import DataFlow
    from triton_lint.model.usage import KernelUsage

AccessKind = Literal["load", "store", "atomic"]

# Positional parameter order of Triton's memory functions (after the pointer).
_LOAD_PARAMS = ("pointer", "mask", "other", "boundary_check", "padding_option")
_STORE_PARAMS = ("pointer", "value", "mask", "boundary_check")
_ATOMIC_PARAMS = ("pointer", "val", "mask", "sem", "scope")
_ATOMIC_CAS_PARAMS = ("pointer", "cmp", "val", "sem", "scope")
ATOMIC_OPS = {
    "atomic_add",
    "atomic_and",
    "atomic_cas",
    "atomic_max",
    "atomic_min",
    "atomic_or",
    "atomic_xchg",
    "atomic_xor",
}


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

    def provenance(self, analysis: ProvenanceAnalysis) -> Prov:
        if self.value is None:
            return Prov.NONE
        flags = analysis.of(self.value)
        if self.kind == "for":
            flags |= Prov.LOOP
        return flags


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


@dataclass
class ValueSource:
    """Where a constexpr parameter gets a value: its default, a launch, or an autotune config."""

    value: Any  # evaluated value, or UNKNOWN
    node: cst.BaseExpression
    top: cst.CSTNode  # the top-level statement holding ``node`` (for positions)
    origin: Literal["default", "launch", "autotune", "heuristics"]


@dataclass
class LaunchSite:
    """``kernel[grid](args...)`` in the same file."""

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

    def bound_arguments(self, kernel: Kernel) -> dict[str, cst.BaseExpression]:
        """Parameter name -> argument expression, positional and keyword."""
        bound: dict[str, cst.BaseExpression] = {}
        for param, arg in zip(kernel.params, self.args, strict=False):
            bound[param.name] = arg
        bound.update({k: v for k, v in self.keywords.items() if k in kernel.params_by_name})
        return bound

    def guard_tests(self) -> Iterator[cst.BaseExpression]:
        """Host conditions in the launch's top-level statement that can stop a bad size before
        the kernel sees it: ``assert`` tests, tests of ``if ...: raise``, and tests of the
        ``if`` statements around the launch."""
        for node in iter_nodes(self.top):
            if isinstance(node, cst.If) and not any(
                isinstance(n, cst.Raise) or n is self.call for n in iter_nodes(node.body)
            ):
                continue  # an `if` that neither raises nor holds the launch
            if isinstance(node, cst.Assert | cst.If):
                yield node.test


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
        self._provenance = ProvenanceAnalysis(self)
        self._returns_widened: bool | None = None

    # -- queries -----------------------------------------------------------------------
    def span(self, node: cst.CSTNode) -> Span:
        return self.module.span(self.top, node)

    def prov(self, node: cst.BaseExpression) -> Prov:
        """Provenance flags of an expression inside this kernel."""
        return self._provenance.of(node)

    def name_prov(self, name: str) -> Prov:
        return self._provenance.of_name(name)

    def is_compile_time(self, node: cst.BaseExpression) -> bool:
        """True when ``node`` is known at compile time (constexprs, literals, static shapes)."""
        flags = self.prov(node)
        return bool(flags) and not (flags & ~COMPILE_TIME)

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

    @property
    def launches(self) -> list[LaunchSite]:
        return [site for site in self.module.launches if site.kernel_name == self.name]

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
            sources.append(ValueSource(UNKNOWN, self.heuristics[param], self.top, "heuristics"))
        for site in self.launches:
            bound = site.bound_arguments(self)
            if param in bound:
                expr = bound[param]
                sources.append(
                    ValueSource(self.module.evaluate_at(site, expr), expr, site.top, "launch")
                )
        return sources

    def calls_to(self, *tl_names: str) -> Iterator[CallSite]:
        """Calls to the given ``triton.language`` functions (short names, e.g. ``"sum"``)."""
        wanted = set(tl_names)
        for call in self.calls:
            name = call.tl_name
            if name is not None and (name in wanted or name.rsplit(".", 1)[-1] in wanted):
                yield call

    @property
    def usage(self) -> KernelUsage:
        """Where names are used: compile-time positions, reads, bool ops (`model.usage`)."""
        cached = self.__dict__.get("_usage")
        if cached is None:
            from triton_lint.model.usage import build_usage

            cached = self.__dict__["_usage"] = build_usage(self)
        return cached

    @property
    def returns_widened(self) -> bool:
        """Every ``return`` of this helper gives one value widened to 64 bits (a position
        helper ending in ``.to(tl.int64)``): a caller's products with the result are 64-bit."""
        if self._returns_widened is None:
            self._returns_widened = False  # a recursive call sees "not widened"
            values = [
                node.value
                for node in iter_nodes(self.node.body, skip=(cst.FunctionDef, cst.Lambda))
                if isinstance(node, cst.Return)
            ]
            self._returns_widened = bool(values) and all(
                value is not None
                and not isinstance(value, cst.Tuple)
                and Prov.WIDENED in self.prov(value)
                for value in values
            )
        return self._returns_widened

    @property
    def is_entry_point(self) -> bool:
        """Launched from the host (not only a device helper): launched or tuned in this file,
        or not called by another jit function here and reading `tl.program_id`."""
        if self.launches or self.autotune is not None or self.heuristics:
            return True
        if any(call.name == self.name for other in self.module.kernels for call in other.calls):
            return False
        return any(True for _ in self.calls_to("program_id"))

    @property
    def dataflow(self) -> DataFlow:
        """Reaching definitions, dependencies and masked-lane values (built on first use)."""
        cached = self.__dict__.get("_dataflow")
        if cached is None:
            from triton_lint.model.dataflow import DataFlow

            cached = self.__dict__["_dataflow"] = DataFlow(self)
        return cached


class ModuleModel:
    """A parsed file: its aliases, kernels, globals and launch sites."""

    def __init__(self, path: str, text: str, module: cst.Module, target_version: str) -> None:
        self.path = path
        self.target_version = target_version  # Triton "MAJOR.MINOR" the code is checked against
        self.text = text
        self.module = module
        self.lines = text.splitlines()
        self.aliases = Aliases.from_module(module)
        self.positions = Positions(module, text)
        self.kernels: list[Kernel] = []
        self.kernels_by_name: dict[str, Kernel] = {}
        self.launches: list[LaunchSite] = []
        self.globals: dict[str, Global] = {}
        #: Every name bound by module-level code (assignments, unpacking, defs, classes, imports).
        self.module_names: set[str] = set()
        self.global_constexprs: set[str] = set()
        self.imports: set[str] = set()
        self.functions: dict[str, cst.FunctionDef] = {}  # non-jit functions defined in the file
        self.function_tops: dict[str, cst.CSTNode] = {}  # their top-level statements
        self._host_values: dict[int, dict[str, cst.BaseExpression]] = {}

    def span(self, top: cst.CSTNode, node: cst.CSTNode) -> Span:
        return self.positions.span(top, node)

    def evaluate_at(self, site: LaunchSite, expr: cst.BaseExpression) -> Any:
        """Evaluate a launch argument, following simple local assignments in the host code."""
        env = {
            name: evaluate(value)
            for name, value in self._host_values.get(id(site.call), {}).items()
        }
        env.update({g.name: evaluate(g.value) for g in self.globals.values() if g.value})
        return evaluate(expr, {k: v for k, v in env.items() if v is not UNKNOWN})


# -- building -------------------------------------------------------------------------------


def build_module_model(
    path: str, text: str, module: cst.Module, target_version: str = "3.9"
) -> ModuleModel:
    """Build the model of one parsed file."""
    model = ModuleModel(path, text, module, target_version)
    for top in module.body:
        _collect_top(model, top, top)
    for kernel in model.kernels:
        walker = _KernelWalker(kernel)
        walker.walk_body(kernel.node.body)
        walker.record_accesses()
    if model.kernels:
        finder = _LaunchFinder(model)
        for top in _statements_mentioning_launches(model):
            finder.top = top
            top.visit(finder)
    return model


def _statements_mentioning_launches(model: ModuleModel) -> list[cst.CSTNode]:
    """Top-level statements whose lines contain ``kernel_name[``: the only ones worth visiting."""
    names = "|".join(re.escape(name) for name in model.kernels_by_name)
    pattern = re.compile(rf"\b(?:{names})\s*\[")
    lines = {model.text.count("\n", 0, m.start()) + 1 for m in pattern.finditer(model.text)}
    if not lines:
        return []
    info = model.positions.line_info()
    return [
        top
        for top in model.module.body
        if any(info[id(top)][1] <= line <= info[id(top)][2] for line in lines)
    ]


def _collect_top(model: ModuleModel, node: cst.CSTNode, top: cst.CSTNode) -> None:
    """Find kernels, globals and functions in module-level code (through if/try/class)."""
    if isinstance(node, cst.FunctionDef | cst.ClassDef):
        model.module_names.add(node.name.value)
    if isinstance(node, cst.FunctionDef):
        jit = _jit_decorator(model.aliases, node)
        if jit is not None:
            kernel = Kernel(model, node, top)
            _read_decorators(kernel, node)
            _read_params(kernel, node)
            model.kernels.append(kernel)
            model.kernels_by_name[kernel.name] = kernel
        else:
            model.functions.setdefault(node.name.value, node)
            model.function_tops.setdefault(node.name.value, top)
            for child in _body_statements(node):
                _collect_nested_kernels(model, child, top)
        return
    if isinstance(node, cst.ClassDef):
        for child in _body_statements(node):
            _collect_top(model, child, top)
        return
    if isinstance(node, (cst.If, cst.Try, cst.With)):
        for child in block_statements(node):
            _collect_top(model, child, top)
        return
    if isinstance(node, cst.SimpleStatementLine):
        for small in node.body:
            _collect_global(model, small, top)


def _collect_nested_kernels(model: ModuleModel, node: cst.CSTNode, top: cst.CSTNode) -> None:
    """Kernels defined inside factory functions count too; their other locals don't."""
    if isinstance(node, cst.FunctionDef):
        if _jit_decorator(model.aliases, node) is not None:
            _collect_top(model, node, top)
        return
    if isinstance(node, (cst.If, cst.Try, cst.With, cst.For, cst.While)):
        for child in block_statements(node):
            _collect_nested_kernels(model, child, top)


def _body_statements(node: cst.FunctionDef | cst.ClassDef) -> list[cst.CSTNode]:
    body = node.body
    return list(body.body) if isinstance(body, cst.IndentedBlock) else []


def _collect_global(model: ModuleModel, small: cst.BaseSmallStatement, top: cst.CSTNode) -> None:
    if isinstance(small, (cst.Import, cst.ImportFrom)):
        names = small.names
        if isinstance(names, cst.ImportStar):
            return
        for alias in names:
            local = alias.evaluated_alias or alias.evaluated_name.split(".")[0]
            model.imports.add(local)
            model.module_names.add(local)
        return
    model.module_names.update(_assigned_targets(small))
    targets: list[cst.BaseExpression] = []
    value: cst.BaseExpression | None = None
    annotation: cst.BaseExpression | None = None
    if isinstance(small, cst.Assign):
        targets = [t.target for t in small.targets]
        value = small.value
    elif isinstance(small, cst.AnnAssign):
        targets = [small.target]
        value = small.value
        annotation = small.annotation.annotation
    for target in targets:
        if not isinstance(target, cst.Name):
            continue
        is_constexpr = False
        if annotation is not None and model.aliases.resolve(annotation) == f"{TL}.constexpr":
            is_constexpr = True
        if isinstance(value, cst.Call) and model.aliases.resolve(value.func) in (
            f"{TL}.constexpr",
            f"{TL}.core.constexpr",
        ):
            is_constexpr = True
        model.globals[target.value] = Global(target.value, small, value, is_constexpr, top)
        if is_constexpr:
            model.global_constexprs.add(target.value)


def _decorator_path(
    aliases: Aliases, decorator: cst.Decorator
) -> tuple[str | None, cst.Call | None]:
    expr = decorator.decorator
    if isinstance(expr, cst.Call):
        return aliases.resolve(expr.func), expr
    return aliases.resolve(expr), None


_JIT_PATHS = {
    "triton.jit",
    "triton.runtime.jit",
    "triton.runtime.jit.jit",
}


def _jit_decorator(aliases: Aliases, node: cst.FunctionDef) -> cst.Decorator | None:
    for decorator in node.decorators:
        path, _ = _decorator_path(aliases, decorator)
        if path in _JIT_PATHS:
            return decorator
    return None


def _kwargs(call: cst.Call) -> dict[str, cst.BaseExpression]:
    return {a.keyword.value: a.value for a in call.args if a.keyword is not None}


def _string_list(expr: cst.BaseExpression | None) -> list[str]:
    value = evaluate(expr) if expr is not None else UNKNOWN
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


def _read_decorators(kernel: Kernel, node: cst.FunctionDef) -> None:
    aliases = kernel.module.aliases
    for decorator in node.decorators:
        path, call = _decorator_path(aliases, decorator)
        if call is None:
            continue
        if path in _JIT_PATHS:
            kernel.jit_options = _kwargs(call)
        elif path == "triton.autotune":
            kernel.autotune = _read_autotune(kernel.module, call)
        elif path == "triton.heuristics":
            values = _kwargs(call).get("values") or (call.args[0].value if call.args else None)
            if isinstance(values, cst.Dict):
                for element in values.elements:
                    if isinstance(element, cst.DictElement):
                        key = evaluate(element.key)
                        if isinstance(key, str):
                            kernel.heuristics[key] = element.value


def _read_autotune(model: ModuleModel, call: cst.Call) -> Autotune:
    kwargs = _kwargs(call)
    configs_expr = kwargs.get("configs") or (call.args[0].value if call.args else None)
    key_expr = kwargs.get("key") or (call.args[1].value if len(call.args) > 1 else None)
    if isinstance(configs_expr, cst.Name) and configs_expr.value in model.globals:
        configs_expr = model.globals[configs_expr.value].value
    configs, resolved = _read_configs(model, configs_expr)
    return Autotune(
        node=call,
        configs=configs,
        configs_resolved=resolved,
        key=_string_list(key_expr),
        reset_to_zero=_string_list(kwargs.get("reset_to_zero")),
        restore_value=_string_list(kwargs.get("restore_value")),
    )


def _read_configs(
    model: ModuleModel, expr: cst.BaseExpression | None
) -> tuple[list[AutotuneConfig], bool]:
    if isinstance(expr, cst.List | cst.Tuple):
        configs: list[AutotuneConfig] = []
        resolved = True
        for element in expr.elements:
            config = _read_config(model, element.value, {})
            if config is None:
                resolved = False
            else:
                configs.append(config)
        return configs, resolved
    if isinstance(expr, cst.ListComp):
        return _expand_comprehension(model, expr)
    return [], False


def _expand_comprehension(
    model: ModuleModel, comp: cst.ListComp
) -> tuple[list[AutotuneConfig], bool]:
    """Expand ``[Config({...}) for a in [..] for b in [..] if ...]`` over literal lists."""
    envs: list[dict[str, Any]] = [{}]
    clause: cst.CompFor | None = comp.for_in
    while clause is not None:
        values = evaluate(clause.iter)
        if not isinstance(values, list) or not isinstance(clause.target, cst.Name):
            return [], False
        envs = [{**env, clause.target.value: v} for env in envs for v in values]
        for condition in clause.ifs:
            envs = [env for env in envs if evaluate(condition.test, env) is True]
        clause = clause.inner_for_in
    configs = []
    for env in envs[:512]:
        config = _read_config(model, comp.elt, env)
        if config is None:
            return [], False
        configs.append(config)
    return configs, True


def _read_config(
    model: ModuleModel, expr: cst.BaseExpression, env: dict[str, Any]
) -> AutotuneConfig | None:
    if not isinstance(expr, cst.Call) or model.aliases.resolve(expr.func) != "triton.Config":
        return None
    mapping = expr.args[0].value if expr.args else _kwargs(expr).get("kwargs")
    if not isinstance(mapping, cst.Dict):
        return None
    values: dict[str, cst.BaseExpression] = {}
    for element in mapping.elements:
        if isinstance(element, cst.DictElement):
            key = evaluate(element.key, env)
            if isinstance(key, str):
                values[key] = element.value
    return AutotuneConfig(node=expr, values=values, env=env)


def _read_params(kernel: Kernel, node: cst.FunctionDef) -> None:
    aliases = kernel.module.aliases
    params = [
        *node.params.posonly_params,
        *node.params.params,
        *node.params.kwonly_params,
    ]
    for index, param in enumerate(params):
        annotation = None
        if param.annotation is not None:
            ann = param.annotation.annotation
            if isinstance(ann, cst.SimpleString):
                text = ann.evaluated_value
                annotation = (
                    aliases.resolve(cst.parse_expression(text)) if isinstance(text, str) else None
                )
            else:
                annotation = aliases.resolve(ann)
        is_constexpr = annotation in (f"{TL}.constexpr", f"{TL}.core.constexpr")
        entry = Param(param.name.value, index, param, annotation, is_constexpr, param.default)
        kernel.params.append(entry)
        kernel.params_by_name[entry.name] = entry


class _KernelWalker:
    """Walks a kernel body once, recording definitions, calls and memory accesses."""

    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self.branches: tuple[Branch, ...] = ()
        self.order = 0

    def walk_body(self, suite: cst.BaseSuite) -> None:
        self._walk(suite)

    def _define(
        self,
        target: cst.BaseExpression,
        node: cst.CSTNode,
        value: cst.BaseExpression | None,
        kind: Literal["assign", "augassign", "for", "unpack", "walrus"],
    ) -> None:
        if isinstance(target, cst.Name):
            self.order += 1
            definition = Definition(target.value, node, value, kind, self.branches, self.order)
            self.kernel.definitions.setdefault(target.value, []).append(definition)
        elif isinstance(target, cst.Tuple | cst.List):
            elements = [el.value for el in target.elements]
            values: list[cst.BaseExpression | None]
            if isinstance(value, cst.Tuple | cst.List) and len(value.elements) == len(elements):
                values = [el.value for el in value.elements]
            else:
                values = [value] * len(elements)
            for element, element_value in zip(elements, values, strict=True):
                if isinstance(element, cst.StarredElement):
                    element = element.value
                self._define(element, node, element_value, "unpack" if kind != "for" else kind)

    def _walk(self, node: cst.CSTNode) -> None:
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return  # unsupported inside kernels (TL204); their names are not kernel locals
        if isinstance(node, cst.If):
            self._walk(node.test)
            self._walk_arm(node, "body", node.body)
            if node.orelse is not None:
                self._walk_arm(node, "orelse", node.orelse)
            return
        if isinstance(node, cst.IfExp):
            self._walk(node.test)
            self._walk_arm(node, "body", node.body)
            self._walk_arm(node, "orelse", node.orelse)
            return
        if isinstance(node, cst.Assign):
            for target in node.targets:
                self._define(target.target, node, node.value, "assign")
        elif isinstance(node, cst.AnnAssign) and node.value is not None:
            self._define(node.target, node, node.value, "assign")
        elif isinstance(node, cst.AugAssign):
            self._define(node.target, node, node.value, "augassign")
        elif isinstance(node, cst.For):
            self._define(node.target, node, node.iter, "for")
        elif isinstance(node, cst.NamedExpr):
            self._define(node.target, node, node.value, "walrus")
        elif isinstance(node, cst.Call):
            self._record_call(node)
        for child in iter_children(node):
            self._walk(child)

    def _walk_arm(
        self,
        node: cst.If | cst.IfExp,
        arm: Literal["body", "orelse"],
        child: cst.CSTNode,
    ) -> None:
        saved = self.branches
        self.branches = (*saved, Branch(node, arm))
        self._walk(child)
        self.branches = saved

    def _record_call(self, call: cst.Call) -> None:
        kernel = self.kernel
        path = kernel.module.aliases.resolve(call.func)
        name = dotted_name(call.func)
        kernel.calls.append(CallSite(path, name, call, self.branches))

    def record_accesses(self) -> None:
        """Classify calls as memory accesses once every definition is known.

        ``tl.*`` accesses come first: descriptor accesses are recognised through provenance,
        which itself asks whether a load is masked.
        """
        kernel = self.kernel
        for site in kernel.calls:
            access = self._tl_access(site)
            if access is not None:
                kernel.accesses.append(access)
                kernel._access_by_call[id(site.node)] = access
        for site in kernel.calls:
            if id(site.node) not in kernel._access_by_call:
                access = self._descriptor_method_access(site)
                if access is not None:
                    kernel.accesses.append(access)
                    kernel._access_by_call[id(site.node)] = access

    def _tl_access(self, site: CallSite) -> MemoryAccess | None:
        call = site.node
        tl_name = site.tl_name
        if tl_name in ("load", "store") or (tl_name in ATOMIC_OPS):
            assert tl_name is not None
            names = {
                "load": _LOAD_PARAMS,
                "store": _STORE_PARAMS,
                "atomic_cas": _ATOMIC_CAS_PARAMS,
            }.get(tl_name, _ATOMIC_PARAMS)
            args = _bind(call, names)
            kind: AccessKind = (
                "load" if tl_name == "load" else "store" if tl_name == "store" else "atomic"
            )
            return MemoryAccess(
                kind=kind,
                op=tl_name,
                call=call,
                pointer=args.get("pointer"),
                value=args.get("value") or args.get("val"),
                mask=_real(args.get("mask")),
                other=_real(args.get("other")),
                boundary_check=args.get("boundary_check"),
                branches=site.branches,
            )
        if tl_name in ("load_tensor_descriptor", "store_tensor_descriptor"):
            kind = "load" if tl_name.startswith("load") else "store"
            return _descriptor_access(site, kind, f"descriptor.{kind}")
        return None

    def _descriptor_method_access(self, site: CallSite) -> MemoryAccess | None:
        func = site.node.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in _DESCRIPTOR_METHODS:
            return None
        if Prov.DESCRIPTOR not in self.kernel.prov(func.value):
            return None
        method = func.attr.value
        return _descriptor_access(site, _DESCRIPTOR_METHODS[method], f"descriptor.{method}")


_DESCRIPTOR_METHODS: dict[str, AccessKind] = {
    "load": "load",
    "gather": "load",
    "store": "store",
    "scatter": "store",
    "atomic_add": "atomic",
}


def _descriptor_access(site: CallSite, kind: AccessKind, op: str) -> MemoryAccess:
    """Tensor-descriptor accesses are bounds-checked by the hardware copy engine."""
    return MemoryAccess(
        kind=kind,
        op=op,
        call=site.node,
        pointer=None,
        value=None,
        mask=None,
        other=None,
        boundary_check=None,
        branches=site.branches,
        via_descriptor=True,
    )


def _bind(call: cst.Call, names: tuple[str, ...]) -> dict[str, cst.BaseExpression]:
    bound: dict[str, cst.BaseExpression] = {}
    position = 0
    for arg in call.args:
        if arg.keyword is not None:
            bound[arg.keyword.value] = arg.value
        elif not arg.star and position < len(names):
            bound[names[position]] = arg.value
            position += 1
    return bound


def _real(expr: cst.BaseExpression | None) -> cst.BaseExpression | None:
    """``mask=None`` is the same as no mask."""
    if isinstance(expr, cst.Name) and expr.value == "None":
        return None
    return expr


class _LaunchFinder(cst.CSTVisitor):
    """Finds ``kernel[grid](...)`` launches of this file's kernels, with their grids."""

    def __init__(self, model: ModuleModel) -> None:
        self.model = model
        self.top: cst.CSTNode = model.module
        self.scopes: list[dict[str, cst.BaseExpression]] = [{}]
        self.definitions: list[dict[str, cst.BaseExpression]] = [{}]
        self.alternatives: list[dict[str, list[cst.BaseExpression]]] = [{}]
        self.locals: list[frozenset[str]] = [frozenset()]
        self.function_defs: list[dict[str, cst.FunctionDef]] = [{}]
        self.functions: list[cst.FunctionDef] = []
        self.kernel_nodes = {id(k.node) for k in model.kernels}

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        if id(node) in self.kernel_nodes:
            return False  # kernels launch nothing; skip their bodies
        self.function_defs[-1][node.name.value] = node
        self.scopes.append(dict(_simple_assignments(node)))
        bindings = _function_bindings(node)
        self.definitions.append(dict(_host_definitions(node, bindings)))
        self.alternatives.append(_host_alternatives(node, bindings))
        self.locals.append(self.locals[-1] | frozenset(bindings))
        self.function_defs.append({})
        self.functions.append(node)
        return True

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        if id(original_node) not in self.kernel_nodes:
            self.scopes.pop()
            self.definitions.pop()
            self.alternatives.pop()
            self.locals.pop()
            self.function_defs.pop()
            self.functions.pop()

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Subscript) or not func.slice:
            return
        launched = func.value
        if isinstance(launched, cst.Call) and launched.args:
            # torch's `wrap_triton(kernel)[grid](...)` / `capture_triton(kernel)[grid](...)`
            wrapper = dotted_name(launched.func) or ""
            if wrapper.endswith(("wrap_triton", "capture_triton")):
                launched = launched.args[0].value
        name = dotted_name(launched)
        if name is None:
            return
        short = name.rsplit(".", 1)[-1]
        if short not in self.model.kernels_by_name:
            return
        if not all(isinstance(element.slice, cst.Index) for element in func.slice):
            return
        grid = _grid_expression(func)
        if isinstance(grid, cst.Name) and self.functions and grid.value in self.alternatives[-1]:
            grid = _assignment_before(self.functions[-1], node, grid.value) or grid
        dims, grid_top = self._grid_dims(grid)
        site = LaunchSite(
            kernel_name=short,
            call=node,
            top=self.top,
            grid=grid,
            grid_dims=dims,
            grid_top=grid_top,
            args=_positional_args(node),
            keywords=_keyword_args(node, self.definitions[-1]),
            host_definitions=self.definitions[-1],
            host_alternatives=self.alternatives[-1],
            host_locals=self.locals[-1],
        )
        self.model.launches.append(site)
        self.model._host_values[id(node)] = dict(self.scopes[-1])

    def _grid_dims(
        self, grid: cst.BaseExpression
    ) -> tuple[list[cst.BaseExpression] | None, cst.CSTNode | None]:
        """The grid's elements, through names bound to a tuple, a lambda or a `def grid(meta)`
        in the launching function, a function around it or the module (innermost first); and
        the top-level statement holding them when that is not the launch's."""
        top = None
        seen = 0
        while isinstance(grid, cst.Name) and seen < 4:
            seen += 1
            found, found_top = self._lookup(grid.value)
            if found is None:
                return None, None
            grid, top = found, found_top or top
        if isinstance(grid, cst.Lambda):
            grid = grid.body
        if isinstance(grid, cst.Tuple | cst.List):
            return [el.value for el in grid.elements], top
        return None, None

    def _lookup(self, name: str) -> tuple[cst.BaseExpression | None, cst.CSTNode | None]:
        for level in range(len(self.scopes) - 1, 0, -1):
            if name in self.scopes[level]:
                return self.scopes[level][name], None
            if name in self.function_defs[level]:
                return _returned_value(self.function_defs[level][name]), None
            if name in self.locals[level]:
                return None, None  # a local bound some other way shadows outer names
        if name in self.model.functions:
            function = self.model.functions[name]
            return _returned_value(function), self.model.function_tops[name]
        glob = self.model.globals.get(name)
        return (glob.value, glob.top) if glob is not None else (None, None)


def _positional_args(call: cst.Call) -> list[cst.BaseExpression]:
    """Positional arguments, with ``*(a, b)`` and ``*((a, b) if c else (0, 0))`` spread (the
    constant arm is the "absent" value); the positions after any other ``*args`` are unknown."""
    found: list[cst.BaseExpression] = []
    for arg in call.args:
        if arg.keyword is not None or arg.star == "**":
            continue
        if not arg.star:
            found.append(arg.value)
            continue
        elements = _spread_elements(arg.value)
        if elements is None:
            break
        found.extend(elements)
    return found


def _spread_elements(value: cst.BaseExpression) -> list[cst.BaseExpression] | None:
    if isinstance(value, cst.Tuple | cst.List):
        if any(isinstance(el, cst.StarredElement) for el in value.elements):
            return None
        return [el.value for el in value.elements]
    if isinstance(value, cst.IfExp):
        body, orelse = _spread_elements(value.body), _spread_elements(value.orelse)
        if body is None or orelse is None or len(body) != len(orelse):
            return None
        if all(evaluate(el) is not UNKNOWN for el in orelse):
            return body
        if all(evaluate(el) is not UNKNOWN for el in body):
            return orelse
    return None


def _keyword_args(
    call: cst.Call, definitions: dict[str, cst.BaseExpression]
) -> dict[str, cst.BaseExpression]:
    """Keyword arguments, with ``**kwargs`` spread when the host builds it once as
    ``dict(a=..., b=...)`` or ``{"a": ..., "b": ...}``."""
    found: dict[str, cst.BaseExpression] = {}
    for arg in call.args:
        if arg.keyword is not None:
            found[arg.keyword.value] = arg.value
        elif arg.star == "**":
            value = arg.value
            if isinstance(value, cst.Name):
                value = definitions.get(value.value, value)
            found.update(_dict_items(value))
    return found


def _dict_items(value: cst.BaseExpression) -> dict[str, cst.BaseExpression]:
    if isinstance(value, cst.Call) and dotted_name(value.func) == "dict":
        return {a.keyword.value: a.value for a in value.args if a.keyword is not None}
    if isinstance(value, cst.Dict):
        items = {}
        for element in value.elements:
            if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString):
                key = element.key.evaluated_value
                if isinstance(key, str):
                    items[key] = element.value
        return items
    return {}


def _grid_expression(func: cst.Subscript) -> cst.BaseExpression:
    """The grid of ``kernel[grid](...)``; ``kernel[M, N](...)`` and ``kernel[M,](...)`` are a
    tuple grid written without parentheses."""
    elements = [element.slice.value for element in func.slice]  # type: ignore[union-attr]
    if len(func.slice) == 1 and func.slice[0].comma is cst.MaybeSentinel.DEFAULT:
        return elements[0]
    return cst.Tuple([cst.Element(value) for value in elements])


def _assignment_before(
    function: cst.FunctionDef, call: cst.Call, name: str
) -> cst.BaseExpression | None:
    """The value of the ``name = value`` that last runs before ``call`` on every path: an
    assignment in a block around the call, with no other binding of ``name`` in a branch or
    loop between them (``grid = (...)`` before each of several launches)."""
    value: cst.BaseExpression | None = None
    block: cst.BaseSuite | None = function.body
    while isinstance(block, cst.IndentedBlock):
        for stmt in block.body:
            if not any(node is call for node in iter_nodes(stmt)):
                value = _rebinding(stmt, name, value)
                continue
            if isinstance(stmt, cst.SimpleStatementLine):
                return value
            if isinstance(stmt, cst.For | cst.While) and name in set(_assigned_names(stmt)):
                return None  # a binding later in the loop body reaches the next iteration
            block = next(
                (b for b in statement_blocks(stmt) if any(n is call for n in iter_nodes(b))),
                None,
            )
            if block is None:
                return value  # the call is in the statement's header (an `if` test)
            break
        else:
            return None
    return None


def _rebinding(
    stmt: cst.CSTNode, name: str, value: cst.BaseExpression | None
) -> cst.BaseExpression | None:
    """``name``'s known value after ``stmt``: a single-target ``name = v`` gives ``v``, any
    other binding (in a branch, a loop, a tuple target) makes it unknown."""
    if isinstance(stmt, cst.SimpleStatementLine):
        for small in stmt.body:
            if name in _assigned_targets(small):
                single = isinstance(small, cst.Assign) and len(small.targets) == 1
                value = small.value if single else None
        return value
    return None if name in set(_assigned_names(stmt)) else value


def _simple_assignments(
    node: cst.FunctionDef,
) -> Iterator[tuple[str, cst.BaseExpression]]:
    """``name = value`` statements directly in a host function body (last one wins)."""
    body = node.body
    if not isinstance(body, cst.IndentedBlock):
        return
    nested: set[str] = set()  # names also assigned in branches/loops: value unknown
    for stmt in body.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            for child in block_statements(stmt):
                nested.update(_assigned_names(child))
    direct: list[tuple[str, cst.BaseExpression]] = []
    for stmt in body.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1:
                    target = small.targets[0].target
                    if isinstance(target, cst.Name) and target.value not in nested:
                        direct.append((target.value, small.value))
    counts: dict[str, int] = {}
    for name, _ in direct:
        counts[name] = counts.get(name, 0) + 1
    for name, value in direct:
        if counts[name] == 1:  # reassigned (`grid = ...` per launch): depends on the launch
            yield name, value


def _assigned_targets(small: cst.CSTNode) -> Iterator[str]:
    """Names an assignment statement binds, through tuple and list unpacking."""
    if isinstance(small, cst.Assign):
        for target in small.targets:
            yield from _target_names(target.target)
    elif isinstance(small, cst.AnnAssign | cst.AugAssign):
        yield from _target_names(small.target)


def _target_names(target: cst.CSTNode) -> Iterator[str]:
    """Names a binding target binds: ``a``, ``a, (b, *c)``, ``[a, b]``."""
    if isinstance(target, cst.Name):
        yield target.value
    elif isinstance(target, cst.Tuple | cst.List):
        for element in target.elements:
            yield from _target_names(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from _target_names(target.value)


class _BindingCounter(cst.CSTVisitor):
    """Counts the bindings of each name in a function body (nested scopes are not entered)."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def _bind(self, target: cst.CSTNode) -> None:
        for name in _target_names(target):
            self.counts[name] = self.counts.get(name, 0) + 1

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self._bind(node.name)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self._bind(node.name)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._bind(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._bind(node.target)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._bind(node.target)

    def visit_AsName(self, node: cst.AsName) -> None:
        self._bind(node.name)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind(node.target)

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        if node.asname is None:
            self._bind(cst.Name(node.evaluated_name.split(".")[0]))

    def visit_Global(self, node: cst.Global) -> None:
        for item in node.names:
            self._bind(item.name)  # rebound elsewhere: never a single simple definition

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        for item in node.names:
            self._bind(item.name)


def _function_bindings(node: cst.FunctionDef) -> dict[str, int]:
    """How many times each name is bound in a host function, its parameters included."""
    counter = _BindingCounter()
    params = node.params
    for param in (*params.posonly_params, *params.params, *params.kwonly_params):
        counter._bind(param.name)
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            counter._bind(star.name)
    node.body.visit(counter)
    return counter.counts


def _host_definitions(
    node: cst.FunctionDef, bindings: dict[str, int]
) -> Iterator[tuple[str, cst.BaseExpression]]:
    """``name = value`` and ``a, b = value`` directly in a host function body, for names bound
    nowhere else in the function (not parameters, not reassigned, not assigned in a block)."""
    body = node.body
    if not isinstance(body, cst.IndentedBlock):
        return
    for stmt in body.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.Assign) and len(small.targets) == 1:
                target, value = small.targets[0].target, small.value
            elif isinstance(small, cst.AnnAssign) and small.value is not None:
                target, value = small.target, small.value
            else:
                continue
            for name, source in _unpack(target, value):
                if bindings.get(name) == 1:
                    yield name, source


def _host_alternatives(
    node: cst.FunctionDef, bindings: dict[str, int]
) -> dict[str, list[cst.BaseExpression]]:
    """Names a host function binds more than once, all by plain assignments (at any depth),
    with every value they are given."""
    body = node.body
    if not isinstance(body, cst.IndentedBlock):
        return {}
    found: dict[str, list[cst.BaseExpression]] = {}
    for small in iter_small_statements(body.body):
        if not isinstance(small, cst.Assign):
            continue
        for target in small.targets:  # `a = b = 0` binds both to the value
            for name, source in _unpack(target.target, small.value):
                found.setdefault(name, []).append(source)
    return {n: v for n, v in found.items() if len(v) > 1 and len(v) == bindings.get(n)}


def _unpack(
    target: cst.BaseExpression, value: cst.BaseExpression
) -> Iterator[tuple[str, cst.BaseExpression]]:
    if isinstance(target, cst.Name):
        yield target.value, value
    elif isinstance(target, cst.Tuple | cst.List):
        elements = [el.value for el in target.elements]
        if isinstance(value, cst.Tuple | cst.List) and len(value.elements) == len(elements):
            pairs = [(el, v.value) for el, v in zip(elements, value.elements, strict=True)]
        else:
            # ``a, b = x.stride()`` binds ``a`` to ``x.stride()[0]``; from a starred target on,
            # positions are unknown and the whole value stands in.
            pairs, starred = [], False
            for position, element in enumerate(target.elements):
                starred = starred or isinstance(element, cst.StarredElement)
                pairs.append((element.value, value if starred else _element(value, position)))
        for element, source in pairs:
            yield from _unpack(element, source)


def _element(value: cst.BaseExpression, position: int) -> cst.Subscript:
    """``value[position]``, a node made for tracing (it has no position in the file)."""
    index = cst.Index(cst.Integer(str(position)))
    return cst.Subscript(value, [cst.SubscriptElement(index)])


def _assigned_names(node: cst.CSTNode) -> Iterator[str]:
    """Names assigned by simple statements in ``node`` and the blocks nested in it."""
    for small in iter_small_statements([node]):
        yield from _assigned_targets(small)


def _returned_value(node: cst.FunctionDef) -> cst.BaseExpression | None:
    """The value of the first top-level ``return`` (also of ``def grid(meta): return ...``)."""
    body = node.body
    if isinstance(body, cst.SimpleStatementSuite):
        lines: list[cst.BaseSmallStatement] = list(body.body)
    elif isinstance(body, cst.IndentedBlock):
        lines = [
            small
            for stmt in body.body
            if isinstance(stmt, cst.SimpleStatementLine)
            for small in stmt.body
        ]
    else:
        return None
    return next((small.value for small in lines if isinstance(small, cst.Return)), None)
