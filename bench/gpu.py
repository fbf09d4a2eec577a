"""GPU engine report, written to docs/gpu.md from real runs on a machine with a CUDA GPU.

Sections (each replaces its own part of docs/gpu.md, so they can run in separate sessions):
- `fixtures`: which fixture bugs the interpreter, native runs with red zones and compute-sanitizer
  memcheck catch, and the wall time of each (serial, and native with `--jobs`);
- `cost`: what one checked launch costs with red zones and under memcheck (bench/launch_cost.py);
- `perf`: `--bench` on the bundled clean kernels: the performance table and plot;
- `large`: `--large` on fixtures/dynamic/large.py.

Run: `python bench/gpu.py [--sections fixtures,cost,perf,large] [--out docs/gpu.md]`.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time
from collections import defaultdict

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from triton_lint.dynamic import compute_sanitizer as cs  # noqa: E402
from triton_lint.dynamic.cases import case_names  # noqa: E402
from triton_lint.dynamic.devices import INTERPRETER, Device  # noqa: E402
from triton_lint.dynamic.runner import (  # noqa: E402
    run_paths_report,
    sanitize_file,
)
from triton_lint.reporters.markdown import performance_section  # noqa: E402
from triton_lint.reporters.perf_plot import write_plot  # noqa: E402

FIXTURES = ROOT / "fixtures" / "dynamic"
FILES = [
    "vector_add.py",
    "matrix.py",
    "reductions.py",
    "autotuned.py",
    "checks.py",
    "descriptors.py",
    "gpu_recompile.py",
    "bench.py",
    "large.py",
]
BENCH_FILES = ["bench.py", "vector_add.py", "reductions.py"]
SECTIONS = ("fixtures", "cost", "perf", "large")
TITLES = {
    "fixtures": "Bugs caught on the fixtures",
    "cost": "Cost of one checked launch",
    "perf": "Performance audit (`--bench`)",
    "large": "Sizes past 2**31 elements (`--large`)",
}


def cuda() -> Device:
    import torch

    return Device("cuda", f"CUDA ({torch.cuda.get_device_name(0)})", torch.cuda.device_count())


def versions() -> str:
    import torch
    import triton

    return (
        f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}, Triton {triton.__version__}"
    )


def by_case(findings) -> dict[tuple[str, str], set[tuple[str, int]]]:
    """(file name, case) -> {(code, line)}."""
    out: dict[tuple[str, str], set[tuple[str, int]]] = defaultdict(set)
    for f in findings:
        out[(pathlib.Path(f.path).name, f.properties.get("case"))].add((f.code, f.line))
    return out


def cell(found: set[tuple[str, int]]) -> str:
    return ", ".join(f"{code}:{line}" for code, line in sorted(found)) or "clean"


def fixtures_section() -> str:
    paths = [FIXTURES / f for f in FILES]
    runs, secs = {}, {}
    # Cold: the children's bytecode, Triton's launchers and the unit times all start empty
    # (fresh directories); warm: the same run again. The interpreter is timed warm.
    scratch = tempfile.mkdtemp(prefix="tl-gpu-bench-")
    os.environ["XDG_CACHE_HOME"] = os.path.join(scratch, "xdg")
    os.environ["TRITON_CACHE_DIR"] = os.path.join(scratch, "triton")
    for key, device in (("cold", cuda()), ("cuda", cuda()), ("interpreter", INTERPRETER)):
        t = time.perf_counter()
        found, _ = run_paths_report(paths, device=device, progress=False)  # default --jobs
        runs[key], secs[key] = by_case(found), time.perf_counter() - t
        print(key, f"{secs[key]:.1f}s", flush=True)
    if runs["cold"] != runs["cuda"]:
        print("cold and warm native runs disagree", flush=True)
    t = time.perf_counter()
    memcheck: dict[tuple[str, str], set[tuple[str, int]]] = defaultdict(set)
    for path in paths:
        cases = [n for n, _ in case_names(path.read_text())]
        memcheck.update(by_case(sanitize_file(path, cases, "memcheck", timeout=120)))
    secs["memcheck"] = time.perf_counter() - t
    rows, missing_total = [], 0
    for path in paths:
        for case, _line in case_names(path.read_text()):
            key = (path.name, case)
            interp, native = runs["interpreter"].get(key, set()), runs["cuda"].get(key, set())
            missing = interp - native
            missing_total += len(missing)
            rows.append(
                f"| `{path.name}` | `{case}` | {cell(interp)} | {cell(native)} | "
                f"{cell(memcheck.get(key, set()))} | {cell(missing) if missing else '-'} |"
            )
    return "\n".join(
        [
            "All fixture files ran three ways on one GPU: under the interpreter "
            "(`--device interpreter`), natively (`--device cuda`, the default on a GPU: bounds "
            "checks compiled into every load, store and atomic, red zones, poison table), each "
            "with the default `--jobs` (interpreter: one warm child; GPU: half the cores, at "
            "most 8 warm children per card, one unit of work per case, longest first), and "
            "under `compute-sanitizer --tool "
            "memcheck` one file at a time (`--sanitizer memcheck --sanitize-all`: each "
            "combination once until the case's first fault, caching allocator off). Cells are "
            "`code:line`; the last column lists what the interpreter reports and the native run "
            f"does not ({missing_total} in all; see *What only the interpreter checks*).",
            "",
            "| file | case | interpreter | GPU, native | GPU, memcheck | interpreter only |",
            "|---|---|---|---|---|---|",
            *rows,
            "",
            "| run | wall time, all files |",
            "|---|---:|",
            f"| interpreter, default `--jobs` | {secs['interpreter']:.1f} s |",
            f"| GPU native, default `--jobs` (one GPU), cold caches | {secs['cold']:.1f} s |",
            f"| GPU native, default `--jobs` (one GPU), warm caches | {secs['cuda']:.1f} s |",
            f"| memcheck, one file at a time | {secs['memcheck']:.1f} s |",
            "",
            f"Native / interpreter: {secs['cuda'] / secs['interpreter']:.2f} warm, "
            f"{secs['cold'] / secs['interpreter']:.2f} cold; memcheck / native: "
            f"{secs['memcheck'] / secs['cuda']:.1f}x warm, {secs['memcheck'] / secs['cold']:.1f}x "
            "cold. *Cold*: the children's Python bytecode cache, Triton's cache (the launchers "
            "it builds with a host compiler) and the per-case times of earlier runs start "
            "empty; *warm*: the same run again. Kernels with checks compiled in are never "
            "cached between processes (they hold each process's table addresses).",
        ]
    )


def cost_section() -> str:
    script = [sys.executable, str(ROOT / "bench" / "launch_cost.py")]
    native = json.loads(subprocess.run(script, capture_output=True, text=True).stdout)
    env = dict(os.environ, PYTORCH_NO_CUDA_MEMORY_CACHING="1")
    sanitizer = [cs.find_compute_sanitizer(), "--tool", "memcheck", "--print-limit", "1"]
    proc = subprocess.run([*sanitizer, *script, "plain"], capture_output=True, text=True, env=env)
    # compute-sanitizer prints its own summary after the program's line of JSON
    result = next(line for line in proc.stdout.splitlines() if line.startswith("{"))
    memcheck = json.loads(result)["plain"]
    rows = []
    for n, plain in native["plain"].items():
        checked, mc = native["checked"][n], memcheck[n]
        whole, host = native["whole"][n], native["whole_host"][n]
        rows.append(
            f"| {int(n):,} | {plain:.3f} | {checked:.3f} ({checked / plain:.1f}x) | "
            f"{mc:.3f} ({mc / plain:.1f}x) | {mc / checked:.1f} | {whole:.3f} | {host:.3f} |"
        )
    return "\n".join(
        [
            "One call of `vector_add.add_clean`, averaged over 20 calls after a warm-up "
            "(`python bench/launch_cost.py`). *Checked* is the launch with the bounds checks "
            "compiled in, the launch's allocation table written before it and the violation "
            "count read after it (one device sync); *memcheck* the plain launch under "
            "`compute-sanitizer --tool memcheck`; *whole checked run* what the engine pays per "
            "combination: inputs generated on the GPU and placed between guards, guards filled "
            "and checked, the checked run, the reference computed and compared with the outputs "
            "on the GPU (only verdicts come back); *on the host* the same work with inputs "
            "generated on the host and outputs and reference copied back to be compared there, "
            "as the engine did before.",
            "",
            "| elements | plain ms | checked ms | memcheck ms | memcheck / checked | "
            "whole checked run ms | same, on the host ms |",
            "|---:|---:|---:|---:|---:|---:|---:|",
            *rows,
        ]
    )


def perf_section(out_dir: pathlib.Path) -> str:
    t = time.perf_counter()
    _findings, report = run_paths_report(
        [FIXTURES / f for f in BENCH_FILES], device=cuda(), bench=True, progress=False
    )
    secs = time.perf_counter() - t
    if write_plot(report.performance, out_dir / "gpu.perf.png"):
        report.performance_plot = "gpu.perf.png"
    codes = sorted({(f.code, f.properties.get("case")) for f in _findings if f.code == "TL914"})
    return "\n".join(
        [
            "`triton-lint --dynamic --bench` on "
            + ", ".join(f"`{f}`" for f in BENCH_FILES)
            + f" ({secs:.0f} s with the checks). Cases that fail their checks are not timed. "
            "TL914: " + (", ".join(f"`{case}`" for _code, case in codes) or "none") + ".",
            "",
            performance_section(report) or "(no timings)",
        ]
    )


def large_section() -> str:
    t = time.perf_counter()
    findings, report = run_paths_report(
        [FIXTURES / "large.py"], device=cuda(), large=True, progress=False
    )
    secs = time.perf_counter() - t
    cells = [c for c in report.stress if re.search(r"=\d{7,}", c.variant)]
    lines = [
        f"`triton-lint --dynamic --large fixtures/dynamic/large.py`: {secs:.0f} s in all.",
        "",
        "| case | sizes | status | codes |",
        "|---|---|---|---|",
        *(
            f"| `{c.case}` | {c.variant} | {c.status} | {', '.join(c.codes) or '-'} |"
            for c in cells
        ),
        "",
    ]
    lines += [f"- {f.code} line {f.line}: {f.message}" for f in findings]
    return "\n".join(lines)


def replace_section(text: str, key: str, body: str) -> str:
    """Put `body` under `## TITLES[key]`, replacing that section if present."""
    title = f"## {TITLES[key]}"
    block = f"{title}\n\n{body.strip()}\n"
    pattern = re.compile(rf"^{re.escape(title)}\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(text):
        return pattern.sub(lambda _m: block + "\n", text).rstrip() + "\n"
    return text.rstrip() + "\n\n" + block


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(ROOT / "docs" / "gpu.md"))
    ap.add_argument("--sections", default=",".join(SECTIONS))
    ns = ap.parse_args()
    out = pathlib.Path(ns.out)
    text = out.read_text(encoding="utf-8") if out.exists() else ""
    if not text.startswith("# "):
        text = "# The GPU engine, measured\n"
    for key in sorted(ns.sections.split(","), key=SECTIONS.index):
        body = {
            "fixtures": fixtures_section,
            "cost": cost_section,
            "perf": lambda: perf_section(out.parent),
            "large": large_section,
        }[key]()
        text = replace_section(
            text,
            key,
            f"Measured with `python bench/gpu.py --sections {key}` on {versions()}.\n\n{body}",
        )
        out.write_text(text, encoding="utf-8")
        print(body, flush=True)


if __name__ == "__main__":
    main()
