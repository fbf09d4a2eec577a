"""Resolve names in a module to canonical dotted paths (``tl.load`` -> ``triton.language.load``).

Kernels reach Triton through many spellings: ``import triton.language as tl``, ``as T``,
``from triton import language as tl``, ``import triton as tr``, ``from triton import jit``,
and serving stacks that re-export ``tl``/``triton`` from their own helper module. Rules compare
canonical paths only, so every spelling is handled once, here.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import libcst as cst

#: Conventional names assumed when a file uses them without a visible import
#: (e.g. ``from vllm.triton_utils import tl, triton``).
CONVENTIONAL = {"triton": "triton", "tl": "triton.language"}

TL = "triton.language"


def dotted_name(node: cst.BaseExpression) -> str | None:
    """The literal dotted text of a Name/Attribute chain, or None for anything else."""
    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
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
        collector = _ImportCollector(aliases)
        for small in iter_small_statements(module.body):
            if isinstance(small, cst.Import):
                collector.visit_Import(small)
            elif isinstance(small, cst.ImportFrom):
                collector.visit_ImportFrom(small)
        return aliases


def iter_small_statements(body: Sequence[cst.CSTNode]) -> Iterator[cst.BaseSmallStatement]:
    """Every small statement (assignment, import, ...) in ``body`` and nested blocks."""
    pending = list(reversed(body))
    while pending:
        node = pending.pop()
        if isinstance(node, cst.SimpleStatementLine):
            yield from node.body
            continue
        for block in _blocks(node):
            if isinstance(block, cst.SimpleStatementSuite):
                yield from block.body
            elif isinstance(block, cst.IndentedBlock):
                pending.extend(reversed(block.body))


def _blocks(node: cst.CSTNode) -> Iterator[cst.BaseSuite]:
    body = getattr(node, "body", None)
    if isinstance(body, cst.BaseSuite):
        yield body
    orelse = getattr(node, "orelse", None)
    if isinstance(orelse, cst.If):
        yield from _blocks(orelse)
    elif orelse is not None and isinstance(getattr(orelse, "body", None), cst.BaseSuite):
        yield orelse.body
    for handler in getattr(node, "handlers", ()):
        yield handler.body
    final = getattr(node, "finalbody", None)
    if final is not None:
        yield final.body


class _ImportCollector:
    def __init__(self, aliases: Aliases) -> None:
        self.aliases = aliases

    def visit_Import(self, node: cst.Import) -> None:
        for item in node.names:
            full = _module_path(item.name)
            if item.asname is not None and isinstance(item.asname.name, cst.Name):
                self.aliases.bind(item.asname.name.value, full)
            else:
                head = full.split(".")[0]
                self.aliases.bind(head, head)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            base = _module_path(node.module) if node.module is not None else ""
            if isinstance(node.names, cst.ImportStar) and base in (
                "triton.language",
                "triton",
            ):
                return  # star imports: conventional names still apply
            if not isinstance(node.names, cst.ImportStar):
                self._bind_reexports(node)
            return
        base = _module_path(node.module)
        for item in node.names:
            name = _module_path(item.name)
            local = (
                item.asname.name.value
                if item.asname is not None and isinstance(item.asname.name, cst.Name)
                else name
            )
            if base == "triton" or base.startswith("triton."):
                self.aliases.bind(local, f"{base}.{name}")
            elif name in CONVENTIONAL:
                # `from pkg.triton_utils import tl, triton`: a re-export of the real modules.
                self.aliases.bind(local, CONVENTIONAL[name])
            elif local in CONVENTIONAL:
                self.aliases.unbind(local)

    def _bind_reexports(self, node: cst.ImportFrom) -> None:
        assert not isinstance(node.names, cst.ImportStar)
        for item in node.names:
            name = _module_path(item.name)
            local = (
                item.asname.name.value
                if item.asname is not None and isinstance(item.asname.name, cst.Name)
                else name
            )
            if name in CONVENTIONAL:
                self.aliases.bind(local, CONVENTIONAL[name])
