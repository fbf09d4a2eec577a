"""The statements of a host function on the way to one of its calls: the assert, ``if`` and
helper-check readings of a launch (`triton_lint.model.callers`) each read them, so the function
is walked once (`tree.block_paths`, every call's path in one pass) and kept in the module's
memo."""

from __future__ import annotations

import libcst as cst

from triton_lint.model.kernel import ModuleModel
from triton_lint.model.tree import PathStep, block_paths


def path_to(host: ModuleModel, function: cst.FunctionDef, call: cst.Call) -> tuple[PathStep, ...]:
    """The statements on the way to ``call``: ``(stmt, False)`` for each run before it, ``(stmt,
    True)`` for each compound statement whose body holds it."""
    key = ("block paths", id(function))
    if key not in host.memo:  # the function is kept with its paths: its id stays its own
        host.memo[key] = (function, block_paths(function))
    path = host.memo[key][1].get(id(call))
    if path is None:  # not under ``function``: no statement of its body holds it
        block = function.body
        return tuple((s, False) for s in block.body) if isinstance(block, cst.IndentedBlock) else ()
    return path
