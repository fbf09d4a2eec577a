"""TL001: the file cannot be decoded or parsed."""

from __future__ import annotations

from triton_lint.finding import Category, Severity
from triton_lint.rules.base import Rule


class SyntaxErrorRule(Rule):
    """Reported by the engine itself (nothing else can run on such a file); this holds its docs."""

    code = "TL001"
    name = "syntax-error"
    category = Category.CORRECTNESS
    severity = Severity.ERROR
    summary = "File cannot be decoded or parsed"
    rationale = """\
A file that is not valid Python (or not valid in its declared encoding) cannot be checked, and
its kernels cannot be imported either. The run goes on with the other files; this finding makes
sure the file is not silently skipped."""
    fix = """\
Fix the syntax error at the reported position, or the encoding declaration (PEP 263) /
the bytes that are not valid in it."""
    bad = """\
import triton


@triton.jit
def broken(x_ptr:  # <- TL001
    pass
"""
    good = """\
import triton


@triton.jit
def fine(x_ptr):
    pass
"""
