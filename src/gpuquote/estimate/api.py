"""estimate(job, hardware) -> EstimateResult: memory, fit, GPU count, throughput and time.

Results are cached on the (hashable) job and hardware, so the planner can ask for hundreds of
configurations cheaply; `assumptions` lists every default that was used.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from gpuquote.errors import BadInput
from gpuquote.estimate.accuracy import band, interconnect_class, workload_kind
from gpuquote.estimate.compute import efficiency, gemm_size_factor
from gpuquote.estimate.constants import K
from gpuquote.estimate.inference import KV_BYTES, max_sequences, online, static_batch
from gpuquote.estimate.job import ENGINES, Hardware, Job, load_job, merge_hardware
from gpuquote.estimate.memory import (
    Memory,
    default_seq_len,
    lora_params,
)
from gpuquote.estimate.search import MAX_GPUS, gpu_counts, train_fits
from gpuquote.estimate.serving import (
    DEFAULT_ENGINE,
    _engine,
    _infer_fits,
    _infer_memory,
    _infer_model,
    _infer_parallel,
    _kv_precision,
    _serving,
    clear_serving_caches,
    serving_shapes,
)
from gpuquote.estimate.setup import GIB, Machine, check_precision
from gpuquote.hardware import GPU, get_gpu
from gpuquote.i18n import Msg
from gpuquote.models import Architecture

DEFAULT_GPU = "a100-80gb-sxm4"


@dataclass
class EstimateResult:
    """Everything `gpuquote estimate --json` prints (see to_dict for the contract)."""

    kind: str
    gpu: str
    gpus: int
    memory: Memory
    fits: bool
    min_gpus: int | None
    tokens_per_s: float
    mfu: float
    bound: str
    time_hours: float
    gpu_hours: float
    assumptions: list[str]
    layout: str = ""
    nodes: int = 1
    layout_info: dict | None = None  # the chosen layout (training: Layout.to_dict(); inference: TP x PP x replicas)
    # work only a printed estimate needs (the free-layout comparison of train_api), run once by to_dict
    deferred: Any = field(default=None, repr=False, compare=False)
    latency: dict | None = None
    capacity: dict | None = None
    model: dict = field(default_factory=dict)
    checkpoint_bytes: float | None = None
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        if self.deferred is not None:
            run, self.deferred = self.deferred, None
            run(self)
        m = self.memory
        d: dict[str, Any] = {
            "kind": self.kind,
            "gpu": self.gpu,
            "gpus": self.gpus,
            "nodes": self.nodes,
            "layout": dict(self.layout_info) if self.layout_info else {"describe": self.layout},
            "memory": {
                "weights_gib": _r(m.weights / GIB),
                "gradients_gib": _r(m.gradients / GIB),
                "optimizer_gib": _r(m.optimizer / GIB),
                "activations_gib": _r(m.activations / GIB),
                "kv_cache_gib": _r(m.kv_cache / GIB),
                "overhead_gib": _r(m.overhead / GIB),
                "total_per_gpu_gib": _r(m.total / GIB),
            },
            "fits": self.fits,
            "min_gpus": self.min_gpus,
            "throughput": {
                "tokens_per_s": _r(self.tokens_per_s),
                "tokens_per_s_per_gpu": _r(self.tokens_per_s / self.gpus),
                "mfu": _r(self.mfu, 4),
                "bound": self.bound,
            },
            "time_hours": _r(self.time_hours, 6),
            "gpu_hours": _r(self.gpu_hours, 6),
        }
        if self.latency is not None:
            d["latency"] = dict(self.latency)
        if self.capacity is not None:
            d["capacity"] = dict(self.capacity)
        if self.checkpoint_bytes is not None:
            d["checkpoint_gib"] = _r(self.checkpoint_bytes / GIB)
        d["model"] = dict(self.model)
        d.update(self.extra)
        d["assumptions"] = list(self.assumptions)
        return d


def _r(x: float | None, digits: int = 3) -> float | None:
    if x is None or not math.isfinite(x):
        return None
    return round(float(x), digits)


# ---- machine resolution ---------------------------------------------------------------------------
def _machine(job: Job, hw: Hardware, gpu: GPU, n: int, notes: list[str]) -> Machine:
    gpn = hw.gpus_per_node
    if gpn is None:
        gpn = 8 if gpu.form_factor in ("sxm", "oam") else min(8, n)
        if n > 1:
            notes.append(Msg("est.a.not_given", name="hardware.gpus_per_node", value=gpn))
    gpn = max(1, min(gpn, n)) if n < gpn else gpn
    intra = hw.intra_node
    if intra in (None, "unknown") or (intra == "none" and n > 1):
        guess = ("nvswitch" if gpn >= 4 else "nvlink") if gpu.form_factor in ("sxm", "oam", "other") else "pcie"
        if n > 1:
            notes.append(Msg("est.a.intra_guess", guess=guess, stated=Msg("est.a.not_given_word") if intra is None
                             else intra, form=gpu.form_factor.upper(), gpu=gpu.id))
        intra = guess
    inter = hw.inter_node
    kind = inter.kind if inter else "unknown"
    gbps = inter.gbps_per_node if inter else None
    nodes = -(-n // gpn)
    if gbps is None:
        if kind in ("ib", "roce", "omnipath") or (kind == "unknown" and gpu.form_factor == "sxm"):
            gbps = 200.0 * gpn
            if kind == "unknown":
                kind = "ib"
        else:
            gbps = 100.0
            if kind == "unknown":
                kind = "ethernet"
        if nodes > 1:
            notes.append(Msg("est.a.inter_guess", kind=kind, gbps=f"{gbps:.0f}"))
    elif kind == "unknown" and nodes > 1:
        notes.append(Msg("est.a.net_eff_unknown", eff=K.net_efficiency["unknown"]))
    return Machine(
        gpu=gpu,
        gpus=n,
        gpus_per_node=gpn,
        intra_node=intra,
        inter_kind=kind,
        inter_gbps=gbps,
        power_limit_w=hw.power_limit_w,
    )


def _resolve_gpu(hw: Hardware, notes: list[str]) -> GPU:
    if hw.gpu is None:
        notes.append(Msg("est.a.not_given", name="hardware.gpu", value=DEFAULT_GPU))
        return get_gpu(DEFAULT_GPU)
    return get_gpu(hw.gpu)


def _defaults(job: Job, notes: list[str]) -> None:
    """Record the job defaults that apply to its kind."""

    def note(name: str, value: Any, why: str = "default") -> None:
        if not job.is_set(name):
            notes.append(Msg("est.a.value", name=name, value=value, why=Msg("est.why." + why)))

    if job.kind == "train":
        note("method", job.method)
        note("precision", job.precision)
        if job.method in ("pretrain", "full"):
            note("optimizer", job.optimizer, "optimizer")
        else:
            note("lora_rank", job.lora_rank, "lora_rank")
        note("seq_len", default_seq_len(job), "seq_len")
        note("flash_attention", job.flash_attention)
        if job.global_batch_tokens is None:
            notes.append(Msg("est.a.no_global_batch"))
    elif job.kind == "infer":
        note("precision", job.precision)
        note("prompt_tokens", job.prompt_tokens)
        note("output_tokens", job.output_tokens)
        note("gpu_memory_utilization", job.gpu_memory_utilization)
        if job.engine is None:
            eff = K.engine_efficiency
            notes.append(Msg("est.a.engine", engine=DEFAULT_ENGINE,
                             others=", ".join(f"{e} x{eff[e]:g}" for e in ENGINES if e != DEFAULT_ENGINE)))
        if job.kv_cache_precision is None:
            notes.append(Msg("est.a.kv_precision", precision=_kv_precision(job)))


def checkpoint_bytes(job: Job | dict | str) -> float:
    """Bytes of one training checkpoint: weights + optimizer state (LoRA: the adapters only)."""
    job = load_job(job)
    a = job.arch
    if a is None:
        return 0.0
    if job.method in ("lora", "qlora"):
        return lora_params(a, job.lora_rank) * (2.0 + 12.0)
    wb = 4.0 if job.precision in ("fp32", "tf32") else 2.0
    from gpuquote.estimate.memory import OPTIMIZER_STATE_BYTES

    master = 4.0 if wb < 4 else 0.0
    state = OPTIMIZER_STATE_BYTES[job.optimizer] if job.optimizer != "adafactor" else 0.0
    return a.total_params * (wb + master + state)


# ---- public API -----------------------------------------------------------------------------------
def estimate(
    job: Job | dict | str,
    hardware: Hardware | dict | None = None,
    *,
    gpu: str | None = None,
    gpus: int | None = None,
) -> EstimateResult:
    """Estimate a job on hardware (the job's own `hardware:` section, overridden by the arguments)."""
    j = load_job(job)
    hw = merge_hardware(j, hardware, gpu=gpu, gpus=gpus)
    return _estimate(j, hw)


@lru_cache(maxsize=8192)
def _estimate(job: Job, hw: Hardware) -> EstimateResult:
    notes: list[str] = []
    _defaults(job, notes)
    g = _resolve_gpu(hw, notes)
    if job.kind == "compute":
        return _with_band(job, hw, g, _compute(job, hw, g, notes))
    check_precision(g, job.precision)
    a = job.arch
    assert a is not None
    r = _train(job, hw, g, a, notes) if job.kind == "train" else _infer(job, hw, g, a, notes)
    return _with_band(job, hw, g, r)


def _with_band(job: Job, hw: Hardware, g: GPU, r: EstimateResult) -> EstimateResult:
    """Attach `accuracy`: the error band of the published cases nearest to this estimate."""
    m = _machine(job, hw.model_copy(update={"gpus": r.gpus}), g, r.gpus, [])
    shape = r.extra.get("shape")
    linked = shape["tp"] * shape["pp"] if shape else r.gpus  # serving replicas do not talk to each other
    conn = interconnect_class(linked, -(-linked // m.gpus_per_node), m.intra_node, m.inter_kind)
    r.extra["accuracy"] = band(g.family, g.id, workload_kind(job.kind, job.method), conn)
    return r


def min_gpus(
    job: Job | dict | str,
    gpu_id: str,
    gpus_per_node: int = 8,
    intra_node: str | None = None,
    inter_kind: str | None = None,
    gbps_per_node: float | None = None,
) -> int | None:
    """Smallest GPU count (1, 2, 4, ... then whole nodes, up to 1024) on which the job fits; None if none."""
    j = load_job(job)
    hw = Hardware(
        gpu=gpu_id,
        gpus_per_node=gpus_per_node,
        intra_node=intra_node,
        inter_node={"kind": inter_kind or "unknown", "gbps_per_node": gbps_per_node},
    )
    g = get_gpu(gpu_id)
    check_precision(g, j.precision)
    return _min_gpus(j, hw, g)


@lru_cache(maxsize=4096)
def _min_gpus(job: Job, hw: Hardware, g: GPU) -> int | None:
    a = job.arch
    if job.kind == "compute" or a is None:
        return 1
    gpn = hw.gpus_per_node or (8 if g.form_factor in ("sxm", "oam") else 8)
    if job.kind == "infer" and _serving(job):
        node = _machine(job, hw.model_copy(update={"gpus": gpn}), g, gpn, [])
        shapes = serving_shapes(job, a, node)
        return min(s[0] for s in shapes) if shapes else None
    fixed = (job.tensor_parallel or 1) * (job.pipeline_parallel or 1) * job.context_parallel
    for n in gpu_counts(gpn, multiple_of=fixed):
        m = _machine(job, hw.model_copy(update={"gpus": n}), g, n, [])
        if job.kind == "train":
            if train_fits(job, a, m):
                return n
        elif _infer_fits(job, a, m):
            return n
    return None


#: Caches above this layer built from estimates (the planner's per-configuration evaluations) register here,
#: so a constants override (leave-one-out, the fitter, tests) clears them too.
_DEPENDENT_CACHES: list = []


def on_clear_caches(clear) -> None:
    """Call `clear()` whenever the estimate caches are cleared."""
    _DEPENDENT_CACHES.append(clear)


def clear_caches() -> None:
    for clear in _DEPENDENT_CACHES:
        clear()
    _estimate.cache_clear()
    _min_gpus.cache_clear()
    clear_serving_caches()
    efficiency.cache_clear()  # these read fitted constants
    gemm_size_factor.cache_clear()


# ---- compute jobs ---------------------------------------------------------------------------------
def _compute(job: Job, hw: Hardware, g: GPU, notes: list[str]) -> EstimateResult:
    n = hw.gpus or 1
    if hw.gpus is None:
        notes.append(Msg("est.a.not_given", name="hardware.gpus", value=1))
    m = _machine(job, hw, g, n, [])
    peak = check_precision(g, job.precision)
    if job.efficiency is not None:
        eff = job.efficiency
    else:
        eff = efficiency(m, job.precision)
        notes.append(Msg("est.a.efficiency", eff=f"{eff:.2f}", gpu=g.id, precision=job.precision))
    rate = n * peak * eff
    t = job.flops / rate
    mem = Memory(overhead=K.cuda_context_gib * GIB)
    return EstimateResult(
        kind="compute",
        gpu=g.id,
        gpus=n,
        memory=mem,
        fits=True,
        min_gpus=1,
        tokens_per_s=0.0,
        mfu=eff,
        bound="compute",
        time_hours=t / 3600,
        gpu_hours=t / 3600 * n,
        assumptions=notes,
        nodes=m.nodes,
        extra={"flops_per_s": rate},
    )


# ---- training -------------------------------------------------------------------------------------
def _train(job: Job, hw: Hardware, g: GPU, a: Architecture, notes: list[str]) -> EstimateResult:
    """Training estimates live in train_api (layout search, unknown-network range)."""
    from gpuquote.estimate.train_api import train

    return train(job, hw, g, a, notes)


def _model_info(a: Architecture) -> dict:
    return {
        "name": a.name,
        "total_params_b": _r(a.total_params / 1e9, 3),
        "active_params_b": _r(a.active_params / 1e9, 3),
        "kv_bytes_per_token_bf16": a.kv_bytes_per_token(2.0),
    }


# ---- inference ------------------------------------------------------------------------------------

def _infer(job: Job, hw: Hardware, g: GPU, a: Architecture, notes: list[str]) -> EstimateResult:
    mg = _min_gpus(job, hw, g)
    if hw.gpus is not None:
        n = hw.gpus
    else:
        if mg is None:
            raise BadInput(Msg("err.est.no_fit", gpu=g.id, max=MAX_GPUS), field="gpus")
        n = mg
        notes.append(Msg("est.a.gpus_smallest_serving" if job.requests_per_s else "est.a.gpus_smallest", n=n))
    m = _machine(job, hw, g, n, notes)
    tp, pp = _infer_parallel(job, a, m)
    if not job.is_set("tensor_parallel"):
        why = Msg("est.why.tp_serving") if _serving(job) else Msg("est.why.tp_weights")
        notes.append(Msg("est.a.chosen", name="tensor_parallel", value=tp, why=why))
    if tp * pp > n:
        raise BadInput(
            Msg("err.est.tp_pp", tp_pp=tp * pp, n=n), field="gpus"
        )
    replicas = n // (tp * pp)
    kv_prec = _kv_precision(job)
    kvb = KV_BYTES[kv_prec]
    im = _infer_model(job, a, m, tp, pp, kvb)
    pool_mem, _, pool = _infer_memory(job, a, m, tp, pp, kvb, None)
    max_kv_tokens = int(pool // im.kv_tok) if im.kv_tok else 0
    cap_seqs = max_sequences(max_kv_tokens, job.prompt_tokens, job.output_tokens, job.samples_per_prompt)
    if job.max_model_len and job.max_model_len < job.prompt_tokens + job.output_tokens:
        raise BadInput(
            Msg("err.est.max_model_len", len=job.max_model_len, need=job.prompt_tokens + job.output_tokens),
            field="max_model_len",
        )
    samples = job.samples_per_prompt
    batch = job.batch
    if batch is None and job.requests_per_s is None:
        batch = "max" if job.total_requests else 1
        notes.append(Msg("est.a.batch_max" if batch == "max" else "est.a.batch_one", batch=batch))
    if job.requests_per_s is not None and batch is None:
        perf = online(
            im,
            job.requests_per_s / replicas,
            job.prompt_tokens,
            job.output_tokens,
            samples,
            max(1, cap_seqs) * samples,
        )
        prompts = max(1, math.ceil(perf.seqs / samples))
        mode = "online"
    else:
        per_replica = max(1, math.ceil(int(batch) / replicas)) if batch != "max" else 0  # type: ignore[arg-type]
        prompts = max(1, cap_seqs) if batch == "max" else per_replica
        perf = static_batch(im, prompts, samples, job.prompt_tokens, job.output_tokens)
        mode = "static"
    mem, fits, _ = _infer_memory(job, a, m, tp, pp, kvb, None if batch == "max" else prompts)
    if batch == "max":
        fits = cap_seqs >= 1
    tps = perf.tokens_per_s * replicas
    if job.total_requests:
        t_h = job.total_requests * samples * job.output_tokens / tps / 3600 if tps else math.inf
    elif mode == "online":
        t_h = 1.0
        notes.append(Msg("est.a.serving_hour"))
    else:
        t_h = prompts * replicas * samples * job.output_tokens / tps / 3600 if tps else math.inf
    peak = check_precision(g, job.precision)
    mfu = (
        2.0
        * a.matmul_params_active
        * tps
        * (1 + job.prompt_tokens / job.output_tokens / samples)
        / (n * peak)
    )
    if (
        job.requests_per_s is not None
        and perf.tokens_per_s * replicas < 0.999 * job.requests_per_s * job.output_tokens * samples
    ):
        notes.append(Msg("est.a.saturated", n=n, served=f"{tps / job.output_tokens / samples:.3g}",
                         rps=f"{job.requests_per_s:g}"))
    notes.append(Msg("est.a.infer_layout", tp=tp, pp=pp, replicas=replicas, kv=kv_prec))
    if hw.cpu_cores_per_gpu is None and n > 0 and mode == "online":
        notes.append(Msg("est.a.cpu_unknown"))
    return EstimateResult(
        kind="infer",
        gpu=g.id,
        gpus=n,
        memory=mem,
        fits=fits and tp * pp <= n,
        min_gpus=mg,
        tokens_per_s=tps,
        mfu=mfu,
        bound=perf.bound,
        time_hours=t_h,
        gpu_hours=t_h * n,
        assumptions=notes,
        layout=f"TP{tp} PP{pp} x{replicas}",
        layout_info={"tp": tp, "pp": pp, "dp": replicas, "replicas": replicas, "cp": 1, "sharding": "none",
                     "describe": f"TP{tp} PP{pp} x{replicas}"},
        nodes=m.nodes,
        model=_model_info(a),
        latency={"ttft_ms": _r(perf.ttft_s * 1e3), "tpot_ms": _r(perf.tpot_s * 1e3)},
        capacity={
            "max_kv_tokens": max_kv_tokens,
            "max_batch": cap_seqs,
            "concurrent_sequences": _r(perf.seqs * replicas, 1),
        },
        extra={
            "mode": mode,
            "engine": _engine(job),
            "shape": {"tp": tp, "pp": pp, "replicas": replicas},
            "replicas": replicas,
            "requests_per_s": _r(tps / job.output_tokens / samples, 4),
        },
    )


__all__ = ["EstimateResult", "checkpoint_bytes", "clear_caches", "estimate", "min_gpus", "replace"]
