"""Compile-error findings in a jit function nothing in the project runs are information."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from triton_lint.finding import Finding, Severity
from triton_lint.model.kernel import Kernel


def unused_as_information(kernel: Kernel, findings: Iterable[Finding]) -> Iterator[Finding]:
    """``findings`` of ``kernel``, as information with `unused_note` when the indexed project
    neither launches nor calls it (`Kernel.unlaunched`, asked only when there is a finding)."""
    found = list(findings)
    if found and kernel.unlaunched:
        for finding in found:
            finding.severity = Severity.INFO
            finding.message += unused_note(kernel)
    return iter(found)


def unused_note(kernel: Kernel) -> str:
    """Why a compile error in ``kernel`` is information: the indexed project neither
    launches nor calls it, so the error waits for a caller."""
    return (
        f" (info: nothing in the project launches or calls `{kernel.name}`, so it fails only "
        "once a caller runs it)"
    )
