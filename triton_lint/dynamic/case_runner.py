"""Runs every combination of one stress case on a backend and turns what it sees into findings.

Per combination: one plain run (events: out of bounds, asserts, overflow, autotune), the
reference, the comparison (TL903; TL906 for never-written `torch.empty*` elements; TL902 for
non-finite output from finite inputs), then the probes the backend supports: poisoned masked-off
lanes (TL905), red-zone reads (TL901, GPU), determinism (TL904: reversed program order on the
interpreter, repeated runs on a GPU). Failures seen only on a non-contiguous layout, where the
contiguous one passes, are one TL912 naming the argument whose strides are ignored.
"""

from __future__ import annotations

import inspect
import traceback
from collections.abc import Callable
from typing import Any

import torch

from triton_lint.dynamic.backend import Backend, RunMode, RunResult, StickyError
from triton_lint.dynamic.case_findings import FindingLog
from triton_lint.dynamic.compare import (
    flatten,
    mismatch,
    same,
    spread,
)
from triton_lint.dynamic.gpu import recompilation_finding
from triton_lint.dynamic.inputs import Combo, combos, make_args
from triton_lint.dynamic.kernel_source import python_function
from triton_lint.dynamic.output_check import OutputCheck
from triton_lint.finding import Finding, Severity
from triton_lint.stress import Case, TensorSpec

POISONS = ("inf", "seven", "nan", "neginf")
PLAIN = RunMode()
#: Codes a layout that the wrapper handles wrongly produces (TL912 replaces them).
LAYOUT_CODES = frozenset({"TL901", "TL902", "TL903", "TL906"})


