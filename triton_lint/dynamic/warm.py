"""A warm child: one `triton_lint.dynamic.child --serve` process per GPU (or CPU job) that runs
unit after unit, so torch's import, the CUDA context and compiled kernels are paid once per run,
not once per file (parent side; never imports torch or triton).

A unit goes to the child as one JSON line on its stdin. A child that dies (a GPU fault that
left the CUDA context unusable, a crash, a timeout kill) is started again for the next unit;
the runner resumes the unit after the case or combination that ended it, so no case is lost or
run twice.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
from typing import Any, Protocol

from triton_lint.dynamic.child_io import child_env


class Options(Protocol):
    device: str
    repeats: int
    redzones: bool
    large: bool


class WarmChild:
    """One long-lived child process and the files it writes (see the module docstring)."""

    def __init__(self, options: Options, gpu: int | None) -> None:
        self.options = options
        self.gpu = gpu
        self.proc: subprocess.Popen[bytes] | None = None
        self.tmp = tempfile.TemporaryDirectory(prefix="tl-warm-")
        self.starts = 0
        self.err = ""

    def submit(self, unit: dict[str, Any]) -> tuple[subprocess.Popen[bytes], str]:
        """Hand `unit` to the child (started if none is alive): the process and its stderr."""
        proc = self.proc if self.proc is not None and self.proc.poll() is None else self._start()
        assert proc.stdin is not None
        try:
            proc.stdin.write((json.dumps(unit) + "\n").encode())
            proc.stdin.flush()
        except OSError:  # died between the check and the write: a fresh one takes the unit
            proc = self._start()
            assert proc.stdin is not None
            proc.stdin.write((json.dumps(unit) + "\n").encode())
            proc.stdin.flush()
        return proc, self.err

    def _start(self) -> subprocess.Popen[bytes]:
        self.starts += 1
        root = self.tmp.name
        self.err = os.path.join(root, f"stderr-{self.starts}.txt")
        o = self.options
        cmd = [
            sys.executable,
            "-m",
            "triton_lint.dynamic.child",
            "--serve",
            *o.child_flags(self.err),
        ]
        with open(self.err, "wb") as errfh:
            self.proc = subprocess.Popen(
                cmd,
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=errfh,
                env=child_env(
                    o.device, os.path.join(root, "cache"), self.gpu, private_kernels=True
                ),
            )
        return self.proc

    def close(self) -> None:
        """End the child (its stdin closes, it returns) and remove its files."""
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(OSError):
                assert self.proc.stdin is not None
                self.proc.stdin.close()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        self.tmp.cleanup()
