"""The note of a compile-error finding in a jit function nothing in the project runs."""

from __future__ import annotations

from triton_lint.model.kernel import Kernel


def unused_note(kernel: Kernel) -> str:
    """Why a compile error in ``kernel`` is information: the indexed project neither
    launches nor calls it (`Kernel.unlaunched`), so the error waits for a caller."""
    return (
        f" (info: nothing in the project launches or calls `{kernel.name}`, so it fails only "
        "once a caller runs it)"
    )
