"""Results of dynamic runs that reports show besides findings: the stress matrix and timings.

The dynamic engine fills `RunResult.dynamic`; static-only runs leave it None and reports skip
these sections. Plain data, no torch/triton.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class StressCell:
    """One stress case of one kernel under one input variant (shape/dtype/config).

    The dynamic engine fills `variant` with sizes, dtypes and layout and `pattern` with the
    value pattern; the Markdown report then has one column per pattern.
    """

    kernel: str  # the kernel(s) the case launched ("" when none ran)
    case: str
    variant: str  # e.g. "n=1023 fp16"
    status: str  # "pass", "fail", "error", "timeout" or "skip"
    codes: tuple[str, ...] = ()  # dynamic codes found in this cell
    pattern: str = ""  # the input value pattern ("normal", "zeros", ...), when there is one


@dataclass(frozen=True)
class PerfRow:
    """A timing of a kernel against its PyTorch reference at one size."""

    kernel: str
    size: str
    triton_ms: float
    torch_ms: float | None = None
    bandwidth_gbs: float | None = None  # achieved
    peak_gbs: float | None = None  # the device's peak memory bandwidth

    @property
    def speedup(self) -> float | None:
        if self.torch_ms is None or self.triton_ms <= 0:
            return None
        return self.torch_ms / self.triton_ms

    @property
    def percent_of_peak(self) -> float | None:
        if self.bandwidth_gbs is None or not self.peak_gbs:
            return None
        return 100.0 * self.bandwidth_gbs / self.peak_gbs


@dataclass
class DynamicReport:
    device: str | None = None
    stress: list[StressCell] = field(default_factory=list)
    performance: list[PerfRow] = field(default_factory=list)
    #: Shown instead of the performance table when there are no timings (e.g. CPU runs).
    performance_note: str | None = None
