"""A dynamic finding's witness as labelled lines: the sizes, dtypes, layout, program, lane and
offsets that reproduce it, one a line, instead of the message's one long bracket."""

from __future__ import annotations

from typing import Any

from triton_lint.reporters.terminal import Palette

#: Witness keys in the order shown, with their labels; other keys follow under their own name.
LABELS = {
    "dims": "sizes",
    "dtypes": "dtype",
    "layout": "layout",
    "pattern": "values",
    "device": "device",
    "pid": "program",
    "lane": "lane",
    "offsets": "offset",
    "arg": "tensor",
    "op": "access",
    "output": "output",
    "index": "index",
    "got": "got",
    "expected": "expected",
    "config": "config",
    "poison": "poison",
    "side": "side",
    "spread": "spread",
    "block": "block",
    "thread": "thread",
    "address": "address",
}
#: Keys whose lists are coordinates, shown as tuples like the messages show them.
_COORDINATES = {"pid", "lane", "index", "block", "thread"}


def format_value(key: str, value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items()) or "-"
    if isinstance(value, list) and key == "dtypes":
        return ", ".join(dict.fromkeys(str(v) for v in value if v is not None)) or "-"
    if isinstance(value, list) and key in _COORDINATES:
        return str(tuple(value))
    return str(value)


def witness_lines(witness: dict[str, Any], gutter: int, paint: Palette) -> list[str]:
    """``= witness:`` and a line per known value, aligned after the gutter."""
    keys = [k for k in LABELS if witness.get(k) is not None]
    keys += sorted(k for k in witness if k not in LABELS and witness[k] is not None)
    labels = [LABELS.get(k, k) for k in keys]
    width = max((len(label) for label in labels), default=0)
    pad = " " * gutter
    out = [f"{pad} {paint('= witness:', 'note')}"]
    for key, label in zip(keys, labels, strict=True):
        out.append(
            f"{pad}     {paint(label.ljust(width), 'note')}  {format_value(key, witness[key])}"
        )
    return out
