"""What parents of `triton_lint.dynamic.child` share: its environment and its finding records.

Never imports torch or triton (the parent side runs in the linter's own process).
"""

from __future__ import annotations

import os
import pathlib
from typing import Any

from triton_lint.dynamic.codes import CODES
from triton_lint.dynamic.kernel_cache import KERNEL_CACHE_ENV
from triton_lint.finding import Category, Finding, RelatedLocation, Severity, Span

#: Put first on the child's path, so it imports this copy of triton_lint.
PACKAGE_ROOT = str(pathlib.Path(__file__).resolve().parents[2])


def child_env(
    device: str,
    cache_dir: str,
    gpu: int | None = None,
    *,
    debug: bool = True,
    private_kernels: bool = False,
) -> dict[str, str]:
    """The child's environment: interpreter or native; on a GPU, Triton's debug checks (off for
    timings) and a fresh kernel cache, `cache_dir` (the child records masked loads while
    compiling, so nothing may come from a cache). With `private_kernels` (a checking child: its
    backend keeps kernels in `cache_dir`), Triton's own cache stays the user's, so the launchers
    Triton builds with a host compiler are built once, not once per child and run."""
    env = dict(os.environ)
    if device == "interpreter":
        env["TRITON_INTERPRET"] = "1"
    else:
        env["TRITON_INTERPRET"] = "0"
        # device_assert and int32 overflow checks (TL909, TL910)
        env["TRITON_DEBUG"] = "1" if debug else "0"
        if private_kernels:
            env[KERNEL_CACHE_ENV] = cache_dir
        else:
            env["TRITON_CACHE_DIR"] = cache_dir
        if gpu is not None:
            env["CUDA_VISIBLE_DEVICES"] = str(gpu)
    env["PYTHONPATH"] = PACKAGE_ROOT + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else ""
    )
    env.setdefault("OMP_NUM_THREADS", "1")
    if "PYTHONPYCACHEPREFIX" not in env:
        # Every child imports torch (about a thousand modules): keep their bytecode in one cache
        # of ours, so an install without it (or `PYTHONDONTWRITEBYTECODE`, as in many images)
        # does not compile them again in every child; nothing is written beside the sources.
        env["PYTHONPYCACHEPREFIX"] = str(bytecode_cache())
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def bytecode_cache() -> pathlib.Path:
    """Where children keep Python bytecode: `$XDG_CACHE_HOME/triton-lint/pycache`."""
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return pathlib.Path(root) / "triton-lint" / "pycache"


def finding_from_dict(d: dict[str, Any], path_map: dict[str, str]) -> Finding:
    """Rebuild a Finding sent by the child; paths mapped back to the user's spelling."""
    code = d["code"]
    meta = CODES[code]
    line = int(d.get("line") or 1)
    path = str(d.get("path") or "")
    path = path_map.get(os.path.realpath(path), path)
    related = tuple(
        RelatedLocation(
            path_map.get(os.path.realpath(str(r["path"])), str(r["path"])),
            Span(
                int(r["line"]),
                int(r.get("column") or 1),
                int(r.get("end_line") or r["line"]),
                int(r.get("end_column") or 1),
            ),
            str(r.get("message") or ""),
        )
        for r in d.get("related") or ()
    )
    return Finding(
        path=path,
        span=Span(
            line,
            int(d.get("column") or 1),
            int(d.get("end_line") or line),
            int(d.get("end_column") or 1),
        ),
        code=code,
        name=d.get("name") or meta.name,
        severity=Severity(d.get("severity") or meta.severity.value),
        category=Category(d.get("category") or meta.category.value),
        message=d["message"],
        kernel=d.get("kernel"),
        properties=dict(d.get("properties") or {}),
        related=related,
    )
