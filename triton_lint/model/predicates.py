"""Predicate helpers: a host function whose body only returns a test of its parameters
(``return 0 < num_tokens <= 32``, also wrapped in ``bool(...)`` and among other ``and``
terms), called in an ``if`` test or bound once to a flag that an ``if`` reads
(``direct = use_direct(x, num_tokens=M)`` then ``if direct:``). Where that ``if`` holds, so do
the helper's comparisons of its unchanged parameters, with the call's arguments in their place
(``0 < M <= 32``).

The helper is a top-level function of the file holding the test, or one that file imports
from another file the project index gave the lint (`HelperFiles`: the kernel file itself, a
launching or calling file; ``from pkg.kernels import fits``, ``from .ops import fits``,
``import pkg.kernels as K`` then ``K.fits(...)``), read through the same host models as its
callers, so the results cache records that read. A helper whose returned ``and`` calls another
predicate helper of its own file is read one level deeper (``MAX_DEPTH``). Only terms of the
``and`` that are comparisons reading nothing but the helper's unchanged parameters and
constants are kept: what the rest of the predicate says (``not other(...)``, a helper over
several statements, a re-export) stays unknown.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import libcst as cst

from triton_lint.model.dispatch import CONSTANTS, reads, substitute
from triton_lint.model.host import bind_call, function_facts
from triton_lint.model.host_tests import conjuncts
from triton_lint.model.kernel import ModuleModel
from triton_lint.model.names import dotted_name
from triton_lint.model.tree import iter_small_statements

#: How many helpers deep a predicate is read: the helper, and the helpers its ``and`` calls.
MAX_DEPTH = 2


class HelperFiles:
    """The files a predicate helper may come from: those the project index gave the lint of
    ``model`` (it and ``model.project.sources``), each parsed once through ``hosts``."""

    def __init__(self, model: ModuleModel, hosts: Callable[[str], ModuleModel | None]) -> None:
        self.paths = [model.path, *(model.project.sources if model.project else ())]
        self.hosts = hosts

    def find(self, host: ModuleModel, func: cst.BaseExpression) -> Helper | None:
        """The helper ``func`` names in ``host``: defined there or imported from one file."""
        if isinstance(func, cst.Name) and func.value in host.functions:
            return host, host.functions[func.value]
        module, name = _imported_from(host, func)
        if module is None or name is None:
            return None
        matches = [path for path in self.paths if _is_module(path, module, host.path)]
        if len(matches) != 1:
            return None
        home = self.hosts(matches[0])
        helper = home.functions.get(name) if home is not None else None
        return (home, helper) if home is not None and helper is not None else None


def _is_module(path: str, module: str, importer: str) -> bool:
    """``path`` is the file of ``module`` as ``importer`` names it (``.ops`` is relative)."""
    posix, parts = _absolute(path), [p for p in module.lstrip(".").split(".") if p]
    up = len(module) - len(module.lstrip("."))
    if up:  # relative: from the importing file's package
        parts = [*_absolute(importer).split("/")[:-up], *parts]
    for tail in ("/".join(parts) + ".py", "/".join(parts) + "/__init__.py"):
        if posix == tail or (not up and posix.endswith("/" + tail)):
            return True
    return False


def _absolute(path: str) -> str:
    """A display path (relative to the working directory, or absolute) made absolute, with
    ``/``: the files of one run are given either way."""
    return os.path.abspath(path).replace("\\", "/")


#: A predicate helper and the model of the file that defines it.
Helper = tuple[ModuleModel, cst.FunctionDef]


def _imported_from(host: ModuleModel, func: cst.BaseExpression) -> tuple[str | None, str | None]:
    """(module, name) ``func`` is imported as: ``from M import name`` then ``name(...)``,
    ``import M as K`` or ``from P import K`` then ``K.name(...)`` (``M`` is ``P.K``)."""
    text = dotted_name(func)
    if text is None or text.count(".") > 1:
        return None, None
    head, _, attr = text.rpartition(".")
    local = head or attr
    for small in iter_small_statements(host.module.body):
        if isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
            dots = "." * len(small.relative)
            module = dots + ((dotted_name(small.module) or "") if small.module else "")
            for item in small.names:
                if (item.evaluated_alias or item.evaluated_name) == local:
                    if not head:
                        return module, item.evaluated_name
                    joined = module + ("." if module.strip(".") else "") + item.evaluated_name
                    return joined, attr
        elif isinstance(small, cst.Import) and head:
            for item in small.names:
                if item.asname is not None and item.evaluated_alias == local:
                    return item.evaluated_name, attr
    return None, None


def predicate_tests(
    host: ModuleModel,
    function: cst.FunctionDef,
    test: cst.BaseExpression,
    files: HelperFiles | None = None,
) -> list[cst.BaseExpression]:
    """The comparisons that hold where ``test`` (an ``if`` test in ``function``, or what an
    early exit leaves true) is true, read through the predicate helpers its ``and`` terms
    call directly or through a flag ``function`` binds once (in ``host``, or imported from
    one of ``files``)."""
    found: list[cst.BaseExpression] = []
    for term in conjuncts(test):
        call: cst.BaseExpression | None = term
        if isinstance(term, cst.Name):
            call = function_facts(host, function)[1].get(term.value)
        if isinstance(call, cst.Call):
            found.extend(_returned_comparisons(host, call, files, 1))
    return found


def _returned_comparisons(
    host: ModuleModel, call: cst.Call, files: HelperFiles | None, depth: int
) -> list[cst.BaseExpression]:
    if files is not None:
        found = files.find(host, call.func)
    elif isinstance(call.func, cst.Name) and call.func.value in host.functions:
        found = host, host.functions[call.func.value]
    else:
        found = None
    if found is None or not isinstance(found[1].body, cst.IndentedBlock):
        return []
    home, helper = found
    body = [stmt for stmt in helper.body.body if not _docstring(stmt)]
    if len(body) != 1 or not isinstance(body[0], cst.SimpleStatementLine):
        return []
    returned = body[0].body[0]
    if not isinstance(returned, cst.Return) or returned.value is None:
        return []
    value = returned.value
    if isinstance(value, cst.Call) and dotted_name(value.func) == "bool" and len(value.args) == 1:
        value = value.args[0].value
    bound = bind_call(helper, call)
    bindings = function_facts(home, helper)[0]
    params = {param for param in bound if bindings.get(param) == 1}
    terms: list[cst.BaseExpression] = []
    for term in conjuncts(value):
        if isinstance(term, cst.Call) and depth < MAX_DEPTH:  # `fits(n) and ...`: one deeper
            terms += _returned_comparisons(home, term, None, depth + 1)
        elif isinstance(term, cst.Comparison):
            terms.append(term)
    return [substitute(term, bound) for term in terms if reads(term) <= params | CONSTANTS]


def _docstring(stmt: cst.BaseStatement) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, cst.SimpleString | cst.ConcatenatedString)
    )
