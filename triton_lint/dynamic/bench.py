"""`--bench` (child only): time a stress case's wrapper against its reference and torch.compile.

Runs in its own child without `TRITON_DEBUG` (its checks would slow the kernel down) and
without red zones or launch recording while timing. Each row is one size: the median of
`triton.testing.do_bench` for the wrapper, the reference and `torch.compile(reference)`, the
bytes the call must move (inputs read once, returned outputs written once) as GB/s and % of the
device's peak, and TFLOP/s when the case counts its FLOPs. A wrapper slower than both
baselines at a size where timings are above launch overhead is TL914.
"""

from __future__ import annotations

import itertools
from typing import Any

import torch

from triton_lint.dynamic.case_findings import FindingLog
from triton_lint.dynamic.compare import flatten
from triton_lint.dynamic.inputs import (
    Combo,
    dtype_variants,
    input_numels,
    largest_dims,
    make_args,
    tensor_elements,
)
from triton_lint.dynamic.launches import LaunchRecorder
from triton_lint.finding import Finding
from triton_lint.stress import Case, TensorSpec

#: Without `bench=` dims, a case is timed where its largest input holds this many elements.
BENCH_ELEMENTS = 2**24
#: ... while this many times its inputs fit in free GPU memory.
MEMORY_FACTOR = 4
#: TL914 needs the wrapper slower than the slower baseline by this factor (timing noise) and by
#: this many milliseconds (a Triton launch costs tens of microseconds more than a PyTorch one;
#: at sizes that small the difference is launch overhead, not the kernel).
SLOWER_BY = 1.1
LAUNCH_SLACK_MS = 0.03
#: Peak DRAM bandwidth (GB/s) by device name, where the driver does not say.
PEAK_GBS = {"H200": 4800.0, "H100 PCIe": 2000.0, "H100": 3350.0, "A100": 2039.0, "L4": 300.0}


def bench_sizes(case: Case, free_bytes: int | None = None) -> list[dict[str, int]]:
    """The dims to time: `bench=` dicts as given, or the product of `bench=` lists (other dims
    at their largest stress size), else the largest stress sizes grown until the largest input
    holds `BENCH_ELEMENTS` (`grown_dims`): stress sizes time launch overhead, not the kernel."""
    largest = largest_dims(case)
    if isinstance(case.bench, list):
        return [{**largest, **dims} for dims in case.bench]
    if case.bench:
        names = list(case.bench)
        return [
            {**largest, **dict(zip(names, values, strict=True))}
            for values in itertools.product(*(case.bench[n] for n in names))
        ]
    return [grown_dims(case, largest, free_bytes)]


def grown_dims(case: Case, dims: dict[str, int], free_bytes: int | None) -> dict[str, int]:
    """`dims` with the smallest dim doubled, again and again, until the largest input holds
    `BENCH_ELEMENTS`, while `MEMORY_FACTOR` times the inputs (at 4 bytes an element) fit in
    `free_bytes`."""
    names = [n for n in dims if any(n in s.dims for s in case.inputs if isinstance(s, TensorSpec))]
    grown = dict(dims)
    while names and max((n or 0) for n in input_numels(case, grown)) < BENCH_ELEMENTS:
        name = min(names, key=lambda n: grown[n])
        bigger = {**grown, name: grown[name] * 2}
        if (
            free_bytes is not None
            and tensor_elements(case, bigger) * 4 * MEMORY_FACTOR > free_bytes
        ):
            break
        grown = bigger
    return grown


def peak_bandwidth_gbs() -> float | None:
    """The device's DRAM bandwidth: memory clock x bus width from the driver, else a table."""
    try:
        from triton.testing import get_dram_gbps

        return float(get_dram_gbps())
    except Exception:
        name = torch.cuda.get_device_name()
        return next((gbs for key, gbs in PEAK_GBS.items() if key in name), None)


def median_ms(fn: Any) -> float:
    from triton.testing import do_bench

    return float(do_bench(fn, return_mode="median"))


def _baseline_ms(fn: Any) -> tuple[float | None, str | None]:
    """Time a baseline; a baseline that cannot run gives (None, why)."""
    try:
        fn()
        torch.cuda.synchronize()
        return median_ms(fn), None
    except Exception as e:  # a reference that torch.compile cannot trace, say
        return None, f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"


