"""The `--bench` plot: time and bandwidth against size, one line per case (optional extra).

matplotlib is the `[plot]` extra and is imported only here, when a Markdown report with timings
is written to a file; without it the report says how to get the plot.
"""

from __future__ import annotations

from pathlib import Path

from triton_lint.dynamic.dynamic_report import DynamicReport, PerfRow

PLOT_EXTRA_NOTE = "Install `triton-lint[plot]` (matplotlib) for a plot of these timings."


def plot_path(report_path: Path) -> Path:
    """Where the plot of a report goes: beside it, `report.md` -> `report.perf.png`."""
    return report_path.with_name(report_path.stem + ".perf.png")


def write_plot(rows: list[PerfRow], path: Path) -> bool:
    """Write the PNG (atomically); False when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    cases: dict[str, list[PerfRow]] = {}
    for row in rows:
        cases.setdefault(row.case or row.kernel, []).append(row)
    fig, (time_ax, bw_ax) = plt.subplots(1, 2, figsize=(11, 4.5), constrained_layout=True)
    styles = (("triton_ms", "o-", "Triton"), ("torch_ms", "s--", "PyTorch"))
    styles += (("compile_ms", "^:", "torch.compile"),)
    for name, case_rows in cases.items():
        case_rows = sorted(case_rows, key=lambda r: r.elements or 0)
        x = [r.elements or i + 1 for i, r in enumerate(case_rows)]
        bandwidth = [r.bandwidth_gbs for r in case_rows]
        (line,) = bw_ax.plot(x, bandwidth, "o-", label=name)
        for key, style, _label in styles:
            values = [getattr(r, key) for r in case_rows]
            if any(v is not None for v in values):
                time_ax.plot(x, values, style, color=line.get_color())
    for _key, style, label in styles:  # one legend entry per line style, in grey
        time_ax.plot([], [], style, color="grey", label=label)
    peaks = {r.peak_gbs for r in rows if r.peak_gbs}
    if len(peaks) == 1:
        bw_ax.axhline(peaks.pop(), color="grey", linestyle="--", label="peak")
    for ax, ylabel in ((time_ax, "time per call (ms, log)"), (bw_ax, "achieved GB/s")):
        ax.set_xlabel("elements of the inputs (log)")
        ax.set_xscale("log")
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
    time_ax.set_yscale("log")
    time_ax.legend(fontsize=8, loc="upper left")
    bw_ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.suptitle("triton-lint --bench")
    tmp = path.with_name(path.name + ".tmp")
    fig.savefig(tmp, format="png", dpi=110)
    plt.close(fig)
    tmp.replace(path)
    return True


def attach_plot(report: DynamicReport, output: Path | None) -> None:
    """Write the plot beside the Markdown report `output` and link it from `report`; without a
    file (or matplotlib) the performance note says how to get one. OSError names the file."""
    if output is None:
        hint = "Write the report to a file (`-o report.md`) for a plot of these timings."
    else:
        path = plot_path(output)
        try:
            written = write_plot(report.performance, path)
        except OSError as error:
            error.filename = error.filename or str(path)
            raise
        if written:
            report.performance_plot = path.name
            return
        hint = PLOT_EXTRA_NOTE
    report.performance_note = " ".join(filter(None, [report.performance_note, hint]))
