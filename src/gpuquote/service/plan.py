"""`plan`: rank catalog offers and quotes by the cost and time to finish a job (CLI and /api/plan)."""

from __future__ import annotations

from pathlib import Path

from gpuquote.errors import BadInput
from gpuquote.i18n import Msg
from gpuquote.plan import PlanOptions, plan
from gpuquote.plan.candidates import row_from_offer
from gpuquote.plan.table import OfferTable
from gpuquote.service.offers import INTERCONNECTS, gpu_filter_ids
from gpuquote.store import OfferFilter, fetch_offer, open_reader, query_offer_columns, query_offers

UPGRADE_GPUS = ("h100", "h200", "b200")
ADVICE_ROWS_PER_GPU = 300


def _load_job(job):
    from gpuquote.estimate import load_job

    return load_job(job)


#: Jobs a plan has already been made for in this process: their configurations are evaluated (cached), so the
#: next plan of the same job is NumPy over the catalog, tens of milliseconds at most. A server answers those
#: inline and sends first sightings (the estimate and layout search, up to seconds) to a worker thread.
_PLANNED: set = set()
_PLANNED_MAX = 4096


def is_warm(job) -> bool:
    """Whether a plan of this job (a mapping or a Job) was already made here."""
    try:
        return _load_job(job).cache_key() in _PLANNED
    except Exception:  # a bad job: let the real call report it
        return False


def _planned(j) -> None:
    if len(_PLANNED) >= _PLANNED_MAX:
        _PLANNED.clear()
    _PLANNED.add(j.cache_key())


def _quote_rows(paths: list[str], rate_overrides: dict | None) -> tuple[list[dict], list[dict]]:
    from gpuquote.offers.checklist import run_checklist
    from gpuquote.offers.likeforlike import contradiction_text, contradictions
    from gpuquote.offers.quotes import read_quote_file

    rows, errors = [], []
    for p in paths:
        parsed = read_quote_file(p, rate_overrides)
        errors += [{**e.to_dict(), "file": str(p)} for e in parsed.errors]
        for q in parsed.quotes:
            bad = contradictions(q.facts(), run_checklist(q.facts()))
            if bad:  # a 40 GB card sold as 80 GB is never ranked (its memory, and so its fit, is unknown)
                errors.append({"id": q.id, "line": q.line, "message": contradiction_text(q.id, bad),
                               "contradicts": bad})
                continue
            try:
                rows.append(row_from_offer(q.to_offer(source=f"quote:{Path(p).name}", overrides=rate_overrides),
                                           rate_overrides))
            except BadInput as e:
                errors.append({"id": q.id, "line": q.line, "message": str(e), "file": str(p)})
    return rows, errors


def plan_job(job: dict | str | Path, *, quotes: list[str] | None = None, gpu: str | None = None,
             min_gpus: float | None = None, interconnect: str | None = None, region: str | None = None,
             spot: bool | None = None, provider: list[str] | str | None = None, max_price_usd: float | None = None,
             deadline_hours: float | None = None, budget_usd: float | None = None, objective: str = "cost",
             top: int = 10, interruption_rate: float | None = None, serving_hours: float | None = None,
             include_catalog: bool = True, rate: list[str] | None = None, gpus: int | None = None,
             nodes: int | None = None) -> dict:
    """Plan a job over the current catalog (filtered like `offers`) plus any quote files."""
    from gpuquote.offers.currency import parse_overrides

    j = _load_job(job)
    opts = PlanOptions(objective=objective, deadline_hours=deadline_hours, budget_usd=budget_usd, top=top,
                       interruption_rate=interruption_rate, serving_hours=serving_hours, gpus=gpus, nodes=nodes)
    opts.check()
    if interconnect is not None and interconnect not in INTERCONNECTS:
        raise BadInput(Msg("err.not_one_of", field="--interconnect",
                           value=interconnect, accepted=", ".join(INTERCONNECTS)),
                       field="interconnect", accepted=list(INTERCONNECTS))
    overrides = parse_overrides(rate)
    providers = [p.strip().lower() for x in ([provider] if isinstance(provider, str) else provider or [])
                 for p in x.split(",") if p.strip()] or None
    ids = gpu_filter_ids(gpu)[1] if gpu else None
    online_default = None
    if spot is None and j.kind == "infer" and j.requests_per_s is not None and j.total_requests is None:
        spot = False  # an interruption drops live traffic: serving is priced on-demand unless asked
        online_default = Msg("plan.a.online_no_spot")
    table = OfferTable.from_rows([])
    reader = None
    from gpuquote.service import columns

    in_memory = include_catalog and columns.enabled()
    where = None
    if in_memory:  # the web server: candidate offers from the in-memory catalog (service/columns.py)
        table, where = columns.plan_table(OfferFilter(gpu_ids=ids, min_gpus=min_gpus, interconnect=interconnect,
                                                      region=region, spot=spot, providers=providers,
                                                      max_price_usd=max_price_usd))
    elif include_catalog:
        reader = open_reader()
        raw = query_offer_columns(reader, OfferFilter(gpu_ids=ids, min_gpus=min_gpus, interconnect=interconnect,
                                                      region=region, spot=spot, providers=providers,
                                                      max_price_usd=max_price_usd))
        pks, rd = raw["pk"], reader
        table = OfferTable.from_columns(raw, lambda i: fetch_offer(rd, pks[i]))
    quote_errors: list[dict] = []
    if quotes:
        qrows, quote_errors = _quote_rows(quotes, overrides)
        table = OfferTable.concat(table, OfferTable.from_rows(qrows))
    advice_rows: list[dict] | OfferTable = []
    if in_memory:  # the same offers as the SQL path below, as one cached table
        advice_rows = columns.advice_table([OfferFilter(gpu_ids=gpu_filter_ids(fam)[1], region=region, spot=spot,
                                                        limit=ADVICE_ROWS_PER_GPU) for fam in UPGRADE_GPUS])
    if reader is not None:
        for fam in UPGRADE_GPUS:
            arows, _ = query_offers(reader, OfferFilter(gpu_ids=gpu_filter_ids(fam)[1], region=region, spot=spot,
                                                        limit=ADVICE_ROWS_PER_GPU))
            advice_rows += arows
    result = plan(j, table, opts, advice_rows=advice_rows)
    _planned(j)
    if online_default:
        result["assumptions"].append(online_default)
    result["store"] = reader.where if reader is not None else where
    result["filters"] = {"gpu": gpu, "min_gpus": min_gpus, "interconnect": interconnect, "region": region,
                         "spot": spot, "provider": providers, "max_price_usd": max_price_usd,
                         "quotes": list(quotes or []), "gpus": gpus, "nodes": nodes}
    result["quote_errors"] = quote_errors
    n_bad = sum(1 for e in quote_errors if e.get("contradicts"))
    if n_bad:
        key = Msg("plan.x.contradictory_see")
        result["excluded"][key] = result["excluded"].get(key, 0) + n_bad
    return result
