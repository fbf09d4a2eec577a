"""Records of the compiled-in bounds checks (`bounds`): how a site is packed into the device
buffer, and how the host turns the records back into TL901 events that name the tensor an
access left and where the address landed."""

from __future__ import annotations

import sys
import zlib
from dataclasses import dataclass
from typing import Any

from triton_lint.dynamic.backend import Site
from triton_lint.dynamic.kernel_source import python_function
from triton_lint.dynamic.redzone import Arena

#: Allocation slots in the table: one per kernel parameter (by position).
SLOTS = 64
#: Violations kept per run (later ones are counted only).
CAPACITY = 4096
FIELDS = 6  # meta, pid x, pid y << 32 | pid z, lane (16 bits per dim), address, launch
HEADER = 8  # int64 words before the first record (word 0: violation count)
_NO_HOME = 255
OPS = ("load", "store", "atomic_add", "atomic_max", "atomic_min", "atomic_and", "atomic_or")
OPS += ("atomic_xor", "atomic_xchg", "atomic_cas")
#: What a kernel read can be: the parameter position behind an access, or no single one.
Home = int | None


def _file_tag(path: str) -> int:
    return zlib.crc32(path.encode()) & 0x3FFF


def pack_meta(path: str, line: int, col: int, op: str, size: int, ndim: int, home: Home) -> int:
    """A site in one int64: file tag, line, column, op, log2 element size, dims, home slot."""
    log2 = max(size, 1).bit_length() - 1
    slot = _NO_HOME if home is None else home
    return (
        (_file_tag(path) << 49)
        | (min(line, 2**20 - 1) << 29)
        | (min(col, 2**12 - 1) << 17)
        | (OPS.index(op) << 12)
        | (log2 << 10)
        | (min(ndim, 3) << 8)
        | slot
    )


def unpack_meta(meta: int) -> dict[str, Any]:
    """The fields `pack_meta` packed."""
    slot = meta & 0xFF
    return {
        "file_tag": meta >> 49,
        "line": (meta >> 29) & (2**20 - 1),
        "col": (meta >> 17) & (2**12 - 1),
        "op": OPS[(meta >> 12) & 0x1F],
        "size": 1 << ((meta >> 10) & 0x3),
        "ndim": (meta >> 8) & 0x3,
        "home": None if slot == _NO_HOME else slot,
    }


@dataclass
class Slot:
    """A kernel parameter's tensor at one launch: its name and extent."""

    name: str
    lo: int
    hi: int
    shape: list[int]
    dtype: str


@dataclass
class LaunchInfo:
    """One launch of the run: the kernel, its parameters' tensors by position, its site."""

    kernel: Any
    slots: list[Slot | None]
    site: Site


def decode(
    rows: list[list[int]], launches: list[LaunchInfo], arena: Arena | None
) -> list[dict[str, Any]]:
    """TL901 events from raw records: one per (site, launch), witnessed by its first record
    and counted in that record's program."""
    groups: dict[tuple[Any, ...], list[list[int]]] = {}
    for row in rows:
        groups.setdefault((row[0], row[5]), []).append(row)
    return [_event(group, launches, arena) for group in groups.values()]


def _event(
    rows: list[list[int]], launches: list[LaunchInfo], arena: Arena | None
) -> dict[str, Any]:
    meta = unpack_meta(rows[0][0])
    launch = launches[rows[0][5]] if rows[0][5] < len(launches) else None

    def order(r: list[int]) -> tuple[int, ...]:
        """The interpreter's order: programs x-major, lanes row-major within one."""
        return (r[1], r[2] >> 32, r[2] & 0xFFFFFFFF, *_lane(r[3], meta["ndim"]))

    # The witness is the first violation in that order, whatever order the GPU ran programs in.
    rows = sorted(rows, key=order)
    first = rows[0]
    pid = [first[1], first[2] >> 32, first[2] & 0xFFFFFFFF]
    same_program = [r for r in rows if r[1:3] == first[1:3]]
    home = _home_slot(meta["home"], first[4], launch)
    size = meta["size"]
    lo = home.lo if home is not None else 0
    lane = _lane(first[3], meta["ndim"])
    path = _path_of(meta["file_tag"], launch)
    lands = _lands(first[4], size, launch, arena, home)
    return {
        "kind": "oob",
        "site": (path, meta["line"], _function(launch)),
        "column": meta["col"],
        "op": meta["op"],
        "arg": home.name if home is not None else "<unknown>",
        "arg_shape": home.shape if home is not None else None,
        "arg_dtype": home.dtype if home is not None else None,
        "pid": pid,
        "lane": lane,
        "offsets": [(r[4] - lo) // size for r in same_program[:4]],
        "bad_lanes": len(same_program),
        "owner_inferred": meta["home"] is None,
        "lands": lands,
        "located": True,
        "launch": launch.site if launch is not None else None,
    }


def _home_slot(home: Home, addr: int, launch: LaunchInfo | None) -> Slot | None:
    """The access's own tensor, or (no single one in the source) the nearest one."""
    if launch is None:
        return None
    if home is not None and home < len(launch.slots) and launch.slots[home] is not None:
        return launch.slots[home]
    known = [s for s in launch.slots if s is not None]
    if not known:
        return None
    return min(
        known,
        key=lambda s: 0 if s.lo <= addr < s.hi else min(abs(addr - s.lo), abs(addr - s.hi)),
    )


def _lane(packed: int, ndim: int) -> list[int]:
    return [(packed >> (16 * d)) & 0xFFFF for d in range(ndim)]


def _function(launch: LaunchInfo | None) -> str:
    return getattr(python_function(launch.kernel), "__name__", "?") if launch else "?"


def _path_of(tag: int, launch: LaunchInfo | None) -> str:
    """The file whose tag the record carries: the launched kernel's, else a loaded module's."""
    candidates = []
    if launch is not None:
        fn = python_function(launch.kernel)
        candidates.append(getattr(getattr(fn, "__code__", None), "co_filename", ""))
    candidates += [getattr(m, "__file__", None) or "" for m in list(sys.modules.values())]
    for path in candidates:
        if path and _file_tag(path) == tag:
            return path
    return "<unknown>"


def _lands(
    addr: int, size: int, launch: LaunchInfo | None, arena: Arena | None, home: Slot | None
) -> str:
    """Where the address is: inside another tensor the launch received or the arena holds
    (provable), or outside every live allocation."""
    for s in launch.slots if launch is not None else []:
        if s is not None and s is not home and s.lo <= addr and addr + size <= s.hi:
            return f"inside `{s.name}`"
    for g in arena.buffers if arena is not None else []:
        if g.lo <= addr and addr + size <= g.hi and (home is None or not home.lo <= g.lo < home.hi):
            return f"inside the {g.role}"
    return "outside every allocation"
