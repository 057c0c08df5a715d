"""Bytes per GPU for training and inference, part by part.

Training follows Rajbhandari et al. 2020 (ZeRO: 2+2+12 bytes per parameter for mixed-precision
Adam, sharded by stage) and Korthikanti et al. 2022 (activations per layer per token, with tensor
and sequence parallelism, selective and full recomputation), generalised to GQA and gated MLPs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from gpuquote.estimate.constants import K
from gpuquote.estimate.job import Job
from gpuquote.estimate.setup import Layout, Machine
from gpuquote.models import Architecture

# Optimizer state bytes per trained parameter besides the fp32 master copy.
OPTIMIZER_STATE_BYTES = {"adamw": 8.0, "adamw-8bit": 2.0, "sgd": 4.0, "lion": 4.0, "adafactor": 0.0}


@dataclass
class Memory:
    weights: float = 0.0
    gradients: float = 0.0
    optimizer: float = 0.0
    activations: float = 0.0
    kv_cache: float = 0.0
    overhead: float = 0.0

    @property
    def total(self) -> float:
        return (
            self.weights + self.gradients + self.optimizer + self.activations + self.kv_cache + self.overhead
        )


def default_seq_len(job: Job) -> int:
    """Training sequence length: as stated; else 2048 for pretraining, 512 for fine-tuning samples."""
    if job.seq_len:
        return job.seq_len
    return 2048 if job.method == "pretrain" else 512


def weight_bytes(precision: str) -> float:
    """Bytes of a stored 16/32-bit training weight (FP8 training keeps BF16 weights)."""
    return 4.0 if precision in ("fp32", "tf32") else 2.0


@lru_cache(maxsize=1024)
def lora_params(a: Architecture, rank: int) -> float:
    """LoRA adapters on every attention and MLP projection: rank x (in + out) per matrix."""
    h = a.hidden
    attn = rank * ((h + a.q_width) + (h + a.kv_width) + (a.attn_out_width + h))
    f = (a.moe_ffn_hidden or a.ffn_hidden) if a.is_moe else a.ffn_hidden
    n_mlp = (3 if a.gated else 2) * (max(1, a.experts) if a.is_moe else 1)
    return float(a.total_layers * (attn + n_mlp * rank * (h + f)))


def quantized_weight_bytes(a: Architecture, precision: str) -> float:
    """Inference weights: quantised formats convert the body's linear layers and an untied LM head;
    the embedding table stays 16-bit (gpt-fast, AWQ/GPTQ, ModelOpt FP8 all do this)."""
    if precision in ("fp32", "tf32"):
        return 4.0 * a.total_params
    if precision in ("bf16", "fp16"):
        return 2.0 * a.total_params
    per = {"fp8": 1.0, "int8": K.int8_bytes_per_param, "int4": K.int4_bytes_per_param}[precision]
    return per * (a.linear_params + a.head_params) + 2.0 * a.embedding_params


@lru_cache(maxsize=4096)
def _stage_params(a: Architecture, pp: int) -> float:
    """Parameters of the largest pipeline stage (the first: its layers + the embedding)."""
    if pp == 1:
        return float(a.total_params)
    per_layer = a.body_params / a.total_layers
    return math.ceil(a.total_layers / pp) * per_layer + max(
        a.embedding_params, a.head_params or a.vocab * a.hidden
    )


def activation_bytes_per_token_layer(
    a: Architecture, lay: Layout, seq: int, flash: bool, ckpt: str, act_bytes: float
) -> tuple[float, float]:
    """(stored, working) activation bytes per token per layer on one GPU.

    Korthikanti et al. 2022 eq. 1-5 with 16-bit values: LayerNorm inputs and the GEMM inputs that
    TP replicates (8h) shard only under sequence parallelism; Q, K, V, attention output and the MLP
    intermediates shard over TP; the s^2 score matrix exists only without FlashAttention and without
    selective recompute. No dropout masks (modern LLM recipes train without dropout).
    """
    h = a.hidden
    f = (
        (a.active_experts + a.shared_experts) * (a.moe_ffn_hidden or a.ffn_hidden)
        if a.is_moe
        else a.ffn_hidden
    )
    tp = lay.tp
    scale = act_bytes / 2.0
    replicated = 8.0 * h
    sharded = 2.0 * (a.q_width + a.kv_width + a.attn_out_width) + (6.0 if a.gated else 4.0) * f
    scores = 0.0 if (flash or ckpt != "none") else 2.0 * a.heads * seq
    full_layer = (replicated / (tp if lay.sp else 1) + (sharded + scores) / tp) * scale
    if ckpt == "full":
        return 2.0 * h / (tp if lay.sp else 1) * scale, full_layer
    return full_layer, 0.0


def local_dp(lay: Layout, m: Machine) -> int:
    """Data-parallel ranks inside one node (Megatron rank order: TP fastest, then CP, then DP)."""
    return max(1, min(lay.dp, m.gpus_per_node // max(1, lay.tp * lay.cp)))


def shard_ranks(lay: Layout, m: Machine) -> int:
    """Ranks that split the sharded states: all data-parallel ranks; hsdp only those of one node."""
    if lay.sharding == "none":
        return 1
    return local_dp(lay, m) if lay.sharding == "hsdp" else lay.dp


def train_memory(job: Job, a: Architecture, m: Machine, lay: Layout, n_micro: int) -> Memory:
    """Per-GPU bytes of a training job under a layout (the largest pipeline stage)."""
    wb = weight_bytes(job.precision)
    tp, pp = lay.tp, lay.pp
    p_gpu = _stage_params(a, pp) / tp
    layer_gpu = a.layer_params / tp
    z3 = lay.sharding in ("zero3", "fsdp", "hsdp")
    sh = shard_ranks(lay, m)  # hsdp: full shard over the data-parallel ranks of one node only
    shard_w = sh if z3 else 1
    shard_g = sh if lay.sharding in ("zero2", "zero3", "fsdp", "hsdp") else 1
    shard_o = sh if lay.sharding != "none" else 1
    mem = Memory()
    master = 4.0 if wb < 4 else 0.0
    if job.method in ("pretrain", "full"):
        state = OPTIMIZER_STATE_BYTES[job.optimizer] if job.optimizer != "adafactor" else 8.0 / a.hidden
        mem.weights = p_gpu * wb / shard_w
        mem.gradients = layer_gpu * wb if job.optimizer_in_backward else p_gpu * wb / shard_g
        mem.optimizer = 0.0 if job.offload != "none" else p_gpu * (master + state) / shard_o
        if job.offload == "parameters":
            mem.weights = 0.0
        gather_bytes = wb
    else:
        if job.method == "qlora":
            frozen = (
                (K.nf4_bytes_per_param * a.linear_params + 2.0 * (a.total_params - a.linear_params))
                * _stage_params(a, pp)
                / a.total_params
            )
            gather_bytes = K.nf4_bytes_per_param
        else:
            frozen = _stage_params(a, pp) * wb
            gather_bytes = wb
        trainable = lora_params(a, job.lora_rank) / (tp * pp)
        # adapters in fp32: weight 4 + grad 4 + Adam 8 (Hu et al. 2021 / PEFT default), sharded like the rest
        mem.weights = frozen / tp / shard_w + 4.0 * trainable / shard_w
        mem.gradients = 4.0 * trainable / shard_g
        state = OPTIMIZER_STATE_BYTES[job.optimizer] if job.optimizer != "adafactor" else 0.1
        mem.optimizer = state * trainable / shard_o
    if z3 and sh > 1:
        # gathered layers in flight (current + prefetch) plus one layer of unsharded gradients
        mem.weights += K.fsdp_prefetch_layers * layer_gpu * gather_bytes
        mem.gradients += layer_gpu * wb if job.method in ("pretrain", "full") else 0.0

    seq = default_seq_len(job)
    tokens = lay.micro_batch * seq / lay.cp
    act_b = 4.0 if job.precision in ("fp32", "tf32") else 2.0
    stored, working = activation_bytes_per_token_layer(
        a, lay, seq // lay.cp, job.flash_attention, lay.ckpt, act_b
    )
    layers_stage = math.ceil(a.total_layers / pp)
    in_flight = min(pp, n_micro) if pp > 1 else 1
    if pp > 1 and lay.vstages > 1:  # interleaved warm-up holds (v pp + pp - 1) chunks of layers / (v pp)
        in_flight *= 1.0 + (pp - 1) / (lay.vstages * pp)
    act = tokens * (stored * layers_stage * in_flight + working)
    if pp == 1:  # logits at the loss live on the last stage; with PP the first stage dominates
        act += tokens * a.vocab / tp * K.logits_bytes_per_value * (act_b / 2.0)
    act += tokens * a.hidden * act_b * 2  # embedding output and its gradient
    mem.activations = act
    alloc = mem.total
    mem.overhead = K.cuda_context_gib * (1 << 30) + K.allocator_overhead * alloc
    return mem


def infer_weight_bytes_per_gpu(a: Architecture, precision: str, tp: int, pp: int) -> float:
    return quantized_weight_bytes(a, precision) / (tp * pp)


def kv_bytes_per_token_gpu(a: Architecture, kv_bytes: float, tp: int, pp: int) -> float:
    """KV cache per token on one GPU: heads split over TP (replicated past kv_heads; MLA latent too)."""
    per = a.kv_bytes_per_token(kv_bytes)
    split = 1 if a.attention == "mla" else min(tp, a.n_kv_heads)
    return per / split / pp


def infer_workspace_bytes(a: Architecture, tp: int, seqs: int, prompt_tokens: int, act_bytes: float) -> float:
    """Activation workspace of a serving engine: one prefill chunk through one layer plus sampler logits."""
    chunk = min(seqs * prompt_tokens, K.inference_batched_tokens)
    f = (
        (a.active_experts + a.shared_experts) * (a.moe_ffn_hidden or a.ffn_hidden)
        if a.is_moe
        else a.ffn_hidden
    )
    per_tok = (4.0 * a.hidden + (a.q_width + a.kv_width) + (3.0 if a.gated else 2.0) * f / tp) * act_bytes / 2
    return chunk * per_tok + seqs * a.vocab * 4.0
