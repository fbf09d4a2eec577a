"""The report half of the command line: the text style and colour, and where the report goes
(standard output, or a file written atomically)."""

from __future__ import annotations

import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import click

from triton_lint.config import Config, ConfigError, find_config
from triton_lint.dynamic.dynamic_report import DynamicReport
from triton_lint.reporters import REPORTERS
from triton_lint.reporters.full import FullOptions, render_full
from triton_lint.reporters.terminal import Palette, default_text_format, use_colour
from triton_lint.run import RunResult


class LintUsageError(click.UsageError):
    """Usage and configuration errors: exit code 2 with a one-line message."""

    exit_code = 2


class SetupError(click.ClickException):
    """A configuration file or an installation that cannot be used: exit code 2, the message
    without the usage banner (the command line was fine)."""

    exit_code = 2


@dataclass(frozen=True)
class TextStyle:
    """`--output-format`, `--color` and `--show-fixes` as given (None: not given)."""

    output_format: str | None = None
    color: str = "auto"
    show_fixes: bool = False


def _to_terminal(output: Path | None) -> bool:
    if output is not None:
        return False
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):  # no standard output, or a closed one
        return False


def text_format(
    style: TextStyle, config: Config | None, isolated: bool, output: Path | None
) -> str:
    """The option, else ``output-format`` of the explicit or the working directory's config,
    else full for people and concise for programs (`reporters.terminal`)."""
    chosen = style.output_format or (config.output_format if config is not None else None)
    if chosen is None and not isolated and config is None:
        try:
            chosen = find_config(Path.cwd().resolve()).output_format
        except ConfigError as error:
            raise SetupError(str(error)) from error
    return chosen or default_text_format(_to_terminal(output), os.environ)


def report(
    result: RunResult,
    output_format: str,
    output: Path | None,
    statistics: bool,
    text_style: str,
    style: TextStyle,
) -> None:
    """Write the report in ``output_format`` (``text_style`` shapes the text format)."""
    if output_format == "markdown" and result.dynamic and result.dynamic.performance:
        _plot(result.dynamic, output)
    if output_format == "text" and text_style == "full":
        paint = Palette(use_colour(style.color, _to_terminal(output), os.environ))
        text = render_full(result, statistics, FullOptions(paint, style.show_fixes))
    else:
        text = REPORTERS[output_format](result, statistics)
    emit(text, output)


def _plot(report: DynamicReport, output: Path | None) -> None:
    """A Markdown report written to a file gets the timings' plot beside it."""
    from triton_lint.reporters.perf_plot import attach_plot

    try:
        attach_plot(report, output)
    except OSError as error:
        raise LintUsageError(f"cannot write {error.filename}: {error.strerror or error}") from error


def emit(text: str, output: Path | None) -> None:
    if output is None:
        click.echo(text, nl=False, color=True)  # the text is painted only where it should be
        return
    write_output(output, text)


def write_output(output: Path, text: str) -> None:
    try:
        _write_atomically(output, text)
    except OSError as error:
        raise LintUsageError(f"cannot write {output}: {error.strerror or error}") from error


def _write_atomically(path: Path, text: str) -> None:
    directory = path.resolve().parent
    handle, temp = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
