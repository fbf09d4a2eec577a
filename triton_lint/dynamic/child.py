"""Child process: import user modules, run their stress cases on a backend, emit findings.

Run as `python -m triton_lint.dynamic.child --file F --out O [--device cuda|interpreter]
[--only NAME]... [--skip K] [--skip-combos C] [--large | --bench]`, or warm with `--serve`:
one unit (`{"file", "out", "only", "skip", "skip_combos"}`) per line on stdin, each ended by a
`unit_end` event, the backend (CUDA context, compiled kernels) kept between units. `--bench`
times the cases instead of checking them (`bench` events); `--large` checks them at sizes past
2**31 elements. `TRITON_INTERPRET` comes from the parent (1 for the interpreter, 0 for native
runs) before triton can be imported. Results are appended to `O` as JSON lines (`unit`, `cases`,
`start`, `combo_start`, `combo`, `done`) so the parent can tell which case, and which
combination, crashed or hung. On a GPU fault that leaves the CUDA context unusable the child
emits the case's findings so far (`fault`) and exits with status 3; the parent starts a fresh
child at the next combination.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from typing import Any

FAULT_EXIT = 3


# The parent sets TRITON_INTERPRET (1, or 0 for native runs); run by hand, the interpreter.
os.environ.setdefault("TRITON_INTERPRET", "1")

import numpy as np  # noqa: E402

from triton_lint import stress  # noqa: E402
from triton_lint.dynamic.backend import StickyError  # noqa: E402
from triton_lint.dynamic.case_runner import CaseRunner, runner_failure  # noqa: E402
from triton_lint.dynamic.cases import import_user_module  # noqa: E402


def make_backend(device: str, redzones: bool, device_log: str | None) -> Any:
    """The backend for `device`; `device_log` is where this process's stderr goes (the parent's
    file), which is where CUDA prints failed device asserts."""
    if device == "cuda":
        from triton_lint.dynamic.cuda_backend import CudaBackend

        return CudaBackend(redzones=redzones, device_output=device_log)
    from triton_lint.dynamic.interpreter_backend import InterpreterBackend

    return InterpreterBackend()


def _import(path: str, imported: set[str]) -> None:
    """Import the user's module once per process (a warm child may get its cases in two units)."""
    if path in imported:
        return
    imported.add(path)
    import_user_module(path)


