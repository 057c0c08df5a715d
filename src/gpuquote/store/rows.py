"""Offer <-> table row. Rows are read back as plain dicts (fast), shaped like Offer JSON."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpuquote.offers import Offer

FRESH_HOURS = 48.0  # fresh: fetched within 2 days
AGING_HOURS = 14 * 24.0  # aging: within 14 days; older is stale


@lru_cache(maxsize=4096)
def _freshness_cached(fetched_at: str, now_hour: str) -> str:
    return freshness(fetched_at, datetime.fromisoformat(now_hour))


def _loads(v: str | None, empty):
    if v is None or v in ("[]", "{}", ""):
        return type(empty)()
    return json.loads(v)


def freshness(fetched_at: str | datetime | None, now: datetime | None = None) -> str:
    """fresh (<= 2 days) | aging (<= 14 days) | stale | unknown."""
    if not fetched_at:
        return "unknown"
    ts = datetime.fromisoformat(fetched_at) if isinstance(fetched_at, str) else fetched_at
    if ts.tzinfo is None:
        ts = ts.replace(tzinfo=UTC)
    age_h = ((now or datetime.now(UTC)) - ts).total_seconds() / 3600
    return "fresh" if age_h <= FRESH_HOURS else "aging" if age_h <= AGING_HOURS else "stale"


def offer_to_row(o: Offer, snapshot_id: int) -> dict:
    from gpuquote.offers import usd_per_gpu_hour, usd_per_node_hour

    node = usd_per_node_hour(o.price)[0]
    return {
        "snapshot_id": snapshot_id, "offer_id": o.id, "provider": o.provider, "region": o.region, "sku": o.sku,
        "gpu_id": o.gpu_id, "gpu_count": o.gpu_count, "gpu_memory_gib": o.gpu_memory_gib,
        "gpu_exclusive": "true" if o.gpu_exclusive is True else str(o.gpu_exclusive),
        "form_factor": o.form_factor, "intra_node": o.intra_node, "vcpus": o.vcpus, "cpu_model": o.cpu_model,
        "ram_gib": o.ram_gib, "nvme_gib": o.nvme_gib, "inter_node_kind": o.inter_node.kind,
        "inter_node_gbps": o.inter_node.gbps_per_node, "price_amount": o.price.amount,
        "price_currency": o.price.currency, "price_per": o.price.per, "term_months": o.price.term_months,
        "billing_granularity_s": o.billing_granularity_s, "spot": o.spot,
        "covers": json.dumps(o.covers), "extras": json.dumps(o.extras), "available": o.available,
        "source": o.source, "fetched_at": o.fetched_at.isoformat(),
        "usd_per_gpu_hour": usd_per_gpu_hour(o.price, o.gpu_count), "usd_per_node_hour": node,
        "notes": json.dumps(o.notes, ensure_ascii=False), "form": o.form, "nvme_write_gbs": o.nvme_write_gbs,
    }


def row_to_dict(r, now: datetime | None = None) -> dict:
    """A stored row as the Offer JSON of DESIGN.md section 3, plus normalised prices and freshness."""
    m = r._mapping if hasattr(r, "_mapping") else r
    now_hour = (now or datetime.now(UTC)).replace(minute=0, second=0, microsecond=0).isoformat()
    excl = m["gpu_exclusive"]
    return {
        "offer_id": m["offer_id"], "provider": m["provider"], "region": m["region"], "sku": m["sku"],
        "gpu_id": m["gpu_id"], "gpu_count": _int(m["gpu_count"]), "gpu_memory_gib": m["gpu_memory_gib"],
        "gpu_exclusive": True if excl == "true" else excl,
        "form_factor": m["form_factor"], "intra_node": m["intra_node"], "vcpus": _int(m["vcpus"]),
        "cpu_model": m["cpu_model"], "ram_gib": m["ram_gib"], "nvme_gib": m["nvme_gib"],
        "nvme_write_gbs": m.get("nvme_write_gbs"),
        "inter_node": {"kind": m["inter_node_kind"], "gbps_per_node": m["inter_node_gbps"]},
        "price": {"amount": m["price_amount"], "currency": m["price_currency"], "per": m["price_per"],
                  "term_months": m["term_months"]},
        "billing_granularity_s": m["billing_granularity_s"], "spot": bool(m["spot"]),
        "covers": _loads(m["covers"], []), "extras": _loads(m["extras"], {}),
        "available": m["available"], "source": m["source"], "fetched_at": m["fetched_at"],
        "freshness": _freshness_cached(m["fetched_at"], now_hour) if m["fetched_at"] else "unknown",
        "usd_per_gpu_hour": m["usd_per_gpu_hour"], "usd_per_node_hour": m["usd_per_node_hour"],
        "notes": _loads(m["notes"], []), "form": m.get("form") or "rental",
    }


def _int(v):
    return int(v) if isinstance(v, float) and v.is_integer() else v
