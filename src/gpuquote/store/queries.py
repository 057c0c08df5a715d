"""Queries on the current catalog, in portable SQL run by a Reader (no SQLAlchemy import for SQLite)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime

from gpuquote.store.rows import row_to_dict

SORT_COLUMNS = {
    "price": "usd_per_gpu_hour", "usd_per_gpu_hour": "usd_per_gpu_hour", "node_price": "usd_per_node_hour",
    "usd_per_node_hour": "usd_per_node_hour", "provider": "provider", "region": "region", "gpu": "gpu_id",
    "gpu_id": "gpu_id", "count": "gpu_count", "gpu_count": "gpu_count", "fetched": "fetched_at",
    "fetched_at": "fetched_at", "memory": "gpu_memory_gib", "vcpus": "vcpus", "ram": "ram_gib", "sku": "sku",
}


NOT_NULL = {"provider", "gpu_id", "gpu_count", "fetched_at", "offer_id"}


@dataclass
class OfferFilter:
    gpu_ids: list[str] | None = None  # group ids accepted (a family filter expands to its sub-groups)
    min_gpus: float | None = None
    interconnect: str | None = None
    region: str | None = None
    spot: bool | None = None
    providers: list[str] | None = None
    max_price_usd: float | None = None
    sources: list[str] | None = None
    form: str | None = None  # rental | purchase | term
    sort: str = "price"
    descending: bool = False
    limit: int | None = None


def _where(f: OfferFilter) -> tuple[str, dict]:
    """Portable SQL (sqlite3 and SQLAlchemy text() both take :named parameters)."""
    conds = ["is_current = 1"]
    p: dict = {}

    def in_list(col: str, values: list, prefix: str) -> str:
        names = []
        for i, v in enumerate(values):
            p[f"{prefix}{i}"] = v
            names.append(f":{prefix}{i}")
        return f"{col} IN ({', '.join(names) or 'NULL'})"

    if f.gpu_ids is not None:
        conds.append(in_list("gpu_id", f.gpu_ids, "g"))
    if f.min_gpus is not None:
        conds.append("gpu_count >= :min_gpus")
        p["min_gpus"] = f.min_gpus
    if f.interconnect:
        conds.append("intra_node = :intra")
        p["intra"] = f.interconnect
    if f.region:
        conds.append("(lower(region) = :region OR lower(region) LIKE :region_prefix)")
        p["region"] = f.region.lower()
        p["region_prefix"] = f.region.lower() + "%"
    if f.spot is not None:
        conds.append("spot = :spot")
        p["spot"] = f.spot
    if f.providers:
        conds.append(in_list("provider", f.providers, "p"))
    if f.max_price_usd is not None:
        conds.append("usd_per_gpu_hour IS NOT NULL AND usd_per_gpu_hour <= :max_price")
        p["max_price"] = f.max_price_usd
    if f.sources:
        conds.append(in_list("source", f.sources, "s"))
    if f.form:
        conds.append("form = :form")
        p["form"] = f.form
    return " AND ".join(conds), p


def query_offers(reader, f: OfferFilter, offset: int = 0) -> tuple[list[dict], int]:
    """Current offers matching the filter, sorted; returns (rows, total matches before offset and limit).

    A nullable sort column is read in two passes (values, then NULLs) so that an index can serve
    ORDER BY ... LIMIT; NULLs always come last.
    """
    col = SORT_COLUMNS[f.sort]
    where, params = _where(f)
    direction = "DESC" if f.descending else "ASC"
    tail = "provider, region, offer_id"
    offset = int(offset or 0)
    limit = f" LIMIT {int(f.limit)}" if f.limit else (" LIMIT 9223372036854775807" if offset else "")
    limit += f" OFFSET {offset}" if offset else ""
    if col in NOT_NULL:
        raw = reader.execute(f"SELECT * FROM offers WHERE {where} ORDER BY {col} {direction}, {tail}{limit}", params)
    else:
        raw = reader.execute(f"SELECT * FROM offers WHERE {where} AND {col} IS NOT NULL "
                             f"ORDER BY {col} {direction}, {tail}{limit}", params)
        if not f.limit or len(raw) < f.limit:
            # the NULL rows follow the valued ones: skip what the offset did not use up on valued rows
            skip = 0
            if offset:
                n_vals = reader.execute(f"SELECT COUNT(*) AS n FROM offers WHERE {where} AND {col} IS NOT NULL",
                                        params)[0]["n"]
                skip = max(0, offset - int(n_vals))
            rest = f" LIMIT {int(f.limit) - len(raw)}" if f.limit else (" LIMIT 9223372036854775807" if skip else "")
            rest += f" OFFSET {skip}" if skip else ""
            raw += reader.execute(f"SELECT * FROM offers WHERE {where} AND {col} IS NULL ORDER BY {tail}{rest}",
                                  params)
    now = datetime.now(UTC)
    rows = [row_to_dict(r, now) for r in raw]
    total = len(rows)
    if offset or (f.limit and len(rows) >= f.limit):
        total = reader.execute(f"SELECT COUNT(*) AS n FROM offers WHERE {where}", params)[0]["n"]
    return rows, int(total)


def distinct_providers(reader, f: OfferFilter) -> list[str]:
    where, params = _where(f)
    return [r["provider"] for r in reader.execute(
        f"SELECT DISTINCT provider FROM offers WHERE {where} ORDER BY provider", params)]


def list_snapshots(reader, source: str | None = None) -> list[dict]:
    """Every snapshot (good and refused), oldest first, with whether it is current."""
    sql = ("SELECT s.*, c.snapshot_id AS current_id FROM snapshots s "
           "LEFT JOIN current c ON c.snapshot_id = s.id")
    params = {}
    if source:
        sql += " WHERE s.source = :source"
        params["source"] = source
    out = []
    for m in reader.execute(sql + " ORDER BY s.id", params):
        m["current"] = m.pop("current_id") is not None
        m["skip_reasons"] = json.loads(m["skip_reasons"] or "{}")
        m["provenance"] = json.loads(m["provenance"] or "{}")
        out.append(m)
    return out


PLAN_COLUMNS = ("pk", "gpu_id", "gpu_count", "gpu_exclusive", "intra_node", "inter_node_kind", "inter_node_gbps",
                "usd_per_node_hour", "price_per", "term_months", "billing_granularity_s", "spot", "provider", "vcpus",
                "extras", "covers", "source", "sku", "region", "nvme_gib", "form", "nvme_write_gbs")


def query_offer_columns(reader, f: OfferFilter) -> dict[str, list]:
    """The current offers matching the filter as columns (no per-row dicts, no JSON of notes): for planning."""
    where, params = _where(f)
    rows = reader.execute(f"SELECT {', '.join(PLAN_COLUMNS)} FROM offers WHERE {where} ORDER BY pk", params)
    return {c: [r[c] for r in rows] for c in PLAN_COLUMNS}


def fetch_offer(reader, pk: int) -> dict:
    """One stored offer, as `query_offers` returns it."""
    return row_to_dict(reader.execute("SELECT * FROM offers WHERE pk = :pk", {"pk": pk})[0])
