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
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from triton_lint.compile.findings import Row, compile_findings, merge
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
    """Compile one file's launches for `archs` in a child process."""
    real = os.path.realpath(path)
    with tempfile.TemporaryDirectory(prefix="tl-compile-") as tmp:
        out = os.path.join(tmp, "events.jsonl")
        err = os.path.join(tmp, "stderr.txt")
        env = child_env("cuda", cache_dir, debug=False)
        env.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # Triton's default, said aloud (3.9 warns)
        cmd = [sys.executable, "-m", "triton_lint.compile.child", "--file", real, "--out", out]
        for arch in archs:
            cmd += ["--arch", str(arch.capability)]
        names = ", ".join(a.name for a in archs)
        why = None
        with open(err, "wb") as errfh:
            try:
                proc = subprocess.run(
                    cmd,
                    stdout=subprocess.DEVNULL,
                    stderr=errfh,
                    stdin=subprocess.DEVNULL,
                    env=env,
                    timeout=timeout,
                    check=False,
                )
                if proc.returncode != 0:
                    why = f"crashed the compile child (exit status {proc.returncode})"
            except subprocess.TimeoutExpired:
                why = (
                    f"did not compile for {arch.name} within {timeout:.0f}s (hang?); it was killed"
                )
        events = []
        if os.path.exists(out):
            with open(out, encoding="utf-8") as fh:
                events = [json.loads(line) for line in fh if line.strip()]
        tail = pathlib.Path(err).read_text(encoding="utf-8", errors="replace")[-300:]
    return _collect(events, str(path), real, names, why, tail)


def _collect(
    events: list[dict[str, Any]], display: str, real: str, names: str, why: str | None, tail: str
) -> tuple[list[Row], list[Finding]]:
    rows: list[Row] = []
    findings: list[Finding] = []
    current: dict[str, Any] | None = None

    def failed(line: int, message: str, case: str) -> None:
        d = {
            "code": "TL908",
            "path": real,
            "line": line,
            "message": message,
            "properties": {"case": case, "architectures": names},
        }
        findings.append(finding_from_dict(d, {real: display}))

    for ev in events:
        kind = ev["event"]
        if kind == "start":
            current = ev
        elif kind == "done":
            current = None
        elif kind == "variant":
            rows.append({k: v for k, v in ev.items() if k != "event"})
        elif kind == "import_error":
            failed(1, f"importing the module failed: {ev['error']}", "<import>")
        elif kind == "case_error" and current is not None:
            failed(
                int(current["line"]),
                f"compiling stress case `{current['name']}` for {names} failed: "
                + ev["error"][-300:],
                current["name"],
            )
    if why is not None:
        name = current["name"] if current else "<import>"
        failed(
            int(current["line"]) if current else 1,
            f"stress case `{name}` {why}; stderr: {tail}",
            name,
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
