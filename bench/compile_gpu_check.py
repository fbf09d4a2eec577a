"""Check `--compile-only`'s numbers against the driver, on a GPU.

    python bench/compile_gpu_check.py --out docs/compile-gpu.md [PATHS...]

For the stress cases under PATHS (default: fixtures/compile and bench/compile_gpu_cases.py) this
(1) predicts every variant for this GPU's architecture exactly as `triton-lint --compile-only`
does (a child process, no driver: registers and spills from cuobjdump, shared memory from the
metadata, TL915 from the per-architecture limit table), then (2) runs the same wrappers on the
GPU with the same launches (one per autotune config), compiles each natively, loads it (the
driver's `n_regs`, `n_spills` (Triton reports local memory in 32-bit words: bytes / 4);
`OutOfResources` when shared memory is over the device's limit)
and launches it. It prints, and writes to --out, one Markdown table row per variant with both
sets of numbers and whether they agree. Needs torch, triton, libcst and click; no network.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ["TRITON_INTERPRET"] = "0"
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

DEFAULT_PATHS = [REPO / "fixtures" / "compile", REPO / "bench" / "compile_gpu_cases.py"]


def predict(paths: list[Path], arch: Any) -> tuple[dict[tuple[str, str, str], dict], list]:
    """`--compile-only` for this architecture: rows by (file, kernel, config) and findings."""
    from triton_lint.compile.run import compile_paths

    with tempfile.TemporaryDirectory(prefix="tl-gpu-check-") as cache:
        result = compile_paths(paths, [arch], jobs=1, cache_dir=cache)
    rows = {
        (Path(r["path"]).name, r["kernel"], json.dumps(r["config"], default=str)): r
        for r in result.rows
    }
    return rows, result.findings


def out_of_resources() -> tuple[type[BaseException], ...]:
    import triton

    kinds: list[type[BaseException]] = []
    for where in ("triton.runtime.errors", "triton.runtime.autotuner"):
        try:
            kinds.append(__import__(where, fromlist=["OutOfResources"]).OutOfResources)
        except (ImportError, AttributeError):
            continue
    return tuple(kinds) or (triton.OutOfResources,)


def measure(paths: list[Path]) -> dict[tuple[str, str, str], dict]:
    """Run every case's launches natively: the driver's numbers per (file, kernel, config)."""
    import torch

    from triton_lint import stress
    from triton_lint.compile.autotune import expand_autotuners
    from triton_lint.compile.child import config_of, run_case
    from triton_lint.dynamic.cases import discover, import_user_module
    from triton_lint.dynamic.launches import LaunchRecorder

    torch.set_default_device(torch.device("cuda", torch.cuda.current_device()))
    oor = out_of_resources()
    recorder = LaunchRecorder(launch=False)
    expand_autotuners(lambda: None)
    measured: dict[tuple[str, str, str], dict] = {}
    for path in discover(paths):
        real = os.path.abspath(path)
        import_user_module(real)
        for case in [c for c in stress.REGISTRY if os.path.abspath(c.path) == real]:
            for rec in run_case(case, recorder, device="cuda"):
                key = (path.name, rec.name, json.dumps(config_of(rec), default=str))
                if key in measured:
                    continue
                measured[key] = launch(rec, recorder.original, oor)
    return measured


def launch(rec: Any, run: Any, oor: tuple[type[BaseException], ...]) -> dict[str, Any]:
    """Compile natively, load (n_regs, n_spills or OutOfResources), then launch."""
    import torch

    args, kwargs = rec.call
    kwargs = {k: v for k, v in kwargs.items() if k != "warmup"}
    out: dict[str, Any] = {}
    try:
        kernel = run(rec.kernel, *args, warmup=True, **kwargs)
    except Exception as e:
        return {"compile_error": f"{type(e).__name__}: {str(e).splitlines()[0][:120]}"}
    out["shared"] = int(kernel.metadata.shared)
    try:
        kernel._init_handles()
        out["n_regs"], out["n_spills"] = int(kernel.n_regs), int(kernel.n_spills)
        # Triton's launcher divides the driver's local-memory bytes by 4 (32-bit words).
        out["spill_bytes"] = 4 * out["n_spills"]
    except oor as e:
        out["load"] = f"OutOfResources: {str(e)[:100]}"
    try:
        run(rec.kernel, *args, warmup=False, **kwargs)
        torch.cuda.synchronize()
        out["launch"] = "ok"
    except oor:
        out["launch"] = "OutOfResources"
    except Exception as e:
        out["launch"] = f"{type(e).__name__}: {str(e).splitlines()[0][:80]}"
    return out


def table(arch: Any, predicted: dict, measured: dict, device: str) -> tuple[str, int, int]:
    import torch
    import triton

    lines = [
        f"Device: {device} ({arch.name}); torch {torch.__version__}, triton {triton.__version__}.",
        "",
        "| Kernel | Config | Predicted regs / spill bytes / shared | Driver n_regs / "
        "4 * n_spills / metadata.shared | TL915 predicted | Launch | Agree |",
        "|---|---|---|---|---|---|---|",
    ]
    agree = total = 0
    for key in sorted(set(predicted) | set(measured)):
        file, kernel, cfg = key
        p, m = predicted.get(key), measured.get(key)
        label = ", ".join(f"{k}={v}" for k, v in json.loads(cfg).items()) or "default"
        if p is None or p.get("error"):
            pred, overflow = ("not compiled" if p is None else f"error: {p['error'][:60]}"), None
        else:
            pred = f"{p['registers']} / {p['spills']} / {p['shared']}"
            overflow = p["shared"] > arch.shared_per_block
        if m is None:
            got, launched = "not run", ""
        elif "compile_error" in m:
            got, launched = f"error: {m['compile_error'][:60]}", ""
        else:
            got = f"{m.get('n_regs', '-')} / {m.get('spill_bytes', '-')} / {m['shared']}" + (
                " (load: OutOfResources)" if "load" in m else ""
            )
            launched = m.get("launch", "")
        ok = bool(p and m) and _agrees(p, m, overflow)
        total += 1
        agree += ok
        lines.append(
            f"| `{kernel}` ({file}) | {label} | {pred} | {got} | "
            f"{'yes' if overflow else 'no' if overflow is not None else '-'} | {launched} | "
            f"{'✅' if ok else '❌'} |"
        )
    lines += ["", f"{agree} of {total} variants agree."]
    return "\n".join(lines) + "\n", agree, total


def _agrees(p: dict, m: dict, overflow: bool | None) -> bool:
    """Same numbers, and OutOfResources exactly where TL915 predicted it (or both failed)."""
    if p.get("error") or "compile_error" in m:
        return bool(p.get("error")) and "compile_error" in m
    raised = "load" in m or m.get("launch") == "OutOfResources"
    if overflow:
        return raised and p["shared"] == m["shared"]
    return not raised and (p["registers"], p["spills"], p["shared"]) == (
        m["n_regs"],
        m["spill_bytes"],
        m["shared"],
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="*", type=Path)
    ap.add_argument("--out", type=Path, default=None, help="write the Markdown table here")
    ns = ap.parse_args()
    import torch

    from triton_lint.compile.targets import ARCHS

    if not torch.cuda.is_available():
        print("no CUDA GPU: this check compares with the driver and needs one", file=sys.stderr)
        return 2
    major, minor = torch.cuda.get_device_capability()
    arch = ARCHS.get(f"sm_{major}{minor}")
    if arch is None:
        print(f"sm_{major}{minor} is not in the limit table: {', '.join(ARCHS)}", file=sys.stderr)
        return 2
    paths = ns.paths or DEFAULT_PATHS
    started = time.perf_counter()
    predicted, findings = predict(paths, arch)
    predicted_s = time.perf_counter() - started
    measured = measure(paths)
    text, agree, total = table(arch, predicted, measured, torch.cuda.get_device_name())
    text += (
        f"\nPrediction (compile-only, cold cache) took {predicted_s:.1f} s; findings: "
        + (", ".join(sorted(f"{f.code} {f.kernel}" for f in findings)) or "none")
        + ".\n"
    )
    print(text)
    if ns.out is not None:
        ns.out.parent.mkdir(parents=True, exist_ok=True)
        ns.out.write_text(text, encoding="utf-8")
    return 0 if agree == total else 1


if __name__ == "__main__":
    sys.exit(main())
