"""Building the kernel model of one parsed file: kernels and their decorators, parameters,
globals, then one walk per kernel (`walker`) and the launches (`launches`).

Rules never call this; `triton_lint.engine` does, once per file.
"""

from __future__ import annotations

import ast
from typing import Any

import libcst as cst

from triton_lint.model.evaluate import UNKNOWN, evaluate
from triton_lint.model.foreign import find_foreign_launches
from triton_lint.model.host import assigned_targets
from triton_lint.model.kernel import (
    Autotune,
    AutotuneConfig,
    Global,
    Kernel,
    ModuleModel,
    Param,
)
from triton_lint.model.launches import find_launches
from triton_lint.model.names import CONSTEXPR, TL, Aliases
from triton_lint.model.project import ProjectContext
from triton_lint.model.tree import block_statements
from triton_lint.model.walker import walk_kernel


def build_module_model(
    path: str,
    text: str,
    module: cst.Module,
    target_version: str = "3.9",
    syntax: ast.Module | None = None,
    project: ProjectContext | None = None,
) -> ModuleModel:
    """Build the model of one parsed file (``syntax``: the stdlib's tree of it, if parsed;
    ``project``: the rest of the project, for launches and callers in other files)."""
    model = ModuleModel(path, text, module, target_version, _find_all_launches, syntax, project)
    for top in module.body:
        _collect_top(model, top, top)
    for kernel in model.kernels:
        walk_kernel(kernel)
    return model


def build_host_model(path: str, text: str, module: cst.Module, target_version: str) -> ModuleModel:
    """The model of another file of the project that launches kernels or calls a launching
    function: its functions, globals and imports; its own kernels are not walked."""
    model = ModuleModel(path, text, module, target_version)
    for top in module.body:
        _collect_top(model, top, top)
    return model


def _find_all_launches(model: ModuleModel) -> None:
    find_launches(model)
    find_foreign_launches(model, build_host_model)


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
    model.module_names.update(assigned_targets(small))
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
        if isinstance(value, cst.Call) and model.aliases.resolve(value.func) in CONSTEXPR:
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
        is_constexpr = annotation in CONSTEXPR
        entry = Param(param.name.value, index, param, annotation, is_constexpr, param.default)
        kernel.params.append(entry)
        kernel.params_by_name[entry.name] = entry
