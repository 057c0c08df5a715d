"""Inference: prefill is compute-bound, decode streams weights + KV per step (roofline per kernel).

A decode step costs max(GEMM FLOPs at achieved FLOP/s, weight bytes at achieved HBM bandwidth)
+ KV bytes / bandwidth + TP all-reduces + a fixed per-layer latency (launches, tails).
A pipeline (layer split) runs its stages one after the other for each token: a micro-batch of
seqs / PP sequences visits every stage, so PP adds KV room and batch throughput, never single-stream
speed. Engines differ by a fitted kernel-efficiency factor and by how they batch (see `engine_*`
in data/calibration.yaml).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpuquote.estimate import comm
from gpuquote.estimate.compute import efficiency
from gpuquote.estimate.constants import K
from gpuquote.estimate.memory import infer_weight_bytes_per_gpu, kv_bytes_per_token_gpu
from gpuquote.estimate.setup import Machine, check_precision
from gpuquote.hardware.interconnect import PCIE_EFFECTIVE_GBS
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
    engine: str = "trtllm"

    def __post_init__(self) -> None:
        a = self.a
        self.mp = self.tp * self.pp
        self.peak = check_precision(self.m.gpu, self.precision)
        self.eng = float(K.engine_efficiency.get(self.engine, 1.0))
        self.continuous = self.engine in K.engine_continuous_batching
        self.seq_step = float(K.engine_seq_step_us.get(self.engine, 0.0)) * 1e-6
        self.bw = self.m.hbm_bw * K.hbm_efficiency * self.eng
        self.weight_bytes = infer_weight_bytes_per_gpu(a, self.precision, self.tp, self.pp)
        self.w_bw = self.bw * K.quantized_bw_factor.get(self.precision, 1.0)
        self.kv_tok = kv_bytes_per_token_gpu(a, self.kv_bytes, self.tp, self.pp)
        self.act_b = 4.0 if self.precision in ("fp32", "tf32") else 2.0
        self.tp_bw = self.m.group_bw(self.tp, 1) if self.tp > 1 else 0.0
        self.layer_lat = a.total_layers * K.layer_latency_us * 1e-6
        self.rate = self.eng * self.peak * efficiency(
            self.m, "bf16" if self.precision in ("int8", "int4") else self.precision
        )
        # an all-reduce between GPUs that share no NVLink goes through PCIe (often host memory)
        pcie = PCIE_EFFECTIVE_GBS.get(int(self.m.gpu.pcie_gen or 4), 25.0) * 1e9
        self.pcie_tp = 1 < self.tp <= self.m.gpus_per_node and self.tp_bw <= pcie * 1.0001
        if self.pcie_tp:  # no P2P: NCCL stages through host memory at far below the link rate
            self.tp_bw = min(self.tp_bw, K.pcie_allreduce_gbs * 1e9)
        self.p2p_bw = self.m.group_bw(2, 1) if self.pp > 1 else 0.0
        # GPTQ through exllama v1 (TGI 1.0): int4 weights dequantised on CUDA cores per token row
        self.q4 = self.precision == "int4" and self.engine in K.exllama_engines
        self.q4_params = (a.matmul_params_active - a.vocab * a.hidden) / self.mp
        self.dq_rate = float(self.m.gpu.fp32_tflops or 0.0) * 1e12 or self.peak / 4.0

    def _tp_comm(self, tokens: float) -> float:
        """Two all-reduces per layer (attention and MLP outputs) over the TP group, all layers."""
        if self.tp <= 1:
            return 0.0
        per = comm.all_reduce(tokens * self.a.hidden * self.act_b, self.tp, self.tp_bw)
        if self.pcie_tp:
            per += K.pcie_allreduce_latency_us * 1e-6
        return 2 * self.a.total_layers * per

    def _q4_extra(self, rows: float) -> float:
        """Time exllama v1 adds over an ideal int4 GEMM for `rows` tokens in one pass of one GPU.

        Below exllama_recons_rows the q4 kernel dequantises every weight again for each token row
        (one grid row per token, half2 math on CUDA cores, not tensor cores) and each call costs a
        fixed exllama_call_us that short kernels cannot hide; from there on it rebuilds the fp16 matrix
        (writes 2 B per weight) and cuBLAS reads it back (2 B) for a dense GEMM long enough to hide it."""
        if not self.q4:
            return 0.0
        if rows < K.exllama_recons_rows:
            calls = self.a.total_layers * K.exllama_calls_per_layer * K.exllama_call_us * 1e-6
            return calls + rows * self.q4_params * K.exllama_dequant_ops / self.dq_rate
        return self.q4_params * 4.0 / self.bw

    def _p2p(self, tokens: float) -> float:
        """Activation sends between the PP stages of one token's (or one micro-batch's) trip."""
        if self.pp <= 1:
            return 0.0
        one = K.collective_latency_us * 1e-6 + tokens * self.a.hidden * self.act_b / self.p2p_bw
        return (self.pp - 1) * one

    def _prefill_stage(self, seqs: float, prompt: float) -> float:
        """One pass of `seqs` prompts through ONE pipeline stage (the whole model when PP = 1)."""
        a = self.a
        tokens = seqs * prompt
        body = 2.0 * (a.matmul_params_active - a.vocab * a.hidden)
        flops = tokens * (body + a.attention_flops_per_token(prompt / 2.0)) + seqs * 2.0 * a.vocab * a.hidden
        t = max(flops / self.mp / self.rate, self.weight_bytes / self.w_bw) + self._q4_extra(tokens)
        return t + (self._tp_comm(tokens) + self.layer_lat) / self.pp

    def prefill_time(self, seqs: float, prompt: float) -> float:
        """Seconds to prefill `seqs` prompts of `prompt` tokens together.

        Through PP stages the prompts go as micro-batches: m of them fill the pipeline in
        (m + PP - 1) stage times; one prompt alone gains nothing from more stages."""
        if self.pp <= 1:
            return self._prefill_stage(seqs, prompt)
        best = math.inf
        for m in {1.0, min(float(self.pp), max(1.0, seqs)), max(1.0, seqs)}:
            t = (m + self.pp - 1) * self._prefill_stage(seqs / m, prompt) + self._p2p(seqs / m * prompt)
            best = min(best, t)
        return best

    def step_time(self, seqs: float, context: float) -> float:
        """Seconds for one decode step of `seqs` sequences at mean context `context`.

        With PP stages the batch splits into min(PP, seqs) micro-batches; each token still visits
        every stage, so a step is PP stage passes of one micro-batch: at batch 1 the whole model's
        weights are read per token, as on one GPU holding them all."""
        a = self.a
        mb = seqs / min(float(self.pp), max(1.0, seqs)) if self.pp > 1 else seqs
        flops = 2.0 * a.matmul_params_active * mb / self.mp
        wbytes = self.weight_bytes
        if a.is_moe:  # experts touched by a batch: 1 - (1 - k/E)^B of the expert weights
            touched = 1.0 - (1.0 - a.active_experts / a.experts) ** mb
            expert_share = 1.0 - (a.total_params - a.body_params + 0.0) / a.total_params
            wbytes = wbytes * (1.0 - expert_share * (1.0 - touched))
        t_gemm = max(flops / self.rate, wbytes / self.w_bw) + self._q4_extra(mb)
        t_kv = mb * context * self.kv_tok / self.bw
        t = self.pp * (t_gemm + t_kv) + self._tp_comm(mb) + self.layer_lat + self._p2p(mb)
        return t + seqs * self.seq_step


@dataclass
class InferPerf:
    tokens_per_s: float
    ttft_s: float
    tpot_s: float
    bound: str
    seqs: float


def static_batch(im: InferModel, prompts: int, samples: int, prompt: int, output: int) -> InferPerf:
    """`prompts` sequences in flight: a static batch, or kept full by continuous batching.

    Static (TensorRT-LLM gptSessionBenchmark, gpt-fast): all prompts prefilled together, then
    decoded to `output` tokens each. Continuous (vLLM, SGLang, TGI): a finished sequence is replaced
    at once, so about seqs / output new prompts join per step and their prefill pauses the decode
    of the others; per `output` steps the replica runs seqs prefills in groups of that size."""
    seqs = prompts * samples
    ctx = prompt + output / 2.0
    t_step = im.step_time(seqs, ctx)
    if im.continuous and prompts > 1:
        group = max(1.0, min(float(prompts), prompts / output))
        t_pre = im.prefill_time(group, prompt)
        total = output * t_step + prompts / group * t_pre
    else:
        t_pre = im.prefill_time(prompts, prompt)
        total = t_pre + output * t_step
    flops = 2.0 * im.a.matmul_params_active * seqs / im.mp
    rate = im.rate
    bound = (
        "compute" if flops / rate > im.weight_bytes / im.w_bw + seqs * ctx * im.kv_tok / im.bw else "memory"
    )
    return InferPerf(tokens_per_s=seqs * output / total, ttft_s=t_pre, tpot_s=t_step, bound=bound, seqs=seqs)


def online(im: InferModel, rps: float, prompt: int, output: int, samples: int, max_seqs: float) -> InferPerf:
    """Steady serving at `rps` requests/s (Poisson arrivals) with continuous batching.

    Prefill work takes a share u = rps x prefill(1 prompt) of the GPU; decode steps stretch by
    1/(1-u). Concurrency follows Little's law, B = rps x samples x (TTFT + output x step(B)),
    solved by damped fixed-point iteration; past the KV capacity or u >= 1 the replica saturates.
    Queueing: a prompt waits for the prefills ahead of it (M/G/1, Pollaczek-Khinchine with the
    prompt-length spread serving_prompt_cv2) and, as the load nears what the KV-bounded batch can
    serve, for a free batch slot (M/D/1 on the replica's capacity), so TTFT rises steeply toward
    saturation as measured servers' does.
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
    # the most the replica serves with a full KV-bounded batch: the load's share of it is rho
    full = max(1.0, max_seqs)
    cap_max = full / samples / (t_pre1 + output * im.step_time(full, ctx) / (1.0 - u))
    rho = min(0.999, rps / cap_max) if cap_max > 0 else 0.999
    wait_prefill = u / (1.0 - u) * t_pre1 * (1.0 + K.serving_prompt_cv2) / 2.0
    wait_slot = rho / (2.0 * (1.0 - rho)) / cap_max if rho > 0 else 0.0
    return InferPerf(
        tokens_per_s=served * output * samples,
        ttft_s=t_pre1 + ts + wait_prefill + wait_slot,
        tpot_s=ts,
        bound="compute" if saturated else "memory",
        seqs=seqs,
    )


def max_sequences(kv_tokens: float, prompt: int, output: int, samples: int) -> int:
    """Prompts whose KV (shared prompt, `samples` continuations each) fit in kv_tokens."""
    per = prompt + samples * output
    return max(0, math.floor(kv_tokens / per))
