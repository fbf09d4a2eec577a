"""Arms no compiled kernel holds: the index counts a kernel's launches only when every other
mention of it is an import or a launch, and the model reads a constexpr's value only when
every launch writes it (or leaves it to a default nothing else can set)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst
import pytest

from tests.project_files import project_index
from triton_lint.engine import lint_text
from triton_lint.model.compiled_arms import CompiledArms, truth
from triton_lint.model.evaluate import UNKNOWN
from triton_lint.rules import all_rules

KERNELS = textwrap.dedent(
    """
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def kern(x_ptr, g_ptr, n, MODE: tl.constexpr, BLOCK: tl.constexpr, FAST: tl.constexpr = 0):
        offs = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        if MODE == 2 and not FAST:
            x = x * tl.load(g_ptr + offs)
        tl.store(x_ptr + offs, x, mask=offs < n)


    def run(x, g):
        kern[(1,)](x, g, x.numel(), 1, BLOCK=64)
    """
)
LAUNCHER = (
    "from pkg.kernels import kern\n\n\ndef op(x, g):\n    kern[(1,)](x, g, 8, MODE=1, BLOCK=8)\n"
)


def _lint(tmp_path: Path, files: dict[str, str], kernels: str = KERNELS):
    files = {"pkg/__init__.py": "", "pkg/kernels.py": kernels, **files}
    index = project_index(tmp_path, files)
    context = index.context_for("pkg/kernels.py")
    result = lint_text("pkg/kernels.py", kernels, list(all_rules()), "3.9", context)
    assert not result.crashes
    return context, result


def test_launches_in_other_files_are_counted_when_they_are_all_the_mentions(tmp_path):
    context, result = _lint(tmp_path, {"pkg/ops.py": LAUNCHER, "pkg/more.py": LAUNCHER})
    assert context.launch_counts == {"kern": 2}
    (kernel,) = result.model.kernels
    assert kernel.facts(CompiledArms).value("MODE") == 1
    assert kernel.facts(CompiledArms).value("FAST") == 0  # the default, never passed
    assert [(f.line, f.code) for f in result.findings] == []


@pytest.mark.parametrize(
    "other",
    [
        "from pkg.kernels import kern\n\nTABLE = {'k': kern}\n",  # launched through a table
        "from pkg.kernels import kern\n\n__all__ = ['kern']\n",  # exported by name
        "import pkg.kernels as K\n\n\ndef op(x):\n    K.kern(x)\n",  # not a launch
    ],
)
def test_another_mention_leaves_the_launches_unknown_and_the_finding_kept(tmp_path, other):
    context, result = _lint(tmp_path, {"pkg/ops.py": LAUNCHER, "pkg/table.py": other})
    assert "kern" not in context.launch_counts
    (kernel,) = result.model.kernels
    assert kernel.facts(CompiledArms).value("MODE") is UNKNOWN
    assert [(f.line, f.code) for f in result.findings] == [(12, "TL101")]


def test_a_file_with_its_own_kernel_of_the_name_is_no_mention(tmp_path):
    own = KERNELS.replace("def run", "def run_own")
    context, result = _lint(tmp_path, {"vendor/kernels.py": own})
    assert context.launch_counts == {"kern": 0}
    assert [(f.line, f.code) for f in result.findings] == []


@pytest.mark.parametrize(
    ("launch", "value"),
    [
        ("kern[(1,)](x, g, 8, 1, 64, 1)", 1),  # positional
        ("kern[(1,)](x, g, 8, 1, BLOCK=64)", 0),  # left to its default
        ("kern[(1,)](x, g, 8, 1, BLOCK=64, FAST=fast)", UNKNOWN),  # a runtime value
        ("kern[(1,)](*args, FAST=1)", 1),  # written by keyword
        ("kern[(1,)](x, g, *rest)", UNKNOWN),  # `*args` may fill it
        ("kern[(1,)](x, g, 8, 1, BLOCK=64, **opts)", UNKNOWN),  # `**kwargs` may set it
    ],
)
def test_the_value_a_launch_gives(tmp_path, launch, value):
    kernels = KERNELS.replace("kern[(1,)](x, g, x.numel(), 1, BLOCK=64)", launch)
    _, result = _lint(tmp_path, {}, kernels)
    (kernel,) = result.model.kernels
    assert kernel.facts(CompiledArms).value("FAST") == value or (
        value is UNKNOWN and kernel.facts(CompiledArms).value("FAST") is UNKNOWN
    )


def test_a_heuristic_that_computes_the_flag_keeps_every_arm(tmp_path):
    tuned = KERNELS.replace(
        "@triton.jit", '@triton.heuristics({"MODE": lambda args: args["n"] % 2})\n@triton.jit'
    )
    _, result = _lint(tmp_path, {}, tuned)
    (kernel,) = result.model.kernels
    assert kernel.facts(CompiledArms).value("MODE") is UNKNOWN
    assert [(f.line, f.code) for f in result.findings] == [(13, "TL101")]


def test_a_kernel_linted_without_the_project_keeps_every_arm():
    result = lint_text("k.py", KERNELS, list(all_rules()), "3.9")
    (kernel,) = result.model.kernels
    assert kernel.facts(CompiledArms).value("MODE") is UNKNOWN
    assert [(f.line, f.code) for f in result.findings] == [(12, "TL101")]


@pytest.mark.parametrize(
    ("test", "value"),
    [
        ("A == 1", True),
        ("not A", False),
        ("A == 1 and B", False),
        ("B and C", False),
        ("A or C", True),
        ("C or B", UNKNOWN),
        ("0 < A <= 2", True),
        ("B is None", False),
    ],
)
def test_truth_of_an_if_test(test, value):
    result = truth(cst.parse_expression(test), {"A": 1, "B": 0})
    assert result is value or (result == value and value is not UNKNOWN)


@pytest.mark.parametrize(
    ("configs", "value"),
    [
        ('[triton.Config({"FAST": 1}), triton.Config({"FAST": 1})]', 1),
        ('[triton.Config({"FAST": 1}), triton.Config({"FAST": 0})]', UNKNOWN),
        ('[triton.Config({"FAST": 1}), triton.Config({}, num_warps=8)]', UNKNOWN),  # default 0
        ("get_configs()", UNKNOWN),  # configs the linter cannot read
    ],
)
def test_autotune_configs_that_set_the_flag(tmp_path, configs, value):
    tuned = KERNELS.replace(
        "@triton.jit", f'@triton.autotune(configs={configs}, key=["n"])\n@triton.jit'
    )
    _, result = _lint(tmp_path, {}, tuned)
    (kernel,) = result.model.kernels
    found = kernel.facts(CompiledArms).value("FAST")
    assert found is value if value is UNKNOWN else found == value
