"""pytest plugin: every `@stress.case` becomes its own test item (opt-in).

Enable with `pytest --triton-stress`, or `triton_stress = true` in the pytest ini options
(`[tool.pytest.ini_options]`); `--no-triton-stress` turns it off again for one run. When it is
off the plugin only registers its options: it reads no files and imports neither torch nor
triton, so unrelated test suites are unaffected.

`--triton-stress-device cuda` (or `auto`) runs the cases natively; under pytest-xdist each
worker pins its children to one GPU (worker k: GPU k mod the GPU count), so `pytest -n N` on N
GPUs spreads the files over the cards and reports the same findings as one process.

When it is on, every collected `*.py` file whose text mentions `stress.case` is parsed (not
imported) for functions decorated with `@stress.case(...)`; each becomes an item named
`path::case_name` with the marker `triton_stress`. Running the items of one file starts one
child process for the selected cases of that file (the dynamic engine's usual isolation:
`TRITON_INTERPRET=1`, a per-case timeout, crashes and hangs reported as TL908). An item fails
when its case has findings, and the failure lists them with their witnesses and the
combinations that failed.
"""

from __future__ import annotations

import pathlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from triton_lint.dynamic.cases import case_names

if TYPE_CHECKING:
    from triton_lint.dynamic.dynamic_report import StressCell
    from triton_lint.finding import Finding

DEFAULT_TIMEOUT = 300.0
MARKER = "triton_stress"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("triton-stress", "triton-lint stress cases")
    group.addoption(
        "--triton-stress",
        action="store_true",
        dest="triton_stress",
        default=None,
        help="Collect every @stress.case as a test (runs under Triton's interpreter).",
    )
    group.addoption(
        "--no-triton-stress",
        action="store_false",
        dest="triton_stress",
        help="Do not collect stress cases, even when the ini option enables them.",
    )
    group.addoption(
        "--triton-stress-timeout",
        type=float,
        default=None,
        help=f"Seconds each stress case may run (default {DEFAULT_TIMEOUT:.0f}).",
    )
    group.addoption(
        "--triton-stress-device",
        choices=("interpreter", "cuda", "auto"),
        default=None,
        help="Where stress cases run (default interpreter). With pytest-xdist (`-n N`) on a "
        "GPU, worker k runs its cases on GPU k mod the number of GPUs.",
    )
    parser.addini("triton_stress", "Collect @stress.case functions as tests.", type="bool")
    parser.addini(
        "triton_stress_device", "Where stress cases run (interpreter, cuda, auto).", default=""
    )
    parser.addini(
        "triton_stress_timeout", "Seconds each stress case may run.", default=str(DEFAULT_TIMEOUT)
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{MARKER}: a triton-lint stress case (collected with --triton-stress)"
    )


def _enabled(config: pytest.Config) -> bool:
    option = config.getoption("triton_stress")
    if option is not None:
        return bool(option)
    return bool(config.getini("triton_stress"))


def _timeout(config: pytest.Config) -> float:
    option = config.getoption("triton_stress_timeout")
    return float(option if option is not None else config.getini("triton_stress_timeout"))


def _device(config: pytest.Config) -> tuple[str, int | None]:
    """The device cases run on and, on a GPU, the one this xdist worker is pinned to."""
    import os

    requested = config.getoption("triton_stress_device") or config.getini("triton_stress_device")
    if requested in ("", None, "interpreter"):
        return "interpreter", None
    from triton_lint.dynamic.devices import resolve_device

    device = resolve_device(str(requested))
    if device.kind != "cuda":
        return "interpreter", None
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    return "cuda", (int(worker) if worker.isdigit() else 0) % max(device.gpus, 1)


def pytest_collect_file(file_path: pathlib.Path, parent: pytest.Collector) -> StressFile | None:
    if file_path.suffix != ".py" or not _enabled(parent.config):
        return None
    try:
        text = file_path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    if "stress.case" not in text or not case_names(text):
        return None
    return StressFile.from_parent(parent, path=file_path)


class StressFile(pytest.File):
    """The stress cases of one file; its items share one child-process run."""

    def collect(self) -> Iterator[StressItem]:
        for name, line in case_names(self.path.read_text(encoding="utf-8", errors="replace")):
            item = StressItem.from_parent(self, name=name, line=line)
            item.add_marker(MARKER)
            yield item

    def results(self) -> tuple[list[Finding], list[StressCell]]:
        """Run the selected cases of this file once (on the first item that needs them)."""
        cached = getattr(self, "_results", None)
        if cached is None:
            from triton_lint.dynamic.runner import ChildOptions, run_file_report

            selected = [
                item.name
                for item in self.session.items
                if isinstance(item, StressItem) and item.parent is self
            ]
            device, gpu = _device(self.config)
            self.gpu = gpu
            cached = run_file_report(
                self.path,
                only=selected or None,
                options=ChildOptions(device, timeout=_timeout(self.config)),
                gpu=gpu,
            )
            self._results = cached
        return cached


class StressCaseFailed(Exception):
    """A stress case had findings."""


class StressItem(pytest.Item):
    def __init__(self, *, line: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.line = line
        # Fixture values, as test functions have: plugins that wrap every test read them
        # (pytest-lsp 1.0's runtest hook breaks on an item without them).
        self.funcargs: dict[str, Any] = {}

    def runtest(self) -> None:
        assert isinstance(self.parent, StressFile)
        findings, cells = self.parent.results()
        gpu = getattr(self.parent, "gpu", None)
        if gpu is not None:
            import os

            self.user_properties.append(("gpu", gpu))
            self.user_properties.append(("worker", os.environ.get("PYTEST_XDIST_WORKER", "")))
        mine = [f for f in findings if f.properties.get("case") in (self.name, "<import>")]
        my_cells = [c for c in cells if c.case == self.name]
        if mine:
            raise StressCaseFailed(_describe(self.name, mine, my_cells))
        if not my_cells:
            raise StressCaseFailed(f"stress case `{self.name}` ran no combination")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, StressCaseFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[pathlib.Path, int, str]:
        return self.path, self.line - 1, f"stress case {self.name}"


def _describe(name: str, findings: list[Finding], cells: list[StressCell]) -> str:
    lines = [f"stress case `{name}` found {len(findings)} problem(s):"]
    for f in findings:
        lines.append(f"  {f.path}:{f.line}: {f.code} {f.name}: {f.message}")
        witness = f.properties.get("witness")
        if witness:
            lines.append(f"      witness: {witness}")
        for r in f.related:
            lines.append(f"      see {r.path}:{r.span.line}: {r.message}")
    failed = [c for c in cells if c.status != "pass"]
    if cells:
        lines.append(f"{len(failed)} of {len(cells)} combination(s) failed:")
        for c in failed[:20]:
            pattern = f"; pattern {c.pattern}" if c.pattern else ""
            lines.append(f"  [{c.variant}{pattern}] {c.status} {', '.join(c.codes)}".rstrip())
        if len(failed) > 20:
            lines.append(f"  ... and {len(failed) - 20} more")
    return "\n".join(lines)
