"""Code under a vendor-fork backend directory is not judged against upstream Triton's API."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tests.test_cli import finding_lines, run
from tests.test_sarif import _errors, validator  # noqa: F401 - `validator` is a fixture
from triton_lint.run import is_fork_backend

BLOCK_POINTERS = textwrap.dedent(
    """\
    import triton
    import triton.language as tl


    @triton.jit
    def copy(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
        pid = tl.program_id(0)
        src = tl.make_block_ptr(x_ptr, (M, N), (N, 1), (pid * BM, 0), (BM, BN), (1, 0))
        dst = tl.make_block_ptr(y_ptr, (M, N), (N, 1), (pid * BM, 0), (BM, BN), (1, 0))
        tl.store(dst, tl.load(src, boundary_check=(0, 1)), boundary_check=(0, 1))
    """
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    for directory in ("ops", "backend/_ascend/ops", "backends/triton_ascend"):
        (tmp_path / directory).mkdir(parents=True)
        (tmp_path / directory / "copy.py").write_text(BLOCK_POINTERS)
    return tmp_path


def _files_with(output: str, code: str) -> set[str]:
    return {line.split(":")[0] for line in finding_lines(output) if f" {code} " in line}


def test_fork_directories_skip_upstream_api_rules_and_say_so(project):
    result = run("--target-version", "3.9", ".", cwd=project)
    assert _files_with(result.output, "TL208") == {"ops/copy.py"}
    assert "note: 2 files under vendor-fork backend directories" in result.output
    assert "TL201, TL204, TL208, TL209, TL210 skipped there" in result.output


def test_a_file_named_for_a_fork_backend_is_fork_code(project):
    (project / "ops" / "triton_ascend.py").write_text(BLOCK_POINTERS)
    result = run("--target-version", "3.9", "ops", cwd=project)
    assert _files_with(result.output, "TL208") == {"ops/copy.py"}
    assert "note: 1 file under vendor-fork backend directories" in result.output


def test_empty_fork_backends_checks_every_file(project):
    (project / "pyproject.toml").write_text("[tool.triton-lint]\nfork-backends = []\n")
    result = run("--target-version", "3.9", ".", cwd=project)
    assert _files_with(result.output, "TL208") == {
        "ops/copy.py",
        "backend/_ascend/ops/copy.py",
        "backends/triton_ascend/copy.py",
    }
    assert "vendor-fork" not in result.output


def test_custom_fork_backends(project):
    (project / "pyproject.toml").write_text('[tool.triton-lint]\nfork-backends = ["ops"]\n')
    result = run("--target-version", "3.9", ".", cwd=project)
    assert _files_with(result.output, "TL208") == {"backends/triton_ascend/copy.py"}


def test_bad_fork_backends_is_a_config_error(project):
    (project / "pyproject.toml").write_text('[tool.triton-lint]\nfork-backends = "ascend"\n')
    result = run(".", cwd=project)
    assert result.exit_code == 2
    assert "`fork-backends` must be a list of directory names" in result.output


def test_sarif_carries_the_note(project, validator):  # noqa: F811
    result = run("--target-version", "3.9", "--format", "sarif", ".", cwd=project)
    sarif = json.loads(result.stdout)
    assert _errors(validator, sarif) == []
    notes = sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert [n["level"] for n in notes] == ["note"]
    assert notes[0]["message"]["text"].startswith("2 files under vendor-fork backend")


@pytest.mark.parametrize(
    ("relative", "expected"),
    [
        ("flag_gems/runtime/backend/_kunlunxin/ops/mm.py", True),
        ("fla/ops/kda/backends/triton_ascend/chunk.py", True),
        ("pkg/npu-kernels/add.py", True),
        ("fla/modules/causal_conv1d/backends/triton_ascend.py", True),  # the file name counts
        ("sglang/srt/hardware_backend/xpu/attention/chunk_fwd.py", True),  # Intel's fork
        ("vllm/v1/attention/ops/xpu_mla_sparse.py", True),
        ("pkg/mlu.pyx", False),
        ("pkg/ascendant/add.py", False),  # whole tokens only
        ("flag_gems/ops/mm.py", False),
    ],
)
def test_is_fork_backend_matches_directory_tokens(relative, expected):
    from triton_lint.config import DEFAULT_FORK_BACKENDS

    assert is_fork_backend(relative, DEFAULT_FORK_BACKENDS) is expected
