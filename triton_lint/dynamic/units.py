"""How a dynamic run's files are cut into units of work for its children, and how many
children run them (parent side; never imports torch or triton)."""

from __future__ import annotations

import os
import pathlib
from collections import Counter
from dataclasses import dataclass

from triton_lint.dynamic.cases import case_names
from triton_lint.dynamic.devices import Device


@dataclass(frozen=True)
class Unit:
    """One child's work: a file and the cases to run there (None: all)."""

    path: pathlib.Path
    only: tuple[str, ...] | None = None


def plan_units(files: list[pathlib.Path], jobs: int) -> list[Unit]:
    """One unit per file; while there are fewer units than jobs, split the largest file's cases
    in two, so every GPU (or CPU job) gets work."""
    units: list[tuple[pathlib.Path, list[str]]] = []
    for f in files:
        try:
            names = [n for n, _line in case_names(f.read_text(encoding="utf-8", errors="replace"))]
        except OSError:
            names = []
        units.append((f, names))
    split = list(units)
    while len(split) < jobs:
        largest = max(range(len(split)), key=lambda i: len(split[i][1]), default=None)
        if largest is None or len(split[largest][1]) < 2:
            break
        f, names = split.pop(largest)
        half = len(names) // 2
        split[largest:largest] = [(f, names[:half]), (f, names[half:])]
    per_file = Counter(f for f, _names in split)
    return [Unit(f, None if per_file[f] == 1 else tuple(n)) for f, n in split]


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
