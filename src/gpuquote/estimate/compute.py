"""FLOPs per token and the FLOP/s a GPU really reaches.

Efficiency rule: eff = e_ref x (balance_ref / balance)^alpha x power-cap scale,
with balance = peak FLOP/s / HBM bytes/s. One rule covers generations and precisions: FP8 on an
H100 has 4x the A100's balance and reaches a lower share of its (higher) peak, as measured.
"""

from __future__ import annotations

from gpuquote.estimate.constants import K
from gpuquote.estimate.setup import Machine, check_precision
from gpuquote.models import Architecture


def efficiency(m: Machine, precision: str) -> float:
    """Achieved share of the precision's dense peak for transformer GEMM-heavy work.

    Small batches are not penalised here: their GEMMs are bandwidth-bound and the callers take
    max(FLOP time, byte time), the roofline."""
    peak = check_precision(m.gpu, precision)
    balance = peak / m.hbm_bw
    e = K.compute_efficiency_ref * (K.balance_ref / balance) ** K.compute_balance_exponent
    return min(e * m.power_scale(), 0.95)


def forward_flops_per_token(a: Architecture, context: float) -> tuple[float, float]:
    """(dense GEMM, attention) forward FLOPs per token; attention for the given mean context."""
    return 2.0 * a.matmul_params_active, a.attention_flops_per_token(context)


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
