"""Build the per-version Triton API tables from Triton's own wheels, without importing triton.

Usage::

    python -m triton_lint.api.build_tables --versions 3.3.1 3.9.0 --cache DIR

For each version the script downloads the cp311 manylinux x86_64 wheel (``pip download
--no-deps --only-binary=:all:``) into the cache, reads ``triton/language/**/*.py`` (and
``triton/_utils.py``) straight out of the zip, parses them with :mod:`ast` and writes
``triton_lint/api/data/triton-<major>.<minor>.json``.

Table layout (all keys short to keep the files small)::

    {"triton": "3.9.0", "version": "3.9",
     "modules": {"language": {"names": {name: kind}, "all": [...], "sigs": {name: [tok, ...]}},
                 "math": ..., "libdevice": ..., "libdevice_cuda": ..., "libdevice_hip": ...,
                 "extra_cuda": ..., "extra_hip": ..., "tensor": ..., "tensor_descriptor": ...},
     "deprecations": [{"module": ..., "name": ..., "param": ..., "message": ..., "how": ...}]}

``kind`` is ``f`` (function), ``c`` (class), ``v`` (value such as a dtype), ``m`` (module),
``p`` (property) or ``a`` (instance attribute). A signature is a list of tokens in
declaration order: ``name`` (required), ``name=`` (has a default), ``/`` (end of
positional-only), ``*`` (start of keyword-only), ``*args`` and ``**kwargs``. Parameters Triton
injects itself (``_builder``, ``_semantic``, ``_generator``) are dropped, and so is ``self``.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

INJECTED = frozenset({"_builder", "_semantic", "_generator"})
DATA_DIR = Path(__file__).resolve().parent / "data"
DEFAULT_CACHE = Path("/work/.cache/triton-wheels")
WARN_FUNCS = frozenset({"warn", "warn_once", "warn_deprecated"})
DEPRECATED_RE = re.compile(r"deprecat", re.IGNORECASE)
DOC_PARAM_RE = re.compile(
    r":param\s+(\w+)\s*:\s*(\*?deprecated\b.*?)(?=\n\s*:|\n\s*\n|\Z)",
    re.IGNORECASE | re.DOTALL,
)
DOC_FN_RE = re.compile(r"\b(deprecated|will be removed|been removed)\b", re.IGNORECASE)
RAISE_RE = re.compile(r"\b(deprecated|removed|no longer supported)\b", re.IGNORECASE)
# Python builtins the code generator maps onto these core functions inside kernels
PY_BUILTINS = {"builtin_max": "max", "builtin_min": "min"}


# --------------------------------------------------------------------------------------
# wheel access


def fetch_wheel(version: str, cache: Path) -> Path:
    """Return the cached wheel for ``version``, downloading it with pip if needed."""
    cache.mkdir(parents=True, exist_ok=True)
    found = sorted(cache.glob(f"triton-{version}-cp311-cp311-*manylinux*x86_64*.whl"))
    if found:
        return found[0]
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
    cmd += ["--python-version", "311", "--implementation", "cp", "--abi", "cp311"]
    for plat in (
        "manylinux_2_28_x86_64",
        "manylinux_2_27_x86_64",
        "manylinux_2_17_x86_64",
    ):
        cmd += ["--platform", plat]
    cmd += ["-d", str(cache), f"triton=={version}"]
    subprocess.run(cmd, check=True)
    found = sorted(cache.glob(f"triton-{version}-cp311-cp311-*manylinux*x86_64*.whl"))
    if not found:
        raise SystemExit(f"no cp311 manylinux x86_64 wheel for triton {version}")
    return found[0]


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


# --------------------------------------------------------------------------------------
# namespaces


def namespace(mod: Module) -> dict:
    names: dict[str, str] = {}
    sigs: dict[str, list[str]] = {}
    for name in sorted(mod.names()):
        hit = mod.resolve(name)
        if hit is None:
            continue
        where, b = hit
        if b.kind == "func":
            names[name] = "f"
            sigs[name] = signature(b.node)  # type: ignore[arg-type]
        elif b.kind == "class":
            names[name] = "c"
            sig = class_init(where, b.node)  # type: ignore[arg-type]
            if sig is not None:
                sigs[name] = sig
        elif b.kind == "module":
            names[name] = "m"
        else:
            names[name] = "v"
    out: dict = {"names": names, "sigs": sigs}
    if mod.all is not None:
        out["all"] = sorted(mod.all)
    return out


def class_members(src: Source, mod: Module, cls_name: str, member_fn_modules: list[str]) -> dict:
    """Public members of a class: methods, properties, instance attributes, and free
    functions attached with ``@_tensor_member_fn``."""
    names: dict[str, str] = {}
    sigs: dict[str, list[str]] = {}
    stubs: set[str] = set()
    hit = mod.resolve(cls_name)
    if hit is None or hit[1].kind != "class":
        return {"names": {}, "sigs": {}}
    chain: list[tuple[Module, ast.ClassDef]] = []
    where, node = hit[0], hit[1].node
    while node is not None and len(chain) < 10:
        chain.append((where, node))  # type: ignore[arg-type]
        nxt = None
        for base in node.bases:  # type: ignore[attr-defined]
            if isinstance(base, ast.Name):
                h = where.resolve(base.id)
                if h and h[1].kind == "class":
                    nxt = h
                    break
        where, node = (nxt[0], nxt[1].node) if nxt else (where, None)
    for _, cls in reversed(chain):  # base first, subclass overrides
        for st in cls.body:
            if isinstance(st, ast.FunctionDef):
                decs = decorator_names(st)
                if st.name == "__init__":
                    for sub in ast.walk(st):
                        if isinstance(sub, (ast.Assign, ast.AnnAssign)):
                            for t in sub.targets if isinstance(sub, ast.Assign) else [sub.target]:
                                if (
                                    isinstance(t, ast.Attribute)
                                    and isinstance(t.value, ast.Name)
                                    and t.value.id == "self"
                                ):
                                    names.setdefault(t.attr, "a")
                    continue
                if st.name.startswith("_"):
                    continue
                if any(
                    d in ("property", "cached_property", "functools.cached_property") for d in decs
                ):
                    names[st.name] = "p"
                    sigs.pop(st.name, None)
                elif any(d.endswith(".setter") for d in decs):
                    continue
                else:
                    names[st.name] = "f"
                    sigs[st.name] = signature(st, drop_first="staticmethod" not in decs)
                    if is_stub(st):
                        stubs.add(st.name)
                    else:
                        stubs.discard(st.name)
            elif isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name):
                if not st.target.id.startswith("_"):
                    names.setdefault(st.target.id, "a")
            elif isinstance(st, ast.Assign):
                for t in st.targets:
                    if isinstance(t, ast.Name) and not t.id.startswith("_"):
                        names[t.id] = "v"
    # free functions attached with @_tensor_member_fn win over the pytype stubs
    if cls_name == "tensor":
        for mname in member_fn_modules:
            m = src.module(mname)
            if m is None:
                continue
            for st in m.tree.body:
                if isinstance(st, ast.FunctionDef) and any(
                    d.split(".")[-1] == "_tensor_member_fn" for d in decorator_names(st)
                ):
                    names[st.name] = "f"
                    sigs[st.name] = signature(st, drop_first=True)
                    stubs.discard(st.name)
    out: dict = {
        "names": dict(sorted(names.items())),
        "sigs": dict(sorted(sigs.items())),
    }
    if stubs:
        out["stubs"] = sorted(stubs)  # declared for pytype only, never attached for real
    return out


# --------------------------------------------------------------------------------------
# deprecations


def _warn_message(mod: Module, call: ast.Call) -> str | None:
    f = call.func
    fname = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
    if fname not in WARN_FUNCS or not call.args:
        return None
    arg = call.args[0]
    text = mod._string(arg)
    if text is None and isinstance(arg, ast.Name):
        hit = mod.resolve(arg.id)
        if hit is not None:
            hmod, b = hit
            text = hmod._string(b.node) if b.kind == "value" else None
            if text is None:
                text = hmod.strings.get(arg.id)
    return text


def _param_of(fn: ast.FunctionDef, stack: list[ast.AST]) -> str | None:
    params = (
        {a.arg for a in fn.args.args + fn.args.kwonlyargs + fn.args.posonlyargs}
        - INJECTED
        - {"self"}
    )
    for node in reversed(stack):
        if isinstance(node, ast.If):
            used = [n.id for n in ast.walk(node.test) if isinstance(n, ast.Name) and n.id in params]
            if len(used) == 1:
                return used[0]
    return None


def _walk_with_stack(node: ast.AST, stack: list[ast.AST]):
    for child in ast.iter_child_nodes(node):
        yield child, stack
        if not isinstance(child, (ast.FunctionDef, ast.ClassDef)):
            yield from _walk_with_stack(child, [*stack, child])


def deprecations(src: Source, public: dict[str, dict[str, str]]) -> list[dict]:
    """Deprecation warnings, ``@deprecated`` decorators and ``:param x: Deprecated`` docs."""
    found: list[dict] = []
    lang_names = public["language"]
    mod_of_file = {
        "triton.language.core": "language",
        "triton.language.standard": "language",
        "triton.language.math": "math",
        "triton.language.random": "language",
        "triton.language.semantic": "language",
    }

    def functions(mod: Module):
        for st in mod.tree.body:
            if isinstance(st, ast.FunctionDef):
                yield None, st
            elif isinstance(st, ast.ClassDef):
                for sub in st.body:
                    if isinstance(sub, ast.FunctionDef):
                        yield st.name, sub

    for dotted, api_mod in mod_of_file.items():
        mod = src.module(dotted)
        if mod is None:
            continue
        callers: dict[str, list[tuple[str, str | None]]] = {}
        # who calls private helpers (e.g. _softmax_keep_dims_warning) and under which param
        for _cls, fn in functions(mod):
            for node, stack in _walk_with_stack(fn, []):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                    callers.setdefault(node.func.id, []).append((fn.name, _param_of(fn, stack)))
        for cls, fn in functions(mod):
            decs = decorator_names(fn)
            qual = f"{cls}.{fn.name}" if cls else fn.name
            for d in decs:
                if DEPRECATED_RE.search(d):
                    found.append(
                        {
                            "module": api_mod,
                            "name": qual,
                            "param": None,
                            "message": "",
                            "how": "decorator",
                        }
                    )
            for node, stack in _walk_with_stack(fn, []):
                how = "warning"
                if isinstance(node, ast.Call):
                    msg = _warn_message(mod, node)
                    if msg is None or not DEPRECATED_RE.search(msg):
                        continue
                elif (
                    isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and node.exc.args
                ):
                    msg = mod._string(node.exc.args[0])
                    if msg is None or not RAISE_RE.search(msg):
                        continue
                    how = "raises"
                else:
                    continue
                targets: list[tuple[str, str | None]] = [(fn.name, _param_of(fn, stack))]
                if fn.name.startswith("_") and fn.name in callers:
                    targets = callers[fn.name]
                for name, param in targets:
                    entry = {
                        "module": api_mod,
                        "name": name,
                        "param": param,
                        "message": msg,
                        "how": how,
                    }
                    if cls is None and name in PY_BUILTINS:
                        entry.update(module="builtins", name=PY_BUILTINS[name])
                    elif cls is None and name in public.get(api_mod, {}):
                        pass
                    elif cls is None and any(d.endswith("_tensor_member_fn") for d in decs):
                        entry["module"] = "tensor"  # only reachable as x.<name>() any more
                    elif cls is not None and fn.name in lang_names and dotted.endswith("semantic"):
                        entry["name"] = fn.name  # the semantic layer implements tl.<name>
                    else:
                        entry["name"] = f"{cls}.{fn.name}" if cls else name
                        entry["internal"] = True
                    if entry not in found:
                        found.append(entry)
            if cls is not None or fn.name not in public.get(api_mod, {}):
                continue
            doc = ast.get_docstring(fn) or ""
            for m in DOC_PARAM_RE.finditer(doc):
                text = " ".join(m.group(2).split())
                found.append(
                    {
                        "module": api_mod,
                        "name": fn.name,
                        "param": m.group(1),
                        "message": text,
                        "how": "docstring",
                    }
                )
            head = re.split(r"\n\s*:(?:param|type|return)", doc)[0]
            if DOC_FN_RE.search(head):
                sentence = next(
                    x
                    for x in re.split(r"(?<=\.)\s+", " ".join(head.split()))
                    if DOC_FN_RE.search(x)
                )
                found.append(
                    {
                        "module": api_mod,
                        "name": fn.name,
                        "param": None,
                        "message": sentence,
                        "how": "docstring",
                    }
                )
    return found


# --------------------------------------------------------------------------------------
# driver


def build(version: str, wheel: Path) -> dict:
    src = Source(wheel)
    lang = src.module("triton.language")
    assert lang is not None, "no triton/language/__init__.py in wheel"
    mods: dict[str, dict] = {}
    language = namespace(lang)
    # every triton.language submodule that gets imported is bound on the package
    for path in sorted(src.files):
        m = re.fullmatch(r"triton/language/([A-Za-z]\w*)(?:\.py|/__init__\.py)", path)
        if m and m.group(1) not in language["names"]:
            language["names"][m.group(1)] = "m"
    language["names"] = dict(sorted(language["names"].items()))
    mods["language"] = language
    for key, dotted in (
        ("math", "triton.language.math"),
        ("libdevice", "triton.language.extra.libdevice"),
        ("libdevice_cuda", "triton.language.extra.cuda.libdevice"),
        ("libdevice_hip", "triton.language.extra.hip.libdevice"),
        ("extra_cuda", "triton.language.extra.cuda"),
        ("extra_hip", "triton.language.extra.hip"),
    ):
        m = src.module(dotted)
        if m is not None:
            ns = namespace(m)
            if key in ("math", "libdevice", "libdevice_cuda", "libdevice_hip"):
                # drop helpers imported from elsewhere (core, wraps, typing names)
                ns["names"] = {
                    n: k
                    for n, k in ns["names"].items()
                    if not n.startswith("_")
                    and m.bindings.get(n, Binding("x")).kind in ("func", "class", "value", "alias")
                }
                ns["names"].pop("T", None)
                ns["sigs"] = {n: s for n, s in ns["sigs"].items() if n in ns["names"]}
            mods[key] = ns
    member_mods = [
        "triton.language.core",
        "triton.language.standard",
        "triton.language.math",
        "triton.language.random",
    ]
    core = src.module("triton.language.core")
    assert core is not None
    mods["tensor"] = class_members(src, core, "tensor", member_mods)
    for cls in ("tensor_descriptor", "_experimental_tensor_descriptor"):
        if cls in core.names():
            mods["tensor_descriptor"] = class_members(src, core, cls, [])
            break
    public = {k: v["names"] for k, v in mods.items()}
    major_minor = ".".join(version.split(".")[:2])
    return {
        "triton": version,
        "version": major_minor,
        "modules": mods,
        "deprecations": deprecations(src, public),
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--versions",
        nargs="+",
        required=True,
        help="full triton versions, e.g. 3.3.1 3.9.0",
    )
    ap.add_argument(
        "--cache",
        type=Path,
        default=DEFAULT_CACHE,
        help="wheel cache directory (outside the repo)",
    )
    ap.add_argument("--out", type=Path, default=DATA_DIR)
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for v in args.versions:
        table = build(v, fetch_wheel(v, args.cache))
        path = args.out / f"triton-{table['version']}.json"
        text = json.dumps(table, separators=(",", ":"), sort_keys=False)
        path.write_text(text + "\n")
        print(
            f"{path.name}: {len(text)} bytes, {len(table['modules']['language']['names'])} tl names"
        )


if __name__ == "__main__":
    main()
