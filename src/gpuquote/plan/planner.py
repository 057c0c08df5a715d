"""Rank offers by the total cost and time to finish a job.

The procedure of DESIGN.md section 1: for each offer, the GPU count and nodes the job needs (fit memory;
meet a deadline by adding nodes), the time on that offer's hardware (GPU, NVSwitch or PCIe, network,
CPU cores per GPU), and the total cost (billing granularity, minimum term, spot interruptions with
Young/Daly checkpointing, storage and egress where priced). Estimates are computed once per hardware
configuration; prices are applied to all offers of a configuration at once with NumPy.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from gpuquote.errors import BadInput
from gpuquote.estimate import Hardware, estimate, min_gpus
from gpuquote.estimate.api import EstimateResult, checkpoint_bytes
from gpuquote.estimate.job import Job
from gpuquote.hardware import load_gpus
from gpuquote.plan.assumptions import interruption_rate, load
from gpuquote.plan.candidates import UNKNOWN_NETWORK_GBPS, Config, config_of, offer_from_row
from gpuquote.plan.spot import overhead
from gpuquote.plan.table import OfferTable

OBJECTIVES = ("cost", "time", "balanced")
SIMPLE_PER = {"second": 1, "minute": 60, "hour": 3600}
NO_HOURLY_PRICE = "no hourly price (a one-off price needs a quote with form: purchase and its TCO)"
GIB = 2**30


@dataclass
class PlanOptions:
    objective: str = "cost"
    deadline_hours: float | None = None
    budget_usd: float | None = None
    top: int = 10
    interruption_rate: float | None = None
    serving_hours: float | None = None

    def check(self) -> None:
        if self.objective not in OBJECTIVES:
            raise BadInput(f"--objective: '{self.objective}' is not one of {', '.join(OBJECTIVES)}",
                           field="objective", accepted=list(OBJECTIVES))
        for name in ("deadline_hours", "budget_usd", "serving_hours"):
            v = getattr(self, name)
            if v is not None and not v > 0:
                raise BadInput(f"--{name.replace('_', '-')}: must be > 0, got {v}", field=name)
        if self.interruption_rate is not None and not 0 <= self.interruption_rate < 10:
            raise BadInput(f"--interruption-rate: interruptions per node-hour in [0, 10), got "
                           f"{self.interruption_rate}", field="interruption_rate")
        if self.top < 1:
            raise BadInput(f"--top: must be >= 1, got {self.top}", field="top")


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


def _hardware(cfg: Config, gpus: int, job: Job | None = None) -> Hardware:
    kind, gbps = cfg.inter_kind, cfg.inter_gbps
    if kind == "unknown" and gbps is None and (job is None or job.kind != "train"):
        kind, gbps = "ethernet", UNKNOWN_NETWORK_GBPS  # only training estimates price the unknown as a range
    return Hardware(gpu=cfg.gpu, gpus=gpus, gpus_per_node=cfg.gpus_per_node, intra_node=cfg.intra_node,
                    inter_node={"kind": kind, "gbps_per_node": gbps})


def ranked_hours(est: EstimateResult) -> float:
    """Hours the plan ranks on: the high (10 GbE) end where the network is not stated."""
    rng = est.extra.get("time_hours_range")
    return float(rng[1]) if rng and rng[1] is not None else est.time_hours


def _online(job: Job) -> bool:
    return job.kind == "infer" and job.requests_per_s is not None and job.total_requests is None


def evaluate_config(job: Job, cfg: Config, opts: PlanOptions, serving_hours: float) -> list[NodeEval] | str:
    """Node counts worth renting on this configuration, with their estimates; or why none fits."""
    a = load()["search"]
    try:
        mg = min_gpus(job, cfg.gpu, gpus_per_node=cfg.gpus_per_node, intra_node=cfg.intra_node,
                      inter_kind=cfg.inter_kind, gbps_per_node=cfg.inter_gbps)
    except BadInput as e:
        return str(e)
    if mg is None:
        return f"memory: does not fit on up to {a['max_gpus']} x {cfg.gpu}"
    n_min = max(1, -(-mg // cfg.gpus_per_node))
    max_nodes = max(1, a["max_gpus"] // cfg.gpus_per_node)
    counts = [n_min] if _online(job) else sorted({n_min * m for m in a["node_multipliers"] if n_min * m <= max_nodes})
    out: list[NodeEval] = []
    for n in counts:
        est = estimate(job, _hardware(cfg, n * cfg.gpus_per_node, job))
        if est.fits:
            out.append(NodeEval(n, n * cfg.gpus_per_node, est, serving_hours if _online(job) else ranked_hours(est)))
    if opts.deadline_hours and out and all(e.hours > opts.deadline_hours for e in out) and not _online(job):
        n = out[-1].nodes
        while n * 2 <= max_nodes and out[-1].hours > opts.deadline_hours and out[-1].hours < out[0].hours * 1.01 + 1e9:
            n *= 2
            est = estimate(job, _hardware(cfg, n * cfg.gpus_per_node, job))
            if not est.fits or ranked_hours(est) >= out[-1].hours * 0.98:  # adding nodes no longer pays
                break
            out.append(NodeEval(n, n * cfg.gpus_per_node, est, ranked_hours(est)))
    return out or f"memory: does not fit on {cfg.gpu} in the counts tried"


def _storage_gb(job: Job, ckpt_bytes: float) -> tuple[float, float]:
    """(GB kept in storage while the job runs, GB sent out at the end)."""
    d = job.data
    if d is None:
        return 0.0, 0.0
    kept = (d.dataset_gb or 0.0) + (d.checkpoints_kept or 0) * ckpt_bytes / 1e9
    return kept, d.egress_gb or 0.0


def plan(job: Job, rows: list[dict] | OfferTable, opts: PlanOptions | None = None, *,
         advice_rows: list[dict] | None = None) -> dict:
    """Rank the offers in `rows` (catalog rows or quotes as rows) for `job`; see DESIGN.md section 4."""
    opts = opts or PlanOptions()
    opts.check()
    job = job.model_copy(update={"hardware": None})
    A = load()
    assumptions: list[str] = ["each offer is the hardware: the job file's hardware section is not used"]
    online = _online(job)
    serving_hours = opts.serving_hours or A["online"]["serving_hours"]
    if online:
        assumptions.append(f"online serving priced for {serving_hours:g} hours (--serving-hours)")
    ckpt = checkpoint_bytes(job) if job.kind == "train" else 0.0
    write_gbs = A["storage"]["nvme_write_gbs_default"]
    restart_h = A["spot"]["restart_hours"]
    store_gb, egress_gb = _storage_gb(job, ckpt)

    table = rows if isinstance(rows, OfferTable) else OfferTable.from_rows(rows)
    excluded: Counter = Counter()
    codes, keys = table.config_codes()
    # one config_of per distinct key, on a representative row
    first = np.full(len(keys), -1, dtype=np.int64)
    first[codes[::-1]] = np.arange(len(codes))[::-1]
    key_cfg: list[Config | None] = []
    key_notes: list[list[str]] = []
    counts = np.bincount(codes, minlength=len(keys))
    for k in range(len(keys)):
        cfg, reason, notes = config_of(table.row(int(first[k])))
        key_cfg.append(cfg)
        key_notes.append(notes)
        if cfg is None:
            excluded[reason] += int(counts[k])
    usable = np.array([c is not None for c in key_cfg], dtype=bool)
    ok = usable[codes] if len(codes) else np.zeros(0, dtype=bool)
    no_price = ok & np.isnan(table.c["rate"])
    if no_price.any():
        excluded[NO_HOURLY_PRICE] += int(no_price.sum())
    ok &= ~no_price
    for i in np.nonzero(ok & table.c["is_quote"])[0]:
        bad = _contradictions(table.row(int(i)))
        if bad:
            excluded[f"contradictory quote ({bad}): fix it before ranking"] += 1
            ok[i] = False
    # group offers by configuration (distinct Config objects may come from several keys)
    cfg_id: dict[Config, int] = {}
    key_group = np.array([cfg_id.setdefault(c, len(cfg_id)) if c is not None else -1 for c in key_cfg],
                         dtype=np.int64)
    group_of = np.where(ok, key_group[codes] if len(codes) else codes, -1)
    order = np.argsort(group_of, kind="stable")
    bounds = np.searchsorted(group_of[order], np.arange(len(cfg_id) + 1))
    configs = list(cfg_id)
    groups = {configs[g]: order[bounds[g]:bounds[g + 1]] for g in range(len(configs)) if bounds[g + 1] > bounds[g]}
    notes_by_key = {k: n for k, n in enumerate(key_notes) if n}

    deadline_fail: list[tuple[float, float, int]] = []
    budget_fail: list[tuple[float, float, int]] = []
    lam_col = _lambda_column(table, opts)
    parts: list[tuple] = []
    for cfg, idx in groups.items():
        ev = evaluate_config(job, cfg, opts, serving_hours)
        if isinstance(ev, str):
            excluded[ev] += len(idx)
            continue
        parts.append((cfg, ev, *_price_group(job, cfg, ev, idx, table, lam_col, opts, write_gbs, restart_h, ckpt,
                                               store_gb, egress_gb, A, deadline_fail, budget_fail)))
    chosen = _rank(parts, opts)
    pareto = _pareto(chosen)
    pareto_ids = {c.row for c in pareto}
    chosen = chosen[: opts.top]
    n_feasible = sum(len(p[2]) for p in parts)
    out_rows = [_row(c, table.row(c.row), job, opts, notes_by_key.get(int(codes[c.row]), []), ckpt, store_gb,
                     egress_gb, write_gbs, restart_h, c.row in pareto_ids) for c in chosen]
    result: dict = {
        "job": {"kind": job.kind, "model": job.model or (job.arch.name if job.arch else None), "flops": job.flops,
                "method": job.method if job.kind == "train" else None, "precision": job.precision,
                "tokens": job.tokens, "requests_per_s": job.requests_per_s, "total_requests": job.total_requests},
        "objective": opts.objective, "deadline_hours": opts.deadline_hours, "budget_usd": opts.budget_usd,
        "candidates": len(table), "configurations": len(groups), "feasible": n_feasible,
        "rows": out_rows,
        "pareto_front": [_front_entry(table.row(c.row), c) for c in pareto[:50]],
        "excluded": dict(excluded.most_common()),
        "host_sizing": _host_sizing(job, chosen[0].cfg, chosen[0].ev, ckpt, A) if chosen else None,
        "upgrade_advice": [],
        "nothing_fits": None,
        "assumptions": assumptions + _stated_assumptions(job, A, opts, online),
    }
    if not chosen:
        result["nothing_fits"] = _nothing_fits(table, excluded, deadline_fail, budget_fail, opts)
    if advice_rows is not None:
        result["upgrade_advice"] = _advice(job, result, excluded, advice_rows, opts)
    return result


def _contradictions(row: dict) -> str:
    """Checklist items 1-5 a quote gets wrong (a MIG slice sold as a GPU, PCIe 'with NVSwitch'...)."""
    from gpuquote.offers.checklist import check_offer

    try:
        items = check_offer(offer_from_row(row))
    except Exception:
        return ""
    return ", ".join(f"{i.item} {i.name}" for i in items if i.status == "mismatch" and i.item <= 5)


def _objective_key(objective: str):
    if objective == "time":
        return lambda c: (c.time_hours, c.cost_usd)
    if objective == "balanced":
        return lambda c: (c.cost_usd * c.time_hours, c.cost_usd)
    return lambda c: (c.cost_usd, c.time_hours)


def _rank(parts, opts: PlanOptions) -> list[Choice]:
    """All feasible offers, best first by the objective (NumPy over every offer; Choices for the first rows).

    The returned list holds the top rows plus the Pareto front (flagged by the caller), each as a Choice.
    """
    if not parts:
        return []
    rows = np.concatenate([p[2] for p in parts])
    T = np.concatenate([p[4] for p in parts])
    C = np.concatenate([p[5] for p in parts])
    part_of = np.concatenate([np.full(len(p[2]), k) for k, p in enumerate(parts)])
    pos = np.concatenate([np.arange(len(p[2])) for p in parts])
    if opts.objective == "time":
        order = np.lexsort((C, T))
    elif opts.objective == "balanced":
        order = np.lexsort((C, C * T))
    else:
        order = np.lexsort((T, C))
    # Pareto front: by cost, then time; an offer is on it when it is faster than every cheaper one.
    by_cost = np.lexsort((T, C))
    tc = T[by_cost]
    prev_min = np.concatenate([[np.inf], np.minimum.accumulate(tc)[:-1]])
    front = by_cost[tc < prev_min - 1e-12]
    keep = list(dict.fromkeys([*order[: opts.top].tolist(), *front[:50].tolist()]))
    out = []
    for k in keep:
        cfg, evs, _, js, _, _, F, cpuf = parts[part_of[k]]
        m = pos[k]
        out.append(Choice(int(rows[k]), cfg, evs[int(js[m])], float(T[k]), float(C[k]), float(F[m]), float(cpuf[m])))
    out.sort(key=_objective_key(opts.objective))
    return out


def _pareto(chosen: list[Choice]) -> list[Choice]:
    """Offers no other offer beats on both cost and time."""
    front, best_t = [], math.inf
    for c in sorted(chosen, key=lambda c: (c.cost_usd, c.time_hours)):
        if c.time_hours < best_t - 1e-12:
            front.append(c)
            best_t = c.time_hours
    return front


def _lambda_column(table: OfferTable, opts: PlanOptions) -> np.ndarray:
    """Interruptions per node-hour for every offer (0 for on-demand)."""
    lam = np.zeros(len(table))
    spot = table.c["spot"]
    if spot.any():
        by_provider: dict[str, float] = {}
        lam[spot] = [by_provider[p] if p in by_provider else
                     by_provider.setdefault(p, interruption_rate(p, opts.interruption_rate)[0])
                     for p in table.c["provider"][spot].tolist()]
    return lam


def _front_entry(r: dict, c: Choice) -> dict:
    return {"offer_id": r["offer_id"], "provider": r["provider"], "gpu_id": r["gpu_id"], "gpus": c.ev.gpus,
            "time_hours": round(c.time_hours, 4), "total_cost_usd": round(c.cost_usd, 2)}


def _price_group(job, cfg, evs, idx, table: OfferTable, lam_col, opts, write_gbs, restart_h, ckpt, store_gb,
                 egress_gb, A, deadline_fail, budget_fail) -> tuple[np.ndarray, ...]:
    """Cost and time of every offer of one configuration at each node count; the best count per offer."""
    ia = np.asarray(idx)
    idx = ia
    n = len(ia)
    c = table.c
    rate, gran, simple, lam = c["rate"][ia], c["gran"][ia], c["per_simple"][ia], lam_col[ia]
    cores = c["vcpus"][ia] / cfg.gpus_per_node
    min_cores = A["host"]["train_min_cores_per_gpu"]
    cpuf = np.ones(n)
    if job.kind == "train":
        with np.errstate(invalid="ignore", divide="ignore"):
            cpuf = np.where(np.isfinite(cores) & (cores < min_cores), min_cores / cores, 1.0)
    covers_storage = c["cov_st"][ia]
    st_rate = c["st"][ia]
    egress = np.where(c["cov_eg"][ia], 0.0, c["eg"][ia] * egress_gb)

    k = len(evs)
    T = np.empty((n, k))
    C = np.empty((n, k))
    F = np.empty((n, k))
    for j, ev in enumerate(evs):
        w = ckpt / ev.nodes / (write_gbs * 1e9) / 3600.0 if ckpt else 0.0
        with np.errstate(divide="ignore", invalid="ignore"):
            mtbi = np.where(lam > 0, 1.0 / (lam * ev.nodes), np.inf)
            if w > 0:
                tau = np.sqrt(2.0 * w * mtbi)
                f = np.where(lam > 0, 1.0 + w / tau + (tau / 2.0 + restart_h) / mtbi, 1.0)
            else:
                f = np.where(lam > 0, 1.0 + restart_h / mtbi, 1.0)
        t = ev.hours * f * cpuf
        billed = np.ceil(t * 3600.0 / gran - 1e-9) * gran / 3600.0
        run = billed * rate * ev.nodes
        for m in np.nonzero(~simple)[0]:  # monthly, term and other forms: the billing rules of offers.billing
            run[m] = _cost_of_run(table.row(int(idx[m])), float(t[m]), ev.nodes)
        storage = np.where(covers_storage, 0.0, st_rate * store_gb * t / 730.0)
        T[:, j], C[:, j], F[:, j] = t, run + storage + egress, f
    feasible = np.isfinite(C)
    if opts.deadline_hours:
        feasible &= opts.deadline_hours >= T
    if opts.budget_usd:
        feasible &= opts.budget_usd >= C
    score = {"cost": C + T * 1e-9, "time": T + C * 1e-12, "balanced": C * T}[opts.objective]
    score = np.where(feasible, score, np.inf)
    best = np.argmin(score, axis=1)
    ar = np.arange(n)
    ok = np.isfinite(score[ar, best])
    idx_a = np.asarray(idx)
    for m in np.nonzero(~ok)[0]:  # why an offer cannot be chosen: the closest it comes
        if opts.deadline_hours and not (T[m] <= opts.deadline_hours).any():
            jj = int(np.nanargmin(T[m]))
            deadline_fail.append((float(T[m, jj]), float(C[m, jj]), int(idx_a[m])))
        elif np.isfinite(C[m]).any():
            jj = int(np.nanargmin(np.where(np.isfinite(C[m]), C[m], np.inf)))
            budget_fail.append((float(T[m, jj]), float(C[m, jj]), int(idx_a[m])))
    b = best[ok]
    # (row indices, chosen node-eval index, time, cost, spot factor, cpu factor) of the feasible offers
    return idx_a[ok], b, T[ar[ok], b], C[ar[ok], b], F[ar[ok], b], cpuf[ok]


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
        "bound": est.bound, "mfu": round(est.mfu, 4),
        "layout": dict(est.layout_info) if est.layout_info else {"describe": est.layout},
        "memory_per_gpu_gib": round(est.memory.total / GIB, 2),
        "pareto": on_front,
        "fetched_at": row.get("fetched_at"), "freshness": row.get("freshness"), "source": row.get("source"),
    }
    rng = est.extra.get("time_hours_range")
    if rng and ev.hours:  # unknown network: the row's time on the RDMA end, same overheads
        out["time_hours_range"] = [round(c.time_hours * rng[0] / ev.hours, 6), round(c.time_hours, 6)]
        out["estimate_hours_range"] = list(rng)
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
        rng = est.extra.get("time_hours_range")
        if rng and (kind in ("unknown", "none") or gbps is None):
            w.append(f"inter-node network not stated: ranked on 10 GbE ({rng[1]:,.1f} h); {rng[0]:,.1f} h on an RDMA "
                     "fabric (InfiniBand/RoCE): ask the vendor for the inter-node fabric and Gb/s per node")
        elif kind in ("unknown", "none") or gbps is None:
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


def _nothing_fits(table, excluded, deadline_fail, budget_fail, opts) -> dict:
    def closest(items, by):
        t, c, i = min(items, key=by)
        r = table.row(i)
        return {"offer_id": r["offer_id"], "provider": r["provider"], "gpu_id": r["gpu_id"],
                "time_hours": round(t, 3), "total_cost_usd": round(c, 2)}

    if deadline_fail and opts.deadline_hours:
        c = closest(deadline_fail, lambda x: x[0])
        return {"constraint": "deadline", "closest": c,
                "message": f"no offer finishes within {opts.deadline_hours:g} h; the fastest takes "
                           f"{c['time_hours']:g} h ({c['offer_id']})"}
    if budget_fail and opts.budget_usd:
        c = closest(budget_fail, lambda x: x[1])
        return {"constraint": "budget", "closest": c,
                "message": f"no offer finishes within {opts.budget_usd:,.0f} USD; the cheapest costs "
                           f"{c['total_cost_usd']:,.0f} USD ({c['offer_id']})"}
    reasons = list(excluded)
    kind = "memory" if any(r.startswith("memory") for r in reasons) else ("offers" if not len(table) else "constraints")
    return {"constraint": kind, "closest": None,
            "message": "no offer can run the job: " + ("; ".join(reasons[:3]) if reasons else "no candidate offer")}


UPGRADES = (
    ("compute", "a100", ("h100",), "compute-bound on A100: the same job on H100 (about 3x the BF16 peak)"),
    ("memory", "a100", ("h200",), "memory-bound or out of memory at 80 GB: H200 has 141 GB at 4.8 TB/s"),
    ("memory", "h100", ("h200",), "memory-bound or out of memory at 80 GB: H200 has 141 GB at 4.8 TB/s"),
    ("fp8", None, ("h100", "h200"), "FP8 needs Hopper or newer: the same job on H100/H200"),
)


def _advice(job: Job, result: dict, excluded: Counter, advice_rows: list[dict], opts: PlanOptions) -> list[dict]:
    """When it applies: move up to H100 for compute, to H200 for memory, to Hopper for FP8."""
    gpus = load_gpus()
    best = result["rows"][0] if result["rows"] else None
    fam = gpus[best["estimated_as"]].family if best else None
    oom_80 = any(r.startswith("memory") for r in excluded)
    fp8 = any("Hopper" in r or "FP8" in r for r in excluded)
    out = []
    for trigger, from_fam, to_fams, why in UPGRADES:
        if trigger == "compute" and not (best and fam == from_fam and best["bound"] == "compute"):
            continue
        if trigger == "memory" and not ((best and fam == from_fam and best["bound"] == "memory")
                                        or (oom_80 and (fam == from_fam or best is None))):
            continue
        if trigger == "fp8" and not (fp8 and (best is None or not gpus[best["estimated_as"]].has_fp8)):
            continue
        cand = [r for r in advice_rows if gpus.get(_sku(r["gpu_id"]), None) is not None
                and gpus[_sku(r["gpu_id"])].family in to_fams]
        sub = plan(job, cand, PlanOptions(objective=opts.objective, top=1, interruption_rate=opts.interruption_rate,
                                          serving_hours=opts.serving_hours))
        if not sub["rows"]:
            continue
        b = sub["rows"][0]
        entry = {"trigger": trigger, "advice": why, "gpu": b["estimated_as"], "offer_id": b["offer_id"],
                 "provider": b["provider"], "gpus": b["gpus"], "time_hours": b["time_hours"],
                 "total_cost_usd": b["total_cost_usd"]}
        if best:
            entry["vs_best"] = {"offer_id": best["offer_id"], "time_hours": best["time_hours"],
                                "total_cost_usd": best["total_cost_usd"]}
        out.append(entry)
    return out


def _sku(gpu_id: str) -> str:
    from gpuquote.plan.candidates import conservative_sku

    return conservative_sku(gpu_id) or gpu_id
