"""Progress of a dynamic run on stderr (parent side): files and cases done of their totals, the
case running now, elapsed time and findings so far, redrawn in place on one line. Shown only
when stderr is a terminal and the run is not `--quiet`; several runner threads report to it."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Mapping
from typing import TextIO


class Progress:
    """One status line (see the module docstring)."""

    def __init__(
        self,
        units: Mapping[str, int],
        cases: int,
        label: str = "stress cases",
        stream: TextIO | None = None,
    ) -> None:
        #: Units still to finish per file (a file's cases may be split over several children).
        self.left = dict(units)
        self.files, self.cases, self.label = len(self.left), cases, label
        self.stream = stream or sys.stderr
        self.files_done = self.cases_done = self.findings = 0
        self.running: dict[int, str] = {}  # thread -> "file::case"
        self.started = time.monotonic()
        self._lock = threading.Lock()
        self._width = 0

    def case_started(self, display: str, case: str) -> None:
        with self._lock:
            self.running[threading.get_ident()] = f"{display}::{case}"
            self._draw()

    def case_done(self, findings: int) -> None:
        with self._lock:
            self.cases_done += 1
            self.findings += findings
            self.running.pop(threading.get_ident(), None)
            self._draw()

    def unit_done(self, path: str) -> None:
        with self._lock:
            self.left[path] = self.left.get(path, 1) - 1
            if self.left[path] == 0:
                self.files_done += 1
            self._draw()

    def line(self) -> str:
        elapsed = int(time.monotonic() - self.started)
        now = sorted(self.running.values())
        running = f" | {now[0]}" + (f" (+{len(now) - 1})" if len(now) > 1 else "") if now else ""
        return (
            f"{self.label}: files {self.files_done}/{self.files}, cases "
            f"{self.cases_done}/{self.cases}, {self.findings} finding(s), "
            f"{elapsed // 60}:{elapsed % 60:02d}{running}"
        )

    def _draw(self) -> None:
        text = self.line()
        pad = max(self._width - len(text), 0)
        self._width = len(text)
        self.stream.write("\r" + text + " " * pad)
        self.stream.flush()

    def close(self) -> None:
        """Clear the line, so what follows starts on a clean one."""
        with self._lock:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
