"""Reading a Triton wheel without importing it: its modules parsed with :mod:`ast`, the names
each binds, and the signatures of its functions (for `build_tables`)."""

from __future__ import annotations

import ast
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

INJECTED = frozenset({"_builder", "_semantic", "_generator"})
# Python builtins the code generator maps onto these core functions inside kernels
PY_BUILTINS = {"builtin_max": "max", "builtin_min": "min"}


class Source:
    """The Python files of one wheel, parsed lazily by dotted module name."""

    def __init__(self, wheel: Path) -> None:
        self.zip = zipfile.ZipFile(wheel)
        self.files = {n for n in self.zip.namelist() if n.endswith(".py")}
        self._mods: dict[str, Module | None] = {}

    def path_of(self, dotted: str) -> str | None:
        base = dotted.replace(".", "/")
        for cand in (base + ".py", base + "/__init__.py"):
            if cand in self.files:
                return cand
        return None

    def is_package(self, dotted: str) -> bool:
        return (dotted.replace(".", "/") + "/__init__.py") in self.files

    def module(self, dotted: str) -> Module | None:
        if dotted not in self._mods:
            path = self.path_of(dotted)
            self._mods[dotted] = None
            if path is not None:
                text = self.zip.read(path).decode("utf-8")
                self._mods[dotted] = Module(self, dotted, ast.parse(text), self.is_package(dotted))
        return self._mods[dotted]


# --------------------------------------------------------------------------------------
# one module's top-level bindings


@dataclass
class Binding:
    kind: str  # func | class | value | alias | import | module | star
    node: ast.AST | None = None
    target: tuple[str, str | None] | None = None  # (module, attr) for import/module/alias


@dataclass
class Module:
    src: Source
    name: str
    tree: ast.Module
    is_pkg: bool
    bindings: dict[str, Binding] = field(default_factory=dict)
    all: list[str] | None = None
    strings: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._scan(self.tree.body)

    def absolute(self, level: int, mod: str | None) -> str:
        if level == 0:
            return mod or ""
        parts = self.name.split(".")
        if not self.is_pkg:
            parts = parts[:-1]
        if level > 1:
            parts = parts[: len(parts) - (level - 1)]
        return ".".join(parts + ([mod] if mod else []))

    def _scan(self, body: list[ast.stmt]) -> None:
        for st in body:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.bindings[st.name] = Binding("func", st)
            elif isinstance(st, ast.ClassDef):
                self.bindings[st.name] = Binding("class", st)
            elif isinstance(st, ast.ImportFrom):
                base = self.absolute(st.level, st.module)
                for a in st.names:
                    if a.name == "*":
                        self.bindings[f"*{base}"] = Binding("star", target=(base, None))
                        continue
                    sub = f"{base}.{a.name}"
                    if self.src.path_of(sub) is not None:
                        self.bindings[a.asname or a.name] = Binding("module", target=(sub, None))
                    else:
                        self.bindings[a.asname or a.name] = Binding("import", target=(base, a.name))
                    if a.name == "__all__":
                        mod = self.src.module(base)
                        if mod is not None and mod.all is not None:
                            self.strings[a.asname or a.name] = mod.all  # type: ignore[assignment]
                # importing a submodule binds it on its parent package
                if st.level and base.startswith(self.name + ".") and self.is_pkg:
                    first = base[len(self.name) + 1 :].split(".")[0]
                    self.bindings.setdefault(
                        first, Binding("module", target=(f"{self.name}.{first}", None))
                    )
            elif isinstance(st, ast.Import):
                for a in st.names:
                    self.bindings[a.asname or a.name.split(".")[0]] = Binding(
                        "module", target=(a.name, None)
                    )
            elif isinstance(st, (ast.Assign, ast.AnnAssign)):
                targets = st.targets if isinstance(st, ast.Assign) else [st.target]
                value = st.value
                for t in targets:
                    if not isinstance(t, ast.Name):
                        continue
                    if t.id == "__all__":
                        self.all = self._literal_list(value)
                        continue
                    if isinstance(value, ast.Name):
                        self.bindings[t.id] = Binding("alias", value, target=(self.name, value.id))
                    else:
                        self.bindings[t.id] = Binding("value", value)
                    text = self._string(value)
                    if text is not None:
                        self.strings[t.id] = text
            elif isinstance(st, ast.Delete):
                for t in st.targets:
                    if isinstance(t, ast.Name):
                        self.bindings.pop(t.id, None)
            elif isinstance(st, ast.If):
                self._scan(st.body)
                self._scan(st.orelse)
            elif isinstance(st, ast.Try):
                self._scan(st.body)
                for h in st.handlers:
                    self._scan(h.body)

    def _string(self, node: ast.AST | None) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            a, b = self._string(node.left), self._string(node.right)
            return a + b if a is not None and b is not None else None
        if isinstance(node, ast.JoinedStr):
            out = []
            for v in node.values:
                if isinstance(v, ast.Constant):
                    out.append(str(v.value))
                else:
                    out.append("{" + ast.unparse(v.value) + "}")  # type: ignore[attr-defined]
            return "".join(out)
        return None

    def _literal_list(self, node: ast.AST | None) -> list[str] | None:
        if isinstance(node, (ast.List, ast.Tuple)):
            out: list[str] = []
            for e in node.elts:
                if isinstance(e, ast.Constant) and isinstance(e.value, str):
                    out.append(e.value)
                elif isinstance(e, ast.Starred) and isinstance(e.value, ast.Name):
                    out.extend(self.strings.get(e.value.id, []) or [])
            return out
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            a, b = self._literal_list(node.left), self._literal_list(node.right)
            if a is not None and b is not None:
                return a + b
        return None

    def names(self) -> dict[str, Binding]:
        """Every name bound at top level, star imports expanded."""
        out: dict[str, Binding] = {}
        for name, b in self.bindings.items():
            if b.kind == "star":
                mod = self.src.module(b.target[0])  # type: ignore[index]
                if mod is None:
                    continue
                star = (
                    mod.all
                    if mod.all is not None
                    else [n for n in mod.names() if not n.startswith("_")]
                )
                for n in star:
                    out[n] = Binding("import", target=(mod.name, n))
            else:
                out[name] = b
        return out

    def resolve(self, name: str, depth: int = 0) -> tuple[Module, Binding] | None:
        """Follow imports and aliases to the statement that really defines ``name``."""
        b = self.names().get(name)
        if b is None or depth > 20:
            return None
        if b.kind == "import":
            mod = self.src.module(b.target[0])  # type: ignore[index]
            if mod is None:
                return (
                    self,
                    Binding("value"),
                )  # defined outside the wheel's Python (e.g. _C)
            hit = mod.resolve(b.target[1], depth + 1)  # type: ignore[arg-type, index]
            return hit or (self, Binding("value"))
        if b.kind == "alias" and b.target and b.target[1] != name:
            hit = self.resolve(b.target[1], depth + 1)  # type: ignore[arg-type]
            return hit or (self, Binding("value"))
        return (self, b)


