"""The pytest plugin: opt-in, cheap when off, and one test item per stress case when on."""

from __future__ import annotations

from importlib.metadata import entry_points

import pytest

from triton_lint.pytest_plugin import case_names

pytest_plugins = ["pytester"]

KERNELS = """
import torch
import triton
import triton.language as tl

from triton_lint import stress


@triton.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


@triton.jit
def copy_kernel_unmasked(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs), mask=offs < n)  # BUG


def _copy(kernel, x):
    out = torch.empty_like(x)
    kernel[(triton.cdiv(x.numel(), 16),)](x, out, x.numel(), BLOCK=16)
    return out


CASE = dict(
    reference=lambda x: x.clone(),
    inputs=[stress.tensor("N")],
    dims={"N": [5, 16]},
    patterns=("normal",),
    layouts=("contiguous",),
)


@stress.case(**CASE)
def copy_clean(x):
    return _copy(copy_kernel, x)


@stress.case(**CASE)
def copy_unmasked(x):
    return _copy(copy_kernel_unmasked, x)
"""

# An unrelated test that proves the plugin imports neither torch nor triton when off.
UNRELATED = """
import sys

def test_unrelated():
    assert "torch" not in sys.modules and "triton" not in sys.modules
"""


def _line(text: str) -> int:
    """1-based line of KERNELS (as written by makepyfile, which strips the leading newline)."""
    text = text.replace("[[]", "[")
    lines = KERNELS.strip("\n").splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


def test_entry_point_is_registered():
    eps = entry_points(group="pytest11")
    assert any(ep.value == "triton_lint.pytest_plugin" for ep in eps)


def test_case_names_parses_without_importing():
    assert case_names(KERNELS) == [
        ("copy_clean", KERNELS.splitlines().index("def copy_clean(x):") + 1),
        ("copy_unmasked", KERNELS.splitlines().index("def copy_unmasked(x):") + 1),
    ]
    assert case_names("def f(:\n") == []
    assert case_names("@other.case()\ndef f(): pass\n") == []


def test_off_by_default_and_cheap(pytester: pytest.Pytester):
    pytester.makepyfile(kernels=KERNELS, test_unrelated=UNRELATED)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert "copy_clean" not in result.stdout.str()
    # the plugin is loaded through its entry point: its option is there
    helped = pytester.runpytest_subprocess("--help")
    helped.stdout.fnmatch_lines(["*--triton-stress*"])


def test_each_case_is_a_test_and_failures_list_findings(pytester: pytest.Pytester):
    pytester.makepyfile(kernels=KERNELS)
    result = pytester.runpytest_subprocess("--triton-stress", "-v", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*kernels.py::copy_clean PASSED*",
            "*kernels.py::copy_unmasked FAILED*",
            "*stress case `copy_unmasked` found 1 problem(s):*",
            f"*kernels.py:{_line('# BUG')}: TL901 out-of-bounds-access: out-of-bounds load of "
            "`x_ptr`*",
            "*witness: {'dims': {'N': 5}*",
            f"*see *kernels.py:{_line('kernel[[]')}: kernel launched here*",
            f"*see *kernels.py:{_line('def copy_unmasked')}: stress case `copy_unmasked`*",
            "*1 of 2 combination(s) failed:*",
            "*[[]N=5; float32; contiguous; pattern normal[]] fail TL901*",
        ]
    )


def test_ini_option_and_selection(pytester: pytest.Pytester):
    pytester.makepyfile(kernels=KERNELS)
    pytester.makeini("[pytest]\ntriton_stress = true\n")
    result = pytester.runpytest_subprocess("-k", "clean", "-m", "triton_stress")
    result.assert_outcomes(passed=1, deselected=1)
    off = pytester.runpytest_subprocess("--no-triton-stress")
    off.assert_outcomes()
    assert "no tests ran" in off.stdout.str()
