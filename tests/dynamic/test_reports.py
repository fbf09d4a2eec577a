"""`--dynamic` reports: the Markdown stress matrix and SARIF with related locations and witness."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import REPO
from tests.test_sarif import _errors, validator  # noqa: F401  (validator is a fixture)

from .conftest import line_of

pytest.importorskip("torch")
pytest.importorskip("triton")

FIXTURE = "fixtures/dynamic/checks.py"


DYNAMIC = [sys.executable, "-m", "triton_lint", "--dynamic", "--device", "interpreter"]


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The reports of an interpreter run, on any machine (a GPU would be picked by default)."""
    return subprocess.run(
        [*DYNAMIC, *args, FIXTURE],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_markdown_report_has_the_stress_matrix():
    from markdown_it import MarkdownIt

    proc = _cli("--format", "markdown")
    assert proc.returncode == 1, proc.stderr
    text = proc.stdout
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert "Stress matrix" in headings and "Performance" in headings
    matrix = text.split("## Stress matrix", 1)[1].split("## Performance", 1)[0]
    rows = [line for line in matrix.splitlines() if line.startswith("| ")]
    assert rows == [
        "| Case | Kernel | Sizes; dtypes; layout | ones | negative | normal |",
        "| log_abs | `log_kernel` | N=100; float32; contiguous | ✅ | ❌ TL909 |  |",
        "| scaled_index | `scaled_index_kernel` | N=100; int32; contiguous |  |  | ✅ |",
        "| scaled_index | `scaled_index_kernel` | N=200; int32; contiguous |  |  "
        "| ❌ TL903, TL910 |",
        "| scaled_index_i64 | `scaled_index_kernel_i64` | N=100; int32; contiguous |  |  | ✅ |",
        "| scaled_index_i64 | `scaled_index_kernel_i64` | N=200; int32; contiguous |  |  | ✅ |",
    ]
    assert "6 combinations executed on CPU (Triton interpreter" in matrix
    assert "4 pass, 2 fail" in matrix
    performance = text.split("## Performance", 1)[1]
    assert "No timings" in performance and "interpreter" in performance
    assert "| Kernel | Size | Triton ms" not in text  # no invented numbers


def test_sarif_has_related_locations_and_witness(validator):  # noqa: F811
    proc = _cli("--format", "sarif")
    assert proc.returncode == 1, proc.stderr
    log = json.loads(proc.stdout)
    assert _errors(validator, log) == []
    results = {r["ruleId"]: r for r in log["runs"][0]["results"]}
    assert {"TL909", "TL910", "TL903"} <= set(results)
    path = REPO / FIXTURE
    tl909 = results["TL909"]
    related = [
        (
            loc["physicalLocation"]["artifactLocation"]["uri"],
            loc["physicalLocation"]["region"]["startLine"],
            loc["message"]["text"],
        )
        for loc in tl909["relatedLocations"]
    ]
    launch = line_of(path, "log_kernel[(triton.cdiv(n, BLOCK),)]")
    wrapper = line_of(path, "def log_abs")
    assert [(uri, line) for uri, line, _ in related] == [(FIXTURE, launch), (FIXTURE, wrapper)]
    assert "launched here" in related[0][2] and "log_abs" in related[1][2]
    witness = tl909["properties"]["witness"]
    assert witness["dims"] == {"N": 100} and witness["pattern"] == "negative"
    assert witness["pid"] == [0, 0, 0] and witness["lane"] == [0]
    assert tl909["properties"]["case"] == "log_abs"
    rule_ids = {r["id"] for r in log["runs"][0]["tool"]["driver"]["rules"]}
    assert {"TL909", "TL910"} <= rule_ids
