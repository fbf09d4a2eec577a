"""GPU engine report: which fixture bugs native runs catch, red zones against compute-sanitizer
memcheck on the same cases, and the interpreter's codes for comparison. Writes docs/gpu.md.

Run on a machine with a CUDA GPU: `python bench/gpu.py [--out docs/gpu.md]`.
"""

from __future__ import annotations

import argparse
import pathlib
import subprocess
import sys
import time
from collections import defaultdict

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from triton_lint.dynamic.cases import case_names  # noqa: E402
from triton_lint.dynamic.runner import ChildOptions, run_file_report, sanitize_file  # noqa: E402

FIXTURES = ROOT / "fixtures" / "dynamic"
FILES = [
    "vector_add.py",
    "matrix.py",
    "reductions.py",
    "autotuned.py",
    "checks.py",
    "descriptors.py",
    "gpu_recompile.py",
]


def by_case(findings) -> dict[str, set[str]]:
    out: dict[str, set[str]] = defaultdict(set)
    for f in findings:
        out[f.properties.get("case")].add(f.code)
    return out


def versions() -> str:
    code = (
        "import torch, triton; print(torch.cuda.get_device_name(0), '|', torch.__version__, "
        "'|', triton.__version__)"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(ROOT / "docs" / "gpu.md"))
    ns = ap.parse_args()
    rows = []
    totals = defaultdict(float)
    for name in FILES:
        path = FIXTURES / name
        cases = [n for n, _ in case_names(path.read_text())]
        runs = {}
        for device in ("interpreter", "cuda"):
            t = time.perf_counter()
            found, _ = run_file_report(path, options=ChildOptions(device, timeout=60))
            runs[device] = (by_case(found), time.perf_counter() - t)
        t = time.perf_counter()
        memcheck = by_case(sanitize_file(path, cases, "memcheck", timeout=60))
        runs["memcheck"] = (memcheck, time.perf_counter() - t)
        for key, (_, secs) in runs.items():
            totals[key] += secs
        for case in cases:
            rows.append(
                (
                    name,
                    case,
                    *(
                        ", ".join(sorted(runs[k][0].get(case, ()))) or "clean"
                        for k in ("interpreter", "cuda", "memcheck")
                    ),
                )
            )
        print(name, {k: f"{v[1]:.1f}s" for k, v in runs.items()}, flush=True)
    gpu, torch_v, triton_v = (s.strip() for s in versions().split("|"))
    lines = [
        "# The GPU engine on the bundled dynamic fixtures",
        "",
        f"Measured with `python bench/gpu.py` on an {gpu} (torch {torch_v}, Triton {triton_v}).",
        "Each fixture file's cases ran three ways: under the interpreter (`--device interpreter`),",
        "natively with red zones (`--device cuda`, the default on a GPU), and natively under",
        "`compute-sanitizer --tool memcheck` (`--sanitizer memcheck --sanitize-all`: each",
        "combination once until the case's first fault, caching allocator off). Wall time",
        "includes each child's start-up.",
        "",
        "| file | case | interpreter | GPU, red zones | GPU, memcheck |",
        "|---|---|---|---|---|",
    ]
    lines += [f"| `{f}` | `{c}` | {a} | {b} | {m} |" for f, c, a, b, m in rows]
    lines += [
        "",
        "| run | wall time, all files |",
        "|---|---:|",
        *(f"| {k} | {v:.1f} s |" for k, v in totals.items()),
        "",
    ]
    pathlib.Path(ns.out).write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
