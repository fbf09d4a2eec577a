"""``[tool.triton-lint]`` configuration: discovery, parsing and validation."""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from triton_lint.cache import DEFAULT_DIR as DEFAULT_CACHE_DIR
from triton_lint.selection import SelectionError, expand

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

_VERSION = re.compile(r"^\d+\.\d+(\.\d+)?$")
_KEYS = {
    "select",
    "ignore",
    "extend-select",
    "per-file-ignores",
    "exclude",
    "target-version",
    "fork-backends",
    "device",
    "fail-on",
    "cache-dir",
    "output-format",
    "arch",
}
#: `device`: where `--dynamic` runs stress cases (the `--device` option overrides it).
DEVICES = ("auto", "cuda", "interpreter")
#: `fail-on`: the lowest severity that makes a run exit 1 (the `--fail-on` option overrides it).
FAIL_ON = ("error", "warning", "info")
#: `output-format`: the style of the text report (the `--output-format` option overrides it).
OUTPUT_FORMATS = ("full", "concise")
#: Words (directory and file names split on ``_``/``-``) naming vendor backends that ship their
#: own Triton fork: code under them is written against the fork's API, not upstream Triton's.
DEFAULT_FORK_BACKENDS = (
    "ascend",
    "npu",
    "kunlunxin",
    "mthreads",
    "musa",
    "cambricon",
    "mlu",
    "iluvatar",
    "corex",
    "tsingmicro",
    "enflame",
    "gcu",
    "hygon",
    "dcu",
    "metax",
    "maca",
    "aipu",
    "xpu",
)


class ConfigError(Exception):
    """A configuration file that cannot be used; the CLI exits with code 2."""


@dataclass(frozen=True)
class Config:
    """Settings of one configuration file (or the defaults)."""

    root: Path  # the directory relative paths and globs are resolved against
    source: Path | None = None
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] = ()
    target_version: str | None = None
    fork_backends: tuple[str, ...] = DEFAULT_FORK_BACKENDS
    device: str | None = None
    fail_on: str | None = None
    cache_dir: str | None = None  # relative to `root`
    output_format: str | None = None
    #: `arch`: the architectures `--compile-only` compiles for (the `--arch` option overrides it).
    arch: tuple[str, ...] | None = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)


