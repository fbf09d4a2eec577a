"""`check --dynamic` after the static pass: the resolved options and the merged findings."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from triton_lint.dynamic.devices import Device, DeviceError
from triton_lint.finding import Finding
from triton_lint.run import RunResult


@dataclass(frozen=True)
class DynamicRun:
    """The `--dynamic` options after the device was resolved."""

    device: Device
    timeout: float
    jobs: int | None
    repeats: int
    redzones: bool
    sanitizer: str | None = None
    sanitize_all: bool = False
    large: bool = False
    bench: bool = False
    progress: bool = True  # a progress line on stderr when it is a terminal (off: --quiet)


def check_sanitizer(device: Device) -> None:
    """--sanitizer needs a GPU run and the tool itself."""
    from triton_lint.dynamic.compute_sanitizer import find_compute_sanitizer

    if device.kind != "cuda":
        raise DeviceError(
            "--sanitizer runs cases natively under compute-sanitizer and needs a CUDA GPU "
            f"(the cases would run on: {device.description})"
        )
    find_compute_sanitizer()


def run_dynamic(result: RunResult, paths: list[Path], run: DynamicRun) -> None:
    """Run stress cases in child processes and merge their findings with the static ones."""
    from triton_lint.dynamic import confirm, run_paths_report

    dynamic_findings, report = run_paths_report(
        paths,
        timeout=run.timeout,
        progress=run.progress,
        device=run.device,
        jobs=run.jobs,
        repeats=run.repeats,
        redzones=run.redzones,
        sanitizer=run.sanitizer,
        sanitize_all=run.sanitize_all,
        large=run.large,
        bench=run.bench,
    )
    result.dynamic = report
    confirm(result.findings, dynamic_findings)
    result.findings = sorted([*result.findings, *dynamic_findings], key=Finding.sort_key)
