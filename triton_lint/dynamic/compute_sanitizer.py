"""`--sanitizer memcheck|initcheck|racecheck`: re-run cases under NVIDIA's compute-sanitizer and
turn its XML records into findings (parent side, no torch).

The child runs each combination once (`--plain`: no reference, no probes) without red zones and
with PyTorch's caching allocator off (`PYTORCH_NO_CUDA_MEMORY_CACHING=1`), so every tensor is its
own allocation and the tool sees its real bounds. Triton emits line info, so a record's `<where>`
names the kernel's Python file and line; the first host frame outside torch, triton and this
package is the launch site. API-error records ("Program hit cudaError...") are consequences of
the first error and are dropped.
"""

from __future__ import annotations

import os
import shutil
from typing import TYPE_CHECKING, Any

from triton_lint.dynamic.codes import CODES
from triton_lint.finding import Finding, RelatedLocation, Span

if TYPE_CHECKING:
    import xml.etree.ElementTree as ET

TOOLS = ("memcheck", "initcheck", "racecheck")
#: The code each tool's records become.
TOOL_CODES = {"memcheck": "TL901", "initcheck": "TL913", "racecheck": "TL904"}
_LIBRARY_PARTS = (
    f"{os.sep}site-packages{os.sep}torch{os.sep}",
    f"{os.sep}site-packages{os.sep}triton{os.sep}",
    f"triton_lint{os.sep}dynamic{os.sep}",
)


class SanitizerUnavailable(Exception):
    """compute-sanitizer is not installed (the CLI exits with code 2)."""


def find_compute_sanitizer() -> str:
    """The compute-sanitizer executable: on PATH, under $CUDA_HOME/bin or /usr/local/cuda/bin."""
    found = shutil.which("compute-sanitizer")
    if found:
        return found
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root:
            candidate = os.path.join(root, "bin", "compute-sanitizer")
            if os.access(candidate, os.X_OK):
                return candidate
    raise SanitizerUnavailable(
        "--sanitizer needs NVIDIA compute-sanitizer (part of the CUDA toolkit), which is not on "
        "PATH, in $CUDA_HOME/bin or in /usr/local/cuda/bin"
    )


def command(tool: str, executable: str, xml_path: str) -> list[str]:
    """The prefix that runs a child under `tool`, saving its records to `xml_path`."""
    return [
        executable,
        "--tool",
        tool,
        "--xml",
        "--save",
        xml_path,
        "--print-limit",
        "1000",
        "--target-processes",
        "application-only",
    ]


def _text(node: ET.Element | None, tag: str) -> str | None:
    child = node.find(tag) if node is not None else None
    return child.text.strip() if child is not None and child.text else None


def _xyz(node: ET.Element | None) -> list[int] | None:
    if node is None:
        return None
    return [int(_text(node, axis) or 0) for axis in ("x", "y", "z")]


def parse_records(xml_text: str) -> list[dict[str, Any]]:
    """Error records with a kernel source line: text, file, line, kernel, block, thread, launch."""
    import xml.etree.ElementTree as ET  # only a sanitised run reads XML; a static run never

    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError:
        return []
    records = []
    for rec in root.iter("record"):
        what = rec.find("what")
        where = rec.find("where")
        text = _text(what, "text") or ""
        path, line = _text(where, "path"), _text(where, "line")
        if text.startswith("Program hit") or not path or not line:
            continue
        who = rec.find("who")
        launch = None
        for frame in rec.iter("frame"):
            fpath, fline = _text(frame, "path"), _text(frame, "line")
            if fpath and fline and not any(p in fpath for p in _LIBRARY_PARTS):
                launch = (fpath, int(fline), _text(frame, "func") or "?")
                break
        records.append(
            {
                "text": text,
                "path": path,
                "line": int(line),
                "kernel": _text(where, "func"),
                "block": _xyz(who.find("blockIdx") if who is not None else None),
                "thread": _xyz(who.find("threadIdx") if who is not None else None),
                "address": _text(what, "address"),
                "launch": launch,
            }
        )
    return records


def findings_from_records(
    records: list[dict[str, Any]], tool: str, case: str, path_map: dict[str, str]
) -> list[Finding]:
    """One finding per (code, file, line): the first record's block and thread, the count."""
    code = TOOL_CODES[tool]
    meta = CODES[code]
    out: dict[tuple[str, int], Finding] = {}
    for r in records:
        path = path_map.get(os.path.realpath(r["path"]), r["path"])
        key = (path, r["line"])
        if key in out:
            out[key].properties["occurrences"] += 1
            continue
        related = ()
        if r["launch"] is not None:
            lpath, lline, lfunc = r["launch"]
            related = (
                RelatedLocation(
                    path_map.get(os.path.realpath(lpath), lpath),
                    Span(lline, 1, lline, 1),
                    f"kernel launched here (in `{lfunc}`)",
                ),
            )
        out[key] = Finding(
            path=path,
            span=Span(r["line"], 1, r["line"], 1),
            code=code,
            name=meta.name,
            severity=meta.severity,
            category=meta.category,
            message=(
                f"compute-sanitizer {tool}: {r['text']} in block {tuple(r['block'] or ())}, "
                f"thread {tuple(r['thread'] or ())} (stress case `{case}`)"
            ),
            kernel=r["kernel"],
            properties={
                "case": case,
                "tool": tool,
                "occurrences": 1,
                "device": "cuda",
                "witness": {"block": r["block"], "thread": r["thread"], "address": r["address"]},
            },
            related=related,
        )
    return list(out.values())
