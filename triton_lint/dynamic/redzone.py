"""Red zones for native GPU runs: every tensor a case feeds or a wrapper allocates lives inside a
larger buffer with guard regions before and after it (child only, CUDA backend).

Guards hold one byte value during a run. A guard byte that changed is an out-of-bounds write;
running again with a different guard value and seeing the output change is an out-of-bounds
read. Offsets of the guard regions keep the tensor's alignment (multiples of 512 bytes), so Triton
specialises the kernel exactly as it would for a plain allocation.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass

import torch

from triton_lint.dynamic.backend import Site, allocation_hooks, user_site
from triton_lint.dynamic.compare import fill_value

#: The guard byte of ordinary runs, and of the run that probes for out-of-bounds reads (0xFF is
#: NaN in every float format and -1 in every signed integer format).
CANARY = 0xA5
PROBE = 0xFF
_ALIGN = 512
_MIN_GUARD = 64 * 1024
_MAX_GUARD = 16 * 1024 * 1024
# Captured before any hook is installed: the arena's own buffers must not be re-homed.
_raw_empty = torch.empty


def guard_bytes(nbytes: int) -> int:
    """Guard size for a tensor of `nbytes`: as large as the tensor, 64 KiB to 16 MiB."""
    g = min(max(nbytes, _MIN_GUARD), _MAX_GUARD)
    return (g + _ALIGN - 1) // _ALIGN * _ALIGN


@dataclass
class Guarded:
    """One tensor placed between two guard regions of one raw byte buffer."""

    raw: torch.Tensor  # uint8: [guard | storage span | guard]
    guard: int  # bytes of each guard
    span: int  # bytes of the tensor's storage span
    tensor: torch.Tensor  # the view handed to the wrapper
    role: str  # "input 0", "output allocated at ..."
    site: Site | None  # where the wrapper allocated it (outputs)

    @property
    def lo(self) -> int:
        return int(self.raw.data_ptr()) + self.guard

    @property
    def hi(self) -> int:
        return self.lo + self.span

    def fill_guards(self, value: int) -> None:
        self.raw[: self.guard].fill_(value)
        self.raw[self.guard + self.span :].fill_(value)

    def changed(self, value: int) -> tuple[list[int], list[int]]:
        """Byte offsets (relative to the tensor's first byte) of guard bytes not equal to
        `value`: (before the tensor, after it)."""
        before = (self.raw[: self.guard] != value).nonzero().flatten()
        after = (self.raw[self.guard + self.span :] != value).nonzero().flatten()
        return (
            [int(i) - self.guard for i in before.tolist()],
            [self.span + int(i) for i in after.tolist()],
        )


def _span_bytes(t: torch.Tensor) -> int:
    """Bytes from the view's first element to one past its last (strided views included)."""
    if t.numel() == 0:
        return 0
    span = sum((s - 1) * st for s, st in zip(t.shape, t.stride(), strict=False) if s > 0)
    return (span + 1) * t.element_size()


class Arena:
    """The guarded buffers of one run, and the allocation hooks that create them."""

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.buffers: list[Guarded] = []
        self.fill = CANARY

    def reset(self, fill: int = CANARY) -> None:
        self.buffers = []
        self.fill = fill

    def place(self, t: torch.Tensor, role: str, site: Site | None = None) -> torch.Tensor:
        """A device copy of `t` (same shape, strides and values) between two guards."""
        if t.numel() == 0:
            return t.to(self.device)
        offset = t.storage_offset()
        # The whole storage span the view can reach, starting at its first element.
        span = _span_bytes(t)
        guard = guard_bytes(span)
        raw = _raw_empty(guard * 2 + span, dtype=torch.uint8, device=self.device)
        item = t.element_size()
        view = raw.view(t.dtype).as_strided(t.shape, t.stride(), guard // item)
        # Copy the elements and also the gaps of a strided view (sliced inputs keep NaN there),
        # so a kernel that ignores strides reads what the host tensor holds.
        base = torch.as_strided(t.detach(), (span // item,), (1,), offset)
        raw[guard : guard + span].view(t.dtype).copy_(base)
        g = Guarded(raw, guard, span, view, role, site)
        g.fill_guards(self.fill)
        self.buffers.append(g)
        return view

    def wrap(self, t: torch.Tensor, site: Site, fill: float | int | None) -> torch.Tensor:
        """Re-home a tensor the wrapper just allocated (same strides), filled with `fill`."""
        if not isinstance(t, torch.Tensor) or t.device.type != "cuda" or t.numel() == 0:
            return t
        span = _span_bytes(t)
        guard = guard_bytes(span)
        raw = _raw_empty(guard * 2 + span, dtype=torch.uint8, device=t.device)
        view = raw.view(t.dtype).as_strided(t.shape, t.stride(), guard // t.element_size())
        if fill is None:
            view.copy_(t)  # zeros*/ones*/full*: keep the values asked for
        else:
            view.fill_(fill)
        view.requires_grad_(t.requires_grad)
        g = Guarded(raw, guard, span, view, f"output allocated at line {site[1]}", site)
        g.fill_guards(self.fill)
        self.buffers.append(g)
        return view

    def fill_guards(self, value: int, only: int | None = None) -> None:
        """Set every guard (or only buffer `only`'s) to `value`; the others keep the canary."""
        for i, g in enumerate(self.buffers):
            g.fill_guards(value if only is None or i == only else CANARY)

    def dirty(self, value: int) -> list[int]:
        """Indices of the buffers with a guard byte other than `value`: one device sync for all
        buffers (finding the changed bytes themselves, `Guarded.changed`, costs one per guard)."""
        if not self.buffers:
            return []
        flags = torch.stack(
            [
                (g.raw[: g.guard] != value).any() | (g.raw[g.guard + g.span :] != value).any()
                for g in self.buffers
            ]
        )
        return [i for i, bad in enumerate(flags.tolist()) if bad]

    def owner(self, ptr: int) -> int | None:
        """Index of the buffer whose tensor holds address `ptr`."""
        for i, g in enumerate(self.buffers):
            if g.lo <= ptr < max(g.hi, g.lo + 1):
                return i
        return None

    def intercept(self, alt_fill: bool) -> AbstractContextManager[None]:
        """Route the wrapper's allocations through `wrap` (empty* get the TL906 sentinels)."""

        def rehome(t: torch.Tensor, empty: bool) -> torch.Tensor:
            return self.wrap(t, user_site(2), fill_value(t.dtype, alt_fill) if empty else None)

        return allocation_hooks(rehome, empty_only=False)


def first_changed(offsets: list[int], item: int) -> tuple[int, int]:
    """First and last element offsets (relative to the tensor's start) of changed bytes."""
    return offsets[0] // item, offsets[-1] // item
