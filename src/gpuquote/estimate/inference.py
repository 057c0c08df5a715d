"""Inference: prefill is compute-bound, decode streams weights + KV per step (roofline per kernel).

A decode step costs max(GEMM FLOPs at achieved FLOP/s, weight bytes at achieved HBM bandwidth)
+ KV bytes / bandwidth + TP all-reduces + a fixed per-layer latency (launches, tails).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpuquote.estimate import comm
from gpuquote.estimate.compute import efficiency
from gpuquote.estimate.constants import K
from gpuquote.estimate.memory import infer_weight_bytes_per_gpu, kv_bytes_per_token_gpu
from gpuquote.estimate.setup import Machine, check_precision
from gpuquote.models import Architecture

KV_BYTES = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0}


@dataclass
class InferModel:
    """Per-replica constants of one (architecture, GPU, precision, TP, PP) serving setup."""

    a: Architecture
    m: Machine
    precision: str
    tp: int
    pp: int
    kv_bytes: float

    def __post_init__(self) -> None:
        a = self.a
        self.mp = self.tp * self.pp
        self.peak = check_precision(self.m.gpu, self.precision)
        self.bw = self.m.hbm_bw * K.hbm_efficiency
        self.weight_bytes = infer_weight_bytes_per_gpu(a, self.precision, self.tp, self.pp)
        self.w_bw = self.bw * K.quantized_bw_factor.get(self.precision, 1.0)
        self.kv_tok = kv_bytes_per_token_gpu(a, self.kv_bytes, self.tp, self.pp)
        self.act_b = 4.0 if self.precision in ("fp32", "tf32") else 2.0
        self.tp_bw = self.m.group_bw(self.tp, 1) if self.tp > 1 else 0.0
        self.layer_lat = a.total_layers * K.layer_latency_us * 1e-6
        self.rate = self.peak * efficiency(
            self.m, "bf16" if self.precision in ("int8", "int4") else self.precision
        )

    def _tp_comm(self, tokens: float) -> float:
        if self.tp <= 1:
            return 0.0
        return (
            2
            * self.a.total_layers
            * comm.all_reduce(tokens * self.a.hidden * self.act_b, self.tp, self.tp_bw)
        )

    def prefill_time(self, seqs: float, prompt: float) -> float:
        """Seconds to prefill `seqs` prompts of `prompt` tokens together."""
        a = self.a
        tokens = seqs * prompt
        body = 2.0 * (a.matmul_params_active - a.vocab * a.hidden)
        flops = tokens * (body + a.attention_flops_per_token(prompt / 2.0)) + seqs * 2.0 * a.vocab * a.hidden
        rate = self.rate
        t = max(flops / self.mp / rate, self.weight_bytes / self.w_bw)
        return t + self._tp_comm(tokens) + self.layer_lat

    def step_time(self, seqs: float, context: float) -> float:
        """Seconds for one decode step of `seqs` sequences at mean context `context`."""
        a = self.a
        flops = 2.0 * a.matmul_params_active * seqs / self.mp
        wbytes = self.weight_bytes
        if a.is_moe:  # experts touched by a batch: 1 - (1 - k/E)^B of the expert weights
            touched = 1.0 - (1.0 - a.active_experts / a.experts) ** seqs
            expert_share = 1.0 - (a.total_params - a.body_params + 0.0) / a.total_params
            wbytes = wbytes * (1.0 - expert_share * (1.0 - touched))
        rate = self.rate
        t_gemm = max(flops / rate, wbytes / self.w_bw)
        t_kv = seqs * context * self.kv_tok / self.bw
        return t_gemm + t_kv + self._tp_comm(seqs) + self.layer_lat


@dataclass
class InferPerf:
    tokens_per_s: float
    ttft_s: float
    tpot_s: float
    bound: str
    seqs: float


def static_batch(im: InferModel, prompts: int, samples: int, prompt: int, output: int) -> InferPerf:
    """A batch of prompts prefilled together, then decoded to `output` tokens each."""
    seqs = prompts * samples
    t_pre = im.prefill_time(prompts, prompt)
    ctx = prompt + output / 2.0
    t_step = im.step_time(seqs, ctx)
    total = t_pre + output * t_step
    flops = 2.0 * im.a.matmul_params_active * seqs / im.mp
    rate = im.rate
    bound = (
        "compute" if flops / rate > im.weight_bytes / im.w_bw + seqs * ctx * im.kv_tok / im.bw else "memory"
    )
    return InferPerf(tokens_per_s=seqs * output / total, ttft_s=t_pre, tpot_s=t_step, bound=bound, seqs=seqs)


def online(im: InferModel, rps: float, prompt: int, output: int, samples: int, max_seqs: float) -> InferPerf:
    """Steady serving at `rps` requests/s with continuous batching.

    Prefill work takes a share u = rps x prefill(1 prompt) of the GPU; decode steps stretch by
    1/(1-u). Concurrency follows Little's law, B = rps x samples x (TTFT + output x step(B)),
    solved by damped fixed-point iteration; past the KV capacity or u >= 1 the replica saturates.
    """
    ctx = prompt + output / 2.0
    t_pre1 = im.prefill_time(1, prompt)
    u = min(0.95, rps * max(0.0, t_pre1 - im.layer_lat))
    seqs = 1.0
    for _ in range(100):
        ts = im.step_time(seqs, ctx) / (1.0 - u)
        new = min(max_seqs, rps * samples * (t_pre1 + output * ts))
        if abs(new - seqs) <= 1e-4 * seqs:
            seqs = new
            break
        seqs = max(1.0, 0.5 * (seqs + new))
    ts = im.step_time(seqs, ctx) / (1.0 - u)
    capacity = seqs / samples / (t_pre1 + output * ts)
    served = min(rps, capacity)
    saturated = served < rps * 0.999
    return InferPerf(
        tokens_per_s=served * output * samples,
        ttft_s=t_pre1 + ts,
        tpot_s=ts,
        bound="compute" if saturated else "memory",
        seqs=seqs,
    )


def max_sequences(kv_tokens: float, prompt: int, output: int, samples: int) -> int:
    """Prompts whose KV (shared prompt, `samples` continuations each) fit in kv_tokens."""
    per = prompt + samples * output
    return max(0, math.floor(kv_tokens / per))
