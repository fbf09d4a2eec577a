"""Poisoned masked-off lanes for native GPU runs (child only, CUDA backend).

On a GPU a masked load without `other=` leaves its masked-off lanes undefined (they read 0 on
current NVIDIA parts, which hides the bug). To see whether a kernel depends on them, `tl.load` is
wrapped at compile time: a load with a mask and no `other=` gets `other=` read from a device-side
table, one slot per such load site (numbered as the compiler meets them). The slots hold zero
(what the hardware gives) until a poison setting writes inf, NaN, 7 or -inf in the element type,
optionally only at chosen lines. So switching poison on or off is one small copy to the device,
not a recompilation: every compiled kernel serves every setting.
"""

from __future__ import annotations

import functools
import math
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch

from triton_lint.dynamic.backend import Site

#: Load sites a process can poison (later ones keep undefined masked-off lanes).
MAX_SITES = 4096
_SLOT = 8  # bytes per site: the widest element type poisoned
_TORCH = {
    "fp16": torch.float16,
    "bf16": torch.bfloat16,
    "fp32": torch.float32,
    "fp64": torch.float64,
    "int1": torch.bool,
    "i8": torch.int8,
    "i16": torch.int16,
    "i32": torch.int32,
    "i64": torch.int64,
    "u8": torch.uint8,
}


class Poisoner:
    """Owns the `tl.load` wrapper, the poison table and the recorded masked-load sites."""

    def __init__(self, device: torch.device | None = None) -> None:
        import triton.language as tl
        import triton.language.core as core

        self.setting: tuple[str, frozenset[int] | None] | None = None
        #: Masked loads without `other=` the compiler has met: site -> element type name.
        self.sites: dict[Site, str] = {}
        #: Their table slots and element types (the same site compiled twice keeps its slot).
        self.slots: dict[Site, tuple[int, Any]] = {}
        self.table = torch.zeros(MAX_SITES * _SLOT, dtype=torch.uint8, device=device)
        orig = core.load
        #: The load the poison slot is read with: under every wrapper of this engine.
        self.plain_load = getattr(orig, "_tl_original", orig)
        poisoner = self

        @functools.wraps(orig)
        def load(pointer: Any, mask: Any = None, other: Any = None, *args: Any, **kw: Any) -> Any:
            if mask is not None and other is None and kw.get("_semantic") is not None:
                site = _compile_site()
                elt = _element_type(pointer)
                if site is not None and elt is not None and str(elt) in _TORCH:
                    poisoner.sites[site] = str(elt)
                    other = poisoner.slot_value(site, elt, kw["_semantic"])
                    if other is not None and getattr(orig, "_tl_bounds", False):
                        kw["_tl_poisoned"] = True  # lanes the bounds check turns off read 0
            return orig(pointer, mask, other, *args, **kw)

        load._tl_original = self.plain_load  # type: ignore[attr-defined]
        core.load = load
        tl.load = load
        self._restore = orig

    def uninstall(self) -> None:
        """Put back the `tl.load` this poisoner wrapped."""
        import triton.language as tl
        import triton.language.core as core

        core.load = tl.load = self._restore

    def slot_value(self, site: Site, elt: Any, sem: Any) -> Any:
        """At compile time: the load of `site`'s poison slot (None: no slot left)."""
        import triton.language.core as core

        if site not in self.slots:
            if len(self.slots) >= MAX_SITES:
                return None
            self.slots[site] = (len(self.slots), elt)
        index = self.slots[site][0]
        address = self.table.data_ptr() + index * _SLOT
        ptr = core.full([], address, core.int64, _semantic=sem)
        ptr = ptr.to(core.pointer_type(elt), bitcast=True, _semantic=sem)
        return self.plain_load(ptr, _semantic=sem)

    @contextmanager
    def active(self, setting: tuple[str, frozenset[int] | None] | None) -> Iterator[None]:
        """Run with `setting` written to the table; zeros again afterwards."""
        if setting is None:
            yield
            return
        self.setting = setting
        self.table.copy_(self.values(setting))
        try:
            yield
        finally:
            self.setting = None
            self.table.zero_()

    def values(self, setting: tuple[str, frozenset[int] | None]) -> torch.Tensor:
        """The table's bytes for `setting`."""
        kind, lines = setting
        data = torch.zeros(MAX_SITES * _SLOT, dtype=torch.uint8, device="cpu")
        for site, (index, elt) in self.slots.items():
            if lines is not None and site[1] not in lines:
                continue
            value = torch.tensor([poison_value(kind, elt)], dtype=_TORCH[str(elt)], device="cpu")
            raw = value.view(torch.uint8)
            data[index * _SLOT : index * _SLOT + raw.numel()] = raw
        return data


def _compile_site() -> Site | None:
    """The kernel line the code generator is visiting (its frame holds the current node)."""
    f = sys._getframe(2)
    while f is not None:
        gen = f.f_locals.get("self")
        node = getattr(gen, "cur_node", None)
        if node is not None and hasattr(gen, "begin_line") and hasattr(node, "lineno"):
            fn = getattr(gen, "jit_fn", None)
            name = getattr(getattr(fn, "fn", None), "__name__", None) or "?"
            return (str(gen.file_name), int(gen.begin_line) + int(node.lineno), name)
        f = f.f_back
    return None


def _element_type(pointer: Any) -> Any:
    dtype = getattr(pointer, "dtype", None)
    return getattr(dtype, "element_ty", None)


def poison_value(kind: str, elt: Any) -> Any:
    """A Python scalar Triton converts to `elt`: the poison named `kind` in that type."""
    if elt.is_floating():
        return {"inf": math.inf, "nan": math.nan, "seven": 7.0, "neginf": -math.inf}[kind]
    if elt.is_bool():
        return True
    bits = int(elt.primitive_bitwidth)
    if elt.is_int_signed():
        top, bottom = 2 ** (bits - 1) - 1, -(2 ** (bits - 1))
    else:
        top, bottom = 2**bits - 1, 0
    return {"inf": top, "nan": bottom, "seven": 7, "neginf": bottom}[kind]
