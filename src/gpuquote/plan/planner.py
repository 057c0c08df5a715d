"""Rank offers by the total cost and time to finish a job.

The procedure of DESIGN.md section 1: for each offer, the GPU count and nodes the job needs (fit memory;
meet a deadline by adding nodes), the time on that offer's hardware (GPU, NVSwitch or PCIe, network,
CPU cores per GPU), and the total cost (billing granularity, minimum term, spot interruptions with
Young/Daly checkpointing, storage and egress where priced). Estimates are computed once per hardware
configuration; prices are applied to all offers of a configuration at once with NumPy.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from gpuquote.errors import BadInput
from gpuquote.estimate import Hardware, estimate, min_gpus
from gpuquote.estimate.api import EstimateResult, checkpoint_bytes, on_clear_caches
from gpuquote.estimate.job import Job
from gpuquote.i18n import Msg
from gpuquote.plan.advice import _advice, _nothing_fits
from gpuquote.plan.assumptions import egress_prices, interruption_rate, load
from gpuquote.plan.candidates import UNKNOWN_NETWORK_GBPS, Config, config_of, offer_from_row
from gpuquote.plan.pricing import Priced, price_all
from gpuquote.plan.rows import (
    Choice,
    NodeEval,
    _front_entry,
    _host_sizing,
    _online,
    _row,
    _stated_assumptions,
    annotate_sections,
    checklist_warnings,
    group_excluded,
)
from gpuquote.plan.table import OfferTable

OBJECTIVES = ("cost", "time", "balanced")
SECTIONS = ("on_demand", "spot", "purchase")
NO_HOURLY_PRICE = Msg("plan.x.no_hourly_price")


@dataclass
class PlanOptions:
    objective: str = "cost"
    deadline_hours: float | None = None
    budget_usd: float | None = None
    top: int = 10
    interruption_rate: float | None = None
    serving_hours: float | None = None
    gpus: int | None = None  # --gpus (or the job's hardware.gpus): only this many GPUs, in whole nodes
    nodes: int | None = None  # --nodes: only this many nodes

    def check(self) -> None:
        if self.objective not in OBJECTIVES:
            raise BadInput(Msg("err.not_one_of", field="--objective",
                               value=self.objective, accepted=", ".join(OBJECTIVES)),
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
        for name in ("gpus", "nodes"):
            v = getattr(self, name)
            if v is not None and (not float(v).is_integer() or not 1 <= v <= 1_000_000):
                raise BadInput(f"--{name}: a whole number >= 1, got {v}", field=name, accepted=["an integer >= 1"])


def _forced_nodes(cfg: Config, opts: PlanOptions, n_min: int) -> int | str:
    """The node count --gpus / --nodes ask for on this configuration, or why this offer cannot give it."""
    gpn = cfg.gpus_per_node
    n = opts.nodes
    if opts.gpus:
        if opts.gpus % gpn or (n is not None and n * gpn != opts.gpus):
            return Msg("plan.x.gpus_on_nodes" if n else "plan.x.gpus_not_whole", gpus=opts.gpus, nodes=n)
        n = opts.gpus // gpn
    if n < n_min:
        return Msg("plan.x.too_few", gpus=n * gpn, gpu=cfg.gpu, need=n_min * gpn)
    return n


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


def evaluate_config(job: Job, cfg: Config, opts: PlanOptions, serving_hours: float) -> list[NodeEval] | str:
    """Node counts worth renting on this configuration, with their estimates; or why none fits.

    Cached: a server plans the same job on the same configurations under many filters, and the answer
    depends only on the job, the configuration, --gpus/--nodes, the deadline and the serving hours."""
    return _evaluate_config(job, cfg, opts.gpus, opts.nodes, opts.deadline_hours, serving_hours)


@lru_cache(maxsize=16384)
def _evaluate_config(job: Job, cfg: Config, gpus: int | None, nodes: int | None, deadline_hours: float | None,
                     serving_hours: float) -> tuple[NodeEval, ...] | str:
    opts = PlanOptions(gpus=gpus, nodes=nodes, deadline_hours=deadline_hours)
    a = load()["search"]
    try:
        mg = min_gpus(job, cfg.gpu, gpus_per_node=cfg.gpus_per_node, intra_node=cfg.intra_node,
                      inter_kind=cfg.inter_kind, gbps_per_node=cfg.inter_gbps)
    except BadInput as e:
        return getattr(e, "message", None) or str(e)
    if mg is None:
        return Msg("plan.x.no_fit_up_to", max=a["max_gpus"], gpu=cfg.gpu)
    n_min = max(1, -(-mg // cfg.gpus_per_node))
    max_nodes = max(1, a["max_gpus"] // cfg.gpus_per_node)
    counts = [n_min] if _online(job) else sorted({n_min * m for m in a["node_multipliers"] if n_min * m <= max_nodes})
    forced = opts.gpus or opts.nodes
    if forced:  # --gpus / --nodes / the job's hardware.gpus: that shape only
        n_forced = _forced_nodes(cfg, opts, n_min)
        if isinstance(n_forced, str):
            return n_forced
        counts = [n_forced]
    out: list[NodeEval] = []
    for n in counts:
        est = estimate(job, _hardware(cfg, n * cfg.gpus_per_node, job))
        if est.fits:
            out.append(NodeEval(n, n * cfg.gpus_per_node, est, serving_hours if _online(job) else ranked_hours(est)))
    if opts.deadline_hours and out and all(e.hours > opts.deadline_hours for e in out) and not _online(job) \
            and not forced:
        n = out[-1].nodes
        while n * 2 <= max_nodes and out[-1].hours > opts.deadline_hours and out[-1].hours < out[0].hours * 1.01 + 1e9:
            n *= 2
            est = estimate(job, _hardware(cfg, n * cfg.gpus_per_node, job))
            if not est.fits or ranked_hours(est) >= out[-1].hours * 0.98:  # adding nodes no longer pays
                break
            out.append(NodeEval(n, n * cfg.gpus_per_node, est, ranked_hours(est)))
    return tuple(out) or Msg("plan.x.no_fit_counts", gpu=cfg.gpu)


on_clear_caches(_evaluate_config.cache_clear)


def _storage_gb(job: Job, ckpt_bytes: float) -> tuple[float, float]:
    """(GB kept in storage while the job runs, GB sent out at the end)."""
    d = job.data
    if d is None:
        return 0.0, 0.0
    kept = (d.dataset_gb or 0.0) + (d.checkpoints_kept or 0) * ckpt_bytes / 1e9
    return kept, d.egress_gb or 0.0


def plan(job: Job, rows: list[dict] | OfferTable, opts: PlanOptions | None = None, *,
         advice_rows: list[dict] | OfferTable | None = None, brief: bool = False) -> dict:
    """Rank the offers in `rows` (catalog rows or quotes as rows) for `job`; see DESIGN.md section 4.

    brief=True returns only {"rows": the top rows} (no sections, front, sizing or advice)."""
    opts = opts or PlanOptions()
    opts.check()
    from_job = bool(job.hardware and job.hardware.gpus and not (opts.gpus or opts.nodes))
    assumptions: list[str] = [Msg("plan.a.hardware_from_job" if from_job else "plan.a.hardware")]
    if from_job:
        opts = replace(opts, gpus=job.hardware.gpus)
        assumptions.append(Msg("plan.a.gpus_from_job", gpus=job.hardware.gpus))
    elif opts.gpus or opts.nodes:
        assumptions.append(Msg("plan.a.gpus_fixed", opts=", ".join(f"--{k} {v}" for k, v in
                                                                   (("gpus", opts.gpus), ("nodes", opts.nodes)) if v)))
    job = job.model_copy(update={"hardware": None})
    A = load()
    online = _online(job)
    serving_hours = opts.serving_hours or A["online"]["serving_hours"]
    if online:
        assumptions.append(Msg("plan.a.serving_hours", hours=f"{serving_hours:g}"))
    ckpt = checkpoint_bytes(job) if job.kind == "train" else 0.0
    write_gbs = A["storage"]["nvme_write_gbs_default"]
    restart_h = A["spot"]["restart_hours"]
    store_gb, egress_gb = _storage_gb(job, ckpt)

    table = rows if isinstance(rows, OfferTable) else OfferTable.from_rows(rows)
    excluded: Counter = Counter()
    codes, keys = table.config_codes()
    # one config_of per distinct key, on a representative row
    key_cfg, key_notes, key_reason = _key_configs(table)
    counts = np.bincount(codes, minlength=len(keys))
    for k, reason in enumerate(key_reason):
        if key_cfg[k] is None:
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
            excluded[Msg("plan.x.contradictory", items=bad)] += 1
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
    eg_col = _egress_column(table) if egress_gb else table.c["eg"]
    st_a = A["storage"]
    wr_col = np.where(np.isfinite(table.c["nvme_wr"]), table.c["nvme_wr"],
                      np.where(table.c["nvme_gib"] > 0, st_a["nvme_write_gbs_local"], write_gbs))
    priced_groups: list[tuple[Config, list[NodeEval], np.ndarray]] = []
    for cfg, idx in groups.items():
        ev = evaluate_config(job, cfg, opts, serving_hours)
        if isinstance(ev, str):
            excluded[ev] += len(idx)
            continue
        priced_groups.append((cfg, ev, idx))
    priced = price_all(job, priced_groups, table, lam_col, opts, restart_h, ckpt, store_gb, egress_gb, A,
                       deadline_fail, budget_fail, eg_col=eg_col, wr_col=wr_col)
    kept, section_rows = _rank(priced, priced_groups, opts, table)
    pareto = _pareto(kept)
    pareto_ids = {c.row for c in pareto}
    by_row = {c.row: c for c in kept}
    chosen = [by_row[i] for i in section_rows["rows"]]
    n_feasible = len(priced)
    built: dict[int, dict] = {}

    checks = table.__dict__.setdefault("_checks", {})  # checklist warnings per offer of this table

    shared = table.__dict__.get("shared", False)
    jkey = job.cache_key()

    def row_of(c: Choice) -> dict:
        if c.row not in built:
            key = (id(table), c.row, jkey, id(c.ev), opts.interruption_rate) if shared else None
            hit = _ROWS.get(key) if key is not None else None
            if hit is not None and hit[0] is table:
                out = _copy_row(hit[1])
            else:
                row = table.row(c.row)
                chk = checks.get(c.row)
                if chk is None:
                    chk = checks[c.row] = checklist_warnings(row)
                out = _row(c, row, job, opts, notes_by_key.get(int(codes[c.row]), []), ckpt,
                           store_gb, egress_gb, float(wr_col[c.row]), restart_h, False, chk)
                if key is not None:
                    _remember_row(key, table, out)
            out["pareto"] = c.row in pareto_ids
            built[c.row] = out
        return built[c.row]

    out_rows = [row_of(c) for c in chosen]
    if brief:  # the upgrade advice reads the best row only
        return {"rows": out_rows}
    sections = {s: [row_of(by_row[i]) for i in section_rows[s]] for s in SECTIONS}
    annotate_sections(sections, table)
    result: dict = {
        "job": {"kind": job.kind, "model": job.model or (job.arch.name if job.arch else None), "flops": job.flops,
                "method": job.method if job.kind == "train" else None, "precision": job.precision,
                "tokens": job.tokens, "requests_per_s": job.requests_per_s, "total_requests": job.total_requests},
        "objective": opts.objective, "deadline_hours": opts.deadline_hours, "budget_usd": opts.budget_usd,
        "candidates": len(table), "configurations": len(groups), "feasible": n_feasible,
        "rows": out_rows,
        "sections": sections,
        "pareto_front": [_front_entry(table.row(c.row), c) for c in pareto[:50]],
        "excluded": dict(excluded.most_common()),
        "excluded_groups": group_excluded(excluded),
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


#: Rows built on the server's cached tables, by (table, offer, job, node count, interruption rate): everything a
#: row says follows from those, and a plan under another budget, top or objective shows many of the same
#: rows. Handed out as deep copies of their dicts and lists (annotate_sections and in_currency add keys).
_ROWS: dict[tuple, tuple[OfferTable, dict]] = {}
_ROWS_MAX = 8192


def _remember_row(key: tuple, table: OfferTable, row: dict) -> None:
    if len(_ROWS) >= _ROWS_MAX:
        _ROWS.clear()
    _ROWS[key] = (table, _copy_row(row))  # the table kept alive with it: its id stays its own


def _copy_row(v):
    if isinstance(v, dict):
        return {k: _copy_row(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_copy_row(x) for x in v]
    return v


def _key_configs(table: OfferTable) -> tuple[list[Config | None], list[list[str]], list[str | None]]:
    """config_of on one representative row per configuration key (kept on the table: cached tables are
    planned again and again)."""
    got = table.__dict__.get("_key_configs")
    if got is None:
        codes, keys = table.config_codes()
        first = np.full(len(keys), -1, dtype=np.int64)
        first[codes[::-1]] = np.arange(len(codes))[::-1]
        cfgs, notes, reasons = [], [], []
        for k in range(len(keys)):
            cfg, reason, note = config_of(table.row(int(first[k])))
            cfgs.append(cfg)
            notes.append(note)
            reasons.append(reason)
        got = table.__dict__["_key_configs"] = (cfgs, notes, reasons)
    return got


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


def _rank(p: Priced, groups: list[tuple[Config, list[NodeEval], np.ndarray]], opts: PlanOptions,
          table: OfferTable) -> tuple[list[Choice], dict[str, list[int]]]:
    """All feasible offers, best first by the objective (NumPy over every offer; Choices for the first rows).

    Returns the Choices kept (the top rows, each section's top rows and the Pareto front) and, per list
    (`rows` and each section), the table rows in order. In `rows`, rentals come first: a purchase is never
    the #1 of a plan that can rent.
    """
    if not len(p):
        return [], {k: [] for k in ("rows", *SECTIONS)}
    rows, T, C = p.rows, p.T, p.C
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
    buy, spot = table.c["purchase"][rows[order]], table.c["spot"][rows[order]]
    lists = {"rows": np.concatenate([order[~buy], order[buy]])[: opts.top],
             "on_demand": order[~buy & ~spot][: opts.top], "spot": order[~buy & spot][: opts.top],
             "purchase": order[buy][: opts.top]}
    keep = list(dict.fromkeys([*np.concatenate(list(lists.values())).tolist(), *front[:50].tolist()]))
    out = []
    for k in keep:
        cfg, evs, _ = groups[int(p.group[k])]
        out.append(Choice(int(rows[k]), cfg, evs[int(p.j[k])], float(T[k]), float(C[k]), float(p.F[k]),
                          float(p.cpuf[k])))
    out.sort(key=_objective_key(opts.objective))
    return out, {k: [int(rows[i]) for i in v] for k, v in lists.items()}


def _pareto(chosen: list[Choice]) -> list[Choice]:
    """Offers no other offer beats on both cost and time."""
    front, best_t = [], math.inf
    for c in sorted(chosen, key=lambda c: (c.cost_usd, c.time_hours)):
        if c.time_hours < best_t - 1e-12:
            front.append(c)
            best_t = c.time_hours
    return front


def _lambda_column(table: OfferTable, opts: PlanOptions) -> np.ndarray:
    """Interruptions per node-hour for every offer (0 for on-demand); kept on the table per stated rate."""
    memo = table.__dict__.setdefault("_lambda", {})
    if opts.interruption_rate not in memo:
        lam = memo[opts.interruption_rate] = _lambda_of(table, opts)
        lam.flags.writeable = False
    return memo[opts.interruption_rate]


def _lambda_of(table: OfferTable, opts: PlanOptions) -> np.ndarray:
    lam = np.zeros(len(table))
    spot = table.c["spot"]
    if spot.any():
        by_provider: dict[str, float] = {}
        lam[spot] = [by_provider[p] if p in by_provider else
                     by_provider.setdefault(p, interruption_rate(p, opts.interruption_rate)[0])
                     for p in table.c["provider"][spot].tolist()]
    return lam


def _egress_column(table: OfferTable) -> np.ndarray:
    """USD per GB out for every offer: its own price, else its provider's public internet egress (data/egress.yaml).
    Kept on the table (read-only)."""
    eg = table.__dict__.get("_egress")
    if eg is None:
        eg = table.__dict__["_egress"] = _egress_of(table)
        eg.flags.writeable = False
    return eg


def _egress_of(table: OfferTable) -> np.ndarray:
    eg = table.c["eg"].copy()
    fill = (eg == 0) & ~table.c["cov_eg"] & ~table.c["is_quote"]
    if fill.any():
        for p, v in egress_prices().items():  # a few providers: one vectorised comparison each
            eg[fill & (table.c["provider"] == p)] = v["usd_per_gb"]
    return eg




