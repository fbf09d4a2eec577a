"""The project index: kernels by module, every launch of them wherever it is, and the callers of
the functions that launch them, from one pass over the stdlib's trees (about five times faster
to build than libcst's, and only for the files that can matter).

Which files are parsed:

1. files that may define kernels (the engine's prefilter): their top-level ``@jit`` functions;
2. files that mention one of those kernels' names followed by ``[`` (a launch): the launches,
   resolved through imports (``from .kernels import kern``, ``import pkg.kernels as K``,
   re-exports through a package's ``__init__``);
3. files that mention a launching function's name followed by ``(``: the calls of it, then the
   calls of those callers, up to `MAX_DEPTH` levels.

Only files that mention ``triton`` are read at all (a bytes search): scanning every Python file
of a monorepo for call names costs more than linting its kernels. A caller in a file that
never names Triton is not seen, so its bounds are unknown at the launch.

The work is bounded: `MAX_DEPTH` levels of callers, and a function called from more than
`MAX_CALLS` places gets no caller facts at all (`ProjectContext.unbounded`): a helper called
everywhere says nothing about any one launch. A name the index cannot resolve is left out, so
what is unknown stays unknown.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from triton_lint.engine import decode, may_define_kernels, may_hold_kernels
from triton_lint.model.project import FunctionKey, ProjectContext

MAX_DEPTH = 2
MAX_CALLS = 8
#: Names too common to search callers by: every class has them.
_UNSEARCHED = {"__init__", "__call__", "forward", "backward", "apply", "run", "main"}


@dataclass
class ProjectFile:
    """One file of the project as the index reads it."""

    display: str
    path: Path
    data: bytes
    module: str = ""
    is_package: bool = False
    _text: str | None = None
    _tree: ast.Module | None = None
    _parsed: bool = False
    imports: dict[str, str] = field(default_factory=dict)
    defined: set[str] = field(default_factory=set)
    kernels: set[str] = field(default_factory=set)
    #: (enclosing function's qualified name, dotted name launched)
    launches: list[tuple[str, str]] = field(default_factory=list)
    #: (enclosing function's qualified name or "", dotted name called)
    calls: list[tuple[str, str]] = field(default_factory=list)

    @property
    def text(self) -> str:
        if self._text is None:
            try:
                self._text = decode(self.data)
            except (SyntaxError, UnicodeError, LookupError):
                self._text = ""
        return self._text

    def parse(self) -> bool:
        """Read the file's imports, definitions, launches and calls (once); False if Python
        cannot parse it."""
        if not self._parsed:
            self._parsed = True
            try:
                self._tree = ast.parse(self.text)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                return False
            _read(self, self._tree)
            self._tree = None
        return True


def module_name(path: Path) -> tuple[str, bool]:
    """The dotted module ``path`` is imported as: the directories above it that are packages
    (hold an ``__init__.py``), so ``src/pkg/ops.py`` is ``pkg.ops``; and whether it is a
    package's ``__init__``."""
    parts = [] if path.name == "__init__.py" else [path.stem]
    directory = path.parent
    while (directory / "__init__.py").is_file() and directory.parent != directory:
        parts.append(directory.name)
        directory = directory.parent
    return ".".join(reversed(parts)), path.name == "__init__.py"