class CaseRunner:
    """Runs one case (see the module docstring)."""

    def __init__(
        self,
        backend: Backend,
        case: Case,
        emit: Callable[[dict[str, Any]], None] | None = None,
        *,
        repeats: int = 3,
        skip_combos: int = 0,
        plain: bool = False,
    ) -> None:
        self.backend = backend
        self.case = case
        self.emit = emit
        self.log = FindingLog(case, backend.device)
        self.repeats = repeats
        self.skip_combos = skip_combos
        #: One call per combination and nothing else (an external tool is watching).
        self.plain = plain
        #: Where inputs are generated: on the GPU for native runs, the host for the interpreter.
        self.input_device = backend.input_device
        self.tl905_done: set[int] = set()
        self.tl904_done: set[Any] = set()
        self.combo_kernels: list[str] = []
        self.combo_index = 0
        #: (dims, dtypes) of contiguous combinations that passed (TL912 needs them).
        self.contiguous_clean: set[tuple[Any, ...]] = set()
        self.outputs = OutputCheck(case, self.log, backend, self.call)

    @property
    def findings(self) -> dict[tuple[Any, ...], Finding]:
        return self.log.findings

    # -- running -------------------------------------------------------------------------

    def call(self, combo: Combo, mode: RunMode = PLAIN) -> RunResult:
        res = self.backend.call(
            self.case, make_args(self.case, combo, device=self.input_device), mode
        )
        for kernel, _site in res.launches:
            if kernel not in self.combo_kernels:
                self.combo_kernels.append(kernel)
        if res.sticky:
            self.fault(res, combo)
        return res

    def reference(self, combo: Combo) -> tuple[list[torch.Tensor] | None, list[Any]]:
        """The reference's outputs and its arguments, on the device the inputs are made on
        (no red zones: only the wrapper's run is checked)."""
        args = make_args(self.case, combo, device=self.input_device)
        try:
            out = self.case.reference(*args)
        except Exception:
            return None, args
        return [t.detach() for t in flatten(out, args)], args

    def run(self) -> list[Finding]:
        """Run every combo; with `emit`, report each one (`combo_start`, `combo`) as it goes."""
        for n, (combo, skip) in enumerate(self.plan()):
            if n < self.skip_combos:
                continue
            self.combo_index = n
            variant = combo.variant() + (f" ({skip})" if skip else "")
            cell = {"variant": variant, "pattern": combo.pattern, "combo_index": n}
            if self.emit is not None:
                self.emit({"event": "combo_start", **cell})
            self.log.combo_codes = set()
            self.combo_kernels = []
            status = "skip" if skip else self.run_combo(combo)
            codes = self.log.combo_codes
            if status is None:
                status = "error" if "TL908" in codes else "fail" if codes else "pass"
            if self.emit is not None:
                self.emit(
                    {
                        "event": "combo",
                        **cell,
                        "kernel": ", ".join(self.combo_kernels),
                        "status": status,
                        "codes": sorted(codes),
                    }
                )
        return self.case_end()

    def plan(self) -> list[tuple[Combo, str | None]]:
        """The combinations to run, each with why it cannot run here (None: it can)."""
        return [(c, None) for c in combos(self.case)]

    def case_end(self) -> list[Finding]:
        """Whole-case findings (TL907): at the kernel's `def`, related to its launch."""
        for item in self.backend.case_findings(self.case):
            name = python_function(item["kernel"]).__name__
            f = recompilation_finding(
                item["kernel"],
                item["params"],
                item["variants"],
                case=self.case.name,
                related=self.log.related(("", 0, name), None),
            )
            self.findings[("TL907", f.path, f.line, name)] = f
        return list(self.findings.values())

    def run_combo(self, combo: Combo) -> str | None:
        """Run one combo; returns "skip" when it was not checked, else None (status by codes)."""
        snap = self.log.snapshot() if combo.layout != "contiguous" else None
        res = self.call(combo)
        if self.plain:
            return "error" if res.error is not None else "pass"
        self.log.main_launches = res.launches
        if res.error is not None:
            if combo.layout != "contiguous":
                return "skip"  # the wrapper does not accept this layout: fine
            self.outputs.report_error(res, combo)
            return None
        for ev in res.events:
            self.log.event(ev, combo)
        ref, ref_args = self.reference(combo)
        if ref is not None:
            self.outputs.compare(res, ref, ref_args, combo)
        for ev in self.backend.read_probe(lambda mode: self.call(combo, mode), res):
            self.log.event(ev, combo)
        if snap is not None:
            return self.judge_layout(combo, snap)
        if ref is None:
            return None
        if combo.pattern == (self.case.patterns or ["normal"])[0]:
            if not self.log.combo_codes:
                self.contiguous_clean.add((tuple(combo.dims.items()), combo.dtypes))
            self.check_masked_lanes(res, combo)
        self.check_determinism(res, combo)
        return None

    # -- checks --------------------------------------------------------------------------

    def check_masked_lanes(self, res: RunResult, combo: Combo) -> None:
        """TL905: poison masked-off lanes of loads without `other=`; watch the output."""
        sites = self.backend.masked_load_sites(res)
        lines = {site[1] for site in sites} - self.tl905_done
        if not lines:
            return
        for kind in POISONS:
            p = self.call(combo, RunMode(poison=(kind, None)))
            if p.error is not None or same(p.outputs, res.outputs):
                continue
            for site in sorted(sites, key=lambda s: s[1]):
                if site[1] not in lines:
                    continue
                q = self.call(combo, RunMode(poison=(kind, frozenset({site[1]}))))
                if q.error is None and not same(q.outputs, res.outputs):
                    self.tl905_done.add(site[1])
                    self.log.add(
                        "TL905",
                        site,
                        "output changes when masked-off lanes of this load (no `other=`) hold "
                        f"{kind}; the kernel depends on undefined values {combo.short()}",
                        combo,
                        {"poison": kind},
                    )
            return

    def check_determinism(self, res: RunResult, combo: Combo) -> None:
        """TL904: outputs must be bitwise equal across runs. The interpreter reverses program
        order once per dtype; a GPU repeats every combination (`repeats` runs in all)."""
        if self.backend.device == "interpreter":
            if combo.dtypes in self.tl904_done:
                return
            self.tl904_done.add(combo.dtypes)
            again = self.call(combo, RunMode(reverse=True))
            if again.error is None and not same(again.outputs, res.outputs):
                self.log.add(
                    "TL904",
                    self.log.case_site(),
                    "two runs with the same inputs differ bitwise (second run executed programs "
                    f"in reverse order) {combo.short()}",
                    combo,
                    {},
                )
            return
        worst = 0.0
        differing: list[RunResult] = []
        for _ in range(max(self.repeats - 1, 0)):
            again = self.call(combo, RunMode())
            if again.error is None and not same(again.outputs, res.outputs):
                differing.append(again)
                worst = max(worst, spread(again.outputs, res.outputs))
        if not differing:
            return
        within = all(
            not mismatch(o2, o, res.outputs, self.case.rtol, self.case.atol)[0].any()
            for again in differing
            for o, o2 in zip(res.outputs, again.outputs, strict=False)
        )
        self.log.add(
            "TL904",
            self.log.case_site(),
            f"{len(differing)} of {self.repeats - 1} repeated runs with the same inputs differ "
            f"bitwise from the first (largest difference {worst:.3g}, "
            + ("within" if within else "beyond")
            + f" tolerance) {combo.short()}",
            combo,
            {"spread": worst, "within_tolerance": within},
            severity=Severity.INFO if within else None,
        )

    def judge_layout(self, combo: Combo, snap: dict[tuple[Any, ...], int]) -> str | None:
        """A non-contiguous layout failed where the contiguous one passes: one TL912."""
        bad = self.log.combo_codes & LAYOUT_CODES
        key = (tuple(combo.dims.items()), combo.dtypes)
        if not bad or key not in self.contiguous_clean:
            return None
        dropped = self.log.restore(snap)
        self.log.combo_codes -= LAYOUT_CODES
        names = self.layout_arguments(combo)
        related_codes = sorted({f.code for f in dropped} | bad)
        self.log.add(
            "TL912",
            self.log.case_site(),
            f"the wrapper accepts a {combo.layout} (non-contiguous) "
            + ", ".join(f"`{n}`" for n in names)
            + " but the kernel ignores its strides: "
            + "/".join(related_codes)
            + f" on that layout, clean when contiguous {combo.short()}; pass the strides to "
            "the kernel, call .contiguous(), or assert is_contiguous()",
            combo,
            {"arguments": names, "layout_codes": related_codes},
            dedup=combo.layout,
        )
        return None

    def layout_arguments(self, combo: Combo) -> list[str]:
        """The wrapper arguments whose layout alone breaks the output (one run per tensor)."""
        try:
            params = list(inspect.signature(self.case.fn).parameters)
        except (TypeError, ValueError):
            params = []
        tensors = [i for i, s in enumerate(self.case.inputs) if isinstance(s, TensorSpec)]
        ref, ref_args = self.reference(combo)
        names = []
        for i in tensors:
            one = Combo(combo.dims, combo.dtypes, combo.pattern, combo.layout, layout_arg=i)
            res = self.call(one)
            if res.error is not None or ref is None:
                continue
            if len(res.outputs) != len(ref) or any(
                o.shape != e.shape
                or mismatch(o, e, ref_args, self.case.rtol, self.case.atol)[0].any()
                for o, e in zip(res.outputs, ref, strict=False)
            ):
                names.append(params[i] if i < len(params) else f"argument {i}")
        return names or [params[i] if i < len(params) else f"argument {i}" for i in tensors]

    def fault(self, res: RunResult, combo: Combo) -> None:
        """The device is unusable: record the fault (and any device asserts), then stop."""
        for ev in res.events:
            self.log.event(ev, combo)
        if not any(ev["kind"] in ("assert", "overflow") for ev in res.events):
            self.outputs.report_error(res, combo)
        raise StickyError(str(res.error))


def runner_failure(case: Case, error: BaseException) -> dict[str, Any]:
    """The TL908 record for a runner that failed outside any combination."""
    return {
        "path": case.path,
        "line": case.line,
        "code": "TL908",
        "message": f"stress case `{case.name}` called sys.exit({error.code!r}); a case returns its "
        "outputs"
        if isinstance(error, SystemExit)
        else f"stress runner failed: {type(error).__name__}: {error}",
        "properties": {"case": case.name, "error": traceback.format_exc()[-2000:]},
    }
