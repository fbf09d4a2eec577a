"""compute-sanitizer runs (`--sanitizer`): each case of a file once per combination in a child
under the tool, its error records turned into findings."""

from __future__ import annotations

import contextlib
import os
import pathlib
import subprocess
import sys
import tempfile

from triton_lint.dynamic.child_io import child_env
from triton_lint.finding import Finding


def sanitize_file(path: pathlib.Path, cases: list[str], tool: str, timeout: float) -> list[Finding]:
    """Run `cases` of one file once per combination under compute-sanitizer `tool`. A case
    stops at its first fault: the error records of that combination are its witness, and a fresh
    child per later combination would cost a sanitizer start-up (seconds) each."""
    from triton_lint.dynamic import compute_sanitizer as cs

    executable = cs.find_compute_sanitizer()
    display, real = str(path), os.path.realpath(path)
    findings: list[Finding] = []
    with tempfile.TemporaryDirectory(prefix="tl-sanitize-") as tmp:
        for case in cases:
            xml_path = os.path.join(tmp, f"{case}.xml")
            out = os.path.join(tmp, f"{case}.jsonl")
            cmd = [
                *cs.command(tool, executable, xml_path),
                sys.executable,
                *("-m", "triton_lint.dynamic.child", "--file", real, "--out", out),
                *("--device", "cuda", "--no-redzones", "--plain", "--only", case),
            ]
            env = child_env("cuda", os.path.join(tmp, "cache"))
            env["PYTORCH_NO_CUDA_MEMORY_CACHING"] = "1"
            with contextlib.suppress(subprocess.TimeoutExpired):
                subprocess.run(
                    cmd,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    stdin=subprocess.DEVNULL,
                    env=env,
                    timeout=timeout * 4,
                )
            try:
                with open(xml_path, encoding="utf-8", errors="replace") as fh:
                    records = cs.parse_records(fh.read())
            except OSError:
                records = []
            findings.extend(cs.findings_from_records(records, tool, case, {real: display}))
    return findings
