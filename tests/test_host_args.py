"""Launch-site facts: which tensor stride each launch passes for a kernel parameter."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import libcst as cst

from triton_lint.engine import lint_text
from triton_lint.model.build import build_module_model
from triton_lint.model.host import host_definitions
from triton_lint.model.host_args import launch_strides
from triton_lint.rules import rules_by_code

SOURCE = """\
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, a, b, c, d, e, f, g, h, i, BLOCK: tl.constexpr):
    pass


def launch(x, y, flag):
    s0, s1, *rest = x.stride()
    alias = s1
    k[(1,)](x, x.stride(0), y.stride(dim=2), x.stride()[1], alias, s0,
            x.stride(-1), x.stride(1) if flag else 0, x.shape[0], rest, BLOCK=16)
    k[(2,)](y, y.stride(1), y.stride(2), BLOCK=16)
"""


def _strides(param: str):
    model = build_module_model("m.py", SOURCE, cst.parse_module(SOURCE))
    found = launch_strides(model.kernels[0], param)
    return None if found is None else [(s.tensor, s.axis) for s in found]


def test_strides_are_read_through_calls_subscripts_and_single_assignments():
    assert _strides("a") == [("x", 0), ("y", 1)]  # every launch that passes it
    assert _strides("b") == [("y", 2), ("y", 2)]
    assert _strides("c") == [("x", 1)]
    assert _strides("d") == [("x", 1)]  # alias -> s1 -> x.stride()[1]
    assert _strides("e") == [("x", 0)]
    assert _strides("f") == [("x", -1)]
    assert _strides("g") == [("x", 1)]  # the conditional `0` adds nothing


def test_anything_but_a_stride_gives_none():
    assert _strides("h") is None  # x.shape[0]
    assert _strides("BLOCK") is None
    assert _strides("x_ptr") is None
    # `*rest` has no known position: the whole `x.stride()` is not one stride
    model = build_module_model("m.py", SOURCE, cst.parse_module(SOURCE))
    assert launch_strides(model.kernels[0], "i") is None


ROWS = textwrap.dedent(
    """\
    import triton
    import triton.language as tl


    @triton.jit
    def rows(x_ptr, out_ptr, n_cols, so_row, so_col, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
        tl.store(out_ptr + row * so_row + cols * so_col, x, mask=cols < n_cols)


    def launch(x, out):
        rows[(x.shape[0],)](x, out, x.shape[1], out.stride(ROW), out.stride(1), BLOCK=128)
    """
)


def test_tl104_reports_the_outermost_product_and_names_the_launch():
    text = ROWS.replace("ROW", "0")
    [finding] = lint_text("k.py", text, [rules_by_code()["TL104"]]).findings
    assert finding.line == 10
    assert "(`out.stride(0)` at the launch on line 14)" in finding.message
    assert "(1 more product of this index: related locations)" in finding.message
    assert [r.span.line for r in finding.related] == [9]


def test_tl104_skips_products_with_an_inner_stride_only():
    text = ROWS.replace("ROW", "1").replace("x_ptr + row * n_cols", "x_ptr + row")
    assert lint_text("k.py", text, [rules_by_code()["TL104"]]).findings == []
    # without the launch the same kernel is reported: the launch is the evidence
    kernel_only = text.split("\n\ndef launch")[0] + "\n"
    assert len(lint_text("k.py", kernel_only, [rules_by_code()["TL104"]]).findings) == 1


LAUNCHES = textwrap.dedent(
    """\
    import triton
    import triton.language as tl
    from torch.library import wrap_triton


    @triton.jit
    def rows(x_ptr, out_ptr, n_cols, so_row, so_col, M: tl.int64, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * M + cols, mask=cols < n_cols, other=0.0)
        tl.store(out_ptr + row * so_row + cols * so_col, x, mask=cols < n_cols)


    def launch(x, out, extra):
        strides = out.stride()
        wrap_triton(rows)[(x.shape[0],)](x, out, x.shape[1], strides[1], out.stride(-1),
                                         x.shape[1], BLOCK=128)
        rows[(1,)](x, out, *extra, BLOCK=128)
    """
)


def test_launch_facts_through_wrappers_subscripts_and_stars():
    model = build_module_model("m.py", LAUNCHES, cst.parse_module(LAUNCHES))
    kernel = model.kernels[0]
    assert len(kernel.launches) == 2  # `wrap_triton(rows)[grid](...)` is a launch too
    [row_stride] = launch_strides(kernel, "so_row") or []
    assert (row_stride.tensor, row_stride.axis, row_stride.inner) == ("out", 1, True)
    [col_stride] = launch_strides(kernel, "so_col") or []
    assert (col_stride.axis, col_stride.inner) == (-1, True)
    # positions after `*extra` are unknown: the second launch binds only x_ptr and out_ptr
    assert set(kernel.launches[1].bound_arguments(kernel)) == {"x_ptr", "out_ptr", "BLOCK"}


def test_tl104_int64_annotation_and_inner_strides_stay_quiet():
    # `M: tl.int64` is passed as an i64; both stride products are inner strides
    assert lint_text("k.py", LAUNCHES, [rules_by_code()["TL104"]]).findings == []
    unannotated = LAUNCHES.replace("M: tl.int64", "M")
    [finding] = lint_text("k.py", unannotated, [rules_by_code()["TL104"]]).findings
    assert finding.message.startswith("`row * M`")


BRANCHES = textwrap.dedent(
    """\
    import triton
    import triton.language as tl


    @triton.jit
    def shift(x_ptr, s_ptr, L, C, s_b, s_l, s_c, BL: tl.constexpr, BC: tl.constexpr):
        pid_b = tl.program_id(0).to(tl.int64)
        rows = tl.program_id(1) * BL + tl.arange(0, BL)
        cols = tl.arange(0, BC)
        mask = (rows[:, None] < L) & (cols[None, :] < C)
        s = tl.load(s_ptr + pid_b * s_b + rows[:, None] * s_l + cols[None, :] * s_c, mask=mask)
        tl.store(x_ptr + pid_b * L * C + rows[:, None] * C + cols[None, :], s, mask=mask)


    def launch(x, shift_t, broadcast):
        B, L, C = x.shape
        if broadcast:
            sb = sl = sc = 0
        else:
            sb, sl, sc = shift_t.stride()
        shift[(B, triton.cdiv(L, 64))](x, shift_t, L, C, sb, sl, sc, BL=64, BC=128)
    """
)


def test_strides_assigned_in_both_arms_of_a_host_if():
    """Round-7 false positive (SGLang scale_shift_triton.py): the strides come from
    `shift_t.stride()` in one arm and `0` in the other; the 0 adds nothing."""
    model = build_module_model("m.py", BRANCHES, cst.parse_module(BRANCHES))
    [row] = launch_strides(model.kernels[0], "s_l") or []
    assert (row.tensor, row.axis) == ("shift_t", 1)
    codes = [
        (f.line, f.message.split("`")[1])
        for f in lint_text("k.py", BRANCHES, [rules_by_code()["TL104"]]).findings
    ]
    assert codes == [(12, "rows[:, None] * C")]  # the inner-stride product is not reported


def test_tl104_ranks_whole_tensor_products_without_evidence_info_and_says_why():
    path = Path(__file__).resolve().parent.parent / "fixtures" / "TL104" / "bad_risk_tiers.py"
    found = lint_text(str(path), path.read_text(), [rules_by_code()["TL104"]]).findings
    why = [(f.line, f.severity.value, re.findall(r"\(info: ([^)]*)\)", f.message)) for f in found]
    whole = [
        "it spans a whole tensor, but nothing in this file shows workloads that reach 2**31 "
        "elements: no aten operator, general GEMM, full hidden or vocabulary row per token, or "
        "widened twin"
    ]
    assert why == [
        (16, "info", whole),  # an axis-0 row times x.stride(0), without evidence
        (24, "info", whole),  # pid * N * K, without evidence
        (31, "info", ["a grid axis 1 index, a head or batch of at most 65535"]),
        (
            39,
            "info",
            ["a loaded index: block ids of a large cache overflow, rows of a small table never do"],
        ),
        (46, "info", ["`block_table` looks like a lookup table"]),
        (53, "info", ["no launch in this file shows that the size is a row stride"]),
    ]


def test_host_unpacking_binds_around_a_starred_value():
    """``B, H, T, K, V, M = *q.shape, v.shape[-1], s.shape[-1]`` binds the names after the
    star from the end and those it covers to the starred value's elements (fla's ABC)."""
    source = "def f(q, v, s):\n    B, H, T, K, V, M = *q.shape, v.shape[-1], s.shape[-1]\n"
    module = cst.parse_module(source)
    function = module.body[0]
    bindings = dict.fromkeys("BHTKVM", 1)
    bound = {
        name: module.code_for_node(value) for name, value in host_definitions(function, bindings)
    }
    assert bound == {
        "B": "q.shape[0]",
        "H": "q.shape[1]",
        "T": "q.shape[2]",
        "K": "q.shape[3]",
        "V": "v.shape[-1]",
        "M": "s.shape[-1]",
    }