# --------------------------------------------------------------------------------------
# signatures


def decorator_names(fn: ast.FunctionDef | ast.ClassDef) -> list[str]:
    out = []
    for d in fn.decorator_list:
        d = d.func if isinstance(d, ast.Call) else d
        out.append(ast.unparse(d))
    return out


def signature(fn: ast.FunctionDef | ast.AsyncFunctionDef, drop_first: bool = False) -> list[str]:
    a = fn.args
    positional = list(a.posonlyargs) + list(a.args)
    defaults_from = len(positional) - len(a.defaults)
    toks: list[str] = []
    for i, arg in enumerate(positional):
        if drop_first and i == 0:
            continue
        if arg.arg in INJECTED:
            continue
        toks.append(arg.arg + ("=" if i >= defaults_from else ""))
        if a.posonlyargs and i == len(a.posonlyargs) - 1:
            toks.append("/")
    if a.vararg is not None:
        toks.append("*" + a.vararg.arg)
    kwonly = [
        (k, d) for k, d in zip(a.kwonlyargs, a.kw_defaults, strict=True) if k.arg not in INJECTED
    ]
    if kwonly and a.vararg is None:
        toks.append("*")
    for k, d in kwonly:
        toks.append(k.arg + ("=" if d is not None else ""))
    if a.kwarg is not None:
        toks.append("**" + a.kwarg.arg)
    return toks


def class_init(mod: Module, cls: ast.ClassDef, depth: int = 0) -> list[str] | None:
    for st in cls.body:
        if isinstance(st, ast.FunctionDef) and st.name == "__init__":
            return signature(st, drop_first=True)
    for base in cls.bases:
        if isinstance(base, ast.Name) and depth < 10:
            hit = mod.resolve(base.id)
            if hit and hit[1].kind == "class":
                return class_init(hit[0], hit[1].node, depth + 1)  # type: ignore[arg-type]
    return None


def is_stub(fn: ast.FunctionDef) -> bool:
    body = [
        s
        for s in fn.body
        if not (
            isinstance(s, ast.Expr)
            and isinstance(s.value, ast.Constant)
            and isinstance(s.value.value, str)
        )
    ]
    return (
        len(body) == 1
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and body[0].value.value is Ellipsis
    )
