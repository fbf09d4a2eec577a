"""What every native kernel launch received (child only, CUDA backend).

`JITFunction.run` is wrapped once per process: each launch records the kernel, its launch site,
the tensors passed for each pointer parameter (to name the parameter behind a red-zone hit) and
the value of each `tl.constexpr` parameter (to name the one that recompiles per size, TL907).
With `launch=False` (`--compile-only`) nothing is launched: the record keeps the call itself,
which the compile child hands to Triton as a warm-up for each architecture.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from triton_lint.dynamic.backend import Site, user_site
from triton_lint.dynamic.kernel_source import python_function


@dataclass
class LaunchRecord:
    """One launch: kernel, site, pointer arguments (name -> address) and constexpr values."""

    kernel: Any
    name: str
    site: Site
    pointers: dict[str, int] = field(default_factory=dict)
    constexprs: dict[str, Any] = field(default_factory=dict)
    #: The positional and keyword arguments of the call (kept only when not launching).
    call: tuple[tuple[Any, ...], dict[str, Any]] | None = None


class LaunchRecorder:
    """Installs the `JITFunction.run` wrapper and keeps the launches of the current run."""

    def __init__(self, *, installed: bool = True, launch: bool = True) -> None:
        #: False: record each call and return None instead of compiling and launching it.
        self.launch = launch
        #: False: one compiled variant per set of constexpr values (`one_variant`).
        self.specialize = True
        self.launches: list[LaunchRecord] = []
        #: Every kernel launched in this process, by id (their caches are cleared for poisoning).
        self.kernels: dict[int, Any] = {}
        #: Per kernel name: the constexpr values of every launch of the current case.
        self.case_constexprs: dict[str, list[dict[str, Any]]] = {}
        self.case_kernels: dict[str, Any] = {}
        self.original: Any = None
        #: Called before every launch with (kernel, parameter names, values, launch site).
        self.on_launch: Any = None
        if installed:
            self.install()

    def install(self) -> None:
        """Wrap `JITFunction.run` (timings want it off: recording costs microseconds a launch)."""
        from triton.runtime.jit import JITFunction

        if self.original is not None:
            return
        recorder = self
        orig = self.original = JITFunction.run

        def run(fn: Any, *args: Any, **kwargs: Any) -> Any:
            rec = recorder.record(fn, args, kwargs)
            if not recorder.launch:
                if rec is not None:
                    rec.call = (args, dict(kwargs))
                return None
            return orig(fn, *args, **kwargs)

        JITFunction.run = run  # type: ignore[method-assign]

    def uninstall(self) -> None:
        from triton.runtime.jit import JITFunction

        if self.original is not None:
            JITFunction.run = self.original  # type: ignore[method-assign]
            self.original = None

    def reset_run(self) -> None:
        self.launches = []

    def reset_case(self) -> None:
        self.case_constexprs = {}
        self.case_kernels = {}

    def record(self, fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> LaunchRecord | None:
        if kwargs.get("warmup"):
            return None
        params = list(getattr(fn, "params", []))
        if not self.specialize:
            one_variant(fn, params)
        names = [getattr(p, "name", f"arg{i}") for i, p in enumerate(params)]
        values = dict(zip(names, args, strict=False))
        values.update({k: v for k, v in kwargs.items() if k in names})
        name = getattr(python_function(fn), "__name__", "?")
        rec = LaunchRecord(fn, name, user_site(2))
        for p, pname in zip(params, names, strict=False):
            v = values.get(pname)
            if isinstance(v, torch.Tensor):
                rec.pointers[pname] = int(v.data_ptr())
            elif getattr(p, "is_constexpr", False) and pname in values:
                rec.constexprs[pname] = v
        self.launches.append(rec)
        if self.on_launch is not None:
            self.on_launch(fn, names, values, rec.site)
        self.kernels[id(fn)] = fn
        self.case_kernels[name] = fn
        self.case_constexprs.setdefault(name, []).append(rec.constexprs)
        return rec

    def params_into(self, lo: int, hi: int) -> list[tuple[LaunchRecord, str]]:
        """(launch, parameter) pairs whose tensor starts inside [lo, hi)."""
        return [
            (rec, pname)
            for rec in self.launches
            for pname, ptr in rec.pointers.items()
            if lo <= ptr < max(hi, lo + 1)
        ]

    def clear_compiled(self) -> None:
        """Forget every compiled variant in memory, so the next launch compiles again."""
        for fn in self.kernels.values():
            caches = getattr(fn, "device_caches", None)
            if caches is not None:
                caches.clear()
            elif isinstance(getattr(fn, "cache", None), dict):
                fn.cache.clear()


def one_variant(fn: Any, params: list[Any]) -> None:
    """Before a kernel's first launch, turn off Triton's specialisation of its integer and
    pointer arguments (`== 1`, divisible by 16, 16-byte aligned). Those are code-generation
    hints, true of the values they were taken from, so a checking run loses nothing by leaving
    them out; what it gains is one compilation where a case's sizes (1, 17, 64, ...) made three
    or more, each with the bounds and debug checks in it: most of a native run's time."""
    if getattr(fn, "device_caches", None):
        return  # launched before: its argument binder is made, and keeps what it was made with
    for p in params:
        if not getattr(p, "is_constexpr", False) and hasattr(p, "do_not_specialize"):
            p.do_not_specialize = True
            if hasattr(p, "do_not_specialize_on_alignment"):
                p.do_not_specialize_on_alignment = True
