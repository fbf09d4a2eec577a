"""`--bench` and `--large` on the CPU: the sizes they choose, TL914's judgement, the device-side
comparison, and how timings reach the Markdown report, its plot and SARIF. The runs themselves
need a GPU (tests/dynamic/test_gpu.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

from triton_lint.cli_report import TextStyle, report  # noqa: E402
from triton_lint.dynamic import large  # noqa: E402
from triton_lint.dynamic.bench import CaseBench, bench_sizes  # noqa: E402
from triton_lint.dynamic.bench_runner import BenchResult, _read_events  # noqa: E402
from triton_lint.dynamic.dynamic_report import DynamicReport, PerfRow  # noqa: E402
from triton_lint.dynamic.inputs import Combo  # noqa: E402
from triton_lint.dynamic.launches import LaunchRecorder  # noqa: E402
from triton_lint.reporters.sarif import build_sarif  # noqa: E402
from triton_lint.run import RunResult  # noqa: E402
from triton_lint.stress import Case, scalar, tensor  # noqa: E402


def wrapper(x, y):
    return x


def _case(**kw) -> Case:
    kw.setdefault("inputs", [tensor("M", "N"), tensor("N")])
    return Case(fn=wrapper, reference=wrapper, **kw)


def test_bench_sizes_grow_the_stress_sizes_to_two_to_the_24() -> None:
    case = _case(dims={"M": [1, 8, 64], "N": [3, 1000]})
    # From (64, 1000) the smaller dim doubles until the (M, N) input holds 2**24 elements:
    # (4096, 4000) holds 16,384,000, one short doubling of 2**24 = 16,777,216.
    assert bench_sizes(case) == [{"M": 4096, "N": 8000}]
    # Within free memory: 4 times the inputs at 4 bytes an element fit in 16 MiB at
    # (1024, 1000), not at (1024, 2000).
    assert bench_sizes(case, free_bytes=16 * 2**20) == [{"M": 1024, "N": 1000}]


def test_bench_sizes_sweep_lists_and_keep_dicts() -> None:
    swept = _case(dims={"M": [1, 8], "N": [3, 7]}, bench={"N": [2**20, 2**22]})
    assert bench_sizes(swept) == [{"M": 8, "N": 2**20}, {"M": 8, "N": 2**22}]
    given = _case(dims={"M": [1, 8], "N": [3]}, bench=[{"M": 4096, "N": 64}])
    assert bench_sizes(given) == [{"M": 4096, "N": 64}]
    # A dim without stress sizes takes the largest default edge size, as the stress runs do.
    unnamed = _case(dims={"N": [3]}, bench={"N": [2**20]})
    assert bench_sizes(unnamed) == [{"M": 259, "N": 2**20}]


@pytest.mark.parametrize(
    ("triton_ms", "torch_ms", "compile_ms", "flagged"),
    [
        (5.0, 1.0, 2.0, True),  # slower than both
        (1.5, 1.0, 2.0, False),  # faster than torch.compile
        (2.1, 1.0, 2.0, False),  # within 10% of the slower baseline
        (0.03, 0.005, 0.006, False),  # launch overhead: within 30 microseconds
        (0.2, 0.005, None, True),  # only PyTorch ran
        (0.2, None, None, False),  # no baseline ran
    ],
)
def test_tl914_needs_a_clear_loss_to_every_baseline(triton_ms, torch_ms, compile_ms, flagged):
    case = _case(dims={"M": [4], "N": [4]})
    bench = CaseBench(case, LaunchRecorder(installed=False), 3350.0)
    row = {
        "size": "M=4, N=4",
        "triton_ms": triton_ms,
        "torch_ms": torch_ms,
        "compile_ms": compile_ms,
        "bandwidth_gbs": 10.0,
        "peak_gbs": 3350.0,
    }
    bench.judge(row, Combo({"M": 4, "N": 4}, (torch.float32, torch.float32), "normal", "x"))
    found = list(bench.log.findings.values())
    assert [f.code for f in found] == (["TL914"] if flagged else [])
    if flagged:
        assert found[0].line == case.line
        assert found[0].properties["triton_ms"] == triton_ms


def test_large_dims_grow_one_dim_past_2_31_elements() -> None:
    case = _case(dims={"M": [1, 8], "N": [3, 1000]})
    assert large.large_dims(case) == [
        {"M": 2**31 // 1000 + 1, "N": 1000},
        {"M": 8, "N": 2**31 // 8 + 1},
    ]
    for dims in large.large_dims(case):
        assert dims["M"] * dims["N"] > 2**31
    given = _case(dims={"M": [1, 8], "N": [3]}, large=[{"N": 2**31 + 5}])
    assert large.large_dims(given) == [{"M": 8, "N": 2**31 + 5}]


def test_large_runs_skip_what_does_not_fit() -> None:
    case = _case(
        inputs=[tensor("N", dtype=(torch.float32, torch.float16)), scalar(1)],
        dims={"N": [7]},
    )
    (fits,) = large.large_runs(case, free_bytes=64 * 2**30)
    assert fits.skip is None and fits.combo.dims == {"N": 2**31 + 1}
    assert fits.combo.dtypes == (torch.float16, None)  # the variant that needs the least memory
    (skipped,) = large.large_runs(case, free_bytes=8 * 2**30)
    assert skipped.skip == "needs ~16 GiB of GPU memory, 8 free"


def test_device_mismatch_counts_across_chunks(monkeypatch) -> None:
    monkeypatch.setattr(large, "_CHUNK", 7)
    exp = torch.arange(60, dtype=torch.float32).reshape(6, 10)
    assert large.device_mismatch(exp.clone(), exp, None, None) is None
    out = exp.clone()
    out[2, 3] = -5.0
    out[5, 9] = 1e6
    bad = large.device_mismatch(out, exp, None, None)
    assert bad == large.DeviceMismatch(2, (2, 3), -5.0, 23.0)


def test_bench_events_become_rows_findings_and_untimed_notes(tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    row = {
        "case": "scale",
        "kernel": "scale_kernel",
        "size": "N=1024; float32",
        "elements": 1024,
        "triton_ms": 0.5,
        "torch_ms": 0.25,
        "compile_ms": 0.2,
        "bandwidth_gbs": 16.4,
        "peak_gbs": 3350.0,
    }
    finding = {
        "path": str(tmp_path / "k.py"),
        "line": 3,
        "code": "TL914",
        "message": "slower",
        "properties": {"case": "scale"},
    }
    lines = [
        {"event": "start", "index": 0, "name": "scale"},
        {
            "event": "bench",
            "name": "scale",
            "rows": [
                row,
                {"case": "scale", "size": "N=9", "error": "ValueError: odd"},
                {**row, "size": "N=2048", "compile_ms": None, "compile_error": "Unsupported: x"},
            ],
            "findings": [finding],
        },
    ]
    events.write_text("".join(json.dumps(e) + "\n" for e in lines))
    result = BenchResult()
    done = _read_events(str(events), Path("k.py"), str(tmp_path / "k.py"), result)
    assert done == {"scale"}
    perf, partly = result.rows
    assert (partly.size, partly.compile_ms, partly.torch_ms) == ("N=2048", None, 0.25)
    assert (perf.case, perf.kernel, perf.elements, perf.speedup, perf.speedup_compiled) == (
        "scale",
        "scale_kernel",
        1024,
        0.5,
        0.4,
    )
    assert [(f.code, f.path, f.line) for f in result.findings] == [("TL914", "k.py", 3)]
    assert result.untimed == ["scale (N=9): ValueError: odd"]
    assert result.baseline_errors == ["scale (N=2048): torch.compile: Unsupported: x"]
    assert result.note() == (
        "Not timed: scale (N=9): ValueError: odd. "
        "Baselines that did not run: scale (N=2048): torch.compile: Unsupported: x."
    )


def _timed_result() -> RunResult:
    result = RunResult(findings=[], files_checked=1)
    rows = [
        PerfRow("k", f"N={n}", 0.1 * i, 0.2 * i, 100.0 * i, 3350.0, 0.15 * i, None, "c", n)
        for i, n in enumerate((2**20, 2**22, 2**24), 1)
    ]
    result.dynamic = DynamicReport(device="CUDA (H100)", performance=rows)
    return result


def test_markdown_report_to_a_file_embeds_the_plot(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / "audit.md"
    report(_timed_result(), "markdown", out, False, "concise", TextStyle())
    text = out.read_text()
    assert "| c | `k` | N=1048576 | 0.100 | 0.200 | 0.150 | 2.00x | 1.50x | 100.0 | 3.0% |" in text
    assert "![Time and bandwidth against size](audit.perf.png)" in text
    assert (tmp_path / "audit.perf.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def test_markdown_report_on_stdout_says_how_to_get_the_plot(capsys) -> None:
    report(_timed_result(), "markdown", None, False, "concise", TextStyle())
    text = capsys.readouterr().out
    assert "Performance on CUDA (H100)" in text
    assert "Write the report to a file (`-o report.md`) for a plot" in text
    assert "![" not in text


def test_sarif_carries_the_timings_in_run_properties() -> None:
    run = build_sarif(_timed_result())["runs"][0]
    perf = run["properties"]["performance"]
    assert perf["device"] == "CUDA (H100)"
    assert [r["size"] for r in perf["rows"]] == ["N=1048576", "N=4194304", "N=16777216"]
    assert perf["rows"][0]["speedup"] == pytest.approx(2.0)
    assert perf["rows"][0]["percentOfPeak"] == pytest.approx(100 * 100 / 3350)
