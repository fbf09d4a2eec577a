"""`check --dynamic` and `check --compile-only` after the static pass: the resolved options and
the merged findings."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from triton_lint.compile.targets import Arch, parse_archs
from triton_lint.config import Config, config_for_directory
from triton_lint.dynamic.devices import Device, DeviceError, resolve_device
from triton_lint.dynamic.dynamic_report import DynamicReport
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


def dynamic_device(
    requested: str | None,
    config: Config | None,
    isolated: bool,
    *,
    sanitizer: str | None,
    native: str | None,
) -> Device:
    """The device of a `--dynamic` run: the option, else `device` of the explicit or the
    working directory's configuration, else `auto`; checked against the options that need a
    GPU (`native` names the first such option given). Raises ConfigError, DeviceError or
    SanitizerUnavailable."""
    requested = requested or (config.device if config is not None else None)
    if requested is None and not isolated:
        requested = config_for_directory(Path.cwd().resolve()).device
    resolved = resolve_device(requested or "auto")
    if sanitizer is not None:
        check_sanitizer(resolved)
    if native and resolved.kind != "cuda":
        raise DeviceError(
            f"--{native} runs kernels natively and needs a CUDA GPU; this run uses the interpreter"
        )
    return resolved


def compile_archs(option: str | None, config: Config | None, isolated: bool) -> list[Arch]:
    """`--arch`, else `arch` of the explicit or working directory's configuration, else every
    architecture the installed Triton supports from Ampere on. Raises ArchError, ConfigError."""
    chosen: str | list[str] | None = option
    if chosen is None and config is not None and config.arch is not None:
        chosen = list(config.arch)
    if chosen is None and not isolated and config is None:
        found = config_for_directory(Path.cwd().resolve()).arch
        chosen = list(found) if found is not None else None
    return parse_archs(chosen)


def run_compile(
    result: RunResult,
    paths: list[Path],
    archs: list[Arch],
    *,
    jobs: int | None,
    timeout: float,
    cache_dir: Path | None,
) -> None:
    """`--compile-only`: compile every stress-case launch for `archs`; merge the findings and
    put the compiled variants in the report."""
    from triton_lint.compile.run import compile_paths

    compiled = compile_paths(
        paths,
        archs,
        jobs=jobs or os.cpu_count() or 1,
        timeout=timeout,
        cache_dir=str(cache_dir / "triton") if cache_dir is not None else None,
    )
    report = result.dynamic or DynamicReport()
    report.compiled = compiled.rows
    report.compile_archs = compiled.archs
    result.dynamic = report
    result.findings = sorted([*result.findings, *compiled.findings], key=Finding.sort_key)


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
