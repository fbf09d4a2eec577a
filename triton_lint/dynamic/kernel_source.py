"""Which lines of a kernel load from or store to a pointer parameter (child only, CUDA backend).

A native run knows which tensor was touched out of bounds (its red zone changed) but not by
which instruction. The kernel's source says which accesses can reach that tensor: the loads,
stores and atomics whose pointer expression derives from the parameter the tensor was passed as.
Derivation is read flow-insensitively through assignments, which is enough to name the line.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
import traceback
from collections.abc import Callable, Iterable, Iterator
from functools import cache
from typing import Any

_READS = frozenset({"load"})
_WRITES = frozenset(
    {"store", "atomic_add", "atomic_max", "atomic_min", "atomic_xchg", "atomic_cas"}
)
_WRITES_ALSO = frozenset({"atomic_and", "atomic_or", "atomic_xor"})


def python_function(kernel: Any) -> Any:
    """The Python function under a JITFunction, Autotuner or Heuristics wrapper."""
    fn = kernel
    for _ in range(8):
        inner = getattr(fn, "fn", None)
        if inner is None:
            break
        fn = inner
    return fn


@cache
def _accesses(fn: Any) -> tuple[str, tuple[tuple[str, int, frozenset[str], int], ...]]:
    """(file, ((op, absolute line, names the pointer expression uses, column), ...))."""
    try:
        lines, start = inspect.getsourcelines(fn)
        path = inspect.getsourcefile(fn) or ""
    except (OSError, TypeError):
        return "", ()
    try:
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except SyntaxError:
        return path, ()
    derived: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            used = _names(node.value)
            for target in targets:
                for name in _names(target):
                    derived.setdefault(name, set()).update(used)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        op = node.func.attr
        if op not in _READS | _WRITES | _WRITES_ALSO:
            continue
        pointer = (
            node.args[0]
            if node.args
            else next((k.value for k in node.keywords if k.arg in ("pointer", "ptr")), None)
        )
        if pointer is None:
            continue
        # A method's object is what it accesses too (`desc.load(offsets)`: the descriptor).
        names = _names(pointer) | _names(node.func.value)
        line = start + node.lineno - 1
        found.append((op, line, frozenset(_closure(names, derived)), node.col_offset + 1))
    return path, tuple(sorted(found, key=lambda a: a[1]))


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _closure(names: set[str], derived: dict[str, set[str]]) -> set[str]:
    seen = set(names)
    todo = list(names)
    while todo:
        for source in derived.get(todo.pop(), ()):
            if source not in seen:
                seen.add(source)
                todo.append(source)
    return seen


def access_lines(kernel: Any, param: str, write: bool) -> tuple[str, list[int]]:
    """(file, lines) of the stores/atomics (`write`) or loads that can touch `param`."""
    path, accesses = _accesses(python_function(kernel))
    ops = _WRITES | _WRITES_ALSO if write else _READS
    return path, [line for op, line, names, _col in accesses if op in ops and param in names]


def access_names(fn: Any, line: int, col: int | None = None) -> set[str]:
    """Every name the pointer expressions of the accesses on `line` (at column `col`, when
    given) derive from."""
    _path, accesses = _accesses(python_function(fn))
    return {
        name
        for _op, at, names, c in accesses
        if at == line and (col is None or c == col)
        for name in names
    }


def compile_error_frame(
    error: BaseException, kernels: Iterable[Any]
) -> traceback.FrameSummary | None:
    """The kernel line a compilation error points at, as a frame. Natively a kernel is compiled,
    not run as Python, and Triton strips its code generator's frames from the traceback, so no
    frame names the line (under the interpreter one does). A `CompilationError` keeps the
    function's source and the AST node; on Triton 3.3 a name missing from `tl` fails earlier,
    in the dependency scan, whose frame holds the function's name and node. The launched
    `kernels`, or a `@triton.jit` helper in their globals, say where that function starts."""
    chain: list[BaseException] = []
    err: BaseException | None = error
    while err is not None and id(err) not in {id(e) for e in chain}:
        chain.append(err)
        err = err.__cause__ or err.__context__
    jits = list(_jit_functions(kernels))
    for err in reversed(chain):  # innermost first: a helper's line, not the call into it
        node = getattr(err, "node", None)
        src = getattr(err, "src", None)
        if isinstance(src, str) and hasattr(node, "lineno"):
            frame = _locate(jits, lambda jit, src=src: getattr(jit, "src", None) == src, node)
        else:
            frame = _locate_in_scan(err, jits)
        if frame is not None:
            return frame
    return None


def _locate_in_scan(err: BaseException, jits: list[Any]) -> traceback.FrameSummary | None:
    """The innermost frame of a visitor over a kernel's AST (Triton 3.3's dependency scan)."""
    tb = err.__traceback__
    found = None
    while tb is not None:
        local = tb.tb_frame.f_locals
        visitor, node = local.get("self"), local.get("node")
        if isinstance(visitor, ast.NodeVisitor) and hasattr(node, "lineno"):
            name, scope = getattr(visitor, "name", None), getattr(visitor, "globals", None)
            if isinstance(name, str) and isinstance(scope, dict):
                found = (name, scope, node)
        tb = tb.tb_next
    if found is None:
        return None
    name, scope, node = found
    return _locate(
        jits,
        lambda jit: (
            python_function(jit).__name__ == name
            and getattr(python_function(jit), "__globals__", None) is scope
        ),
        node,
    )


def _locate(
    jits: list[Any], matches: Callable[[Any], bool], node: Any
) -> traceback.FrameSummary | None:
    """The file line of `node` (numbered from the `def` line) in the first JIT function that
    `matches`."""
    for jit in jits:
        if not matches(jit):
            continue
        fn = python_function(jit)
        try:
            lines, start = inspect.getsourcelines(fn)
            path = inspect.getsourcefile(fn) or ""
        except (OSError, TypeError):
            continue
        def_at = next(
            (i for i, ln in enumerate(lines) if ln.lstrip().startswith(("def ", "async def "))), 0
        )
        line = start + def_at + int(node.lineno) - 1
        return traceback.FrameSummary(path, line, fn.__name__, lookup_line=False)
    return None


def _jit_functions(kernels: Iterable[Any]) -> Iterator[Any]:
    """Each launched kernel's JIT function, then the JIT functions its module defines or imports."""
    seen: set[int] = set()
    roots = []
    for k in kernels:
        jit = k
        while getattr(jit, "fn", None) is not None and not hasattr(jit, "src"):
            jit = jit.fn  # Autotuner / Heuristics -> JITFunction
        if id(jit) not in seen:
            seen.add(id(jit))
            roots.append(jit)
            yield jit
    for jit in roots:
        for v in getattr(python_function(jit), "__globals__", {}).values():
            if hasattr(v, "src") and hasattr(v, "fn") and id(v) not in seen:
                seen.add(id(v))
                yield v
