"""The pre-commit hook and the CI script match what the README promises."""

from __future__ import annotations

import yaml

from tests.conftest import REPO


def test_pre_commit_hook_definition():
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    assert len(hooks) == 1
    hook = hooks[0]
    assert hook["id"] == "triton-lint"
    assert hook["entry"] == "triton-lint"
    assert hook["language"] == "python"
    assert hook["types_or"] == ["python", "pyi"]
    assert hook["require_serial"] is True


def test_ci_runs_the_readme_test_command():
    readme = (REPO / "README.md").read_text()
    command = "python3 -m pip install -e '.[test]' && python3 -m pytest"
    assert f"```bash\n{command}\n```" in readme
    assert command in (REPO / ".ci" / "run").read_text()
