"""Bounds checks for tensor descriptors (child only, CUDA backend; used by `bounds`).

A descriptor clips its accesses to the shape it was declared with, so an access is safe only
when that shape fits the tensor. A descriptor declared larger than its tensor reads and writes
past it with no fault. So a device-side descriptor (`tl.make_tensor_descriptor`) remembers its
base pointer and the parameter that pointer derives from, and every `desc.load`/`desc.store`
checks, before the access, the address of each element the hardware will touch (the block at
the offsets, clipped to the declared shape) against that parameter's allocation: the same
check, record and witness as a `tl.load`, at the descriptor access's own line. The hardware
access itself cannot be narrowed, so the lanes are recorded, not turned off.

A host-side `TensorDescriptor` argument is checked on the host before the launch: the extent
its shape and strides imply, sum((shape_i - 1) * stride_i) + 1 elements from its base, must fit
the tensor it was made from.
"""

from __future__ import annotations

import functools
from typing import Any

from triton_lint.dynamic.backend import Site
from triton_lint.dynamic.kernel_source import access_lines, python_function

#: Attributes set on a descriptor object while its kernel compiles.
_BASE, _HOME = "_tl_bounds_base", "_tl_bounds_home"


def install(checker: Any, core: Any, tl: Any) -> None:
    """Wrap `make_tensor_descriptor` and the descriptor's `load`/`store` (restored by
    `checker.uninstall`)."""
    orig = getattr(core, "make_tensor_descriptor", None)
    cls = getattr(core, "tensor_descriptor_base", None)
    if orig is None or cls is None:
        return

    @functools.wraps(orig)
    def make(base: Any, *a: Any, **kw: Any) -> Any:
        desc = orig(base, *a, **kw)
        if checker.enabled and kw.get("_semantic") is not None:
            site = checker.compile_site("load")
            try:
                setattr(desc, _BASE, core._unwrap_if_constexpr(base))
                setattr(desc, _HOME, site.home if site is not None else None)
            except AttributeError:
                checker.blind = True
        return desc

    checker.originals["make_tensor_descriptor"] = orig
    core.make_tensor_descriptor = tl.make_tensor_descriptor = make
    for op in ("load", "store"):
        method = getattr(cls, op, None)
        if method is not None:
            checker.restore.append((cls, op, method))
            setattr(cls, op, _checked_access(checker, core, op, method))


def _checked_access(checker: Any, core: Any, op: str, method: Any) -> Any:
    @functools.wraps(method)
    def access(desc: Any, offsets: Any, *a: Any, **kw: Any) -> Any:
        sem = kw.get("_semantic")
        if checker.enabled and sem is not None:
            base = getattr(desc, _BASE, None)
            if base is None:
                checker.blind = True  # a host-side descriptor, or one a loop rebuilt
            else:
                pointer, inside = _block_addresses(core, sem, desc, base, offsets)
                checker.check(sem, op, pointer, inside, home=getattr(desc, _HOME, None))
        return method(desc, offsets, *a, **kw)

    return access


def _block_addresses(core: Any, sem: Any, desc: Any, base: Any, offsets: Any) -> tuple[Any, Any]:
    """The address of every element of the block at `offsets`, and which of them lie inside
    the declared shape (the ones the hardware reads or writes)."""
    block = [int(core._unwrap_if_constexpr(b)) for b in desc.block_shape]
    offsets = list(core._unwrap_if_constexpr(offsets))
    total, inside = None, None
    for d, n in enumerate(block):
        idx = core.arange(0, n, _semantic=sem).to(core.int64, _semantic=sem)
        idx = idx.__add__(core._unwrap_if_constexpr(offsets[d]), _semantic=sem)
        for other in range(len(block)):
            if other != d:
                idx = core.expand_dims(idx, other, _semantic=sem)
        extent = core._unwrap_if_constexpr(desc.shape[d])
        here = idx.__ge__(0, _semantic=sem).__and__(
            idx.__lt__(extent, _semantic=sem), _semantic=sem
        )
        step = idx.__mul__(core._unwrap_if_constexpr(desc.strides[d]), _semantic=sem)
        total = step if total is None else total.__add__(step, _semantic=sem)
        inside = here if inside is None else inside.__and__(here, _semantic=sem)
    return base.__add__(total, _semantic=sem), inside


def host_events(
    kernel: Any, names: list[str], values: dict[str, Any], launch: Site
) -> list[dict[str, Any]]:
    """TL901 events for `TensorDescriptor` arguments whose shape does not fit their tensor, at
    the kernel's first load through the descriptor (else at the launch)."""
    events = []
    for name in names:
        d = values.get(name)
        base = getattr(d, "base", None)
        if base is None or not hasattr(d, "strides") or not hasattr(base, "stride"):
            continue
        shape, strides = [int(s) for s in d.shape], [int(s) for s in d.strides]
        size = base.element_size()
        start = int(base.data_ptr())
        # The tensor's own extent, as the device-side checks bound a parameter (the storage of
        # a tensor the engine placed also holds its red zones).
        own = sum((s - 1) * st for s, st in zip(base.shape, base.stride(), strict=False)) + 1
        end = start + own * size
        extent = sum((s - 1) * st for s, st in zip(shape, strides, strict=False)) + 1
        if min(shape, default=1) <= 0 or start + extent * size <= end:
            continue
        path, lines = access_lines(kernel, name, write=False)
        fn = python_function(kernel)
        events.append(
            {
                "kind": "oob",
                "site": (path, lines[0], getattr(fn, "__name__", "?")) if lines else launch,
                "launch": launch,
                "op": "load",
                "arg": name,
                "arg_shape": list(base.shape),
                "arg_dtype": str(base.dtype).replace("torch.", ""),
                "side": "after",
                "first": (end - start) // size,
                "last": extent - 1,
                "offsets": [(end - start) // size, extent - 1],
                "bad_lanes": None,
                "pid": None,
                "lane": None,
                "owner_inferred": False,
                "located": bool(lines),
                "descriptor": True,
                "lands": f"descriptor shape {shape} with strides {strides} reaches element "
                f"{extent - 1}; the tensor holds {(end - start) // size}",
            }
        )
    return events
