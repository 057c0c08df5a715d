"""`offers`: list current offers with normalised prices (CLI `gpuquote offers`, API `/api/offers`)."""

from __future__ import annotations

from gpuquote.errors import BadInput
from gpuquote.hardware import INTRA_NODE, group_ids, members, resolve
from gpuquote.store import SORT_COLUMNS, OfferFilter, distinct_providers, open_reader, query_offers

INTERCONNECTS = ("nvswitch", "nvlink", "pcie")


def gpu_filter_ids(gpu: str) -> tuple[str, list[str]]:
    """The resolved id and every SKU or family id whose SKUs all lie inside it (40 and 80 GB never mix)."""
    r = resolve(gpu)
    want = set(r.members)
    return r.id, [g for g in group_ids() if set(members(g)) <= want]


def list_offers(gpu: str | None = None, min_gpus: float | None = None, interconnect: str | None = None,
                region: str | None = None, spot: bool | None = None, provider: list[str] | str | None = None,
                max_price_usd: float | None = None, sort: str = "price", descending: bool = False,
                limit: int | None = None) -> dict:
    """Current offers matching the filters, cheapest $/GPU-hour first by default."""
    if interconnect is not None and interconnect not in INTERCONNECTS:
        raise BadInput(f"--interconnect: '{interconnect}' is not one of {', '.join(INTERCONNECTS)}",
                       field="interconnect", accepted=list(INTERCONNECTS))
    if sort not in SORT_COLUMNS:
        raise BadInput(f"--sort: '{sort}' is not one of {', '.join(sorted(SORT_COLUMNS))}", field="sort",
                       accepted=sorted(SORT_COLUMNS))
    if min_gpus is not None and min_gpus <= 0:
        raise BadInput(f"--min-gpus: must be > 0, got {min_gpus}", field="min_gpus")
    if max_price_usd is not None and max_price_usd < 0:
        raise BadInput(f"--max-price-usd: must be >= 0, got {max_price_usd}", field="max_price_usd")
    if limit is not None and limit <= 0:
        raise BadInput(f"--limit: must be > 0, got {limit}", field="limit")
    providers = [p.strip().lower() for p in ([provider] if isinstance(provider, str) else provider or [])
                 for p in p.split(",") if p.strip()] or None
    gpu_id, ids = (None, None)
    if gpu:
        gpu_id, ids = gpu_filter_ids(gpu)
    reader = open_reader()
    where = reader.where
    f = OfferFilter(gpu_ids=ids, min_gpus=min_gpus, interconnect=interconnect, region=region, spot=spot,
                    providers=providers, max_price_usd=max_price_usd, sort=sort, descending=descending, limit=limit)
    rows, total = query_offers(reader, f)
    return {
        "filters": {"gpu": gpu_id, "min_gpus": min_gpus, "interconnect": interconnect, "region": region,
                    "spot": spot, "provider": providers, "max_price_usd": max_price_usd, "sort": sort},
        "store": where,
        "count": total,
        "providers": distinct_providers(reader, f) if limit and total > len(rows) else sorted(
            {r["provider"] for r in rows}),
        "offers": rows,
    }


__all__ = ["INTERCONNECTS", "INTRA_NODE", "gpu_filter_ids", "list_offers"]
