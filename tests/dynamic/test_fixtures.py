"""Run every fixture under the sanitising interpreter and check exact (code, line) sets per case."""

from __future__ import annotations

import pathlib
from collections import defaultdict

import pytest

pytest.importorskip("torch")
pytest.importorskip("triton")
pytest.importorskip("numpy")

from triton_lint.dynamic import run_file
from triton_lint.finding import Finding

from .conftest import FIXTURES, line_of

_cache: dict[str, dict[str, set[tuple[str, int]]]] = {}


def results(name: str, timeout: float = 120.0) -> dict[str, set[tuple[str, int]]]:
    """Findings of one fixture file grouped by case name, computed once per session."""
    if name not in _cache:
        findings: list[Finding] = run_file(FIXTURES / name, timeout=timeout)
        grouped: dict[str, set[tuple[str, int]]] = defaultdict(set)
        for f in findings:
            assert f.path == str(FIXTURES / name), f.path
            grouped[f.properties["case"]].add((f.code, f.line))
        _cache[name] = grouped
    return _cache[name]


def test_vector_add() -> None:
    p = FIXTURES / "vector_add.py"
    got = results("vector_add.py")
    assert got["add_clean"] == set()
    assert got["add_bad_load"] == {("TL901", line_of(p, "tl.load(x_ptr + offs)  # BUG"))}
    assert got["add_bad_store"] == {("TL901", line_of(p, "mask=offs <= n"))}
    assert got["add_bad_shift"] == {
        ("TL901", line_of(p, "offs + 1, mask=mask")),
        ("TL903", line_of(p, "tl.store(", after="def add_shifted_load")),
    }


def test_matrix_swapped_masks() -> None:
    p = FIXTURES / "matrix.py"
    got = results("matrix.py")
    assert got["scale_clean"] == set()
    load = line_of(p, "x = tl.load(", after="def scale_2d_swapped")
    store = line_of(p, "tl.store(", after="def scale_2d_swapped")
    assert got["scale_swapped"] == {
        ("TL901", load),
        ("TL901", store),
        ("TL903", store),  # transposed layout: wrong elements written
        ("TL906", line_of(p, "out = torch.empty((M, N)")),  # contiguous: elements never written
    }


def test_reductions() -> None:
    p = FIXTURES / "reductions.py"
    got = results("reductions.py")
    assert got["sum_masked_no_other"] == {("TL905", line_of(p, "# BUG: no other="))}
    assert got["max_clean"] == set()
    assert got["softmax_unstable"] == {("TL902", line_of(p, "num = tl.exp(x)  # BUG"))}
    assert got["softmax_clean"] == set()
    assert got["sum_half_accumulator"] == {("TL903", line_of(p, "tl.store(out_ptr, tl.sum(acc"))}


def test_autotune_configs_compared() -> None:
    p = FIXTURES / "autotuned.py"
    got = results("autotuned.py")
    assert got["tuned_clean"] == set()
    decorator = line_of(p, "@triton.autotune", after="def scale_tuned(")
    assert got["tuned_fixed_grid"] == {("TL911", decorator)}


def test_crash_and_hang_are_isolated() -> None:
    p = FIXTURES / "crashes.py"
    got = results("crashes.py", timeout=8.0)
    assert got["segfaults"] == {("TL908", line_of(p, "def segfaults"))}
    assert got["hangs"] == {("TL908", line_of(p, "def hangs"))}
    assert got["survives"] == set()


def test_stress_run_single_case() -> None:
    from triton_lint import stress

    src = FIXTURES / "vector_add.py"
    # stress.run needs the function object; build it without importing triton here.
    import importlib.util

    spec = importlib.util.spec_from_file_location("_tl_fixture_va", src)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    findings = stress.run(mod.add_bad_store)
    assert {(f.code, f.properties["case"]) for f in findings} == {("TL901", "add_bad_store")}
    with pytest.raises(AssertionError, match="TL901"):
        stress.assert_clean(mod.add_bad_store)
    stress.assert_clean(mod.add_clean)
    assert pathlib.Path(findings[0].path).name == "vector_add.py"
