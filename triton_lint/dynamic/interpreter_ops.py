"""Interpreter builder ops wrapped for the sanitizer, and the helpers its checks use that keep
no state of their own: argument byte extents, the owner of an untagged pointer, poison values,
reversed program order, pointer tags carried through pointer arithmetic, the op tracer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

# Ops that can carry a pointer through; the result inherits the argument tag of its input.
PTR_OPS = (
    "create_addptr",
    "create_splat",
    "create_broadcast",
    "create_expand_dims",
    "create_reshape",
    "create_trans",
    "create_cat",
    "create_join",
    "create_split",
    "create_select",
    "create_bitcast",
    "create_unsplat",
)


@dataclass
class ArgRange:
    """The bytes a tensor argument may legally touch: [lo, hi)."""

    lo: int
    hi: int
    name: str
    dtype: str
    shape: tuple[int, ...]


@dataclass
class Launch:
    """One kernel launch: its name and the argument extents registered by `_implicit_cvt`."""

    kernel: str
    ranges: list[ArgRange] = field(default_factory=list)
    site: Site | None = None  # the `kernel[grid](...)` line in the user's code


Site = tuple[str, int, str]  # (file, line, function)


def tensor_extent(t: Any) -> tuple[int, int]:
    """Byte extent of a (possibly strided) tensor view."""
    base = getattr(t, "base", None)
    if base is not None and hasattr(base, "data_ptr") and not hasattr(t, "untyped_storage"):
        t = base  # triton TensorWrapper
    lo = int(t.data_ptr())
    if t.numel() == 0:
        return lo, lo
    span = sum((s - 1) * st for s, st in zip(t.shape, t.stride(), strict=False) if s > 0)
    return lo, lo + (span + 1) * t.element_size()


def infer_owner(
    launch: Launch, addr: np.ndarray, md: np.ndarray, elem: int
) -> tuple[int | None, np.ndarray]:
    """Without a tag, the owner is the argument holding most active lanes."""
    act = addr[md]
    best, best_count = None, 0
    for i, r in enumerate(launch.ranges):
        inside = (act >= np.uint64(r.lo)) & (act + np.uint64(elem) <= np.uint64(r.hi))
        c = int(inside.sum())
        if c > best_count:
            best, best_count = i, c
    if best is None:
        return None, md.copy()
    r = launch.ranges[best]
    bad = md & ((addr < np.uint64(r.lo)) | (addr + np.uint64(elem) > np.uint64(r.hi)))
    return best, bad


def poison_other(interp: Any, ptrs: Any, kind: str, where: np.ndarray) -> Any:
    """A load's ``other=`` holding ``kind`` (inf, NaN, 7, -inf, 0) on the ``where`` lanes."""
    dtype_tt = ptrs.get_element_ty()
    np_dtype = interp._get_np_dtype(dtype_tt)
    if np.issubdtype(np_dtype, np.floating):
        value = {
            "inf": np.inf,
            "nan": np.nan,
            "seven": 7.0,
            "neginf": -np.inf,
            "zero": 0.0,
        }[kind]
    elif np_dtype == np.bool_:
        value = kind != "zero"
    else:
        info = np.iinfo(np_dtype)
        value = {
            "inf": info.max,
            "nan": info.min,
            "seven": 7,
            "neginf": info.min,
            "zero": 0,
        }[kind]
    data = np.where(where, np.asarray(value, dtype=np_dtype), np.zeros((), dtype=np_dtype))
    return interp.TensorHandle(np.ascontiguousarray(data), dtype_tt)


def reverser(builder: Any, fn: Any) -> Any:
    """Run every program in reverse grid order on the first call (order-dependence probe)."""
    state = {"done": False}
    b = builder

    def run_all(**args: Any) -> None:
        if state["done"]:
            return
        state["done"] = True
        nx, ny, nz = b.grid_dim
        for x in reversed(range(nx)):
            for y in reversed(range(ny)):
                for z in reversed(range(nz)):
                    b.set_grid_idx(x, y, z)
                    fn(**args)

    return run_all


def descriptor_wrapper(orig: Any, san: Any) -> Any:
    """Tag a descriptor access with the argument its base came from (``san.desc_prov``)."""

    def wrapper(desc: Any, *args: Any, **kw: Any) -> Any:
        base = getattr(desc, "base", None)
        san.desc_prov = base.attr.get("tl_arg") if base is not None and base.attr else None
        try:
            return orig(desc, *args, **kw)
        finally:
            san.desc_prov = None

    return wrapper


def pointer_wrapper(orig: Any, TH: Any) -> Any:
    """Carry the argument tag of a pointer through an op that computes a pointer from it."""

    def wrapper(*args: Any, **kw: Any) -> Any:
        out = orig(*args, **kw)
        for a in args:
            if isinstance(a, TH) and a.attr:
                p = a.attr.get("tl_arg")
                if p is not None:
                    for o in out if isinstance(out, tuple) else (out,):
                        if isinstance(o, TH) and o.dtype.is_ptr():
                            o.attr["tl_arg"] = p
                    break
        return out

    return wrapper


def traced(name: str, orig: Any, san: Any) -> Any:
    """Record (in ``san.first_nonfinite``) the first op giving a non-finite value from finite
    inputs."""
    TH = san.TensorHandle

    def wrapper(*args: Any, **kw: Any) -> Any:
        out = orig(*args, **kw)
        if san.first_nonfinite is None and isinstance(out, TH):
            data = np.asarray(out.data)
            if data.dtype.kind == "f":
                bad = ~np.isfinite(data)
                if bad.any():
                    for a in args:
                        if isinstance(a, TH) and np.asarray(a.data).dtype.kind == "f":
                            bad = bad & np.isfinite(a.data)
                    if np.any(bad):
                        san.first_nonfinite = {
                            "op": name.removeprefix("create_"),
                            "site": san.site(),
                            "pid": list(san.pid()),
                        }
        return out

    return wrapper
