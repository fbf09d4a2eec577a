"""Per-architecture limits that decide whether a compiled variant fits, and its occupancy.

Source: NVIDIA CUDA C++ Programming Guide, "Compute Capabilities", table "Technical
Specifications per Compute Capability" (maximum shared memory per thread block with opt-in,
shared memory per SM, resident threads and blocks per SM, 64K 32-bit registers per SM), and
the Ampere, Ada, Hopper and Blackwell tuning guides (1 KB of shared memory reserved per block
by the system). The per-block figure is what Triton's launcher compares `metadata.shared`
with (`max_shared_mem`, the opt-in limit) before it raises `OutOfResources`.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
from dataclasses import dataclass
from functools import cache

KB = 1024
REGISTERS_PER_SM = 65536
REGISTER_GRANULE = 256  # registers are allocated per warp in units of 256
RESERVED_SHARED_PER_BLOCK = 1 * KB


@dataclass(frozen=True)
class Arch:
    """One compute capability: its name (`sm_86`), example parts, and the limits used here."""

    name: str
    capability: int
    parts: str
    shared_per_block: int  # bytes, opt-in maximum
    shared_per_sm: int  # bytes
    threads_per_sm: int
    blocks_per_sm: int


ARCHS: dict[str, Arch] = {
    a.name: a
    for a in (
        Arch("sm_80", 80, "A100, A30", 163 * KB, 164 * KB, 2048, 32),
        Arch("sm_86", 86, "A10, A40, RTX 30xx", 99 * KB, 100 * KB, 1536, 16),
        Arch("sm_87", 87, "Jetson Orin", 163 * KB, 164 * KB, 2048, 16),
        Arch("sm_89", 89, "L4, L40, RTX 40xx", 99 * KB, 100 * KB, 1536, 24),
        Arch("sm_90", 90, "H100, H200, GH200", 227 * KB, 228 * KB, 2048, 32),
        Arch("sm_100", 100, "B200, GB200", 227 * KB, 228 * KB, 2048, 32),
        Arch("sm_120", 120, "RTX 50xx, RTX PRO 6000", 99 * KB, 100 * KB, 1536, 32),
    )
}


class ArchError(ValueError):
    """An architecture name that is unknown or that the installed Triton cannot compile for."""


def nvidia_bin_dir() -> str | None:
    """The folder of the NVIDIA tools the Triton wheel bundles (ptxas, cuobjdump), found
    without importing triton."""
    spec = importlib.util.find_spec("triton")
    if spec is None or not spec.origin:
        return None
    return os.path.join(os.path.dirname(spec.origin), "backends", "nvidia", "bin")


@cache
def supported() -> tuple[str, ...]:
    """The table's architectures that the installed Triton's `ptxas` lists (all when it cannot
    be asked: the child reports a compile failure per variant then)."""
    folder = nvidia_bin_dir()
    names: set[str] = set()
    for tool in ("ptxas", "ptxas-blackwell"):
        exe = os.path.join(folder, tool) if folder else tool
        try:
            out = subprocess.run(
                [exe, "--help"], capture_output=True, text=True, timeout=30, check=False
            ).stdout
        except (OSError, subprocess.SubprocessError):
            continue
        names.update(re.findall(r"\bsm_(\d+)", out))
    if not names:
        return tuple(ARCHS)
    return tuple(a.name for a in ARCHS.values() if str(a.capability) in names)


def parse_archs(text: str | list[str] | None) -> list[Arch]:
    """`sm_80,sm_90` (or `80`, `sm_90a`) to architectures; None or empty gives `supported()`."""
    if text is None or not text:
        return [ARCHS[n] for n in supported()]
    items = text.split(",") if isinstance(text, str) else [p for t in text for p in t.split(",")]
    valid = supported()
    chosen: list[Arch] = []
    for item in (i.strip().lower() for i in items):
        if not item:
            continue
        name = "sm_" + item.removeprefix("sm_").removeprefix("compute_").rstrip("af")
        if name not in valid:
            raise ArchError(
                f"unknown architecture `{item}` (valid with this Triton: {', '.join(valid)})"
            )
        if ARCHS[name] not in chosen:
            chosen.append(ARCHS[name])
    if not chosen:
        raise ArchError(f"no architecture given (valid with this Triton: {', '.join(valid)})")
    return chosen


def blocks_per_sm(arch: Arch, registers: int, shared: int, warps: int) -> dict[str, int]:
    """Resident blocks per SM as limited by registers, shared memory and threads (warps), and
    the smallest of them (`blocks`), as the CUDA occupancy calculator counts them."""
    per_warp = -(-max(registers, 1) * 32 // REGISTER_GRANULE) * REGISTER_GRANULE
    by_regs = (REGISTERS_PER_SM // per_warp) // max(warps, 1)
    by_shared = (
        arch.shared_per_sm // (shared + RESERVED_SHARED_PER_BLOCK)
        if shared > 0
        else arch.blocks_per_sm
    )
    by_threads = arch.threads_per_sm // (32 * max(warps, 1))
    limits = {
        "registers": min(by_regs, arch.blocks_per_sm),
        "shared": min(by_shared, arch.blocks_per_sm),
        "warps": min(by_threads, arch.blocks_per_sm),
    }
    return {**limits, "blocks": min(limits.values())}
