"""The ``triton-lint`` command line: exit codes, options and formats as ruff users expect.

Exit codes: 0 no findings, 1 findings, 2 usage, configuration or internal error.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from triton_lint import __version__
from triton_lint.baseline import BaselineError, apply_baseline, load_baseline, render_baseline
from triton_lint.cli_report import (
    LintUsageError,
    SetupError,
    TextStyle,
    emit,
    report,
    text_format,
    write_output,
)
from triton_lint.compile.targets import ArchError
from triton_lint.config import (
    DEVICES,
    FAIL_ON,
    Config,
    ConfigError,
    cache_dir_for,
    config_for_directory,
    load_config_file,
)
from triton_lint.docs import render_code
from triton_lint.dynamic.codes import CODES, DynamicCode
from triton_lint.dynamic.compute_sanitizer import SanitizerUnavailable
from triton_lint.dynamic.devices import DeviceError
from triton_lint.dynamic.dynamic_run import (
    DynamicRun,
    compile_archs,
    dynamic_device,
    run_compile,
    run_dynamic,
)
from triton_lint.fixes import unified_diff
from triton_lint.reporters import REPORTERS
from triton_lint.reporters.common import display_path
from triton_lint.reporters.terminal import COLOR_CHOICES, TEXT_FORMATS
from triton_lint.rules import all_rules
from triton_lint.rules.base import Rule
from triton_lint.run import RunOptions, RunResult, fork_note, lint_paths, lint_stdin
from triton_lint.selection import Layer, SelectionError, expand
from triton_lint.target import TargetVersionError, minor


class DefaultGroup(click.Group):
    """``triton-lint PATHS`` means ``triton-lint check PATHS``; ``rule`` is a subcommand."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or (
            args[0] not in self.commands and args[0] not in ("--help", "-h", "--version")
        ):
            args = ["check", *args]
        return super().parse_args(ctx, args)


