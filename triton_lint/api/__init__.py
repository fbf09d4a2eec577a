"""Per-version tables of Triton's kernel-language API, read from Triton's own source.

The tables live in ``data/triton-<major>.<minor>.json`` and are produced by
:mod:`triton_lint.api.build_tables`; nothing here imports triton.

Modules a table knows about: ``language`` (``tl.*``), ``math`` (``tl.math.*``),
``libdevice`` (``triton.language.extra.libdevice``, the portable stub that is dispatched to
the backend's module at compile time), ``libdevice_cuda``, ``libdevice_hip``, ``extra_cuda``,
``extra_hip``, ``tensor`` (methods/attributes of a ``tl.tensor``) and ``tensor_descriptor``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path

from triton_lint.api.installed import distribution_version

__all__ = [
    "MODULES",
    "ApiTable",
    "Deprecation",
    "Param",
    "Signature",
    "available_versions",
    "installed_triton_version",
    "load_table",
]

DATA_DIR = Path(__file__).resolve().parent / "data"
MODULES = (
    "language",
    "math",
    "libdevice",
    "libdevice_cuda",
    "libdevice_hip",
    "extra_cuda",
    "extra_hip",
    "tensor",
    "tensor_descriptor",
)
_KINDS = {
    "f": "function",
    "c": "class",
    "v": "value",
    "m": "module",
    "p": "property",
    "a": "attribute",
}


def _key(version: str) -> tuple[int, int]:
    m = re.match(r"\s*(\d+)\.(\d+)", version)
    if not m:
        raise ValueError(f"not a Triton version: {version!r}")
    return int(m.group(1)), int(m.group(2))


@cache
def available_versions() -> list[str]:
    """The minor versions with a table, oldest first, e.g. ``["3.3", ..., "3.9"]``."""
    found = [p.stem.removeprefix("triton-") for p in DATA_DIR.glob("triton-*.json")]
    return sorted(found, key=_key)


def installed_triton_version() -> str | None:
    """The installed triton distribution's version (metadata only, never imports triton)."""
    return distribution_version("triton")


@dataclass(frozen=True)
class Param:
    """One user-facing parameter; ``kind`` uses :class:`inspect.Parameter` kind names."""

    name: str
    kind: str  # POSITIONAL_ONLY, POSITIONAL_OR_KEYWORD, VAR_POSITIONAL, KEYWORD_ONLY, VAR_KEYWORD
    has_default: bool = False


