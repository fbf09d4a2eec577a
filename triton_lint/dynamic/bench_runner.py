"""Parent side of `--bench`: time the cases that passed their checks, one child per file.

The timing child runs without `TRITON_DEBUG` (its device asserts and overflow checks slow every
kernel) and after the checks, so a case that faulted or failed is not timed: its numbers would
describe a wrong kernel. Never imports torch or triton.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field

from triton_lint.dynamic.cases import case_names
from triton_lint.dynamic.child_io import child_env, finding_from_dict
from triton_lint.dynamic.dynamic_report import PerfRow
from triton_lint.finding import Finding, Severity


@dataclass
class BenchResult:
    """What `--bench` adds to a run: table rows, TL914 findings and what was not timed."""

    rows: list[PerfRow] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    untimed: list[str] = field(default_factory=list)  # "case: why"
    #: Baselines that could not run at a size ("case (size): torch.compile: why").
    baseline_errors: list[str] = field(default_factory=list)

    def note(self) -> str | None:
        """What the performance table does not show, for the report."""
        parts = []
        if self.untimed:
            parts.append("Not timed: " + "; ".join(self.untimed) + ".")
        if self.baseline_errors:
            parts.append("Baselines that did not run: " + "; ".join(self.baseline_errors) + ".")
        return " ".join(parts) or None


def bench_files(files: list[pathlib.Path], checked: list[Finding], timeout: float) -> BenchResult:
    """Time every case of `files` with no error finding in `checked`."""
    result = BenchResult()
    for path in files:
        failing = {
            f.properties.get("case")
            for f in checked
            if f.severity is Severity.ERROR and os.path.realpath(f.path) == os.path.realpath(path)
        }
        names = [n for n, _ in case_names(path.read_text(encoding="utf-8", errors="replace"))]
        result.untimed += [f"{n}: failed its checks" for n in names if n in failing]
        names = [n for n in names if n not in failing]
        if not names:
            continue
        real = os.path.realpath(path)
        with tempfile.TemporaryDirectory(prefix="tl-bench-") as tmp:
            out = os.path.join(tmp, "events.jsonl")
            cmd = [sys.executable, "-m", "triton_lint.dynamic.child", "--file", real]
            cmd += ["--out", out, "--device", "cuda", "--bench"]
            for name in names:
                cmd += ["--only", name]
            env = child_env("cuda", os.path.join(tmp, "cache"), debug=False)
            why = _run(cmd, env, timeout * len(names))
            done = _read_events(out, path, real, result)
            result.untimed += [f"{n}: {why}" for n in names if n not in done and why]
    return result


def _run(cmd: list[str], env: dict[str, str], timeout: float) -> str | None:
    """Run the timing child; why it did not finish, or None."""
    try:
        proc = subprocess.run(
            cmd,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            env=env,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return f"timing did not finish within {timeout:.0f}s"
    if proc.returncode != 0:
        tail = proc.stderr.decode("utf-8", errors="replace").strip().splitlines()[-1:]
        return f"the timing child exited with status {proc.returncode} ({' '.join(tail)[:200]})"
    return None


def _read_events(out: str, path: pathlib.Path, real: str, result: BenchResult) -> set[str]:
    """Rows and findings from the child's `bench` events; the names of the cases timed."""
    done: set[str] = set()
    try:
        with open(out, encoding="utf-8") as fh:
            events = [json.loads(line) for line in fh if line.strip()]
    except OSError:
        return done
    for ev in events:
        if ev["event"] == "import_error":
            result.untimed.append(f"{path}: importing the module failed: {ev['error']}")
        if ev["event"] != "bench":
            continue
        done.add(ev["name"])
        for row in ev["rows"]:
            if "triton_ms" not in row:
                result.untimed.append(f"{ev['name']} ({row.get('size', '?')}): {row['error']}")
                continue
            result.rows.append(perf_row(row))
            where = f"{ev['name']} ({row['size']})"
            for key, label in (("torch_error", "PyTorch"), ("compile_error", "torch.compile")):
                if row.get(key):
                    result.baseline_errors.append(f"{where}: {label}: {row[key]}")
        result.findings += [finding_from_dict(d, {real: str(path)}) for d in ev["findings"]]
    return done


def perf_row(row: dict[str, object]) -> PerfRow:
    """A table row from the child's numbers."""

    def number(key: str) -> float | None:
        value = row.get(key)
        return float(value) if isinstance(value, (int, float)) else None

    return PerfRow(
        kernel=str(row.get("kernel") or ""),
        size=str(row.get("size") or ""),
        triton_ms=float(row["triton_ms"]),  # type: ignore[arg-type]
        torch_ms=number("torch_ms"),
        bandwidth_gbs=number("bandwidth_gbs"),
        peak_gbs=number("peak_gbs"),
        compile_ms=number("compile_ms"),
        tflops=number("tflops"),
        case=str(row.get("case") or ""),
        elements=int(row["elements"]) if isinstance(row.get("elements"), int) else None,
    )
