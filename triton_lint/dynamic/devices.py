"""Which device the stress cases run on: `--device auto|cuda|interpreter` (parent side).

The parent never imports torch (1-2 s); a short child asks torch how many CUDA GPUs it sees.
`auto` runs natively when there is one and `TRITON_INTERPRET=1` is not set, else under the
interpreter.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass

from triton_lint.config import DEVICES

INTERPRETER_DESCRIPTION = "CPU (Triton interpreter, TRITON_INTERPRET=1)"
_PROBE = (
    "import json, torch\n"
    "n = torch.cuda.device_count() if torch.cuda.is_available() else 0\n"
    "print(json.dumps({'gpus': n, 'name': torch.cuda.get_device_name(0) if n else None}))\n"
)


class DeviceError(Exception):
    """The requested device cannot be used (the CLI exits with code 2)."""


@dataclass(frozen=True)
class Device:
    """Where the cases run: `kind` is "cuda" or "interpreter"."""

    kind: str
    description: str
    gpus: int = 0


INTERPRETER = Device("interpreter", INTERPRETER_DESCRIPTION)


def probe_gpus(timeout: float = 120.0) -> tuple[int, str | None]:
    """(CUDA GPUs torch sees, the first one's name); (0, None) without torch or a GPU."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    try:
        out = subprocess.run(
            [sys.executable, "-c", _PROBE],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            stdin=subprocess.DEVNULL,
        )
        data = json.loads(out.stdout.strip().splitlines()[-1])
        return int(data["gpus"]), data.get("name")
    except (OSError, subprocess.SubprocessError, ValueError, IndexError, KeyError):
        return 0, None


def resolve_device(requested: str) -> Device:
    """The device for `--device requested` (see the module docstring)."""
    if requested not in DEVICES:
        raise DeviceError(f"unknown device `{requested}` (choose from {', '.join(DEVICES)})")
    if requested == "interpreter":
        return INTERPRETER
    if requested == "auto" and os.environ.get("TRITON_INTERPRET") == "1":
        return INTERPRETER
    gpus, name = probe_gpus()
    if gpus:
        return Device("cuda", f"CUDA ({name})" + (f" x{gpus}" if gpus > 1 else ""), gpus)
    if requested == "cuda":
        raise DeviceError(
            "--device cuda: torch sees no CUDA GPU (is the CUDA build of torch installed?); "
            "use --device interpreter to run the cases on the CPU"
        )
    return INTERPRETER