def _split(values: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(code.strip() for value in values for code in value.split(",") if code.strip())


@click.group(cls=DefaultGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="triton-lint")
def cli() -> None:
    """Lint Triton GPU kernels: missing masks, overflow, races, numerics, compile errors."""


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--select", multiple=True, help="Codes or prefixes to enable (replaces the defaults); `ALL`."
)
@click.option("--extend-select", multiple=True, help="Codes or prefixes to enable in addition.")
@click.option("--ignore", multiple=True, help="Codes or prefixes to disable.")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(list(REPORTERS)),
    default="text",
    show_default=True,
    help="Output format.",
)
@click.option(
    "--output-format",
    "text_style",
    type=click.Choice(TEXT_FORMATS),
    default=None,
    help="Style of `--format text`: source snippets, or one line a finding (default: full "
    "on a terminal, in CI and pre-commit, else concise; config key `output-format`).",
)
@click.option(
    "--color",
    type=click.Choice(COLOR_CHOICES),
    default="auto",
    show_default=True,
    help="Colour the full format (auto: on a terminal; honours NO_COLOR and FORCE_COLOR).",
)
@click.option("--show-fixes", is_flag=True, help="Full format: show each finding's fix as a diff.")
@click.option("--fix", is_flag=True, help="Apply safe fixes (rewrites files).")
@click.option("--unsafe-fixes", is_flag=True, help="With --fix or --diff, also apply unsafe fixes.")
@click.option("--diff", is_flag=True, help="Print the fixes as a unified diff; write nothing.")
@click.option(
    "--baseline",
    "baseline_file",
    type=click.Path(path_type=Path),
    help="Report only findings that are not in this baseline file.",
)
@click.option(
    "--write-baseline",
    type=click.Path(path_type=Path),
    help="Record the current findings in FILE as the baseline, and exit 0.",
)
@click.option("--output", "-o", type=click.Path(path_type=Path), help="Write the report to FILE.")
@click.option("--statistics", is_flag=True, help="Print the number of findings per code instead.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option(
    "--fail-on",
    type=click.Choice(FAIL_ON),
    help="Exit 1 only for findings of this severity or worse (default: info, any finding).",
)
@click.option(
    "--config", "config_file", type=click.Path(path_type=Path), help="Use this configuration file."
)
@click.option("--isolated", is_flag=True, help="Ignore all configuration files.")
@click.option(
    "--stdin-filename", help="The path to report (and configure) for input read from `-`."
)
@click.option(
    "--target-version", help="Triton version to check against, e.g. 3.3 (overrides config)."
)
@click.option(
    "--dynamic",
    is_flag=True,
    help="Also run the registered stress cases under Triton's interpreter (needs torch, triton).",
)
@click.option(
    "--dynamic-timeout",
    "--timeout",
    type=click.FloatRange(min=1),
    default=300.0,
    show_default=True,
    help="Seconds each stress case may run before it is reported as hung.",
)
@click.option(
    "--device",
    type=click.Choice(DEVICES),
    default=None,
    help="Where --dynamic runs the cases: natively on a CUDA GPU, or under the interpreter "
    "(default `auto`: the GPU when torch sees one; config key `device`).",
)
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=1),
    default=None,
    help="Files linted in parallel (default: one per core) and, with --dynamic, stress-case "
    "children (default: half the cores, <= 8 per GPU; 1 on the interpreter); with "
    "--compile-only, compile children (default: one per core).",
)
@click.option(
    "--no-cache",
    is_flag=True,
    help="Lint every file again instead of reusing the results cache.",
)
@click.option(
    "--cache-dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Where the results cache lives (default `.triton_lint_cache` in the project root; "
    "config key `cache-dir`, environment variable TRITON_LINT_CACHE_DIR).",
)
@click.option(
    "--repeats",
    type=click.IntRange(min=1),
    default=3,
    show_default=True,
    help="GPU: runs of every combination compared bitwise for nondeterminism (TL904).",
)
@click.option(
    "--sanitizer",
    type=click.Choice(["memcheck", "initcheck", "racecheck"]),
    default=None,
    help="GPU: re-run the failing cases (all with --sanitize-all) under NVIDIA "
    "compute-sanitizer with this tool and report its records.",
)
@click.option(
    "--sanitize-all", is_flag=True, help="With --sanitizer: re-run every case, not only failing."
)
@click.option(
    "--no-redzones",
    is_flag=True,
    help="GPU: run without guard regions around tensors (no red-zone TL901/TL905 probes).",
)
@click.option(
    "--bench",
    is_flag=True,
    help="GPU: time the cases that pass against their PyTorch reference and torch.compile "
    "(the report's performance table; TL914 when slower than both).",
)
@click.option(
    "--large",
    is_flag=True,
    help="GPU: also run every case at sizes past 2**31 elements where memory allows "
    "(int32 offset overflows become TL910/TL901/TL903 witnesses).",
)
@click.option(
    "--compile-only",
    is_flag=True,
    help="Run the stress cases' wrappers without launching and compile every launch (every "
    "autotune config) for each --arch on the CPU: shared memory, spills, compile failures.",
)
@click.option(
    "--arch",
    default=None,
    help="Architectures for --compile-only, e.g. sm_80,sm_86,sm_89,sm_90 (config key `arch`; "
    "default: those the installed Triton supports from Ampere on).",
)
@click.option("--quiet", "-q", is_flag=True, help="No --dynamic progress line on stderr.")
def check(
    paths: tuple[Path, ...],
    select: tuple[str, ...],
    extend_select: tuple[str, ...],
    ignore: tuple[str, ...],
    output_format: str,
    text_style: str | None,
    color: str,
    show_fixes: bool,
    output: Path | None,
    statistics: bool,
    exit_zero: bool,
    fail_on: str | None,
    config_file: Path | None,
    isolated: bool,
    stdin_filename: str | None,
    target_version: str | None,
    fix: bool,
    unsafe_fixes: bool,
    diff: bool,
    baseline_file: Path | None,
    write_baseline: Path | None,
    dynamic: bool,
    dynamic_timeout: float,
    device: str | None,
    jobs: int | None,
    no_cache: bool,
    cache_dir: Path | None,
    repeats: int,
    sanitizer: str | None,
    sanitize_all: bool,
    no_redzones: bool,
    bench: bool,
    large: bool,
    compile_only: bool,
    arch: str | None,
    quiet: bool,
) -> None:
    """Lint PATHS (files or directories, default `.`; `-` reads standard input)."""
    layer = Layer(
        select=_split(select) if select else None,
        extend_select=_split(extend_select),
        ignore=_split(ignore),
    )
    try:
        for selectors in (layer.select or (), layer.extend_select, layer.ignore):
            expand(selectors)
        if target_version is not None:
            minor(target_version)
        config = load_config_file(config_file) if config_file is not None and not isolated else None
        from_stdin = list(paths) == [Path("-")]
        if fix and from_stdin:
            raise LintUsageError("--fix cannot rewrite standard input; use --diff")
        if unsafe_fixes and not (fix or diff):
            raise LintUsageError("--unsafe-fixes needs --fix or --diff")
        baseline = load_baseline(baseline_file) if baseline_file is not None else None
        threshold = _fail_on(fail_on, config, isolated)
        options = RunOptions(
            cli_layer=layer,
            config=config,
            isolated=isolated,
            target_version=target_version,
            fix="diff" if diff else "fix" if fix else None,
            unsafe_fixes=unsafe_fixes,
            jobs=jobs,
            cache_dir=None if no_cache else cache_dir_for(cache_dir, config, isolated),
        )
        if from_stdin:
            result = lint_stdin(stdin_filename or "-", options)
        else:
            result = lint_paths(list(paths) or [Path(".")], options)
    except ConfigError as error:
        raise SetupError(str(error)) from error
    except (SelectionError, TargetVersionError, BaselineError) as error:
        raise LintUsageError(str(error)) from error
    if (sanitizer or device or bench or large) and not dynamic:
        raise LintUsageError("--device, --sanitizer, --bench and --large apply to --dynamic runs")
    if arch is not None and not compile_only:
        raise LintUsageError("--arch applies to --compile-only runs")
    if dynamic and compile_only:
        raise LintUsageError("--compile-only replaces --dynamic's launches; give one of them")
    if (dynamic or compile_only) and not from_stdin:
        try:
            if compile_only:
                archs = compile_archs(arch, config, isolated)
            else:
                native = "bench" if bench else "large" if large else None
                resolved = dynamic_device(
                    device, config, isolated, sanitizer=sanitizer, native=native
                )
        except ConfigError as error:
            raise SetupError(str(error)) from error
        except (DeviceError, SanitizerUnavailable, ArchError) as error:
            raise LintUsageError(str(error)) from error
        where = list(paths) or [Path(".")]
        if compile_only:
            run_compile(
                result,
                where,
                archs,
                jobs=jobs,
                timeout=dynamic_timeout,
                cache_dir=options.cache_dir,
            )
        else:
            run = DynamicRun(
                resolved,
                dynamic_timeout,
                jobs,
                repeats,
                not no_redzones,
                sanitizer=sanitizer,
                sanitize_all=sanitize_all,
                large=large,
                bench=bench,
                progress=not quiet,
            )
            run_dynamic(result, where, run)
    if diff:
        _report_diff(result, output)
        _exit_on_crashes(result)
        sys.exit(1 if result.fixed and not exit_zero else 0)
    if write_baseline is not None:
        _messages(result)
        write_output(write_baseline, render_baseline(result))
        click.echo(
            f"Wrote a baseline of {len(result.findings)} findings to {write_baseline}.", err=True
        )
        _exit_on_crashes(result)
        sys.exit(0)
    if baseline is not None:
        apply_baseline(result, baseline)
    _messages(result)
    style = TextStyle(text_style, color, show_fixes)
    report(
        result,
        output_format,
        output,
        statistics,
        text_format(style, config, isolated, output),
        style,
    )
    _exit_on_crashes(result)
    failing = any(_SEVERITY_RANK[f.severity.value] <= threshold for f in result.findings)
    sys.exit(1 if failing and not exit_zero else 0)


