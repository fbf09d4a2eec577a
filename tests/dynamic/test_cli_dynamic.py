"""`triton-lint --dynamic` runs static rules and stress cases, and confirms static findings."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import REPO

pytest.importorskip("torch")
pytest.importorskip("triton")

DYNAMIC = [sys.executable, "-m", "triton_lint", "--dynamic"]


def test_dynamic_cli_reports_witnesses_and_confirms_static_findings():
    """On the interpreter, which sees the discarded out-of-bounds read a GPU's red zones miss
    (tests/dynamic/test_gpu.py: NATIVE_GAPS)."""
    fixture = "fixtures/dynamic/vector_add.py"
    proc = subprocess.run(
        [*DYNAMIC, "--device", "interpreter", "--format", "json", fixture],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 1, proc.stderr
    findings = json.loads(proc.stdout)
    lines = (REPO / fixture).read_text().splitlines()
    unmasked = next(i for i, text in enumerate(lines, 1) if "BUG: no mask" in text)
    static = [f for f in findings if f["code"] == "TL101"]
    assert [f["line"] for f in static] == [unmasked]
    assert static[0]["properties"]["confirmed_at_runtime"] is True
    assert "confirmed at runtime: TL901" in static[0]["message"]
    oob = [f for f in findings if f["code"] == "TL901" and f["line"] == unmasked]
    assert oob and oob[0]["properties"]["arg"] == "x_ptr"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "triton_lint", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_gpu_options_need_a_dynamic_run_and_a_gpu() -> None:
    fixture = "fixtures/dynamic/vector_add.py"
    proc = _cli("--sanitizer", "memcheck", fixture)
    assert proc.returncode == 2 and "apply to --dynamic runs" in proc.stderr
    proc = _cli("--dynamic", "--device", "interpreter", "--sanitizer", "memcheck", fixture)
    assert proc.returncode == 2 and "needs a CUDA GPU" in proc.stderr
    assert "Traceback" not in proc.stderr
    for option in ("--bench", "--large"):
        proc = _cli(option, fixture)
        assert proc.returncode == 2 and "apply to --dynamic runs" in proc.stderr
        proc = _cli("--dynamic", "--device", "interpreter", option, fixture)
        assert proc.returncode == 2, proc.stderr
        assert f"{option} runs kernels natively and needs a CUDA GPU" in proc.stderr


def test_interpreter_findings_say_which_device_ran_them() -> None:
    proc = _cli(
        "--dynamic", "--device", "interpreter", "--format", "json", "fixtures/dynamic/layouts.py"
    )
    assert proc.returncode == 1, proc.stderr
    dynamic = [f for f in json.loads(proc.stdout) if f["code"].startswith("TL9")]
    assert [(f["code"], f["properties"]["device"]) for f in dynamic] == [("TL912", "interpreter")]


def test_timeout_limits_each_case(tmp_path):
    """`--timeout` (also `--dynamic-timeout`): a case past it is a TL908 hang; the next case
    still runs."""
    source = (REPO / "fixtures" / "dynamic" / "crashes.py").read_text()
    kept = [
        block
        for block in source.split("\n\n\n")
        if "@stress.case" not in block or "def hangs" in block or "def survives" in block
    ]
    path = tmp_path / "hang.py"
    path.write_text("\n\n\n".join(kept))
    proc = subprocess.run(
        [*DYNAMIC, "--device", "interpreter", "--timeout", "3", "--format", "json", str(path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    findings = [f for f in json.loads(proc.stdout) if f["code"] == "TL908"]
    assert [(f["properties"]["case"], f["message"]) for f in findings] == [
        ("hangs", "stress case `hangs` did not finish within 3s (hang?); it was killed")
    ]
