"""What the callers of a launching function establish at the launch: the conditions that hold at
every call of it in the project and the values every call passes, written in the launching
function's own parameter names.

For each call of the launching function ``f`` (found by `triton_lint.project.index`), the
caller ``g`` contributes the ``assert`` statements and ``if ...: raise`` tests run before the
call, the tests of the ``if`` statements around it, the negated tests of earlier ``if``
statements whose body always returns or raises (`exit_tests`; also in ``f`` itself), the
checks of a helper it calls first (``get_config(M)`` raising for ``M > 512``), and what its
own callers establish (up to `MAX_DEPTH` levels). A test is kept only when, with the arguments
replaced by ``f``'s parameters, it reads nothing but those: a test about a caller's other
locals says nothing at the launch. A condition holds at the launch when it holds at every
call; a value reaches a parameter when every call passes the same expression (with the
caller's single definitions of the names it reads: ``num_tokens = x.shape[0]`` then
``op(x, num_tokens)``). A function with no known caller, or more callers than the index
follows, gets nothing: unknown, not guessed. An autograd ``backward`` also gets the
``forward``'s value of a ``ctx`` flag its launch runs under (`autograd_flag_tests`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import libcst as cst

from triton_lint.model.call_path import path_to
from triton_lint.model.dispatch import exit_test
from triton_lint.model.evaluate import UNKNOWN, evaluate
from triton_lint.model.host import bind_call, function_facts
from triton_lint.model.host_tests import conjuncts
from triton_lint.model.kernel import ModuleModel
from triton_lint.model.launches import calls_of
from triton_lint.model.names import dotted_name
from triton_lint.model.predicates import HelperFiles, predicate_tests
from triton_lint.model.project import FunctionKey
from triton_lint.model.tree import iter_children, iter_nodes

MAX_DEPTH = 2
#: Host files of the project by display path (None: it cannot be parsed).
Hosts = Callable[[str], ModuleModel | None]
_ALLOWED_FREE = {"True", "False", "None"}


@dataclass
class CallerFacts:
    """Holding tests, guard tests and parameter values, in the function's own names."""

    holding: list[cst.BaseExpression] = field(default_factory=list)
    guards: list[cst.BaseExpression] = field(default_factory=list)
    values: dict[str, cst.BaseExpression] = field(default_factory=dict)


def qualified_name(host: ModuleModel, function: cst.FunctionDef, top: cst.CSTNode) -> str | None:
    """``f`` or ``Class.f`` for a function the project can call by name; None for a nested one."""
    name = function.name.value
    if isinstance(top, cst.ClassDef) and isinstance(top.body, cst.IndentedBlock):
        if any(stmt is function for stmt in top.body.body):
            return f"{top.name.value}.{name}"
        return None
    return name if host.functions.get(name) is function else None


