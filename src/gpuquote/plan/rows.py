"""Plan rows as a person reads them: the cost breakdown, the warnings, host sizing and stated assumptions.

Split from planner.py: the planner chooses (GPU count, nodes, cost, time); this module describes a choice.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

from gpuquote.errors import BadInput
from gpuquote.estimate.api import EstimateResult
from gpuquote.estimate.job import Job
from gpuquote.hardware import load_gpus
from gpuquote.i18n import Msg
from gpuquote.plan.assumptions import egress_prices, interruption_rate
from gpuquote.plan.candidates import Config, offer_from_row
from gpuquote.plan.spot import overhead
from gpuquote.plan.table import is_purchase

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
    egress = (egress_rate(row)[0] or 0.0) * egress_gb
    d = {"compute_usd": compute, "billing_rounding_usd": rounding, "term_minimum_usd": term,
         "storage_usd": storage, "egress_usd": egress}
    return d, notes  # unrounded: the JSON keeps cents and below; people read rounded figures


def egress_rate(row: dict) -> tuple[float | None, str | None]:
    """USD per GB out and where it comes from: covered, the offer's extras, the provider's public price, or unknown."""
    if "egress" in (row.get("covers") or []):
        return 0.0, "covered by the price"
    extras = row.get("extras") or {}
    if "egress_usd_per_gb" in extras:
        return float(extras["egress_usd_per_gb"]), "the offer"
    pub = egress_prices().get(row.get("provider") or "")
    if pub and not str(row.get("source") or "").startswith("quote:"):
        return float(pub["usd_per_gb"]), pub["source"]
    return None, None


def fmt_hours(h: float) -> str:
    """Hours as a person reads them: '40 s', '12 min', '1.5 h' (never '0.0 h')."""
    if h < 1 / 60:
        return Msg("unit.s", n=f"{h * 3600:.0f}")
    if h < 1:
        return Msg("unit.min", n=f"{h * 60:.0f}")
    return Msg("unit.h", n=f"{h:,.1f}")


def _row(c: Choice, row: dict, job: Job, opts: PlanOptions, notes: list[str], ckpt: float, store_gb: float,
         egress_gb: float, write_gbs: float, restart_h: float, on_front: bool,
         checks: list[str] | None = None) -> dict:
    ev, est = c.ev, c.ev.est
    breakdown, bill_notes = _breakdown(c, row, c.time_hours, ev.nodes, store_gb, egress_gb)
    total = sum(breakdown.values())
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
        "bound": est.bound, "mfu": round(est.mfu, 4),
        "layout": dict(est.layout_info) if est.layout_info else {"describe": est.layout},
        "accuracy": dict(est.extra.get("accuracy") or {}),
        "memory_per_gpu_gib": round(est.memory.total / GIB, 2),
        "pareto": on_front,
        "fetched_at": row.get("fetched_at"), "freshness": row.get("freshness"), "source": row.get("source"),
    }
    rng = est.extra.get("time_hours_range")
    if rng and ev.hours:  # unknown network: the row's time on the RDMA end, same overheads
        out["time_hours_range"] = [out["time_hours"] * rng[0] / ev.hours, out["time_hours"]]
        out["estimate_hours_range"] = list(rng)
    if job.kind == "train":
        out["usd_per_billion_tokens"] = total / (job.tokens / 1e9) if job.tokens else None
    elif job.kind == "compute":
        out["usd_per_exaflop"] = total / (job.flops / 1e18) if job.flops else None
    else:
        out.update(serving_unit_costs(job, est.tokens_per_s, ev.hours, total))
        if _online(job):
            out["monthly_cost_usd"] = total / ev.hours * 730.0
            out["servers"] = ev.nodes
        if est.extra.get("shape"):
            out["shape"] = dict(est.extra["shape"])
    out["checkpoint_write_gbs"] = write_gbs if ckpt else None
    out["purchase"] = is_purchase(row)
    if out["purchase"]:
        out["purchase_basis"] = purchase_basis(row, out)
    if row.get("spot"):
        lam, why = interruption_rate(row["provider"], opts.interruption_rate)
        w = ckpt / ev.nodes / (write_gbs * 1e9) / 3600.0 if ckpt else 0.0
        sp = overhead(ev.hours * c.cpu_factor, ev.nodes, lam, w, restart_h)
        out["spot_interruptions"] = {**sp.to_dict(), "rate_per_node_hour": lam, "rate_source": why}
    out["warnings"] = _warnings(c, row, est, job, notes + bill_notes, store_gb, egress_gb, out, checks)
    return out


def _warnings(c: Choice, row: dict, est: EstimateResult, job: Job, notes: list[str], store_gb: float,
              egress_gb: float, out: dict, checks: list[str] | None = None) -> list[str]:
    w = list(notes)
    acc = est.extra.get("accuracy") or {}
    if acc and not acc.get("measured", True):
        w.append(Msg("plan.est_infer.no_case", gpu=c.cfg.gpu, workload=acc.get("workload", job.kind),
                     band=f"{acc['band_pct']:g}"))
    if any(str(n).startswith("purchase") for n in row.get("notes") or []):
        w.append(Msg("plan.w.purchase"))
    net = row.get("inter_node") or {}
    kind, gbps = net.get("kind") or "unknown", net.get("gbps_per_node")
    if c.ev.nodes > 1:
        rng = est.extra.get("time_hours_range")
        if rng and (kind in ("unknown", "none") or gbps is None):
            w.append(Msg("plan.w.net_range", slow=f"{rng[1]:,.1f}", fast=f"{rng[0]:,.1f}"))
        elif kind in ("unknown", "none") or gbps is None:
            w.append(Msg("plan.w.net_assumed", nodes=c.ev.nodes))
        elif kind in ("ethernet", "none") or gbps <= 100:
            w.append(Msg("plan.w.net_bound", gbps=f"{gbps:g}", kind=kind))
    m = re.search(r"TP(\d+)", est.layout or "")
    intra = row.get("intra_node")
    if m and int(m.group(1)) > 1 and intra == "pcie":
        w.append(Msg("plan.w.pcie_tp", tp=m.group(1)))
    if c.cfg.gpus_per_node > 1 and intra == "pcie" and job.kind == "train":
        w.append(Msg("plan.w.pcie_allreduce"))
    if c.cfg.gpus_per_node > 1 and intra in (None, "unknown"):
        w.append(Msg("plan.w.intra_unknown"))
    g = load_gpus()[c.cfg.gpu]
    if job.precision == "bf16" and g.bf16_tflops is None:
        w.append(Msg("plan.w.no_bf16", gpu=g.id))
    if est.bound in ("memory", "network", "io"):
        w.append(Msg("plan.w.bound." + est.bound))
    if c.cpu_factor > 1.01:
        w.append(Msg("plan.w.cpu_starved", vcpus=row.get("vcpus"), gpus=c.cfg.gpus_per_node,
                     factor=f"{c.cpu_factor:.2f}"))
    if "spot_interruptions" in out:
        s = out["spot_interruptions"]
        every = s["checkpoint_interval_hours"]
        sp = Msg("plan.w.spot", n=f"{s['expected_interruptions']:.1f}", pct=f"{(c.spot_factor - 1) * 100:.0f}")
        w.append(sp + Msg("plan.w.spot_ckpt", every=fmt_hours(every)) if every else sp)
    if row.get("freshness") == "stale":
        w.append(Msg("plan.w.stale", date=str(row.get("fetched_at"))[:10]))
    covers, extras = row.get("covers") or [], row.get("extras") or {}
    if store_gb and "storage" not in covers and "storage_usd_per_gb_month" not in extras:
        w.append(Msg("plan.w.storage", gb=f"{store_gb:,.0f}"))
    eg_rate, eg_src = egress_rate(row)
    if egress_gb and eg_rate is None:
        w.append(Msg("plan.w.egress", gb=f"{egress_gb:,.0f}"))
    elif egress_gb and eg_src and eg_src.startswith("http"):
        w.append(Msg("plan.w.egress_priced", provider=row["provider"], gb=f"{egress_gb:,.0f}", rate=f"{eg_rate:g}",
                     source=eg_src))
    w.extend(checklist_warnings(row) if checks is None else checks)
    return w


#: The checklist warnings of an offer, keyed by every field the checklist reads (it is a pure function of
#: them): a server shows the same offers in plan after plan, and checking one costs more than pricing it.
_CHECKED: dict[str, list[str]] = {}
_CHECKED_MAX = 50_000


def _content_key(row: dict) -> str:
    return repr([row.get("offer_id"), *(row.get(k) for k in _offer_fields())])


@lru_cache(maxsize=1)
def _offer_fields() -> tuple[str, ...]:
    from gpuquote.offers.model import Offer

    return tuple(sorted(Offer.model_fields))


def checklist_warnings(row: dict) -> list[str]:
    """One warning per checklist item of the offer that is not ok (missing or contradictory)."""
    key = _content_key(row)
    hit = _CHECKED.get(key)
    if hit is not None:
        return hit
    out: list[str] = []
    try:
        from gpuquote.offers.checklist import check_offer

        for item in check_offer(offer_from_row(row)):
            if item.status != "ok":
                out.append(Msg("plan.w.checklist", item=item.item, name=item.name,
                               status=Msg("plan.w.status." + item.status), message=item.message))
    except Exception as e:  # a malformed catalog row must not break a plan
        out.append(Msg("plan.w.checklist_error", error=str(e)))
    if len(_CHECKED) >= _CHECKED_MAX:
        _CHECKED.clear()
    _CHECKED[key] = out
    return out


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
        "why": Msg("plan.host.why", cores=cores // gpn, seconds=h["checkpoint_write_seconds"]),
    }


def _stated_assumptions(job: Job, A: dict, opts: PlanOptions, online: bool) -> list[str]:
    s = A["spot"]
    spot = Msg("plan.a.spot_rate", hyper=s["interruptions_per_node_hour"]["hyperscaler"],
               market=s["interruptions_per_node_hour"]["marketplace"])
    if opts.interruption_rate is not None:
        spot = spot + Msg("plan.a.spot_overridden", rate=opts.interruption_rate)
    out = [Msg("plan.a.billing"),
           spot + Msg("plan.a.spot_restart", hours=s["restart_hours"]),
           Msg("plan.a.ckpt_speed", local=A["storage"]["nvme_write_gbs_local"],
               default=A["storage"]["nvme_write_gbs_default"]),
           Msg("plan.a.egress"),
           Msg("plan.a.sections"),
           Msg("plan.a.objective", objective=opts.objective)]
    if job.kind == "train":
        h = A["host"]
        out.append(Msg("plan.a.data_loading", cores=h["train_min_cores_per_gpu"], k=h["data_loading_overlap_k"]))
    if job.kind == "infer":
        out.append(Msg("plan.a.tokens_counted"))
    return out


def serving_unit_costs(job: Job, generated_tokens_per_s: float, hours: float, total: float) -> dict:
    """Inference cost per unit of work: per million tokens in + out, per million output tokens, per 1k requests.

    Online serving counts the traffic served (requests_per_s over the hours priced), not the capacity; a batch
    job counts what it generates. A request is one prompt (prompt_tokens in) with samples_per_prompt outputs.
    """
    per_request_out = job.output_tokens * job.samples_per_prompt
    if _online(job):
        requests = (job.requests_per_s or 0.0) * hours * 3600.0
    else:
        requests = generated_tokens_per_s * hours * 3600.0 / per_request_out
    out_tok = requests * per_request_out
    all_tok = out_tok + requests * job.prompt_tokens
    return {"usd_per_million_tokens": total / (all_tok / 1e6) if all_tok else None,
            "usd_per_million_output_tokens": total / (out_tok / 1e6) if out_tok else None,
            "usd_per_1k_requests": total / (requests / 1e3) if requests else None,
            "tokens_counted": "input + output"}


def _years(notes: list) -> float | None:
    for n in notes or []:
        m = re.search(r"over ([0-9.]+) years", str(n))
        if m:
            return float(m.group(1))
    return None


def purchase_basis(row: dict, out: dict) -> dict:
    """What a purchase row is priced on: its TCO per hour at utilisation 1 over its life; bought for this job
    alone, the whole TCO (`tco_usd`)."""
    years = _years(row.get("notes") or [])
    life_h = years * 8760.0 if years else None
    return {"utilisation": 1.0, "years": years,
            "tco_usd": out["usd_per_node_hour"] * life_h * out["nodes"] if life_h else None,
            "job_share_usd": out["total_cost_usd"],
            "job_share_of_life": out["time_hours"] / life_h if life_h else None}


def annotate_sections(sections: dict[str, list[dict]], table) -> None:
    """What a buyer must know per section: a spot discount too good to plan on, a long multi-node spot run,
    and what a purchase is priced on (utilisation 1 over its life; the whole TCO if bought for this job)."""
    spot_rows = sections.get("spot") or []
    refs = _on_demand_refs(table, {(r["provider"], _base_sku(r["sku"])) for r in spot_rows}) if spot_rows else {}
    for r in spot_rows:
        sku = _base_sku(r["sku"])
        ref = refs.get((r["provider"], sku, r["region"])) or refs.get((r["provider"], sku))
        if ref:
            pct = 100.0 * (1.0 - r["usd_per_gpu_hour"] / ref)
            r["spot_discount_pct"] = pct
            r["on_demand_usd_per_gpu_hour"] = ref
            if pct > 80 and not any(w.startswith("spot discount") for w in r["warnings"]):
                r["warnings"].insert(0, Msg("plan.w.spot_discount", pct=f"{pct:.0f}", ref=f"{ref:.3g}"))
        if r["nodes"] > 1 and r["time_hours"] > 24 and "servers" not in r \
                and not any(w.startswith("spot multi-node") for w in r["warnings"]):  # (online: independent servers)
            r["warnings"].insert(0, Msg("plan.w.spot_multi", nodes=r["nodes"], hours=fmt_hours(r["time_hours"])))


@lru_cache(maxsize=65536)
def _base_sku(sku: str | None) -> str | None:
    """The SKU without a spot marker some catalogs append (primeintellect '..._SPOT')."""
    return re.sub(r"[_.:-]*spot$", "", sku, flags=re.IGNORECASE) if sku else sku


def _on_demand_refs(table, wanted: set[tuple[str, str]]) -> dict[tuple, float]:
    """Cheapest on-demand USD/GPU-h of the same provider and SKU, per region and over all regions."""
    if not wanted or "sku" not in table.c:
        return {}
    if not table.__dict__.get("shared"):  # a one-off table (CLI, quotes): only the providers asked about
        return _on_demand_refs_of(table, {p for p, _ in wanted})
    refs = table.__dict__.get("_on_demand_refs")
    if refs is None:  # every provider and SKU at once, kept on the table (cached tables serve many plans)
        refs = table.__dict__["_on_demand_refs"] = _on_demand_refs_of(table, None)
    return refs


def _on_demand_refs_of(table, providers: set[str] | None) -> dict[tuple, float]:
    import numpy as np

    c = table.c
    out: dict[tuple, float] = {}
    mask = ~c["spot"] & np.isfinite(c["rate"]) & (c["gpu_count"] > 0)
    if providers is not None:  # one C-speed pass for the providers, then their on-demand rows only
        mask &= np.fromiter(map(providers.__contains__, c["provider"].tolist()), dtype=bool, count=len(mask))
    idx = np.nonzero(mask)[0]
    per_gpu = (c["rate"][idx] / c["gpu_count"][idx]).tolist()
    for p, sku, reg, v in zip(c["provider"][idx].tolist(), c["sku"][idx].tolist(), c["region"][idx].tolist(), per_gpu,
                              strict=True):
        s = _base_sku(sku)
        for key in ((p, s, reg), (p, s)):
            if v < out.get(key, float("inf")):
                out[key] = v
    return out


def _group_reason(reason: str, gpu: str | None, key: str) -> str:
    """The group's sentence, still translatable: a Msg naming the GPU becomes the same Msg with '{gpus}'."""
    if not isinstance(reason, Msg):
        return key
    if not gpu:
        return reason
    params = {k: "{gpus}" if v == gpu else v for k, v in reason.params.items()}
    for k in (reason.key, reason.key + "_group"):  # *_group: the sentence without what follows the GPU id
        try:
            m = Msg(k, **params)
        except KeyError:
            continue
        if m == key:
            return m
    return key


def group_excluded(excluded: dict[str, int]) -> list[dict]:
    """`excluded` grouped by reason: one FP8 (or memory, or precision) sentence with the GPUs it applies to."""
    ids = set(load_gpus())
    from gpuquote.hardware import members

    groups: dict[str, dict] = {}
    for reason, n in excluded.items():
        gpu = next((t for t in re.findall(r"[a-z0-9][a-z0-9.\-]*[a-z0-9]", reason)
                    if t in ids or members(t)), None)
        key = reason
        if gpu:
            key = re.sub(rf"(?<![\w.-]){re.escape(gpu)}(?![\w.-])( \((?:[^()]|\([^()]*\))*\))?", "{gpus}",
                         reason, count=1)
        g = groups.setdefault(key, {"reason": _group_reason(reason, gpu, key), "count": 0, "gpus": []})
        g["count"] += n
        if gpu:
            g["gpus"].append(gpu)
    return sorted(groups.values(), key=lambda g: -g["count"])