class ProjectIndex:
    """Kernels, launches and callers across the files of one run."""

    def __init__(self, files: Iterable[tuple[str, Path, bytes]]) -> None:
        self.files: dict[str, ProjectFile] = {}
        self.by_module: dict[str, ProjectFile] = {}
        for display, path, data in files:
            if b"triton" not in data:
                continue  # launching and calling files of a Triton project name Triton
            entry = ProjectFile(display, path, data)
            entry.module, entry.is_package = module_name(path)
            self.files[display] = entry
            self.by_module.setdefault(entry.module, entry)
        #: kernel file display -> launching file display -> dotted name -> kernel name
        self.kernel_refs: dict[str, dict[str, dict[str, str]]] = {}
        #: launching functions of each kernel file
        self.launchers: dict[str, set[FunctionKey]] = {}
        self.callers: dict[FunctionKey, dict[str, set[str]]] = {}
        self.unbounded: set[FunctionKey] = set()
        self._contexts: dict[str, ProjectContext | None] = {}
        self._build()

    # -- building --------------------------------------------------------------------------
    def _build(self) -> None:
        kernel_files = [
            f
            for f in self.files.values()
            if may_hold_kernels(f.data) and may_define_kernels(f.text) and f.parse() and f.kernels
        ]
        if not kernel_files:
            return
        names = {name for f in kernel_files for name in f.kernels}
        pattern = _mention(names, r"\b")  # a launch, or an import under another name
        for entry in self.files.values():
            if (entry.kernels or pattern.search(entry.text)) and entry.parse():
                self._record_launches(entry)
        frontier = {key for keys in self.launchers.values() for key in keys}
        seen = set(frontier)
        for _ in range(MAX_DEPTH):
            frontier = self._record_callers(frontier) - seen
            seen |= frontier

    def _record_launches(self, entry: ProjectFile) -> None:
        for function, dotted in entry.launches:
            target = self.locate(self.resolve(entry, dotted))
            if target is None or target[1] not in target[0].kernels:
                continue
            kernel_file, kernel = target
            self.launchers.setdefault(kernel_file.display, set())
            if function:
                self.launchers[kernel_file.display].add((entry.display, function))
            if entry is not kernel_file:
                refs = self.kernel_refs.setdefault(kernel_file.display, {})
                refs.setdefault(entry.display, {})[dotted] = kernel

    def _record_callers(self, functions: set[FunctionKey]) -> set[FunctionKey]:
        """Record who calls ``functions``; the calling functions, to follow next."""
        wanted: dict[str, set[FunctionKey]] = {}
        for key in functions:
            short = key[1].rsplit(".", 1)[-1]
            if "<" not in key[1] and short not in _UNSEARCHED:
                wanted.setdefault(short, set()).add(key)
        if not wanted:
            return set()
        pattern = _mention(set(wanted), r"\s*\(")
        found: set[FunctionKey] = set()
        counts: dict[FunctionKey, int] = {}
        for entry in self.files.values():
            if not pattern.search(entry.text) or not entry.parse():
                continue
            for caller, dotted in entry.calls:
                short = dotted.rsplit(".", 1)[-1]
                if short not in wanted:
                    continue
                key = self._function_key(entry, dotted, caller)
                if key is None or key not in wanted[short] or (entry.display, caller) == key:
                    continue
                counts[key] = counts.get(key, 0) + 1
                self.callers.setdefault(key, {}).setdefault(entry.display, set()).add(dotted)
                if caller:
                    found.add((entry.display, caller))
        self.unbounded |= {key for key, count in counts.items() if count > MAX_CALLS}
        return found

    def _function_key(self, entry: ProjectFile, dotted: str, caller: str) -> FunctionKey | None:
        """The project function a call's dotted name names (``self.helper`` inside a method of
        the same class included)."""
        if dotted.startswith("self.") and "." in caller:
            return entry.display, f"{caller.rsplit('.', 1)[0]}.{dotted[5:]}"
        target = self.locate(self.resolve(entry, dotted))
        return (target[0].display, target[1]) if target is not None else None

    # -- resolution ------------------------------------------------------------------------
    def resolve(self, entry: ProjectFile, dotted: str) -> str | None:
        """The fully qualified name a dotted name in ``entry`` refers to, through its imports
        and its own top-level definitions; None for anything else (a local, an attribute)."""
        first, _, rest = dotted.partition(".")
        if first in entry.imports:
            base = entry.imports[first]
        elif first in entry.defined:
            base = f"{entry.module}.{first}" if entry.module else first
        else:
            return None
        return f"{base}.{rest}" if rest else base

    def locate(self, qualified: str | None, depth: int = 0) -> tuple[ProjectFile, str] | None:
        """The file and the name in it that a qualified name refers to, following re-exports
        (``from .kernels import kern`` in a package's ``__init__``) a few steps."""
        if qualified is None or depth > 4:
            return None
        parts = qualified.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            entry = self.by_module.get(".".join(parts[:cut]))
            if entry is None:
                continue
            name = ".".join(parts[cut:])
            if not entry.parse():
                return None
            if name.split(".")[0] in entry.defined:
                return entry, name
            return self.locate(self.resolve(entry, name), depth + 1)
        return None

    # -- the facts of one kernel file --------------------------------------------------------
    def kernel_files(self) -> list[str]:
        """Files whose kernels are launched somewhere in the project."""
        return sorted(set(self.kernel_refs) | set(self.launchers))

    def context_for(self, display: str) -> ProjectContext | None:
        """What linting the kernel file ``display`` reads of the rest of the project."""
        if display not in self._contexts:
            self._contexts[display] = self._context_for(display)
        return self._contexts[display]

    def _context_for(self, display: str) -> ProjectContext | None:
        refs = self.kernel_refs.get(display, {})
        launchers = self.launchers.get(display, set())
        if not refs and not launchers:
            return None
        callers: dict[FunctionKey, dict[str, tuple[str, ...]]] = {}
        pending = list(launchers)
        seen: set[FunctionKey] = set()
        for _ in range(MAX_DEPTH):
            following: list[FunctionKey] = []
            for key in pending:
                if key in seen or key in self.unbounded or key not in self.callers:
                    continue
                seen.add(key)
                by_file = self.callers[key]
                callers[key] = {path: tuple(sorted(names)) for path, names in by_file.items()}
                following.extend(self._calling_functions(key))
            pending = following
        files = set(refs) | {path for by_file in callers.values() for path in by_file}
        files.discard(display)
        return ProjectContext(
            sources={path: self.files[path].data for path in sorted(files)},
            kernel_refs={path: dict(names) for path, names in refs.items()},
            callers=callers,
            unbounded=frozenset(k for k in self.unbounded if k in seen or k in launchers),
        )

    def _calling_functions(self, key: FunctionKey) -> list[FunctionKey]:
        found = []
        for path, names in self.callers[key].items():
            entry = self.files[path]
            found.extend(
                (path, caller)
                for caller, dotted in entry.calls
                if caller and dotted in names and self._function_key(entry, dotted, caller) == key
            )
        return found

    def dependents(self, display: str) -> set[str]:
        """Kernel files whose lint reads ``display`` (an editor re-lints them on save)."""
        found = set()
        for kernel_file in self.kernel_files():
            context = self.context_for(kernel_file)
            if context is not None and display in context.sources:
                found.add(kernel_file)
        return found


