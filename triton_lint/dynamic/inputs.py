"""Input generation for stress cases: sizes, value patterns, layouts (child only)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch

from triton_lint.stress import Case, ScalarSpec, TensorSpec

# 1, a prime, a power of two and its neighbours, and a multiple of common block sizes plus a tail.
EDGE_SIZES = [1, 17, 63, 64, 65, 259]

PATTERNS = (
    "normal",
    "zeros",
    "ones",
    "large",
    "tiny",
    "negative",
    "alternating",
    "near_max",
    "neg_inf_rows",
    "nonfinite",
)
# Patterns whose inputs contain non-finite values (TL902 needs finite inputs).
NONFINITE_PATTERNS = frozenset({"neg_inf_rows", "nonfinite"})
MAX_DIM_COMBOS = 24


@dataclass(frozen=True)
class Combo:
    """One run of a case: sizes, per-argument dtypes, value pattern and memory layout."""

    dims: dict[str, int]
    dtypes: tuple[Any, ...]
    pattern: str
    layout: str
    #: Only this argument gets `layout` (the others stay contiguous); None: every tensor.
    layout_arg: int | None = None

    def describe(self) -> dict[str, Any]:
        return {
            "dims": dict(self.dims),
            "dtypes": [_dtype_name(d) for d in self.dtypes],
            "pattern": self.pattern,
            "layout": self.layout,
        }

    def variant(self) -> str:
        """Sizes, dtypes and layout (everything but the value pattern), for the stress matrix."""
        dims = ", ".join(f"{k}={v}" for k, v in self.dims.items()) or "-"
        dts = "/".join(dict.fromkeys(_dtype_name(d) for d in self.dtypes if d is not None)) or "-"
        return f"{dims}; {dts}; {self.layout}"

    def short(self) -> str:
        dims = ", ".join(f"{k}={v}" for k, v in self.dims.items())
        dts = "/".join(sorted({_dtype_name(d) for d in self.dtypes if d is not None})) or "-"
        return f"[{dims}; {dts}; pattern {self.pattern}; {self.layout}]"


def _dtype_name(d: Any) -> str:
    return str(d).replace("torch.", "")


def to_torch_dtype(d: Any) -> torch.dtype:
    """Accept torch dtypes or their names ("float16")."""
    if isinstance(d, torch.dtype):
        return d
    return getattr(torch, str(d).replace("torch.", ""))


def dim_names(case: Case) -> list[str]:
    names: list[str] = []
    for spec in case.inputs:
        if isinstance(spec, TensorSpec):
            for d in spec.dims:
                if isinstance(d, str) and d not in names:
                    names.append(d)
    for k in case.dims or {}:
        if k not in names:
            names.append(k)
    return names


def input_numels(case: Case, dims: dict[str, int]) -> list[int | None]:
    """Elements of each argument at `dims` (None for a scalar)."""
    return [
        math.prod(_shape(spec, dims)) if isinstance(spec, TensorSpec) else None
        for spec in case.inputs
    ]


def tensor_elements(case: Case, dims: dict[str, int]) -> int:
    """Elements of all tensor arguments together at `dims` (orders sizes for `--bench`)."""
    return sum(n for n in input_numels(case, dims) if n is not None)


def largest_dims(case: Case) -> dict[str, int]:
    """Every dim at its largest stress size (`dims=` values, else `EDGE_SIZES`)."""
    return {n: max((case.dims or {}).get(n, EDGE_SIZES)) for n in dim_names(case)}


def dim_combos(case: Case) -> list[dict[str, int]]:
    """All size combinations, or a covering set (every size of every dim once) when too many."""
    names = dim_names(case)
    values = [list((case.dims or {}).get(n, EDGE_SIZES)) for n in names]
    if not names:
        return [{}]
    total = 1
    for v in values:
        total *= len(v)
    if total <= MAX_DIM_COMBOS:
        return [dict(zip(names, combo, strict=False)) for combo in itertools.product(*values)]
    longest = max(len(v) for v in values)
    return [
        {n: v[(i + j) % len(v)] for j, (n, v) in enumerate(zip(names, values, strict=False))}
        for i in range(longest)
    ]


def dtype_variants(case: Case) -> list[tuple[Any, ...]]:
    """Variant k gives every tensor its k-th dtype (cycling through each tuple)."""
    tensor_specs = [s for s in case.inputs if isinstance(s, TensorSpec)]
    n = max((len(s.dtypes) for s in tensor_specs), default=1)
    out = []
    for k in range(n):
        out.append(
            tuple(
                to_torch_dtype(s.dtypes[k % len(s.dtypes)]) if isinstance(s, TensorSpec) else None
                for s in case.inputs
            )
        )
    return out


def combos(case: Case) -> Iterator[Combo]:
    """dims x dtypes x patterns (contiguous), plus other layouts with the first pattern."""
    patterns = case.patterns or PATTERNS
    has_2d = any(isinstance(s, TensorSpec) and len(s.dims) >= 2 for s in case.inputs)
    layouts = [
        lay
        for lay in case.layouts
        if lay != "contiguous" and (lay != "transposed" or has_2d) and _has_tensor(case)
    ]
    for dts in dtype_variants(case):
        for dims in dim_combos(case):
            for p in patterns:
                yield Combo(dims, dts, p, "contiguous")
            for lay in layouts:
                yield Combo(dims, dts, patterns[0], lay)


def _has_tensor(case: Case) -> bool:
    return any(isinstance(s, TensorSpec) for s in case.inputs)


def _shape(spec: TensorSpec, dims: dict[str, int]) -> list[int]:
    return [int(dims[d]) if isinstance(d, str) else int(d) for d in spec.dims]


def _fill_float(
    shape: list[int], dtype: torch.dtype, pattern: str, g: torch.Generator
) -> torch.Tensor:
    # Inputs are built on the generator's device, the host unless `--large` asks for the GPU
    # (explicitly: a GPU child's default device is CUDA), and the backend places them.
    device = g.device
    x = torch.randn(shape, generator=g, dtype=torch.float32, device=device)
    if pattern == "zeros":
        x = torch.zeros(shape, device=device)
    elif pattern == "ones":
        x = torch.ones(shape, device=device)
    elif pattern == "large":
        x = x * 1e4
    elif pattern == "tiny":
        x = x * 1e-6
    elif pattern == "negative":
        x = -(x.abs() + 0.1)
    elif pattern == "alternating":
        sign = torch.ones(x.numel(), device=device)
        sign[1::2] = -1
        x = (x.abs() + 0.5) * sign.reshape(shape)
    elif pattern == "near_max":
        big = torch.finfo(dtype).max * 0.9
        x = torch.where(x >= 0, torch.full(shape, big, device=device), -big) if x.numel() else x
    elif pattern == "neg_inf_rows":
        if x.dim() >= 2:
            x[..., 0, :] = float("-inf")
        else:
            x[:] = float("-inf")
    elif pattern == "nonfinite":
        flat = x.view(-1)
        for i, v in enumerate((float("nan"), float("inf"), float("-inf"))):
            if i < flat.numel():
                flat[(i * 7) % flat.numel()] = v
    return x.to(dtype)


def make_tensor(
    spec: TensorSpec, dtype: torch.dtype, combo: Combo, g: torch.Generator, layout: str
) -> torch.Tensor:
    """One host input tensor with the combo's pattern and `layout` (logical shape = spec's)."""
    shape = _shape(spec, combo.dims)
    device = g.device
    if dtype.is_floating_point:
        x = _fill_float(shape, dtype, combo.pattern, g)
    elif dtype == torch.bool:
        x = torch.randint(0, 2, shape, generator=g, device=device).bool()
    else:
        info = torch.iinfo(dtype)
        low = int(spec.low) if spec.low is not None else max(info.min, -100)
        high = int(spec.high) if spec.high is not None else min(info.max, 100)
        x = torch.randint(
            low, max(high, low + 1), shape, generator=g, dtype=torch.int64, device=device
        ).to(dtype)
    if layout == "transposed" and x.dim() >= 2:
        x = x.transpose(-1, -2).contiguous().transpose(-1, -2)
    elif layout == "sliced" and x.dim() >= 1:
        wide = torch.empty([*shape[:-1], shape[-1] * 2], dtype=dtype, device=device)
        wide[..., ::2] = x
        wide[..., 1::2] = x if not dtype.is_floating_point else float("nan")
        x = wide[..., ::2]
    return x


def make_args(case: Case, combo: Combo, seed: int = 0, device: str = "cpu") -> list[Any]:
    """Fresh arguments for a run; the same combo, seed and device always give the same values."""
    g = torch.Generator(device).manual_seed(seed)
    args: list[Any] = []
    for i, (spec, dt) in enumerate(zip(case.inputs, combo.dtypes, strict=False)):
        if isinstance(spec, ScalarSpec):
            args.append(spec.value(dict(combo.dims)) if callable(spec.value) else spec.value)
        else:
            own = combo.layout_arg is None or combo.layout_arg == i
            args.append(make_tensor(spec, dt, combo, g, combo.layout if own else "contiguous"))
    return args
