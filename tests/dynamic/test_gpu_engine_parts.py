"""Parts of the GPU engine that need no GPU: compute-sanitizer records, device choice, work
planning, and red-zone bookkeeping on host tensors."""

from __future__ import annotations

import pathlib

import pytest

from triton_lint.dynamic import compute_sanitizer as cs
from triton_lint.dynamic import devices
from triton_lint.dynamic.runner import plan_units
from triton_lint.dynamic.units import load_times, save_times, unit_key

DATA = pathlib.Path(__file__).resolve().parents[1] / "data"


def test_memcheck_xml_becomes_one_finding_at_the_kernel_line() -> None:
    # Saved from `compute-sanitizer --tool memcheck --xml` on an H100 (Triton 3.6): an unmasked
    # load at line 5 of oob.py, launched at line 8; two API-error records follow it.
    records = cs.parse_records((DATA / "memcheck_oob.xml").read_text())
    assert [(r["path"].rsplit("/", 1)[-1], r["line"], r["kernel"]) for r in records] == [
        ("oob.py", 5, "copy_oob")
    ]
    assert records[0]["block"] == [1, 0, 0] and records[0]["thread"] == [36, 0, 0]
    assert records[0]["launch"][1:] == (8, "<module>")
    (f,) = cs.findings_from_records(records, "memcheck", "case_a", {})
    assert (f.code, f.line, f.kernel) == ("TL901", 5, "copy_oob")
    assert "out of bounds" in f.message and f.properties["tool"] == "memcheck"
    assert [r.span.line for r in f.related] == [8]


def test_tools_map_to_codes_and_bad_xml_gives_nothing() -> None:
    assert cs.TOOL_CODES == {"memcheck": "TL901", "initcheck": "TL913", "racecheck": "TL904"}
    assert cs.parse_records("<ComputeSanitizerOutput><record>") == []


def test_missing_compute_sanitizer_is_a_clear_error(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))
    monkeypatch.delenv("CUDA_PATH", raising=False)
    monkeypatch.setattr(cs.os, "access", lambda *a: False)
    with pytest.raises(cs.SanitizerUnavailable, match="compute-sanitizer"):
        cs.find_compute_sanitizer()


def test_auto_device_falls_back_to_the_interpreter(monkeypatch) -> None:
    monkeypatch.setattr(devices, "probe_gpus", lambda timeout=120.0: (0, None))
    assert devices.resolve_device("auto").kind == "interpreter"
    with pytest.raises(devices.DeviceError, match="no CUDA GPU"):
        devices.resolve_device("cuda")
    monkeypatch.setattr(devices, "probe_gpus", lambda timeout=120.0: (2, "NVIDIA H200"))
    gpu = devices.resolve_device("auto")
    assert (gpu.kind, gpu.gpus, gpu.description) == ("cuda", 2, "CUDA (NVIDIA H200) x2")
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    assert devices.resolve_device("auto").kind == "interpreter"


def test_units_are_cases_longest_first_when_several_jobs_run_them(tmp_path) -> None:
    src = "from triton_lint import stress\n" + "".join(
        f"@stress.case(reference=None, inputs=[])\ndef c{i}():\n    pass\n" for i in range(3)
    )
    a = tmp_path / "a.py"
    a.write_text(src)
    b = tmp_path / "b.py"
    b.write_text(src.replace("def c", "def d"))
    assert [(u.path.name, u.only) for u in plan_units([a, b], 1)] == [
        ("a.py", None),
        ("b.py", None),
    ]
    units = plan_units([a, b], 4)
    assert [(u.path.name, u.only, u.order) for u in units] == [
        ("a.py", ("c0",), 0),
        ("a.py", ("c1",), 1),
        ("a.py", ("c2",), 2),
        ("b.py", ("d0",), 3),
        ("b.py", ("d1",), 4),
        ("b.py", ("d2",), 5),
    ]
    # An earlier run's times: the longest first, a case never timed before every timed one.
    times = {unit_key(u): t for u, t in zip(units, [1.0, 9.0, 0.5, 2.0, 3.0], strict=False)}
    ordered = plan_units([a, b], 4, times)
    assert [u.only[0] for u in ordered] == ["d2", "c1", "d1", "d0", "c0", "c2"]
    path = tmp_path / "cache" / "times.json"
    save_times(path, times)
    save_times(path, {"x::y": 4.0})
    assert load_times(path) == {**times, "x::y": 4.0}
    path.write_text("not json")
    assert load_times(path) == {}


