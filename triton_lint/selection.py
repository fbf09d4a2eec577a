"""Rule selection in ruff's terms: ``select`` replaces, ``extend-select`` adds, ``ignore`` removes.

Selectors are exact codes, prefixes (``TL1``) or ``ALL``. Without any ``select`` the rules that
are on by default run; a rule that is off by default runs only when a selector names it.
Layers (configuration file, then command line) apply in order, so the command line wins.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from triton_lint.rules import all_rules
from triton_lint.rules.base import Rule


class SelectionError(Exception):
    """An unknown rule selector; the CLI exits with code 2."""


@dataclass(frozen=True)
class Layer:
    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()


def expand(selectors: Iterable[str]) -> set[str]:
    """Codes matched by ``selectors``; raises SelectionError for one that matches nothing."""
    codes = [rule.code for rule in all_rules()]
    matched: set[str] = set()
    for raw in selectors:
        selector = raw.strip().upper()
        if not selector:
            continue
        if selector == "ALL":
            matched.update(codes)
            continue
        hits = [code for code in codes if code.startswith(selector)]
        if not hits:
            raise SelectionError(f"unknown rule selector `{raw}` (see `triton-lint rule --all`)")
        matched.update(hits)
    return matched


def resolve(layers: Sequence[Layer]) -> set[str]:
    """The enabled codes after applying every layer in order."""
    enabled = {rule.code for rule in all_rules() if rule.default_enabled}
    for layer in layers:
        if layer.select is not None:
            enabled = expand(layer.select)
        enabled |= expand(layer.extend_select)
        enabled -= expand(layer.ignore)
    return enabled


def rules_for(codes: set[str]) -> list[Rule]:
    return [rule for rule in all_rules() if rule.code in codes]
