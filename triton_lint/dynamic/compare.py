"""Comparing a wrapper's outputs with the reference, and with other runs (child only).

Everything here works on torch tensors on whatever device holds them: a native GPU run compares
its outputs with the reference on the GPU and brings back only verdicts (a bool, a count, an
index) and the elements a finding quotes; the interpreter compares on the CPU with the same code,
so one set of tolerances and one notion of "bitwise equal" serves both devices.
"""

from __future__ import annotations

from typing import Any

import torch

#: Elements compared at a time where a whole float64 copy may not fit (`--large`).
CHUNK = 1 << 26
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


def as_float64(t: torch.Tensor) -> torch.Tensor:
    """Float64 (integers and bools keep their dtype) on the tensor's own device, for
    element-wise comparison: nothing crosses to the host."""
    t = t.detach()
    return t.to(torch.float64) if t.dtype.is_floating_point else t


def mismatch(
    out: torch.Tensor,
    exp: torch.Tensor,
    args: list[Any],
    rtol: float | None = None,
    atol: float | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Boolean mask of elements beyond tolerance, and |error| (float64), on `out`'s device.

    `rtol`/`atol` are the case's overrides; without them the output dtype's defaults apply,
    `atol` scaled by the largest finite magnitude among the reference and the inputs.
    """
    exp = exp.to(out.device)
    if not out.dtype.is_floating_point and not exp.dtype.is_floating_point:
        o, e = out.detach().to(torch.int64), exp.detach().to(torch.int64)
        return o != e, (o - e).abs().to(torch.float64)
    o, e = out.detach().to(torch.float64), exp.detach().to(torch.float64)
    default_rtol, default_atol = TOLERANCES.get(out.dtype, (1e-4, 1e-5))
    rtol = default_rtol if rtol is None else rtol
    if atol is None:
        scale = finite_scale([e] + [a for a in args if isinstance(a, torch.Tensor)])
        atol = default_atol * max(scale, 1e-3)
    # Where the reference is NaN any output is accepted: NaN propagation legitimately
    # differs between max/min flavours (maximum vs maxnum) on non-finite inputs.
    close = torch.isclose(o, e, rtol=rtol, atol=atol, equal_nan=True) | torch.isnan(e)
    err = (o - e).abs()
    err = torch.where(torch.isnan(err), torch.inf, err)
    return ~close, err


def finite_scale(tensors: list[torch.Tensor]) -> float:
    """The largest finite magnitude among tensors (0 when there is none): reduced on each
    tensor's device in chunks of `CHUNK` elements (a float64 copy of a `--large` tensor would
    not fit), one scalar per chunk comes back."""
    m = 0.0
    for t in tensors:
        flat = t.detach().reshape(-1)
        for s in range(0, flat.numel(), CHUNK):
            x = flat[s : s + CHUNK].to(torch.float64).abs()
            m = max(m, float(torch.where(torch.isfinite(x), x, 0.0).max()))
    return m


def first_index(mask: torch.Tensor) -> tuple[int, ...]:
    """The first set element of a boolean mask in row-major order (the mask has one)."""
    return unravel(int(torch.argmax(mask.reshape(-1).to(torch.uint8))), mask.shape)


def worst_index(mask: torch.Tensor, err: torch.Tensor) -> tuple[int, ...]:
    """The element of `mask` with the largest error (the first such in row-major order)."""
    flat = torch.where(mask, err, -1.0).reshape(-1)
    return unravel(int(torch.argmax(flat)), mask.shape)


def unravel(flat: int, shape: torch.Size | tuple[int, ...]) -> tuple[int, ...]:
    idx = []
    for n in reversed(tuple(shape)):
        flat, r = divmod(flat, n)
        idx.append(r)
    return tuple(reversed(idx))


def element(t: torch.Tensor, idx: tuple[int, ...]) -> Any:
    """One element as a Python number: the only copy to the host a finding needs."""
    return t[idx].item()


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
