"""What a device backend gives the case runner: one call of a wrapper and what was seen meanwhile.

Two backends exist: the interpreter (`interpreter_backend`, every access checked on the CPU) and
CUDA (`cuda_backend`, native launches with red zones). The case runner (`case_runner`) decides
which runs to make and turns their results into findings; it never asks which device it is on,
only what the backend can do (`Backend` below).
"""

from __future__ import annotations

import importlib.util
import os
import sys
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

import torch

from triton_lint.stress import Case

Site = tuple[str, int, str]  # (file, line, function)

#: Frames in these directories are library code; a finding's site is the first frame outside.
LIB_DIRS = (
    os.path.dirname(torch.__file__),
    os.path.dirname(os.path.dirname(__file__)),
    os.path.dirname(os.path.abspath(importlib.util.find_spec("triton").origin or "")),  # type: ignore[union-attr]
)


def user_site(skip_frames: int = 2) -> Site:
    """The innermost frame outside torch, triton and triton_lint (a line of the user's code)."""
    f = sys._getframe(skip_frames)
    while f is not None:
        if not f.f_code.co_filename.startswith(LIB_DIRS):
            return (f.f_code.co_filename, f.f_lineno, f.f_code.co_name)
        f = f.f_back
    return ("<unknown>", 0, "?")


@dataclass(frozen=True)
class RunMode:
    """How one run differs from a plain call of the wrapper."""

    alt_fill: bool = False  # fill torch.empty* with the second sentinel (TL906)
    poison: tuple[str, frozenset[int] | None] | None = None  # masked-off lanes (TL905)
    reverse: bool = False  # interpreter: programs in reverse order (TL904)
    trace: bool = False  # interpreter: op tracer and store log (who wrote what)
    guard_fill: int | None = None  # CUDA: byte the red zones hold (OOB-read probe)
    guard_only: int | None = None  # CUDA: only this buffer's red zones get `guard_fill`


@dataclass
class RunResult:
    """What one call of the wrapper produced, and what the backend saw meanwhile."""

    #: On the backend's device (a GPU run's stay there: `compare` works on any device).
    outputs: list[torch.Tensor] = field(default_factory=list)
    error: BaseException | None = None
    tb: list[traceback.FrameSummary] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    masked_loads: dict[Site, int] = field(default_factory=dict)
    alloc_sites: dict[int, Site] = field(default_factory=dict)
    output_sites: list[Site | None] = field(default_factory=list)
    first_nonfinite: dict[str, Any] | None = None
    stores: list[Any] | None = None
    launches: list[tuple[str, Site]] = field(default_factory=list)
    #: The CUDA context is unusable after this run (illegal address, device assert).
    sticky: bool = False
    #: The store that writes each output, when the backend knows it without a traced run.
    writers: list[Site | None] = field(default_factory=list)


@dataclass(frozen=True)
class Writer:
    """Who wrote an output element: the store, its program id, and (interpreter) the first op
    that produced a non-finite value in the traced run."""

    site: Site | None = None
    pid: list[int] | None = None
    first_nonfinite: dict[str, Any] | None = None


#: Runs the current combination again in another mode (the case runner's `call`).
Rerun = Callable[[RunMode], RunResult]


#: Allocation functions whose result is uninitialised (TL906 fills them), and the ones that set
#: values; both kinds are outputs a wrapper may hand to a kernel.
_EMPTY = (
    (torch, "empty"),
    (torch, "empty_like"),
    (torch, "empty_strided"),
    (torch.Tensor, "new_empty"),
)
_VALUED = (
    *((torch, n) for n in ("zeros", "zeros_like", "ones", "ones_like", "full", "full_like")),
    *((torch.Tensor, n) for n in ("new_zeros", "new_ones", "new_full")),
)


@contextmanager
def allocation_hooks(
    on_alloc: Callable[[torch.Tensor, bool], torch.Tensor], *, empty_only: bool
) -> Iterator[None]:
    """While active, every tensor the wrapper allocates passes through `on_alloc(t, empty)`
    (`empty`: an uninitialised `empty*` allocation); with `empty_only`, only those."""
    saved: list[tuple[Any, str, Any]] = []
    for (owner, name), empty in [(e, True) for e in _EMPTY] + [
        (v, False) for v in (() if empty_only else _VALUED)
    ]:
        orig = getattr(owner, name, None)
        if orig is None:
            continue

        def allocate(*a: Any, _orig: Any = orig, _empty: bool = empty, **k: Any) -> Any:
            t = _orig(*a, **k)
            return on_alloc(t, _empty) if isinstance(t, torch.Tensor) else t

        saved.append((owner, name, orig))
        setattr(owner, name, allocate)
    try:
        yield
    finally:
        for owner, name, orig in reversed(saved):
            setattr(owner, name, orig)


class StickyError(Exception):
    """The device is unusable after a fault; the child must exit so a fresh one goes on."""


class Backend(Protocol):
    """A device that runs wrappers (see the module docstring)."""

    #: "interpreter" or "cuda"; findings and the report name it.
    device: str
    #: A longer description for the report ("CUDA (NVIDIA H100 80GB HBM3)").
    description: str
    #: Where a case's inputs are generated ("cpu", or "cuda": on the GPU itself).
    input_device: str

    def call(self, case: Case, args: list[Any], mode: RunMode) -> RunResult:
        """Run the wrapper once on `args` (fresh ones per call) and collect what was seen."""
        ...

    def to_device(self, args: list[Any]) -> list[Any]:
        """Inputs built on `input_device`, placed where the wrapper expects them."""
        ...

    def writer(self, rerun: Rerun, res: RunResult, k: int, idx: tuple[int, ...]) -> Writer:
        """The store that wrote element `idx` of output `k` in run `res`."""
        ...

    def read_probe(self, rerun: Rerun, res: RunResult) -> list[dict[str, Any]]:
        """Out-of-bounds-read events found by extra runs (red zones); [] when every access
        is already checked."""
        ...

    def masked_load_sites(self, res: RunResult) -> list[Site]:
        """Loads with a mask and no `other=` that poisoning can reach in this run."""
        ...

    def case_findings(self, case: Case) -> list[Any]:
        """Findings that need the whole case (TL907 on a GPU)."""
        ...
