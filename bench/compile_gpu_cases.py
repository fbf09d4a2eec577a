"""A `--compile-only` case only `bench/compile_gpu_check.py` compiles: a config whose shared
memory exceeds every architecture's per-block limit (256 KB on sm_90, 192 KB on sm_80/86/89),
so that on any GPU one launch must raise OutOfResources where TL915 predicts it."""

import torch
import triton
import triton.language as tl

from triton_lint import stress


@triton.jit
def huge_tile_kernel(a, b, c, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        x = tl.load(a + rm[:, None] * K + (k + rk)[None, :])
        y = tl.load(b + (k + rk)[:, None] * BN + rn[None, :])
        acc += tl.dot(x, y)
    tl.store(c + rm[:, None] * BN + rn[None, :], acc)


@stress.case(
    reference=lambda a, b: a.float() @ b.float(),
    inputs=[
        stress.tensor(128, "K", dtype=torch.float16),
        stress.tensor("K", 128, dtype=torch.float16),
    ],
    dims={"K": [1024]},
    layouts=("contiguous",),
)
def huge_tile(a, b):
    c = torch.empty((128, 128), dtype=torch.float32, device=a.device)
    huge_tile_kernel[(1,)](a, b, c, a.shape[1], BM=128, BN=128, BK=128, num_warps=8, num_stages=4)
    return c
