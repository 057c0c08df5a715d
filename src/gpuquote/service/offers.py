"""`offers`: list current offers with normalised prices (CLI `gpuquote offers`, API `/api/offers`)."""

from __future__ import annotations

from gpuquote.errors import BadInput
from gpuquote.hardware import INTRA_NODE, group_ids, members, resolve
from gpuquote.i18n import Msg
from gpuquote.offers.model import OFFER_FORMS
from gpuquote.store import SORT_COLUMNS, OfferFilter, distinct_providers, open_reader, query_offers

INTERCONNECTS = ("nvswitch", "nvlink", "pcie")
FORM_FILTERS = ("pcie", "sxm", "oam", "other")


def gpu_filter_ids(gpu: str) -> tuple[str, list[str]]:
    """The resolved id and every SKU or family id whose SKUs all lie inside it (40 and 80 GB never mix)."""
    r = resolve(gpu)
    want = set(r.members)
    return r.id, [g for g in group_ids() if set(members(g)) <= want]


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
                form: str | None = None) -> dict:
    """Current offers matching the filters, cheapest $/GPU-hour first by default.

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
    providers = [p.strip().lower() for p in ([provider] if isinstance(provider, str) else provider or [])
                 for p in p.split(",") if p.strip()] or None
    gpu_id, ids = (None, None)
    if gpu:
        gpu_id, ids = gpu_filter_ids(gpu)
    ids = narrow_ids(ids, memory_gib, form_factor)
    reader = open_reader()
    where = reader.where
    f = OfferFilter(gpu_ids=ids, min_gpus=min_gpus, interconnect=interconnect, region=region, spot=spot,
                    providers=providers, max_price_usd=max_price_usd, sort=sort, descending=descending, limit=limit,
                    form=form)
    rows, total = query_offers(reader, f)
    return {
        "filters": {"gpu": gpu_id, "min_gpus": min_gpus, "interconnect": interconnect, "region": region,
                    "spot": spot, "provider": providers, "max_price_usd": max_price_usd, "sort": sort,
                    "memory_gib": memory_gib, "form_factor": form_factor, "form": form},
        "store": where,
        "count": total,
        "providers": distinct_providers(reader, f) if limit and total > len(rows) else sorted(
            {r["provider"] for r in rows}),
        "offers": rows,
    }


__all__ = ["FORM_FILTERS", "OFFER_FORMS", "INTERCONNECTS", "INTRA_NODE", "gpu_filter_ids", "list_offers", "narrow_ids"]
