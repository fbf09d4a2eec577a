"""The CPU backend: wrappers run under Triton's interpreter with the sanitizer's hooks.

Every load, store and atomic is checked against the tensor its pointer derives from, so
out-of-bounds accesses are found with their line, program id and lanes; masked-off lanes can be
poisoned per load site; programs can run in reverse order; a traced run names the store that
wrote an element. `TRITON_INTERPRET=1` must be set before this module is imported.
"""

from __future__ import annotations

import traceback
from contextlib import AbstractContextManager
from typing import Any

import numpy as np
import torch

from triton_lint.dynamic.backend import (
    Rerun,
    RunMode,
    RunResult,
    Site,
    Writer,
    allocation_hooks,
    user_site,
)
from triton_lint.dynamic.compare import fill_value, flatten
from triton_lint.dynamic.devices import INTERPRETER_DESCRIPTION
from triton_lint.dynamic.sanitizer import Sanitizer
from triton_lint.dynamic.triton_compat import install_cpu_autotuner
from triton_lint.stress import Case


def filled_empty(alt: bool, sites: dict[int, Site]) -> AbstractContextManager[None]:
    """Make `torch.empty*` return NaN/sentinel-filled tensors so unwritten output is visible."""

    def fill(t: torch.Tensor, _empty: bool) -> torch.Tensor:
        if t.numel():
            v = fill_value(t.dtype, alt)
            if v is not None:
                t.fill_(v)
            sites[t.untyped_storage().data_ptr()] = user_site(2)
        return t

    return allocation_hooks(fill, empty_only=True)


class InterpreterBackend:
    """Runs wrappers under the sanitising interpreter (see the module docstring)."""

    device = "interpreter"
    input_device = "cpu"
    description = INTERPRETER_DESCRIPTION

    def __init__(self) -> None:
        install_cpu_autotuner()
        self.san = Sanitizer()

    def to_device(self, args: list[Any]) -> list[Any]:
        return args

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

    def writer(self, rerun: Rerun, res: RunResult, k: int, idx: tuple[int, ...]) -> Writer:
        """Re-run with the op tracer and store log: which store wrote element `idx`."""
        tr = rerun(RunMode(trace=True))
        if tr.error is not None or k >= len(tr.outputs) or not tr.stores:
            return Writer(first_nonfinite=tr.first_nonfinite)
        t = tr.outputs[k]
        addr = (
            t.data_ptr()
            + sum(i * s for i, s in zip(idx, t.stride(), strict=False)) * t.element_size()
        )
        for pid, site, addrs in reversed(tr.stores):
            if np.any(addrs == np.uint64(addr)):
                return Writer(site, list(pid), tr.first_nonfinite)
        return Writer(first_nonfinite=tr.first_nonfinite)

    def read_probe(self, rerun: Rerun, res: RunResult) -> list[dict[str, Any]]:
        return []  # every load was checked during the run

    def masked_load_sites(self, res: RunResult) -> list[Site]:
        return list(res.masked_loads)  # loads whose masks were partly off in this run

    def case_findings(self, case: Case) -> list[Any]:
        return []  # the interpreter never compiles: no TL907
