"""Run every fixture under the sanitising interpreter and check exact (code, line) sets per case."""

from __future__ import annotations

import pathlib
from collections import defaultdict

import pytest

pytest.importorskip("torch")
tl = pytest.importorskip("triton.language")
pytest.importorskip("numpy")

from triton_lint.dynamic import run_file_report  # noqa: E402
from triton_lint.dynamic.dynamic_report import StressCell  # noqa: E402
from triton_lint.finding import Finding  # noqa: E402

from .conftest import FIXTURES, line_of  # noqa: E402

_cache: dict[str, tuple[list[Finding], list[StressCell]]] = {}


def run(name: str, timeout: float = 120.0) -> tuple[list[Finding], list[StressCell]]:
    """Findings and stress-matrix cells of one fixture file, computed once per session."""
    if name not in _cache:
        _cache[name] = run_file_report(FIXTURES / name, timeout=timeout)
    return _cache[name]


def results(name: str, timeout: float = 120.0) -> dict[str, set[tuple[str, int]]]:
    """Findings of one fixture file as (code, line) sets grouped by case name."""
    grouped: dict[str, set[tuple[str, int]]] = defaultdict(set)
    for f in run(name, timeout)[0]:
        assert f.path == str(FIXTURES / name), f.path
        grouped[f.properties["case"]].add((f.code, f.line))
    return grouped


def statuses(name: str, case: str) -> list[tuple[str, str, str, tuple[str, ...]]]:
    """(variant, pattern, status, codes) of every combination of one case, in run order."""
    return [(c.variant, c.pattern, c.status, c.codes) for c in run(name)[1] if c.case == case]


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
    for case in ("exits", "exits_hard", "killed_for_memory"):
        assert got[case] == {("TL908", line_of(p, f"def {case}("))}, case
    assert got["runs_out_of_memory"] == {("TL908", line_of(p, "return bytearray(1 << 62)"))}
    # The interpreter checks the wild store before it happens; a GPU faults (test_gpu.py).
    assert got["faults_the_device"] == {
        ("TL901", line_of(p, "tl.store(out_ptr + (1 << 40)")),
        ("TL906", line_of(p, "out = torch.empty_like(x)", after="def faults_the_device")),
    }
    assert got["survives"] == set()
    # The matrix names the combination that crashed or hung; the next case still ran.
    cells = {c.case: c for c in run("crashes.py", timeout=8.0)[1]}
    assert (cells["segfaults"].status, cells["segfaults"].codes) == ("error", ("TL908",))
    assert (cells["hangs"].status, cells["hangs"].codes) == ("timeout", ("TL908",))
    assert cells["hangs"].variant == "-; int32; contiguous"
    assert cells["survives"].status == "pass"
    messages = {f.properties["case"]: f.message for f in run("crashes.py", timeout=8.0)[0]}
    assert messages["exits"].startswith("stress case `exits` called sys.exit(3)")
    assert "exited with status 0" in messages["exits_hard"]
    assert messages["runs_out_of_memory"].startswith("case raised MemoryError")
    assert "killed by signal 9" in messages["killed_for_memory"]
    hang = next(f for f in run("crashes.py", timeout=8.0)[0] if f.properties["case"] == "hangs")
    assert hang.properties["pattern"] == cells["hangs"].pattern


