"""The results cache: hits give the same report, anything that changes the answer misses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import triton_lint.run as run_module
from triton_lint.cache import ENTRY_DAYS, STALE_DAYS, LintCache
from triton_lint.engine import FileResult

from .test_cli import BAD, run

REPO = Path(__file__).resolve().parent.parent
GOOD = BAD.replace("x = tl.load(x_ptr + offs)", "x = tl.load(x_ptr + offs, mask=offs < n)").replace(
    '    tl.device_print("x", x)\n', ""
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.triton-lint]\n")
    (tmp_path / "kern.py").write_text(BAD)
    (tmp_path / "other.py").write_text(GOOD)
    (tmp_path / "host.py").write_text("import triton\n")
    return tmp_path


@pytest.fixture
def linted(monkeypatch) -> list[str]:
    """The files each run really lints (cache misses), in order."""
    calls: list[str] = []
    real = run_module.lint_jobs

    def spy(jobs, workers):
        calls.extend(job.display for job in jobs)
        return real(jobs, workers)

    monkeypatch.setattr(run_module, "lint_jobs", spy)
    return calls


def _entries(cache: Path) -> list[Path]:
    return sorted(p for p in cache.rglob("*.json"))


def test_a_second_run_reuses_every_result_and_reports_the_same(project, linted, monkeypatch):
    monkeypatch.delenv("TRITON_LINT_CACHE_DIR")
    first = run("--format", "json", ".", cwd=project)
    assert sorted(linted) == ["kern.py", "other.py"]  # host.py cannot hold a kernel
    cache = project / ".triton_lint_cache"
    assert len(_entries(cache)) == 2  # findings or not, both are cached
    assert (cache / ".gitignore").read_text().splitlines()[-1] == "*"
    assert (cache / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172")
    linted.clear()
    second = run("--format", "json", ".", cwd=project)
    assert linted == []
    assert second.output == first.output and second.exit_code == first.exit_code == 1
    sarif = [run("--format", "sarif", ".", cwd=project).output for _ in range(2)]
    uncached = run("--format", "sarif", "--no-cache", ".", cwd=project).output
    assert sarif[0] == sarif[1] == uncached


def test_content_rules_and_target_version_are_part_of_the_key(project, linted):
    run(".", cwd=project)
    linted.clear()
    (project / "kern.py").write_text(GOOD)
    assert run(".", cwd=project).exit_code == 0  # the edit is seen, not the old finding
    assert linted == ["kern.py"]
    linted.clear()
    run("--select", "TL101", ".", cwd=project)
    assert sorted(linted) == ["kern.py", "other.py"]
    linted.clear()
    run("--target-version", "3.3", ".", cwd=project)
    assert sorted(linted) == ["kern.py", "other.py"]
    linted.clear()
    run("--target-version", "3.3", ".", cwd=project)
    assert linted == []


def test_no_cache_and_fixes_neither_read_nor_write_it(project, linted):
    cache = Path(os.environ["TRITON_LINT_CACHE_DIR"])
    before = _entries(cache)
    run("--no-cache", ".", cwd=project)
    run("--diff", ".", cwd=project)
    assert _entries(cache) == before
    run("--no-cache", ".", cwd=project)
    assert linted == ["kern.py", "other.py"] * 2


def test_cache_dir_option_and_config_key(project, linted, monkeypatch):
    monkeypatch.delenv("TRITON_LINT_CACHE_DIR")
    run("--cache-dir", "elsewhere", ".", cwd=project)
    assert len(_entries(project / "elsewhere")) == 2
    (project / "pyproject.toml").write_text('[tool.triton-lint]\ncache-dir = "build/lint"\n')
    (project / "sub").mkdir()
    run("..", cwd=project / "sub")  # relative to the configuration file, not the cwd
    assert len(_entries(project / "build" / "lint")) == 2
    assert not (project / ".triton_lint_cache").exists()


def test_a_cache_dir_that_is_not_a_path_is_a_configuration_error(project, monkeypatch):
    monkeypatch.delenv("TRITON_LINT_CACHE_DIR")
    (project / "pyproject.toml").write_text("[tool.triton-lint]\ncache-dir = 3\n")
    result = run(".", cwd=project)
    assert result.exit_code == 2 and "`cache-dir` must be a directory path" in result.output


def test_an_unwritable_cache_is_no_error(project, monkeypatch):
    (project / "blocked").write_text("a file where the cache directory would go")
    result = run("--cache-dir", "blocked/cache", "--format", "json", ".", cwd=project)
    assert result.exit_code == 1
    assert [f["code"] for f in json.loads(result.output)] == ["TL101", "TL401"]


def test_a_damaged_entry_is_a_miss(project, linted):
    run(".", cwd=project)
    for entry in _entries(Path(os.environ["TRITON_LINT_CACHE_DIR"])):
        entry.write_text('{"findings": [')  # e.g. a disk that filled up mid-write elsewhere
    linted.clear()
    result = run("--format", "json", ".", cwd=project)
    assert sorted(linted) == ["kern.py", "other.py"]
    assert [f["code"] for f in json.loads(result.output)] == ["TL101", "TL401"]


def test_results_with_a_rule_crash_are_not_cached(tmp_path, monkeypatch):
    (tmp_path / "kern.py").write_text(BAD)
    crashed = FileResult("kern.py", crashes=["kern.py: rule TL101 crashed: boom"])
    monkeypatch.setattr(run_module, "lint_jobs", lambda jobs, workers: [crashed])
    cache = tmp_path / "cache"
    options = run_module.RunOptions(isolated=True, cache_dir=cache)
    run_module.lint_paths([tmp_path / "kern.py"], options)
    assert _entries(cache) == []


def test_pruning_drops_unused_entries_and_old_versions_once_a_day(tmp_path):
    cache = LintCache(tmp_path)
    cache.put("aa" + "0" * 38, {"findings": [], "warnings": [], "kernel_lines": {}})
    cache.put("bb" + "0" * 38, {"findings": [], "warnings": [], "kernel_lines": {}})
    old, fresh = _entries(tmp_path)
    now = time.time()
    unused = now - (ENTRY_DAYS + 1) * 86400
    os.utime(old, (unused, unused))
    stale, recent = tmp_path / "0.0.1-stale", tmp_path / "0.0.2-recent"
    for directory in (stale, recent):
        (directory / "aa").mkdir(parents=True)
    long_ago = now - (STALE_DAYS + 1) * 86400
    os.utime(stale, (long_ago, long_ago))
    cache.prune(now)
    assert _entries(tmp_path) == [fresh]
    assert not stale.exists() and recent.exists()
    os.utime(fresh, (unused, unused))
    cache.prune(now + 3600)  # pruned an hour ago: nothing happens
    assert _entries(tmp_path) == [fresh]
    cache.prune(now + 86400 + 1)
    assert _entries(tmp_path) == []


def test_an_entry_read_is_marked_in_use_at_most_once_a_day(tmp_path):
    cache = LintCache(tmp_path)
    key = "cc" + "0" * 38
    cache.put(key, {"findings": []})
    (entry,) = _entries(tmp_path)
    now = time.time()
    for age, touched in ((3600, False), (2 * 86400, True)):
        os.utime(entry, (now - age, now - age))
        assert cache.get(key) == {"findings": []}
        assert (entry.stat().st_mtime > now - 60) == touched


def test_concurrent_runs_share_the_cache_safely(tmp_path):
    """Runs started together write the same entries; none sees a partial one."""
    cache = tmp_path / "cache"
    env = {**os.environ, "TRITON_LINT_CACHE_DIR": str(cache)}
    command = [sys.executable, "-m", "triton_lint", "check", "--isolated", "--format", "json"]
    command += ["--exit-zero", "fixtures"]
    runs = [
        subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    outputs = [process.communicate()[0] for process in runs]
    assert all(process.returncode == 0 for process in runs)
    expected = subprocess.run(
        [*command[:-2], "--no-cache", "--exit-zero", "fixtures"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert outputs == [expected] * 3
    assert not list(cache.rglob(".tmp-*"))
    assert len(json.loads(expected)) > 100
