"""Warm children: one child runs unit after unit; one that dies is started again and the unit
goes on after the case that ended it (interpreter: runs anywhere)."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("triton")

from triton_lint.dynamic.runner import ChildOptions, run_file_report
from triton_lint.dynamic.warm import WarmChild

from .conftest import FIXTURES

OPTIONS = ChildOptions("interpreter", timeout=120)


def codes(findings) -> set[tuple[str, str, int]]:
    return {(f.properties.get("case"), f.code, f.line) for f in findings}


def test_one_child_runs_every_unit_and_a_dead_one_is_replaced() -> None:
    child = WarmChild(OPTIONS, None)
    try:
        vector, vector_cells = run_file_report(
            FIXTURES / "vector_add.py", only=["add_clean", "add_bad_load"], child=child
        )
        assert child.starts == 1
        crash, crash_cells = run_file_report(
            FIXTURES / "crashes.py", only=["segfaults", "exits", "survives"], child=child
        )
        # The segfault killed the first child: a second ran the cases after it.
        assert child.starts == 2
        again, _ = run_file_report(FIXTURES / "vector_add.py", only=["add_bad_load"], child=child)
        assert child.starts == 2  # the second child lived on (`exits` is caught in the child)
    finally:
        child.close()
    cold_vector, _ = run_file_report(
        FIXTURES / "vector_add.py", only=["add_clean", "add_bad_load"], options=OPTIONS
    )
    cold_crash, cold_crash_cells = run_file_report(
        FIXTURES / "crashes.py", only=["segfaults", "exits", "survives"], options=OPTIONS
    )
    assert codes(vector) == codes(cold_vector) and codes(vector)
    assert codes(crash) == codes(cold_crash)
    assert codes(again) == {c for c in codes(vector) if c[0] == "add_bad_load"}
    # every case ran once: one cell per combination, as in a child per file
    assert cells(crash_cells) == cells(cold_crash_cells)
    assert {c.case for c in crash_cells} >= {"segfaults", "survives"}
    assert len(vector_cells) == len({(c.case, c.variant, c.pattern) for c in vector_cells})


def cells(cs) -> list[tuple[str, str, str]]:
    return sorted((c.case, c.variant, c.status) for c in cs)
