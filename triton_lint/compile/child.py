"""Child process of `--compile-only`: run one file's stress cases without launching anything
and compile every launch (every autotune config) for the given architectures.

Run as `python -m triton_lint.compile.child --file F --out O --arch 86 [--arch 90 ...]` with
`TRITON_INTERPRET=0`. No GPU and no CUDA driver are needed: a stand-in driver tells Triton
which target to compile for, and `JITFunction.run(..., warmup=True)` compiles with Triton's own
argument specialisation (pointer alignment, integer divisibility) and returns the kernel without
launching it. Registers and spills come from `cuobjdump --dump-resource-usage` on the cubin,
shared memory from the kernel's metadata. Events (JSON lines): `start`/`done` per case,
`compiling` before and `variant` after each compile, `case_error`, and `finished` last: the parent
restarts a child that ends without it after the compile or case it was in (`--skip-cases`,
`--skip`).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import traceback
from typing import Any

from triton_lint import stress
from triton_lint.compile.autotune import expand_autotuners
from triton_lint.compile.targets import nvidia_bin_dir
from triton_lint.dynamic.cases import import_user_module
from triton_lint.dynamic.inputs import combos, make_args
from triton_lint.dynamic.kernel_source import compile_error_frame, python_function
from triton_lint.dynamic.launches import LaunchRecord, LaunchRecorder
from triton_lint.dynamic.triton_compat import install_cpu_autotuner
from triton_lint.stress import def_line


class NoLaunch(Exception):
    """The wrapper raised (or called sys.exit) before it launched any kernel."""


class TargetDriver:
    """The part of Triton's driver that compiling asks for: the device (one per architecture,
    so each gets its own in-memory kernel cache), a stream and the target."""

    def __init__(self, capability: int) -> None:
        self.capability = capability

    def get_current_device(self) -> int:
        return self.capability

    def get_current_stream(self, device: Any = None) -> int:
        return 0

    def get_current_target(self) -> Any:
        from triton.backends.compiler import GPUTarget

        return GPUTarget("cuda", self.capability, 32)


def cuobjdump() -> str:
    exe = os.path.join(nvidia_bin_dir() or "", "cuobjdump")
    return exe if os.path.exists(exe) else "cuobjdump"


def resource_usage(cubin: bytes) -> dict[str, int]:
    """REG (registers per thread) and STACK (local memory per thread: spills) of the cubin's
    kernel, as `cuobjdump --dump-resource-usage` prints them."""
    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as fh:
        fh.write(cubin)
    try:
        out = subprocess.run(
            [cuobjdump(), "--dump-resource-usage", fh.name],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        ).stdout
    finally:
        os.unlink(fh.name)
    found = dict(re.findall(r"\b(REG|STACK|LOCAL):(\d+)", out))
    return {
        "registers": int(found.get("REG", 0)),
        "spills": int(found.get("STACK", 0)) + int(found.get("LOCAL", 0)),
    }


def config_of(rec: LaunchRecord) -> dict[str, Any]:
    """The variant's config as the source spells it: constexpr values, then `num_warps` and
    `num_stages` where the launch or its autotune config sets them."""
    config = {k: v for k, v in rec.constexprs.items() if isinstance(v, (int, float, bool, str))}
    _args, kwargs = rec.call or ((), {})
    for key in ("num_warps", "num_stages"):
        if kwargs.get(key) is not None:
            config[key] = kwargs[key]
    return config


def compile_launch(rec: LaunchRecord, capability: int, run: Any) -> dict[str, Any]:
    """Compile one recorded launch for `capability` with `run` (Triton's own
    `JITFunction.run`); the variant's numbers or its error."""
    from triton.runtime import driver

    args, kwargs = rec.call or ((), {})
    kwargs = {k: v for k, v in kwargs.items() if k != "warmup"}
    driver.set_active(TargetDriver(capability))
    fn = python_function(rec.kernel)
    base = {"kernel": rec.name, "path": fn.__code__.co_filename, "line": def_line(fn)}
    started = time.perf_counter()
    try:
        kernel = run(rec.kernel, *args, warmup=True, **kwargs)
    except Exception as e:
        frame = compile_error_frame(e, [rec.kernel])
        return {
            **base,
            "config": config_of(rec),
            "error": first_line(e),
            "error_line": frame.lineno if frame is not None else None,
        }
    usage = resource_usage(kernel.asm["cubin"])
    return {
        **base,
        "seconds": round(time.perf_counter() - started, 3),
        "config": config_of(rec),
        "shared": int(kernel.metadata.shared),
        "num_warps": int(kernel.metadata.num_warps),
        "hash": str(getattr(kernel.metadata, "hash", "")),
        **usage,
    }


