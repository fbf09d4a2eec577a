"""Reading calls inside a kernel: which Triton function a call is, its keyword arguments, casts
and dtypes, and whether a call is a helper the analyses cannot see into."""

from __future__ import annotations

from typing import Any

import libcst as cst

from triton_lint.model.evaluate import UNKNOWN, evaluate
from triton_lint.model.kernel import Kernel
from triton_lint.model.names import TL, dotted_name
from triton_lint.model.provenance import Prov, Provenance, is_wide_dtype
from triton_lint.model.tree import keyword_arg

_CAST_METHODS = {"to", "cast"}


def tl_short(kernel: Kernel, call: cst.Call) -> str | None:
    """Short ``triton.language`` name of a call (``exp`` for ``tl.math.exp``), or None.

    ``libdevice.exp`` spellings count as ``exp``.
    """
    path = kernel.module.aliases.resolve(call.func)
    if path is not None and path.startswith("triton"):
        return path.rsplit(".", 1)[-1]
    if isinstance(call.func, cst.Attribute):
        text = dotted_name(call.func.value)
        if text is not None and "libdevice" in text:
            return call.func.attr.value
    return None


def is_load(kernel: Kernel, call: cst.Call) -> bool:
    access = kernel.access_for_call(call)
    return access is not None and access.kind == "load"


def is_opaque(kernel: Kernel, call: cst.Call) -> bool:
    """A call whose result we cannot see into: a helper, not Triton nor a tensor method."""
    path = kernel.module.aliases.resolve(call.func)
    if path is not None:
        return not path.startswith("triton")
    if isinstance(call.func, cst.Attribute):
        flags = kernel.facts(Provenance).of(call.func.value)
        if flags & (Prov.TENSOR | Prov.LOADED | Prov.ARANGE | Prov.PROGRAM_ID):
            return False  # x.to(...), x.reshape(...)
    return True


def is_loop_header(call: cst.Call) -> bool:
    """``range(...)``, ``tl.range(...)``, ``tl.static_range(...)``: what a loop variable's
    closure reaches through its ``for``, not a helper computing a value (``is_opaque`` keeps
    calling the builtin opaque, which other analyses rely on)."""
    return (dotted_name(call.func) or "").split(".")[-1] in ("range", "static_range")


def program_id_axis(call: cst.Call) -> Any:
    """The literal axis of a `tl.program_id(axis)` call (UNKNOWN when not a literal)."""
    for arg in call.args:
        if arg.keyword is None or arg.keyword.value == "axis":
            return evaluate(arg.value)
    return UNKNOWN


def cast_parts(
    kernel: Kernel, node: cst.CSTNode
) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
    """``(x, dtype)`` of ``x.to(dtype)``, ``x.cast(dtype)`` or ``tl.cast(x, dtype)``."""
    if not isinstance(node, cst.Call):
        return None
    positional = [arg.value for arg in node.args if arg.keyword is None]
    if tl_short(kernel, node) == "cast":  # tl.cast(x, dtype), before the method spelling
        source = positional[0] if positional else None
        dtype = positional[1] if len(positional) > 1 else keyword_arg(node, "dtype")
    elif isinstance(node.func, cst.Attribute) and node.func.attr.value in _CAST_METHODS:
        source = node.func.value
        dtype = positional[0] if positional else keyword_arg(node, "dtype")
    else:
        return None
    return None if source is None or dtype is None else (source, dtype)


def cast_dtype(kernel: Kernel, node: cst.CSTNode) -> str | None:
    """The canonical dtype path of ``x.to(dtype)``, ``x.cast(dtype)`` or
    ``tl.cast(x, dtype)`` (``triton.language.int64``), else None."""
    parts = cast_parts(kernel, node)
    return kernel.module.aliases.resolve(parts[1]) if parts is not None else None


def is_widening(kernel: Kernel, node: cst.CSTNode) -> bool:
    """``x.to(tl.int64)``, ``x.cast(tl.int64)`` or ``tl.cast(x, tl.int64)``."""
    return is_wide_dtype(cast_dtype(kernel, node))


def is_low_precision(kernel: Kernel, node: cst.BaseExpression | None) -> str | None:
    """``float16``/``bfloat16`` when ``node`` names that dtype, else None."""
    if node is None:
        return None
    path = kernel.module.aliases.resolve(node)
    if path is not None and path.startswith(TL + "."):
        short = path.rsplit(".", 1)[-1]
        if short in ("float16", "bfloat16", "fp16", "bf16"):
            return short
    return None
