"""Poisoned masked-off lanes for native GPU runs (child only, CUDA backend).

On a GPU a masked load without `other=` leaves its masked-off lanes undefined (they read 0 on
current NVIDIA parts, which hides the bug). To see whether a kernel depends on them, `tl.load` is
wrapped at compile time: while poisoning is on, a load with a mask and no `other=` gets
`other=<poison>` (inf, NaN, 7 or -inf in the element type), optionally only at chosen lines.
Every such load the compiler meets is recorded as a site. Switching poison on or off recompiles:
the in-memory caches of the launched kernels are cleared and the on-disk cache is redirected to
a directory per poison setting, so a poisoned binary is never reused for a plain run.
"""

from __future__ import annotations

import functools
import math
import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from triton_lint.dynamic.backend import Site


class Poisoner:
    """Owns the `tl.load` wrapper, the poison setting and the recorded masked-load sites."""

    def __init__(self) -> None:
        import triton.language as tl
        import triton.language.core as core

        self.setting: tuple[str, frozenset[int] | None] | None = None
        #: Masked loads without `other=` the compiler has met: site -> element type name.
        self.sites: dict[Site, str] = {}
        self._base_cache = os.environ.get("TRITON_CACHE_DIR")
        self._root = tempfile.mkdtemp(prefix="tl-poison-cache-")
        orig = core.load
        poisoner = self

        @functools.wraps(orig)
        def load(pointer: Any, mask: Any = None, other: Any = None, *args: Any, **kw: Any) -> Any:
            if mask is not None and other is None:
                site = _compile_site()
                elt = _element_type(pointer)
                if site is not None and elt is not None:
                    poisoner.sites[site] = str(elt)
                    other = poisoner.value_for(site, elt)
                    if other is not None and getattr(orig, "_tl_bounds", False):
                        kw["_tl_poisoned"] = True  # lanes the bounds check turns off read 0
            return orig(pointer, mask, other, *args, **kw)

        core.load = load
        tl.load = load

    def value_for(self, site: Site, elt: Any) -> Any:
        """The poison for one load (None: leave the load alone)."""
        if self.setting is None:
            return None
        kind, lines = self.setting
        if lines is not None and site[1] not in lines:
            return None
        return poison_value(kind, elt)

    @contextmanager
    def active(
        self, setting: tuple[str, frozenset[int] | None] | None, clear: Any
    ) -> Iterator[None]:
        """Compile and run with `setting`; `clear()` drops compiled kernels on entry and exit."""
        if setting is None:
            yield
            return
        self.setting = setting
        kind, lines = setting
        tag = kind + ("-" + "-".join(map(str, sorted(lines))) if lines is not None else "")
        os.environ["TRITON_CACHE_DIR"] = os.path.join(self._root, tag)
        clear()
        try:
            yield
        finally:
            self.setting = None
            if self._base_cache is None:
                os.environ.pop("TRITON_CACHE_DIR", None)
            else:
                os.environ["TRITON_CACHE_DIR"] = self._base_cache
            clear()


def _compile_site() -> Site | None:
    """The kernel line the code generator is visiting (its frame holds the current node)."""
    f = sys._getframe(2)
    while f is not None:
        gen = f.f_locals.get("self")
        node = getattr(gen, "cur_node", None)
        if node is not None and hasattr(gen, "begin_line") and hasattr(node, "lineno"):
            fn = getattr(gen, "jit_fn", None)
            name = getattr(getattr(fn, "fn", None), "__name__", None) or "?"
            return (str(gen.file_name), int(gen.begin_line) + int(node.lineno), name)
        f = f.f_back
    return None


def _element_type(pointer: Any) -> Any:
    dtype = getattr(pointer, "dtype", None)
    return getattr(dtype, "element_ty", None)


def poison_value(kind: str, elt: Any) -> Any:
    """A Python scalar Triton converts to `elt`: the poison named `kind` in that type."""
    if elt.is_floating():
        return {"inf": math.inf, "nan": math.nan, "seven": 7.0, "neginf": -math.inf}[kind]
    if elt.is_bool():
        return True
    bits = int(elt.primitive_bitwidth)
    if elt.is_int_signed():
        top, bottom = 2 ** (bits - 1) - 1, -(2 ** (bits - 1))
    else:
        top, bottom = 2**bits - 1, 0
    return {"inf": top, "nan": bottom, "seven": 7, "neginf": bottom}[kind]
