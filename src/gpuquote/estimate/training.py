"""Training step time: compute at achieved FLOP/s, TP/PP/DP communication, pipeline bubble, overlap."""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpuquote.estimate import comm
from gpuquote.estimate.compute import efficiency, gemm_size_factor, train_flops_per_token
from gpuquote.estimate.constants import K
from gpuquote.estimate.job import Job
from gpuquote.estimate.memory import default_seq_len, lora_params, weight_bytes
from gpuquote.estimate.setup import Layout, Machine, check_precision
from gpuquote.models import Architecture


@dataclass
class TrainPerf:
    tokens_per_s: float
    mfu: float
    bound: str
    t_compute: float
    t_tp: float
    t_dp_exposed: float
    t_bubble: float
    t_step: float
    n_micro: int


def micro_batches(job: Job, lay: Layout, seq: int) -> int:
    """Micro-batches per data-parallel replica per optimizer step (at least one)."""
    gbt = job.global_batch_tokens
    if gbt is None:
        return max(1, lay.pp * 4) if lay.pp > 1 else 1
    return max(1, round(gbt / (lay.dp * lay.micro_batch * seq)))


def virtual_stages(a: Architecture, pp: int) -> int:
    """Interleaving depth assumed for pipeline parallelism (Megatron/NeMo practice for large PP)."""
    if pp <= 1:
        return 1
    return max(1, min(K.pipeline_virtual_stages, a.total_layers // pp))


def train_perf(job: Job, a: Architecture, m: Machine, lay: Layout) -> TrainPerf:
    seq = default_seq_len(job)
    n_micro = micro_batches(job, lay, seq)
    tokens_mb = lay.micro_batch * seq / lay.cp
    hw_dense, hw_attn, model_flops = train_flops_per_token(a, job.method, seq, lay.ckpt, job.flash_attention)
    mp = lay.tp * lay.pp * lay.cp
    if job.precision == "fp8":  # FP8 GEMMs; attention stays BF16 (Transformer Engine)
        r_dense = check_precision(m.gpu, "fp8") * efficiency(m, "fp8")
        r_attn = check_precision(m.gpu, "bf16") * efficiency(m, "bf16")
    else:
        prec = "tf32" if job.precision == "tf32" else job.precision
        r_dense = r_attn = check_precision(m.gpu, prec) * efficiency(m, prec)
    # weight GEMMs lose a partial wave of tiles; the attention core (FlashAttention) is not a weight GEMM
    passes = ("lora" if job.method in ("lora", "qlora") else "train") + ("_recompute" if lay.ckpt == "full" else "")
    r_dense *= gemm_size_factor(a, lay.tp, tokens_mb, passes)
    t_mb = tokens_mb * (hw_dense / r_dense + hw_attn / r_attn) / (lay.tp * lay.pp)
    if job.method == "qlora":  # NF4 -> BF16 dequantisation per pass: read 0.5 B, write and read 2 B
        passes = 3.0 if lay.ckpt == "full" else 2.0
        t_mb += passes * a.linear_params / mp * 4.5 / (m.hbm_bw * K.hbm_efficiency)

    act_b = 4.0 if job.precision in ("fp32", "tf32") else 2.0
    layers_stage = math.ceil(a.total_layers / lay.pp)
    t_tp_mb = 0.0
    if lay.tp > 1:
        n_ar = 4 + (2 if lay.ckpt == "full" else 0)
        bw = m.group_bw(lay.tp, 1)
        t_tp_mb = n_ar * layers_stage * comm.all_reduce(tokens_mb * a.hidden * act_b, lay.tp, bw)
    t_pp_mb = 0.0
    if lay.pp > 1:
        bw = m.group_bw(lay.pp, lay.tp * lay.cp * lay.dp)
        t_pp_mb = 2 * virtual_stages(a, lay.pp) * (tokens_mb * a.hidden * act_b / lay.tp) / bw
    t_stage = t_mb + t_tp_mb + t_pp_mb
    # interleaved 1F1B (Narayanan et al. 2021): v virtual stages per GPU shrink the bubble v-fold
    v = virtual_stages(a, lay.pp)
    t_bubble = (lay.pp - 1) / v * t_stage
    t_pipe = n_micro * t_stage + t_bubble

    # data-parallel traffic
    t_dp = 0.0
    if lay.dp > 1:
        bw = m.group_bw(lay.dp, lay.tp * lay.cp)
        p_gpu = a.total_params / mp
        wb = weight_bytes(job.precision)
        lora = job.method in ("lora", "qlora")
        grad_bytes = (lora_params(a, job.lora_rank) / mp * 4.0) if lora else p_gpu * wb
        if lay.sharding in ("zero3", "fsdp"):
            w_bytes = p_gpu * (0.5159 if job.method == "qlora" else wb)
            per_mb = 2 * comm.all_gather(w_bytes, lay.dp, bw) + comm.all_gather(grad_bytes, lay.dp, bw)
            t_dp = n_micro * per_mb
        else:
            t_dp = comm.all_reduce(grad_bytes, lay.dp, bw)
    t_compute = n_micro * t_mb
    t_dp_exposed = t_dp - K.comm_overlap * min(t_dp, t_compute)
    # optimizer step: read+write the sharded state once (memory bound)
    t_opt = 0.0
    if job.method in ("pretrain", "full"):
        shard = lay.dp if lay.sharding != "none" else 1
        t_opt = a.total_params / mp / shard * 32.0 / (m.hbm_bw * K.hbm_efficiency)
    t_step = t_pipe + t_dp_exposed + t_opt
    tokens_step = n_micro * lay.micro_batch * seq * lay.dp
    tps = tokens_step / t_step
    prec_peak = check_precision(m.gpu, job.precision)
    mfu = model_flops * tps / (m.gpus * prec_peak) if m.gpus else 0.0
    parts = {
        "compute": t_compute + t_bubble,
        "network": n_micro * (t_tp_mb + t_pp_mb) + t_dp_exposed,
        "memory": t_opt,
    }
    bound = max(parts, key=parts.get)  # type: ignore[arg-type]
    return TrainPerf(
        tokens_per_s=tps,
        mfu=mfu,
        bound=bound,
        t_compute=t_compute,
        t_tp=n_micro * t_tp_mb,
        t_dp_exposed=t_dp_exposed,
        t_bubble=t_bubble,
        t_step=t_step,
        n_micro=n_micro,
    )
