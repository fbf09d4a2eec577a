"""Parent side of `--compile-only`: one child per file and group of architectures, `jobs` at
a time (with fewer files than jobs, a file's architectures are split over several children).

Never imports torch or triton. Each child compiles one file's launches for its architectures
into Triton's on-disk cache under `cache_dir` (so a second run, or another file launching the
same kernel, reuses the binaries); a child that crashes or exceeds the timeout becomes a TL908
finding at the case it was compiling, and the other units go on.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from triton_lint.compile.findings import Row, compile_findings, config_label, merge
from triton_lint.compile.targets import Arch
from triton_lint.dynamic.cases import discover
from triton_lint.dynamic.child_io import child_env, finding_from_dict
from triton_lint.finding import Finding


@dataclass
class CompileResult:
    """Findings, every variant compiled (merged per kernel x config x arch) and the archs."""

    findings: list[Finding] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    archs: list[str] = field(default_factory=list)


def compile_unit(
    path: pathlib.Path, archs: list[Arch], timeout: float, cache_dir: str
) -> tuple[list[Row], list[Finding]]:
    """Compile one file's launches for `archs` in child processes: one that crashes or goes
    `timeout` seconds without reporting (a hung compile or wrapper) is a TL908 at the kernel
    it was compiling (else its case), and a fresh child goes on after that compile."""
    real = os.path.realpath(path)
    names = ", ".join(a.name for a in archs)
    rows: list[Row] = []
    findings: list[Finding] = []
    env = child_env("cuda", cache_dir, debug=False)
    env.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # Triton's default, said aloud (3.9 warns)
    skip_cases, skip = 0, 0
    with tempfile.TemporaryDirectory(prefix="tl-compile-") as tmp:
        while True:
            out = os.path.join(tmp, f"events-{skip_cases}-{skip}.jsonl")
            err = os.path.join(tmp, f"stderr-{skip_cases}-{skip}.txt")
            cmd = [sys.executable, "-m", "triton_lint.compile.child", "--file", real, "--out", out]
            cmd += [f"--arch={a.capability}" for a in archs] + [
                f"--skip-cases={skip_cases}",
                f"--skip={skip}",
            ]
            with open(err, "wb") as errfh:
                proc = subprocess.Popen(
                    cmd, stdout=subprocess.DEVNULL, stderr=errfh, stdin=subprocess.DEVNULL, env=env
                )
                hung = _wait(proc, out, timeout)
            events = _events(out)
            found, failures = _collect(events, str(path), real, names)
            rows += found
            findings += failures
            if events and events[-1]["event"] == "finished":
                return rows, findings
            tail = pathlib.Path(err).read_text(encoding="utf-8", errors="replace")[-300:]
            why = (
                f"went {timeout:.0f}s without finishing (hang?) and was killed"
                if hung
                else f"ended the compile child early (exit status {proc.returncode})"
            )
            last = events[-1] if events else None
            pending = last if last is not None and last["event"] == "compiling" else None
            case = next((e for e in reversed(events) if e["event"] == "start"), None)
            if pending is not None:
                what = (
                    f"compiling `{pending['kernel']}` [{config_label(pending['config'])}] for "
                    f"sm_{pending['arch']} (stress case `{pending['case']}`)"
                )
                findings.append(
                    _failure(
                        real,
                        str(path),
                        int(pending["line"]),
                        f"{what} {why}; stderr: {tail}",
                        pending["case"],
                        names,
                        pending["path"],
                    )
                )
                skip = int(pending["index"])
                continue
            if case is None or (last is not None and last["event"] == "done"):
                # while importing the module, or after the last case: nothing more to run
                message = f"the compile child {why}; stderr: {tail}"
                findings.append(_failure(real, str(path), 1, message, "<import>", names))
                return rows, findings
            message = f"stress case `{case['name']}` {why}; stderr: {tail}"
            line = int(case["line"])
            findings.append(_failure(real, str(path), line, message, case["name"], names))
            skip_cases, skip = int(case["index"]) + 1, 0


def _wait(proc: subprocess.Popen[bytes], out: str, timeout: float) -> bool:
    """Wait for the child; kill it when its event file stays unchanged `timeout` seconds
    (True: it was killed)."""
    size, since = -1, time.monotonic()
    while proc.poll() is None:
        now_size = os.path.getsize(out) if os.path.exists(out) else 0
        if now_size != size:
            size, since = now_size, time.monotonic()
        elif time.monotonic() - since > timeout:
            proc.kill()
            proc.wait()
            return True
        time.sleep(0.1)
    return False


def _events(out: str) -> list[dict[str, Any]]:
    if not os.path.exists(out):
        return []
    with open(out, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip().endswith("}")]


def _failure(
    real: str, display: str, line: int, message: str, case: str, names: str, where: str = ""
) -> Finding:
    """A TL908 in the file (or, for a kernel defined elsewhere, at its `def` there)."""
    path = where if where and os.path.realpath(where) != real else real
    d = {
        "code": "TL908",
        "path": path,
        "line": line,
        "message": message,
        "properties": {"case": case, "architectures": names},
    }
    return finding_from_dict(d, {real: display})


def _collect(
    events: list[dict[str, Any]], display: str, real: str, names: str
) -> tuple[list[Row], list[Finding]]:
    """The variants a child reported, and TL908 for an import or a wrapper that failed."""
    rows: list[Row] = []
    findings: list[Finding] = []
    current: dict[str, Any] | None = None
    for ev in events:
        kind = ev["event"]
        if kind == "start":
            current = ev
        elif kind == "done":
            current = None
        elif kind == "variant":
            rows.append({k: v for k, v in ev.items() if k != "event"})
        elif kind == "import_error":
            message = f"importing the module failed: {ev['error']}"
            findings.append(_failure(real, display, 1, message, "<import>", names))
        elif kind == "case_error" and current is not None:
            message = f"stress case `{current['name']}`: {ev['error'][-300:]}"
            findings.append(
                _failure(real, display, int(current["line"]), message, current["name"], names)
            )
    for row in rows:
        if os.path.realpath(row["path"]) == real:
            row["path"] = display
    return rows, findings


def compile_paths(
    paths: list[pathlib.Path],
    archs: list[Arch],
    *,
    jobs: int = 1,
    timeout: float = 300.0,
    cache_dir: str | None = None,
) -> CompileResult:
    """Compile every stress case's launches under `paths` for `archs` (see the module doc)."""
    files = discover(paths)
    groups = max(1, min(len(archs), jobs // max(len(files), 1)))
    chunks = [archs[i::groups] for i in range(groups)]
    units = [(f, chunk) for f in files for chunk in chunks]
    with tempfile.TemporaryDirectory(prefix="tl-compile-cache-") as scratch:
        cache = cache_dir or scratch
        os.makedirs(cache, exist_ok=True)
        with ThreadPoolExecutor(max_workers=max(jobs, 1)) as pool:
            results = list(pool.map(lambda u: compile_unit(u[0], u[1], timeout, cache), units))
    rows = merge(r for found, _ in results for r in found)
    failures = [f for _, found in results for f in found]
    return CompileResult(
        findings=sorted([*compile_findings(rows), *failures], key=Finding.sort_key),
        rows=sorted(
            rows,
            key=lambda r: (
                r["path"],
                r["line"],
                r["kernel"],
                json.dumps(r["config"], default=str),
                r["arch"],
            ),
        ),
        archs=[a.name for a in archs],
    )
