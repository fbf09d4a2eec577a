"""The GPU backend: wrappers run natively on a CUDA device, inside red zones (child only).

Inputs are placed, and the wrapper's `torch.empty*`/`zeros*`/`*_like` outputs re-homed, between
guard regions (`redzone`). After each run a changed guard byte is an out-of-bounds write; a
second run with other guard bytes that changes the output is an out-of-bounds read (named per
buffer by a run that changes only that buffer's guards). The launch recorder names the kernel
parameter behind a buffer and the kernel source names the accesses that can reach it. Masked-off
lanes read a poison table set per run (`poison`); every access is bounds-checked inside the
kernel (`bounds`). Faults that leave the CUDA context unusable
(illegal address, device-side assert) mark the result sticky: the child reports and exits.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import traceback
from typing import Any

import torch

from triton_lint.dynamic.autotune_check import AutotuneCheck
from triton_lint.dynamic.backend import Rerun, RunMode, RunResult, Site, Writer
from triton_lint.dynamic.bounds import BoundsChecker
from triton_lint.dynamic.compare import flatten, same
from triton_lint.dynamic.kernel_cache import private_kernel_cache
from triton_lint.dynamic.kernel_source import access_lines, compile_error_frame, python_function
from triton_lint.dynamic.launches import LaunchRecorder
from triton_lint.dynamic.poison import Poisoner
from triton_lint.dynamic.redzone import CANARY, PROBE, Arena, Guarded
from triton_lint.stress import Case

_STICKY = re.compile(
    r"illegal memory access|device-side assert|unspecified launch failure|misaligned address|"
    r"illegal instruction|an illegal|launch failure|hardware stack error",
    re.IGNORECASE,
)
#: `file:line: func: block: [x,y,z], thread: [x,y,z] Assertion `msg` failed.` (device printf)
_ASSERT = re.compile(
    r"^(?P<file>.+?):(?P<line>\d+): (?P<func>\S+): block: \[(?P<block>[\d,]+)\], "
    r"thread: \[(?P<thread>[\d,]+)\] Assertion `(?P<msg>.*)` failed"
)


def is_sticky(error: BaseException) -> bool:
    """A CUDA error after which the context is unusable (every later call fails)."""
    return type(error).__name__ == "AcceleratorError" or bool(_STICKY.search(str(error)))


def parse_device_asserts(text: str) -> list[dict[str, Any]]:
    """Failed `tl.device_assert`s and int32 overflow checks printed by the device."""
    events: list[dict[str, Any]] = []
    seen: set[tuple[str, int]] = set()
    for line in text.splitlines():
        m = _ASSERT.match(line.strip())
        if m is None:
            continue
        site = (m["file"], int(m["line"]))
        if site in seen:
            continue
        seen.add(site)
        msg = m["msg"]
        events.append(
            {
                "kind": "overflow" if "overflow detected" in msg else "assert",
                "site": (m["file"], int(m["line"]), "?"),
                "message": msg,
                "pid": [int(x) for x in m["block"].split(",")],
                "lane": [int(x) for x in m["thread"].split(",")],
            }
        )
    return events


def _explained(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Red-zone events at an access that can reach the tensor; a guard no access can reach was
    hit by another tensor's overflow, so it is kept only when nothing else explains the run."""
    located = [ev for ev in events if ev["located"]]
    return located or events