def test_red_zone_changes_name_side_and_offsets() -> None:
    torch = pytest.importorskip("torch")
    from triton_lint.dynamic.redzone import CANARY, Arena

    arena = Arena(torch.device("cpu"))
    x = arena.place(torch.arange(10, dtype=torch.float32), "input 0")
    arena.place(torch.ones(3), "input 1")
    assert torch.equal(x, torch.arange(10, dtype=torch.float32))
    assert arena.dirty(CANARY) == []
    g = arena.buffers[0]
    assert g.lo == x.data_ptr() and g.guard % 512 == 0  # keeps the allocation's alignment
    # A write one element past the end and one two elements before the start.
    flat = g.raw.view(torch.float32)
    start = g.guard // 4
    flat[start + 10] = 1.0
    flat[start - 2] = 1.0
    before, after = g.changed(CANARY)
    assert (before[0] // 4, after[0] // 4) == (-2, 10)
    assert arena.dirty(CANARY) == [0]  # the second buffer's guards still hold the canary
    arena.fill_guards(0xFF)
    assert g.changed(0xFF) == ([], [])
    assert arena.dirty(0xFF) == []


def test_red_zone_keeps_strides_and_gaps_of_sliced_inputs() -> None:
    torch = pytest.importorskip("torch")
    from triton_lint.dynamic.redzone import Arena

    wide = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    sliced = wide[:, ::2]
    placed = Arena(torch.device("cpu")).place(sliced, "input 0")
    assert placed.stride() == sliced.stride() and torch.equal(placed, sliced)
    # The gap between kept elements holds what the host tensor's gap held.
    assert placed.as_strided((1,), (1,), placed.storage_offset() + 1).item() == 1.0


def test_a_case_restarted_after_a_fault_keeps_one_finding_per_identity() -> None:
    from triton_lint.dynamic.runner import add_case_findings

    def finding(code: str, line: int, config: str) -> dict:
        return {"path": "k.py", "line": line, "code": code, "message": config, "properties": {}}

    fault = {
        "name": "c",
        "findings": [finding("TL901", 3, "a"), finding("TL911", 1, "cfg1")],
        "keys": ["('TL901', 'k.py', 3, 'x_ptr')", "('TL911', 'k.py', 1, 'cfg1')"],
    }
    # The fresh child finds the out-of-bounds store again, and a second autotune config on the
    # same line (a different identity, so it stays).
    done = {
        "name": "c",
        "findings": [finding("TL901", 3, "b"), finding("TL911", 1, "cfg2")],
        "keys": ["('TL901', 'k.py', 3, 'x_ptr')", "('TL911', 'k.py', 1, 'cfg2')"],
    }
    findings: list = []
    seen: set = set()
    for ev in (fault, done):
        add_case_findings(ev, {}, findings, seen)
    assert [(f.code, f.message) for f in findings] == [
        ("TL901", "a"),
        ("TL911", "cfg1"),
        ("TL911", "cfg2"),
    ]


HELPER = """import triton
import triton.language as tl


@triton.jit
def twice(x):
    return tl.no_such_op(x) * 2
"""

KERNELS = """import triton
import triton.language as tl

from tl_helpers import twice


@triton.jit
def calls_helper(x_ptr):
    x = tl.load(x_ptr)
    tl.store(x_ptr, twice(x))


@triton.jit
def bad_directly(x_ptr):
    x = tl.load(x_ptr)
    tl.store(x_ptr, tl.no_such_op(x))
"""


@pytest.mark.parametrize(
    ("kernel", "file", "line"),
    [("bad_directly", "tl_kernels.py", 16), ("calls_helper", "tl_helpers.py", 7)],
)
def test_a_native_compile_error_names_the_kernel_line(
    tmp_path, monkeypatch, kernel: str, file: str, line: int
) -> None:
    # Triton strips its code generator's frames from a compile error's traceback; the error's
    # source and node, matched to the launched kernel or a helper it imports, give the line.
    # The front end compiles for a GPU target without a GPU, so this runs on any machine.
    triton = pytest.importorskip("triton")
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from triton_lint.dynamic.kernel_source import compile_error_frame

    (tmp_path / "tl_helpers.py").write_text(HELPER)
    (tmp_path / "tl_kernels.py").write_text(KERNELS)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = __import__("tl_kernels")
    fn = getattr(module, kernel)
    with pytest.raises(Exception) as info:
        triton.compile(ASTSource(fn, {"x_ptr": "*fp32"}), target=GPUTarget("cuda", 90, 32))
    frame = compile_error_frame(info.value, [fn])
    assert frame is not None
    assert (pathlib.Path(frame.filename).name, frame.lineno) == (file, line)
    assert compile_error_frame(ValueError("no node"), [fn]) is None


def test_every_autotune_config_times_the_same_on_every_triton() -> None:
    # Timed configs made the chosen one, and so a case's findings, depend on the GPU's mood
    # (seen on Triton 3.3, whose benchmarker is a plain `do_bench` attribute; later releases
    # keep it in `_do_bench` behind a property).
    from triton_lint.dynamic.autotune_check import equal_times

    class Old:
        def __init__(self) -> None:
            self.do_bench = None

    class New:
        _do_bench = None

        @property
        def do_bench(self):
            return self._do_bench

    calls = []
    for tuner in (Old(), New()):
        equal_times(tuner)
        assert tuner.do_bench(lambda: calls.append(1), quantiles=(0.5, 0.2, 0.8)) == [1.0] * 3
    assert calls == [1, 1]
