"""TL911 on both devices: every `@triton.autotune` config runs once on the same inputs, and a
config whose output differs from the first one's is reported (child only).

`Autotuner._bench` is wrapped: instead of timing, each config runs once on a snapshot of the
arguments (restored afterwards, so configs cannot see each other's writes) and its outputs are
kept for comparison.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

Event = Callable[[tuple[Any, ...], dict[str, Any]], None]


class AutotuneCheck:
    """Installs the `_bench` wrapper once; `reset()` starts a new run."""

    def __init__(self, event: Event, launches: Callable[[], list[Any]]) -> None:
        self.event = event
        self.launches = launches
        self.rounds: dict[int, tuple[Any, str, list[Any]]] = {}
        try:
            from triton.runtime.autotuner import Autotuner
        except ImportError:  # pragma: no cover
            return
        check = self
        orig_bench = Autotuner._bench

        def _bench(at: Any, *args: Any, config: Any, **meta: Any) -> Any:
            return check.bench(orig_bench, at, args, config, meta)

        Autotuner._bench = _bench

    def reset(self) -> None:
        self.rounds = {}

    def bench(self, orig: Any, at: Any, args: tuple[Any, ...], config: Any, meta: Any) -> Any:
        import torch

        tensors = [a for a in list(args) + list(meta.values()) if isinstance(a, torch.Tensor)]
        snap = [t.clone() for t in tensors]
        equal_times(at)
        try:
            res = orig(at, *args, config=config, **meta)
        finally:
            outs = [t.detach().cpu().clone() for t in tensors]
            for t, s in zip(tensors, snap, strict=False):
                t.copy_(s)
        key = tuple((t.data_ptr(), tuple(t.shape)) for t in tensors)
        prev = self.rounds.get(id(at))
        if prev is None or prev[0] != key:
            self.rounds[id(at)] = (key, str(config), outs)
            return res
        diff = first_difference(prev[2], outs)
        if diff is not None:
            fn = at.base_fn if hasattr(at, "base_fn") else at.fn
            code = getattr(getattr(fn, "fn", fn), "__code__", None)
            site = (
                (code.co_filename, code.co_firstlineno, code.co_name)
                if code is not None
                else ("<unknown>", 0, "?")
            )
            launches = self.launches()
            self.event(
                ("autotune", site, str(config)),
                {
                    "kind": "autotune",
                    "site": site,
                    "config": str(config),
                    "baseline_config": prev[1],
                    "tensor_index": diff[0],
                    "element": diff[1],
                    "launch": launches[-1][1] if launches else None,
                },
            )
        return res


def equal_times(at: Any) -> None:
    """Make every config time the same, so the autotuner keeps the first one and a run's
    findings never depend on which config happened to be faster. Triton 3.3 keeps the
    benchmarker in `do_bench`; later releases in `_do_bench`, behind a `do_bench` property."""

    def run_once(kernel_call: Any, quantiles: Any) -> list[float]:
        kernel_call()
        return [1.0, 1.0, 1.0]

    if isinstance(getattr(type(at), "do_bench", None), property):
        at._do_bench = run_once
    else:
        at.do_bench = run_once


def first_difference(a: list[Any], b: list[Any]) -> tuple[int, int] | None:
    """First (tensor index, flat element) where two output snapshots differ (loose tolerance)."""
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        xn = x.detach().double().numpy().ravel() if x.is_floating_point() else x.numpy().ravel()
        yn = y.detach().double().numpy().ravel() if y.is_floating_point() else y.numpy().ravel()
        if x.is_floating_point():
            ok = np.isclose(xn, yn, rtol=1e-3, atol=1e-3, equal_nan=True)
        else:
            ok = xn == yn
        if not ok.all():
            return i, int(np.argmin(ok))
    return None
