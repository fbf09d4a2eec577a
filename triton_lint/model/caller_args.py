"""Parameters of a launching function that every call in the project passes a value that is not
None (``cu_seqlens=query_start_loc`` where the caller's ``query_start_loc: torch.Tensor`` has no
default): an optional input that no caller leaves out, so the launching function's ``if x is
None`` paths never run. One level of callers, read through the same host models as
`triton_lint.model.callers`; nothing is known when a call cannot be bound or a caller's file
was not given to the lint."""

from __future__ import annotations

import libcst as cst

from triton_lint.model.callers import CallerIndex
from triton_lint.model.host import bind_call
from triton_lint.model.launches import calls_of
from triton_lint.model.project import FunctionKey

#: Annotations that admit None.
_OPTIONAL = ("Optional", "None", "Any")


def always_passed(
    callers: CallerIndex, key: FunctionKey, function: cst.FunctionDef
) -> frozenset[str]:
    """The parameters of ``function`` that every known call passes a value that is not None."""
    project = callers.project
    if project is None or key in project.unbounded or key not in project.callers:
        return frozenset()
    common: set[str] | None = None
    for path, names in project.callers[key].items():
        host = callers.hosts(path)
        if host is None:
            return frozenset()
        for call, caller, _ in calls_of(host, set(names)):
            bound = bind_call(function, call)
            passed = {name for name, arg in bound.items() if _not_none(arg, caller)}
            common = passed if common is None else common & passed
    return frozenset(common or ())


def _not_none(arg: cst.BaseExpression, caller: cst.FunctionDef | None) -> bool:
    """``arg`` cannot be None: a call or a literal other than None, or a parameter of the
    calling function annotated with a type that excludes None and without a None default.
    Attributes and other names may hold None (``metadata.cu_seqlens``)."""
    if isinstance(arg, cst.Call | cst.Integer | cst.Float | cst.SimpleString | cst.List):
        return True
    if not isinstance(arg, cst.Name) or caller is None:
        return False
    params = caller.params
    for param in (*params.posonly_params, *params.params, *params.kwonly_params):
        if param.name.value != arg.value:
            continue
        if param.annotation is None or (
            isinstance(param.default, cst.Name) and param.default.value == "None"
        ):
            return False
        text = cst.Module(body=[]).code_for_node(param.annotation.annotation)
        return not any(word in text for word in _OPTIONAL)  # `Optional[T]`, `T | None`
    return False
