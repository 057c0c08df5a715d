"""Plan rows as a person reads them: the cost breakdown, the warnings, host sizing and stated assumptions.

Split from planner.py: the planner chooses (GPU count, nodes, cost, time); this module describes a choice.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gpuquote.errors import BadInput
from gpuquote.estimate.api import EstimateResult
from gpuquote.estimate.job import Job
from gpuquote.hardware import load_gpus
from gpuquote.plan.assumptions import interruption_rate
from gpuquote.plan.candidates import Config, offer_from_row
from gpuquote.plan.spot import overhead

if TYPE_CHECKING:
    from gpuquote.plan.planner import PlanOptions

SIMPLE_PER = {"second": 1, "minute": 60, "hour": 3600}
GIB = 2**30


@dataclass
class NodeEval:
    nodes: int
    gpus: int
    est: EstimateResult
    hours: float  # uninterrupted wall time (online serving: the serving period)


@dataclass
class Choice:
    row: int
    cfg: Config
    ev: NodeEval
    time_hours: float
    cost_usd: float
    spot_factor: float
    cpu_factor: float
    notes: list[str] = field(default_factory=list)


def _online(job: Job) -> bool:
    return job.kind == "infer" and job.requests_per_s is not None and job.total_requests is None


def _front_entry(r: dict, c: Choice) -> dict:
    return {"offer_id": r["offer_id"], "provider": r["provider"], "gpu_id": r["gpu_id"], "gpus": c.ev.gpus,
            "time_hours": round(c.time_hours, 4), "total_cost_usd": round(c.cost_usd, 2)}


def _run_cost(row: dict, hours: float, nodes: int):
    """offers.billing.cost_of_run on a row (monthly, term and other non-hourly prices)."""
    from types import SimpleNamespace

    from gpuquote.offers import Price
    from gpuquote.offers.billing import cost_of_run

    item = SimpleNamespace(price=Price(**row["price"]), gpu_count=row["gpu_count"], form=None,
                           billing_granularity_s=row.get("billing_granularity_s"))
    return cost_of_run(item, hours, nodes=nodes)


def _cost_of_run(row: dict, hours: float, nodes: int) -> float:
    try:
        return _run_cost(row, hours, nodes).cost_usd
    except BadInput:
        return math.nan


def _breakdown(c: Choice, row: dict, hours: float, nodes: int, store_gb: float, egress_gb: float) -> dict:
    rate = row["usd_per_node_hour"]
    compute = hours * rate * nodes
    p = row["price"]
    rounding = term = 0.0
    notes: list[str] = []
    if p["per"] in SIMPLE_PER and not p.get("term_months"):
        gran = float(row.get("billing_granularity_s") or SIMPLE_PER[p["per"]])
        billed = math.ceil(hours * 3600.0 / gran - 1e-9) * gran / 3600.0
        rounding = (billed - hours) * rate * nodes
    else:
        rc = _run_cost(row, hours, nodes)
        rounding = (rc.run_usd - hours * rc.usd_per_node_hour) * nodes
        term = max(0.0, rc.minimum_usd - rc.run_usd) * nodes
        compute = hours * rc.usd_per_node_hour * nodes
        notes += rc.notes
    extras = row.get("extras") or {}
    covers = row.get("covers") or []
    storage = 0.0 if "storage" in covers else extras.get("storage_usd_per_gb_month", 0.0) * store_gb * hours / 730.0
    egress = 0.0 if "egress" in covers else extras.get("egress_usd_per_gb", 0.0) * egress_gb
    d = {"compute_usd": compute, "billing_rounding_usd": rounding, "term_minimum_usd": term,
         "storage_usd": storage, "egress_usd": egress}
    return {k: round(v, 4) for k, v in d.items()}, notes


def _row(c: Choice, row: dict, job: Job, opts: PlanOptions, notes: list[str], ckpt: float, store_gb: float,
         egress_gb: float, write_gbs: float, restart_h: float, on_front: bool) -> dict:
    ev, est = c.ev, c.ev.est
    breakdown, bill_notes = _breakdown(c, row, c.time_hours, ev.nodes, store_gb, egress_gb)
    total = round(sum(breakdown.values()), 2)
    spot_extra = ev.hours * c.cpu_factor * (c.spot_factor - 1.0)
    out = {
        "offer_id": row["offer_id"], "provider": row["provider"], "sku": row["sku"], "region": row["region"],
        "gpu_id": row["gpu_id"], "estimated_as": c.cfg.gpu, "gpus_per_node": c.cfg.gpus_per_node,
        "gpus": ev.gpus, "nodes": ev.nodes, "spot": bool(row.get("spot")),
        "intra_node": row.get("intra_node"), "inter_node": row.get("inter_node"),
        "usd_per_gpu_hour": round(row["usd_per_node_hour"] / c.cfg.gpus_per_node, 6),
        "usd_per_node_hour": round(row["usd_per_node_hour"], 6),
        "price": row["price"],
        "time_hours": round(c.time_hours, 6),
        "time_breakdown": {"estimate_hours": round(ev.hours, 6),
                           "data_loading_hours": round(ev.hours * (c.cpu_factor - 1.0), 6),
                           "spot_overhead_hours": round(spot_extra, 6)},
        "total_cost_usd": total,
        "breakdown": breakdown,
        "bound": est.bound, "mfu": round(est.mfu, 4), "layout": est.layout,
        "memory_per_gpu_gib": round(est.memory.total / GIB, 2),
        "pareto": on_front,
        "fetched_at": row.get("fetched_at"), "freshness": row.get("freshness"), "source": row.get("source"),
    }
    if job.kind == "train":
        out["usd_per_billion_tokens"] = round(total / (job.tokens / 1e9), 4) if job.tokens else None
    elif job.kind == "compute":
        out["usd_per_exaflop"] = round(total / (job.flops / 1e18), 4) if job.flops else None
    else:
        generated = est.tokens_per_s * ev.hours * 3600.0
        out["usd_per_million_tokens"] = round(total / (generated / 1e6), 4) if generated else None
        if _online(job):
            out["monthly_cost_usd"] = round(total / ev.hours * 730.0, 2)
            out["servers"] = ev.nodes
    if row.get("spot"):
        lam, why = interruption_rate(row["provider"], opts.interruption_rate)
        w = ckpt / ev.nodes / (write_gbs * 1e9) / 3600.0 if ckpt else 0.0
        sp = overhead(ev.hours * c.cpu_factor, ev.nodes, lam, w, restart_h)
        out["spot_interruptions"] = {**sp.to_dict(), "rate_per_node_hour": lam, "rate_source": why}
    out["warnings"] = _warnings(c, row, est, job, notes + bill_notes, store_gb, egress_gb, out)
    return out


def _warnings(c: Choice, row: dict, est: EstimateResult, job: Job, notes: list[str], store_gb: float,
              egress_gb: float, out: dict) -> list[str]:
    w = list(notes)
    if any(str(n).startswith("purchase") for n in row.get("notes") or []):
        w.append("purchase: priced at its TCO per hour with the server busy all its life; bought for this job "
                 "alone it costs the whole TCO (see `gpuquote tco`)")
    net = row.get("inter_node") or {}
    kind, gbps = net.get("kind") or "unknown", net.get("gbps_per_node")
    if c.ev.nodes > 1:
        if kind in ("unknown", "none") or gbps is None:
            w.append(f"inter-node network not stated: {c.ev.nodes} nodes assumed on 10 GbE (ask for IB/RoCE)")
        elif kind in ("ethernet", "none") or gbps <= 100:
            w.append(f"network-bound across nodes: {gbps:g} Gb/s {kind} per node")
    m = re.search(r"TP(\d+)", est.layout or "")
    intra = row.get("intra_node")
    if m and int(m.group(1)) > 1 and intra == "pcie":
        w.append(f"PCIe-only: tensor parallel (TP{m.group(1)}) over PCIe")
    if c.cfg.gpus_per_node > 1 and intra == "pcie" and job.kind == "train":
        w.append("PCIe-only: gradient all-reduce over PCIe, no NVLink/NVSwitch")
    if c.cfg.gpus_per_node > 1 and intra in (None, "unknown"):
        w.append("intra-node link not stated (NVSwitch, NVLink or PCIe?): ask the vendor")
    g = load_gpus()[c.cfg.gpu]
    if job.precision == "bf16" and g.bf16_tflops is None:
        w.append(f"no BF16 on {g.id}: runs as FP16 with loss scaling")
    if est.bound in ("memory", "network", "io"):
        w.append(f"{est.bound}-bound on this hardware")
    if c.cpu_factor > 1.0:
        w.append(f"data loading: {row.get('vcpus')} vCPUs for {c.cfg.gpus_per_node} GPUs starves them: "
                 f"x{c.cpu_factor:.2f} time")
    if "spot_interruptions" in out:
        s = out["spot_interruptions"]
        every = s["checkpoint_interval_hours"]
        w.append(f"spot: ~{s['expected_interruptions']:.1f} interruptions expected, "
                 f"+{(c.spot_factor - 1) * 100:.0f}% time" + (f", checkpoint every {every:.1f} h" if every else ""))
    if row.get("freshness") == "stale":
        w.append(f"price fetched {str(row.get('fetched_at'))[:10]} (stale): refresh before you buy")
    covers, extras = row.get("covers") or [], row.get("extras") or {}
    if store_gb and "storage" not in covers and "storage_usd_per_gb_month" not in extras:
        w.append(f"storage not priced: {store_gb:,.0f} GB kept for the run (ask the vendor)")
    if egress_gb and "egress" not in covers and "egress_usd_per_gb" not in extras:
        w.append(f"egress not priced: {egress_gb:,.0f} GB out (hyperscalers charge ~0.05-0.12 USD/GB)")
    try:
        from gpuquote.offers.checklist import check_offer

        for item in check_offer(offer_from_row(row)):
            if item.status != "ok":
                w.append(f"checklist {item.item} {item.name} {item.status}: {item.message}")
    except Exception as e:  # a malformed catalog row must not break a plan
        w.append(f"checklist not run: {e}")
    return w


def _host_sizing(job: Job, cfg: Config, ev: NodeEval, ckpt: float, A: dict) -> dict:
    """What to ask the vendor for per node: CPU cores, RAM, NVMe capacity and write speed."""
    h = A["host"]
    g = load_gpus()[cfg.gpu]
    gpn = cfg.gpus_per_node
    cores = (h["train_cores_per_gpu"] if job.kind == "train" else h["infer_cores_per_gpu"]) * gpn
    ckpt_node_gb = ckpt / ev.nodes / 1e9
    ram = max(h["ram_floor_gib"], h["ram_per_gpu_memory"] * g.memory_gib * gpn, 2 * ckpt_node_gb * 1e9 / GIB)
    d = job.data
    nvme_gb = ((d.dataset_gb or 0.0) if d else 0.0) + ((d.checkpoints_kept or 1) if d else 1) * ckpt_node_gb
    if job.kind == "infer" and job.arch is not None:
        nvme_gb += job.arch.total_params * 2 / 1e9  # the weights, cached locally
    return {
        "gpu": cfg.gpu, "gpus_per_node": gpn, "nodes": ev.nodes,
        "cpu_cores_per_node": cores, "ram_gib_per_node": round(ram),
        "nvme_gb_per_node": round(nvme_gb * 1.2, 1),
        "nvme_write_gbs_per_node": round(ckpt_node_gb / h["checkpoint_write_seconds"], 2) if ckpt else None,
        "checkpoint_gb": round(ckpt / 1e9, 1) if ckpt else None,
        "why": f"{cores // gpn} cores per GPU for data loading; RAM >= GPU memory of the node; NVMe for the dataset"
               f" cache, the checkpoints kept (+20%), a checkpoint written in {h['checkpoint_write_seconds']} s",
    }


def _stated_assumptions(job: Job, A: dict, opts: PlanOptions, online: bool) -> list[str]:
    s = A["spot"]
    out = ["billing: catalog offers at their stated granularity, else per second/minute/hour as priced",
           f"spot interruptions per node-hour: {s['interruptions_per_node_hour']['hyperscaler']} (hyperscalers), "
           f"{s['interruptions_per_node_hour']['marketplace']} (markets)"
           + (f"; overridden: {opts.interruption_rate}" if opts.interruption_rate is not None else "")
           + f"; restart {s['restart_hours']} h; Young/Daly checkpoint interval",
           f"checkpoint write speed {A['storage']['nvme_write_gbs_default']} GB/s per node when NVMe is not stated",
           f"objective: {opts.objective} (balanced = cost x time)"]
    if job.kind == "train":
        out.append(f"data loading needs >= {A['host']['train_min_cores_per_gpu']} vCPU per GPU")
    return out
