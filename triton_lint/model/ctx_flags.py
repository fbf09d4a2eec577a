"""An autograd flag that reaches a launch through a helper's returned tuple and a call.

fla's token shift: the forward calls ``y, N, T, use_short, c = shift_fwd(x, ...)``, whose
``use_short = T <= 4096`` (a later ``use_short = False`` only ever clears it) is returned
beside ``T``; the forward saves both on ``ctx``; the backward passes ``ctx.T`` and
``ctx.use_short`` to ``shift_bwd(dy, N, T, ..., use_short)``, which launches the short kernel
on grid ``(N, T)`` only ``if use_short:``. There ``use_short`` implies ``T <= 4096``.

The chain is followed one step each (one helper, one ``ctx`` attribute, one call of the
launching function) and kept only when every call of the launching function gives the same
test: a flag some caller passes otherwise says nothing (unknown, not guessed).
"""

from __future__ import annotations

import ast

import libcst as cst

from triton_lint.model.callers import (
    CallerIndex,
    autograd_method,
    ctx_assignments,
    first_param,
    free_names,
    local_tests,
)
from triton_lint.model.dispatch import substitute
from triton_lint.model.host import bind_call, function_facts
from triton_lint.model.kernel import LaunchSite, ModuleModel
from triton_lint.model.launches import calls_of
from triton_lint.model.project import FunctionKey
from triton_lint.model.tree import iter_nodes
from triton_lint.source import decode

_CONSTANTS = {"True", "False", "None"}


def flag_tests(
    callers: CallerIndex, key: FunctionKey, site: LaunchSite, launching: ModuleModel
) -> list[cst.BaseExpression]:
    """Tests the ``if flag:`` around ``site`` implies, in the launching function's names,
    where ``flag`` is a parameter every caller fills from an autograd ``ctx`` flag."""
    function = site.function
    project = callers.project
    if function is None or project is None or key in project.unbounded:
        return []
    bindings = function_facts(launching, function)[0]
    flags = [
        test.value
        for test in local_tests(launching, function, site.call)[0]
        if isinstance(test, cst.Name) and bindings.get(test.value) == 1
    ]
    if not flags or key not in project.callers:
        return []
    source = project.sources.get(launching.path)
    per_call: list[dict[str, cst.BaseExpression]] = []
    for path, names in project.callers[key].items():
        host = callers.hosts(path)
        if host is None:
            return []
        for call, caller, top in calls_of(host, set(names)):
            found: dict[str, cst.BaseExpression] = {}
            for flag in flags:
                test = _call_test(host, launching, call, caller, top, function, flag, source)
                if (
                    test is not None
                    and free_names(test)
                    <= {n for n, count in bindings.items() if count == 1} | _CONSTANTS
                ):
                    found[launching.module.code_for_node(test)] = test
            per_call.append(found)
    if not per_call:
        return []
    common = set(per_call[0]).intersection(*per_call[1:])
    return [test for text, test in per_call[0].items() if text in common]


def _call_test(
    host: ModuleModel,
    launching: ModuleModel,
    call: cst.Call,
    caller: cst.FunctionDef | None,
    top: cst.CSTNode,
    callee: cst.FunctionDef,
    flag: str,
    source: bytes | None,
) -> cst.BaseExpression | None:
    """What ``flag`` true implies at this call, in ``callee``'s parameters, or None."""
    forward = autograd_method(top, "forward")
    if caller is None or caller.name.value != "backward" or forward is None:
        return None
    ctx, ctx_forward = first_param(caller), first_param(forward)
    if ctx is None or ctx_forward is None:
        return None
    bound = bind_call(callee, call)
    code = host.module.code_for_node
    param_of = {code(arg): param for param, arg in bound.items()}
    argument = bound.get(flag)
    saved = ctx_assignments(top, forward, ctx_forward)
    if not (
        isinstance(argument, cst.Attribute)
        and code(argument.value) == ctx
        and isinstance(saved.get(argument.attr.value), cst.Name)
    ):
        return None
    flag_value = saved[argument.attr.value]
    assert isinstance(flag_value, cst.Name)
    implied = _returned_implication(host, launching, forward, flag_value.value, source)
    if implied is None:
        return None
    # forward locals -> `ctx.attr` -> the parameter the backward passes it for
    attributes = {value.value: attr for attr, value in saved.items() if isinstance(value, cst.Name)}
    values: dict[str, cst.BaseExpression] = {}
    for name in free_names(implied) - _CONSTANTS:
        param = param_of.get(f"{ctx}.{attributes.get(name)}")
        if name not in attributes or param is None:
            return None
        values[name] = cst.Name(param)
    return substitute(implied, values)


