"""The Markdown report's `--compile-only` section: per kernel, a table config x architecture
with registers, spills, shared memory and resulting occupancy, so a reviewer sees which configs
are safe where."""

from __future__ import annotations

import json
from typing import Any

from triton_lint.compile.findings import arch_of, config_label, kb, numbers
from triton_lint.reporters.common import display_path

LEGEND = (
    "Each cell: registers per thread · spilled bytes per thread · shared memory per block · "
    "resident blocks per SM (the smallest of the limits from registers, shared memory and "
    "warps). ❌ the compiler rejected the variant; 🚫 shared memory over the architecture's "
    "per-block limit (launching raises OutOfResources); ⚠️ spills."
)


def _cell(row: dict[str, Any] | None) -> str:
    if row is None:
        return ""
    if row.get("error"):
        return "❌ " + str(row["error"]).split(":", 1)[0]
    n = numbers(row)
    over = row["shared"] > arch_of(row).shared_per_block
    text = (
        f"{n['registers']} regs · {n['spillBytes']} B · {kb(n['sharedBytes'])} · "
        f"{n['blocksPerSM']} blk"
    )
    if over:
        return f"🚫 {text} (limit {kb(n['sharedLimitBytes'])})"
    return f"⚠️ {text}" if n["spillBytes"] else text


def compile_section(rows: list[dict[str, Any]], archs: list[str]) -> str | None:
    """The tables, one per kernel; None when nothing was compiled."""
    if not rows:
        return None
    kernels: dict[tuple[str, int, str], dict[str, dict[str, dict[str, Any]]]] = {}
    for row in rows:
        per_config = kernels.setdefault((row["path"], row["line"], row["kernel"]), {})
        cfg = json.dumps(row["config"], default=str)
        per_config.setdefault(cfg, {})[f"sm_{row['arch']}"] = row
    parts = [
        f"{len(rows)} variants of {len(kernels)} kernels compiled for {', '.join(archs)} "
        "(no GPU). " + LEGEND
    ]
    for (path, line, kernel), configs in kernels.items():
        lines = [
            f"### `{kernel}` ({display_path(path)}:{line})",
            "",
            "| Config | " + " | ".join(archs) + " |",
            "|---|" + "---|" * len(archs),
        ]
        for cfg, by_arch in configs.items():
            label = config_label(json.loads(cfg)).replace("|", "\\|")
            lines.append(f"| {label} | " + " | ".join(_cell(by_arch.get(a)) for a in archs) + " |")
        parts.append("\n".join(lines))
    return "\n\n".join(parts)
