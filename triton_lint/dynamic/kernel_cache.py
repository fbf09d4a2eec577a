"""Where a checking child's compiled kernels go (child only, CUDA backend).

The checks compiled into a kernel (`bounds`, `poison`) hold the addresses of this process's
device tables as constants, and the compiler records sites while it runs, so such a kernel can
never come from, nor go to, a cache another process reads. Everything else Triton caches on
disk (its driver helpers and the C launchers it builds with a host compiler, a second or more
per child) stays in the shared `TRITON_CACHE_DIR`: one child builds them, the other children
and later runs load them.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from typing import Any

#: The environment variable a parent names the child's private kernel cache with.
KERNEL_CACHE_ENV = "TRITON_LINT_KERNEL_CACHE"


def private_kernel_cache(tag: str) -> str:
    """Send kernel compilations of this process to a directory of its own (under the parent's
    `TRITON_LINT_KERNEL_CACHE`, else `TRITON_CACHE_DIR`, else a temporary one); returns it."""
    import triton.compiler.compiler as compiler

    root = os.environ.get(KERNEL_CACHE_ENV) or os.environ.get("TRITON_CACHE_DIR")
    if not root:  # run by hand: a temporary directory, removed when the process ends
        root = tempfile.mkdtemp(prefix="tl-kernels-")
        atexit.register(shutil.rmtree, root, True)
    private = os.path.join(root, tag)
    os.makedirs(private, exist_ok=True)
    shared = getattr(compiler.get_cache_manager, "_tl_shared", compiler.get_cache_manager)

    def kernel_cache_manager(key: str) -> Any:
        with _cache_dir(private):
            return shared(key)

    kernel_cache_manager._tl_shared = shared  # type: ignore[attr-defined]
    compiler.get_cache_manager = kernel_cache_manager
    return private


@contextlib.contextmanager
def _cache_dir(path: str) -> Iterator[None]:
    """`TRITON_CACHE_DIR` is read when a cache manager is made: point it at `path` meanwhile."""
    saved = os.environ.get("TRITON_CACHE_DIR")
    os.environ["TRITON_CACHE_DIR"] = path
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("TRITON_CACHE_DIR", None)
        else:
            os.environ["TRITON_CACHE_DIR"] = saved
