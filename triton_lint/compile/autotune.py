"""`@triton.autotune` under `--compile-only`: every config is a variant to compile, not a
candidate to time (timing needs a GPU). Child only: imports triton."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def config_kwargs(config: Any) -> dict[str, Any]:
    """A `triton.Config` as launch keyword arguments (its meta-parameters, `num_warps`,
    `num_stages`, `num_ctas`, `maxnreg` where set); `all_kwargs` where the release has it."""
    full = getattr(config, "all_kwargs", None)
    if callable(full):
        return dict(full())
    out = dict(getattr(config, "kwargs", {}))
    for key in ("num_warps", "num_stages", "num_ctas", "maxnreg"):
        value = getattr(config, key, None)
        if value is not None:
            out[key] = value
    return out


def expand_autotuners(after_config: Callable[[], None]) -> None:
    """Make `Autotuner.run` call the kernel once per config (through any `@triton.heuristics`
    below it), with no benchmarking, pruning or hooks: the recorder sees one launch each, and
    `after_config` is called after each (the child marks those launches as autotuned)."""
    from triton.runtime.autotuner import Autotuner

    if getattr(Autotuner.run, "_tl_compile_only", False):
        return

    def run(self: Any, *args: Any, **kwargs: Any) -> None:
        for config in self.configs:
            self.fn.run(*args, **{**kwargs, **config_kwargs(config)})
            after_config()

    run._tl_compile_only = True  # type: ignore[attr-defined]
    Autotuner.run = run  # type: ignore[method-assign]