class CallerIndex:
    """Caller facts of the functions of one kernel file's project, each computed once."""

    def __init__(self, model: ModuleModel, hosts: Hosts) -> None:
        self.model = model
        self.project = model.project
        self.hosts = hosts
        self.helpers = HelperFiles(model, hosts)
        self._facts: dict[FunctionKey, CallerFacts] = {}

    def facts(self, key: FunctionKey, function: cst.FunctionDef, depth: int = 0) -> CallerFacts:
        if key not in self._facts:
            self._facts[key] = CallerFacts()  # a cycle of calls reads nothing
            self._facts[key] = self._compute(key, function, depth)
        return self._facts[key]

    def _compute(self, key: FunctionKey, function: cst.FunctionDef, depth: int) -> CallerFacts:
        project = self.project
        if project is None or key in project.unbounded or key not in project.callers:
            return CallerFacts()
        per_call: list[CallerFacts] = []
        for path, names in project.callers[key].items():
            host = self.hosts(path)
            if host is None:
                return CallerFacts()
            for call, caller, top in calls_of(host, set(names)):
                per_call.append(self._call_facts(host, call, caller, top, function, depth))
        if not per_call:
            return CallerFacts()
        return _common(per_call, self.model)

    def _call_facts(
        self,
        host: ModuleModel,
        call: cst.Call,
        caller: cst.FunctionDef | None,
        top: cst.CSTNode,
        callee: cst.FunctionDef,
        depth: int,
    ) -> CallerFacts:
        bound = bind_call(callee, call)
        holding: list[cst.BaseExpression] = []
        guards: list[cst.BaseExpression] = []
        definitions: dict[str, cst.BaseExpression] = {}
        if caller is not None:
            holding, guards = local_tests(host, caller, call, self.helpers)
            definitions = dict(function_facts(host, caller)[1])
            name = qualified_name(host, caller, top)
            if depth + 1 < MAX_DEPTH and name is not None:
                upper = self.facts((host.path, name), caller, depth + 1)
                holding += upper.holding
                guards += upper.guards
                definitions = {**upper.values, **definitions}
        params = set(bound)
        by_code = {host.module.code_for_node(arg): param for param, arg in bound.items()}
        facts = CallerFacts()
        for tests, out in ((holding, facts.holding), (guards, facts.guards)):
            split = out is facts.holding  # a conjunct of a guard's raise test is no guard
            for test in (
                part for whole in tests for part in (conjuncts(whole) if split else [whole])
            ):
                translated = _translate(test, by_code, host)
                if translated is not None and free_names(translated) <= params | _ALLOWED_FREE:
                    out.append(translated)
        facts.values = dict(bound)
        for param, arg in bound.items():  # `op(S=S)` after `S = 512`: the caller's constant
            clash = {
                name
                for name in free_names(arg) & params
                if name in definitions and evaluate(definitions[name]) is not UNKNOWN
            }
            if clash:
                facts.values[param] = _substitute(arg, {n: definitions[n] for n in clash})
        pending = [(arg, 3) for arg in facts.values.values()]
        while pending:  # the caller's definitions of the names the arguments read
            expr, depth_left = pending.pop()
            for name in free_names(expr) - set(facts.values):
                if name in definitions and depth_left > 0:
                    facts.values[name] = definitions[name]
                    pending.append((definitions[name], depth_left - 1))
        return facts


def local_tests(
    host: ModuleModel, function: cst.FunctionDef, call: cst.Call, files: HelperFiles | None = None
) -> tuple[list[cst.BaseExpression], list[cst.BaseExpression]]:
    """Tests true where ``call`` runs (asserts before it, ``if`` tests around it, what early
    exits leave true, the predicate helpers those call, also from ``files``), and the guards:
    those asserts and ``if`` tests, ``if ...: raise`` tests and helper checks before it."""
    holding: list[cst.BaseExpression] = []
    guards: list[cst.BaseExpression] = []
    for stmt, holds_call in path_to(host, function, call):
        if holds_call:
            if isinstance(stmt, cst.If):
                holding += [stmt.test, *predicate_tests(host, function, stmt.test, files)]
                guards.append(stmt.test)
            continue
        test = exit_test(stmt)  # holds, but checks nothing of the sizes it mentions
        if test is not None:
            holding += [test, *predicate_tests(host, function, test, files)]
        if isinstance(stmt, cst.If) and _raises(stmt.body):
            guards.append(stmt.test)
        for small in _small_statements(stmt):
            if isinstance(small, cst.Assert):
                holding.append(small.test)
                guards.append(small.test)
        guards.extend(_checks_before(host, stmt))
    return holding, guards


def exit_tests(
    host: ModuleModel, function: cst.FunctionDef, call: cst.Call
) -> list[cst.BaseExpression]:
    """What the early exits before ``call`` leave true: ``not test`` of each ``if test:``
    (no ``else``) on its way whose body always ends in ``return`` or ``raise``
    (``if m >= 4096: ...; return y`` then a launch under ``m < 4096``); and the comparisons
    of the predicate helpers that those and the ``if`` tests around ``call`` read."""
    found: list[cst.BaseExpression] = []
    for stmt, holds_call in path_to(host, function, call):
        test = exit_test(stmt) if not holds_call else None
        found += [test] if test is not None else []
        if holds_call and isinstance(stmt, cst.If):
            test = stmt.test
        found += predicate_tests(host, function, test) if test is not None else []
    return found


