"""User API for stress cases: `@stress.case(...)` registers a host wrapper with its reference.

This module must stay cheap to import (the static linter imports the package): it never imports
torch or triton at module level. Running the cases happens in a child process
(`triton_lint.dynamic`), so importing a module that uses `@stress.case` only records metadata.
"""

from __future__ import annotations

import pathlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from triton_lint.finding import Finding


@dataclass(frozen=True)
class TensorSpec:
    """One tensor argument: its dims (names or ints), dtype(s) to try and optional value bounds."""

    dims: tuple[str | int, ...]
    dtypes: tuple[Any, ...]
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class ScalarSpec:
    """A non-tensor argument; a callable gets the dims dict (e.g. `lambda d: d["N"]`)."""

    value: Any


@dataclass
class Case:
    """A registered stress case (a host wrapper plus everything needed to exercise it)."""

    fn: Callable[..., Any]
    reference: Callable[..., Any]
    inputs: list[TensorSpec | ScalarSpec]
    dims: dict[str, list[int]] | None = None
    atol: float | None = None
    rtol: float | None = None
    patterns: tuple[str, ...] | None = None
    layouts: tuple[str, ...] = ("contiguous", "transposed", "sliced")
    #: `--bench` sizes: dims dicts, or lists to sweep (None: the largest sizes of `dims`).
    bench: list[dict[str, int]] | dict[str, list[int]] | None = None
    #: Floating-point operations of one call, from the dims (dot-heavy kernels: TFLOP/s).
    flops: Callable[[dict[str, int]], float] | None = None
    #: `--large` sizes: dims that push a tensor past 2**31 elements (None: derived from `dims`).
    large: list[dict[str, int]] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.fn.__qualname__

    @property
    def path(self) -> str:
        code = getattr(self.fn, "__code__", None)
        return code.co_filename if code is not None else ""

    @property
    def line(self) -> int:
        return def_line(self.fn)


def def_line(fn: Callable[..., Any]) -> int:
    """The `def` line of a function (co_firstlineno points at its first decorator)."""
    import linecache

    code = getattr(fn, "__code__", None)
    if code is None:
        return 1
    line = code.co_firstlineno
    for n in range(line, line + 50):
        text = linecache.getline(code.co_filename, n).lstrip()
        if text.startswith(("def ", "async def ")):
            return n
    return line


# Cases registered by modules imported in this process, in definition order.
REGISTRY: list[Case] = []


def tensor(
    *dims: str | int,
    dtype: Any = None,
    low: float | None = None,
    high: float | None = None,
) -> TensorSpec:
    """Describe a tensor argument; `dtype` may be one torch dtype or a tuple to test each."""
    if dtype is None:
        dtypes: tuple[Any, ...] = ("float32",)
    elif isinstance(dtype, (tuple, list)):
        dtypes = tuple(dtype)
    else:
        dtypes = (dtype,)
    return TensorSpec(tuple(dims), dtypes, low, high)


def scalar(value: Any) -> ScalarSpec:
    """Describe a non-tensor argument (a constant, or a callable of the dims dict)."""
    return ScalarSpec(value)


def case(
    *,
    reference: Callable[..., Any],
    inputs: Sequence[TensorSpec | ScalarSpec],
    dims: dict[str, Sequence[int]] | None = None,
    atol: float | None = None,
    rtol: float | None = None,
    patterns: Sequence[str] | None = None,
    layouts: Sequence[str] = ("contiguous", "transposed", "sliced"),
    bench: dict[str, Sequence[int]] | Sequence[dict[str, int]] | None = None,
    flops: Callable[[dict[str, int]], float] | None = None,
    large: dict[str, int] | Sequence[dict[str, int]] | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated host wrapper as a stress case; the function itself is unchanged.

    `bench` names the sizes `--bench` times: dims dicts, or one list per dim to sweep (dims not
    named keep their largest stress size). `flops` counts one call's floating-point operations
    from the dims. `large` gives the dims of the `--large` runs (one dict per run) where growing
    one dim at a time from the stress sizes would not reach 2**31 elements or would break a host
    assertion.
    """

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        c = Case(
            fn=fn,
            reference=reference,
            inputs=list(inputs),
            dims={k: list(v) for k, v in dims.items()} if dims is not None else None,
            atol=atol,
            rtol=rtol,
            patterns=tuple(patterns) if patterns is not None else None,
            layouts=tuple(layouts),
            bench=_bench_sizes(bench),
            flops=flops,
            large=[dict(large)] if isinstance(large, dict) else _dict_list(large),
        )
        REGISTRY.append(c)
        fn.__stress_case__ = c  # type: ignore[attr-defined]
        return fn

    return decorate


def _bench_sizes(
    bench: dict[str, Sequence[int]] | Sequence[dict[str, int]] | None,
) -> list[dict[str, int]] | dict[str, list[int]] | None:
    if isinstance(bench, dict):
        return {k: list(v) for k, v in bench.items()}
    return _dict_list(bench)


def _dict_list(value: Sequence[dict[str, int]] | None) -> list[dict[str, int]] | None:
    return [dict(d) for d in value] if value is not None else None


def run(fn: Callable[..., Any], *, timeout: float = 300.0) -> list[Finding]:
    """Run one registered case in an isolated child process and return its findings."""
    from triton_lint.dynamic.runner import run_file

    c: Case | None = getattr(fn, "__stress_case__", None)
    if c is None:
        raise ValueError(f"{fn!r} is not decorated with @stress.case")
    return run_file(pathlib.Path(c.path), only=[c.name], timeout=timeout)


def assert_clean(fn: Callable[..., Any], *, timeout: float = 300.0) -> None:
    """Pytest helper: fail with every finding listed when the case is not clean."""
    findings = run(fn, timeout=timeout)
    if findings:
        lines = [f"{f.path}:{f.line}: {f.code} {f.name}: {f.message}" for f in findings]
        raise AssertionError("stress case found problems:\n" + "\n".join(lines))