class CudaBackend:
    """Runs wrappers natively on the current CUDA device (see the module docstring)."""

    device = "cuda"
    #: Inputs are generated on the GPU (`inputs.make_args`): nothing crosses PCIe per run.
    input_device = "cuda"

    def __init__(self, *, redzones: bool = True, device_output: str | None = None) -> None:
        torch.cuda.init()
        self.torch_device = torch.device("cuda", torch.cuda.current_device())
        self.description = f"CUDA ({torch.cuda.get_device_name(self.torch_device)})"
        torch.set_default_device(self.torch_device)
        self.redzones = redzones
        self.arena = Arena(self.torch_device)
        # Compiled checks hold this process's table addresses: kernels stay in a private cache.
        private_kernel_cache(f"pid{os.getpid()}")
        self.recorder = LaunchRecorder()
        self.recorder.specialize = False  # one variant per constexpr set (`launches.one_variant`)
        #: Compiled-in bounds checks (before the poisoner, which wraps their `tl.load`).
        self.bounds = BoundsChecker(self.torch_device) if redzones else None
        if self.bounds is not None:
            self.recorder.on_launch = self.bounds.on_launch
        self.poisoner = Poisoner(self.torch_device)
        #: The file this process's stderr goes to (CUDA prints failed device asserts there).
        self.device_output = device_output
        self._log_pos = 0
        self.pending: dict[tuple[Any, ...], dict[str, Any]] = {}
        self.autotune = AutotuneCheck(
            self._autotune_event, lambda: [(r.name, r.site) for r in self.recorder.launches]
        )

    def _autotune_event(self, key: tuple[Any, ...], event: dict[str, Any]) -> None:
        self.pending.setdefault(key, event)

    # -- placement -----------------------------------------------------------------------

    def to_device(self, args: list[Any]) -> list[Any]:
        out = []
        for i, a in enumerate(args):
            if isinstance(a, torch.Tensor):
                out.append(
                    self.arena.place(a, f"input {i}") if self.redzones else a.to(self.torch_device)
                )
            else:
                out.append(a)
        return out

    # -- running -------------------------------------------------------------------------

    def call(self, case: Case, args: list[Any], mode: RunMode) -> RunResult:
        self.arena.reset()
        self.recorder.reset_run()
        self.autotune.reset()
        if self.bounds is not None:
            self.bounds.reset()
        self.pending = {}
        self._log_pos = self._log_size()
        res = RunResult()
        dev_args = self.to_device(args)
        if mode.guard_fill is not None:
            self.arena.fill_guards(mode.guard_fill, mode.guard_only)
        try:
            with self.poisoner.active(mode.poison):
                if self.redzones:
                    with self.arena.intercept(mode.alt_fill):
                        out = case.fn(*dev_args)
                else:
                    out = case.fn(*dev_args)
                torch.cuda.synchronize()
            flat = flatten(out, dev_args)
            res.outputs = [t.detach() for t in flat]  # compared on the device (`compare`)
            res.output_sites = [self._alloc_site(t) for t in flat]
            res.writers = [self._writer_of(t) for t in flat]
        except Exception as e:
            res.error = e
            res.tb = traceback.extract_tb(e.__traceback__)
            kernel_line = compile_error_frame(e, (r.kernel for r in self.recorder.launches))
            if kernel_line is not None:
                res.tb.append(kernel_line)
            res.sticky = is_sticky(e)
            if res.sticky:
                res.events = [
                    {**ev, "launch": self._launch_site(ev["site"][2])}
                    for ev in parse_device_asserts(self._device_output())
                ]
            return res
        finally:
            res.launches = [(rec.name, rec.site) for rec in self.recorder.launches]
            res.launches = list(dict.fromkeys(res.launches))
        # A probe run fills the guards with other bytes on purpose: no write check there.
        checked = self.redzones and mode.guard_fill is None
        res.events = (self.write_events() if checked else []) + list(self.pending.values())
        if self.bounds is not None:
            res.events = self.bounds.events(self.arena) + res.events
        return res

    def _log_size(self) -> int:
        try:
            return os.path.getsize(self.device_output) if self.device_output else 0
        except OSError:
            return 0

    def _device_output(self) -> str:
        """What CUDA printed to stderr since this run began (failed device asserts)."""
        if not self.device_output:
            return ""
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.flush()
            os.fsync(2)
        try:
            with open(self.device_output, "rb") as fh:
                fh.seek(self._log_pos)
                return fh.read(2_000_000).decode("utf-8", errors="replace")
        except OSError:
            return ""

    # -- red zones -----------------------------------------------------------------------

    def write_events(self) -> list[dict[str, Any]]:
        """TL901 events for every buffer whose guards no longer hold the canary."""
        events = []
        for i in self.arena.dirty(CANARY):
            g = self.arena.buffers[i]
            before, after = g.changed(CANARY)
            for side, offsets in (("before", before), ("after", after)):
                if offsets:
                    events.append(self._oob_event(g, "store", side, offsets))
        return _explained(events)

    def read_probe(self, rerun: Rerun, res: RunResult) -> list[dict[str, Any]]:
        """Rerun with other guard bytes: a changed output is an out-of-bounds read; one run per
        buffer (only its guards changed) names the buffer and the loads that can reach it."""
        if not self.redzones or not self.bounds_blind():
            return []
        probe = rerun(RunMode(guard_fill=PROBE))
        if probe.error is not None or same(probe.outputs, res.outputs):
            return []
        events = []
        for i in range(len(self.arena.buffers)):
            one = rerun(RunMode(guard_fill=PROBE, guard_only=i))
            if one.error is None and not same(one.outputs, res.outputs):
                # Named now: the buffer's address belongs to this run's launches.
                events.append(self._oob_event(self.arena.buffers[i], "load", None, []))
        return _explained(events)

    def bounds_blind(self) -> bool:
        """Some access of this process's kernels has no compiled-in check (block pointers,
        tensor descriptors): only the red-zone probe can see its reads."""
        return self.bounds is None or self.bounds.blind

    def masked_load_sites(self, res: RunResult) -> list[Site]:
        """Every masked load without `other=` the compiler met in this run's kernels (or in
        helpers of the case's file): native runs cannot tell which lanes were off."""
        launched = {name for name, _site in res.launches}
        files = {site[0] for _name, site in res.launches}
        return [s for s in self.poisoner.sites if s[2] in launched or s[0] in files]

    def _oob_event(
        self, g: Guarded, op: str, side: str | None, offsets: list[int]
    ) -> dict[str, Any]:
        item = g.tensor.element_size()
        kernel, param, launch = self._param_of(g)
        site: Site = (launch[0], launch[1], launch[2]) if launch else ("<unknown>", 0, "?")
        located = False
        if kernel is not None and param is not None:
            path, lines = access_lines(kernel, param, write=op == "store")
            if lines:
                site = (path, lines[0], python_function(kernel).__name__)
                located = True
        first = last = None
        if offsets:
            first, last = offsets[0] // item, offsets[-1] // item
        return {
            "kind": "oob",
            "site": site,
            "op": op,
            "arg": param or g.role,
            "arg_shape": list(g.tensor.shape),
            "arg_dtype": str(g.tensor.dtype).replace("torch.", ""),
            "side": side,
            "first": first,
            "last": last,
            "offsets": [first, last] if offsets else [],
            "bad_lanes": len({o // item for o in offsets}) if offsets else None,
            "pid": None,
            "lane": None,
            "owner_inferred": param is None,
            "located": located,  # the site is an access that can reach the tensor
            "kernel": getattr(python_function(kernel), "__name__", None) if kernel else None,
            "launch": launch,
        }

    def _param_of(self, g: Guarded) -> tuple[Any, str | None, Site | None]:
        hits = self.recorder.params_into(g.lo, g.hi)
        if not hits:
            first = self.recorder.launches[0].site if self.recorder.launches else None
            return None, None, first
        rec, pname = hits[0]
        return rec.kernel, pname, rec.site

    def _launch_site(self, kernel_name: str) -> Site | None:
        for rec in self.recorder.launches:
            if rec.name == kernel_name:
                return rec.site
        return self.recorder.launches[0].site if self.recorder.launches else None

    def _alloc_site(self, t: torch.Tensor) -> Site | None:
        i = self.arena.owner(int(t.data_ptr())) if t.numel() else None
        return self.arena.buffers[i].site if i is not None else None

    def _writer_of(self, t: torch.Tensor) -> Site | None:
        """The last store (it writes the final value) to the kernel parameter this output was
        passed as."""
        ptr = int(t.data_ptr())
        end = ptr + max(t.numel(), 1) * t.element_size()
        for rec, pname in self.recorder.params_into(ptr, end):
            path, lines = access_lines(rec.kernel, pname, write=True)
            if lines:
                return (path, lines[-1], rec.name)
        return None

    def writer(self, rerun: Rerun, res: RunResult, k: int, idx: tuple[int, ...]) -> Writer:
        """The store that writes output `k` (native runs cannot say which program wrote it)."""
        return Writer(res.writers[k] if k < len(res.writers) else None)

    # -- whole-case checks ---------------------------------------------------------------

    def case_findings(self, case: Case) -> list[dict[str, Any]]:
        """TL907 evidence: kernels whose constexpr values tracked the case's sizes."""
        from triton_lint.dynamic.gpu import compiled_variants, recompiling_parameters

        out = []
        for name, values in self.recorder.case_constexprs.items():
            kernel = self.recorder.case_kernels[name]
            params = recompiling_parameters(values)
            if not params:
                continue
            variants = len({tuple(sorted(map(repr, v.items()))) for v in values})
            variants = max(variants, compiled_variants(kernel))
            out.append({"kernel": kernel, "params": params, "variants": variants})
        self.recorder.reset_case()
        return out
