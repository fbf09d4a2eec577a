"""`--compile-only` cases for MoE kernels of the corpus: FlagGems' autotuned `moe_sum` and
`topk_softmax` routing (DeepSeek/Mixtral-like expert counts)."""

import torch
from corpus import compile_only, module_file

from triton_lint import stress

moe_sum_mod = module_file("flag-gems", "flag_gems/fused/moe_sum.py")
topk_mod = module_file("flag-gems", "flag_gems/fused/topk_softmax.py")


@stress.case(
    reference=lambda x: x.sum(1),
    inputs=[stress.tensor("T", "K", "H", dtype=torch.bfloat16)],
    dims={"T": [256], "K": [8], "H": [4096]},
    layouts=("contiguous",),
)
def flag_gems_moe_sum(x):
    out = torch.empty((x.shape[0], x.shape[2]), dtype=x.dtype)
    moe_sum_mod.moe_sum(x, out)
    return out


@stress.case(
    reference=compile_only,
    inputs=[stress.tensor("T", "E", dtype=torch.float32)],
    dims={"T": [128], "E": [64, 256]},
    layouts=("contiguous",),
)
def flag_gems_topk_softmax(gating):
    tokens = gating.shape[0]
    weights = torch.empty((tokens, 8), dtype=torch.float32)
    indices = torch.empty((tokens, 8), dtype=torch.int32)
    source = torch.empty((tokens, 8), dtype=torch.int32)
    topk_mod.topk_softmax(weights, indices, source, gating, True)
    return weights
