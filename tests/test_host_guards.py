"""What holds at a launch or a call through host control flow: the early exits before it
(`exit_tests`) and the predicate helpers its ``if`` tests read (`predicate_tests`)."""

from __future__ import annotations

import libcst as cst
import pytest

from triton_lint.model.build import build_host_model
from triton_lint.model.callers import exit_tests, local_tests
from triton_lint.model.names import dotted_name
from triton_lint.model.predicates import HelperFiles
from triton_lint.model.project import ProjectContext
from triton_lint.model.tree import iter_nodes
from triton_lint.rules._overflow_evidence import numel_below


def _tests(source: str) -> set[str]:
    """The tests `exit_tests` gives at the call of ``launch`` in ``f``."""
    module = cst.parse_module(source)
    host = build_host_model("ops.py", source, module, "3.4")
    function = host.functions["f"]
    (call,) = [
        node
        for node in iter_nodes(function)
        if isinstance(node, cst.Call) and dotted_name(node.func) == "launch"
    ]
    return {module.code_for_node(test) for test in exit_tests(host, function, call)}


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("    if m >= 4096:\n        big(m)\n        return\n    launch(m)\n", {"m < 4096"}),
        ("    if m > 64:\n        raise ValueError(m)\n    launch(m)\n", {"m <= 64"}),
        ("    if not ok(m):\n        return None\n    launch(m)\n", {"ok(m)"}),
        # the body may go on, the exit is in an `else`, or it comes after the launch
        ("    if m >= 4096:\n        big(m)\n    launch(m)\n", set()),
        ("    if m >= 4096:\n        big(m)\n    else:\n        return\n    launch(m)\n", set()),
        ("    launch(m)\n    if m >= 4096:\n        return\n", set()),
    ],
)
def test_an_early_exit_leaves_its_negated_test_holding(body, expected):
    assert _tests(f"def f(m):\n{body}") == expected


HELPERS = '''
def small(n, *, enabled):
    """Tuned shapes only."""
    return bool(enabled and 0 < n <= 32 and other(n))


def busy(n):
    n = n * 2
    return n <= 32


def long_helper(n):
    limit = 32
    return n <= limit
'''


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("    if small(m, enabled=True):\n        launch(m)\n", {"0 < m <= 32"}),
        (
            "    flag = small(m, enabled=e)\n    if flag and e:\n        launch(m)\n",
            {"0 < m <= 32"},
        ),
        (
            "    if not small(m, enabled=e):\n        return\n    launch(m)\n",
            {"small(m, enabled=e)", "0 < m <= 32"},
        ),
        # negated, rebinding its parameter, more than a return, a flag bound twice
        ("    if not small(m, enabled=e):\n        launch(m)\n", set()),
        ("    if busy(m):\n        launch(m)\n", set()),
        ("    if long_helper(m):\n        launch(m)\n", set()),
        ("    f = small(m, enabled=e)\n    f = f or e\n    if f:\n        launch(m)\n", set()),
    ],
)
def test_a_predicate_helper_holds_where_its_call_does(body, expected):
    assert _tests(f"{HELPERS}\ndef f(m, e=True):\n{body}") == expected


KERNEL_FILE = """
def fits_one_wave(rows):
    return 0 < rows <= 132


def supported(x, rows):
    return x.is_contiguous() and fits_one_wave(rows)


def deeper(x, rows):
    return supported(x, rows) and rows % 8 == 0
"""


@pytest.mark.parametrize(
    ("imports", "test", "expected"),
    [
        ("from pkg.kernels import supported", "supported(x, m)", {"0 < m <= 132"}),
        ("from .kernels import supported as ok", "ok(x, m)", {"0 < m <= 132"}),
        ("from . import kernels as K", "K.supported(x, m)", {"0 < m <= 132"}),
        ("import pkg.kernels as K", "K.fits_one_wave(m)", {"0 < m <= 132"}),
        # two helpers deep at most: `deeper` keeps its own term, not what `fits_one_wave` says
        ("from pkg.kernels import deeper", "deeper(x, m)", {"m % 8 == 0"}),
        # a module the project index did not give, a name the file does not define
        ("from other.kernels import supported", "supported(x, m)", set()),
        ("from pkg.kernels import supported", "missing(x, m)", set()),
    ],
)
def test_a_predicate_helper_imported_from_a_project_file_holds(imports, test, expected):
    kernels = build_host_model("pkg/kernels.py", KERNEL_FILE, cst.parse_module(KERNEL_FILE), "3.4")
    source = f"{imports}\n\n\ndef f(x, m):\n    if {test}:\n        launch(m)\n"
    module = cst.parse_module(source)
    host = build_host_model("pkg/model.py", source, module, "3.4")
    kernels.project = ProjectContext(sources={"pkg/model.py": source.encode()})
    files = HelperFiles(kernels, {"pkg/kernels.py": kernels, "pkg/model.py": host}.get)
    function = host.functions["f"]
    (call,) = [
        n
        for n in iter_nodes(function)
        if isinstance(n, cst.Call) and dotted_name(n.func) == "launch"
    ]
    holding = {module.code_for_node(t) for t in local_tests(host, function, call, files)[0]}
    assert holding == {test} | expected


@pytest.mark.parametrize(
    ("test", "fits"),
    [
        ("w.numel() < 2**31", True),
        ("w.numel() <= 2**31 - 1", True),
        ("2147483648 > w.numel()", True),
        ("w.numel() < 2**32", False),  # more than int32 offsets reach
        ("w.numel() <= 2**31", True),  # offsets stay below numel
        ("w.numel() <= 2**31 + 1", False),
        ("x.numel() < 2**31", False),  # another tensor
        ("w.numel() > 2**20", False),
        ("w.numel(0) < 2**31", False),
    ],
)
def test_a_host_test_bounds_a_tensors_extent_by_int32(test, fits):
    assert numel_below(cst.parse_expression(test), "w") is fits