def first_line(error: BaseException) -> str:
    """The message a reader needs: the innermost cause (Triton wraps the frontend's ValueError
    in a CompilationError whose own text, on 3.3, is only the source excerpt), else the
    compiler's last unindented line (ptxas or Triton)."""
    cause = error
    while cause.__cause__ is not None and cause.__cause__ is not cause:
        cause = cause.__cause__
    if cause is not error and str(cause).strip():
        inner = str(cause).strip().splitlines()[0]
        return f"{type(error).__name__}: {type(cause).__name__}: {inner[:300]}"
    text = str(error).strip() or type(error).__name__
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith(" ")]
    return f"{type(error).__name__}: {(lines[-1] if lines else text)[:300]}"


def run_case(
    case: stress.Case, recorder: LaunchRecorder, device: str = "cpu"
) -> list[LaunchRecord]:
    """Call the wrapper once per sizes x dtypes x layout (the first value pattern: values do
    not change what is compiled) on inputs made on `device`; the launches it made, none
    executed. A wrapper may fail on the garbage it reads back from outputs nothing wrote; what
    it launched before counts. Raises NoLaunch when it launched nothing and failed."""
    recorder.reset_run()
    first = (case.patterns or ("normal",))[0]
    failure: BaseException | None = None
    for combo in combos(case):
        if combo.pattern != first:
            continue
        try:
            case.fn(*make_args(case, combo, device=device))
        except (Exception, SystemExit) as e:
            failure = failure or e
    if not recorder.launches and failure is not None:
        what = (
            f"called sys.exit({failure.code!r})"
            if isinstance(failure, SystemExit)
            else f"raised {type(failure).__name__}: {str(failure)[:200]}"
        )
        raise NoLaunch(f"the wrapper {what} before launching any kernel")
    return list(recorder.launches)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--file", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--arch", action="append", type=int, required=True)
    ap.add_argument("--skip-cases", type=int, default=0, help="cases an earlier child finished")
    ap.add_argument("--skip", type=int, default=0, help="compiles an earlier child did")
    ns = ap.parse_args(argv)
    path = os.path.abspath(ns.file)

    def emit(obj: dict[str, Any]) -> None:
        with open(ns.out, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(obj, default=str) + "\n")

    from triton.runtime import driver

    driver.set_active(TargetDriver(ns.arch[0]))
    install_cpu_autotuner()
    recorder = LaunchRecorder(launch=False)
    tuned: set[int] = set()  # ids of the launches made for an autotune config
    expand_autotuners(
        lambda: tuned.update([id(recorder.launches[-1])] if recorder.launches else [])
    )
    try:
        import_user_module(path)
    except BaseException as e:
        emit({"event": "import_error", "error": f"{type(e).__name__}: {e}"[:500]})
        emit({"event": "finished"})
        return 0
    attempt = 0  # every compile in a fixed order, so a restarted child can skip the done ones
    cases = [c for c in stress.REGISTRY if os.path.abspath(c.path) == path]
    for index, case in enumerate(cases):
        if index < ns.skip_cases:
            continue
        emit({"event": "start", "index": index, "name": case.name, "line": case.line})
        try:
            launches = run_case(case, recorder)
            for capability in ns.arch:
                seen: set[str] = set()
                for rec in launches:
                    attempt += 1
                    if attempt <= ns.skip:
                        continue
                    fn = python_function(rec.kernel)
                    where = {"kernel": rec.name, "path": fn.__code__.co_filename}
                    emit(
                        {
                            "event": "compiling",
                            "index": attempt,
                            "arch": capability,
                            **where,
                            "line": def_line(fn),
                            "config": config_of(rec),
                            "case": case.name,
                        }
                    )
                    row = compile_launch(rec, capability, recorder.original)
                    row["autotuned"] = id(rec) in tuned
                    key = json.dumps([row["kernel"], row["config"], row.get("hash")], default=str)
                    if key not in seen:
                        seen.add(key)
                        emit({"event": "variant", "case": case.name, "arch": capability, **row})
        except NoLaunch as e:
            emit({"event": "case_error", "name": case.name, "error": str(e)})
        except Exception:
            emit({"event": "case_error", "name": case.name, "error": traceback.format_exc()[-800:]})
        emit({"event": "done", "name": case.name})
    emit({"event": "finished"})  # without it the parent knows the child ended early
    return 0


if __name__ == "__main__":
    sys.exit(main())
