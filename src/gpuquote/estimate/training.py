"""Training step time: compute at achieved FLOP/s, TP/CP/PP/DP communication, pipeline bubble, overlap.

Overlap follows what the frameworks can physically hide: a gradient all-reduce (DDP, ZeRO-1) runs
during the backward pass of the LAST accumulation micro-batch only (the gradients exist only then);
ZeRO-2 reduce-scatters and ZeRO-3/FSDP gathers run every micro-batch behind that micro-batch's own
forward/backward; ZeRO-1/2 all-gather the updated weights behind the next step's first forward.
Pipeline sends are hidden in the steady state by `comm_overlap` and add to the warm-up/cool-down.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpuquote.estimate import comm
from gpuquote.estimate.compute import efficiency, gemm_size_factor, train_flops_per_token
from gpuquote.estimate.constants import K
from gpuquote.estimate.job import Job
from gpuquote.estimate.memory import default_seq_len, local_dp, lora_params, shard_ranks, weight_bytes
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
    t_pp: float = 0.0  # exposed pipeline point-to-point time per step
    t_stage: float = 0.0  # one micro-batch through one stage (compute + TP)
    t_p2p: float = 0.0  # one activation send between stages


def micro_batches(job: Job, lay: Layout, seq: int) -> int:
    """Micro-batches per data-parallel replica per optimizer step (at least one)."""
    gbt = job.global_batch_tokens
    if gbt is None:
        return max(1, lay.pp * 4) if lay.pp > 1 else 1
    return max(1, round(gbt / (lay.dp * lay.micro_batch * seq)))


def vstage_options(a: Architecture, pp: int, n_micro: int) -> list[int]:
    """Interleaving depths Megatron accepts: micro-batches a multiple of PP, at least one layer per chunk
    (uneven chunks allowed, as Llama 3's first and last stages)."""
    if pp <= 1 or n_micro % pp:
        return [1]
    per = math.ceil(a.total_layers / pp)
    return list(range(1, min(per, K.pipeline_virtual_stages_max) + 1))


def best_vstages(a: Architecture, pp: int, n_micro: int, t_stage: float, t_p2p: float) -> int:
    """The interleaving depth that minimises bubble + extra sends: (PP-1)/v stage times against
    2 v sends per micro-batch, of which (1 - comm_overlap) stay exposed; 1 unless it pays."""
    opts = vstage_options(a, pp, n_micro)
    exposed = (1.0 - K.comm_overlap) * t_p2p

    def cost(v: int) -> float:
        return (pp - 1) / v * t_stage + n_micro * 2 * v * exposed + 2 * (pp - 1) * v * t_p2p

    best = min(opts, key=cost)
    return best if cost(best) < 0.99 * cost(1) else 1


def _overlap(t_comm: float, window: float) -> float:
    """Exposed part of t_comm when it runs beside `window` seconds of compute."""
    return t_comm - K.comm_overlap * min(t_comm, window)


def _dp_exposed(job: Job, a: Architecture, m: Machine, lay: Layout, n_micro: int, t_mb: float, f_bwd: float) -> float:
    """Exposed data-parallel (gradient sync / sharded-state) time per optimizer step."""
    if lay.dp <= 1:
        return 0.0
    mp = lay.tp * lay.pp * lay.cp
    stride = lay.tp * lay.cp
    p_gpu = a.total_params / mp
    wb = weight_bytes(job.precision)
    lora = job.method in ("lora", "qlora")
    grad_bytes = (lora_params(a, job.lora_rank) / mp * 4.0) if lora else p_gpu * wb
    w_bytes = p_gpu * (K.nf4_bytes_per_param if job.method == "qlora" else wb)
    t_fwd, t_bwd = (1.0 - f_bwd) * t_mb, f_bwd * t_mb
    sh = lay.sharding

    def coll(op: str, nbytes: float, group: int = lay.dp, st: int = stride) -> float:
        return comm.collective(m, op, nbytes, group, st)

    if sh == "none":
        return _overlap(coll("all_reduce", grad_bytes), t_bwd)
    # ZeRO-1/2: updated weights all-gathered once per step (frozen LoRA weights need none)
    t_ag = 0.0 if lora else _overlap(coll("all_gather", w_bytes), t_fwd)
    if sh == "zero1":
        return _overlap(coll("reduce_scatter", grad_bytes), t_bwd) + t_ag
    if sh == "zero2":  # DeepSpeed reduces every micro-batch (without a pipeline: see search)
        per_step = n_micro if lay.pp == 1 else 1
        return per_step * _overlap(coll("reduce_scatter", grad_bytes), t_bwd) + t_ag
    # ZeRO-3 / FSDP full shard, or hsdp (full shard inside the node, replicas across nodes)
    group = local_dp(lay, m) if sh == "hsdp" else lay.dp
    ag = coll("all_gather", w_bytes, group)
    rs = coll("reduce_scatter", grad_bytes, group)
    per_mb = _overlap(ag, t_fwd) + _overlap(ag + rs, t_bwd)
    t = n_micro * per_mb
    replicas = lay.dp // group
    if sh == "hsdp" and replicas > 1:  # the node's shard all-reduced across the replicas, once per step
        t += _overlap(coll("all_reduce", grad_bytes / group, replicas, stride * group), t_bwd)
    return t


def _p2p_time(m: Machine, lay: Layout, nbytes: float) -> float:
    """One point-to-point activation send between adjacent pipeline stages."""
    stride = lay.tp * lay.cp * lay.dp  # GPUs of one stage
    if stride * lay.pp > m.gpus_per_node:
        # the pipeline leaves the node: the slowest boundary sets the pace. With a stage per node or
        # more, every GPU of the node sends at once; else only the boundary stage's GPUs share the NICs
        bw = m.inter_bw_per_node() / min(m.gpus_per_node, stride)
        return nbytes / bw + (K.collective_latency_us + K.hop_latency_us) * 1e-6
    return nbytes / m.intra_bw(2) + comm.intra_latency_us(m, 2) * 1e-6


def train_perf(job: Job, a: Architecture, m: Machine, lay: Layout) -> TrainPerf:
    seq = default_seq_len(job)
    n_micro = micro_batches(job, lay, seq)
    tokens_mb = lay.micro_batch * seq / lay.cp
    hw_dense, hw_attn, model_flops = train_flops_per_token(a, job.method, seq, lay.ckpt, job.flash_attention)
    dense_fwd = 2.0 * a.matmul_params_active
    f_bwd = max(0.0, 1.0 - dense_fwd / hw_dense) if hw_dense else 2.0 / 3.0
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
        n_pass = 3.0 if lay.ckpt == "full" else 2.0
        t_mb += n_pass * a.linear_params / mp * 4.5 / (m.hbm_bw * K.hbm_efficiency)

    act_b = 4.0 if job.precision in ("fp32", "tf32") else 2.0
    layers_stage = math.ceil(a.total_layers / lay.pp)
    t_tp_mb = 0.0
    if lay.tp > 1:  # Megatron TP: 2 all-reduces forward + 2 backward per layer (+2 with full recompute)
        n_ar = 4 + (2 if lay.ckpt == "full" else 0)
        t_tp_mb = n_ar * layers_stage * comm.collective(m, "all_reduce", tokens_mb * a.hidden * act_b, lay.tp, 1)
    t_cp_mb = 0.0
    if lay.cp > 1:  # ring attention: K/V pass around the CP ring (forward once, backward twice), overlapped
        kv = tokens_mb * lay.cp * a.kv_width * 2 * act_b / lay.tp
        t_cp_mb = _overlap(3 * layers_stage * comm.collective(m, "all_gather", kv, lay.cp, lay.tp), t_mb)
    t_stage = t_mb + t_tp_mb + t_cp_mb
    t_p2p = t_pp = t_bubble = 0.0
    if lay.pp > 1:
        v = lay.vstages
        t_p2p = _p2p_time(m, lay, tokens_mb * a.hidden * act_b / lay.tp)
        # steady state: 2 v sends per micro-batch, hidden but for (1 - comm_overlap); the warm-up and
        # cool-down cross every stage boundary in the open; interleaved 1F1B shrinks the bubble v-fold
        t_pp = n_micro * 2 * v * (1.0 - K.comm_overlap) * t_p2p + 2 * (lay.pp - 1) * v * t_p2p
        t_bubble = (lay.pp - 1) / v * t_stage
    t_pipe = n_micro * t_stage + t_bubble + t_pp

    t_dp_exposed = _dp_exposed(job, a, m, lay, n_micro, t_mb, f_bwd)
    t_compute = n_micro * t_mb
    # optimizer step: read+write the sharded state once (memory bound)
    t_opt = 0.0
    if job.method in ("pretrain", "full"):
        t_opt = a.total_params / mp / shard_ranks(lay, m) * 32.0 / (m.hbm_bw * K.hbm_efficiency)
    t_step = t_pipe + t_dp_exposed + t_opt
    tokens_step = n_micro * lay.micro_batch * seq * lay.dp
    tps = tokens_step / t_step
    prec_peak = check_precision(m.gpu, job.precision)
    mfu = model_flops * tps / (m.gpus * prec_peak) if m.gpus else 0.0
    parts = {
        "compute": t_compute + t_bubble,
        "network": n_micro * (t_tp_mb + t_cp_mb) + t_pp + t_dp_exposed,
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
        t_pp=t_pp,
        t_stage=t_stage,
        t_p2p=t_p2p,
    )


def seconds_per_token_floor(
    job: Job,
    a: Architecture,
    m: Machine,
    split: Layout,
    shardings: list[str],
    micro_batches_opts: list[int],
    ckpt: str = "none",
) -> float:
    """A lower bound on the machine's seconds per trained token for any layout of this split (any
    micro-batch, checkpointing, interleaving and of the given shardings): model FLOPs at the full
    achieved rate, the TP all-reduce bytes (they do not shrink with the micro-batch), the smallest
    exposed share of the gradient sync, and the smallest pipeline bubble. The search visits splits in
    the order of this floor and stops once the floor passes the best layout found."""
    seq = default_seq_len(job)
    # ckpt: the least recomputation any layout of the split fits with; micro_batches_opts: those that fit
    hw_d, hw_a, _ = train_flops_per_token(a, job.method, seq, ckpt, job.flash_attention)
    precs = {"bf16", "fp8"} if job.precision == "fp8" else {"tf32" if job.precision == "tf32" else job.precision}
    rate = max(check_precision(m.gpu, p) * efficiency(m, p) for p in precs)
    # the GEMM wave tail shrinks with the rows per GPU: the largest micro-batch tried is the best case
    passes = ("lora" if job.method in ("lora", "qlora") else "train") + ("_recompute" if ckpt == "full" else "")
    tail = gemm_size_factor(a, split.tp, max(micro_batches_opts) * seq / split.cp, passes)
    t = (hw_d / tail + hw_a) / (m.gpus * rate)  # per token of the whole machine
    act_b = 4.0 if job.precision in ("fp32", "tf32") else 2.0
    per_replica = 1.0 / split.dp  # a replica's share of each token, spread over its TP x PP x CP GPUs
    if 1 < split.tp <= m.gpus_per_node:
        per_tok = 2.0 * (split.tp - 1) / split.tp * a.hidden * act_b / m.intra_bw(split.tp)
        t += 4 * math.ceil(a.total_layers / split.pp) * per_tok * per_replica / split.cp

    def at(mb: int) -> tuple[int, float]:  # (micro-batches, tokens) per step at this micro-batch size
        n = micro_batches(job, Layout(**{**split.__dict__, "micro_batch": mb}), seq)
        return n, float(n * mb * seq * split.dp)

    n_mb = max(at(b)[0] for b in micro_batches_opts)  # most micro-batches: the smallest bubble
    tokens_step = max(at(b)[1] for b in micro_batches_opts)  # most tokens: the least sync per token
    mb_tokens = max(micro_batches_opts) * seq * split.dp  # machine tokens per micro-batch, at most
    if split.pp > 1:  # the bubble stretches compute and TP, (PP-1)/v stage times over the micro-batches
        t += t * (split.pp - 1) / (K.pipeline_virtual_stages_max * n_mb)
    if split.dp > 1 and shardings:
        mp = split.tp * split.pp * split.cp
        lora = job.method in ("lora", "qlora")
        p_gpu = a.total_params / mp
        grad = (lora_params(a, job.lora_rank) / mp * 4.0) if lora else p_gpu * weight_bytes(job.precision)
        w = p_gpu * (K.nf4_bytes_per_param if job.method == "qlora" else weight_bytes(job.precision))
        stride, loc = split.tp * split.cp, local_dp(split, m)

        def c(op: str, nbytes: float, group: int, st: int = stride) -> float:
            return comm.collective(m, op, nbytes, group, st)

        opts = []  # bytes on the wire per token, per sharding the search may use
        if set(shardings) & {"none", "zero1", "zero2"}:
            opts.append(c("all_reduce", grad, split.dp) / tokens_step)
        if set(shardings) & {"zero3", "fsdp"}:  # gathers every micro-batch
            opts.append((2 * c("all_gather", w, split.dp) + c("reduce_scatter", grad, split.dp)) / mb_tokens)
        if "hsdp" in shardings:
            inner = (2 * c("all_gather", w, loc) + c("reduce_scatter", grad, loc)) / mb_tokens
            cross = c("all_reduce", grad / loc, split.dp // loc, stride * loc) / tokens_step if loc < split.dp else 0.0
            opts.append(inner + cross)
        t += (1.0 - K.comm_overlap) * min(opts) if opts else 0.0
    return t
