"""From an offer (a catalog row or a quote) to the hardware configuration an estimate depends on.

Offers that share a configuration (GPU SKU, GPUs per node, intra-node link, inter-node network) share
one estimate: a plan over thousands of offers evaluates a few hundred configurations.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from gpuquote.hardware import load_gpus, members
from gpuquote.i18n import Msg
from gpuquote.offers import Offer, usd_per_gpu_hour, usd_per_node_hour

UNKNOWN_NETWORK_GBPS = 10.0


@dataclass(frozen=True)
class Config:
    gpu: str  # a SKU id
    gpus_per_node: int
    intra_node: str | None  # None: unknown (the estimate assumes what is usual, and says so)
    inter_kind: str
    inter_gbps: float | None


def conservative_sku(gpu_id: str) -> str | None:
    """The slowest SKU a family could be (least bandwidth, then least memory): never flatter an offer."""
    skus = members(gpu_id)
    if not skus:
        return None
    gpus = load_gpus()
    return min(skus, key=lambda s: (gpus[s].memory_bandwidth_gbs or 0, gpus[s].memory_gib, gpus[s].tdp_w or 0))


def config_of(row: dict) -> tuple[Config | None, str | None, list[str]]:
    """(config, reason it cannot be ranked, notes) for an offer row."""
    notes: list[str] = []
    count = row["gpu_count"]
    excl = row.get("gpu_exclusive", True)
    if excl is not True and excl not in ("true", "unknown"):
        return None, Msg("plan.x.not_whole", excl=excl), notes
    if count < 1 or float(count) != int(count):
        return None, Msg("plan.x.fractional"), notes
    sku = conservative_sku(row["gpu_id"])
    if sku is None:
        return None, Msg("plan.x.not_in_catalog", gpu=row["gpu_id"]), notes
    if sku != row["gpu_id"]:
        notes.append(Msg("plan.n.family", gpu=row["gpu_id"], sku=sku))
    if excl == "unknown":
        notes.append(Msg("plan.n.exclusive_assumed"))
    gpn = int(count)
    intra = row.get("intra_node") or "unknown"
    if gpn == 1:
        intra = "none"
    elif intra in ("unknown", "none"):
        intra = None
    net = row.get("inter_node") or {}
    kind, gbps = net.get("kind") or "unknown", net.get("gbps_per_node")
    if kind in ("unknown", "none") and gbps is None:
        # Not stated: kept unknown. A training estimate prices it as a range (RDMA fabric .. 10 GbE), each
        # end with its own layout, and the plan ranks on the 10 GbE end; other jobs assume 10 GbE outright
        # (see planner._hardware), so that a multi-node plan on such offers is never flattered.
        kind = "unknown"
    elif kind in ("unknown", "none") or gbps is None:
        kind, gbps = ("ethernet" if kind in ("unknown", "none") else kind), UNKNOWN_NETWORK_GBPS
    return Config(sku, gpn, intra, kind, gbps), None, notes


def row_from_offer(o: Offer, overrides: dict[str, float] | None = None) -> dict:
    """A quote (as an Offer) in the same shape as a stored catalog row, its price converted to USD.

    The conversion uses the shipped dated rate or a --rate override; the original price is kept.
    """
    from gpuquote.offers import Price
    from gpuquote.offers.currency import to_usd

    original = o.price
    if o.price.currency != "USD":
        usd, r = to_usd(o.price.amount, o.price.currency, overrides)
        o = o.model_copy(update={"price": Price(amount=usd, currency="USD", per=o.price.per,
                                                term_months=o.price.term_months)})
    d = o.model_dump(mode="json")
    d["original_price"] = original.model_dump(mode="json")
    d["offer_id"] = o.id
    d["usd_per_node_hour"] = usd_per_node_hour(o.price)[0]
    d["usd_per_gpu_hour"] = usd_per_gpu_hour(o.price, o.gpu_count)
    d["freshness"] = "quote"
    return d


def offer_from_row(row: dict) -> Offer:
    """A catalog row as an Offer (for the checklist); only the few rows that are shown are rebuilt."""
    fields = set(Offer.model_fields)
    d = {k: v for k, v in row.items() if k in fields}
    d["id"] = row["offer_id"]
    if isinstance(d.get("fetched_at"), str):
        d["fetched_at"] = datetime.fromisoformat(d["fetched_at"])
    if d.get("gpu_exclusive") == "true":
        d["gpu_exclusive"] = True
    return Offer(**d)
