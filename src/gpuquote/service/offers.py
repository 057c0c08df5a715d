"""`offers`: list current offers with normalised prices (CLI `gpuquote offers`, API `/api/offers`)."""

from __future__ import annotations

import sys
from functools import lru_cache

from gpuquote.errors import BadInput
from gpuquote.hardware import INTRA_NODE, group_ids, members, resolve
from gpuquote.i18n import Msg
from gpuquote.offers.kinds import OFFER_FORMS
from gpuquote.store import SORT_COLUMNS, OfferFilter, distinct_providers, open_reader, query_offers

INTERCONNECTS = ("nvswitch", "nvlink", "pcie")
FORM_FILTERS = ("pcie", "sxm", "oam", "other")


def gpu_filter_ids(gpu: str) -> tuple[str, list[str]]:
    """The resolved id and every SKU or family id whose SKUs all lie inside it (40 and 80 GB never mix)."""
    gid, ids = _gpu_filter_ids(gpu)
    return gid, list(ids)


@lru_cache(maxsize=1024)
def _gpu_filter_ids(gpu: str) -> tuple[str, tuple[str, ...]]:
    r = resolve(gpu)
    want = set(r.members)
    return r.id, tuple(g for g in group_ids() if set(members(g)) <= want)


def narrow_ids(ids: list[str] | None, memory_gib: float | None, form_factor: str | None) -> list[str] | None:
    """Keep the group ids whose every SKU has this memory (within 7%) and form factor (web page filters)."""
    if memory_gib is None and form_factor is None:
        return ids
    from gpuquote.hardware import load_gpus

    gpus = load_gpus()

    def ok(m: str) -> bool:
        g = gpus[m]
        return ((memory_gib is None or abs(g.memory_gib - memory_gib) <= 0.07 * g.memory_gib)
                and (form_factor is None or g.form_factor == form_factor))

    return [g for g in (group_ids() if ids is None else ids) if members(g) and all(ok(m) for m in members(g))]