#: Severities from the worst: `--fail-on warning` fails on ranks 0 and 1.
_SEVERITY_RANK = {name: rank for rank, name in enumerate(FAIL_ON)}


def _fail_on(option: str | None, config: Config | None, isolated: bool) -> int:
    """The rank of the lowest severity that fails the run: the option, else ``fail-on`` in
    the explicit config or the working directory's, else info (every finding fails)."""
    chosen = option or (config.fail_on if config is not None else None)
    if chosen is None and not isolated and config is None:
        chosen = config_for_directory(Path.cwd().resolve()).fail_on
    return _SEVERITY_RANK[chosen or "info"]


def _exit_on_crashes(result: RunResult) -> None:
    if result.crashes:
        for crash in result.crashes:
            click.echo(f"error: {crash}", err=True)
        click.echo(
            "error: internal error; please report it with the file that triggered it", err=True
        )
        sys.exit(2)


def _messages(result: RunResult) -> None:
    for path, reason in result.unreadable:
        click.echo(f"error: {path}: {reason}", err=True)
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)
    if result.fork_files:
        click.echo(f"note: {fork_note(result.fork_files)}", err=True)


def _report_diff(result: RunResult, output: Path | None) -> None:
    _messages(result)
    text = "".join(unified_diff(display_path(o.path), o.original, o.fixed) for o in result.fixed)
    fixes = sum(o.applied for o in result.fixed)
    click.echo(
        f"Would fix {fixes} finding{'s' if fixes != 1 else ''} "
        f"in {len(result.fixed)} file{'s' if len(result.fixed) != 1 else ''}.",
        err=True,
    )
    emit(text, output)


