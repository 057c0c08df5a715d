"""Training estimates: GPU count, the layout search on the offer's network, time and its range.

An inter-node network nobody stated is priced twice, each with its own best layout: on an RDMA-class
fabric (low end) and on 10 GbE (high end): `time_hours_range`. `time_hours` takes the end usual for
the GPU (SXM/OAM: RDMA; PCIe: 10 GbE); `plan` ranks on the high end and shows the range, so `estimate`
and `plan` give one answer. A stated layout field that forces a much slower layout than the free
search is named in `assumptions` together with the free layout and its time.
"""

from __future__ import annotations

import math
from typing import Any

from gpuquote.errors import BadInput
from gpuquote.estimate import api
from gpuquote.estimate.compute import train_flops_per_token
from gpuquote.estimate.constants import K
from gpuquote.estimate.job import Hardware, InterNode, Job
from gpuquote.estimate.memory import Memory, default_seq_len
from gpuquote.estimate.search import LAYOUT_FIELDS, MAX_GPUS, best_train_layout
from gpuquote.estimate.setup import Layout, Machine
from gpuquote.estimate.training import TrainPerf
from gpuquote.hardware import GPU
from gpuquote.i18n import Msg
from gpuquote.models import Architecture

Search = tuple[Layout, Memory, TrainPerf | None, bool]


def network_unknown(hw: Hardware) -> bool:
    """Neither the kind nor the speed of the inter-node network is stated."""
    net = hw.inter_node
    return net is None or (net.kind in ("unknown", "none") and net.gbps_per_node is None)


def _with_network(hw: Hardware, kind: str, gbps: float) -> Hardware:
    return hw.model_copy(update={"inter_node": InterNode(kind=kind, gbps_per_node=gbps)})  # type: ignore[arg-type]


def _free_job(job: Job) -> Job | None:
    """The job with its stated layout fields left to the search (None when it states none)."""
    stated = [f for f in LAYOUT_FIELDS if job.is_set(f)]
    if not stated:
        return None
    data = job.model_dump(exclude_unset=True)
    for f in stated:
        data.pop(f, None)
    data["arch"] = job.arch
    return Job.model_validate(data)


def _hours(tokens: float, perf: TrainPerf | None, goodput: float) -> float:
    return tokens / perf.tokens_per_s / 3600 / goodput if perf is not None and perf.tokens_per_s else math.inf


def _free_layout(
    job: Job, a: Architecture, m: Machine, lay: Layout, t_h: float, tokens: float, goodput: float
) -> tuple[dict, str | None] | None:
    """The free search's layout and time when the job states layout fields and the free search is
    faster; with a sentence when it is more than K.forced_layout_ratio times faster."""
    free = _free_job(job)
    if free is None or not math.isfinite(t_h):
        return None
    flay, _, fperf, ffits = best_train_layout(free, a, m)
    f_h = _hours(tokens, fperf, goodput)
    if not ffits or not f_h < 0.99 * t_h:
        return None
    info = {**flay.to_dict(), "time_hours": api._r(f_h, 6)}
    if not f_h * K.forced_layout_ratio < t_h:
        return info, None
    stated = ", ".join(f"{f}: {getattr(job, f)}" for f in LAYOUT_FIELDS if job.is_set(f))
    net = "over " + _net_words(m) if m.nodes > 1 else "on this node"
    return info, (
        f"{stated} forces {lay.short()} {net}; {flay.short()} (checkpointing {flay.ckpt}, micro-batch "
        f"{flay.micro_batch}) would take {f_h:,.0f} h instead of {t_h:,.0f} h"
    )


def _net_words(m: Machine) -> str:
    kind = {"ib": "InfiniBand", "roce": "RoCE", "omnipath": "Omni-Path", "ethernet": "Ethernet"}.get(
        m.inter_kind, m.inter_kind
    )
    return f"{m.inter_gbps:g} Gb/s {kind}"