def list_offers(gpu: str | None = None, min_gpus: float | None = None, interconnect: str | None = None,
                region: str | None = None, spot: bool | None = None, provider: list[str] | str | None = None,
                max_price_usd: float | None = None, sort: str = "price", descending: bool = False,
                limit: int | None = None, memory_gib: float | None = None, form_factor: str | None = None,
                offset: int = 0, facets: bool = False, form: str | None = None, rows: bool = True) -> dict:
    """Current offers matching the filters, cheapest $/GPU-hour first by default.

    offset skips that many rows of the sorted result (paging); `count` and `providers` are always of the
    whole filtered result. facets=True adds `facets`: counts of the matching offers per provider, GPU id,
    interconnect and spot (the web page shows them beside the filter values). rows=False (the server's JSON
    answer): from the in-memory catalog, `offers` is a columns.Page whose dicts are not built (offers_json
    writes it; `materialize()` builds them).

    memory_gib / form_factor narrow the GPU filter to SKUs (and families) whose members all match, so an
    offer known only as a bare `a100` never passes a memory filter. `form` keeps rentals, terms or purchases.
    """
    if form is not None and form not in OFFER_FORMS:
        raise BadInput(Msg("err.not_one_of", field="--form", value=form, accepted=", ".join(OFFER_FORMS)), field="form",
                       accepted=list(OFFER_FORMS))
    if form_factor is not None and form_factor not in FORM_FILTERS:
        raise BadInput(Msg("err.not_one_of", field="--form-factor",
                           value=form_factor, accepted=", ".join(FORM_FILTERS)),
                       field="form_factor", accepted=list(FORM_FILTERS))
    if memory_gib is not None and memory_gib <= 0:
        raise BadInput(f"--memory-gib: must be > 0, got {memory_gib}", field="memory_gib")
    if interconnect is not None and interconnect not in INTERCONNECTS:
        raise BadInput(Msg("err.not_one_of", field="--interconnect",
                           value=interconnect, accepted=", ".join(INTERCONNECTS)),
                       field="interconnect", accepted=list(INTERCONNECTS))
    if sort not in SORT_COLUMNS:
        raise BadInput(Msg("err.not_one_of", field="--sort",
                           value=sort, accepted=", ".join(sorted(SORT_COLUMNS))), field="sort",
                       accepted=sorted(SORT_COLUMNS))
    if min_gpus is not None and min_gpus <= 0:
        raise BadInput(f"--min-gpus: must be > 0, got {min_gpus}", field="min_gpus")
    if max_price_usd is not None and max_price_usd < 0:
        raise BadInput(f"--max-price-usd: must be >= 0, got {max_price_usd}", field="max_price_usd")
    if limit is not None and limit <= 0:
        raise BadInput(f"--limit: must be > 0, got {limit}", field="limit")
    if offset is None or offset < 0 or int(offset) != offset:
        raise BadInput(f"--offset: must be a whole number >= 0, got {offset}", field="offset")
    offset = int(offset)
    f, gpu_id = offer_filter(gpu=gpu, min_gpus=min_gpus, interconnect=interconnect, region=region, spot=spot,
                     provider=provider, max_price_usd=max_price_usd, sort=sort, descending=descending,
                     limit=limit, memory_gib=memory_gib, form_factor=form_factor, form=form)
    # the in-memory catalog, only where a server enabled it (the CLI never imports NumPy for a listing)
    columns = sys.modules.get("gpuquote.service.columns")
    extra: dict = {}
    if columns is not None and columns.enabled():
        rows, total, providers, idx, cols = columns.query(f, offset, rows=rows)
        where = cols.where
        if facets:
            extra["facets"] = _facets(cols, idx)
    else:
        reader = open_reader()
        where = reader.where
        try:
            rows, total = query_offers(reader, f, offset=offset)
            providers = distinct_providers(reader, f) if (limit and total > len(rows)) or offset else sorted(
                {r["provider"] for r in rows})
            if facets:
                extra["facets"] = _facets_sql(reader, f)
        finally:
            reader.close()
    return {
        "filters": {"gpu": gpu_id, "min_gpus": min_gpus, "interconnect": interconnect, "region": region,
                    "spot": spot, "provider": f.providers, "max_price_usd": max_price_usd, "sort": sort,
                    "memory_gib": memory_gib, "form_factor": form_factor, "form": form},
        "store": where,
        "count": total,
        "offset": offset,
        "providers": providers,
        "offers": rows,
        **extra,
    }


def offer_filter(gpu=None, min_gpus=None, interconnect=None, region=None, spot=None, provider=None,
                 max_price_usd=None, sort="price", descending=False, limit=None, memory_gib=None,
                 form_factor=None, form=None) -> tuple[OfferFilter, str | None]:
    """The store filter for these arguments, and the resolved GPU id (echoed in `filters`)."""
    providers = [p.strip().lower() for p in ([provider] if isinstance(provider, str) else provider or [])
                 for p in p.split(",") if p.strip()] or None
    gpu_id, ids = (None, None)
    if gpu:
        gpu_id, ids = gpu_filter_ids(gpu)
    ids = narrow_ids(ids, memory_gib, form_factor)
    f = OfferFilter(gpu_ids=ids, min_gpus=min_gpus, interconnect=interconnect, region=region, spot=spot,
                    providers=providers, max_price_usd=max_price_usd, sort=sort, descending=descending, limit=limit,
                    form=form)
    return f, gpu_id


SUMMARY_COLUMNS = ["gpu_id", "memory_gib", "form_factor", "offers", "providers", "cheapest_on_demand_usd",
                   "median_on_demand_usd", "cheapest_spot_usd", "median_spot_usd", "on_demand_offers", "spot_offers",
                   "freshest_fetched_at"]