def helper_checks(
    host: ModuleModel, function: cst.FunctionDef, call: cst.Call
) -> list[cst.BaseExpression]:
    """The checks of the same file's helpers that ``function`` calls before ``call``."""
    return [
        check
        for stmt, holds_call in path_to(host, function, call)
        if not holds_call
        for check in _checks_before(host, stmt)
    ]


def _checks_before(host: ModuleModel, stmt: cst.BaseStatement) -> list[cst.BaseExpression]:
    return [check for small in _small_statements(stmt) for check in _helper_checks(host, small)]


def autograd_flag_tests(
    host: ModuleModel, function: cst.FunctionDef, call: cst.Call, top: cst.CSTNode
) -> list[cst.BaseExpression]:
    """Tests around ``call`` in an autograd ``backward`` that read a ``ctx`` attribute the
    class's ``forward`` sets once (``ctx.use_short = T <= 4096``), as the forward computed
    them (``T <= 4096``). Kept only when every name the forward's value reads means the same
    in the backward: the same single definition in both, down to tensors saved by
    ``ctx.save_for_backward`` and read back from ``ctx.saved_tensors`` at the same position,
    module-level names and literals; anything else is unknown."""
    key = ("autograd flags", id(function))  # read once for all the launches in ``function``
    if key not in host.memo:
        host.memo[key] = _autograd_names(host, function, top)
    if host.memo[key] is None:
        return []
    ctx, flags, forward_names, backward_names = host.memo[key]
    found: list[cst.BaseExpression] = []
    for test in local_tests(host, function, call)[0]:
        reads = {
            id(node): flags[node.attr.value]
            for node in iter_nodes(test)
            if isinstance(node, cst.Attribute)
            and isinstance(node.value, cst.Name)
            and node.value.value == ctx
            and node.attr.value in flags
        }
        if not reads:
            continue
        translated = _shared(_replace(test, reads), forward_names, backward_names)
        if translated is not None:
            found.append(translated)
    return found


def _autograd_names(
    host: ModuleModel, function: cst.FunctionDef, top: cst.CSTNode
) -> tuple[str, dict[str, cst.BaseExpression], _Canonical, _Canonical] | None:
    """A ``backward``'s ``ctx``, the flags its ``forward`` sets and both methods' names."""
    forward = autograd_method(top, "forward")
    if function.name.value != "backward" or forward is None or function is forward:
        return None
    ctx, ctx_forward = first_param(function), first_param(forward)
    if ctx is None or ctx_forward is None:
        return None
    flags = ctx_assignments(top, forward, ctx_forward)
    if not flags:
        return None
    return ctx, flags, _Canonical(host, forward, ctx_forward), _Canonical(host, function, ctx)


def _shared(
    expr: cst.BaseExpression, forward: _Canonical, backward: _Canonical, depth: int = 3
) -> cst.BaseExpression | None:
    """``expr`` of the forward in names that mean the same in the backward: a forward local
    that does not (``use_short``) is replaced by its single definition (``T <= 4096``)."""
    replacements: dict[str, cst.BaseExpression] = {}
    for name in free_names(expr) - _ALLOWED_FREE:
        text = forward.of(name)
        if text is not None and text == backward.of(name):
            continue
        value = forward.definitions.get(name)
        inner = _shared(value, forward, backward, depth - 1) if value and depth else None
        if inner is None:
            return None
        replacements[name] = inner
    return _substitute(expr, replacements) if replacements else expr


def autograd_method(top: cst.CSTNode, name: str) -> cst.FunctionDef | None:
    if not isinstance(top, cst.ClassDef) or not isinstance(top.body, cst.IndentedBlock):
        return None
    methods = [s for s in top.body.body if isinstance(s, cst.FunctionDef) and s.name.value == name]
    return methods[0] if len(methods) == 1 else None