def train(job: Job, hw: Hardware, g: GPU, a: Architecture, notes: list[str]) -> api.EstimateResult:
    mg = api._min_gpus(job, hw, g)
    if hw.gpus is not None:
        n = hw.gpus
    else:
        if mg is None:
            raise BadInput(
                Msg("err.est.no_fit_train", gpu=g.id, max=MAX_GPUS),
                field="gpus",
            )
        gpn = hw.gpus_per_node or 8
        n = mg if mg <= gpn else -(-mg // gpn) * gpn
        notes.append(Msg("est.a.gpus_smallest", n=n))
    m = api._machine(job, hw, g, n, [])
    ends: tuple[tuple[Machine, Search], tuple[Machine, Search]] | None = None
    if m.nodes > 1 and network_unknown(hw):
        # one rule for estimate and plan: both ends of the range, each with its own best layout;
        # time_hours on the end usual for the GPU (SXM/OAM boards ship with RDMA, PCIe servers on a LAN)
        rdma = K.unknown_network_rdma_gbps_per_gpu * m.gpus_per_node
        m_low = api._machine(job, _with_network(hw, "ib", rdma), g, n, [])
        m_high = api._machine(job, _with_network(hw, "ethernet", K.unknown_network_ethernet_gbps), g, n, [])
        ends = ((m_low, best_train_layout(job, a, m_low)), (m_high, best_train_layout(job, a, m_high)))
        m, (lay, mem, perf, fits) = ends[0] if g.form_factor in ("sxm", "oam") else ends[1]
        shape: list[str] = []
        api._machine(job, hw, g, n, shape)  # its notes on the node shape and links not given
        notes += [x for x in shape if not x.startswith("hardware.inter_node")]
        notes.append(Msg("est.a.inter_range", net=_net_words(m)))
    else:
        m = api._machine(job, hw, g, n, notes)
        lay, mem, perf, fits = best_train_layout(job, a, m)
    for name, val in (
        ("tensor_parallel", lay.tp),
        ("pipeline_parallel", lay.pp),
        ("sharding", lay.sharding),
        ("activation_checkpointing", lay.ckpt),
        ("micro_batch", lay.micro_batch),
    ):
        if not job.is_set(name):
            notes.append(Msg("est.a.chosen", name=name, value=val,
                             why=Msg("est.why.fastest" if fits else "est.why.least_memory")))
    if job.tokens is None:
        tokens = 20.0 * a.total_params if job.method == "pretrain" else 1e8
        why = Msg("est.why.chinchilla") if job.method == "pretrain" else Msg("est.why.finetune_tokens")
        notes.append(Msg("est.a.tokens", tokens=f"{tokens:.3g}", why=why))
    else:
        tokens = job.tokens
    goodput = job.goodput if job.goodput is not None else K.goodput
    if job.goodput is None:
        notes.append(Msg("est.a.goodput", goodput=goodput))
    if perf is None:
        tps, mfu, bound = 0.0, 0.0, "memory"
    else:
        tps, mfu, bound = perf.tokens_per_s, perf.mfu, perf.bound
    t_h = _hours(tokens, perf, goodput)
    notes.append(Msg("est.a.layout", layout=lay.describe()))
    extra: dict[str, Any] = {}
    if ends is not None:
        (m_low, (l_lay, _, l_perf, _)), (m_high, (h_lay, _, h_perf, _)) = ends
        l_h, h_h = _hours(tokens, l_perf, goodput), _hours(tokens, h_perf, goodput)
        extra["time_hours_range"] = [api._r(min(l_h, h_h), 6), api._r(max(l_h, h_h), 6)]
        extra["time_hours_range_layouts"] = [l_lay.to_dict(), h_lay.to_dict()]
        notes.append(Msg("est.a.net_range", low=f"{l_h:,.1f}", low_net=_net_words(m_low), low_lay=l_lay.short(),
                         high=f"{h_h:,.1f}", high_net=_net_words(m_high), high_lay=h_lay.short(), net=_net_words(m)))
    if hw.nvme_write_gbs is None and job.method in ("pretrain", "full"):
        notes.append(Msg("est.a.ckpt_not_counted"))
    if perf is not None:
        extra["step"] = {
            "seconds": api._r(perf.t_step, 4),
            "micro_batches": perf.n_micro,
            "compute_s": api._r(perf.t_compute, 4),
            "tp_comm_s": api._r(perf.t_tp, 4),
            "pp_comm_exposed_s": api._r(perf.t_pp, 4),
            "dp_comm_exposed_s": api._r(perf.t_dp_exposed, 4),
            "bubble_s": api._r(perf.t_bubble, 4),
        }
        seq = default_seq_len(job)
        hw_d, hw_a, model_f = train_flops_per_token(a, job.method, seq, lay.ckpt, job.flash_attention)
        extra["tflops_per_gpu"] = {  # model FLOPs (6N + attention) and with recomputation counted
            "model": api._r(model_f * tps / n / 1e12, 1),
            "hardware": api._r((hw_d + hw_a) * tps / n / 1e12, 1),
        }
    extra["tokens"] = tokens
    deferred = None
    if fits and perf is not None and _free_job(job) is not None:

        def deferred(res: api.EstimateResult) -> None:  # a second search: only when the estimate is printed
            free = _free_layout(job, a, m, lay, t_h, tokens, goodput)
            if free is not None:
                res.extra["free_layout"] = free[0]  # the search's pick with the stated layout fields open
                if free[1]:
                    res.assumptions.append(free[1])

    return api.EstimateResult(
        deferred=deferred,
        kind="train",
        gpu=g.id,
        gpus=n,
        memory=mem,
        fits=fits,
        min_gpus=mg,
        tokens_per_s=tps,
        mfu=mfu,
        bound=bound,
        time_hours=t_h,
        gpu_hours=t_h * n,
        assumptions=notes,
        layout=lay.describe(),
        layout_info=lay.to_dict(),
        nodes=m.nodes,
        model=api._model_info(a),
        checkpoint_bytes=api.checkpoint_bytes(job),
        extra=extra,
    )

