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
from pathlib import Path

from triton_lint.api.deprecations import deprecations
from triton_lint.api.wheel_source import (
    Binding,
    Module,
    Source,
    class_init,
    decorator_names,
    is_stub,
    signature,
)

DATA_DIR = Path(__file__).resolve().parent / "data"
DEFAULT_CACHE = Path("/work/.cache/triton-wheels")


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
