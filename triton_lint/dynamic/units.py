"""How a dynamic run's files are cut into units of work for its children, and how many
children run them (parent side; never imports torch or triton)."""

from __future__ import annotations

import json
import os
import pathlib
from dataclasses import dataclass, replace

from triton_lint.dynamic.cases import case_names
from triton_lint.dynamic.devices import Device


@dataclass(frozen=True)
class Unit:
    """One child's work: a file and the cases to run there (None: all)."""

    path: pathlib.Path
    only: tuple[str, ...] | None = None
    #: Its place in file and case order (results are reported in that order).
    order: int = 0


def plan_units(
    files: list[pathlib.Path], jobs: int, times: dict[str, float] | None = None
) -> list[Unit]:
    """One unit per file with one job; with several, one unit per case, longest first.

    A native run's time goes into compiling each case's kernels, and one file (a matmul case
    with many shapes) can take longer than all the others together: whole-file units left one
    child compiling it while the rest sat idle. Per-case units spread it; `times` (each case's
    wall time in an earlier run, `unit_key`) orders them longest first, so the longest case
    does not start last; cases never timed go first, in file order."""
    units: list[tuple[pathlib.Path, list[str]]] = []
    for f in files:
        try:
            names = [n for n, _line in case_names(f.read_text(encoding="utf-8", errors="replace"))]
        except OSError:
            names = []
        units.append((f, names))
    if jobs <= 1:
        return [Unit(f) for f, _names in units]
    split = [Unit(f, (n,) if names else None) for f, names in units for n in names or [""]]
    split = [replace(u, order=i) for i, u in enumerate(split)]  # a file without cases: whole
    known = times or {}
    return sorted(split, key=lambda u: -known.get(unit_key(u), float("inf")))


def unit_key(unit: Unit) -> str:
    """How a unit's time is remembered between runs: its file and cases."""
    return f"{os.path.realpath(unit.path)}::{','.join(unit.only or ())}"


def load_times(path: pathlib.Path) -> dict[str, float]:
    """Unit times of earlier runs (none when the file is missing or unreadable)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): float(v) for k, v in data.items()} if isinstance(data, dict) else {}


def save_times(path: pathlib.Path, times: dict[str, float]) -> None:
    """Remember this run's unit times (merged with earlier ones); best effort."""
    merged = {**load_times(path), **{k: round(v, 3) for k, v in times.items()}}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(merged, sort_keys=True), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass


def case_count(path: pathlib.Path) -> int:
    try:
        return len(case_names(path.read_text(encoding="utf-8", errors="replace")))
    except OSError:
        return 0


def default_jobs(device: Device) -> int:
    """Children when `--jobs` is not given: 1 on the interpreter; on a GPU several warm children
    per card (half the cores, at most 8 per GPU): a native run spends most of its time compiling
    kernels, which is CPU work, so one child per GPU would leave the other cores idle."""
    if device.kind != "cuda":
        return 1
    gpus = max(device.gpus, 1)
    return gpus * max(1, min(8, (os.cpu_count() or 2) // (2 * gpus)))
