"""The progress line of a dynamic run: counts, the running case, findings; drawn only on a
terminal and not with --quiet."""

from __future__ import annotations

import io
import pathlib
import subprocess
import sys

import pytest

from tests.conftest import run_on_pty
from triton_lint.dynamic.progress import Progress

from .test_pytest_plugin import KERNELS

pytest.importorskip("torch")
pytest.importorskip("triton")


def test_the_line_counts_files_cases_and_findings() -> None:
    out = io.StringIO()
    bar = Progress({"a.py": 2, "b.py": 1}, cases=3, stream=out)
    bar.case_started("a.py", "first")
    assert bar.line().startswith("stress cases: files 0/2, cases 0/3, 0 finding(s), 0:00")
    assert bar.line().endswith("| a.py::first")
    bar.case_done(2)
    bar.unit_done("a.py")
    assert "files 0/2" in bar.line()  # a.py has a second unit still running
    bar.unit_done("a.py")
    bar.unit_done("b.py")
    assert bar.line().startswith("stress cases: files 2/2, cases 1/3, 2 finding(s)")
    bar.close()
    assert out.getvalue().startswith("\r") and out.getvalue().endswith("\r")


def run_cli(path: pathlib.Path, *extra: str, tty: bool) -> str:
    """stderr of `triton-lint --dynamic` on the interpreter, on a pseudo-terminal or a pipe."""
    cmd = [sys.executable, "-m", "triton_lint", "--dynamic", "--device", "interpreter"]
    cmd += [*extra, str(path)]
    if not tty:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=600).stderr
    return run_on_pty(cmd, stdout_too=False).decode(errors="replace")


def test_progress_only_on_a_terminal_and_not_with_quiet(tmp_path) -> None:
    path = tmp_path / "kernels.py"
    path.write_text(KERNELS)
    assert "stress cases: files 1/1, cases 2/2, 1 finding(s)" in run_cli(path, tty=True)
    assert "stress cases:" not in run_cli(path, "--quiet", tty=True)
    assert "stress cases:" not in run_cli(path, tty=False)
