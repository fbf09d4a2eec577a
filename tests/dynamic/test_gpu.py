"""GPU engine: native runs with red zones give the interpreter's codes (skipped without a GPU)."""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
from collections import defaultdict

import pytest

torch = pytest.importorskip("torch")
triton = pytest.importorskip("triton")
TRITON = tuple(int(x) for x in triton.__version__.split(".")[:2])

if os.environ.get("TRITON_INTERPRET") == "1" or not torch.cuda.is_available():
    pytest.skip("needs a CUDA GPU (and no TRITON_INTERPRET)", allow_module_level=True)

from triton_lint.dynamic.devices import Device  # noqa: E402
from triton_lint.dynamic.runner import (  # noqa: E402
    ChildOptions,
    run_file_report,
    run_paths_report,
    sanitize_file,
)

from .conftest import FIXTURES, line_of  # noqa: E402

SHARED = [
    "vector_add.py",
    "matrix.py",
    "reductions.py",
    "autotuned.py",
    "checks.py",
    "crashes.py",
    "descriptors.py",
    "bench.py",
    "large.py",
]


#: What native runs cannot see, by design (docs/gpu.md, "What only the interpreter checks"):
#: a device assert aborts the launch before its output can be compared with the reference.
NATIVE_GAPS = {
    ("checks.py", "scaled_index"): {"TL903"},
}


def native_site(name: str, code: str, line: int) -> int:
    """Where a native run reports what the interpreter reports at `line`: without an op tracer,
    TL902 points at the store that wrote the non-finite value, not the op that produced it."""
    p = FIXTURES / name
    if (name, code) == ("reductions.py", "TL902"):
        assert line == line_of(p, "num = tl.exp(x)  # BUG")
        return line_of(p, "tl.store(", after="def softmax_no_max")
    return line


@functools.cache
def report(name: str, device: str) -> tuple[list, list]:
    """Findings and stress cells of one fixture on one device (each run once per session)."""
    # crashes.py's hang is found at the time limit: a shorter one keeps the file quick.
    timeout = 30 if name == "crashes.py" else 60
    return run_file_report(FIXTURES / name, options=ChildOptions(device, timeout=timeout))


def found(name: str, device: str) -> dict[str, set[tuple[str, int]]]:
    findings, _cells = report(name, device)
    grouped: dict[str, set[tuple[str, int]]] = defaultdict(set)
    for f in findings:
        grouped[f.properties["case"]].add((f.code, f.line))
        if f.code != "TL908":
            assert f.properties["device"] == device
    return dict(grouped)


@pytest.mark.parametrize("name", SHARED)
def test_same_findings_as_the_interpreter(name: str) -> None:
    expected = {}
    for case, cpu in found(name, "interpreter").items():
        gaps = NATIVE_GAPS.get((name, case), set())
        native = {(code, native_site(name, code, line)) for code, line in cpu if code not in gaps}
        if native:
            expected[case] = native
    assert found(name, "cuda") == expected


def test_a_wild_store_is_turned_off_and_later_cases_run() -> None:
    findings, cells = report("crashes.py", "cuda")
    (wild,) = [
        f for f in findings if f.properties["case"] == "faults_the_device" and f.code == "TL901"
    ]
    assert wild.properties["lands"] == "outside every allocation"
    status = {c.case: c.status for c in cells}
    assert status["survives"] == "pass"


def test_constexpr_size_recompiles() -> None:
    p = FIXTURES / "gpu_recompile.py"
    findings, _ = run_file_report(p, options=ChildOptions("cuda", timeout=60))
    assert {(f.code, f.properties["case"], f.line) for f in findings} == {
        ("TL907", "copy_size_constexpr", line_of(p, "def copy_constexpr_n"))
    }
    (f,) = findings
    assert f.properties["parameters"] == {"n": [17, 33, 49, 100]}
    assert f.properties["variants"] >= 4
    assert [r.span.line for r in f.related] == [
        line_of(p, "kernel[(triton.cdiv(n, 64),)]"),
        line_of(p, "def copy_size_constexpr"),
    ]


def test_out_of_bounds_store_names_argument_offsets_and_lane() -> None:
    p = FIXTURES / "vector_add.py"
    findings, _ = run_file_report(
        p, only=["add_bad_store"], options=ChildOptions("cuda", timeout=60)
    )
    (f,) = findings
    assert (f.code, f.line) == ("TL901", line_of(p, "mask=offs <= n"))
    assert f.properties["arg"] == "out_ptr" and f.properties["op"] == "store"
    # one element past the end: offset N of an N-element output, in the program that holds it
    n = f.properties["dims"]["N"]
    assert f.properties["offsets"] == [n]
    assert f.properties["pid"] == [n // 64, 0, 0] and f.properties["lane"] == [n % 64]


@pytest.mark.skipif(shutil.which("compute-sanitizer") is None, reason="no compute-sanitizer")
def test_memcheck_names_the_kernel_line() -> None:
    p = FIXTURES / "vector_add.py"
    found = sanitize_file(p, ["add_bad_load"], "memcheck", timeout=120)
    bug = line_of(p, "tl.load(x_ptr + offs)  # BUG")
    # The line comes from the compiler's line table: Triton 3.9 gives the faulting load the
    # line of the masked load after it (the two loads are scheduled together).
    lines = {bug, bug + 1} if TRITON >= (3, 9) else {bug}
    assert len(found) == 1 and (found[0].code, found[0].line) in {("TL901", n) for n in lines}
    assert found[0].properties["tool"] == "memcheck"


CUDA = Device("cuda", "CUDA", 1)


def test_bench_times_every_size_and_flags_the_slow_wrapper() -> None:
    p = FIXTURES / "bench.py"
    findings, report = run_paths_report([p], device=CUDA, bench=True, progress=False)
    assert {(f.code, f.line) for f in findings} == {
        ("TL914", line_of(p, "def scale_one_per_program"))
    }
    rows = {(r.case, r.size) for r in report.performance}
    assert rows == {
        *(
            (case, f"N={n}; float32")
            for case in ("scale_blocked", "scale_one_per_program")
            for n in (2**22, 2**24, 2**26)
        ),
        *(("matmul", f"M={s}, K={s}, N={s}; float16") for s in (1024, 2048, 4096)),
    }
    for r in report.performance:
        assert r.triton_ms > 0 and r.torch_ms and r.compile_ms and r.peak_gbs
        assert (r.tflops is not None) == (r.case == "matmul")
    (slow,) = findings
    assert slow.related[0].message.startswith("kernel launched here")
    assert slow.properties["triton_ms"] > slow.properties["torch_ms"]


def test_large_turns_the_int32_product_into_a_witness() -> None:
    p = FIXTURES / "large.py"
    findings, report = run_paths_report([p], device=CUDA, large=True, progress=False)
    assert {(f.code, f.properties["case"], f.line) for f in findings} == {
        ("TL910", "scale_rows_int32", line_of(p, "offs = row * stride + cols  # BUG"))
    }
    large = [c for c in report.stress if c.case == "scale_rows_int64" and "M=2097153" in c.variant]
    assert [c.status for c in large] == ["pass"]


def test_large_confirms_the_static_int32_finding() -> None:
    p = FIXTURES / "large.py"
    proc = subprocess.run(
        [sys.executable, "-m", "triton_lint", "--dynamic", "--large", "--format", "json", str(p)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 1, proc.stderr
    (tl104,) = [f for f in json.loads(proc.stdout) if f["code"] == "TL104"]
    assert tl104["line"] == line_of(p, "offs = row * stride + cols  # BUG")
    assert tl104["properties"]["confirmed_by"] == ["TL910"]
