"""GPU-side hook for TL907 (recompilation): count compiled variants of a kernel across launches.

On a GPU every distinct value of a `tl.constexpr` argument compiles a new variant; a runtime
size marked constexpr therefore recompiles on every new size. The interpreter never compiles,
so this check only means something on a real device.
"""

from __future__ import annotations

from typing import Any

from triton_lint.dynamic.codes import CODES
from triton_lint.finding import Finding, Span


def _jit_function(kernel: Any) -> Any:
    fn = kernel
    while not hasattr(fn, "device_caches") and not hasattr(fn, "cache") and hasattr(fn, "fn"):
        fn = fn.fn  # unwrap Autotuner / Heuristics
    return fn


def compiled_variants(kernel: Any) -> int:
    """Compiled specialisations a JITFunction holds, on all devices (3.6-3.9 layouts)."""
    fn = _jit_function(kernel)
    caches = getattr(fn, "device_caches", None)
    total = 0
    if isinstance(caches, dict):
        for entry in caches.values():
            kernel_cache = entry[0] if isinstance(entry, tuple) else entry
            total += len(kernel_cache)
        return total
    for per_device in (getattr(fn, "cache", None) or {}).values():
        total += len(per_device)
    return total


def recompilation_finding(
    kernel: Any, sizes: list[Any], *, case: str | None = None
) -> Finding | None:
    """TL907 when a kernel compiled (almost) one variant per distinct size it was launched with."""
    distinct = len(set(map(repr, sizes)))
    variants = compiled_variants(kernel)
    if distinct < 3 or variants < distinct:
        return None
    raw = getattr(_jit_function(kernel), "fn", None)
    code = getattr(raw, "__code__", None)
    line = code.co_firstlineno if code is not None else 1
    meta = CODES["TL907"]
    return Finding(
        path=code.co_filename if code is not None else "<unknown>",
        span=Span(line, 1, line, 1),
        code="TL907",
        name=meta.name,
        severity=meta.severity,
        category=meta.category,
        message=(
            f"{variants} compiled variants for {distinct} distinct sizes: a runtime value is "
            "probably marked tl.constexpr"
        ),
        kernel=getattr(raw, "__name__", None),
        properties={"variants": variants, "sizes": distinct, **({"case": case} if case else {})},
    )
