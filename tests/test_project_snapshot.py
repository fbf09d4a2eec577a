"""A warm run answers the project index from the last run's snapshot only while every file the
index reads is as that run saw it (`triton_lint.project.snapshot`): a file added, deleted,
touched or written just now builds the index again, and the findings are those of a run
without a cache."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import time
from pathlib import Path

import pytest

import triton_lint.project.incremental as incremental
import triton_lint.project.run as project_run
from triton_lint.model.project import ProjectContext
from triton_lint.project.snapshot import PREFIX
from triton_lint.project.store import Store
from triton_lint.run import RunOptions, lint_paths
from triton_lint.selection import Layer

CASES = Path(__file__).resolve().parent.parent / "fixtures" / "project"
UNBOUNDED_CALLER = (
    "from pkg import ops\n\n\ndef other(x, b):\n    ops.add_bias_rows(x, b, x.shape[0])\n"
)


def _age(root: Path, seconds: float = 60.0) -> None:
    """Move every file's modification time into the past, where a stat signature is trusted
    (`filefacts.RACY_NS`)."""
    then = time.time() - seconds
    for path in [root, *root.rglob("*")]:
        os.utime(path, (then, then))


def _run(paths: list[Path], cache: Path | None) -> set[tuple[str, int, str]]:
    options = RunOptions(cli_layer=Layer(select=["ALL"]), jobs=1, cache_dir=cache)
    result = lint_paths(paths, options)
    assert not result.crashes
    return {(Path(f.path).name, f.line, f.code) for f in result.findings}


@pytest.fixture
def builds(monkeypatch) -> list[int]:
    """How many times the runs built the project index (appends 1 per build)."""
    built: list[int] = []
    index = project_run.ProjectIndex

    def counting(*args, **kwargs):
        built.append(1)
        return index(*args, **kwargs)

    monkeypatch.setattr(project_run, "ProjectIndex", counting)
    return built


@pytest.fixture
def case(tmp_path) -> Path:
    shutil.copytree(CASES / "tl209_good", tmp_path / "case")
    _age(tmp_path / "case")
    return tmp_path / "case"


def test_nothing_changed_answers_from_the_snapshot(tmp_path, case, builds):
    cache = tmp_path / "cache"
    assert _run([case], cache) == set()
    assert len(builds) == 1
    assert _run([case], cache) == set()
    assert _run([case / "pkg" / "layer.py"], cache) == set()  # another run: another snapshot
    assert len(builds) == 2
    assert _run([case], cache) == _run([case / "pkg" / "layer.py"], cache) == set()
    assert len(builds) == 4  # the store keeps the last run's snapshot only


def test_a_file_added_or_deleted_builds_the_index_again_one_touched_does_not(
    tmp_path, case, builds
):
    cache = tmp_path / "cache"
    assert _run([case], cache) == set()
    other = case / "pkg" / "other.py"
    other.write_text(UNBOUNDED_CALLER)  # a caller without the bound
    _age(case, 30)
    assert _run([case], cache) == {("ops.py", 8, "TL209")} == _run([case], None)
    assert _run([case], cache) == {("ops.py", 8, "TL209")}
    other.unlink()
    assert _run([case], cache) == set()
    assert len(builds) == 4  # the first, the file added, without a cache, the file deleted
    _age(case, 90)  # the same bytes, another time stamp: the same answers
    assert _run([case], cache) == set()
    assert _run([case], cache) == set()
    assert len(builds) == 4


def test_a_file_written_just_now_is_read_again_not_trusted_by_its_stat(tmp_path, case, builds):
    cache = tmp_path / "cache"
    layer = case / "pkg" / "layer.py"
    layer.write_text(layer.read_text())  # its time stamp is too close to the run's start
    assert _run([case], cache) == set()
    assert _run([case], cache) == set()
    assert len(builds) == 1  # its bytes answer the index's questions as before
    layer.write_text(layer.read_text().replace("    assert n <= 4096\n", ""))
    assert _run([case], cache) == {("ops.py", 8, "TL209")} == _run([case], None)


def test_an_init_added_above_the_project_renames_its_modules(tmp_path, builds):
    root = tmp_path / "top" / "case"
    shutil.copytree(CASES / "tl209_good", root)
    _age(root)
    cache = tmp_path / "cache"
    assert _run([root / "pkg"], cache) == set()
    (root / "__init__.py").write_text("")  # `pkg` is now `case.pkg`: `from pkg import ops`
    _age(root / "__init__.py")  # in layer.py no longer resolves, so the caller's bound is unknown
    assert _run([root / "pkg"], cache) == {("ops.py", 8, "TL209")} == _run([root / "pkg"], None)
    assert len(builds) == 3


def test_a_context_from_the_snapshot_equals_the_one_built(case, monkeypatch):
    monkeypatch.chdir(case)
    files = {path: path.read_bytes() for path in sorted(Path("pkg").glob("*.py"))}
    store = Store()
    since = time.time_ns()
    built = project_run.project_index(files, [], store, since)
    expected = built.context_for("pkg/kernels.py")
    assert expected is not None and expected.callers and expected.kernel_refs
    built.remember()
    assert [key for key in store.entries if key.startswith(PREFIX)]
    again = project_run.project_index(files, [], Store(dict(store.entries)), since)
    assert again.context_for("pkg/kernels.py") == expected
    assert again.context_for("pkg/kernels.py").known_digest == expected.digest()  # read back
    assert again.kernel_files() == built.kernel_files()
    assert again._index is None


def _loads(monkeypatch, method: str) -> list[int]:
    """How many times the runs call ``LintCache.<method>`` (appends 1 per call)."""
    from triton_lint.cache import LintCache

    loads: list[int] = []
    load = getattr(LintCache, method)

    def counting(self):
        loads.append(1)
        return load(self)

    monkeypatch.setattr(LintCache, method, counting)
    return loads


def test_a_run_from_the_snapshot_reads_no_outlines_and_keeps_them(tmp_path, case, monkeypatch):
    loads = _loads(monkeypatch, "load_outlines")
    cache = tmp_path / "cache"
    assert _run([case], cache) == set()
    (outlines,) = cache.glob("*/project-outlines")
    kept = outlines.read_bytes()
    assert b'"o:' in kept and b'"w:' in kept and b'"x:' not in kept
    assert _run([case], cache) == set()
    assert len(loads) == 1  # the first run's build only
    assert outlines.read_bytes() == kept
    layer = case / "pkg" / "layer.py"
    layer.write_text(layer.read_text().replace("    assert n <= 4096\n", ""))
    assert _run([case], cache) == {("ops.py", 8, "TL209")}
    assert len(loads) == 1  # the edit changes no answer of the index: its lint reads it
    layer.write_text(layer.read_text().replace("ops.add_bias_rows(", "ops.add_bias_rows2("))
    monkeypatch.setattr(incremental, "FILES_PER_OUTLINE", 1)  # as in a project of thousands
    assert _run([case], cache) == {("ops.py", 8, "TL209")} == _run([case], None)
    assert len(loads) == 1  # the call is gone: the index is brought up to date in the edit's
    # terms (`project.incremental`), outlining from their text the few files it reads
    layer.write_text(layer.read_text().replace("ops.add_bias_rows2(", "ops.add_bias_rows("))
    monkeypatch.setattr(incremental, "FILES_PER_OUTLINE", 1000)  # a small project: cheaper
    assert _run([case], cache) == {("ops.py", 8, "TL209")} == _run([case], None)
    assert len(loads) == 2  # to load every kept outline than to outline a file


def test_the_views_are_read_only_when_a_file_changed_and_written_after_a_build(
    tmp_path, case, monkeypatch
):
    loads = _loads(monkeypatch, "load_views")
    cache = tmp_path / "cache"
    assert _run([case], cache) == set()
    (views,) = cache.glob("*/project-views")
    written = views.stat().st_mtime_ns
    assert _run([case], cache) == set()
    assert loads == [1]  # the build's (it keeps the answers of files asked the same)
    layer = case / "pkg" / "layer.py"
    layer.write_text(layer.read_text().replace("4096", "2048"))
    _age(case)
    assert _run([case], cache) == set()
    assert _run([case], cache) == set()
    assert loads == [1, 1]  # the edited file's answers, once: its signature is kept after
    assert views.stat().st_mtime_ns == written
    stats = [key for key in json.loads(views.parent.joinpath("project-index").read_text())]
    assert sum(key.startswith("s:") and "layer.py" in key for key in stats) == 1


def test_a_context_copied_with_other_facts_digests_them():
    context = ProjectContext(kernel_refs={"ops.py": {"kern": "kern"}})
    before = context.digest()
    copied = dataclasses.replace(context, unreferenced=frozenset({"kern"}))
    assert copied.digest() != before
    assert (
        copied.digest()
        == ProjectContext(
            kernel_refs={"ops.py": {"kern": "kern"}}, unreferenced=frozenset({"kern"})
        ).digest()
    )


@pytest.mark.parametrize(
    "directory", ["real/pkg", "link/pkg", "real/../link/pkg", "link", "", ".", "real/pkg/"]
)
def test_directories_resolve_as_the_operating_system_does(tmp_path, directory):
    (tmp_path / "real" / "pkg").mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "real")
    expected = (tmp_path / directory).resolve()
    assert project_run.resolved_directory(str(tmp_path), directory) == expected
    assert project_run.resolved_file(tmp_path / directory / "a.py") == expected / "a.py"
