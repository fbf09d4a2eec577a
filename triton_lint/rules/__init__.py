"""The rule registry: every module named ``tlNNN_*.py`` in this package defines one rule."""

from __future__ import annotations

import importlib
import pkgutil
import re
from functools import cache

from triton_lint.rules.base import Rule

_MODULE_NAME = re.compile(r"^tl\d{3}_\w+$")


@cache
def all_rules() -> tuple[Rule, ...]:
    """Instances of every rule, sorted by code."""
    rules: list[Rule] = []
    for info in pkgutil.iter_modules(__path__):
        if not _MODULE_NAME.match(info.name):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, Rule)
                and value is not Rule
                and value.__module__ == module.__name__
            ):
                rules.append(value())
    codes = [rule.code for rule in rules]
    duplicates = {code for code in codes if codes.count(code) > 1}
    if duplicates:
        raise RuntimeError(f"duplicate rule codes: {sorted(duplicates)}")
    return tuple(sorted(rules, key=lambda rule: rule.code))


def rules_by_code() -> dict[str, Rule]:
    return {rule.code: rule for rule in all_rules()}