def summarize_offers(gpu: str | None = None, min_gpus: float | None = None, interconnect: str | None = None,
                     region: str | None = None, spot: bool | None = None, provider: list[str] | str | None = None,
                     max_price_usd: float | None = None, memory_gib: float | None = None,
                     form_factor: str | None = None, form: str | None = None) -> dict:
    """One row per GPU id over the offers matching the same filters as `list_offers`: the overview that
    `sky show-gpus` gives (memory, form factor, offers, providers, cheapest and median $/GPU-h on-demand
    and spot, freshest fetch). Rows: most memory first, then by id.
    """
    listed = list_offers(gpu=gpu, min_gpus=min_gpus, interconnect=interconnect, region=region, spot=spot,
                         provider=provider, max_price_usd=max_price_usd, memory_gib=memory_gib,
                         form_factor=form_factor, form=form, sort="gpu")
    from statistics import median

    from gpuquote.hardware import load_gpus

    specs = load_gpus()
    groups: dict[str, list[dict]] = {}
    for o in listed["offers"]:
        groups.setdefault(o["gpu_id"], []).append(o)
    rows = []
    for gid, offers in groups.items():
        od = sorted(o["usd_per_gpu_hour"] for o in offers if not o["spot"] and o["usd_per_gpu_hour"] is not None)
        sp = sorted(o["usd_per_gpu_hour"] for o in offers if o["spot"] and o["usd_per_gpu_hour"] is not None)
        g = specs.get(gid)
        mems = {o["gpu_memory_gib"] for o in offers if o["gpu_memory_gib"] is not None}
        forms = {o["form_factor"] for o in offers if o["form_factor"]}
        rows.append({
            "gpu_id": gid,
            "memory_gib": g.memory_gib if g else (mems.pop() if len(mems) == 1 else None),
            "form_factor": g.form_factor if g else (forms.pop() if len(forms) == 1 else None),
            "offers": len(offers),
            "providers": len({o["provider"] for o in offers}),
            "provider_ids": sorted({o["provider"] for o in offers}),
            "cheapest_on_demand_usd": od[0] if od else None,
            "median_on_demand_usd": round(median(od), 6) if od else None,
            "cheapest_spot_usd": sp[0] if sp else None,
            "median_spot_usd": round(median(sp), 6) if sp else None,
            "on_demand_offers": sum(1 for o in offers if not o["spot"]),
            "spot_offers": sum(1 for o in offers if o["spot"]),
            "freshest_fetched_at": max(o["fetched_at"] for o in offers),
        })
    rows.sort(key=lambda r: (-(r["memory_gib"] or 0), r["gpu_id"]))
    return {"filters": listed["filters"] | {"sort": None}, "store": listed["store"], "count": listed["count"],
            "providers": listed["providers"], "gpus": rows}


FACETS = ("provider", "gpu_id", "intra_node")


def _facets(c, idx) -> dict:
    import numpy as np

    out: dict = {}
    for col in FACETS:
        vals, counts = np.unique(c.obj[col][idx].astype(str), return_counts=True) if len(idx) else ([], [])
        out[col] = {str(v): int(n) for v, n in zip(vals, counts, strict=True)}
    sp = c.spot[idx]
    out["spot"] = {"true": int(sp.sum()), "false": int(len(idx) - sp.sum())}
    return out


def _facets_sql(reader, f: OfferFilter) -> dict:
    from gpuquote.store.queries import _where

    where, params = _where(f)
    out: dict = {}
    for col in FACETS:
        out[col] = {str(r["v"]): int(r["n"]) for r in reader.execute(
            f"SELECT {col} AS v, COUNT(*) AS n FROM offers WHERE {where} GROUP BY {col} ORDER BY {col}", params)}
    sp = {bool(r["v"]): int(r["n"]) for r in reader.execute(
        f"SELECT spot AS v, COUNT(*) AS n FROM offers WHERE {where} GROUP BY spot", params)}
    out["spot"] = {"true": sp.get(True, 0), "false": sp.get(False, 0)}
    return out


__all__ = ["FORM_FILTERS", "OFFER_FORMS", "INTERCONNECTS", "INTRA_NODE", "SUMMARY_COLUMNS", "gpu_filter_ids",
           "list_offers", "narrow_ids", "offer_filter", "summarize_offers"]
