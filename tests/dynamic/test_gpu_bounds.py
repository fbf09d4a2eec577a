"""Compiled-in bounds checks on a GPU: a read whose values are dropped, a read that lands in
another tensor, a read past every allocation, and a fault no check can see (skipped without a
GPU)."""

from __future__ import annotations

import os

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

if os.environ.get("TRITON_INTERPRET") == "1" or not torch.cuda.is_available():
    pytest.skip("needs a CUDA GPU (and no TRITON_INTERPRET)", allow_module_level=True)

from triton_lint.dynamic.runner import ChildOptions, run_file_report  # noqa: E402

from .conftest import FIXTURES, line_of  # noqa: E402

CASES = """
import torch
import triton
import triton.language as tl

from triton_lint import stress


@triton.jit
def copy_shifted(x_ptr, y_ptr, out_ptr, n, shift, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs + shift, mask=mask)  # BUG: `shift` elements further
    tl.store(out_ptr + offs, x, mask=mask)


@triton.jit
def wild_asm_store(x_ptr, out_ptr):
    # An address the checks cannot see: the store is inline PTX.
    p = (x_ptr + (1 << 40)).to(tl.int64, bitcast=True)
    tl.inline_asm_elementwise(
        "st.global.f32 [$1], $2; mov.b32 $0, 0;", "=r,l,f", [p, 1.0], dtype=tl.int32,
        is_pure=False, pack=1,
    )


def _copy(x, y, shift):
    out = torch.empty_like(x)
    n = x.numel()
    copy_shifted[(triton.cdiv(n, 64),)](x, y, out, n, shift, BLOCK=64)
    return out


CASE = dict(
    reference=lambda x, y: x.clone(),
    inputs=[stress.tensor("N"), stress.tensor("N")],
    dims={"N": [100]},
    patterns=("normal",),
    layouts=("contiguous",),
)


@stress.case(**CASE)
def reads_into_y(x, y):
    return _copy(x, y, (y.data_ptr() - x.data_ptr()) // x.element_size())


@stress.case(**CASE)
def reads_past_the_end(x, y):
    return _copy(x, y, 70)


@stress.case(**CASE)
def faults_the_device(x, y):
    out = torch.empty_like(x)
    wild_asm_store[(1,)](x, out)
    return out


@stress.case(**CASE)
def survives(x, y):
    return _copy(x, y, 0)


@triton.jit
def copy_host_desc(x_desc, out_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, x_desc.load([tl.program_id(0) * BLOCK]))  # HOST DESC


@stress.case(**CASE)
def host_descriptor_too_long(x, y):
    from triton.tools.tensor_descriptor import TensorDescriptor

    out = torch.empty(128, device=x.device)
    desc = TensorDescriptor(x, [128], [1], [64])  # x holds 100 elements
    copy_host_desc[(2,)](desc, out, BLOCK=64)
    return out[:100].clone()
"""


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    path = tmp_path_factory.mktemp("bounds") / "bounds_cases.py"
    path.write_text(CASES)
    findings, cells = run_file_report(path, options=ChildOptions("cuda", timeout=120))
    return path, findings, cells


def test_a_read_inside_another_tensor_names_both(report) -> None:
    path, findings, _cells = report
    line = line_of(path, "# BUG")
    (f,) = [f for f in findings if f.properties["case"] == "reads_into_y" and f.code == "TL901"]
    assert (f.line, f.span.column) == (line, line_of_col(path, line, "tl.load"))
    assert f.properties["arg"] == "x_ptr" and f.properties["op"] == "load"
    assert f.properties["lands"] == "inside `y_ptr`"
    assert f.properties["witness"]["offsets"][0] >= 100  # past x's 100 elements


def test_a_read_past_the_end_is_outside_every_allocation(report) -> None:
    path, findings, _cells = report
    (f,) = [
        f for f in findings if f.properties["case"] == "reads_past_the_end" and f.code == "TL901"
    ]
    assert f.line == line_of(path, "# BUG")
    assert f.properties["lands"] == "outside every allocation"
    # program 0's lanes 30..63 read elements 100..133, program 1's lanes 0..35 134..169
    assert f.properties["pid"] in ([0, 0, 0], [1, 0, 0])
    assert all(o >= 100 for o in f.properties["offsets"])
    assert "program (" in f.message and "lane (" in f.message


def test_a_fault_the_checks_cannot_see_ends_the_child_and_the_next_case_runs(report) -> None:
    _path, findings, cells = report
    (fault,) = [f for f in findings if f.properties["case"] == "faults_the_device"]
    assert fault.code == "TL908" and "illegal" in fault.message
    status = {c.case: c.status for c in cells}
    assert status["survives"] == "pass" and status["faults_the_device"] == "error"


def test_the_unmasked_load_whose_lanes_are_dropped_is_caught_at_its_line() -> None:
    p = FIXTURES / "vector_add.py"
    findings, _ = run_file_report(p, only=["add_bad_load"], options=ChildOptions("cuda"))
    assert {(f.code, f.line) for f in findings} == {
        ("TL901", line_of(p, "tl.load(x_ptr + offs)  # BUG"))
    }
    (f,) = findings
    assert f.properties["arg"] == "x_ptr" and f.properties["lands"] == "outside every allocation"


def test_a_host_descriptor_larger_than_its_tensor_is_found_before_the_launch(report) -> None:
    path, findings, _cells = report
    case = "host_descriptor_too_long"
    tl901 = [f for f in findings if f.properties["case"] == case and f.code == "TL901"]
    assert [(f.line, f.properties["arg"]) for f in tl901] == [
        (line_of(path, "# HOST DESC"), "x_desc")
    ]
    assert "reaches element 127; the tensor holds 100" in tl901[0].message


def test_a_descriptor_declared_larger_than_its_tensor_is_caught_at_its_load() -> None:
    p = FIXTURES / "descriptors.py"
    findings, _ = run_file_report(p, options=ChildOptions("cuda"))
    load = line_of(p, "x = x_desc.load([off])", after="def double_desc_padded")
    assert {(f.properties["case"], f.code, f.line) for f in findings} == {
        ("desc_padded_shape", "TL901", load)
    }
    (f,) = findings
    assert f.span.column == line_of_col(p, load, "x_desc.load")
    assert f.properties["arg"] == "x_ptr" and f.properties["op"] == "load"
    assert all(o >= 40 for o in f.properties["offsets"])  # N=40: the padded block's tail


def line_of_col(path, line: int, text: str) -> int:
    """1-based column of `text` on `line`."""
    return path.read_text().splitlines()[line - 1].index(text) + 1
