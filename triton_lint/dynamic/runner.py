"""Parent side of the dynamic engine: run stress cases in child processes.

Never imports torch or triton: each file's cases run in `python -m triton_lint.dynamic.child`,
under the interpreter (`TRITON_INTERPRET=1`) or natively on a CUDA GPU. A case that crashes or
exceeds the timeout becomes a TL908 finding and the child is restarted after that case; a GPU
fault (illegal address, device assert) leaves the CUDA context unusable, so the child reports it
and a fresh child goes on at the next combination. One bad case never hides the others.

Besides findings the child reports every combination it executed (dims x dtypes x value pattern
x layout) with its status; `run_paths_report` turns those into the stress matrix of a
`DynamicReport` (`RunResult.dynamic`), which the Markdown report shows. With several GPUs (or
`--jobs` on the CPU) files, and the cases of a file, are spread over parallel children, one per
GPU; the output order does not depend on it.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

from triton_lint.dynamic.cases import case_names, discover
from triton_lint.dynamic.child_io import bytecode_cache, child_env, finding_from_dict
from triton_lint.dynamic.codes import CODES
from triton_lint.dynamic.devices import INTERPRETER, Device
from triton_lint.dynamic.dynamic_report import DynamicReport, StressCell
from triton_lint.dynamic.progress import Progress
from triton_lint.dynamic.sanitize_run import sanitize_file
from triton_lint.dynamic.units import (
    Unit,
    case_count,
    default_jobs,
    load_times,
    plan_units,
    save_times,
    unit_key,
)
from triton_lint.dynamic.warm import WarmChild
from triton_lint.finding import Finding, Span

DEFAULT_TIMEOUT = 300.0
#: Seconds a child may take to start (Python, torch) before its first unit, whatever the
#: per-case timeout: on a loaded machine start-up alone can exceed a short one.
STARTUP_GRACE = 120.0
CPU_PERFORMANCE_NOTE = (
    "No timings: the stress cases ran under Triton's CPU interpreter, whose timings say nothing "
    "about GPU performance. Benchmarks need a GPU run (`--device cuda --bench`)."
)


@dataclass(frozen=True)
class ChildOptions:
    """What every child of one run is told: device and the checks' knobs."""

    device: str = "interpreter"  # "interpreter" or "cuda"
    timeout: float = DEFAULT_TIMEOUT
    repeats: int = 3  # GPU: runs per combination for TL904
    redzones: bool = True  # GPU: guard regions around every tensor
    large: bool = False  # GPU: check at sizes past 2**31 elements instead of the stress sizes

    def child_flags(self, device_log: str) -> list[str]:
        """The command-line options every child (warm or one-file) is started with."""
        flags = ["--device", self.device, "--repeats", str(self.repeats)]
        flags += ["--device-log", device_log]
        flags += [] if self.redzones else ["--no-redzones"]
        return flags + (["--large"] if self.large else [])


def _case_failed(path: str, line: int, case: str, message: str, extra: dict[str, Any]) -> Finding:
    meta = CODES["TL908"]
    return Finding(
        path=path,
        span=Span(line, 1, line, 1),
        code="TL908",
        name=meta.name,
        severity=meta.severity,
        category=meta.category,
        message=message,
        kernel=None,
        properties={"case": case, **extra},
    )


