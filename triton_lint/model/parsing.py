"""libcst's parse of a whole file, without the validation every node runs as it is built.

libcst checks each node's fields in ``__post_init__`` (parentheses that match, whitespace
where a keyword needs it): right for trees a program builds, redundant for the parser's
own, which come from source Python's grammar accepted. It is an eighth of the parse, and
the parse of the kernel files and of the other files their launches read is a fifth of a
cold run. Nodes built outside the parse (``with_changes``, fixes) are still validated.
"""

from __future__ import annotations

import libcst as cst

#: The validation libcst runs, restored after each parse (a constant, so that two parses on
#: two threads at once cannot leave it switched off).
_VALIDATE = cst.CSTNode.__post_init__


def _built(self: cst.CSTNode) -> None:
    """The parser's nodes: nothing to check."""


def parse_module(text: str) -> cst.Module:
    """``cst.parse_module(text)``, the nodes unvalidated; raises what it raises."""
    cst.CSTNode.__post_init__ = _built  # type: ignore[method-assign]
    try:
        return cst.parse_module(text)
    finally:
        cst.CSTNode.__post_init__ = _VALIDATE  # type: ignore[method-assign]
