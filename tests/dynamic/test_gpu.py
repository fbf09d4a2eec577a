"""GPU-only checks (TL907); skipped cleanly without torch, triton or a CUDA device."""

from __future__ import annotations

import os

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

if os.environ.get("TRITON_INTERPRET") == "1" or not torch.cuda.is_available():
    pytest.skip("needs a CUDA GPU (and no TRITON_INTERPRET)", allow_module_level=True)

import importlib.util  # noqa: E402

from triton_lint.dynamic.gpu import compiled_variants, recompilation_finding  # noqa: E402

from .conftest import FIXTURES  # noqa: E402


def _load():
    spec = importlib.util.spec_from_file_location("_tl_gpu_fixture", FIXTURES / "gpu_recompile.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_constexpr_size_recompiles() -> None:
    mod = _load()
    sizes = [17, 33, 49]
    for n in sizes:
        x = torch.randn(n, device="cuda")
        out = torch.empty_like(x)
        mod.copy_constexpr_n[(1,)](x, out, n, BLOCK=64)
        mod.copy_runtime_n[(1,)](x, out, n, BLOCK=64)
        torch.testing.assert_close(out, x)
    assert compiled_variants(mod.copy_constexpr_n) == 3
    assert compiled_variants(mod.copy_runtime_n) == 1
    f = recompilation_finding(mod.copy_constexpr_n, sizes)
    assert f is not None and f.code == "TL907"
    assert recompilation_finding(mod.copy_runtime_n, sizes) is None
