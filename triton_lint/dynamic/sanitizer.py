"""Hooks into the Triton interpreter's memory chokepoints (child process only).

Import this only after `TRITON_INTERPRET=1` is set. The hooks are written against the
interpreter of Triton 3.6 and 3.9: builder methods are wrapped on the `interpreter_builder`
instance with `*args` pass-through so signature differences between versions do not matter.

What is tracked, and why:
- every tensor argument's byte extent at launch, and which argument each pointer derives from
  (a tag propagated through pointer arithmetic), so an overflow into a neighbouring tensor is
  still caught; offending lanes are masked off so the process never touches the address;
- loads without `other=` that had masked-off lanes (candidates for TL905), and optional poison
  values for those lanes;
- optional diagnosis modes (only on re-runs, to keep the common path cheap): the first
  floating-point op producing a non-finite value from finite inputs, and a log of stores;
- failed `device_assert`s and int32 overflow checks (debug mode), reported instead of raised;
- autotune: each config runs once on a snapshot of the arguments and outputs are compared
  (`autotune_check`, shared with the GPU backend).
"""

from __future__ import annotations

import dataclasses
import os
import sys
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from triton_lint.dynamic.autotune_check import AutotuneCheck
from triton_lint.dynamic.triton_compat import install_compat

_THIS_DIR = os.path.dirname(os.path.abspath(__file__))

# Float ops whose non-finite outputs from finite inputs we attribute (TL902 diagnosis).
_TRACED_OPS = (
    "create_fadd",
    "create_fsub",
    "create_fmul",
    "create_fdiv",
    "create_precise_divf",
    "create_approx_divf",
    "create_frem",
    "create_exp",
    "create_exp2",
    "create_log",
    "create_log2",
    "create_sqrt",
    "create_precise_sqrt",
    "create_rsqrt",
    "create_fma",
    "create_dot",
    "create_sin",
    "create_cos",
    "create_erf",
    "create_fp_to_fp",
    "create_fp_trunc",
)

