"""Finding stress cases without importing anything: files that mention `stress.case`, and the
module-level functions decorated with it (read with `ast`, so no torch or triton is loaded)."""

from __future__ import annotations

import ast
import pathlib
from collections.abc import Iterable

_SKIP_DIRS = {
    ".venv",
    "venv",
    ".git",
    "__pycache__",
    "node_modules",
    ".tox",
    "build",
    "dist",
}


def discover(paths: Iterable[pathlib.Path]) -> list[pathlib.Path]:
    """Python files under `paths` that mention `stress.case` (only those are imported)."""
    found: list[pathlib.Path] = []
    for p in paths:
        p = pathlib.Path(p)
        if p.is_dir():
            files: Iterable[pathlib.Path] = sorted(
                f for f in p.rglob("*.py") if not (_SKIP_DIRS & set(f.relative_to(p).parts[:-1]))
            )
        else:
            files = [p]
        for f in files:
            try:
                if f.suffix == ".py" and "stress.case" in f.read_text(
                    encoding="utf-8", errors="replace"
                ):
                    found.append(f)
            except OSError:
                continue
    return found


def _is_case_decorator(node: ast.expr) -> bool:
    """`@stress.case(...)`, `@triton_lint.stress.case(...)` or `@case(...)`."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr == "case" and (
            (isinstance(node.value, ast.Name) and node.value.id == "stress")
            or (isinstance(node.value, ast.Attribute) and node.value.attr == "stress")
        )
    return isinstance(node, ast.Name) and node.id == "case"


def case_names(source: str) -> list[tuple[str, int]]:
    """(name, def line) of the module-level functions decorated with `@stress.case`."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    return [
        (node.name, node.lineno)
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and any(_is_case_decorator(d) for d in node.decorator_list)
    ]
