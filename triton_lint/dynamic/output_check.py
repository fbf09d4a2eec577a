"""The checks of one run's outputs against the reference, and the findings a failed run gives.

TL903 for values beyond tolerance (at the worst element, with the program that wrote it),
TL906 for elements of a ``torch.empty*`` output the kernel never wrote, TL902 for non-finite
values from finite inputs (with the op that produced the first one, where the backend traces
ops), TL908 for a run that raised.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from triton_lint.dynamic.backend import LIB_DIRS, Backend, RunMode, RunResult
from triton_lint.dynamic.case_findings import FindingLog
from triton_lint.dynamic.compare import (
    args_finite,
    as_float64,
    element,
    fill_value,
    first_index,
    mismatch,
    worst_index,
)
from triton_lint.dynamic.inputs import NONFINITE_PATTERNS, Combo
from triton_lint.stress import Case


class OutputCheck:
    """Compares a case's outputs with its reference and reports what differs."""

    def __init__(
        self,
        case: Case,
        log: FindingLog,
        backend: Backend,
        call: Callable[[Combo, RunMode], RunResult],
    ) -> None:
        self.case = case
        self.log = log
        self.backend = backend
        self.call = call

    def compare(
        self, res: RunResult, ref: list[torch.Tensor], ref_args: list[Any], combo: Combo
    ) -> None:
        site = self.log.case_site()
        if len(ref) != len(res.outputs):
            self.log.add(
                "TL903",
                site,
                f"wrapper returned {len(res.outputs)} tensor(s), reference {len(ref)} "
                f"{combo.short()}",
                combo,
                {},
            )
            return
        # Near-max inputs overflow legitimately: once the case has a mismatch, an overflow there is
        # a consequence of the wrong values (TL903), not a numerics bug of its own.
        inputs_finite = (
            combo.pattern not in NONFINITE_PATTERNS
            and not (combo.pattern == "near_max" and self.log.has("TL903"))
            and combo.layout == "contiguous"  # gaps of sliced inputs hold NaN on purpose
        )
        for k, (out, exp) in enumerate(zip(res.outputs, ref, strict=False)):
            if tuple(out.shape) != tuple(exp.shape):
                self.log.add(
                    "TL903",
                    site,
                    f"output {k} has shape {tuple(out.shape)}, reference {tuple(exp.shape)} "
                    f"{combo.short()}",
                    combo,
                    {"output": k},
                )
                continue
            bad, err = mismatch(out, exp, ref_args, self.case.rtol, self.case.atol)
            if not bad.any():
                continue
            o, e = as_float64(out), as_float64(exp.to(out.device))
            # TL906: elements equal to the empty-fill value in two runs with different fills.
            fill = fill_value(out.dtype, False)
            filled = bad & (torch.isnan(o) if out.dtype.is_floating_point else (o == fill))
            if fill is not None and filled.any():
                alt = self.call(combo, RunMode(alt_fill=True))
                if alt.error is None and k < len(alt.outputs):
                    ao = as_float64(alt.outputs[k]).to(o.device)
                    # The alternative fill as the output's dtype holds it (1357 rounds in fp16).
                    alt_fill = torch.tensor(
                        fill_value(out.dtype, True), dtype=out.dtype, device="cpu"
                    )
                    alt_fill = alt_fill.item()
                    unwritten = filled & (ao == alt_fill)
                    if unwritten.any():
                        self._report_unwritten(res, out, unwritten, k, combo)
                        bad = bad & ~unwritten
                        if not bad.any():
                            continue
            nonfinite = bad & ~torch.isfinite(o) & torch.isfinite(e)
            if inputs_finite and nonfinite.any() and args_finite(ref_args):
                self._report_nonfinite(res, combo, k, nonfinite, o, e)
                continue
            self._report_mismatch(res, combo, k, bad, err, o, e)

    # -- reporting -----------------------------------------------------------------------

    def report_error(self, res: RunResult, combo: Combo) -> None:
        err = res.error
        site = self.log.case_site()
        for fs in reversed(res.tb):
            if not fs.filename.startswith(LIB_DIRS) and not fs.filename.startswith("<"):
                site = (fs.filename, fs.lineno or 1, fs.name)
                break
        cause = err.__cause__ if err is not None and err.__cause__ is not None else err
        msg = f"case raised {type(err).__name__}: {str(err)[:300]} {combo.short()}"
        self.log.add(
            "TL908", site, msg, combo, {"error": repr(cause)[:500]}, dedup=type(err).__name__
        )

    def _report_unwritten(
        self, res: RunResult, out: torch.Tensor, unwritten: torch.Tensor, k: int, combo: Combo
    ) -> None:
        idx = first_index(unwritten)
        site = (res.output_sites[k] if k < len(res.output_sites) else None) or self.log.case_site()
        self.log.add(
            "TL906",
            site,
            f"{int(unwritten.sum())} of {out.numel()} element(s) of output {k} allocated here "
            "with torch.empty* "
            f"were never written by the kernel (first at index {idx}) {combo.short()}",
            combo,
            {"output": k, "index": list(idx), "unwritten": int(unwritten.sum())},
        )

    def _report_nonfinite(
        self,
        res: RunResult,
        combo: Combo,
        k: int,
        nonfinite: torch.Tensor,
        o: torch.Tensor,
        e: torch.Tensor,
    ) -> None:
        idx = first_index(nonfinite)
        got, expected = element(o, idx), element(e, idx)
        writer = self.backend.writer(lambda mode: self.call(combo, mode), res, k, idx)
        first, pid = writer.first_nonfinite, writer.pid
        if first is not None:
            site = tuple(first["site"])
            where = f"`{first['op']}` produced the first non-finite value (program " + (
                f"{tuple(first['pid'])})"
            )
        else:
            site = writer.site or self.log.case_site()
            where = (
                "no traced op produced it from finite inputs (likely a reduction overflowed)"
                if self.backend.device == "interpreter"
                else "stored here (native runs do not trace which op produced it)"
            )
        self.log.add(
            "TL902",
            site,  # type: ignore[arg-type]
            f"output {k} has {int(nonfinite.sum())} non-finite element(s) (first {got} at "
            f"index {idx}, reference {expected}) with finite inputs; {where} {combo.short()}",
            combo,
            {"output": k, "index": list(idx), "op": first["op"] if first else None, "pid": pid},
        )

    def _report_mismatch(
        self,
        res: RunResult,
        combo: Combo,
        k: int,
        bad: torch.Tensor,
        err: torch.Tensor,
        o: torch.Tensor,
        e: torch.Tensor,
    ) -> None:
        idx = worst_index(bad, err)
        got, expected = element(o, idx), element(e, idx)
        writer = self.backend.writer(lambda mode: self.call(combo, mode), res, k, idx)
        site, pid = writer.site or self.log.case_site(), writer.pid
        self.log.add(
            "TL903",
            site,
            f"output {k}: {int(bad.sum())} of {bad.numel()} element(s) beyond tolerance; worst at "
            f"index {idx}: got {got}, expected {expected} (written by program "
            f"{tuple(pid) if pid else '?'}) {combo.short()}",
            combo,
            {
                "output": k,
                "index": list(idx),
                "got": float(got),
                "expected": float(expected),
                "pid": pid,
            },
        )
