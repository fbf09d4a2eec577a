"""`--compile-only` cases for attention kernels of the corpus: vLLM's rotary embedding (flash-attn
ops), SGLang's attention-state merge, FlagGems' sparse (top-k) attention with a 64-key block."""

import torch
from corpus import compile_only, module_file

from triton_lint import stress

rotary = module_file("vllm", "vllm/vllm_flash_attn/ops/triton/rotary.py")
merge = module_file("sglang", "sglang/kernels/ops/attention/merge_state.py")
sparse = module_file("flag-gems", "flag_gems/fused/sparse_attention.py")


@stress.case(
    reference=compile_only,
    inputs=[
        stress.tensor("B", "S", "NH", "D", dtype=torch.bfloat16),
        stress.tensor("S", "R", dtype=torch.bfloat16),
        stress.tensor("S", "R", dtype=torch.bfloat16),
    ],
    dims={"B": [2], "S": [512], "NH": [32], "D": [128], "R": [64]},
    layouts=("contiguous",),
)
def vllm_rotary(x, cos, sin):
    # apply_rotary(x, cos, sin) enters torch.cuda.device(x.device.index), which a CPU tensor
    # cannot; this is its launch for that call (not varlen, not interleaved), argument for argument
    batch, seqlen, nheads, _headdim = x.shape
    rotary_dim = cos.shape[1] * 2
    out = torch.empty_like(x)
    rotary.rotary_kernel[lambda meta: (rotary.triton.cdiv(seqlen, meta["BLOCK_M"]), nheads, batch)](
        out,
        x,
        cos,
        sin,
        None,
        0,
        seqlen,
        rotary_dim,
        cos.shape[0],
        out.stride(0),
        out.stride(-3),
        out.stride(-2),
        out.stride(-1),
        x.stride(0),
        x.stride(-3),
        x.stride(-2),
        x.stride(-1),
        64 if rotary_dim <= 64 else 128,
        False,
        False,
        False,
        False,
        8,
        num_warps=2 if rotary_dim <= 64 else 4,
    )
    return out


@stress.case(
    reference=compile_only,
    inputs=[
        stress.tensor("T", "NH", "D", dtype=torch.bfloat16),
        stress.tensor("T", "NH", dtype=torch.float32),
        stress.tensor("T", "NH", "D", dtype=torch.bfloat16),
        stress.tensor("T", "NH", dtype=torch.float32),
    ],
    dims={"T": [256], "NH": [32], "D": [128]},
    layouts=("contiguous",),
)
def sglang_merge_state(po, plse, so, slse):
    return merge.merge_state_triton(po, plse, so, slse)[0]


@stress.case(
    reference=compile_only,
    inputs=[
        stress.tensor("B", "M", "NH", "D", dtype=torch.bfloat16),
        stress.tensor("B", "N", "D", dtype=torch.bfloat16),
        stress.tensor("NH", dtype=torch.float32),
    ],
    dims={"B": [1], "M": [64], "NH": [16], "D": [512], "N": [2048]},
    layouts=("contiguous",),
)
def flag_gems_sparse_attention(q, kv, sink):
    topk = torch.randint(0, kv.shape[1], (q.shape[0], q.shape[1], 256), dtype=torch.int32)
    return sparse.sparse_attn_triton(q, kv, sink, topk, q.shape[-1] ** -0.5)