def run_file(
    path: pathlib.Path,
    *,
    only: list[str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    on_case: Callable[[str], None] | None = None,
) -> list[Finding]:
    """Run every case of one file (or those named in `only`), each with its own timeout."""
    return run_file_report(path, only=only, timeout=timeout, on_case=on_case)[0]


def run_file_report(
    path: pathlib.Path,
    *,
    only: list[str] | None = None,
    timeout: float | None = None,
    on_case: Callable[[str], None] | None = None,
    options: ChildOptions | None = None,
    gpu: int | None = None,
    child: WarmChild | None = None,
    progress: Progress | None = None,
) -> tuple[list[Finding], list[StressCell]]:
    """`run_file`, plus one stress-matrix cell per combination the child executed; with
    `child`, the cases run in that warm child (started again after it dies)."""
    options = options or ChildOptions()
    if timeout is not None:
        options = replace(options, timeout=timeout)
    display = str(path)
    real = os.path.realpath(path)
    path_map = {real: display}
    findings: list[Finding] = []
    cells: list[StressCell] = []
    seen: set[tuple[str, str]] = set()
    skip, skip_combos = 0, 0
    with tempfile.TemporaryDirectory(prefix="tl-dyn-cache-") as cache_dir:
        while True:
            with tempfile.TemporaryDirectory(prefix="tl-dyn-") as tmp:
                out = os.path.join(tmp, "events.jsonl")
                if child is not None:
                    unit = {"file": real, "out": out, "only": only or [], "skip": skip}
                    proc, err = child.submit({**unit, "skip_combos": skip_combos})
                else:
                    err = os.path.join(tmp, "stderr.txt")
                    command = _child_command(real, out, err, options, only, skip, skip_combos)
                    with open(err, "wb") as errfh:
                        proc = subprocess.Popen(
                            command,
                            stdout=subprocess.DEVNULL,
                            stderr=errfh,
                            stdin=subprocess.DEVNULL,
                            env=child_env(options.device, cache_dir, gpu, private_kernels=True),
                        )
                restart = _watch(
                    proc,
                    out,
                    err,
                    options.timeout,
                    display,
                    path_map,
                    findings,
                    seen,
                    cells,
                    on_case,
                    progress,
                )
            if restart is None:
                return findings, cells
            skip, skip_combos = restart


def _child_command(
    real: str,
    out: str,
    err: str,
    options: ChildOptions,
    only: list[str] | None,
    skip: int,
    skip_combos: int,
) -> list[str]:
    """A one-file child's command line: it resumes after the first `skip` cases and the first
    `skip_combos` combinations of the next one."""
    command = [sys.executable, "-m", "triton_lint.dynamic.child", "--file", real, "--out", out]
    command += ["--skip", str(skip), "--skip-combos", str(skip_combos), *options.child_flags(err)]
    for name in only or []:
        command += ["--only", name]
    return command


def add_case_findings(
    ev: dict[str, Any], path_map: dict[str, str], findings: list[Finding], seen: set[Any]
) -> None:
    """A case's findings from a `done` or `fault` event; one per identity the child gave (a
    case restarted after a GPU fault finds some of them again)."""
    keys = ev.get("keys") or [None] * len(ev["findings"])
    for d, key in zip(ev["findings"], keys, strict=False):
        if key is not None:
            if (ev["name"], key) in seen:
                continue
            seen.add((ev["name"], key))
        findings.append(finding_from_dict(d, path_map))


def _watch(
    proc: subprocess.Popen[bytes],
    out: str,
    err: str,
    timeout: float,
    display: str,
    path_map: dict[str, str],
    findings: list[Finding],
    seen: set[Any],
    cells: list[StressCell],
    on_case: Callable[[str], None] | None,
    progress: Progress | None = None,
) -> tuple[int, int] | None:
    """Follow the child's event file; return the (case, combination) to restart from, or
    None when the child finished."""
    pos = 0
    lines: list[int] = []
    current: tuple[int, str] | None = None
    combo: dict[str, Any] | None = None  # the combination running now (started, not done)
    started = time.monotonic()
    buf = ""
    fault: tuple[int, int] | None = None
    ended = False  # a warm child finished the unit (and lives on)
    ready = False  # the child has started (its own start-up is not the case's time)
    while True:
        done = ended or proc.poll() is not None
        if os.path.exists(out):
            with open(out, encoding="utf-8") as fh:
                fh.seek(pos)
                chunk = fh.read()
                pos = fh.tell()
            buf += chunk
            *complete, buf = buf.split("\n")
            for raw in complete:
                if not raw.strip():
                    continue
                ev = json.loads(raw)
                kind = ev["event"]
                if kind == "unit":
                    ready, started = True, time.monotonic()
                elif kind == "cases":
                    _names, lines = ev["names"], ev["lines"]
                elif kind == "start":
                    current = (ev["index"], ev["name"])
                    started = time.monotonic()
                    if on_case is not None:
                        on_case(ev["name"])
                    if progress is not None:
                        progress.case_started(display, ev["name"])
                elif kind == "combo_start":
                    combo = ev
                elif kind == "combo":
                    combo = None
                    if current is not None:
                        cells.append(_cell(current[1], ev))
                elif kind == "done":
                    before = len(findings)
                    add_case_findings(ev, path_map, findings, seen)
                    if progress is not None:
                        progress.case_done(len(findings) - before)
                    current = None
                    combo = None
                elif kind == "fault":
                    # The CUDA context is gone: keep what the case found, go on after the combo.
                    add_case_findings(ev, path_map, findings, seen)
                    cells.append(_cell(ev["name"], combo, "error", tuple(ev.get("codes") or ())))
                    fault = (ev["index"], int(ev.get("combo_index") or 0) + 1)
                elif kind == "unit_end":
                    ended = True
                elif kind == "import_error":
                    findings.append(
                        _case_failed(
                            display,
                            int(ev.get("line") or 1),
                            "<import>",
                            f"importing the module failed: {ev['error']}",
                            {},
                        )
                    )
        if done and not buf.strip():
            # Drain once more above before deciding; a pending event line was read in this pass.
            if fault is not None:
                proc.wait()
                return fault
            if current is None:
                return None
            idx, name = current
            rc = proc.returncode
            tail = _tail(err)
            why = (
                f"killed by signal {-rc}"
                if rc is not None and rc < 0
                else f"exited with status {rc}"
            )
            findings.append(
                _case_failed(
                    display,
                    lines[idx] if idx < len(lines) else 1,
                    name,
                    f"stress case `{name}` crashed the child process ({why}); stderr: "
                    f"{tail[-300:]}",
                    {"returncode": rc, "stderr": tail, **_combo_props(combo)},
                )
            )
            cells.append(_cell(name, combo, "error"))
            if progress is not None:
                progress.case_done(1)
            return idx + 1, 0
        limit = timeout if ready else max(timeout, STARTUP_GRACE)
        if not done and time.monotonic() - started > limit:
            proc.kill()
            proc.wait()
            if current is None:
                findings.append(
                    _case_failed(
                        display,
                        1,
                        "<import>",
                        f"importing the module exceeded the {timeout:.0f}s timeout",
                        {},
                    )
                )
                return None
            idx, name = current
            findings.append(
                _case_failed(
                    display,
                    lines[idx] if idx < len(lines) else 1,
                    name,
                    f"stress case `{name}` did not finish within {timeout:.0f}s (hang?); it was "
                    "killed",
                    {"timeout": timeout, **_combo_props(combo)},
                )
            )
            cells.append(_cell(name, combo, "timeout"))
            if progress is not None:
                progress.case_done(1)
            return idx + 1, 0
        time.sleep(0.05)


def _cell(
    case: str,
    ev: dict[str, Any] | None,
    status: str | None = None,
    codes: tuple[str, ...] = (),
) -> StressCell:
    """A stress-matrix cell from a `combo` event (or the combo that crashed, hung or faulted)."""
    ev = ev or {}
    codes = ev.get("codes") or codes or (["TL908"] if status in ("error", "timeout") else [])
    return StressCell(
        kernel=str(ev.get("kernel") or ""),
        case=case,
        variant=str(ev.get("variant") or "(before the first combination)"),
        status=status or str(ev.get("status") or "pass"),
        codes=tuple(codes),
        pattern=str(ev.get("pattern") or ""),
    )


def _combo_props(combo: dict[str, Any] | None) -> dict[str, Any]:
    if not combo:
        return {}
    return {"variant": combo.get("variant"), "pattern": combo.get("pattern")}


def _tail(path: str, limit: int = 2000) -> str:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return ""
    return data[-limit:].decode("utf-8", errors="replace").strip()


def run_paths(
    paths: list[pathlib.Path],
    *,
    timeout: float = DEFAULT_TIMEOUT,
    progress: bool = True,
) -> list[Finding]:
    """Run every stress case found under `paths`; `timeout` is per case, in seconds."""
    return run_paths_report(paths, timeout=timeout, progress=progress)[0]


def run_paths_report(
    paths: list[pathlib.Path],
    *,
    timeout: float = DEFAULT_TIMEOUT,
    progress: bool = True,
    device: Device = INTERPRETER,
    jobs: int | None = None,
    repeats: int = 3,
    redzones: bool = True,
    sanitizer: str | None = None,
    sanitize_all: bool = False,
    large: bool = False,
    bench: bool = False,
) -> tuple[list[Finding], DynamicReport]:
    """`run_paths`, plus the stress matrix (every executed combination and its status).

    On a GPU, `large` adds a pass at sizes past 2**31 elements and `bench` times the cases that
    passed (the performance table). On the interpreter the table stays empty (its timings say
    nothing about a GPU kernel); `DynamicReport.performance_note` says so.
    """
    files = discover(paths)
    options = ChildOptions(device.kind, timeout, repeats, redzones)
    slots = jobs or default_jobs(device)
    report = DynamicReport(
        device=device.description,
        performance_note=CPU_PERFORMANCE_NOTE if device.kind == "interpreter" else None,
    )
    times_path = bytecode_cache().parent / f"unit-times-{device.kind}.json"
    times: dict[str, float] = {}
    units = plan_units(files, slots, load_times(times_path))
    findings, cells = _run_units(units, options, device, slots, progress, times)
    save_times(times_path, times)
    report.stress.extend(cells)
    if large:
        big = jobs or max(device.gpus, 1)  # one child per GPU: each needs the whole card
        more, cells = _run_units(
            plan_units(files, big), replace(options, large=True), device, big, progress
        )
        report.stress.extend(cells)
        known = {(f.code, f.path, f.line, f.properties.get("case")) for f in findings}
        findings += [
            f for f in more if (f.code, f.path, f.line, f.properties.get("case")) not in known
        ]
    if bench:
        from triton_lint.dynamic.bench_runner import bench_files

        timed = bench_files(files, findings, timeout)
        report.performance = timed.rows
        findings += timed.findings
        report.performance_note = timed.note()
    if sanitizer is not None:
        for f in files:
            names = [n for n, _line in case_names(f.read_text(encoding="utf-8", errors="replace"))]
            failing = {x.properties.get("case") for x in findings if x.path == str(f)}
            chosen = names if sanitize_all else [n for n in names if n in failing]
            if chosen:
                findings.extend(sanitize_file(f, chosen, sanitizer, timeout))
    return sorted(findings, key=Finding.sort_key), report


def _run_units(
    units: list[Unit],
    options: ChildOptions,
    device: Device,
    slots: int,
    progress: bool,
    times: dict[str, float] | None = None,
) -> tuple[list[Finding], list[StressCell]]:
    """Run the units on `slots` parallel children (one GPU each); results in file order, each
    unit's wall time into `times` (by `unit_key`)."""
    gpus = list(range(device.gpus)) if device.kind == "cuda" else []
    free = list(range(slots))
    # One warm child per slot (so per GPU): started once, kept across units and files.
    children = [
        WarmChild(options, gpus[slot % len(gpus)] if gpus and device.gpus > 1 else None)
        for slot in range(slots)
    ]

    bar = None
    if progress and sys.stderr.isatty():
        total = sum(len(u.only) if u.only is not None else case_count(u.path) for u in units)
        label = "large cases" if options.large else "stress cases"
        bar = Progress(Counter(str(u.path) for u in units), total, label)

    def work(unit: Unit) -> tuple[list[Finding], list[StressCell]]:
        slot = free.pop()
        start = time.monotonic()
        try:
            only = list(unit.only) if unit.only is not None else None
            return run_file_report(
                unit.path, only=only, options=options, child=children[slot], progress=bar
            )
        finally:
            if times is not None:
                times[unit_key(unit)] = time.monotonic() - start
            free.append(slot)
            if bar is not None:
                bar.unit_done(str(unit.path))

    with ThreadPoolExecutor(max_workers=slots) as pool:
        futures = [pool.submit(work, u) for u in units]
        results = [fut.result() for fut in futures]
    # Findings and cells in file and case order, whatever order the units ran in.
    results = [r for _u, r in sorted(zip(units, results, strict=True), key=lambda ur: ur[0].order)]
    for child in children:
        child.close()
    if bar is not None:
        bar.close()
    findings = [f for found, _ in results for f in found]
    return findings, [c for _, cells in results for c in cells]
