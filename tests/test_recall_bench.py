"""bench/recall.py counts findings of the expected code inside the named kernel, per release."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from triton_lint.rules.tl104_int32_offset_overflow import Int32OffsetOverflow

ROOT = Path(__file__).resolve().parent.parent

# TL104's own bad and good examples: an int32 program id times a stride, then widened.
BUGGY = Int32OffsetOverflow.bad
FIXED = Int32OffsetOverflow.good
# Without its launch the stride is unexplained: the same product is ranked info.
BUGGY_NO_LAUNCH = BUGGY.split("\n\ndef launch")[0]


def _recall():
    spec = importlib.util.spec_from_file_location("recall", ROOT / "bench" / "recall.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _releases(recall, monkeypatch, files: dict[str, str | None]) -> None:
    """Serve the case's file per release from memory instead of PyPI."""

    def read_member(package, version, path, cache):
        text = files[version]
        return None if text is None else text.encode()

    monkeypatch.setattr(recall, "read_member", read_member)


def test_caught_and_silenced(tmp_path, monkeypatch):
    recall = _recall()
    _releases(recall, monkeypatch, {"1.0": BUGGY, "1.1": FIXED})
    case = recall.Case("pkg", "1.0", "1.1", "pkg/ops.py", "rownorm", "TL104", "o/r#1", "bug")
    outcome = recall.evaluate(case, tmp_path)
    assert (outcome.before, outcome.after, outcome.caught, outcome.silenced) == (1, 0, True, True)
    assert outcome.loud == 1
    table = recall.report([outcome])
    assert "| TL104 | 1 | 1 | 1 | 1 |" in table


def test_fixed_lines_and_fixed_kernel_are_judged_apart(tmp_path, monkeypatch):
    """A finding left on a line the fix changed means the linter rejects the fix; one on a
    line the fix did not touch only keeps the kernel from being clean."""
    recall = _recall()
    load = (
        "    x = tl.load(x_ptr + row * stride + cols, mask=cols < hidden_size, other=0.0)"
        "  # <- TL104"
    )
    assert load in BUGGY
    relabelled = BUGGY.replace(load, load.replace("other=0.0", "other=0.0,"))
    store = (
        "    tl.store(y_ptr + row * stride + cols, x / tl.sum(x, axis=0), mask=cols < hidden_size)"
    )
    assert store in BUGGY
    elsewhere = BUGGY.replace(
        store, store.replace("mask=cols < hidden_size)", "mask=(cols < hidden_size))")
    )
    case = recall.Case("pkg", "1.0", "1.1", "pkg/ops.py", "rownorm", "TL104", "o/r#1", "bug")
    _releases(recall, monkeypatch, {"1.0": BUGGY, "1.1": relabelled})
    on_line = recall.evaluate(case, tmp_path)
    assert (on_line.after, on_line.on_fix) == (1, 1)
    assert "| TL104 | 1 | 1 | 1 | 0 | 0 | 0 |" in recall.report([on_line])
    _releases(recall, monkeypatch, {"1.0": BUGGY, "1.1": elsewhere})
    off_line = recall.evaluate(case, tmp_path)
    assert (off_line.after, off_line.on_fix) == (1, 0)
    assert "| TL104 | 1 | 1 | 1 | 0 | 1 | 0 |" in recall.report([off_line])


def test_an_info_finding_is_caught_but_not_loud(tmp_path, monkeypatch):
    recall = _recall()
    _releases(recall, monkeypatch, {"1.0": BUGGY_NO_LAUNCH, "1.1": FIXED})
    case = recall.Case("pkg", "1.0", "1.1", "pkg/ops.py", "rownorm", "TL104", "o/r#1", "bug")
    outcome = recall.evaluate(case, tmp_path)
    assert (outcome.before, outcome.loud, outcome.caught) == (1, 0, True)
    assert "| **all** | 1 | 1 (100%) | 0 (0%) | 1 |" in recall.report([outcome])