def first_param(function: cst.FunctionDef) -> str | None:
    params = [*function.params.posonly_params, *function.params.params]
    return params[0].name.value if params else None


def ctx_assignments(
    top: cst.CSTNode, forward: cst.FunctionDef, ctx: str
) -> dict[str, cst.BaseExpression]:
    """``ctx.NAME = value`` statements directly in ``forward``'s body, for attributes the
    class assigns nowhere else (an assignment under an ``if`` or in another method makes the
    value unknown)."""
    counts: dict[str, int] = {}
    for node in iter_nodes(top):
        targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else []
        targets += [node.target] if isinstance(node, cst.AnnAssign | cst.AugAssign) else []
        for target in targets:
            for element in iter_nodes(target):
                if isinstance(element, cst.Attribute):
                    counts[element.attr.value] = counts.get(element.attr.value, 0) + 1
    found: dict[str, cst.BaseExpression] = {}
    body = forward.body.body if isinstance(forward.body, cst.IndentedBlock) else ()
    for stmt in body:
        for small in _small_statements(stmt):
            if not (isinstance(small, cst.Assign) and len(small.targets) == 1):
                continue
            target = small.targets[0].target
            if (
                isinstance(target, cst.Attribute)
                and isinstance(target.value, cst.Name)
                and target.value.value == ctx
                and counts.get(target.attr.value) == 1
            ):
                found[target.attr.value] = small.value
    return found


class _Canonical:
    """A name of an autograd method written in what both methods can see: its single
    definitions followed (three levels), a tensor saved for or read back from the backward
    as its position (``saved_tensor_0``), module-level names as themselves; None for anything
    else (a parameter, a name bound twice)."""

    def __init__(self, host: ModuleModel, function: cst.FunctionDef, ctx: str) -> None:
        self.host = host
        self.bindings, self.definitions = function_facts(host, function)
        self.saved: dict[str, int] = {}
        for node in iter_nodes(function.body):
            if (
                isinstance(node, cst.Call)
                and dotted_name(node.func) == f"{ctx}.save_for_backward"
                and not any(arg.star for arg in node.args)
            ):
                for position, arg in enumerate(node.args):
                    if isinstance(arg.value, cst.Name):
                        self.saved[arg.value.value] = position
        self.saved_tensors = f"{ctx}.saved_tensors"

    def of(self, name: str, depth: int = 3) -> str | None:
        if name in _ALLOWED_FREE:
            return name
        if name in self.saved and self.bindings.get(name, 0) <= 1:
            return f"saved_tensor_{self.saved[name]}"
        value = self.definitions.get(name)
        if value is None:
            known = name not in self.bindings and name in self.host.module_names
            return name if known else None
        code = self.host.module.code_for_node
        if isinstance(value, cst.Subscript) and dotted_name(value.value) == self.saved_tensors:
            index = value.slice[0].slice if len(value.slice) == 1 else None
            if isinstance(index, cst.Index) and isinstance(index.value, cst.Integer):
                return f"saved_tensor_{index.value.value}"
            return None
        if depth == 0 or any(
            isinstance(n, cst.Attribute) and dotted_name(n) == self.saved_tensors
            for n in iter_nodes(value)
        ):
            return None
        parts = {n: self.of(n, depth - 1) for n in free_names(value)}
        if any(part is None for part in parts.values()):
            return None
        return code(_substitute(value, {n: cst.parse_expression(p) for n, p in parts.items() if p}))


def _small_statements(stmt: cst.CSTNode) -> Iterator[cst.BaseSmallStatement]:
    if isinstance(stmt, cst.SimpleStatementLine):
        yield from stmt.body


def _raises(body: cst.BaseSuite) -> bool:
    return any(isinstance(node, cst.Raise) for node in iter_nodes(body))


