"""Pieces of the cold run made cheaper: each must give what the slower code gave."""

from __future__ import annotations

import libcst as cst
import pytest

from triton_lint.model.parsing import parse_module
from triton_lint.model.tree import block_paths, iter_nodes

SOURCE = """\
@register(name())
def launch(x, n=default()):
    check(x)
    if n > 4:
        for i in range(n):
            first(i)
        else:
            after_loop()
    elif n:
        second()
    else:
        third()
    if n: short(n)
    def nested():
        inner()
    try:
        guarded()
    except ValueError:
        handled()
    return last(x)
"""


def _paths() -> dict[str, list[tuple[str, bool]]]:
    """Each call's way, by the callee's name, as (first line of the statement, holds it)."""
    module = cst.parse_module(SOURCE)
    function = module.body[0]
    assert isinstance(function, cst.FunctionDef)
    paths = block_paths(function)
    found = {}
    for node in iter_nodes(function):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and id(node) in paths:
            steps = paths[id(node)]
            found[node.func.value] = [
                (module.code_for_node(stmt).strip().splitlines()[0], holds) for stmt, holds in steps
            ]
    return found


def test_block_paths_give_the_statements_on_the_way_to_each_call():
    paths = _paths()
    before_if = [("check(x)", False)]
    outer_if = ("if n > 4:", True)
    assert paths["check"] == []
    assert paths["first"] == [*before_if, outer_if, ("for i in range(n):", True)]
    # the `else` of the loop and the `elif`/`else` arms: the way ends before the statement
    assert paths["after_loop"] == [*before_if, outer_if]
    assert paths["second"] == paths["third"] == before_if
    assert paths["short"] == [*before_if, ("if n > 4:", False), ("if n: short(n)", True)]
    assert paths["inner"] == [*before_if, ("if n > 4:", False), ("if n: short(n)", False)]
    ran = [*before_if, ("if n > 4:", False), ("if n: short(n)", False), ("def nested():", False)]
    assert paths["guarded"] == [*ran, ("try:", True)]
    assert paths["handled"] == ran
    assert paths["last"] == [*ran, ("try:", False)]
    # the decorator's and the defaults' calls are not under the body
    assert "register" not in paths and "default" not in paths


DEEP = """\
def launch(x):
    a = prep(x)
    while a:
        b = step(a)
        with ctx(b):
            if b:
                deep(a, b)
            c = after(b)
    return end(a)
"""


def test_block_paths_follow_nested_blocks_and_share_one_way_per_statement():
    function = cst.parse_module(DEEP).body[0]
    assert isinstance(function, cst.FunctionDef)
    paths = block_paths(function)
    calls = {
        node.func.value: node
        for node in iter_nodes(function)
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name)
    }
    body = function.body.body
    loop = body[1]
    with_stmt = loop.body.body[1]
    assert paths[id(calls["prep"])] == ()
    assert paths[id(calls["step"])] == ((body[0], False), (loop, True))
    # the `with` items run before its body: their way ends before the statement
    assert paths[id(calls["ctx"])] == (*paths[id(calls["step"])], (loop.body.body[0], False))
    in_with = (*paths[id(calls["ctx"])], (with_stmt, True))
    assert paths[id(calls["deep"])] == (*in_with, (with_stmt.body.body[0], True))
    assert paths[id(calls["after"])] == (*in_with, (with_stmt.body.body[0], False))
    assert paths[id(calls["end"])] == ((body[0], False), (loop, False))
    assert len(paths) == len(calls) == 6
    assert paths[id(calls["prep"])] is paths.get(id(calls["prep"]))  # built once, then kept


def test_parse_module_gives_libcst_s_tree_and_leaves_validation_on():
    module = parse_module(SOURCE)
    assert module.code == SOURCE
    assert module.deep_equals(cst.parse_module(SOURCE))
    with pytest.raises(cst.CSTValidationError):
        cst.Name("not a name")
