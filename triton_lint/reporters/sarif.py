"""SARIF 2.1.0 for GitHub code scanning and other SARIF viewers.

Built from plain dictionaries (no runtime dependency); `tests/test_sarif.py` validates real
output against the official SARIF 2.1.0 JSON schema. The rule metadata comes from the rule
registry, so new rules (and dynamic check codes seen in the results) appear without changes
here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from triton_lint import __version__
from triton_lint.compile.findings import numbers
from triton_lint.docs import render_rule
from triton_lint.finding import Edit, Finding, RelatedLocation, Severity, Span
from triton_lint.fingerprint import VERSION as FINGERPRINT_VERSION
from triton_lint.reporters.common import (
    INFORMATION_URI,
    RULES_URL,
    by_severity,
    dynamic_code_docs,
    fingerprints,
    uri_for,
)
from triton_lint.reporters.statistics import count_by_code
from triton_lint.rules import all_rules
from triton_lint.rules.base import Rule
from triton_lint.run import RunResult, fork_note

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"
#: GitHub code scanning accepts at most this many results per run.
MAX_RESULTS = 25_000
FINGERPRINT_KEY = f"tritonLint/{FINGERPRINT_VERSION}"

_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
#: GitHub's `problem.severity`: error, warning or recommendation.
_PROBLEM_SEVERITY = {
    Severity.ERROR: "error",
    Severity.WARNING: "warning",
    Severity.INFO: "recommendation",
}


def _rule_descriptor(rule: Rule) -> dict[str, Any]:
    help_text = f"{rule.summary}.\n\n{rule.rationale}\n\nHow to fix: {rule.fix}"
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.rationale},
        "help": {"text": help_text, "markdown": render_rule(rule)},
        "helpUri": RULES_URL.format(code=rule.code),
        "defaultConfiguration": {
            "enabled": rule.default_enabled,
            "level": _LEVEL[rule.severity],
        },
        "properties": {
            "tags": ["triton", rule.category.value],
            "precision": rule.precision,
            "problem.severity": _PROBLEM_SEVERITY[rule.severity],
        },
    }


def _dynamic_descriptor(finding: Finding) -> dict[str, Any]:
    """A code that is not a static rule (a dynamic check): from its docs, else the finding."""
    docs = dynamic_code_docs().get(finding.code)
    summary = getattr(docs, "summary", None) or finding.name
    descriptor: dict[str, Any] = {
        "id": finding.code,
        "name": finding.name,
        "shortDescription": {"text": summary},
    }
    rationale = getattr(docs, "rationale", None)
    fix = getattr(docs, "fix", None)
    if rationale:
        descriptor["fullDescription"] = {"text": rationale}
        text = f"{summary}\n\n{rationale}" + (f"\n\nHow to fix: {fix}" if fix else "")
        markdown = f"# {finding.code} {finding.name}\n\n{summary}\n\n## Why it matters\n\n"
        markdown += rationale + (f"\n\n## How to fix\n\n{fix}\n" if fix else "\n")
        descriptor["help"] = {"text": text, "markdown": markdown}
    return descriptor | {
        "helpUri": RULES_URL.format(code=finding.code),
        "defaultConfiguration": {"level": _LEVEL[finding.severity]},
        "properties": {
            "tags": ["triton", finding.category.value],
            "precision": "high",
            "problem.severity": _PROBLEM_SEVERITY[finding.severity],
        },
    }


def _region(span: Span) -> dict[str, int]:
    region = {"startLine": max(span.line, 1), "startColumn": max(span.column, 1)}
    region["endLine"] = max(span.end_line, region["startLine"])
    region["endColumn"] = max(span.end_column, 1)
    return region


def _artifact(path: str) -> dict[str, str]:
    uri, relative = uri_for(path)
    location = {"uri": uri}
    if relative:
        location["uriBaseId"] = SRCROOT
    return location


def _physical(path: str, span: Span | None) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": _artifact(path)}
    if span is not None:
        physical["region"] = _region(span)
    return physical


def _related(index: int, related: RelatedLocation) -> dict[str, Any]:
    return {
        "id": index,
        "physicalLocation": _physical(related.path, related.span),
        "message": {"text": related.message},
    }


def _replacement(edit: Edit) -> dict[str, Any]:
    return {"deletedRegion": _region(edit.span), "insertedContent": {"text": edit.content}}


def _result(finding: Finding, rule_index: int, fingerprint: str) -> dict[str, Any]:
    location: dict[str, Any] = {"physicalLocation": _physical(finding.path, finding.span)}
    if finding.kernel:
        location["logicalLocations"] = [{"name": finding.kernel, "kind": "function"}]
    result: dict[str, Any] = {
        "ruleId": finding.code,
        "ruleIndex": rule_index,
        "level": _LEVEL[finding.severity],
        "message": {"text": finding.message},
        "locations": [location],
        "partialFingerprints": {FINGERPRINT_KEY: fingerprint},
    }
    if finding.related:
        result["relatedLocations"] = [_related(i, r) for i, r in enumerate(finding.related)]
    if finding.fix is not None:
        result["fixes"] = [
            {
                "description": {
                    "text": f"{finding.fix.message} ({finding.fix.applicability.value})"
                },
                "artifactChanges": [
                    {
                        "artifactLocation": _artifact(finding.path),
                        "replacements": [_replacement(e) for e in finding.fix.edits],
                    }
                ],
            }
        ]
    properties: dict[str, Any] = {"category": finding.category.value}
    if finding.kernel:
        properties["kernel"] = finding.kernel
    properties.update(finding.properties)  # a dynamic witness lands here
    result["properties"] = properties
    return result


def _notification(level: str, text: str, path: str | None = None) -> dict[str, Any]:
    notification: dict[str, Any] = {"level": level, "message": {"text": text}}
    if path is not None:
        notification["locations"] = [{"physicalLocation": _physical(path, None)}]
    return notification


def build_sarif(result: RunResult, root: Path | None = None) -> dict[str, Any]:
    """The SARIF log of one run, as a JSON-ready dictionary."""
    rules = list(all_rules())
    descriptors = [_rule_descriptor(rule) for rule in rules]
    index = {rule.code: i for i, rule in enumerate(rules)}
    for finding in result.findings:
        if finding.code not in index:
            index[finding.code] = len(descriptors)
            descriptors.append(_dynamic_descriptor(finding))

    findings = result.findings
    notifications: list[dict[str, Any]] = []
    if len(findings) > MAX_RESULTS:
        kept = {id(f) for f in by_severity(findings)[:MAX_RESULTS]}
        findings = [f for f in findings if id(f) in kept]
        notifications.append(
            _notification(
                "warning",
                f"{len(result.findings)} findings, truncated to the {MAX_RESULTS} most severe "
                "(GitHub code scanning accepts at most 25,000 results per run); "
                "use --format json for all of them",
            )
        )
    prints = fingerprints(result)
    results = [_result(f, index[f.code], prints[id(f)]) for f in findings]

    for path, reason in result.unreadable:
        notifications.append(_notification("error", f"{path}: cannot read: {reason}", path))
    for warning in result.warnings:
        notifications.append(_notification("warning", warning))
    for crash in result.crashes:
        notifications.append(_notification("error", crash))
    if result.fork_files:
        notifications.append(_notification("note", fork_note(result.fork_files)))

    invocation: dict[str, Any] = {"executionSuccessful": not result.crashes}
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    root_uri = (root or Path.cwd()).resolve().as_uri().rstrip("/") + "/"
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "triton-lint",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": INFORMATION_URI,
                "rules": descriptors,
            }
        },
        "automationDetails": {"id": "triton-lint/"},
        "originalUriBaseIds": {SRCROOT: {"uri": root_uri}},
        "columnKind": "unicodeCodePoints",
        "invocations": [invocation],
        "results": results,
        "properties": {
            "filesChecked": result.files_checked,
            "totalFindings": len(result.findings),
            "truncated": len(findings) < len(result.findings),
            "statistics": [
                {"code": code, "name": name, "count": count}
                for code, name, count in count_by_code(result.findings)
            ],
        },
    }
    if result.dynamic is not None and result.dynamic.performance:
        run["properties"]["performance"] = {
            "device": result.dynamic.device,
            "rows": [row.to_dict() for row in result.dynamic.performance],
        }
    if result.dynamic is not None and result.dynamic.compiled:
        run["properties"]["compiled"] = {
            "architectures": result.dynamic.compile_archs,
            "variants": [
                {"kernel": r["kernel"], "config": r["config"], **numbers(r)}
                for r in result.dynamic.compiled
            ],
        }
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def render_sarif(result: RunResult, statistics: bool) -> str:
    """SARIF ignores ``statistics``: the counts are always in ``runs[0].properties``."""
    return json.dumps(build_sarif(result), indent=2, ensure_ascii=False) + "\n"
