"""Finding stress cases without importing anything: files that mention `stress.case`, and the
module-level functions decorated with it (read with `ast`, so no torch or triton is loaded);
and, in a child, importing such a file to register its cases."""

from __future__ import annotations

import ast
import importlib.util
import os
import pathlib
import sys
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


def import_user_module(path: str) -> None:
    """Import the file as a fresh module (its directory on the path), running its
    `@stress.case` registrations."""
    directory = os.path.dirname(os.path.abspath(path))
    if directory not in sys.path:
        sys.path.insert(0, directory)
    name = "_tl_stress_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