def _returned_implication(
    host: ModuleModel,
    launching: ModuleModel,
    forward: cst.FunctionDef,
    flag: str,
    source: bytes | None,
) -> cst.BaseExpression | None:
    """``flag`` is an element of ``a, b, flag = helper(...)`` in ``forward``: what it implies
    when true, in the names the same assignment binds (``T <= 4096`` for ``T``)."""
    bindings = function_facts(host, forward)[0]
    for stmt in _body(forward):
        for small in getattr(stmt, "body", ()) if isinstance(stmt, cst.SimpleStatementLine) else ():
            if not (isinstance(small, cst.Assign) and len(small.targets) == 1):
                continue
            targets = _names(small.targets[0].target)
            if targets is None or flag not in targets or not isinstance(small.value, cst.Call):
                continue
            if any(bindings.get(name) != 1 for name in targets):
                return None
            helper = _helper(host, launching, small.value, source)
            if helper is None:
                return None
            implied = _implication(helper, targets.index(flag), len(targets))
            if implied is None:
                return None
            test, positions = implied
            return substitute(test, {n: cst.Name(targets[i]) for n, i in positions.items()})
    return None


def _helper(
    host: ModuleModel, launching: ModuleModel, call: cst.Call, source: bytes | None
) -> cst.FunctionDef | None:
    """The top-level function called: of the caller's file, else the one of the launching
    function's file the caller imports under that name (read from ``source``, that file's
    content, when the part of it parsed for launches left it out)."""
    if not isinstance(call.func, cst.Name):
        return None
    name = call.func.value
    if name in host.functions:
        return host.functions[name]
    if name not in host.module_names:
        return None
    if name in launching.functions:
        return launching.functions[name]
    key = ("returned helper", name)
    if key not in launching.memo:
        launching.memo[key] = _parse_function(source, name) if source is not None else None
    return launching.memo[key]


def _parse_function(source: bytes, name: str) -> cst.FunctionDef | None:
    """The top-level ``def name`` of a file, parsed on its own."""
    try:
        text = decode(source)
        found = [
            node
            for node in ast.parse(text).body
            if isinstance(node, ast.FunctionDef) and node.name == name
        ]
        if len(found) != 1:
            return None
        node = found[0]
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        lines = text.splitlines(keepends=True)[first - 1 : node.end_lineno]
        parsed = cst.parse_module("".join(lines)).body
    except (SyntaxError, ValueError, UnicodeError, LookupError, cst.ParserSyntaxError):
        return None
    return parsed[0] if parsed and isinstance(parsed[0], cst.FunctionDef) else None


def _implication(
    helper: cst.FunctionDef, position: int, size: int
) -> tuple[cst.BaseExpression, dict[str, int]] | None:
    """What element ``position`` of every tuple ``helper`` returns implies when true: its one
    assignment that is not ``False`` (``flag = T <= 4096``), when each name that reads is
    bound only before it and returned itself (its position in the tuple)."""
    returns = [
        node
        for node in iter_nodes(helper.body, skip=(cst.FunctionDef, cst.ClassDef))
        if isinstance(node, cst.Return)
    ]
    elements = [_names(r.value) if r.value is not None else None for r in returns]
    if not elements or any(e is None or len(e) != size for e in elements):
        return None
    first = elements[0]
    assert first is not None
    flag = first[position]
    if any(e is None or e != first for e in elements):
        return None
    body = _body(helper)
    definition: tuple[int, cst.BaseExpression] | None = None
    for index, stmt in enumerate(body):
        for node in iter_nodes(stmt):
            if isinstance(
                node, cst.AugAssign | cst.AnnAssign | cst.NamedExpr | cst.For
            ) and flag in (_names(node.target) or [flag]):
                return None
            if not isinstance(node, cst.Assign) or all(
                _names(t.target) != [flag] for t in node.targets
            ):
                continue
            if isinstance(node.value, cst.Name) and node.value.value == "False":
                continue
            if definition is not None or node is not _direct(stmt):
                return None
            definition = (index, node.value)
    if definition is None:
        return None
    index, test = definition
    later = _bound_in(body[index + 1 :])
    reads = free_names(test) - _CONSTANTS
    if reads & later or not reads <= set(first):
        return None
    return test, {name: first.index(name) for name in reads}


def _bound_in(statements: list[cst.BaseStatement]) -> set[str]:
    """Names bound by ``statements`` (assignments of any kind)."""
    found: set[str] = set()
    for stmt in statements:
        for node in iter_nodes(stmt):
            if isinstance(node, cst.AssignTarget | cst.AugAssign | cst.AnnAssign | cst.For):
                found.update(n.value for n in iter_nodes(node.target) if isinstance(n, cst.Name))
    return found


def _direct(stmt: cst.BaseStatement) -> cst.CSTNode | None:
    """The single ``name = value`` of a simple statement line, else None."""
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
        return stmt.body[0]
    return None


def _body(function: cst.FunctionDef) -> list[cst.BaseStatement]:
    return list(function.body.body) if isinstance(function.body, cst.IndentedBlock) else []


def _names(target: cst.BaseExpression) -> list[str] | None:
    """``a`` or ``a, b, c``: the plain names, in order; None for anything else."""
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, cst.Tuple | cst.List):
        names = [el.value for el in target.elements]
        if all(isinstance(n, cst.Name) for n in names) and not any(
            isinstance(el, cst.StarredElement) for el in target.elements
        ):
            return [n.value for n in names]  # type: ignore[union-attr]
    return None