@dataclass(frozen=True)
class Signature:
    """A callable's parameters without the ones Triton injects (``_semantic`` & co) or ``self``."""

    params: tuple[Param, ...]

    @classmethod
    def from_tokens(cls, toks: list[str]) -> Signature:
        posonly = toks.index("/") if "/" in toks else 0
        out: list[Param] = []
        kwonly = False
        for i, t in enumerate(toks):
            if t == "/":
                continue
            if t == "*":
                kwonly = True
            elif t.startswith("**"):
                out.append(Param(t[2:], "VAR_KEYWORD"))
            elif t.startswith("*"):
                out.append(Param(t[1:], "VAR_POSITIONAL"))
                kwonly = True
            else:
                kind = "KEYWORD_ONLY" if kwonly else "POSITIONAL_OR_KEYWORD"
                if i < posonly:
                    kind = "POSITIONAL_ONLY"
                out.append(Param(t.rstrip("="), kind, t.endswith("=")))
        return cls(tuple(out))

    @property
    def var_args(self) -> bool:
        """Takes ``*args``."""
        return any(p.kind == "VAR_POSITIONAL" for p in self.params)

    @property
    def var_kwargs(self) -> bool:
        """Takes ``**kwargs``."""
        return any(p.kind == "VAR_KEYWORD" for p in self.params)

    @property
    def names(self) -> list[str]:
        """Named parameters in order (``*args``/``**kwargs`` excluded)."""
        return [p.name for p in self.params if p.kind not in ("VAR_POSITIONAL", "VAR_KEYWORD")]

    @property
    def keyword_names(self) -> list[str]:
        """Parameters that may be passed by keyword."""
        return [p.name for p in self.params if p.kind in ("POSITIONAL_OR_KEYWORD", "KEYWORD_ONLY")]

    @property
    def max_positional(self) -> int | None:
        """How many positional arguments fit, ``None`` if unbounded (``*args``)."""
        if self.var_args:
            return None
        return sum(p.kind in ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD") for p in self.params)

    def accepts_keyword(self, name: str) -> bool:
        """Whether ``name=...`` is a valid keyword argument."""
        return name in self.keyword_names or self.var_kwargs

    def __str__(self) -> str:
        parts = []
        for p in self.params:
            star = {"VAR_POSITIONAL": "*", "VAR_KEYWORD": "**"}.get(p.kind, "")
            parts.append(star + p.name + ("=..." if p.has_default else ""))
        return "(" + ", ".join(parts) + ")"


@dataclass(frozen=True)
class Deprecation:
    """A deprecation or removal found in Triton's source for one version.

    ``how`` is ``warning`` (a deprecation warning is emitted), ``raises`` (the API is still
    there but raises because it was removed), ``docstring`` or ``decorator``. ``since`` is the
    oldest tabled version from which this entry is continuously present.
    """

    module: str
    name: str
    param: str | None
    message: str
    how: str
    since: str
    internal: bool = False

    @property
    def removed(self) -> bool:
        """The source says the API no longer works (it raises)."""
        return self.how == "raises"


class ApiTable:
    """The API of one Triton minor version."""

    def __init__(self, data: dict) -> None:
        self.version: str = data["version"]
        self.triton_version: str = data["triton"]
        self._mods: dict[str, dict] = data["modules"]
        self._deps: list[dict] = data["deprecations"]
        # Rules ask the same questions for every call site; the answers never change.
        self._names: dict[str, frozenset[str]] = {}
        self._signatures: dict[tuple[str, str], Signature | None] = {}
        self._removed_params: dict[tuple[str, str], dict[str, str]] = {}

    def __repr__(self) -> str:
        return f"ApiTable({self.triton_version})"

    def _mod(self, module: str) -> dict:
        if module not in MODULES:
            raise KeyError(f"unknown module {module!r}; expected one of {MODULES}")
        return self._mods.get(module, {"names": {}, "sigs": {}})

    def names(self, module: str) -> frozenset[str]:
        """Every real name of ``module`` (type stubs that do nothing are left out)."""
        if module not in self._names:
            m = self._mod(module)
            self._names[module] = frozenset(m["names"]) - frozenset(m.get("stubs", ()))
        return self._names[module]

    def has_name(self, module: str, name: str) -> bool:
        """Whether ``module.name`` exists and works in this version."""
        return name in self.names(module)

    def is_stub(self, module: str, name: str) -> bool:
        """A tensor method declared only as a type stub (e.g. ``x.sort()`` in 3.4+): it exists
        as an attribute but does nothing and returns ``None``."""
        return name in self._mod(module).get("stubs", ())

    def kind(self, module: str, name: str) -> str | None:
        """``function``, ``class``, ``value``, ``module``, ``property``, ``attribute`` or None."""
        k = self._mod(module)["names"].get(name)
        return _KINDS.get(k) if k else None

    def public_names(self, module: str) -> frozenset[str]:
        """``__all__`` where the module defines one, else the names not starting with ``_``."""
        m = self._mod(module)
        if "all" in m:
            return frozenset(m["all"])
        return frozenset(n for n in self.names(module) if not n.startswith("_"))

    def signature(self, module: str, name: str) -> Signature | None:
        """Parameters of a callable (classes: their constructor), or None if unknown."""
        key = (module, name)
        if key not in self._signatures:
            toks = self._mod(module)["sigs"].get(name)
            self._signatures[key] = None if toks is None else Signature.from_tokens(toks)
        return self._signatures[key]

    @cached_property
    def _deprecations(self) -> list[Deprecation]:
        older = [load_table(v) for v in available_versions() if _key(v) < _key(self.version)]
        out = []
        for d in self._deps:
            ident = (d["module"], d["name"], d["param"], d["how"])
            since = self.version
            for t in reversed(older):
                if any((e["module"], e["name"], e["param"], e["how"]) == ident for e in t._deps):
                    since = t.version
                else:
                    break
            out.append(
                Deprecation(
                    d["module"],
                    d["name"],
                    d["param"],
                    d["message"],
                    d["how"],
                    since,
                    d.get("internal", False),
                )
            )
        return out

    def deprecations(
        self, module: str | None = None, name: str | None = None, *, internal: bool = False
    ) -> list[Deprecation]:
        """Deprecations in this version, optionally for one ``module``/``name``; entries about
        Triton internals (not user-callable) only with ``internal=True``."""
        return [
            d
            for d in self._deprecations
            if (module is None or d.module == module)
            and (name is None or d.name == name)
            and (internal or not d.internal)
        ]

    def removed_since(self, name: str, module: str = "language") -> str | None:
        """The version that removed ``module.name``, if it is gone in this version.

        Either the name disappeared (present in an older table, absent here) or it is still
        defined but raises because it was removed (e.g. ``tl.make_block_ptr`` in 3.9)."""
        if self.has_name(module, name):
            for d in self.deprecations(module, name):
                if d.removed and d.param is None:
                    return d.since
            return None
        since = None
        for v in available_versions():
            if _key(v) > _key(self.version):
                break
            present = load_table(v).has_name(module, name)
            if present:
                since = None
            elif since is None and _seen_before(module, name, v):
                since = v
        return since

    def removed_later(self, module: str, name: str, param: str | None = None) -> str | None:
        """The first tabled release after this one that removes ``module.name`` (or its
        keyword ``param``): a deprecation here that breaks on upgrade to that release."""
        for v in available_versions():
            if _key(v) <= _key(self.version):
                continue
            later = load_table(v)
            if param is None and later.removed_since(name, module) is not None:
                return v
            if param is not None and (
                param in later.removed_params(module, name)
                or any(d.removed and d.param == param for d in later.deprecations(module, name))
            ):
                return v
        return None

    def removed_params(self, module: str, name: str) -> dict[str, str]:
        """Keyword parameters an older version accepted and this one does not, mapped to the
        version that dropped them (e.g. ``tl.load``'s ``boundary_check`` in 3.9)."""
        key = (module, name)
        if key not in self._removed_params:
            self._removed_params[key] = self._find_removed_params(module, name)
        return dict(self._removed_params[key])

    def _find_removed_params(self, module: str, name: str) -> dict[str, str]:
        sig = self.signature(module, name)
        if sig is None or sig.var_kwargs:
            return {}
        now = set(sig.keyword_names)
        out: dict[str, str] = {}
        prev: set[str] = set()
        for v in available_versions():
            if _key(v) > _key(self.version):
                break
            s = load_table(v).signature(module, name)
            cur = set(s.keyword_names) if s is not None else set()
            for p in prev - cur:
                if p not in now:
                    out.setdefault(p, v)
            prev = cur
        return out


def _seen_before(module: str, name: str, version: str) -> bool:
    return any(
        load_table(v).has_name(module, name)
        for v in available_versions()
        if _key(v) < _key(version)
    )


@cache
def _load(minor: str) -> ApiTable:
    with open(DATA_DIR / f"triton-{minor}.json", encoding="utf-8") as f:
        return ApiTable(json.load(f))


def load_table(version: str) -> ApiTable:
    """The table for ``version`` ("3.9", "3.9.0", "3.10.0+git..."): the newest tabled minor
    version at or below it. Raises ``ValueError`` below the oldest table (3.3)."""
    want = _key(version)
    best = None
    for v in available_versions():
        if _key(v) <= want:
            best = v
    if best is None:
        raise ValueError(
            f"triton {version} is older than the oldest supported API table "
            f"({available_versions()[0]}); triton-lint supports triton >= 3.3"
        )
    return _load(best)
