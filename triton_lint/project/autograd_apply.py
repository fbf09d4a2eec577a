"""The names an autograd function's ``forward`` is called by: ``Attention.apply`` and the
module-level aliases of it in the class's file (``attention_ = Attention.apply``). PyTorch
runs ``forward`` for each call of ``apply``, so the index records those calls as the calls of
``forward`` and follows their callers as it follows any launching function's
(`triton_lint.project.index`). Read from the file's text, as the index reads outlines: a
class of the file whose bases name ``Function`` (``torch.autograd.Function``)."""

from __future__ import annotations

import re


def apply_names(text: str, qualified: str) -> set[str]:
    """``C.apply`` and its module-level aliases, for ``qualified`` = ``C.forward`` of an
    autograd function class ``C`` defined at the top of ``text``; empty for anything else."""
    owner, _, method = qualified.rpartition(".")
    if method != "forward" or not owner or "." in owner:
        return set()
    name = re.escape(owner)
    header = re.search(rf"^class[ \t]+{name}[ \t]*\(([^)]*)\)[ \t]*:", text, re.M)
    if header is None or not re.search(r"\bFunction\b", header.group(1)):
        return set()
    aliases = re.findall(rf"^([A-Za-z_]\w*)[ \t]*=[ \t]*{name}\.apply[ \t]*(?:#.*)?$", text, re.M)
    return {f"{owner}.apply", *aliases}
