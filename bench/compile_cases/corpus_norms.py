"""`--compile-only` cases for normalisation and MLP kernels of the corpus: Liger-Kernel's RMSNorm,
LayerNorm and SwiGLU, SGLang's fp32 RMSNorm (at Llama-like hidden sizes)."""

import torch
from corpus import module_file, package

from triton_lint import stress

package("liger-kernel")
from liger_kernel.ops.layer_norm import layer_norm_forward  # noqa: E402
from liger_kernel.ops.rms_norm import rms_norm_forward  # noqa: E402
from liger_kernel.ops.swiglu import swiglu_forward  # noqa: E402

sglang_rmsnorm = module_file("sglang", "sglang/kernels/ops/layernorm/rmsnorm_fp32.py")

HIDDEN = {"R": [64], "H": [4096, 8192]}


def _rms(x, w, eps=1e-6):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * w.float()).to(x.dtype)


@stress.case(
    reference=_rms,
    inputs=[
        stress.tensor("R", "H", dtype=torch.bfloat16),
        stress.tensor("H", dtype=torch.bfloat16),
    ],
    dims=HIDDEN,
    layouts=("contiguous",),
)
def liger_rms_norm(x, w):
    return rms_norm_forward(x, w, 1e-6, 0.0, "llama", None)[0]


@stress.case(
    reference=lambda x, w, b: torch.nn.functional.layer_norm(x, x.shape[-1:], w, b, 1e-6),
    inputs=[
        stress.tensor("R", "H", dtype=torch.bfloat16),
        stress.tensor("H", dtype=torch.bfloat16),
        stress.tensor("H", dtype=torch.bfloat16),
    ],
    dims=HIDDEN,
    layouts=("contiguous",),
)
def liger_layer_norm(x, w, b):
    return layer_norm_forward(x, w, b, 1e-6)[0]


@stress.case(
    reference=lambda a, b: torch.nn.functional.silu(a.float()).to(a.dtype) * b,
    inputs=[
        stress.tensor("R", "I", dtype=torch.bfloat16),
        stress.tensor("R", "I", dtype=torch.bfloat16),
    ],
    dims={"R": [64], "I": [14336]},
    layouts=("contiguous",),
)
def liger_swiglu(a, b):
    return swiglu_forward(a, b)[2]


@stress.case(
    reference=_rms,
    inputs=[stress.tensor("R", "H", dtype=torch.bfloat16), stress.tensor("H", dtype=torch.float32)],
    dims=HIDDEN,
    layouts=("contiguous",),
)
def sglang_rmsnorm_fp32(x, w):
    # the wrapper asserts x.is_cuda; this is its launch, argument for argument
    out = torch.empty_like(x)
    dim = x.shape[-1]
    sglang_rmsnorm._rmsnorm_fp32_kernel[(x.numel() // dim,)](
        x,
        w,
        out,
        dim,
        1e-6,
        sglang_rmsnorm.triton.next_power_of_2(dim),
        num_warps=4,
        enable_fp_fusion=False,
    )
    return out
