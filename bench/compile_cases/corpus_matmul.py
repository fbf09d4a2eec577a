"""`--compile-only` cases for matmul kernels of the corpus: torchao's autotuned int8 matmul with
row/column scales (31 configs) and FlagGems' block-scaled fp8 matmul."""

import torch
from corpus import compile_only, module_file, package

from triton_lint import stress

package("torchao")
from torchao.prototype.quantized_training.int8_mm import scaled_int8_mm_cuda  # noqa: E402

fp8_mod = module_file("flag-gems", "flag_gems/ops/fp8_matmul.py")


@stress.case(
    reference=lambda a, b, rs, cs: (a.float() @ b.float()) * rs[:, None] * cs[None, :],
    inputs=[
        stress.tensor("M", "K", dtype=torch.float32),
        stress.tensor("K", "N", dtype=torch.float32),
        stress.tensor("M", dtype=torch.float32),
        stress.tensor("N", dtype=torch.float32),
    ],
    dims={"M": [512], "N": [4096], "K": [4096]},
    layouts=("contiguous",),
)
def torchao_scaled_int8_mm(a, b, row_scale, col_scale):
    # the CUDA implementation behind torch.ops.torchao.scaled_int8_mm, called directly
    return scaled_int8_mm_cuda(
        a.clamp(-127, 127).to(torch.int8), b.clamp(-127, 127).to(torch.int8), row_scale, col_scale
    )


@stress.case(
    reference=compile_only,
    inputs=[
        stress.tensor("M", "K", dtype=torch.float32),
        stress.tensor("N", "K", dtype=torch.float32),
    ],
    dims={"M": [256], "N": [4096], "K": [4096]},
    layouts=("contiguous",),
)
def flag_gems_fp8_matmul(a, b):
    m, k = a.shape
    n = b.shape[0]
    a_s = torch.ones((m, k // 128), dtype=torch.float32)
    b_s = torch.ones((n // 128, k // 128), dtype=torch.float32)
    return fp8_mod.fp8_matmul(a.to(torch.float8_e4m3fn), a_s, b.to(torch.float8_e4m3fn), b_s)
