"""Where the corpus cases find the libraries: the unpacked wheels under $TRITON_LINT_CORPUS
(default /work/.cache/corpus, `<name>-<version>/` each). A package that imports cleanly on a
CPU machine is put on the path; a module whose package does not (flag_gems probes the GPU
driver on import) is loaded from its file, which only imports torch and triton."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

CORPUS = Path(os.environ.get("TRITON_LINT_CORPUS", "/work/.cache/corpus"))


def dist(name: str) -> Path:
    """The unpacked wheel `name-<version>` (the newest when several are there)."""
    found = sorted(CORPUS.glob(f"{name}-[0-9]*"))
    if not found:
        raise FileNotFoundError(f"{name} is not unpacked under {CORPUS} (set TRITON_LINT_CORPUS)")
    return found[-1]


def package(name: str) -> None:
    """Put the unpacked wheel `name` on the import path."""
    root = str(dist(name))
    if root not in sys.path:
        sys.path.insert(0, root)


def module_file(name: str, relative: str) -> ModuleType:
    """Load one file of the unpacked wheel `name` as a module of its own."""
    path = dist(name) / relative
    module_name = "_corpus_" + relative.replace("/", "_").removesuffix(".py")
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


def compile_only(*_args: object) -> None:
    """The reference of a case written for `--compile-only` (no numerical check)."""
    raise NotImplementedError("written for --compile-only: no reference")
