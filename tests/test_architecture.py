"""The package's shape: no import cycle, small modules and classes, no private name imported
from another module, the model's data layer below its analyses, and analyses built only when a
rule asks for them."""

from __future__ import annotations

import ast
from pathlib import Path

from triton_lint.engine import lint_text
from triton_lint.model.dependencies import Dependencies
from triton_lint.model.lanes import MaskedLanes
from triton_lint.model.provenance import Provenance
from triton_lint.model.reaching import Reaching
from triton_lint.model.structure import Structure
from triton_lint.rules import all_rules

PACKAGE = Path(__file__).resolve().parent.parent / "triton_lint"
MAX_MODULE_LINES = 500
MAX_CLASS_LINES = 300
#: What the model's data module may import from the model: syntax helpers, no analysis.
SYNTAX_HELPERS = {"evaluate", "names", "positions", "project", "tree"}


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path) -> list[tuple[str, str]]:
    """(imported module, imported name or "") for every import of this package's modules,
    wherever it sits (top level, function bodies, ``if TYPE_CHECKING:``)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(alias.name, "") for alias in node.names if alias.name in MODULES]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                if submodule in MODULES:  # `from pkg import module`: an edge to the module
                    found.append((submodule, ""))
                elif base in MODULES:
                    found.append((base, alias.name))
    return found


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle_inside_the_package():
    graph = {name: {m for m, _ in _imports(name, path)} - {name} for name, path in MODULES.items()}
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_private_name_is_imported_from_another_module():
    private = [
        f"{name} imports {alias} from {module}"
        for name, path in MODULES.items()
        for module, alias in _imports(name, path)
        if alias.startswith("_") and not alias.startswith("__")
    ]
    assert private == []


def test_modules_and_classes_stay_small():
    too_big = []
    for name, path in MODULES.items():
        text = path.read_text()
        if text.count("\n") > MAX_MODULE_LINES:
            too_big.append(f"{name}: {text.count(chr(10))} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef):
                size = (node.end_lineno or node.lineno) - node.lineno + 1
                if size > MAX_CLASS_LINES:
                    too_big.append(f"{name}.{node.name}: {size} lines")
    assert too_big == []


def test_the_model_data_layer_imports_no_analysis():
    imported = {
        m for m, _ in _imports("triton_lint.model.kernel", MODULES["triton_lint.model.kernel"])
    }
    model = {m.rpartition(".")[2] for m in imported if m.startswith("triton_lint.model.")}
    assert model <= SYNTAX_HELPERS


KERNEL = """
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    if BLOCK > 16:
        print("big")
    tl.store(y_ptr + offs, tl.sum(x, axis=0))


def launch(x, y):
    k[(triton.cdiv(x.numel(), 128),)](x, y, x.numel(), BLOCK=128)
"""


def _built_after(select: set[str]) -> tuple[set[type], bool]:
    """The analyses built for the kernel, and whether its launches were looked for."""
    rules = [rule for rule in all_rules() if rule.code in select]
    result = lint_text("k.py", KERNEL, rules, "3.9")
    assert result.model is not None
    return set(result.model.kernels[0]._facts), result.model._launches is not None


def test_a_cheap_rule_builds_no_dataflow_and_a_reduction_rule_does():
    facts, launches = _built_after({"TL401"})
    assert facts <= {Provenance, Reaching, Structure} and not launches
    facts, launches = _built_after({"TL103", "TL209"})
    assert {MaskedLanes, Dependencies} <= facts and launches
