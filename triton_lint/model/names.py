"""Resolve names in a module to canonical dotted paths (``tl.load`` -> ``triton.language.load``).

Kernels reach Triton through many spellings: ``import triton.language as tl``, ``as T``,
``from triton import language as tl``, ``import triton as tr``, ``from triton import jit``,
and serving stacks that re-export ``tl``/``triton`` from their own helper module. Rules compare
canonical paths only, so every spelling is handled once, here.
"""

from __future__ import annotations

from collections.abc import Iterable

import libcst as cst

from triton_lint.model.tree import iter_small_statements

#: Conventional names assumed when a file uses them without a visible import
#: (e.g. ``from vllm.triton_utils import tl, triton``).
CONVENTIONAL = {"triton": "triton", "tl": "triton.language"}

TL = "triton.language"
#: What ``tl.constexpr`` resolves to, as an annotation or a wrapper call ``tl.constexpr(3)``.
CONSTEXPR = frozenset({f"{TL}.constexpr", f"{TL}.core.constexpr"})


def dotted_name(node: cst.BaseExpression) -> str | None:
    """The literal dotted text of a Name/Attribute chain, or None for anything else."""
    parts: list[str] = []
    while type(node) is cst.Attribute:  # `type() is`: a hot path, and ABCMeta is slow
        parts.append(node.attr.value)
        node = node.value
    if type(node) is not cst.Name:
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


def _module_path(node: cst.BaseExpression) -> str:
    return dotted_name(node) or ""


class Aliases:
    """Maps local names bound by imports to the canonical module or object they denote."""

    def __init__(self) -> None:
        self._map: dict[str, str] = dict(CONVENTIONAL)

    def bind(self, local: str, target: str) -> None:
        self._map[local] = target

    def unbind(self, local: str) -> None:
        """Forget a name rebound to something that is not Triton (``tl = something_else``)."""
        self._map.pop(local, None)

    def resolve(self, node: cst.BaseExpression) -> str | None:
        """Canonical dotted path of ``node`` if it starts at a known alias, else None."""
        text = dotted_name(node)
        if text is None:
            return None
        head, _, rest = text.partition(".")
        target = self._map.get(head)
        if target is None:
            return None
        return f"{target}.{rest}" if rest else target

    def is_triton(self, path: str | None) -> bool:
        return path is not None and (path == "triton" or path.startswith("triton."))

    def names_for(self, target: str) -> Iterable[str]:
        return [local for local, path in self._map.items() if path == target]

    @classmethod
    def from_module(cls, module: cst.Module) -> Aliases:
        """Collect import aliases from every import statement in the module (any depth).

        Imports inside functions and ``try`` blocks count too: Triton code often imports
        lazily or behind version guards. Only statements are walked, never expressions:
        a full libcst visitor pass costs more than parsing.
        """
        aliases = cls()
        for small in iter_small_statements(module.body):
            if isinstance(small, cst.Import):
                _bind_import(aliases, small)
            elif isinstance(small, cst.ImportFrom):
                _bind_import_from(aliases, small)
        return aliases


def _bind_import(aliases: Aliases, node: cst.Import) -> None:
    for item in node.names:
        if item.asname is not None:
            aliases.bind(item.evaluated_alias or item.evaluated_name, item.evaluated_name)
        else:
            head = item.evaluated_name.split(".")[0]
            aliases.bind(head, head)


def _bind_import_from(aliases: Aliases, node: cst.ImportFrom) -> None:
    """``from triton... import x`` binds Triton paths; ``from pkg import tl, triton`` (any
    other module, relative ones included) is a re-export of the real modules."""
    if isinstance(node.names, cst.ImportStar):
        return  # star imports: conventional names still apply
    base = "" if node.relative or node.module is None else _module_path(node.module)
    for item in node.names:
        name = item.evaluated_name
        local = item.evaluated_alias or name
        if base == "triton" or base.startswith("triton."):
            aliases.bind(local, f"{base}.{name}")
        elif name in CONVENTIONAL:
            aliases.bind(local, CONVENTIONAL[name])
        elif local in CONVENTIONAL:
            aliases.unbind(local)
