"""Parent side of the dynamic engine: run stress cases in child processes.

Never imports torch or triton: each file's cases run in `python -m triton_lint.dynamic.child`
with `TRITON_INTERPRET=1`. A case that crashes or exceeds the timeout becomes a TL908 finding and
the child is restarted after that case, so one bad case never hides the others.

Besides findings the child reports every combination it executed (dims x dtypes x value pattern
x layout) with its status; `run_paths_report` turns those into the stress matrix of a
`DynamicReport` (`RunResult.dynamic`), which the Markdown report shows.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from typing import Any

from triton_lint.dynamic.codes import CODES
from triton_lint.dynamic_report import DynamicReport, StressCell
from triton_lint.finding import Category, Finding, RelatedLocation, Severity, Span

DEFAULT_TIMEOUT = 300.0
#: Where the stress cases run and why the performance table stays empty there.
CPU_DEVICE = "CPU (Triton interpreter, TRITON_INTERPRET=1)"
CPU_PERFORMANCE_NOTE = (
    "No timings: the stress cases ran under Triton's CPU interpreter, whose timings say nothing "
    "about GPU performance. Benchmarks need a GPU run."
)
_SKIP_DIRS = {
    ".venv",
    "venv",
    ".git",
    "__pycache__",
    "node_modules",
    ".tox",
    "build",
    "dist",
}
_PACKAGE_ROOT = str(pathlib.Path(__file__).resolve().parents[2])


def discover(paths: Iterable[pathlib.Path]) -> list[pathlib.Path]:
    """Python files under `paths` that mention `stress.case` (only those are imported)."""
    found: list[pathlib.Path] = []
    for p in paths:
        p = pathlib.Path(p)
        if p.is_dir():
            files: Iterable[pathlib.Path] = sorted(
                f for f in p.rglob("*.py") if not (_SKIP_DIRS & set(f.relative_to(p).parts[:-1]))
            )
        else:
            files = [p]
        for f in files:
            try:
                if f.suffix == ".py" and "stress.case" in f.read_text(
                    encoding="utf-8", errors="replace"
                ):
                    found.append(f)
            except OSError:
                continue
    return found


def finding_from_dict(d: dict[str, Any], path_map: dict[str, str]) -> Finding:
    """Rebuild a Finding sent by the child; paths mapped back to the user's spelling."""
    code = d["code"]
    meta = CODES[code]
    line = int(d.get("line") or 1)
    path = str(d.get("path") or "")
    path = path_map.get(os.path.realpath(path), path)
    related = tuple(
        RelatedLocation(
            path_map.get(os.path.realpath(str(r["path"])), str(r["path"])),
            Span(
                int(r["line"]),
                int(r.get("column") or 1),
                int(r.get("end_line") or r["line"]),
                int(r.get("end_column") or 1),
            ),
            str(r.get("message") or ""),
        )
        for r in d.get("related") or ()
    )
    return Finding(
        path=path,
        span=Span(
            line,
            int(d.get("column") or 1),
            int(d.get("end_line") or line),
            int(d.get("end_column") or 1),
        ),
        code=code,
        name=d.get("name") or meta.name,
        severity=Severity(d.get("severity") or meta.severity.value),
        category=Category(d.get("category") or meta.category.value),
        message=d["message"],
        kernel=d.get("kernel"),
        properties=dict(d.get("properties") or {}),
        related=related,
    )


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


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["TRITON_INTERPRET"] = "1"
    env["PYTHONPATH"] = _PACKAGE_ROOT + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else ""
    )
    env.setdefault("OMP_NUM_THREADS", "1")
    return env


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
    timeout: float = DEFAULT_TIMEOUT,
    on_case: Callable[[str], None] | None = None,
) -> tuple[list[Finding], list[StressCell]]:
    """`run_file`, plus one stress-matrix cell per combination the child executed."""
    display = str(path)
    real = os.path.realpath(path)
    path_map = {real: display}
    findings: list[Finding] = []
    cells: list[StressCell] = []
    skip = 0
    while True:
        with tempfile.TemporaryDirectory(prefix="tl-dyn-") as tmp:
            out = os.path.join(tmp, "events.jsonl")
            err = os.path.join(tmp, "stderr.txt")
            cmd = [
                sys.executable,
                "-m",
                "triton_lint.dynamic.child",
                "--file",
                real,
                "--out",
                out,
                "--skip",
                str(skip),
            ]
            for name in only or []:
                cmd += ["--only", name]
            with open(err, "wb") as errfh:
                proc = subprocess.Popen(
                    cmd,
                    stdout=subprocess.DEVNULL,
                    stderr=errfh,
                    stdin=subprocess.DEVNULL,
                    env=_child_env(),
                )
                restart = _watch(
                    proc, out, err, timeout, display, path_map, findings, cells, on_case
                )
            if restart is None:
                return findings, cells
            skip = restart


def _watch(
    proc: subprocess.Popen[bytes],
    out: str,
    err: str,
    timeout: float,
    display: str,
    path_map: dict[str, str],
    findings: list[Finding],
    cells: list[StressCell],
    on_case: Callable[[str], None] | None,
) -> int | None:
    """Follow the child's event file; return the case to restart from, or None."""
    pos = 0
    lines: list[int] = []
    current: tuple[int, str] | None = None
    combo: dict[str, Any] | None = None  # the combination running now (started, not done)
    started = time.monotonic()
    buf = ""
    while True:
        done = proc.poll() is not None
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
                if kind == "cases":
                    _names, lines = ev["names"], ev["lines"]
                elif kind == "start":
                    current = (ev["index"], ev["name"])
                    started = time.monotonic()
                    if on_case is not None:
                        on_case(ev["name"])
                elif kind == "combo_start":
                    combo = ev
                elif kind == "combo":
                    combo = None
                    if current is not None:
                        cells.append(_cell(current[1], ev))
                elif kind == "done":
                    findings.extend(finding_from_dict(d, path_map) for d in ev["findings"])
                    current = None
                    combo = None
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
            return idx + 1
        if not done and time.monotonic() - started > timeout:
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
            return idx + 1
        time.sleep(0.05)


def _cell(case: str, ev: dict[str, Any] | None, status: str | None = None) -> StressCell:
    """A stress-matrix cell from a `combo` event (or the combo that crashed or hung)."""
    ev = ev or {}
    codes = ev.get("codes") or (["TL908"] if status in ("error", "timeout") else [])
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
) -> tuple[list[Finding], DynamicReport]:
    """`run_paths`, plus the stress matrix (every executed combination and its status).

    The performance table stays empty: the cases run under the CPU interpreter, whose timings
    are meaningless for a GPU kernel; `DynamicReport.performance_note` says so.
    """
    files = discover(paths)
    findings: list[Finding] = []
    report = DynamicReport(device=CPU_DEVICE, performance_note=CPU_PERFORMANCE_NOTE)
    show = progress and sys.stderr.isatty()
    if not show:
        for f in files:
            found, cells = run_file_report(f, timeout=timeout)
            findings.extend(found)
            report.stress.extend(cells)
        return sorted(findings, key=Finding.sort_key), report
    import click

    with click.progressbar(
        files,
        label="stress cases",
        file=sys.stderr,
        item_show_func=lambda f: str(f or ""),
    ) as bar:
        for f in bar:
            found, cells = run_file_report(f, timeout=timeout, on_case=lambda name: None)
            findings.extend(found)
            report.stress.extend(cells)
    return sorted(findings, key=Finding.sort_key), report