def _codes(source: Path, key: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{source}: `{key}` must be a list of rule codes")
    codes = tuple(v.strip() for v in value if v.strip())
    try:
        expand(codes)
    except SelectionError as error:
        raise ConfigError(f"{source}: `{key}`: {error}") from error
    return codes


def _globs(source: Path, key: str, patterns: list[str]) -> tuple[str, ...]:
    """``patterns``, checked: fnmatch would take a ``[`` it cannot close as a literal and
    silently match nothing the author meant."""
    for pattern in patterns:
        opened = pattern.rfind("[")
        if not pattern.strip() or (opened >= 0 and "]" not in pattern[opened + 2 :]):
            problem = "an empty pattern" if not pattern.strip() else "an unclosed `[`"
            raise ConfigError(f"{source}: `{key}`: invalid glob `{pattern}` ({problem})")
    return tuple(patterns)


def parse_table(table: dict[str, Any], source: Path) -> Config:
    """Validate a ``[tool.triton-lint]`` table."""
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        raise ConfigError(
            f"{source}: unknown option(s) in [tool.triton-lint]: {', '.join(unknown)} "
            f"(known: {', '.join(sorted(_KEYS))})"
        )
    per_file = table.get("per-file-ignores", {})
    if not isinstance(per_file, dict):
        raise ConfigError(f"{source}: `per-file-ignores` must be a table of glob = [codes]")
    exclude = table.get("exclude", [])
    if not isinstance(exclude, list) or not all(isinstance(e, str) for e in exclude):
        raise ConfigError(f"{source}: `exclude` must be a list of glob patterns")
    target = table.get("target-version")
    if target is not None and (not isinstance(target, str) or not _VERSION.match(target)):
        raise ConfigError(f'{source}: `target-version` must be a string such as "3.3"')
    forks = table.get("fork-backends", list(DEFAULT_FORK_BACKENDS))
    if not isinstance(forks, list) or not all(isinstance(f, str) for f in forks):
        raise ConfigError(f"{source}: `fork-backends` must be a list of directory names")
    device = table.get("device")
    if device is not None and device not in DEVICES:
        raise ConfigError(f"{source}: `device` must be one of {', '.join(map(repr, DEVICES))}")
    fail_on = table.get("fail-on")
    if fail_on is not None and fail_on not in FAIL_ON:
        raise ConfigError(f"{source}: `fail-on` must be one of {', '.join(map(repr, FAIL_ON))}")
    output_format = table.get("output-format")
    if output_format is not None and output_format not in OUTPUT_FORMATS:
        raise ConfigError(
            f"{source}: `output-format` must be one of {', '.join(map(repr, OUTPUT_FORMATS))}"
        )
    cache_dir = table.get("cache-dir")
    if cache_dir is not None and (not isinstance(cache_dir, str) or not cache_dir.strip()):
        raise ConfigError(f"{source}: `cache-dir` must be a directory path")
    arch = table.get("arch")
    if isinstance(arch, str):
        arch = [a for a in arch.split(",") if a.strip()]
    if arch is not None and (
        not isinstance(arch, list) or not all(isinstance(a, str) for a in arch)
    ):
        raise ConfigError(
            f'{source}: `arch` must be a list of architectures such as ["sm_80", "sm_90"]'
        )
    return Config(
        root=source.parent,
        arch=tuple(a.strip() for a in arch) if arch is not None else None,
        cache_dir=cache_dir,
        device=device,
        fail_on=fail_on,
        output_format=output_format,
        source=source,
        select=_codes(source, "select", table["select"]) if "select" in table else None,
        ignore=_codes(source, "ignore", table.get("ignore", [])),
        extend_select=_codes(source, "extend-select", table.get("extend-select", [])),
        per_file_ignores=tuple(
            (glob, _codes(source, f"per-file-ignores.{glob}", codes))
            for glob, codes in zip(
                _globs(source, "per-file-ignores", list(per_file)), per_file.values(), strict=True
            )
        ),
        exclude=_globs(source, "exclude", exclude),
        target_version=target,
        fork_backends=tuple(f.strip().lower() for f in forks if f.strip()),
    )


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except OSError as error:
        raise ConfigError(f"cannot read {path}: {error.strerror or error}") from error
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from error


def _tool_table(data: dict[str, Any]) -> dict[str, Any] | None:
    tool = data.get("tool")
    if isinstance(tool, dict) and isinstance(tool.get("triton-lint"), dict):
        return tool["triton-lint"]
    return None


def load_config_file(path: Path) -> Config:
    """Load an explicit ``--config`` file: a pyproject.toml or a standalone TOML file."""
    path = path.resolve()
    data = _read_toml(path)
    table = _tool_table(data)
    if table is None:
        if path.name == "pyproject.toml":
            raise ConfigError(f"{path}: no [tool.triton-lint] table")
        table = data
    return parse_table(table, path)


@cache
def config_for_directory(directory: Path) -> Config:
    """The nearest ``pyproject.toml`` with a ``[tool.triton-lint]`` table, upward from here."""
    return find_config(directory)


def find_config(directory: Path) -> Config:
    """`config_for_directory`, read now (not remembered for the rest of the process)."""
    for candidate_dir in (directory, *directory.parents):
        candidate = candidate_dir / "pyproject.toml"
        if candidate.is_file():
            table = _tool_table(_read_toml(candidate))
            if table is not None:
                return parse_table(table, candidate)
    return Config(root=Path.cwd())


def cache_dir_for(option: Path | None, config: Config | None, isolated: bool) -> Path:
    """The option, else TRITON_LINT_CACHE_DIR, else `cache-dir` of the explicit or the
    working directory's configuration (relative to its file), else the project root's."""
    if option is not None:
        return option
    environment = os.environ.get("TRITON_LINT_CACHE_DIR")
    if environment:
        return Path(environment)
    if config is None:
        config = Config(root=Path.cwd()) if isolated else config_for_directory(Path.cwd().resolve())
    if config.cache_dir is not None:
        return config.root / config.cache_dir
    return config.root / DEFAULT_CACHE_DIR
