"""Time `triton-lint --compile-only` on the bundled stress cases and the corpus cases, cold (an
empty Triton cache) and cached, and summarise what it found per architecture.

    python bench/compile_corpus.py [--arch sm_80,sm_86,sm_89,sm_90] [--jobs 2] [PATHS...]

Default PATHS: bench/compile_cases (kernels of the corpus libraries, unpacked under
$TRITON_LINT_CORPUS) and fixtures/dynamic. Prints Markdown (timings, one row per architecture,
the TL915/TL916/TL917/TL908 findings) for docs/compile.md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CODES = ("TL915", "TL916", "TL917", "TL908")


def run(paths: list[str], arch: str, jobs: int, cache: str) -> tuple[float, dict]:
    """One `--compile-only` run with SARIF output: (seconds, the SARIF run)."""
    with tempfile.NamedTemporaryFile(suffix=".sarif") as out:
        started = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                "-m",
                "triton_lint",
                "--compile-only",
                "--arch",
                arch,
                "-j",
                str(jobs),
                "--timeout",
                "120",
                "--cache-dir",
                cache,
                "--format",
                "sarif",
                "-o",
                out.name,
                *paths,
            ],
            cwd=REPO,
            check=False,
            stdout=subprocess.DEVNULL,
        )
        seconds = time.perf_counter() - started
        return seconds, json.loads(Path(out.name).read_text())["runs"][0]


def summary(sarif: dict) -> str:
    compiled = sarif["properties"].get("compiled", {"architectures": [], "variants": []})
    results = [r for r in sarif["results"] if r["ruleId"] in CODES]
    kernels = {v["kernel"] for v in compiled["variants"]}
    lines = [
        f"{len(compiled['variants'])} variants (kernel x config x architecture) of "
        f"{len(kernels)} kernels.",
        "",
        "| Architecture | Variants | Rejected | Over the shared-memory limit | Spilling | "
        "Most shared memory | Most registers |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for arch in compiled["architectures"]:
        rows = [v for v in compiled["variants"] if v["arch"] == arch]
        ok = [v for v in rows if "error" not in v]
        over = sum(v["sharedBytes"] > v["sharedLimitBytes"] for v in ok)
        spills = sum(v["spillBytes"] > 0 for v in ok)
        most = max((v["sharedBytes"] for v in ok), default=0)
        regs = max((v["registers"] for v in ok), default=0)
        lines.append(
            f"| {arch} | {len(rows)} | {len(rows) - len(ok)} | {over} | {spills} | "
            f"{most // 1024} KB | {regs} |"
        )
    counts = Counter((r["ruleId"], r["level"]) for r in results)
    lines += [
        "",
        "Findings: " + ", ".join(f"{c} {lvl} {n}" for (c, lvl), n in sorted(counts.items())),
    ]
    lines += ["", "| Code | Level | Where | Message |", "|---|---|---|---|"]
    for r in results:
        loc = r["locations"][0]["physicalLocation"]
        where = f"{loc['artifactLocation']['uri'].split('/')[-1]}:{loc['region']['startLine']}"
        text = r["message"]["text"].replace("|", "\\|")[:220]
        lines.append(f"| {r['ruleId']} | {r['level']} | {where} | {text} |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--arch", default="sm_80,sm_86,sm_89,sm_90")
    ap.add_argument("--jobs", type=int, default=2)
    ns = ap.parse_args()
    paths = ns.paths or ["bench/compile_cases", "fixtures/dynamic"]
    with tempfile.TemporaryDirectory(prefix="tl-compile-bench-") as cache:
        cold, sarif = run(paths, ns.arch, ns.jobs, cache)
        cached, _ = run(paths, ns.arch, ns.jobs, cache)
    where = f"`{' '.join(paths)}` for {ns.arch}, -j {ns.jobs}"
    print(f"{where}: cold {cold:.0f} s, cached {cached:.0f} s.\n")
    print(summary(sarif))
    return 0


if __name__ == "__main__":
    sys.exit(main())
