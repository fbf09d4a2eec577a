"""Baselines: adopt triton-lint in a large codebase by accepting today's findings.

``--write-baseline FILE`` records every current finding by (repo-relative path, code,
fingerprint); ``--baseline FILE`` then hides the findings the baseline holds and reports only
new ones. Baseline entries of linted files that match no finding any more are counted as
resolved. Fingerprints ignore line numbers (see `triton_lint.fingerprint`), so unrelated
edits do not turn old findings into new ones.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from triton_lint import __version__
from triton_lint.fingerprint import VERSION as FINGERPRINT_VERSION
from triton_lint.reporters.common import display_path, fingerprints
from triton_lint.run import RunResult

FORMAT = "triton-lint-baseline"
FORMAT_VERSION = 1

Key = tuple[str, str, str]  # (path, code, fingerprint)


class BaselineError(Exception):
    """The baseline file is missing, unreadable or not a triton-lint baseline."""


def baseline_document(result: RunResult) -> dict[str, Any]:
    prints = fingerprints(result)
    entries = [
        {
            "path": display_path(f.path),
            "code": f.code,
            "kernel": f.kernel,
            "fingerprint": prints[id(f)],
            "line": f.span.line,  # informational only; matching ignores it
            "message": f.message,
        }
        for f in result.findings
    ]
    entries.sort(key=lambda e: (e["path"], e["line"], e["code"], e["fingerprint"]))
    return {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "fingerprint": FINGERPRINT_VERSION,
        "tool_version": __version__,
        "findings": entries,
    }


def render_baseline(result: RunResult) -> str:
    return json.dumps(baseline_document(result), indent=2, ensure_ascii=False) + "\n"


def load_baseline(path: Path) -> Counter[Key]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise BaselineError(f"cannot read baseline {path}: {error.strerror or error}") from error
    except ValueError as error:
        raise BaselineError(f"baseline {path} is not valid JSON: {error}") from error
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise BaselineError(f"{path} is not a triton-lint baseline")
    if data.get("version") != FORMAT_VERSION:
        raise BaselineError(f"baseline {path} has unsupported version {data.get('version')!r}")
    keys: Counter[Key] = Counter()
    for entry in data.get("findings", []):
        try:
            keys[(str(entry["path"]), str(entry["code"]), str(entry["fingerprint"]))] += 1
        except (KeyError, TypeError) as error:
            raise BaselineError(f"baseline {path} has a malformed entry: {entry!r}") from error
    return keys


def apply_baseline(result: RunResult, baseline: Counter[Key]) -> None:
    """Drop the findings the baseline holds; count the baselined ones that disappeared.

    Only entries of files this run linted can be resolved: linting a subset of the codebase
    does not report the rest of the baseline as fixed.
    """
    remaining = Counter(baseline)
    prints = fingerprints(result)
    kept = []
    for finding in result.findings:
        key = (display_path(finding.path), finding.code, prints[id(finding)])
        if remaining[key] > 0:
            remaining[key] -= 1
            result.baselined += 1
        else:
            kept.append(finding)
    result.findings = kept
    linted = {display_path(f.path) for f in result.files}
    result.resolved_baseline = sum(n for (path, _, _), n in remaining.items() if path in linted)
