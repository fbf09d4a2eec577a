"""Results of dynamic runs that reports show besides findings: the stress matrix and timings.

The dynamic engine fills `RunResult.dynamic`; static-only runs leave it None and reports skip
these sections. Plain data, no torch/triton.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


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
    """A timing of a stress case's wrapper against its PyTorch reference at one size."""

    kernel: str
    size: str
    triton_ms: float
    torch_ms: float | None = None
    bandwidth_gbs: float | None = None  # achieved
    peak_gbs: float | None = None  # the device's peak memory bandwidth
    compile_ms: float | None = None  # torch.compile of the reference
    tflops: float | None = None  # achieved, when the case counts its FLOPs
    case: str = ""
    elements: int | None = None  # elements of all inputs together (the plot's x axis)

    @property
    def speedup(self) -> float | None:
        """Over the PyTorch reference (above 1: the Triton wrapper is faster)."""
        if self.torch_ms is None or self.triton_ms <= 0:
            return None
        return self.torch_ms / self.triton_ms

    @property
    def speedup_compiled(self) -> float | None:
        """Over `torch.compile` of the reference."""
        if self.compile_ms is None or self.triton_ms <= 0:
            return None
        return self.compile_ms / self.triton_ms

    @property
    def percent_of_peak(self) -> float | None:
        if self.bandwidth_gbs is None or not self.peak_gbs:
            return None
        return 100.0 * self.bandwidth_gbs / self.peak_gbs

    def to_dict(self) -> dict[str, object]:
        """The numbers as JSON/SARIF properties (derived ratios included)."""
        return {
            "case": self.case,
            "kernel": self.kernel,
            "size": self.size,
            "elements": self.elements,
            "tritonMs": self.triton_ms,
            "torchMs": self.torch_ms,
            "compileMs": self.compile_ms,
            "speedup": self.speedup,
            "speedupCompiled": self.speedup_compiled,
            "bandwidthGBs": self.bandwidth_gbs,
            "peakGBs": self.peak_gbs,
            "percentOfPeak": self.percent_of_peak,
            "tflops": self.tflops,
        }


@dataclass
class DynamicReport:
    device: str | None = None
    stress: list[StressCell] = field(default_factory=list)
    performance: list[PerfRow] = field(default_factory=list)
    #: Shown instead of the performance table when there are no timings (e.g. CPU runs), or
    #: under it (cases not timed).
    performance_note: str | None = None
    #: The PNG plot of the timings, relative to the Markdown report (written beside it).
    performance_plot: str | None = None
    #: `--compile-only`: one row per kernel x config x architecture (see
    #: `triton_lint.compile.findings`), and the architectures compiled for.
    compiled: list[dict[str, Any]] = field(default_factory=list)
    compile_archs: list[str] = field(default_factory=list)
