"""Every fixture whose findings carry fixes: fix it, re-lint it, and run it when runnable.

A fixture is runnable when it defines ``triton_lint_smoke()`` (host code that launches its
kernels on tiny CPU tensors and checks the result); it is called under the Triton interpreter
(``TRITON_INTERPRET=1``) in a subprocess, and skipped when torch or triton is not installed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from triton_lint.engine import lint_text
from triton_lint.fixes import fix_text
from triton_lint.rules import all_rules

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
_TARGET = re.compile(r"#\s*triton-lint-test:\s*target-version=(\S+)")


def _target(text: str) -> str:
    match = _TARGET.search(text)
    return match.group(1) if match else "3.9"


def _lint(text: str):
    return lint_text("fixture.py", text, list(all_rules()), _target(text)).findings


def _fixable_fixtures() -> list[Path]:
    found = []
    for path in sorted(FIXTURES.glob("TL*/**/bad*.py")):
        if any(f.fix is not None for f in _lint(path.read_text(encoding="utf-8"))):
            found.append(path)
    return found


FIXABLE = _fixable_fixtures()
IDS = [str(p.relative_to(FIXTURES)) for p in FIXABLE]


def test_there_are_fixable_fixtures():
    assert any(p.parent.name == "TL401" for p in FIXABLE)


def _fixed(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    findings = _lint(text)
    outcome, _ = fix_text(str(path), text, findings, _lint, unsafe=True)
    assert outcome.changed and not outcome.warnings
    return outcome.fixed


@pytest.mark.parametrize("path", FIXABLE, ids=IDS)
def test_fixed_fixture_relints_clean(path):
    before = _lint(path.read_text(encoding="utf-8"))
    fixed = _fixed(path)
    compile(fixed, str(path), "exec")
    after = _lint(fixed)
    # every finding with a fix is gone, and the fixes introduced nothing new
    assert Counter(f.code for f in after) == Counter(f.code for f in before if f.fix is None)


RUNNABLE = [p for p in FIXABLE if "def triton_lint_smoke(" in p.read_text(encoding="utf-8")]


@pytest.mark.parametrize("path", RUNNABLE, ids=[str(p.relative_to(FIXTURES)) for p in RUNNABLE])
def test_fixed_fixture_runs_under_the_triton_interpreter(path, tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("triton")
    fixed = tmp_path / f"fixed_{path.stem}.py"
    fixed.write_text(_fixed(path), encoding="utf-8")
    shutil.copymode(path, fixed)
    script = textwrap.dedent(
        f"""\
        import importlib.util
        spec = importlib.util.spec_from_file_location("fixed_kernel", {str(fixed)!r})
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        module.triton_lint_smoke()
        print("ok")
        """
    )
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert done.stdout.strip().endswith("ok")
