"""Comparing a wrapper's outputs with the reference, and with other runs (child only).

Everything here works on CPU tensors: the GPU backend copies outputs to the host before they are
compared, so one set of tolerances and one notion of "bitwise equal" serves both devices.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

# Default tolerances per output dtype: (rtol, atol before scaling by the data's magnitude).
TOLERANCES: dict[torch.dtype, tuple[float, float]] = {
    torch.float16: (1e-2, 1e-3),
    torch.bfloat16: (2e-2, 1e-2),
    torch.float32: (1e-4, 1e-5),
    torch.float64: (1e-7, 1e-9),
}


def fill_value(dtype: torch.dtype, alt: bool) -> float | int | None:
    """What `torch.empty*` is filled with during a run (two fills prove unwritten)."""
    if dtype.is_floating_point:
        return 1357.0 if alt else float("nan")
    if dtype == torch.bool:
        return None
    info = torch.iinfo(dtype)
    return info.min + 3 if alt else info.max - 3


def flatten(value: Any, args: list[Any]) -> list[torch.Tensor]:
    """Tensors of a wrapper/reference result: `None` means in-place arguments."""
    if value is None:
        return [a for a in args if isinstance(a, torch.Tensor)]
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        out: list[torch.Tensor] = []
        for v in value:
            out.extend(flatten(v, []) if v is not None else [])
        return out
    if isinstance(value, (int, float)):
        return [torch.tensor(value)]
    return []


def as_float64(t: torch.Tensor) -> np.ndarray:
    """A host float64 (or int64) copy for element-wise comparison."""
    t = t.detach().cpu()
    return t.to(torch.float64).numpy() if t.dtype.is_floating_point else t.numpy()


def mismatch(
    out: torch.Tensor,
    exp: torch.Tensor,
    args: list[Any],
    rtol: float | None = None,
    atol: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Boolean mask of elements beyond tolerance, and |error|.

    `rtol`/`atol` are the case's overrides; without them the output dtype's defaults apply,
    `atol` scaled by the largest finite magnitude among the reference and the inputs.
    """
    if not out.dtype.is_floating_point and not exp.dtype.is_floating_point:
        o, e = as_float64(out).astype(np.int64), as_float64(exp).astype(np.int64)
        return o != e, np.abs(o - e).astype(np.float64)
    o, e = as_float64(out), as_float64(exp)
    default_rtol, default_atol = TOLERANCES.get(out.dtype, (1e-4, 1e-5))
    rtol = default_rtol if rtol is None else rtol
    if atol is None:
        scale = finite_scale([e] + [a for a in args if isinstance(a, torch.Tensor)])
        atol = default_atol * max(scale, 1e-3)
    with np.errstate(invalid="ignore", over="ignore"):
        # Where the reference is NaN any output is accepted: NaN propagation legitimately
        # differs between max/min flavours (maximum vs maxnum) on non-finite inputs.
        close = np.isclose(o, e, rtol=rtol, atol=atol, equal_nan=True) | np.isnan(e)
        err = np.abs(o - e)
    err = np.where(np.isnan(err), np.inf, err)
    return ~close, err


def finite_scale(arrays: list[Any]) -> float:
    """The largest finite magnitude among tensors/arrays (0 when there is none)."""
    m = 0.0
    for a in arrays:
        x = as_float64(a) if isinstance(a, torch.Tensor) else np.asarray(a, dtype=np.float64)
        x = np.asarray(x, dtype=np.float64)
        x = x[np.isfinite(x)]
        if x.size:
            m = max(m, float(np.abs(x).max()))
    return m


def args_finite(args: list[Any]) -> bool:
    """No NaN/Inf in any floating-point tensor argument."""
    return all(
        bool(torch.isfinite(a).all())
        for a in args
        if isinstance(a, torch.Tensor) and a.is_floating_point()
    )


def same(a: list[torch.Tensor], b: list[torch.Tensor]) -> bool:
    """Bitwise equality (NaN equal to NaN, +0.0 equal to -0.0) of two output lists."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=False):
        if x.shape != y.shape or x.dtype != y.dtype:
            return False
        if x.dtype.is_floating_point:
            xs, ys = x.contiguous().view(-1), y.contiguous().view(-1)
            eq = (xs == ys) | (torch.isnan(xs) & torch.isnan(ys))
            if not bool(eq.all()):
                return False
        elif not torch.equal(x, y):
            return False
    return True


def spread(a: list[torch.Tensor], b: list[torch.Tensor]) -> float:
    """Largest absolute element difference between two runs' outputs (0 when bitwise equal)."""
    worst = 0.0
    for x, y in zip(a, b, strict=False):
        if x.shape != y.shape or x.numel() == 0:
            continue
        d = (x.double() - y.double()).abs()
        d = torch.where(torch.isnan(x.double()) & torch.isnan(y.double()), 0.0, d)
        worst = max(worst, float(torch.nan_to_num(d, nan=float("inf")).max()))
    return worst
