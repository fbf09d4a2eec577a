"""Deprecations declared in Triton's source: ``warn``/``warn_deprecated`` calls, ``:param x:
deprecated`` docstrings and raises that say a name or parameter was removed (for
`build_tables`)."""

from __future__ import annotations

import ast
import re

from triton_lint.api.wheel_source import INJECTED, PY_BUILTINS, Module, Source, decorator_names

WARN_FUNCS = frozenset({"warn", "warn_once", "warn_deprecated"})
DEPRECATED_RE = re.compile(r"deprecat", re.IGNORECASE)
DOC_PARAM_RE = re.compile(
    r":param\s+(\w+)\s*:\s*(\*?deprecated\b.*?)(?=\n\s*:|\n\s*\n|\Z)",
    re.IGNORECASE | re.DOTALL,
)
DOC_FN_RE = re.compile(r"\b(deprecated|will be removed|been removed)\b", re.IGNORECASE)
RAISE_RE = re.compile(r"\b(deprecated|removed|no longer supported)\b", re.IGNORECASE)


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