@cli.command()
@click.argument("code", required=False)
@click.option("--all", "show_all", is_flag=True, help="Print the documentation of every rule.")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
)
def rule(code: str | None, show_all: bool, output_format: str) -> None:
    """Print the documentation of rule CODE (or of every rule with --all)."""
    rules: list[Rule | DynamicCode] = [*all_rules(), *CODES.values()]
    if not show_all:
        if code is None:
            raise LintUsageError("give a rule code (e.g. `triton-lint rule TL101`) or --all")
        rules = [r for r in rules if r.code == code.upper() or r.name == code]
        if not rules:
            raise LintUsageError(f"unknown rule `{code}` (see `triton-lint rule --all`)")
    if output_format == "json":
        data = [
            {
                "code": r.code,
                "name": r.name,
                "category": r.category.value,
                "severity": r.severity.value,
                "default_enabled": getattr(r, "default_enabled", True),
                "kind": "static" if isinstance(r, Rule) else "dynamic",
                "summary": r.summary,
                "rationale": r.rationale,
                "fix": r.fix,
            }
            for r in rules
        ]
        click.echo(json.dumps(data if show_all else data[0], indent=2))
        return
    click.echo("\n".join(render_code(r) for r in rules), nl=False)


@cli.command()
@click.option("--stdio", is_flag=True, help="Talk over stdin/stdout (the default and only way).")
def server(stdio: bool) -> None:
    """Run the language server (LSP over stdio) for editors; needs the [lsp] extra."""
    try:
        from triton_lint.lsp.server import serve
    except ImportError as error:
        raise SetupError(
            f"the language server needs pygls ({error}); install it with "
            "`pip install 'triton-lint[lsp]'`"
        ) from error
    serve()


def main() -> None:
    """Console entry point: any unexpected exception is an internal error (exit 2), never 1."""
    try:
        cli.main(prog_name="triton-lint")
    except SystemExit:
        raise
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(130)
    except Exception as error:
        click.echo(f"error: internal error: {type(error).__name__}: {error}", err=True)
        click.echo("please report this at the project's issue tracker", err=True)
        sys.exit(2)
