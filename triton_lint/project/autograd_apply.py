"""The names an autograd function's ``forward`` is called by: ``Attention.apply`` and the
module-level aliases of it in the class's file (``attention_ = Attention.apply``). PyTorch
runs ``forward`` for each call of ``apply``, so the index records those calls as the calls of
``forward`` and follows their callers as it follows any launching function's
(`triton_lint.project.index`). Read from the file's text, as the index reads outlines: a
class of the file whose bases name ``Function`` (``torch.autograd.Function``)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Protocol

from triton_lint.model.project import FunctionKey


class _File(Protocol):
    def autograd_calls(self, owner: str) -> list[str]: ...


def autograd_calls(text: str, owner: str) -> list[str]:
    """``owner.apply`` and its module-level aliases in ``text`` when ``owner`` is a class
    of it whose bases name ``Function``; else empty."""
    name = re.escape(owner)
    header = re.search(rf"^class[ \t]+{name}[ \t]*\(([^)]*)\)[ \t]*:", text, re.M)
    if header is None or not re.search(r"\bFunction\b", header.group(1)):
        return []
    aliases = re.findall(rf"^([A-Za-z_]\w*)[ \t]*=[ \t]*{name}\.apply[ \t]*(?:#.*)?$", text, re.M)
    return sorted({f"{owner}.apply", *aliases})


def apply_names(path: str, files: Mapping[str, _File], qualified: str) -> set[str]:
    """``C.apply`` and its module-level aliases, for ``qualified`` = ``C.forward`` of an
    autograd function class ``C`` defined at the top of the file ``path``; else empty."""
    owner, _, method = qualified.rpartition(".")
    if method != "forward" or not owner or "." in owner:
        return set()
    return set(files[path].autograd_calls(owner))


def called_as(path: str, files: Mapping[str, _File], function: str) -> set[str]:
    """The names a top-level function is imported by elsewhere: its own (``op``), or for an
    autograd ``forward`` its class's and the aliases of ``apply``; none for another method."""
    return {function} if "." not in function else apply_names(path, files, function)


def apply_calls(
    functions: Iterable[FunctionKey], files: Mapping[str, _File]
) -> dict[FunctionKey, FunctionKey]:
    """``(file, C.apply)`` and ``(file, alias)`` -> ``(file, C.forward)`` for each autograd
    ``forward`` among ``functions``: what to search the calls of in its stead."""
    return {
        (path, name): (path, function)
        for path, function in functions
        for name in apply_names(path, files, function)
    }