class CaseBench:
    """Times one case at its benchmark sizes (see the module docstring)."""

    def __init__(self, case: Case, recorder: LaunchRecorder, peak_gbs: float | None) -> None:
        self.case = case
        self.recorder = recorder
        self.peak_gbs = peak_gbs
        self.log = FindingLog(case, "cuda")
        self.compiled: Any = None

    def run(self) -> tuple[list[dict[str, Any]], list[Finding]]:
        dtypes = dtype_variants(self.case)[0]
        free = torch.cuda.mem_get_info()[0] if torch.cuda.is_available() else None
        sizes = bench_sizes(self.case, free)
        combos = [Combo(dims, dtypes, "normal", "contiguous") for dims in sizes]
        return [self.row(c) for c in combos], list(self.log.findings.values())

    def row(self, combo: Combo) -> dict[str, Any]:
        size = combo.variant().rsplit(";", 1)[0]
        row: dict[str, Any] = {
            "case": self.case.name,
            "size": size,
            "dims": dict(combo.dims),
            "elements": tensor_elements(self.case, combo.dims),
        }
        args = make_args(self.case, combo, device="cuda")
        out, kernels, error = self.warm_up(args)
        row["kernel"] = ", ".join(kernels) or self.case.fn.__name__
        if error is not None:
            row["error"] = error
            return row
        outputs = flatten(out, []) if out is not None else []
        moved = sum(a.nbytes for a in args if isinstance(a, torch.Tensor))
        moved += sum(t.nbytes for t in outputs)
        row["triton_ms"] = median_ms(lambda: self.case.fn(*args))
        row["torch_ms"], row["torch_error"] = _baseline_ms(lambda: self.case.reference(*args))
        row["compile_ms"], row["compile_error"] = _baseline_ms(
            lambda: self.compiled_reference()(*args)
        )
        row["bytes"] = moved
        row["bandwidth_gbs"] = moved / (row["triton_ms"] * 1e-3) / 1e9
        row["peak_gbs"] = self.peak_gbs
        if self.case.flops is not None:
            row["flops"] = float(self.case.flops(dict(combo.dims)))
            row["tflops"] = row["flops"] / (row["triton_ms"] * 1e-3) / 1e12
        self.judge(row, combo)
        return {k: v for k, v in row.items() if v is not None}

    def warm_up(self, args: list[Any]) -> tuple[Any, list[str], str | None]:
        """One call with launches recorded: its result, the kernels it launched (and, for
        TL914, their launch sites), or why it failed."""
        self.recorder.reset_run()
        self.recorder.install()
        try:
            out = self.case.fn(*args)
            torch.cuda.synchronize()
        except Exception as e:
            return None, [], f"{type(e).__name__}: {str(e)[:200]}"
        finally:
            self.recorder.uninstall()
        self.log.main_launches = [(r.name, r.site) for r in self.recorder.launches]
        return out, list(dict.fromkeys(r.name for r in self.recorder.launches)), None

    def compiled_reference(self) -> Any:
        if self.compiled is None:
            self.compiled = torch.compile(self.case.reference)
        return self.compiled

    def judge(self, row: dict[str, Any], combo: Combo) -> None:
        """TL914 when clearly slower than every baseline that ran (see `SLOWER_BY`)."""
        baselines = {
            name: row[key]
            for name, key in (("PyTorch", "torch_ms"), ("torch.compile", "compile_ms"))
            if row.get(key) is not None
        }
        if not baselines:
            return
        slowest = max(baselines.values())
        if row["triton_ms"] <= max(SLOWER_BY * slowest, slowest + LAUNCH_SLACK_MS):
            return
        others = ", ".join(f"{name} {ms:.3f} ms" for name, ms in baselines.items())
        self.log.add(
            "TL914",
            self.log.case_site(),
            f"the Triton wrapper takes {row['triton_ms']:.3f} ms at {row['size']}, slower than "
            f"{'both baselines' if len(baselines) == 2 else 'the baseline'} ({others}); it "
            f"moves {row['bandwidth_gbs']:.0f} GB/s"
            + (f" of {row['peak_gbs']:.0f} peak" if row.get("peak_gbs") else ""),
            combo,
            {k: row.get(k) for k in ("triton_ms", "torch_ms", "compile_ms", "bandwidth_gbs")},
        )


def bench_case(
    case: Case, recorder: LaunchRecorder, peak_gbs: float | None
) -> tuple[list[dict[str, Any]], list[Finding]]:
    """Rows (one per size) and TL914 findings of one case."""
    return CaseBench(case, recorder, peak_gbs).run()
