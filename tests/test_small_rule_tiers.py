"""Severity tiers of the rules with few findings: a compile error in a jit function nothing
in the project runs (TL204, TL210), half-precision sums that stop at one tile or copy a
half-precision reference on purpose (TL302), are information; an exponential ratio that is a
softcap `tanh(x / c) * c` is a warning, not an error (TL301)."""

from __future__ import annotations

from pathlib import Path

from triton_lint.engine import lint_text
from triton_lint.rules import rules_by_code
from triton_lint.run import RunOptions, lint_paths
from triton_lint.selection import Layer

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
UNUSED = FIXTURES / "project" / "tl204_unused_bad"


def _tiers(paths: list[Path]) -> set[tuple[str, int, str, str, bool]]:
    options = RunOptions(cli_layer=Layer(select=["TL204", "TL210"]), jobs=1)
    result = lint_paths(paths, options)
    assert not result.crashes
    return {
        (Path(f.path).name, f.line, f.code, f.severity.value, "nothing in the project" in f.message)
        for f in result.findings
    }


def test_compile_errors_in_jit_functions_nothing_runs_are_information():
    """The launched kernel's `continue` stays an error; the left-over kernel and the helper
    that only a backend's own copy shares a name with are information, over the package and
    for the file linted alone in it."""
    expected = {
        ("kernels.py", 14, "TL204", "error", False),
        ("kernels.py", 23, "TL204", "info", True),
        ("kernels.py", 29, "TL210", "info", True),
    }
    assert _tiers([UNUSED]) == expected
    assert _tiers([UNUSED / "pkg" / "kernels.py"]) == expected


def test_a_file_linted_outside_a_project_keeps_its_compile_errors():
    path = UNUSED / "pkg" / "kernels.py"
    rules = [rules_by_code()["TL204"], rules_by_code()["TL210"]]
    result = lint_text(str(path), path.read_text(), rules, "3.9")
    assert {(f.line, f.severity.value) for f in result.findings} == {
        (14, "error"),
        (23, "error"),
        (29, "error"),
    }


def _tl302(name: str) -> set[tuple[int, str]]:
    path = FIXTURES / "TL302" / name
    result = lint_text(str(path), path.read_text(), [rules_by_code()["TL302"]], "3.9")
    assert not result.crashes
    return {(f.line, f.severity.value) for f in result.findings}


def test_tl302_a_single_half_precision_product_is_information():
    """A dot whose fp16 sum stops at one product is info; one chained into another dot as its
    accumulator, and that dot, are warnings."""
    assert _tl302("bad_half_dot_tiers.py") == {(20, "info"), (23, "warning"), (24, "warning")}


def test_tl302_a_kernel_rounding_through_bf16_on_purpose_is_information():
    assert _tl302("bad_emulated_half_reference.py") == {(15, "info"), (26, "warning")}


OTHER_HALF_ROUND_TRIP = """\
import triton
import triton.language as tl


@triton.jit
def rmsnorm(X, Y, dim: tl.constexpr, eps, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs, mask=offs < dim, other=0.0)
    ms = tl.sum((x * x).to(tl.bfloat16), axis=0) / dim
    rstd = tl.rsqrt((ms + eps).to(tl.float16).to(tl.float32))
    tl.store(Y + offs, x * rstd, mask=offs < dim)
"""


def test_tl302_a_round_trip_through_another_half_type_keeps_the_warning():
    """The round trip must be through the sum's own half type: fp16 says nothing of a bf16 sum."""
    rule = rules_by_code()["TL302"]
    result = lint_text("k.py", OTHER_HALF_ROUND_TRIP, [rule], "3.9")
    assert {(f.line, f.severity.value) for f in result.findings} == {(9, "warning")}
    emulated = OTHER_HALF_ROUND_TRIP.replace("tl.float16).to", "tl.bfloat16).to")
    result = lint_text("k.py", emulated, [rule], "3.9")
    assert {(f.line, f.severity.value) for f in result.findings} == {(9, "info")}


def test_tl302_loop_accumulators_stay_warnings():
    assert _tl302("bad_fp16_accumulators.py") == {(12, "warning"), (16, "warning"), (25, "warning")}


def _tl301(name: str) -> list:
    text = (FIXTURES / "TL301" / name).read_text(encoding="utf-8")
    result = lint_text(name, text, [rules_by_code()["TL301"]], "3.9")
    assert not result.crashes
    return result.findings


def test_tl301_a_softcap_ratio_is_a_warning_with_the_inputs_it_needs_to_overflow():
    """The cap divides the exponent's input and scales the ratio back (in the numerator, as
    a trailing factor, or through a name): overflow needs inputs 44, 128 or 88 times it."""
    found = _tl301("bad_softcap_ratio.py")
    assert [(f.line, f.severity.value) for f in found] == [
        (20, "warning"),
        (28, "warning"),
        (37, "warning"),
    ]
    calls = ("`exp(2 * scaled)`", "`exp2(Sdiv)`", "`exp(s / cap)`")
    for finding, call, multiple in zip(found, calls, (44, 128, 88), strict=True):
        assert finding.message.startswith(f"{call} is on both sides of a division")
        assert "keep the exponential below the line only" in finding.message
        assert "(a softcap `tanh(x / c) * c`: the cap divides" in finding.message
        assert f"inputs above {multiple} times the cap (fp32)" in finding.message


def test_tl301_tanh_and_sigmoid_ratios_that_are_no_softcap_stay_errors():
    """Unscaled activations, an input divided by a temperature it is not scaled back by, and
    a ratio scaled by another value than the divisor."""
    found = _tl301("bad_exp_ratio.py")
    assert [(f.line, f.severity.value) for f in found] == [
        (14, "error"),
        (22, "error"),
        (30, "error"),
        (38, "error"),
    ]
    assert not any("softcap" in f.message for f in found)