def test_device_assert_and_int32_overflow() -> None:
    p = FIXTURES / "checks.py"
    got = results("checks.py")
    assert got["log_abs"] == {("TL909", line_of(p, "tl.device_assert(x > 0"))}
    assert got["scaled_index"] == {
        ("TL910", line_of(p, "value = offs * scale  # BUG")),
        # the wrapped product is what gets stored
        ("TL903", line_of(p, "tl.store(", after="def scaled_index_kernel(")),
    }
    assert got["scaled_index_i64"] == set()
    # Only the input that breaks the invariant fails: the matrix says which one.
    assert statuses("checks.py", "log_abs") == [
        ("N=100; float32; contiguous", "ones", "pass", ()),
        ("N=100; float32; contiguous", "negative", "fail", ("TL909",)),
    ]
    assert [s[2:] for s in statuses("checks.py", "scaled_index")] == [
        ("pass", ()),
        ("fail", ("TL903", "TL910")),
    ]
    assert {s[2] for s in statuses("checks.py", "scaled_index_i64")} == {"pass"}
    tl910 = next(f for f in run("checks.py")[0] if f.code == "TL910")
    assert tl910.properties["witness"]["dims"] == {"N": 200}
    assert tl910.properties["witness"]["pid"] == [2, 0, 0]  # offs 128.. times 2**24 >= 2**31


@pytest.mark.skipif(
    not hasattr(tl, "make_tensor_descriptor"),
    reason="tl.make_tensor_descriptor arrived in Triton 3.4",
)
def test_tensor_descriptor_shape_past_the_end() -> None:
    p = FIXTURES / "descriptors.py"
    got = results("descriptors.py")
    assert got["desc_clean"] == set()
    load = line_of(p, "x = x_desc.load([off])", after="def double_desc_padded")
    assert got["desc_padded_shape"] == {("TL901", load)}
    f = next(f for f in run("descriptors.py")[0] if f.code == "TL901")
    # The descriptor's base pointer carries the argument: the owner is known, not guessed.
    assert f.properties["arg"] == "x_ptr" and f.properties["owner_inferred"] is False
    assert f.properties["witness"]["dims"] == {"N": 40}
    # N=64 is a whole number of blocks: the padded shape is the real one there.
    assert [s[2] for s in statuses("descriptors.py", "desc_padded_shape")] == ["fail", "pass"]


def test_findings_point_at_launch_site_and_wrapper() -> None:
    p = FIXTURES / "vector_add.py"
    f = next(f for f in run("vector_add.py")[0] if f.code == "TL901")
    assert f.properties["case"] == "add_bad_load"
    assert [(r.path, r.span.line) for r in f.related] == [
        (str(p), line_of(p, "kernel[(triton.cdiv(n, BLOCK),)]")),
        (str(p), line_of(p, "def add_bad_load")),
    ]
    assert "launched here" in f.related[0].message
    assert "add_bad_load" in f.related[1].message
    witness = f.properties["witness"]
    assert {"dims", "dtypes", "pattern", "layout", "pid", "lane", "offsets"} <= set(witness)


def test_matrix_has_every_combination() -> None:
    _, cells = run("vector_add.py")
    clean = [c for c in cells if c.case == "add_clean"]
    # 3 sizes x 10 value patterns, contiguous only (the case restricts layouts)
    assert len(clean) == 30
    assert {c.status for c in clean} == {"pass"} and {c.kernel for c in clean} == {"add_kernel"}
    assert {c.variant for c in clean} == {f"N={n}; float32; contiguous" for n in (1, 100, 130)}
    bad = [c for c in cells if c.case == "add_bad_store"]
    assert {(c.status, c.codes) for c in bad} == {("fail", ("TL901",))}


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


def test_ignored_strides_are_one_layout_finding() -> None:
    p = FIXTURES / "layouts.py"
    got = results("layouts.py")
    assert got["scale_ignores_strides"] == {("TL912", line_of(p, "def scale_ignores_strides"))}
    assert got["scale_makes_contiguous"] == set()
    (f,) = [f for f in run("layouts.py")[0] if f.code == "TL912"]
    # Only `x` breaks the output when it alone is sliced; the TL903 it caused is folded in.
    assert f.properties["arguments"] == ["x"] and f.properties["layout_codes"] == ["TL903"]
    assert f.properties["witness"]["layout"] == "sliced"
    assert [s[2:] for s in statuses("layouts.py", "scale_ignores_strides")] == [
        ("pass", ()),
        ("fail", ("TL912",)),
    ]
