"""Serving layouts: memory of a TP x PP replica, whether replicas meet a request rate and TTFT/TPOT
limits, and the serving shape (TP per replica x replicas) that meets them on the fewest GPUs.

Split from api.py (which assembles the estimate); every function here is cached on hashable inputs,
because the planner asks for the same replica on many offers.
"""

from __future__ import annotations

from functools import lru_cache

from gpuquote.estimate.constants import K
from gpuquote.estimate.inference import KV_BYTES, InferModel, max_sequences, online
from gpuquote.estimate.job import Job
from gpuquote.estimate.memory import Memory, infer_workspace_bytes
from gpuquote.estimate.search import MAX_GPUS
from gpuquote.estimate.setup import GIB, Machine
from gpuquote.models import Architecture


def _kv_precision(job: Job) -> str:
    if job.kv_cache_precision:
        return job.kv_cache_precision
    if job.precision == "fp8":
        return "fp8"  # FP8 checkpoints (ModelOpt, vLLM fp8) quantise the KV cache with the weights
    return "fp32" if job.precision in ("fp32", "tf32") else ("fp16" if job.precision == "fp16" else "bf16")


DEFAULT_ENGINE = "trtllm"
_TP_CHOICES = (1, 2, 4, 8, 16, 32, 64)


def _engine(job: Job) -> str:
    return job.engine or DEFAULT_ENGINE


def _infer_model(job: Job, a: Architecture, m: Machine, tp: int, pp: int, kvb: float) -> InferModel:
    return _cached_model(a, m, job.precision, tp, pp, kvb, _engine(job))


@lru_cache(maxsize=4096)
def _cached_model(a: Architecture, m: Machine, precision: str, tp: int, pp: int, kvb: float, eng: str) -> InferModel:
    return InferModel(a, m, precision, tp, pp, kvb, eng)


def _serving(job: Job) -> bool:
    return job.requests_per_s is not None and job.batch is None


def _fitting_tps(job: Job, a: Architecture, m: Machine, pp: int, kvb: float) -> list[int]:
    """TP degrees (dividing the heads, inside one node, at most the GPUs) whose replica holds the weights."""
    cap = min(m.gpus, m.gpus_per_node)
    return [
        tp
        for tp in _TP_CHOICES
        if tp * pp <= max(cap, pp) and a.heads % tp == 0 and _infer_memory(job, a, m, tp, pp, kvb, 1)[1]
    ]


@lru_cache(maxsize=65536)
def _serve(job: Job, a: Architecture, m: Machine, tp: int, pp: int, kvb: float, replicas: int) -> tuple:
    """(per-replica InferPerf, meets rate and limits) of `replicas` TP x PP replicas sharing requests_per_s."""
    im = _infer_model(job, a, m, tp, pp, kvb)
    pool = _infer_memory(job, a, m, tp, pp, kvb, None)[2]
    cap = max(1, max_sequences(pool / im.kv_tok, job.prompt_tokens, job.output_tokens, job.samples_per_prompt))
    rps = float(job.requests_per_s or 0.0)
    perf = online(
        im,
        rps / replicas,
        job.prompt_tokens,
        job.output_tokens,
        job.samples_per_prompt,
        cap * job.samples_per_prompt,
    )
    ok = perf.tokens_per_s * replicas >= 0.999 * rps * job.output_tokens * job.samples_per_prompt
    ok = ok and not (job.max_ttft_ms and perf.ttft_s * 1e3 > job.max_ttft_ms)
    ok = ok and not (job.max_tpot_ms and perf.tpot_s * 1e3 > job.max_tpot_ms)
    return perf, bool(ok)


@lru_cache(maxsize=16384)
def _replicas_needed(job: Job, a: Architecture, m: Machine, tp: int, pp: int, kvb: float) -> int | None:
    """Fewest TP x PP replicas that serve requests_per_s within the limits (None: not within MAX_GPUS)."""
    most = MAX_GPUS // (tp * pp)
    hi = 1
    while not _serve(job, a, m, tp, pp, kvb, hi)[1]:
        if hi >= most:
            return None
        hi = min(most, hi * 2)
    lo = hi // 2  # lo fails (or is 0), hi meets
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _serve(job, a, m, tp, pp, kvb, mid)[1]:
            hi = mid
        else:
            lo = mid
    return hi


