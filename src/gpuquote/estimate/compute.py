"""FLOPs per token and the FLOP/s a GPU really reaches.

Efficiency rule: eff = e_ref x (balance_ref / balance)^alpha x power-cap scale,
with balance = peak FLOP/s / HBM bytes/s. One rule covers generations and precisions: FP8 on an
H100 has 4x the A100's balance and reaches a lower share of its (higher) peak, as measured.
"""

from __future__ import annotations

from functools import lru_cache

from gpuquote.estimate.constants import K
from gpuquote.estimate.setup import Machine, check_precision
from gpuquote.models import Architecture


@lru_cache(maxsize=4096)
def efficiency(m: Machine, precision: str) -> float:
    """Achieved share of the precision's dense peak for transformer GEMM-heavy work.

    Small batches are not penalised here: their GEMMs are bandwidth-bound and the callers take
    max(FLOP time, byte time), the roofline."""
    peak = check_precision(m.gpu, precision)
    balance = peak / m.hbm_bw
    e = K.compute_efficiency_ref * (K.balance_ref / balance) ** K.compute_balance_exponent
    cap = K.cuda_core_efficiency_max if precision == "fp32" else 0.95  # FP32 runs on CUDA cores, not tensor cores
    return min(e * m.power_scale(), cap)


@lru_cache(maxsize=256)
def layer_gemms(a: Architecture, tp: int) -> tuple[tuple[float, float, float, float], ...]:
    """Weight GEMMs one GPU runs per forward pass: (count, token share, N, K) each, M = tokens x share.

    Per layer QKV (N = (q + k + v widths) / TP, K = hidden), attention output (N = hidden, K = width / TP),
    MLP in (gate and up fused) and out; a routed expert sees active/experts of the tokens; the LM head
    once (N = vocab / TP). Cross-attention of encoder-decoders is left out (a small share of FLOPs)."""
    h, t = float(a.hidden), float(max(1, tp))
    mlp_in = 2.0 if a.gated else 1.0
    attn = ((1.0, 1.0, (a.q_width + a.kv_width) / t, h), (1.0, 1.0, h, a.attn_out_width / t))
    out: list[tuple[float, float, float, float]] = [(a.total_layers * c, s, n, k) for c, s, n, k in attn]
    moe_layers = a.dec_layers - a.dense_layers if a.is_moe else 0
    dense_layers = a.total_layers - moe_layers
    f = float(a.ffn_hidden)
    out += [(dense_layers, 1.0, mlp_in * f / t, h), (dense_layers, 1.0, h, f / t)]
    if moe_layers:
        ew = float(a.moe_ffn_hidden or a.ffn_hidden)
        routed = (moe_layers * a.experts, a.active_experts / a.experts)
        for count, share in (routed, (moe_layers * a.shared_experts, 1.0)):
            if count:
                out += [(count, share, mlp_in * ew / t, h), (count, share, h, ew / t)]
    out.append((1.0, 1.0, a.vocab / t, h))
    return tuple(x for x in out if x[0] > 0)


@lru_cache(maxsize=16384)
def gemm_size_factor(a: Architecture, tp: int, tokens: float, passes: str = "train") -> float:
    """Share of the large-GEMM rate that the model's weight GEMMs reach at `tokens` rows per GPU.

    A GEMM runs its M x N output in waves of tiles over the SMs; on average the last wave is half
    empty, which costs the time of half a wave: 2 K d0^2 / rate with d0^2 = SMs x tile area / 2
    (A100: 108 x 128 x 256 / 2, d0 ~ 1330). Relative to the useful 2 M N K that is (d0^2 / (M N)),
    so the whole model reaches 1 / (1 + (d0 / d)^2) with d^2 = sum(M N K) / sum(inner dims) over its
    GEMMs. Training runs each forward GEMM also as data-gradient (inner N) and weight-gradient
    (inner M) GEMMs; LoRA skips the frozen weights' gradients ("lora"); inference runs the forward only
    ("infer"); full recomputation repeats the forward ("train_recompute", "lora_recompute")."""
    d0sq = float(K.gemm_tail_dim) ** 2
    vol = inner = 0.0
    fwd = 2.0 if passes.endswith("_recompute") else 1.0
    kind = passes.removesuffix("_recompute")
    for count, share, n, k in layer_gemms(a, tp):
        m = max(1.0, tokens * share)
        v = m * n * k
        if kind == "infer":
            vol += count * v
            inner += count * k
        elif kind == "lora":
            vol += count * (fwd + 1.0) * v
            inner += count * (fwd * k + n)
        else:
            vol += count * (fwd + 2.0) * v
            inner += count * (fwd * k + n + m)
    return vol / (vol + d0sq * inner)


def forward_flops_per_token(a: Architecture, context: float) -> tuple[float, float]:
    """(dense GEMM, attention) forward FLOPs per token; attention for the given mean context."""
    return 2.0 * a.matmul_params_active, a.attention_flops_per_token(context)


@lru_cache(maxsize=4096)
def train_flops_per_token(
    a: Architecture, method: str, seq: int, ckpt: str, flash: bool
) -> tuple[float, float, float]:
    """(hardware dense FLOPs, hardware attention FLOPs, model FLOPs) per trained token.

    Full training: forward + 2x backward (6N); LoRA/QLoRA skip the frozen weight gradients (4N);
    full recompute adds a forward (8N), selective recompute and FlashAttention's backward recompute
    the attention core. Causal attention averages seq/2 context.
    """
    dense, attn = forward_flops_per_token(a, seq / 2.0)
    bwd_dense = 1.0 if method in ("lora", "qlora") else 2.0
    model = (1.0 + bwd_dense) * dense + 3.0 * attn
    hw_dense = (1.0 + bwd_dense) * dense
    hw_attn = (3.5 if flash else 3.0) * attn
    if ckpt == "full":
        hw_dense += dense
        hw_attn += attn
    elif ckpt == "selective" and not flash:
        hw_attn += attn
    return hw_dense, hw_attn, model
