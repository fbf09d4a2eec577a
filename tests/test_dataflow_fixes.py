"""The fixes TL103 and TL104 attach apply cleanly and remove their finding."""

from __future__ import annotations

import libcst as cst

from triton_lint.engine import lint_text
from triton_lint.finding import Applicability
from triton_lint.rules import rules_by_code


def _apply(text: str, edits) -> str:
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(row: int, column: int) -> int:
        return starts[row - 1] + column - 1

    out = text
    for edit in sorted(edits, key=lambda e: (e.span.line, e.span.column), reverse=True):
        begin = offset(edit.span.line, edit.span.column)
        end = offset(edit.span.end_line, edit.span.end_column)
        out = out[:begin] + edit.content + out[end:]
    return out


def _fix_once(source: str, code: str) -> tuple[str, Applicability]:
    rule = rules_by_code()[code]
    findings = lint_text("k.py", source, [rule]).findings
    fixable = [f for f in findings if f.fix is not None]
    assert fixable, findings
    fix = fixable[0].fix
    return _apply(source, fix.edits), fix.applicability


SOFTMAX = """\
import triton
import triton.language as tl


@triton.jit
def lse(X, Out, N, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    x = tl.load(X + cols, mask=cols < N)
    m = tl.max(x, axis=0)
    tl.store(Out, m + tl.log(tl.sum(tl.exp(x - m), axis=0)))
"""


def test_tl103_fix_adds_the_one_neutral_fill():
    fixed, applicability = _fix_once(SOFTMAX, "TL103")
    assert applicability is Applicability.SAFE
    assert 'other=-float("inf")' in fixed
    cst.parse_module(fixed)
    assert not lint_text("k.py", fixed, [rules_by_code()["TL103"]]).findings


ROWS = """\
import triton
import triton.language as tl


@triton.jit
def rows(X, Y, stride, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(X + row * stride + cols, mask=cols < N, other=0.0)
    tl.store(Y + row * stride + cols, x, mask=cols < N)
"""


def test_tl104_fix_widens_the_program_id_at_its_source():
    fixed, applicability = _fix_once(ROWS, "TL104")
    assert applicability is Applicability.UNSAFE
    assert "row = tl.program_id(0).to(tl.int64)" in fixed
    cst.parse_module(fixed)
    assert not lint_text("k.py", fixed, [rules_by_code()["TL104"]]).findings


def test_tl104_does_not_take_an_extensions_program_id_for_int32():
    """Round-7 false positives (flag-gems vector_norm.py, triu.py): flag-gems'
    `tle.program_id` returns `tl.program_id(axis).to(tl.int64)`; a wrapper defined in another
    module may widen, so its result is not an int32 index source."""
    source = ROWS.replace(
        "import triton.language as tl\n",
        "import triton.language as tl\nfrom flag_gems.utils import triton_lang_extension as tle\n",
    ).replace("tl.program_id(0)", "tle.program_id(0)")
    assert not lint_text("k.py", source, [rules_by_code()["TL104"]]).findings
