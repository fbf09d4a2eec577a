"""What checking children share on disk and what they keep to themselves: Python bytecode and
Triton's launchers are shared, kernels compiled with checks in them are private."""

from __future__ import annotations

import pytest

from triton_lint.dynamic.child_io import child_env
from triton_lint.dynamic.kernel_cache import KERNEL_CACHE_ENV

KERNEL = """
import triton
import triton.language as tl


@triton.jit
def copy(x_ptr, o_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(o_ptr + offs, tl.load(x_ptr + offs))
"""


def test_a_checking_child_keeps_kernels_private_and_triton_cache_shared(monkeypatch) -> None:
    monkeypatch.setenv("TRITON_CACHE_DIR", "/users/triton")
    env = child_env("cuda", "/run/kernels", private_kernels=True)
    assert env["TRITON_CACHE_DIR"] == "/users/triton" and env[KERNEL_CACHE_ENV] == "/run/kernels"
    other = child_env("cuda", "/run/kernels")  # timing and compile children: a cache of theirs
    assert other["TRITON_CACHE_DIR"] == "/run/kernels" and KERNEL_CACHE_ENV not in other


def test_children_share_one_bytecode_cache_unless_told_otherwise(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    env = child_env("interpreter", "/unused")
    assert env["PYTHONPYCACHEPREFIX"] == str(tmp_path / "triton-lint" / "pycache")
    assert "PYTHONDONTWRITEBYTECODE" not in env
    monkeypatch.setenv("PYTHONPYCACHEPREFIX", "/mine")
    env = child_env("interpreter", "/unused")
    assert env["PYTHONPYCACHEPREFIX"] == "/mine" and env["PYTHONDONTWRITEBYTECODE"] == "1"


def test_kernels_compile_into_the_private_cache(monkeypatch, tmp_path) -> None:
    pytest.importorskip("torch")
    triton = pytest.importorskip("triton")
    import triton.compiler.compiler as compiler
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from triton_lint.dynamic.kernel_cache import private_kernel_cache

    shared, private_root = tmp_path / "shared", tmp_path / "private"
    monkeypatch.setenv("TRITON_CACHE_DIR", str(shared))
    monkeypatch.setenv(KERNEL_CACHE_ENV, str(private_root))
    monkeypatch.setattr(compiler, "get_cache_manager", compiler.get_cache_manager)
    (tmp_path / "tl_cache_kernels.py").write_text(KERNEL)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = __import__("tl_cache_kernels")
    private = private_kernel_cache("pid1")
    assert private == str(private_root / "pid1")
    src = ASTSource(
        module.copy, {"x_ptr": "*fp32", "o_ptr": "*fp32", "BLOCK": "constexpr"}, {"BLOCK": 64}
    )
    triton.compile(src, target=GPUTarget("cuda", 90, 32))
    assert list((private_root / "pid1").rglob("*.ttir"))
    assert not list(shared.rglob("*.ttir"))
    assert private_kernel_cache("pid1") == private  # installed twice: still one redirection


def test_a_checking_run_compiles_one_variant_per_constexpr_set(monkeypatch, tmp_path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("triton")
    from triton_lint.dynamic.launches import one_variant

    (tmp_path / "tl_variant_kernels.py").write_text(KERNEL)
    monkeypatch.syspath_prepend(str(tmp_path))
    fn = __import__("tl_variant_kernels").copy
    one_variant(fn, fn.params)
    flags = {p.name: (p.do_not_specialize, p.do_not_specialize_on_alignment) for p in fn.params}
    assert flags == {"x_ptr": (True, True), "o_ptr": (True, True), "BLOCK": (False, False)}
