"""TL204: Python that Triton's code generator rejects inside a kernel."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from triton_lint.finding import Category, Finding, Severity
from triton_lint.model.kernel import Kernel
from triton_lint.model.provenance import Provenance
from triton_lint.model.structure import Structure
from triton_lint.model.tree import iter_children
from triton_lint.rules._unused import unused_as_information
from triton_lint.rules.base import Rule
from triton_lint.target import minor

_STATEMENTS: dict[type, str] = {
    cst.Break: "`break`",
    cst.Continue: "`continue`",
    cst.Try: "`try`",
    cst.TryStar: "`try`",
    cst.Raise: "`raise`",
    cst.Global: "`global`",
    cst.Nonlocal: "`nonlocal`",
    cst.Lambda: "`lambda`",
    cst.FunctionDef: "a nested `def`",
    cst.ClassDef: "a nested `class`",
    cst.Yield: "`yield`",
    cst.Await: "`await`",
}
_ALWAYS_REJECTED_COMPREHENSIONS = frozenset({cst.SetComp, cst.DictComp, cst.GeneratorExp})
_LOOPS = frozenset({cst.For, cst.While})
_ASSIGNMENTS = frozenset({cst.Assign, cst.AugAssign, cst.AnnAssign})


class UnsupportedConstruct(Rule):
    code = "TL204"
    name = "unsupported-construct"
    category = Category.CORRECTNESS
    severity = Severity.ERROR
    upstream_only = True
    summary = "Python construct that Triton cannot compile inside a kernel"
    rationale = """\
A `@triton.jit` function is not run by Python: Triton's code generator translates its syntax
tree, and it rejects many statements (`break`, `continue`, `try`, `raise`, `lambda`, nested
functions and classes, `return` inside a loop, `global`/`nonlocal`, `yield`; `with` and list
comprehensions before Triton 3.9), item and attribute assignment (tensors are immutable values),
set/dict comprehensions, generator expressions and nested comprehensions. The error only
appears at the first launch, often on a GPU machine in CI; this rule reports it at the line.
In a jit function that nothing in the indexed project launches or calls (a left-over kernel),
the error waits for a caller, and the finding is information."""
    fix = """\
Rewrite without the construct: carry a flag instead of `break`/`continue`, compute a new
tensor with `tl.where(cond, new, old)` instead of `x[i] = v`, move helpers to their own
`@triton.jit` function, and report errors with `tl.device_assert` / `tl.static_assert`."""
    bad = """\
import triton
import triton.language as tl


@triton.jit
def first_nonzero(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    for start in range(0, n, BLOCK):
        x = tl.load(x_ptr + start + offs, mask=start + offs < n, other=0)
        if tl.max(x, axis=0) > 0:
            break  # <- TL204
    acc = tl.zeros((BLOCK,), dtype=tl.int32)
    acc[0] = 1  # <- TL204
    tl.store(out_ptr + offs, acc)
"""
    good = """\
import triton
import triton.language as tl


@triton.jit
def count_nonzero(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.int32)
    for start in range(0, n, BLOCK):
        x = tl.load(x_ptr + start + offs, mask=start + offs < n, other=0)
        acc += tl.where(x != 0, 1, 0)
    tl.store(out_ptr + offs, acc)
"""

    def check_kernel(self, kernel: Kernel) -> Iterator[Finding]:
        yield from unused_as_information(kernel, self._findings(kernel))

    def _findings(self, kernel: Kernel) -> Iterator[Finding]:
        visitor = _Finder(minor(kernel.module.target_version))
        _walk(visitor, kernel.node.body)
        for node, what in visitor.found:
            if isinstance(node, cst.Raise) and _under_constexpr_branch(kernel, node):
                continue  # a static error: pruned unless that branch is chosen at compile time
            yield self.finding(
                kernel,
                node,
                f"{what} is not supported inside a Triton kernel: it fails to compile",
            )


def _walk(finder: _Finder, node: cst.CSTNode) -> None:
    if finder.on_visit(node):
        for child in iter_children(node):
            _walk(finder, child)
    finder.on_leave(node)


def _under_constexpr_branch(kernel: Kernel, node: cst.CSTNode) -> bool:
    """``node`` sits in an arm of an ``if`` whose test is known at compile time."""
    child = node
    for parent in kernel.facts(Structure).ancestors(node):
        if (
            isinstance(parent, cst.If)
            and child is not parent.test
            and (
                kernel.facts(Provenance).is_compile_time(parent.test)
                or _dtype_test(kernel, parent.test)
            )
        ):
            return True
        child = parent
    return False


def _dtype_test(kernel: Kernel, test: cst.BaseExpression) -> bool:
    """``dtype is tl.int32`` / ``x.dtype == tl.float16``: dtypes are compile-time objects."""
    if not isinstance(test, cst.Comparison):
        return False
    operands = [test.left, *(c.comparator for c in test.comparisons)]
    for operand in operands:
        path = kernel.module.aliases.resolve(operand)
        if path is not None and path.startswith("triton.language."):
            return True
    return False


class _Finder:
    """Collects rejected constructs; a few depend on the target version.

    Before 3.9 every comprehension and every `with` is rejected; 3.9 compiles single-clause
    list comprehensions over tuples and Triton-aware context managers.
    """

    def __init__(self, target: tuple[int, int]) -> None:
        self.found: list[tuple[cst.CSTNode, str]] = []
        self.loop_depth = 0
        self.modern = target >= (3, 9)

    def on_visit(self, node: cst.CSTNode) -> bool:
        # Node classes are concrete: `type(...)` lookups instead of `isinstance` on ABCMeta
        # classes, once per node of every kernel.
        kind = type(node)
        what = _STATEMENTS.get(kind)
        if what is not None:
            self.found.append((node, what))
            return kind not in (cst.FunctionDef, cst.ClassDef, cst.Lambda)
        if kind in _LOOPS:
            self.loop_depth += 1
        elif kind is cst.Return and self.loop_depth:
            self.found.append((node, "`return` inside a loop"))
        elif kind is cst.With and not self.modern:
            self.found.append((node, "`with`"))
        elif kind in _ALWAYS_REJECTED_COMPREHENSIONS:
            self.found.append((node, "a set/dict comprehension or generator expression"))
            return False
        elif kind is cst.ListComp:
            if not self.modern:
                self.found.append((node, "a list comprehension (before Triton 3.9)"))
                return False
            if node.for_in.inner_for_in is not None:
                self.found.append((node, "a nested comprehension (several `for` clauses)"))
                return False
        elif kind in _ASSIGNMENTS:
            targets = [t.target for t in node.targets] if kind is cst.Assign else [node.target]
            for target in targets:
                if isinstance(target, cst.Subscript):
                    self.found.append((node, "item assignment (`x[i] = ...`)"))
                elif isinstance(target, cst.Attribute):
                    self.found.append((node, "attribute assignment (`x.attr = ...`)"))
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if type(original_node) in _LOOPS:
            self.loop_depth -= 1
