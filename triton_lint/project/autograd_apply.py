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


_CLASS = re.compile(r"^class[ \t]+(\w+)[ \t]*\(([^)]*)\)[ \t]*:", re.M)
_ALIAS = re.compile(r"^([A-Za-z_]\w*)[ \t]*=[ \t]*(\w+)\.apply[ \t]*(?:#.*)?$", re.M)
_FUNCTION = re.compile(r"\bFunction\b")


def autograd_functions(text: str) -> dict[str, list[str]]:
    """Each class of ``text`` whose bases name ``Function`` (the first class of its name) ->
    ``C.apply`` and the module-level aliases of it: the names its ``forward`` runs by."""
    if "Function" not in text:
        return {}
    first: dict[str, str] = {}
    for match in _CLASS.finditer(text):
        first.setdefault(match.group(1), match.group(2))
    found = {owner: {f"{owner}.apply"} for owner, bases in first.items() if _FUNCTION.search(bases)}
    for alias, owner in _ALIAS.findall(text):
        if owner in found:
            found[owner].add(alias)
    return {owner: sorted(names) for owner, names in found.items()}


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
