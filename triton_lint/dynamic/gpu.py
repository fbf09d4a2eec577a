"""TL907 (recompilation) on a GPU: which constexpr parameter compiled a variant per size.

On a GPU every distinct value of a `tl.constexpr` argument compiles a new variant; a runtime size
marked constexpr therefore recompiles on every new size. The launch recorder keeps each launch's
constexpr values; a parameter that took three or more distinct values across a case's sizes, not
all of them powers of two (block sizes chosen per size are powers of two), is the one responsible.
The interpreter never compiles, so this check only runs natively.
"""

from __future__ import annotations

from typing import Any

from triton_lint.dynamic.codes import CODES
from triton_lint.dynamic.kernel_source import python_function
from triton_lint.finding import Finding, RelatedLocation, Span
from triton_lint.stress import def_line


def _jit_function(kernel: Any) -> Any:
    fn = kernel
    while not hasattr(fn, "device_caches") and not hasattr(fn, "cache") and hasattr(fn, "fn"):
        fn = fn.fn  # unwrap Autotuner / Heuristics
    return fn


def compiled_variants(kernel: Any) -> int:
    """Compiled specialisations a JITFunction holds, on all devices (3.3-3.9 layouts)."""
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


def _power_of_two(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v > 0 and v & (v - 1) == 0


def recompiling_parameters(launches: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """Constexpr parameters whose values look like per-call sizes: name -> distinct values."""
    values: dict[str, list[Any]] = {}
    for constexprs in launches:
        for name, v in constexprs.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                seen = values.setdefault(name, [])
                if v not in seen:
                    seen.append(v)
    return {
        name: seen
        for name, seen in values.items()
        if len(seen) >= 3 and not all(_power_of_two(v) for v in seen)
    }


def recompilation_finding(
    kernel: Any,
    params: dict[str, list[Any]],
    variants: int,
    *,
    case: str | None = None,
    related: tuple[RelatedLocation, ...] = (),
) -> Finding:
    """The TL907 finding for one kernel, at its `def` line, naming the parameters; `related`
    are the launch site and the case's wrapper."""
    raw = python_function(kernel)
    code = getattr(raw, "__code__", None)
    path = code.co_filename if code is not None else "<unknown>"
    line = def_line(raw)
    meta = CODES["TL907"]
    described = "; ".join(
        f"`{name}` took {len(vals)} values ({', '.join(map(str, vals[:6]))}"
        + (", ..." if len(vals) > 6 else "")
        + ")"
        for name, vals in params.items()
    )
    return Finding(
        path=path,
        span=Span(line, 1, line, 1),
        code="TL907",
        name=meta.name,
        severity=meta.severity,
        category=meta.category,
        message=(
            f"{variants} compiled variants across the case's sizes: constexpr {described}; "
            "a runtime size marked tl.constexpr recompiles for every new value"
        ),
        kernel=getattr(raw, "__name__", None),
        properties={
            "variants": variants,
            "parameters": {k: list(v) for k, v in params.items()},
            **({"case": case} if case else {}),
        },
        related=related,
    )
