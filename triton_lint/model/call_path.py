"""The statements of a host function on the way to one of its calls: the assert, ``if`` and
helper-check readings of a launch (`triton_lint.model.callers`) each walk it, so it is walked
once per call and kept in the module's memo."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from triton_lint.model.kernel import ModuleModel
from triton_lint.model.tree import iter_nodes

#: (statement, whether its body holds the call: the walk goes on in that body)
Step = tuple[cst.BaseStatement, bool]


def path_to(host: ModuleModel, function: cst.FunctionDef, call: cst.Call) -> list[Step]:
    """The statements on the way to ``call``: ``(stmt, False)`` for each run before it, ``(stmt,
    True)`` for each compound statement whose body holds it."""
    key = ("path to", id(function), id(call))
    if key not in host.memo:  # the nodes are kept with the steps: their ids stay theirs
        host.memo[key] = (function, call, list(_walk(function, call)))
    return host.memo[key][2]


def _walk(function: cst.FunctionDef, call: cst.Call) -> Iterator[Step]:
    block: cst.BaseSuite | None = function.body
    while isinstance(block, cst.IndentedBlock):
        inner: cst.BaseSuite | None = None
        for stmt in block.body:
            if any(node is call for node in iter_nodes(stmt)):
                compound = isinstance(stmt, cst.If | cst.For | cst.While | cst.With | cst.Try)
                if compound and any(node is call for node in iter_nodes(stmt.body)):
                    yield stmt, True
                    inner = stmt.body
                break
            yield stmt, False
        block = inner