def test_missed_and_missing_kernel(tmp_path, monkeypatch):
    recall = _recall()
    _releases(recall, monkeypatch, {"1.0": FIXED, "1.1": None})
    case = recall.Case("pkg", "1.0", "1.1", "pkg/ops.py", "rownorm", "TL104", "o/r#1", "bug")
    outcome = recall.evaluate(case, tmp_path)
    assert (outcome.before, outcome.after, outcome.caught, outcome.silenced) == (
        0,
        None,
        False,
        False,
    )
    other = recall.Case("pkg", "1.0", "1.0", "pkg/ops.py", "absent", "TL104", "o/r#1", "bug")
    assert recall.evaluate(other, tmp_path).before is None
    assert "kernel not found" in recall.report([recall.evaluate(other, tmp_path)])


def test_batches_are_parsed_and_reported_apart(tmp_path, monkeypatch):
    recall = _recall()
    cases = tmp_path / "cases.tsv"
    row = "\t".join(["pkg", "1.0", "1.1", "pkg/ops.py", "rownorm", "TL104", "o/r#1", "bug"])
    cases.write_text(
        f"# header\n{row}\n## batch: later, collected after\n{row}\n", encoding="utf-8"
    )
    loaded = recall.load_cases(cases)
    assert [c.batch for c in loaded] == ["first", "later"]
    _releases(recall, monkeypatch, {"1.0": BUGGY, "1.1": FIXED})
    text = recall.report([recall.evaluate(case, tmp_path) for case in loaded])
    assert "## Batch: first (1 cases)" in text and "## Batch: later (1 cases)" in text
    assert "| **all** | 2 | 2 (100%) | 2 (100%) | 2 | 2 (100%) |" in text


def test_a_github_case_is_read_from_the_commit_in_the_mirror(tmp_path, monkeypatch):
    recall = _recall()
    work = tmp_path / "work"
    work.mkdir()

    def git(*args: str, cwd: Path = work) -> str:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
        return done.stdout.strip()

    git("init", "-q")
    (work / "pkg").mkdir()
    commits = []
    for text in (BUGGY, FIXED):
        (work / "pkg" / "ops.py").write_text(text, encoding="utf-8")
        git("add", ".")
        git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c")
        commits.append(git("rev-parse", "HEAD"))
    mirrors = tmp_path / "mirrors"
    mirrors.mkdir()
    git("clone", "-q", "--bare", str(work), str(mirrors / "o+r" / "repo"), cwd=tmp_path)
    monkeypatch.setattr(recall, "MIRRORS", mirrors)
    case = recall.Case("github:o/r", *commits, "pkg/ops.py", "rownorm", "TL104", "o/r@1", "bug")
    outcome = recall.evaluate(case, tmp_path / "cache")
    assert (outcome.before, outcome.after) == (1, 0)
    missing = recall.Case("github:o/r", commits[0], commits[1], "pkg/gone.py", "k", "TL104", "", "")
    assert recall.evaluate(missing, tmp_path / "cache").before is None
    stale = recall.Case("github:o/r", "0" * 40, commits[1], "pkg/ops.py", "k", "TL104", "", "")
    with pytest.raises(SystemExit, match="no commit"):
        recall.evaluate(stale, tmp_path / "cache")


TWO_SIZES = """\
import triton
import triton.language as tl


@triton.jit
def rows(
    x_ptr,
    n_cols,
    n_rows: tl.constexpr,
    seq_len: tl.constexpr,
    BLOCK: tl.constexpr,
):
    cols = tl.arange(0, BLOCK)
    for row in range(tl.program_id(0), n_rows * seq_len, tl.num_programs(0)):
        x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
        tl.store(x_ptr + row * n_cols + cols, x * 2, mask=cols < n_cols)
"""


def test_grouped_occurrences_count_one_each(tmp_path, monkeypatch):
    """TL203 reports the per-call sizes of a kernel as one finding with the others as related
    locations; a fix that drops one of them still leaves the other reported, and the fixed
    line is clean."""
    recall = _recall()
    fixed = TWO_SIZES.replace("n_rows: tl.constexpr", "n_rows")
    _releases(recall, monkeypatch, {"1.0": TWO_SIZES, "1.1": fixed})
    case = recall.Case("pkg", "1.0", "1.1", "pkg/ops.py", "rows", "TL203", "o/r#2", "bug")
    outcome = recall.evaluate(case, tmp_path)
    assert (outcome.before, outcome.after, outcome.silenced, outcome.on_fix) == (2, 1, True, 0)
