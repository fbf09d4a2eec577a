"""A JSON array, one object per finding; the keys are a contract other tools rely on."""

from __future__ import annotations

import json

from triton_lint.reporters.statistics import count_by_code
from triton_lint.run import RunResult


def render_json(result: RunResult, statistics: bool) -> str:
    if statistics:
        data: object = [
            {"code": code, "name": name, "count": count}
            for code, name, count in count_by_code(result.findings)
        ]
    else:
        data = [finding.to_dict() for finding in result.findings]
    return json.dumps(data, indent=2) + "\n"