def _mention(names: set[str], after: str) -> re.Pattern[str]:
    alternatives = "|".join(sorted(map(re.escape, names), key=len, reverse=True))
    return re.compile(rf"\b(?:{alternatives}){after}")


def _package_of(entry: ProjectFile) -> list[str]:
    parts = entry.module.split(".") if entry.module else []
    return parts if entry.is_package else parts[:-1]


def _read(entry: ProjectFile, tree: ast.Module) -> None:
    """Fill ``entry`` from its tree: imports, top-level names, kernels, launches and calls."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    entry.imports[alias.asname] = alias.name
                else:
                    first = alias.name.split(".")[0]
                    entry.imports[first] = first
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = _package_of(entry)
                anchor = package[: len(package) - node.level + 1] if node.level > 1 else package
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                if alias.name != "*":
                    entry.imports[alias.asname or alias.name] = f"{base}.{alias.name}".strip(".")
    for stmt in _top_level(tree.body):
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            entry.defined.add(stmt.name)
        if isinstance(stmt, ast.FunctionDef) and any(map(_is_jit, stmt.decorator_list)):
            entry.kernels.add(stmt.name)
        elif isinstance(stmt, ast.Assign):
            entry.defined.update(t.id for t in stmt.targets if isinstance(t, ast.Name))
    _Calls(entry).visit(tree)


def _top_level(body: list[ast.stmt]) -> Iterable[ast.stmt]:
    for stmt in body:
        yield stmt
        if isinstance(stmt, ast.If | ast.Try):
            yield from _top_level(stmt.body + stmt.orelse + getattr(stmt, "finalbody", []))


def _is_jit(decorator: ast.expr) -> bool:
    node = decorator.func if isinstance(decorator, ast.Call) else decorator
    name = _dotted(node)
    return name is not None and "jit" in name.rsplit(".", 1)[-1]


def _dotted(node: ast.expr) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


class _Calls(ast.NodeVisitor):
    """Launches and calls, each with the qualified name of the function holding it."""

    def __init__(self, entry: ProjectFile) -> None:
        self.entry = entry
        self.scope: list[str] = []
        self.in_function: list[bool] = [False]
        self.seen: set[tuple[str, str]] = set()

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._enter(node.name, False, node)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        if node.name in self.entry.kernels and not self.scope:
            return  # kernels launch nothing
        self._enter(node.name, True, node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def _enter(self, name: str, function: bool, node: ast.AST) -> None:
        nested = self.in_function[-1]
        self.scope.append(f"<locals>.{name}" if nested else name)
        self.in_function.append(function or nested)
        self.generic_visit(node)
        self.scope.pop()
        self.in_function.pop()

    def visit_Call(self, node: ast.Call) -> None:
        function = ".".join(self.scope) if self.in_function[-1] else ""
        func = node.func
        if isinstance(func, ast.Subscript):
            launched = func.value
            if isinstance(launched, ast.Call) and launched.args:  # wrap_triton(kern)[grid]
                launched = launched.args[0]
            dotted = _dotted(launched)
            if dotted is not None:
                self.entry.launches.append((function, dotted))
        else:
            dotted = _dotted(func)
            if dotted is not None and (function, dotted) not in self.seen:
                self.seen.add((function, dotted))
                self.entry.calls.append((function, dotted))
        self.generic_visit(node)
