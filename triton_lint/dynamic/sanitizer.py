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
from typing import Any

import numpy as np

from triton_lint.dynamic.autotune_check import AutotuneCheck
from triton_lint.dynamic.interpreter_ops import (
    PTR_OPS,
    ArgRange,
    Launch,
    Site,
    descriptor_wrapper,
    infer_owner,
    pointer_wrapper,
    poison_other,
    reverser,
    tensor_extent,
    traced,
)
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
        self.desc_prov: int | None = None
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
                    setattr(b, name, traced(name, orig.__get__(b), self))
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
            prov = self.desc_prov
        if prov is not None and prov < len(launch.ranges):
            r = launch.ranges[prov]
            bad = md & ((addr < np.uint64(r.lo)) | (addr + np.uint64(elem) > np.uint64(r.hi)))
            inferred = False
        else:
            prov, bad = infer_owner(launch, addr, md, elem)
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
                    other = poison_other(san.interp, ptrs, p[0], ~kernel_md)
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
                setattr(b, name, descriptor_wrapper(orig, self))

        for name in PTR_OPS:
            orig = getattr(b, name, None)
            if orig is not None:
                setattr(b, name, pointer_wrapper(orig, self.TensorHandle))

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
                lo, hi = tensor_extent(arg)
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
                gx.fn = reverser(san.builder, fn)
            try:
                return orig_call(gx, *args, **kwargs)
            finally:
                gx.fn = fn
                san.launch = prev

        interp.GridExecutor.__call__ = grid_call
        install_compat(interp)
        self.autotune = AutotuneCheck(self._event, lambda: self.launches)
