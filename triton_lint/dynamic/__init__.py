"""The dynamic engine: run `@stress.case` wrappers natively on a GPU or under the sanitising
Triton interpreter.

Importing this package is cheap (no torch/triton); the work happens in child processes.
Entry points for the CLI: `run_paths_report` (findings and the stress matrix), `run_paths`
(findings only) and `confirm`.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

from triton_lint.finding import Finding

#: Where each name this package exports lives: imported when first read (PEP 562), so a
#: static run that reads one small module of the package (`dynamic_report`, `codes`) loads
#: no runner, no process pool and no XML parser.
_EXPORTS = {
    "CODES": "codes",
    "DynamicCode": "codes",
    "DEFAULT_TIMEOUT": "runner",
    "Device": "devices",
    "DeviceError": "devices",
    "discover": "cases",
    "resolve_device": "devices",
    "run_file": "runner",
    "run_file_report": "runner",
    "run_paths": "runner",
    "run_paths_report": "runner",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


__all__ = sorted([*_EXPORTS, "confirm"])

#: Static codes a dynamic finding on the same line confirms, and the dynamic codes that do:
#: an out-of-bounds access or a masked-lane read for the mask rules, a real int32 overflow (on
#: a GPU usually from `--large`) for TL104.
CONFIRMED_BY = {
    "TL101": frozenset({"TL901", "TL905"}),
    "TL102": frozenset({"TL901", "TL905"}),
    "TL103": frozenset({"TL901", "TL905"}),
    "TL104": frozenset({"TL910"}),
}


def confirm(static: list[Finding], dynamic: list[Finding]) -> None:
    """Mark static findings that a dynamic finding of a `CONFIRMED_BY` code hit (in place)."""
    hits: dict[tuple[str, int], list[Finding]] = {}
    confirming = frozenset().union(*CONFIRMED_BY.values())
    for d in dynamic:
        if d.code in confirming:
            hits.setdefault((os.path.realpath(d.path), d.line), []).append(d)
    for s in static:
        if s.code not in CONFIRMED_BY or s.properties.get("confirmed_at_runtime"):
            continue
        real = os.path.realpath(s.path)
        matched = [
            d
            for line in range(s.span.line, max(s.span.end_line, s.span.line) + 1)
            for d in hits.get((real, line), [])
            if d.code in CONFIRMED_BY[s.code]
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