def _helper_checks(host: ModuleModel, small: cst.CSTNode) -> Iterator[cst.BaseExpression]:
    """The checks of a helper of the same file called here (``cfg = get_config(M)``), in the
    caller's names: the tests of its top-level ``if ...: raise`` and its asserts."""
    value = small.value if isinstance(small, cst.Assign | cst.Expr) else None
    if not isinstance(value, cst.Call) or not isinstance(value.func, cst.Name):
        return
    helper = host.functions.get(value.func.value)
    if helper is None or not isinstance(helper.body, cst.IndentedBlock):
        return
    bound = bind_call(helper, value)
    by_code = {param: arg for param, arg in bound.items()}
    for stmt in helper.body.body:
        tests = [stmt.test] if isinstance(stmt, cst.If) and _raises(stmt.body) else []
        tests += [s.test for s in _small_statements(stmt) if isinstance(s, cst.Assert)]
        for test in tests:
            if free_names(test) <= set(by_code) | _ALLOWED_FREE:
                yield _substitute(test, by_code)


def _translate(
    test: cst.BaseExpression, by_code: dict[str, str], host: ModuleModel
) -> cst.BaseExpression | None:
    """``test`` with every sub-expression that is an argument's text replaced by the
    parameter it binds."""
    replacements = {}
    for node in iter_nodes(test):
        if isinstance(node, cst.BaseExpression):
            param = by_code.get(host.module.code_for_node(node)) if _worth(node) else None
            if param is not None:
                replacements[node] = param
    if not replacements:
        return None
    return _replace(test, {id(n): cst.Name(p) for n, p in replacements.items()})


def _worth(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.Name | cst.Attribute | cst.Subscript | cst.Call)


def _substitute(
    expr: cst.BaseExpression, values: dict[str, cst.BaseExpression]
) -> cst.BaseExpression:
    names = {
        id(n): values[n.value]
        for n in free_name_nodes(expr)
        if isinstance(n, cst.Name) and n.value in values
    }
    return _replace(expr, names) if names else expr


class _Replacer(cst.CSTTransformer):
    def __init__(self, replacements: dict[int, cst.BaseExpression]) -> None:
        super().__init__()
        self.replacements = replacements

    def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode) -> cst.CSTNode:  # type: ignore[override]
        return self.replacements.get(id(original), updated)


def _replace(
    expr: cst.BaseExpression, replacements: dict[int, cst.BaseExpression]
) -> cst.BaseExpression:
    if id(expr) in replacements:
        return replacements[id(expr)]
    return expr.visit(_Replacer(replacements))  # type: ignore[return-value]


def free_name_nodes(expr: cst.CSTNode) -> Iterator[cst.Name]:
    """Names read as values: not attribute names, not called functions, not keywords."""
    pending: list[cst.CSTNode] = [expr]
    while pending:
        node = pending.pop()
        if isinstance(node, cst.Name):
            yield node
        elif isinstance(node, cst.Attribute):
            pending.append(node.value)
        elif isinstance(node, cst.Call):
            if not isinstance(node.func, cst.Name):
                pending.append(node.func)
            pending.extend(arg.value for arg in node.args)
        elif not isinstance(node, cst.Lambda):
            pending.extend(iter_children(node))


def free_names(expr: cst.CSTNode) -> set[str]:
    """The names ``expr`` reads as values."""
    return {node.value for node in free_name_nodes(expr)}


def _common(per_call: list[CallerFacts], model: ModuleModel) -> CallerFacts:
    """What every call establishes: tests and values that all of them have (by text)."""
    code = model.module.code_for_node
    first, rest = per_call[0], per_call[1:]
    result = CallerFacts()
    for name, out in (("holding", result.holding), ("guards", result.guards)):
        others = [{code(t) for t in getattr(facts, name)} for facts in rest]
        seen: set[str] = set()
        for test in getattr(first, name):
            text = code(test)
            if text not in seen and all(text in texts for texts in others):
                seen.add(text)
                out.append(test)
    for param, value in first.values.items():
        text = code(value)
        if all(param in f.values and code(f.values[param]) == text for f in rest):
            result.values[param] = value
    return result
