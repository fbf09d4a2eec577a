"""Tests that need neither torch nor triton: cheap imports, metadata, discovery, confirm()."""

from __future__ import annotations

import pathlib
import subprocess
import sys

from triton_lint.dynamic import CODES, confirm, discover
from triton_lint.finding import Category, Finding, Severity, Span

from .conftest import FIXTURES


def test_stress_import_is_cheap() -> None:
    code = (
        "import sys, triton_lint.stress, triton_lint.dynamic;"
        "bad = [m for m in ('torch', 'triton', 'numpy') if m in sys.modules];"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    root = pathlib.Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_codes_metadata_complete() -> None:
    assert {f"TL90{i}" for i in range(1, 9)} <= set(CODES)
    for code, meta in CODES.items():
        assert meta.code == code
        assert meta.name == meta.name.lower() and " " not in meta.name
        assert meta.summary and meta.rationale and meta.fix


def test_discover_only_files_mentioning_stress_case(tmp_path: pathlib.Path) -> None:
    (tmp_path / "a.py").write_text(
        "from triton_lint import stress\n@stress.case(reference=None, inputs=[])\n"
    )
    (tmp_path / "b.py").write_text("x = 1\n")
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "c.py").write_text("stress.case\n")
    assert [p.name for p in discover([tmp_path])] == ["a.py"]
    assert len(discover([FIXTURES])) >= 5


def _finding(code: str, path: str, line: int, end_line: int | None = None) -> Finding:
    return Finding(
        path=path,
        span=Span(line, 1, end_line or line, 10),
        code=code,
        name="x",
        severity=Severity.ERROR,
        category=Category.MEMORY_SAFETY,
        message="msg",
        properties={"case": "c"} if code.startswith("TL9") else {},
    )


def test_confirm_marks_matching_static_findings(tmp_path: pathlib.Path) -> None:
    path = str(tmp_path / "k.py")
    static = [
        _finding("TL101", path, 10),
        _finding("TL102", path, 20, end_line=22),
        _finding("TL103", path, 30),
        _finding("TL200", path, 10),
        _finding("TL104", path, 40),
        _finding("TL104", path, 10),
    ]
    dynamic = [
        _finding("TL901", path, 10),
        _finding("TL905", path, 21),
        _finding("TL903", path, 30),
        _finding("TL910", path, 40),
    ]
    confirm(static, dynamic)
    assert static[0].properties["confirmed_at_runtime"] is True
    assert "confirmed at runtime" in static[0].message
    assert static[1].properties["confirmed_at_runtime"] is True
    assert "confirmed_at_runtime" not in static[2].properties  # TL903 does not confirm
    assert "confirmed_at_runtime" not in static[3].properties  # not a confirmable rule
    assert static[4].properties["confirmed_by"] == ["TL910"]  # a real int32 overflow
    assert "confirmed_at_runtime" not in static[5].properties  # TL901 does not confirm TL104
    confirm(static, dynamic)  # idempotent
    assert static[0].message.count("confirmed at runtime") == 1
