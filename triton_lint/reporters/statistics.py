"""Counts per rule code, shared by the text and JSON reporters."""

from __future__ import annotations

from collections import Counter

from triton_lint.finding import Finding


def count_by_code(findings: list[Finding]) -> list[tuple[str, str, int]]:
    """(code, name, count), most frequent first, then by code."""
    counts = Counter((f.code, f.name) for f in findings)
    return sorted(((c, n, k) for (c, n), k in counts.items()), key=lambda x: (-x[2], x[0]))
