"""The CPU backend: wrappers run under Triton's interpreter with the sanitizer's hooks.

Every load, store and atomic is checked against the tensor its pointer derives from, so
out-of-bounds accesses are found with their line, program id and lanes; masked-off lanes can be
poisoned per load site; programs can run in reverse order; a traced run names the store that
wrote an element. `TRITON_INTERPRET=1` must be set before this module is imported.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import torch

from triton_lint.dynamic.backend import RunMode, RunResult, Site, user_site
from triton_lint.dynamic.compare import fill_value, flatten
from triton_lint.dynamic.sanitizer import Sanitizer
from triton_lint.stress import Case


@contextmanager
def filled_empty(alt: bool, sites: dict[int, Site]) -> Iterator[None]:
    """Make `torch.empty*` return NaN/sentinel-filled tensors so unwritten output is visible."""
    originals = {
        "empty": torch.empty,
        "empty_like": torch.empty_like,
        "empty_strided": torch.empty_strided,
    }
    orig_new_empty = torch.Tensor.new_empty

    def fill(t: torch.Tensor) -> torch.Tensor:
        if isinstance(t, torch.Tensor) and t.numel():
            v = fill_value(t.dtype, alt)
            if v is not None:
                t.fill_(v)
            sites[t.untyped_storage().data_ptr()] = user_site(3)
        return t

    def wrap(orig: Callable[..., Any]) -> Callable[..., Any]:
        def w(*a: Any, **k: Any) -> Any:
            return fill(orig(*a, **k))

        return w

    for name, orig in originals.items():
        setattr(torch, name, wrap(orig))
    torch.Tensor.new_empty = wrap(orig_new_empty)  # type: ignore[method-assign]
    try:
        yield
    finally:
        for name, orig in originals.items():
            setattr(torch, name, orig)
        torch.Tensor.new_empty = orig_new_empty  # type: ignore[method-assign]


class InterpreterBackend:
    """Runs wrappers under the sanitising interpreter (see the module docstring)."""

    device = "interpreter"
    description = "CPU (Triton interpreter, TRITON_INTERPRET=1)"
    redzones = False

    def __init__(self) -> None:
        self.san = Sanitizer()

    def to_device(self, args: list[Any]) -> list[Any]:
        return args

    def reference(self, case: Case, args: list[Any]) -> Any:
        return case.reference(*args)

    def call(self, case: Case, args: list[Any], mode: RunMode) -> RunResult:
        san = self.san
        san.reset()
        if mode.poison is None:
            san.poison = None
        else:
            kind, lines = mode.poison
            san.poison = (kind, set(lines) if lines is not None else None)
        san.reverse_grid = mode.reverse
        if mode.trace:
            san.set_trace(True)
        res = RunResult()
        try:
            with filled_empty(mode.alt_fill, res.alloc_sites):
                out = case.fn(*args)
            flat = flatten(out, args)
            res.output_sites = [res.alloc_sites.get(t.untyped_storage().data_ptr()) for t in flat]
            # Trace runs keep the real tensors: their addresses are matched against the store log.
            res.outputs = [t.detach() if mode.trace else t.detach().clone() for t in flat]
        except Exception as e:
            res.error = e
            # The kernel line of an InterpreterError is in its cause's traceback.
            res.tb = traceback.extract_tb(e.__traceback__)
            if e.__cause__ is not None:
                res.tb += traceback.extract_tb(e.__cause__.__traceback__)
        finally:
            res.events = list(san.events)
            res.masked_loads = dict(san.masked_loads)
            res.first_nonfinite = san.first_nonfinite
            res.stores = san.stores
            res.launches = list(san.launches)
            if mode.trace:
                san.set_trace(False)
            san.poison = None
            san.reverse_grid = False
        return res

    def writer(
        self, runner: Any, case: Case, combo: Any, k: int, idx: tuple[int, ...]
    ) -> tuple[Site | None, list[int] | None]:
        """Re-run with the op tracer and store log: which store wrote element `idx`."""
        tr = runner.call(combo, RunMode(trace=True))
        runner.last_trace = tr
        if tr.error is not None or k >= len(tr.outputs) or not tr.stores:
            return None, None
        t = tr.outputs[k]
        addr = (
            t.data_ptr()
            + sum(i * s for i, s in zip(idx, t.stride(), strict=False)) * t.element_size()
        )
        for pid, site, addrs in reversed(tr.stores):
            if np.any(addrs == np.uint64(addr)):
                return site, list(pid)
        return None, None

    def case_findings(self, case: Case) -> list[Any]:
        return []  # the interpreter never compiles: no TL907
