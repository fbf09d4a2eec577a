"""The dynamic engine: run `@stress.case` wrappers natively on a GPU or under the sanitising
Triton interpreter.

Importing this package is cheap (no torch/triton); the work happens in child processes.
Entry points for the CLI: `run_paths_report` (findings and the stress matrix), `run_paths`
(findings only) and `confirm`.
"""

from __future__ import annotations

import os

from triton_lint.dynamic.cases import discover
from triton_lint.dynamic.codes import CODES, DynamicCode
from triton_lint.dynamic.devices import Device, DeviceError, resolve_device
from triton_lint.dynamic.runner import (
    DEFAULT_TIMEOUT,
    run_file,
    run_file_report,
    run_paths,
    run_paths_report,
)
from triton_lint.finding import Finding

__all__ = [
    "CODES",
    "DEFAULT_TIMEOUT",
    "Device",
    "DeviceError",
    "DynamicCode",
    "confirm",
    "discover",
    "resolve_device",
    "run_file",
    "run_file_report",
    "run_paths",
    "run_paths_report",
]

CONFIRMABLE_STATIC = frozenset({"TL101", "TL102", "TL103"})
CONFIRMING_DYNAMIC = frozenset({"TL901", "TL905"})


def confirm(static: list[Finding], dynamic: list[Finding]) -> None:
    """Mark TL101/TL102/TL103 findings hit at runtime by TL901/TL905 (in place)."""
    hits: dict[tuple[str, int], list[Finding]] = {}
    for d in dynamic:
        if d.code in CONFIRMING_DYNAMIC:
            hits.setdefault((os.path.realpath(d.path), d.line), []).append(d)
    for s in static:
        if s.code not in CONFIRMABLE_STATIC or s.properties.get("confirmed_at_runtime"):
            continue
        real = os.path.realpath(s.path)
        matched = [
            d
            for line in range(s.span.line, max(s.span.end_line, s.span.line) + 1)
            for d in hits.get((real, line), [])
        ]
        if not matched:
            continue
        codes = ", ".join(sorted({d.code for d in matched}))
        case = matched[0].properties.get("case")
        s.message = f"{s.message} (confirmed at runtime: {codes}" + (
            f" in stress case `{case}`)" if case else ")"
        )
        s.properties = {
            **s.properties,
            "confirmed_at_runtime": True,
            "confirmed_by": sorted({d.code for d in matched}),
        }
