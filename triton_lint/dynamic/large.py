"""`--large` (child only, GPU): sizes past 2**31 elements, where int32 offsets overflow.

TL104 suspects `pid * stride` products computed in int32; only a tensor with more than 2**31
elements makes one overflow for real. Each case gets one large combination per named dim: that
dim grown until a tensor holding it passes 2**31 elements, the others at their largest stress
size (or the case's own `large=` dims). A combination runs only when four times its inputs fit
in the GPU's free memory (the red-zone copy, the outputs, the reference's). Inputs are generated
on the GPU and outputs compared there, in chunks: host float64 copies of 2**31 elements would
need tens of GiB. With `TRITON_DEBUG=1` an overflowing int32 product trips Triton's overflow
check (TL910); a wrapped offset that lands in a red zone is TL901; a wrong value is TL903.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from triton_lint.dynamic.case_runner import CaseRunner
from triton_lint.dynamic.compare import (
    CHUNK,
    TOLERANCES,
    finite_scale,
    first_index,
    flatten,
    mismatch,
    unravel,
)
from triton_lint.dynamic.inputs import (
    Combo,
    dim_names,
    dtype_variants,
    input_numels,
    largest_dims,
    make_args,
)
from triton_lint.stress import Case, TensorSpec

LIMIT = 2**31
#: A combination runs when this many times its input bytes fit in free GPU memory.
MEMORY_FACTOR = 4
_CHUNK = CHUNK


def large_dims(case: Case) -> list[dict[str, int]]:
    """One dims dict per large run (see the module docstring)."""
    base = largest_dims(case)
    if case.large:
        return [{**base, **d} for d in case.large]
    out: list[dict[str, int]] = []
    for name in dim_names(case):
        grown = []
        for spec in case.inputs:
            if not isinstance(spec, TensorSpec) or name not in spec.dims:
                continue
            others = 1
            for d in spec.dims:
                if d != name:
                    others *= int(base[d]) if isinstance(d, str) else int(d)
            grown.append(LIMIT // max(others, 1) + 1)
        if grown:
            dims = {**base, name: min(grown)}
            if dims not in out:
                out.append(dims)
    return out


def input_bytes(case: Case, dims: dict[str, int], dtypes: tuple[Any, ...]) -> int:
    numels = input_numels(case, dims)
    return sum(n * int(dt.itemsize) for n, dt in zip(numels, dtypes, strict=False) if n)


@dataclass(frozen=True)
class LargeRun:
    """A large combination, or why it cannot run here."""

    combo: Combo
    skip: str | None = None


def large_runs(case: Case, free_bytes: int) -> list[LargeRun]:
    """The large combinations, in the dtypes that need the least memory."""
    base = largest_dims(case)
    dtypes = min(dtype_variants(case), key=lambda dts: input_bytes(case, base, dts))
    runs = []
    for dims in large_dims(case):
        combo = Combo(dims, dtypes, "normal", "contiguous")
        need = MEMORY_FACTOR * input_bytes(case, dims, dtypes)
        skip = None
        if need > free_bytes:
            skip = f"needs ~{need / 2**30:.0f} GiB of GPU memory, {free_bytes / 2**30:.0f} free"
        runs.append(LargeRun(combo, skip))
    return runs


@dataclass(frozen=True)
class DeviceMismatch:
    """Elements beyond tolerance in a device-side comparison: how many and the first one."""

    count: int
    index: tuple[int, ...]
    got: float
    expected: float


def device_mismatch(
    out: torch.Tensor, exp: torch.Tensor, rtol: float | None, atol: float | None
) -> DeviceMismatch | None:
    """`compare.mismatch` on the device in chunks of 2**26 elements (a float64 copy of the
    whole output would not fit), `atol` scaled by the whole reference; None when all close."""
    if atol is None:
        default_atol = TOLERANCES.get(out.dtype, (1e-4, 1e-5))[1]
        atol = default_atol * max(finite_scale([exp]), 1e-3)
    o, e = out.reshape(-1), exp.reshape(-1)
    count, first = 0, -1
    for s in range(0, o.numel(), _CHUNK):
        bad = mismatch(o[s : s + _CHUNK], e[s : s + _CHUNK], [], rtol, atol)[0]
        n = int(bad.sum())
        if n and first < 0:
            first = s + first_index(bad)[0]
        count += n
    if not count:
        return None
    index = unravel(first, tuple(out.shape))
    return DeviceMismatch(count, index, float(o[first]), float(e[first]))


class LargeCaseRunner(CaseRunner):
    """A case runner whose combinations are the large ones (see the module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)

    def plan(self) -> list[tuple[Combo, str | None]]:
        free = torch.cuda.mem_get_info()[0]
        return [(r.combo, r.skip) for r in large_runs(self.case, free)]

    def run_combo(self, combo: Combo) -> str | None:
        """One combination past 2**31 elements: the run's events, then a comparison on the
        device; "skip" when the wrapper refuses the size before launching anything."""
        status = self.check(combo)  # a fault raises: the context is gone, nothing to free
        torch.cuda.empty_cache()
        return status

    def check(self, combo: Combo) -> str | None:
        """The run's events (TL901 red zones, TL910 overflow asserts) and the comparison."""
        res = self.call(combo)
        self.log.main_launches = res.launches
        if res.error is not None:
            if not res.launches and isinstance(res.error, (AssertionError, ValueError)):
                return "skip"
            self.outputs.report_error(res, combo)
            return None
        for ev in res.events:
            self.log.event(ev, combo)
        args = make_args(self.case, combo, device=self.input_device)
        try:
            ref = flatten(self.case.reference(*args), args)
        except Exception:
            return None
        for k, (out, exp) in enumerate(zip(res.outputs, ref, strict=False)):
            if tuple(out.shape) != tuple(exp.shape):
                continue  # the stress sizes report a wrong shape
            bad = device_mismatch(out, exp, self.case.rtol, self.case.atol)
            if bad is None:
                continue
            site = (res.writers[k] if k < len(res.writers) else None) or self.log.case_site()
            self.log.add(
                "TL903",
                site,
                f"output {k}: {bad.count} of {out.numel()} element(s) beyond tolerance at a "
                f"size past 2**31 elements; first at index {bad.index}: got {bad.got}, "
                f"expected {bad.expected} {combo.short()} (likely an int32 offset that overflows; "
                "see TL104)",
                combo,
                {"output": k, "index": list(bad.index), "got": bad.got, "expected": bad.expected},
            )
        return None
