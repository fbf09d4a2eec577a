"""Differences between Triton releases (3.3 to 3.9) that the interpreter path smooths over.

Child only: imports triton. Each patch is a no-op where the release already behaves.
"""

from __future__ import annotations

import inspect
from typing import Any


def install_compat(interp: Any) -> None:
    """Triton 3.3-3.6's `tensor.__index__` does `int()` on a shape-(1,) array, which numpy >= 2.5
    rejects (so `range(0, n, BLOCK)` fails); 3.9 squeezes first. Do the same on older releases
    (3.6 patches through a scope object, 3.3-3.5 set the attribute on the class)."""
    orig = getattr(interp, "_patch_lang_tensor", None)
    if orig is None or getattr(orig, "_tl_compat", False):
        return

    import numpy as np  # the interpreter's dependency; `--compile-only` children lack it

    def index(t: Any) -> int:
        return int(np.asarray(t.handle.data).squeeze())

    if len(inspect.signature(orig).parameters) >= 2:

        def _patch_lang_tensor(tensor: Any, scope: Any) -> None:
            orig(tensor, scope)
            scope.set_attr(tensor, "__index__", index)

    else:

        def _patch_lang_tensor(tensor: Any) -> None:  # type: ignore[misc]
            orig(tensor)
            tensor.__index__ = index

    _patch_lang_tensor._tl_compat = True  # type: ignore[attr-defined]
    interp._patch_lang_tensor = _patch_lang_tensor


def _host_benchmarker(fn: Any, quantiles: Any = None, **_: Any) -> Any:
    """A stand-in for `do_bench` that runs the config once and calls every config equally
    fast, so the first one is kept, as later releases' interpreters do (CPU timings of
    interpreted kernels say nothing about which config a GPU would pick)."""
    fn()
    return [0.0] * len(quantiles) if quantiles else 0.0


def install_cpu_autotuner() -> None:
    """Triton 3.3's `Autotuner` asks the GPU driver for a benchmarker when it is created, so
    on a machine without a GPU importing a module with `@triton.autotune` fails ("0 active
    drivers"); give it a host benchmarker there instead. Later releases need nothing."""
    from triton.runtime import autotuner, driver

    init = autotuner.Autotuner.__init__
    if getattr(init, "_tl_compat", False):
        return
    try:
        driver.driver.active.get_benchmarker()
        return
    except Exception:
        pass

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if kwargs.get("do_bench") is None:
            kwargs["do_bench"] = _host_benchmarker
        init(self, *args, **kwargs)

    __init__._tl_compat = True  # type: ignore[attr-defined]
    autotuner.Autotuner.__init__ = __init__  # type: ignore[method-assign]
