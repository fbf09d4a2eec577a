"""Turn compiled variants (one row per kernel x config x architecture) into TL915/TL916/TL917.

Rows come from `triton_lint.compile.child` as dicts: kernel, path, line (its `def`), config,
arch (capability), and either shared/registers/spills/num_warps or error/error_line. A finding
names one kernel and config, lists the architectures it concerns and carries every number in
its properties. Plain data: no torch or triton.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from triton_lint.compile.targets import ARCHS, Arch, blocks_per_sm
from triton_lint.dynamic.codes import CODES
from triton_lint.finding import Finding, Severity, Span

Row = dict[str, Any]


def arch_of(row: Row) -> Arch:
    return ARCHS[f"sm_{row['arch']}"]


def config_label(config: dict[str, Any]) -> str:
    """`BM=128, BN=128, num_warps=8, num_stages=5` (as the source spells the config)."""
    return ", ".join(f"{k}={v}" for k, v in config.items()) or "default config"


def kb(n: int) -> str:
    return f"{n / 1024:.0f} KB" if n % 1024 == 0 else f"{n / 1024:.1f} KB"


def numbers(row: Row) -> dict[str, Any]:
    """A variant's numbers for JSON/SARIF properties (and the Markdown table)."""
    if row.get("error"):
        return {"arch": f"sm_{row['arch']}", "error": row["error"]}
    arch = arch_of(row)
    occupancy = blocks_per_sm(arch, row["registers"], row["shared"], row["num_warps"])
    return {
        "arch": arch.name,
        "registers": row["registers"],
        "spillBytes": row["spills"],
        "sharedBytes": row["shared"],
        "sharedLimitBytes": arch.shared_per_block,
        "numWarps": row["num_warps"],
        "blocksPerSM": occupancy["blocks"],
        "blocksPerSMBy": {k: v for k, v in occupancy.items() if k != "blocks"},
    }


def merge(rows: Iterable[Row]) -> list[Row]:
    """One row per (kernel, config, arch): the worst variant where several sizes compiled
    differently (most shared memory, then most spills); a failure wins over a success."""
    best: dict[tuple[Any, ...], Row] = {}
    for row in rows:
        key = (row["path"], row["kernel"], json.dumps(row["config"], default=str), row["arch"])
        old = best.get(key)
        rank = (bool(row.get("error")), row.get("shared", 0), row.get("spills", 0))
        if old is None or rank > (
            bool(old.get("error")),
            old.get("shared", 0),
            old.get("spills", 0),
        ):
            best[key] = row
    return list(best.values())


def _finding(
    code: str,
    row: Row,
    line: int,
    message: str,
    props: dict[str, Any],
    severity: Severity | None = None,
) -> Finding:
    meta = CODES[code]
    return Finding(
        path=row["path"],
        span=Span(line, 1, line, 1),
        code=code,
        name=meta.name,
        severity=severity or meta.severity,
        category=meta.category,
        message=message,
        kernel=row["kernel"],
        properties={
            "kernel": row["kernel"],
            "config": row["config"],
            "case": row.get("case"),
            **props,
        },
    )


def compile_findings(rows: Iterable[Row]) -> list[Finding]:
    """TL915, TL916 and TL917 over all variants (see the module docstring)."""
    by_config: dict[tuple[Any, ...], list[Row]] = defaultdict(list)
    for row in merge(rows):
        by_config[
            (row["path"], row["line"], row["kernel"], json.dumps(row["config"], default=str))
        ].append(row)
    # per kernel: the architectures where some config does not spill, and where some fits
    clean_configs: dict[tuple[Any, ...], set[int]] = defaultdict(set)
    fitting: dict[tuple[Any, ...], set[int]] = defaultdict(set)
    for (path, _line, kernel, _cfg), variants in by_config.items():
        for r in variants:
            if not r.get("error") and not r["spills"]:
                clean_configs[(path, kernel)].add(r["arch"])
            if not r.get("error") and r["shared"] <= arch_of(r).shared_per_block:
                fitting[(path, kernel)].add(r["arch"])
    findings: list[Finding] = []
    for (path, line, kernel, _cfg), variants in by_config.items():
        variants.sort(key=lambda r: r["arch"])
        ok = [r for r in variants if not r.get("error")]
        head = variants[0]
        label = config_label(head["config"])
        over = [r for r in ok if r["shared"] > arch_of(r).shared_per_block]
        if over:
            archs = ", ".join(
                f"{arch_of(r).name} ({kb(arch_of(r).shared_per_block)})" for r in over
            )
            fits = [arch_of(r).name for r in ok if r not in over]
            skipped = all(r.get("autotuned") and r["arch"] in fitting[(path, kernel)] for r in over)
            findings.append(
                _finding(
                    "TL915",
                    head,
                    line,
                    f"`{kernel}` [{label}] needs {kb(max(r['shared'] for r in over))} of shared "
                    f"memory per block, over the limit of {archs}: launching it there raises "
                    "OutOfResources"
                    + (f" (fits {', '.join(fits)})" if fits else "")
                    + (
                        "; another autotune config fits there, so the tuner skips this one"
                        if skipped
                        else ""
                    ),
                    {
                        "architectures": [arch_of(r).name for r in over],
                        "variants": [numbers(r) for r in variants],
                    },
                    severity=Severity.INFO if skipped else None,
                )
            )
        spilling = [r for r in ok if r["spills"]]
        if spilling:
            alternative = all(r["arch"] in clean_configs[(path, kernel)] for r in spilling)
            worst = max(spilling, key=lambda r: r["spills"])
            findings.append(
                _finding(
                    "TL916",
                    head,
                    line,
                    f"`{kernel}` [{label}] spills {worst['spills']} bytes per thread to local "
                    f"memory ({worst['registers']} registers) on "
                    + ", ".join(arch_of(r).name for r in spilling)
                    + (
                        "; another config of this kernel does not spill there"
                        if alternative
                        else ""
                    ),
                    {
                        "architectures": [arch_of(r).name for r in spilling],
                        "variants": [numbers(r) for r in variants],
                    },
                    severity=Severity.INFO if alternative else None,
                )
            )
        failed = [r for r in variants if r.get("error")]
        if failed and ok:
            first = failed[0]
            findings.append(
                _finding(
                    "TL917",
                    head,
                    int(first.get("error_line") or line),
                    f"`{kernel}` [{label}] does not compile for "
                    + ", ".join(arch_of(r).name for r in failed)
                    + f" ({first['error']}); it compiles for "
                    + ", ".join(arch_of(r).name for r in ok),
                    {
                        "architectures": [arch_of(r).name for r in failed],
                        "compiledFor": [arch_of(r).name for r in ok],
                        "variants": [numbers(r) for r in variants],
                    },
                )
            )
    return sorted(findings, key=Finding.sort_key)