# Ops that can carry a pointer through; the result inherits the argument tag of its input.
_PTR_OPS = (
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


def _tensor_extent(t: Any) -> tuple[int, int]:
    """Byte extent of a (possibly strided) tensor view."""
    base = getattr(t, "base", None)
    if base is not None and hasattr(base, "data_ptr") and not hasattr(t, "untyped_storage"):
        t = base  # triton TensorWrapper
    lo = int(t.data_ptr())
    if t.numel() == 0:
        return lo, lo
    span = sum((s - 1) * st for s, st in zip(t.shape, t.stride(), strict=False) if s > 0)
    return lo, lo + (span + 1) * t.element_size()


class Sanitizer:
    """Installs the hooks once per process and accumulates events for the current run."""

    def __init__(self) -> None:
        import triton
        import triton.runtime.interpreter as interp

        self.interp = interp
        self.tl = triton.language
        self.builder = interp.interpreter_builder
        self.TensorHandle = interp.TensorHandle
        self._skip = (os.path.dirname(os.path.abspath(triton.__file__)), _THIS_DIR)
        self.launch: Launch | None = None
        self.reset()
        self._install()

    # -- per-run state -------------------------------------------------------------------

    def reset(self) -> None:
        """Clear everything recorded by the previous run."""
        self.events: list[dict[str, Any]] = []
        self.masked_loads: dict[Site, int] = {}
        self.poison: tuple[str, set[int] | None] | None = None
        self.reverse_grid = False
        self.first_nonfinite: dict[str, Any] | None = None
        self.stores: list[tuple[tuple[int, int, int], Site, np.ndarray]] | None = None
        self._desc_prov: int | None = None
        if hasattr(self, "autotune"):
            self.autotune.reset()
        self._event_keys: set[tuple[Any, ...]] = set()
        #: (kernel name, launch site) of every launch in this run, in order, deduplicated.
        self.launches: list[tuple[str, Site]] = []

    def set_trace(self, on: bool) -> None:
        """Enable the op tracer (TL902) and the store log (who wrote a bad element)."""
        b = self.builder
        if on:
            self.stores = []
            self.first_nonfinite = None
            for name in _TRACED_OPS:
                orig = getattr(type(b), name, None)
                if orig is not None:
                    setattr(b, name, self._traced(name, orig.__get__(b)))
        else:
            self.stores = None
            for name in _TRACED_OPS:
                b.__dict__.pop(name, None)

    # -- helpers -------------------------------------------------------------------------

    def site(self) -> Site:
        """The innermost frame outside triton and this package: the kernel's source line."""
        f = sys._getframe(1)
        skip = self._skip
        while f is not None:
            fname = f.f_code.co_filename
            if not fname.startswith(skip):
                return (fname, f.f_lineno, f.f_code.co_name)
            f = f.f_back
        return ("<unknown>", 0, "?")

    def pid(self) -> tuple[int, int, int]:
        idx = getattr(self.builder, "grid_idx", (0, 0, 0))
        return tuple(int(i) for i in idx)  # type: ignore[return-value]

    def _event(self, key: tuple[Any, ...], event: dict[str, Any]) -> None:
        """Record an event once per key; later duplicates only bump its count."""
        if key in self._event_keys:
            for e in self.events:
                if e.get("_key") == key:
                    e["count"] += 1
                    break
            return
        self._event_keys.add(key)
        event["_key"] = key
        event["count"] = 1
        self.events.append(event)

    def _mask_data(self, ptrs: Any, mask: Any) -> np.ndarray:
        m = mask.data if isinstance(mask, self.TensorHandle) else mask
        if m is None:
            return np.ones(np.shape(ptrs.data), dtype=bool)
        return np.broadcast_to(np.asarray(m, dtype=bool), np.shape(ptrs.data))

    def _check(self, ptrs: Any, mask: Any, op: str) -> Any:
        """Return `mask` with out-of-bounds active lanes turned off, recording a TL901 event."""
        launch = self.launch
        if launch is None or not isinstance(ptrs, self.TensorHandle):
            return mask
        addr = np.asarray(ptrs.data)
        md = self._mask_data(ptrs, mask)
        elem = max(1, ptrs.get_element_ty().primitive_bitwidth // 8)
        prov = ptrs.attr.get("tl_arg") if ptrs.attr else None
        if prov is None:
            prov = self._desc_prov
        if prov is not None and prov < len(launch.ranges):
            r = launch.ranges[prov]
            bad = md & ((addr < np.uint64(r.lo)) | (addr + np.uint64(elem) > np.uint64(r.hi)))
            inferred = False
        else:
            prov, bad = self._infer_owner(launch, addr, md, elem)
            inferred = True
        if not bad.any():
            return mask
        site = self.site()
        r = launch.ranges[prov] if prov is not None else None
        bad_idx = np.argwhere(bad)
        lo = r.lo if r is not None else 0
        offs = [(int(addr[tuple(i)]) - lo) // elem for i in bad_idx[:4]]
        name = r.name if r is not None else "<unknown>"
        self._event(
            ("oob", site, name, op),
            {
                "kind": "oob",
                "site": site,
                "op": op,
                "arg": name,
                "arg_shape": list(r.shape) if r is not None else None,
                "arg_dtype": r.dtype if r is not None else None,
                "arg_numel_bytes": (r.hi - r.lo) if r is not None else None,
                "pid": list(self.pid()),
                "lane": [int(x) for x in bad_idx[0]],
                "offsets": offs,
                "bad_lanes": int(bad.sum()),
                "owner_inferred": inferred,
                "kernel": launch.kernel,
                "launch": launch.site,
            },
        )
        new = np.array(md & ~bad)
        if isinstance(mask, self.TensorHandle):
            return self.TensorHandle(new, mask.dtype)
        if mask is None:
            return self.TensorHandle(new, self.tl.int1)
        return new

    def _infer_owner(
        self, launch: Launch, addr: np.ndarray, md: np.ndarray, elem: int
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

    def _poison_other(self, ptrs: Any, kind: str, where: np.ndarray) -> Any:
        dtype_tt = ptrs.get_element_ty()
        np_dtype = self.interp._get_np_dtype(dtype_tt)
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
        return self.TensorHandle(np.ascontiguousarray(data), dtype_tt)

    # -- installation --------------------------------------------------------------------

    def _install(self) -> None:
        b = self.builder
        interp = self.interp
        san = self

        orig_load = b.create_masked_load
        orig_store = b.create_masked_store
        orig_rmw = b.create_atomic_rmw
        orig_cas = b.create_atomic_cas

        def create_masked_load(ptrs: Any, mask: Any, other: Any, *rest: Any, **kw: Any) -> Any:
            # TL905 candidates use the kernel's own mask, not lanes we turned off for TL901.
            kernel_md = (
                san._mask_data(ptrs, mask) if other is None and san.launch is not None else None
            )
            mask = san._check(ptrs, mask, "load")
            if kernel_md is not None and not kernel_md.all():
                site = san.site()
                san.masked_loads[site] = san.masked_loads.get(site, 0) + 1
                p = san.poison
                if p is not None and (p[1] is None or site[1] in p[1]):
                    # Poison only lanes the kernel masked off; lanes we disabled read 0.
                    other = san._poison_other(ptrs, p[0], ~kernel_md)
            return orig_load(ptrs, mask, other, *rest, **kw)

        def create_masked_store(ptrs: Any, value: Any, mask: Any, *rest: Any, **kw: Any) -> Any:
            mask = san._check(ptrs, mask, "store")
            if san.stores is not None and san.launch is not None:
                md = san._mask_data(ptrs, mask)
                san.stores.append((san.pid(), san.site(), np.asarray(ptrs.data)[md].copy()))
            return orig_store(ptrs, value, mask, *rest, **kw)

        def create_atomic_rmw(op: Any, ptr: Any, val: Any, mask: Any, *rest: Any, **kw: Any) -> Any:
            mask = san._check(ptr, mask, "atomic_rmw")
            return orig_rmw(op, ptr, val, mask, *rest, **kw)

        def create_atomic_cas(ptr: Any, cmp: Any, val: Any, *rest: Any, **kw: Any) -> Any:
            checked = san._check(ptr, None, "atomic_cas")
            md = np.asarray(checked.data if isinstance(checked, san.TensorHandle) else checked)
            if not md.all():
                # CAS has no mask: redirect bad lanes to a scratch word so nothing is touched.
                scratch = np.zeros((*np.shape(ptr.data), 1), dtype=np.uint64)
                san._scratch = scratch
                data = np.where(md, ptr.data, np.uint64(scratch.ctypes.data))
                ptr = san.TensorHandle(data.astype(np.uint64), ptr.dtype)
            return orig_cas(ptr, cmp, val, *rest, **kw)

        b.create_masked_load = create_masked_load
        b.create_masked_store = create_masked_store
        b.create_atomic_rmw = create_atomic_rmw
        b.create_atomic_cas = create_atomic_cas

        for name in ("create_descriptor_load", "create_descriptor_store"):
            orig = getattr(b, name, None)
            if orig is not None:
                setattr(b, name, self._desc_wrapper(orig))

        for name in _PTR_OPS:
            orig = getattr(b, name, None)
            if orig is not None:
                setattr(b, name, self._ptr_wrapper(orig))

        def create_assert(condition: Any, message: Any, *rest: Any, **kw: Any) -> None:
            data = np.asarray(getattr(condition, "data", condition))
            if not data.all():
                site = san.site()
                msg = str(message)
                kind = "overflow" if "overflow detected" in msg else "assert"
                lane = [int(x) for x in np.argwhere(~data.astype(bool))[0]] if data.ndim else []
                san._event(
                    (kind, site),
                    {
                        "kind": kind,
                        "site": site,
                        "message": msg,
                        "pid": list(san.pid()),
                        "lane": lane,
                        "launch": san.launch.site if san.launch is not None else None,
                    },
                )
            # Reported, not raised: the run goes on.

        b.create_assert = create_assert
        # The interpreter drops device_assert and overflow checks unless debug is on.
        b.options = dataclasses.replace(b.options, debug=True, sanitize_overflow=True)

        orig_cvt = interp._implicit_cvt

        def _implicit_cvt(arg: Any) -> Any:
            out = orig_cvt(arg)
            launch = san.launch
            if launch is not None and hasattr(arg, "data_ptr") and hasattr(out, "handle"):
                caller = sys._getframe(1).f_locals.get("name")
                lo, hi = _tensor_extent(arg)
                idx = len(launch.ranges)
                launch.ranges.append(
                    ArgRange(
                        lo,
                        hi,
                        caller if isinstance(caller, str) else f"arg{idx}",
                        str(getattr(arg, "dtype", "?")).replace("torch.", ""),
                        tuple(int(s) for s in getattr(arg, "shape", ())),
                    )
                )
                out.handle.attr["tl_arg"] = idx
            return out

        interp._implicit_cvt = _implicit_cvt

        orig_call = interp.GridExecutor.__call__

        def grid_call(gx: Any, *args: Any, **kwargs: Any) -> Any:
            prev = san.launch
            launch_site = san.site()
            san.launch = Launch(kernel=getattr(gx.fn, "__name__", "?"), site=launch_site)
            entry = (san.launch.kernel, launch_site)
            if entry not in san.launches:
                san.launches.append(entry)
            fn = gx.fn
            if san.reverse_grid:
                gx.fn = san._reverser(fn)
            try:
                return orig_call(gx, *args, **kwargs)
            finally:
                gx.fn = fn
                san.launch = prev

        interp.GridExecutor.__call__ = grid_call
        install_compat(interp)
        self.autotune = AutotuneCheck(self._event, lambda: self.launches)

    def _reverser(self, fn: Any) -> Any:
        """Run every program in reverse grid order on the first call (order-dependence probe)."""
        state = {"done": False}
        b = self.builder

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

    def _desc_wrapper(self, orig: Any) -> Any:
        san = self

        def wrapper(desc: Any, *args: Any, **kw: Any) -> Any:
            base = getattr(desc, "base", None)
            san._desc_prov = base.attr.get("tl_arg") if base is not None and base.attr else None
            try:
                return orig(desc, *args, **kw)
            finally:
                san._desc_prov = None

        return wrapper

    def _ptr_wrapper(self, orig: Any) -> Any:
        TH = self.TensorHandle

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

    def _traced(self, name: str, orig: Any) -> Any:
        san = self
        TH = self.TensorHandle

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