class Child:
    """What one child process keeps between units: its backend and the modules it imported."""

    def __init__(self, ns: argparse.Namespace) -> None:
        self.ns = ns
        self.backend: Any = None
        self.imported: set[str] = set()

    def run_unit(self, unit: dict[str, Any]) -> int:
        """Run one file's cases (`unit`: file, out, only, skip, skip_combos); 0 or FAULT_EXIT."""
        ns = self.ns
        path = os.path.abspath(unit["file"])
        out = unit["out"]

        def emit(obj: dict[str, Any]) -> None:
            with open(out, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(_jsonable(obj)) + "\n")

        emit({"event": "unit"})  # started: the parent's clock for this unit begins
        try:
            if self.backend is None and not ns.bench:
                self.backend = make_backend(ns.device, not ns.no_redzones, ns.device_log)
            _import(path, self.imported)
        except BaseException as e:
            tb = traceback.extract_tb(e.__traceback__)
            line = next(
                (fs.lineno for fs in reversed(tb) if os.path.abspath(fs.filename) == path),
                1,
            )
            emit({"event": "import_error", "error": f"{type(e).__name__}: {e}", "line": line})
            return 0
        only = unit.get("only") or []
        cases = [c for c in stress.REGISTRY if os.path.abspath(c.path) == path]
        if only:
            cases = [c for c in cases if c.name in only or c.fn.__name__ in only]
        emit({"event": "cases", "names": [c.name for c in cases], "lines": [c.line for c in cases]})
        if ns.bench:
            _bench(cases, emit)
            return 0
        return self.run_cases(
            cases, emit, int(unit.get("skip") or 0), int(unit.get("skip_combos") or 0)
        )

    def run_cases(self, cases: list[stress.Case], emit: Any, skip: int, skip_combos: int) -> int:
        ns, backend = self.ns, self.backend
        runner_class = CaseRunner
        if ns.large:
            from triton_lint.dynamic.large import LargeCaseRunner

            runner_class = LargeCaseRunner
        for i, c in enumerate(cases):
            if i < skip:
                continue
            emit({"event": "start", "index": i, "name": c.name, "device": backend.description})
            runner = runner_class(
                backend,
                c,
                emit,
                repeats=ns.repeats,
                skip_combos=skip_combos if i == skip else 0,
                plain=ns.plain,
            )
            try:
                runner.run()
            except StickyError:
                emit(
                    {
                        "event": "fault",
                        "index": i,
                        "name": c.name,
                        "combo_index": runner.combo_index,
                        "codes": sorted(runner.log.combo_codes),
                        **_payload(runner),
                    }
                )
                return FAULT_EXIT
            except BaseException as e:
                failure = [runner_failure(c, e)]
                emit({"event": "done", "index": i, "name": c.name, "findings": failure})
                continue
            emit({"event": "done", "index": i, "name": c.name, **_payload(runner)})
        return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--file")
    ap.add_argument("--out")
    ap.add_argument("--serve", action="store_true", help="units as JSON lines on stdin")
    ap.add_argument("--device", choices=("interpreter", "cuda"), default="interpreter")
    ap.add_argument("--no-redzones", action="store_true")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--skip", type=int, default=0)
    ap.add_argument("--skip-combos", type=int, default=0)
    ap.add_argument("--device-log", default=None)
    ap.add_argument("--plain", action="store_true")
    ap.add_argument("--bench", action="store_true", help="time the cases instead of checking")
    ap.add_argument("--large", action="store_true", help="check at sizes past 2**31 elements")
    ns = ap.parse_args(argv)
    child = Child(ns)
    if not ns.serve:
        if not ns.file or not ns.out:
            ap.error("--file and --out are required without --serve")
        unit = {"file": ns.file, "out": ns.out, "only": ns.only, "skip": ns.skip}
        return child.run_unit({**unit, "skip_combos": ns.skip_combos})
    while raw := sys.stdin.readline():
        if not raw.strip():
            continue
        unit = json.loads(raw)
        code = child.run_unit(unit)
        with open(unit["out"], "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"event": "unit_end"}) + "\n")
        if code:
            return code
    return 0


def _bench(cases: list[stress.Case], emit: Any) -> None:
    """`--bench`: one `bench` event per case with its rows (sizes) and TL914 findings."""
    import torch

    from triton_lint.dynamic.bench import bench_case, peak_bandwidth_gbs
    from triton_lint.dynamic.launches import LaunchRecorder

    # As in the checking child: wrappers that allocate without `device=` get the GPU.
    torch.set_default_device(torch.device("cuda", torch.cuda.current_device()))
    recorder = LaunchRecorder(installed=False)
    peak = peak_bandwidth_gbs()
    for i, c in enumerate(cases):
        emit({"event": "start", "index": i, "name": c.name})
        try:
            rows, findings = bench_case(c, recorder, peak)
        except Exception as e:
            rows, findings = [{"case": c.name, "error": f"{type(e).__name__}: {e}"[:300]}], []
        emit(
            {
                "event": "bench",
                "index": i,
                "name": c.name,
                "rows": rows,
                "findings": [f.to_dict() for f in findings],
            }
        )


def _payload(runner: CaseRunner) -> dict[str, Any]:
    """The case's findings and their identities: a case restarted after a GPU fault finds some
    again, and the parent keeps one finding per identity."""
    return {
        "findings": [f.to_dict() for f in runner.findings.values()],
        "keys": [repr(k) for k in runner.findings],
    }


def _jsonable(obj: Any) -> Any:
    """Make numpy scalars and tuples JSON-safe."""
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, float) and not np.isfinite(obj):
        return str(obj)
    return obj


if __name__ == "__main__":
    sys.exit(main())
