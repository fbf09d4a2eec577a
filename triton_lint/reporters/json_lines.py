"""JSON Lines: one finding object per line (the keys of ``--format json``), for streaming."""

from __future__ import annotations

import json

from triton_lint.reporters.statistics import count_by_code
from triton_lint.run import RunResult


def render_json_lines(result: RunResult, statistics: bool) -> str:
    if statistics:
        rows: list[object] = [
            {"code": code, "name": name, "count": count}
            for code, name, count in count_by_code(result.findings)
        ]
    else:
        rows = [finding.to_dict() for finding in result.findings]
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