def serving_shapes(job: Job, a: Architecture, m: Machine) -> list[tuple[int, int, int]]:
    """(GPUs, TP, replicas) of every TP that meets the job's rate and limits, cheapest first.

    Whole nodes are what is rented, so the order is nodes, then GPUs, then the smaller TP."""
    pp = job.pipeline_parallel or 1
    kvb = KV_BYTES[_kv_precision(job)]
    tps = [job.tensor_parallel] if job.tensor_parallel else _fitting_tps(job, a, m, pp, kvb)
    out = []
    for tp in tps:
        r = _replicas_needed(job, a, m, tp, pp, kvb)
        if r is not None:
            out.append((tp * pp * r, tp, r))
    gpn = m.gpus_per_node
    return sorted(out, key=lambda s: (-(-s[0] // gpn), s[0], s[1]))


def _infer_parallel(job: Job, a: Architecture, m: Machine) -> tuple[int, int]:
    """TP x PP for one replica on m.gpus GPUs.

    As stated; serving at requests_per_s: among the TPs whose m.gpus // TP replicas meet the rate and
    the TTFT/TPOT limits, the one that would meet them on the fewest GPUs (so the cheapest shape the
    model rates as meeting them); otherwise the smallest TP that holds the weights."""
    pp = job.pipeline_parallel or 1
    if job.tensor_parallel:
        return job.tensor_parallel, pp
    kvb = KV_BYTES[_kv_precision(job)]
    tps = _fitting_tps(job, a, m, pp, kvb)
    if not tps:
        return max(t for t in _TP_CHOICES if t <= m.gpus and a.heads % t == 0), pp
    if _serving(job):
        meeting = [tp for tp in tps if _serve(job, a, m, tp, pp, kvb, m.gpus // (tp * pp))[1]]
        if meeting:
            need = {tp: _replicas_needed(job, a, m, tp, pp, kvb) or MAX_GPUS for tp in meeting}
            return min(meeting, key=lambda tp: (tp * pp * need[tp], tp)), pp
    return tps[0], pp


@lru_cache(maxsize=16384)
def _infer_memory(
    job: Job, a: Architecture, m: Machine, tp: int, pp: int, kvb: float, seqs: int | None
) -> tuple[Memory, bool, float]:
    """(memory with the KV of `seqs` prompts, fits, KV pool bytes); seqs None = the whole pool."""
    im_w = _cached_model(a, m, job.precision, tp, pp, kvb, DEFAULT_ENGINE)  # weights/KV only: any engine
    act_b = 4.0 if job.precision in ("fp32", "tf32") else 2.0
    s = seqs if seqs is not None else 256
    ws = infer_workspace_bytes(a, tp, s * job.samples_per_prompt, job.prompt_tokens, act_b)
    ctx_over = K.cuda_context_gib * GIB
    budget = job.gpu_memory_utilization * m.hbm_bytes
    pool = budget - im_w.weight_bytes - ws - ctx_over
    per = job.prompt_tokens + job.samples_per_prompt * job.output_tokens
    kv = max(0.0, pool) if seqs is None else seqs * per * im_w.kv_tok
    mem = Memory(weights=im_w.weight_bytes, activations=ws, kv_cache=kv, overhead=ctx_over)
    fits = mem.total <= m.hbm_bytes and pool >= per * im_w.kv_tok
    return mem, fits, max(0.0, pool)


def _infer_fits(job: Job, a: Architecture, m: Machine) -> bool:
    tp, pp = _infer_parallel(job, a, m)
    if tp * pp > m.gpus:
        return False
    kvb = KV_BYTES[_kv_precision(job)]
    b = job.batch if isinstance(job.batch, int) else 1
    if not _infer_memory(job, a, m, tp, pp, kvb, b if job.requests_per_s is None else 1)[1]:
        return False
    if job.requests_per_s is not None:
        return _serve(job, a, m, tp, pp, kvb, m.gpus // (tp * pp))[1]
    return True


def clear_serving_caches() -> None:
    for f in (_serve, _replicas_needed, _infer_memory, _cached_model):
        f.cache_clear()
