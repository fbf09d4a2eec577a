"""Plain Triton interpreter vs the triton-lint sanitizer: 1M-element vector add and 256^3 matmul.

Each mode runs in its own process (the hooks are process-global). Prints seconds (best of N)
and the ratio; the target is <= 1.3x.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _measure(mode: str, repeats: int) -> dict[str, float]:
    os.environ["TRITON_INTERPRET"] = "1"
    if mode == "sanitized":
        from triton_lint.dynamic.sanitizer import Sanitizer

        Sanitizer()
    else:
        # Only the Triton 3.6 / numpy >= 2.5 compatibility fix, so both modes can run.
        import triton.runtime.interpreter as interp

        from triton_lint.dynamic.sanitizer import install_compat

        install_compat(interp)
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        y = tl.load(y_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, x + y, mask=mask)

    @triton.jit
    def matmul_kernel(
        a_ptr,
        b_ptr,
        c_ptr,
        M,
        N,
        K,
        sam,
        sak,
        sbk,
        sbn,
        scm,
        scn,
        BM: tl.constexpr,
        BN: tl.constexpr,
        BK: tl.constexpr,
    ):
        rm = tl.program_id(0) * BM + tl.arange(0, BM)
        rn = tl.program_id(1) * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            a = tl.load(
                a_ptr + rm[:, None] * sam + (k + rk)[None, :] * sak,
                mask=(rm[:, None] < M) & ((k + rk)[None, :] < K),
                other=0.0,
            )
            b = tl.load(
                b_ptr + (k + rk)[:, None] * sbk + rn[None, :] * sbn,
                mask=((k + rk)[:, None] < K) & (rn[None, :] < N),
                other=0.0,
            )
            acc += tl.dot(a, b)
        tl.store(
            c_ptr + rm[:, None] * scm + rn[None, :] * scn,
            acc,
            mask=(rm[:, None] < M) & (rn[None, :] < N),
        )

    n = 1 << 20
    x, y = torch.randn(n), torch.randn(n)
    out = torch.empty(n)

    def vec() -> None:
        add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)

    s = 256
    a, b = torch.randn(s, s), torch.randn(s, s)
    c = torch.empty(s, s)

    def mm() -> None:
        matmul_kernel[(s // 32, s // 32)](
            a,
            b,
            c,
            s,
            s,
            s,
            a.stride(0),
            a.stride(1),
            b.stride(0),
            b.stride(1),
            c.stride(0),
            c.stride(1),
            BM=32,
            BN=32,
            BK=32,
        )

    result = {}
    for name, fn in (("vector_add_1M", vec), ("matmul_256", mm)):
        fn()  # warm-up (AST rewrite)
        best = float("inf")
        for _ in range(repeats):
            t0 = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - t0)
        result[name] = best
    assert torch.allclose(out, x + y) and torch.allclose(c, a @ b, atol=1e-3, rtol=1e-3)
    return result


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] in ("plain", "sanitized"):
        print(json.dumps(_measure(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 5)))
        return
    repeats = sys.argv[1] if len(sys.argv) > 1 else "5"
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    res = {}
    for mode in ("plain", "sanitized"):
        out = subprocess.run(
            [sys.executable, __file__, mode, repeats],
            env=env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        res[mode] = json.loads(out.strip().splitlines()[-1])
    import triton

    print(f"triton {triton.__version__}, best of {repeats}")
    print(f"{'benchmark':<16}{'plain (s)':>12}{'sanitizer (s)':>16}{'ratio':>8}")
    for name in res["plain"]:
        p, q = res["plain"][name], res["sanitized"][name]
        print(f"{name:<16}{p:>12.4f}{q:>16.4f}{q / p:>8.2f}x")


if __name__ == "__main__":
    main()
