"""Write snapshots and query the current catalog.

An import is one transaction: the snapshot row, its offers, its raw responses and the `current`
pointer commit together or not at all, so a crash or a failed check leaves the last good snapshot
current.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime

from sqlalchemy import Engine, and_, func, or_, select

from gpuquote.offers import Offer
from gpuquote.store import integrity, schema
from gpuquote.store.rows import offer_to_row, row_to_dict

SORT_COLUMNS = {
    "price": "usd_per_gpu_hour", "usd_per_gpu_hour": "usd_per_gpu_hour", "node_price": "usd_per_node_hour",
    "usd_per_node_hour": "usd_per_node_hour", "provider": "provider", "region": "region", "gpu": "gpu_id",
    "gpu_id": "gpu_id", "count": "gpu_count", "gpu_count": "gpu_count", "fetched": "fetched_at",
    "fetched_at": "fetched_at", "memory": "gpu_memory_gib", "vcpus": "vcpus", "ram": "ram_gib", "sku": "sku",
}


@dataclass
class ImportResult:
    source: str
    snapshot_id: int | None
    status: str  # good | refused
    imported: int
    repaired: int = 0
    skipped: int = 0
    skip_reasons: dict[str, int] = field(default_factory=dict)
    reasons: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"source": self.source, "snapshot_id": self.snapshot_id, "status": self.status,
                "imported": self.imported, "repaired": self.repaired, "skipped": self.skipped,
                "skip_reasons": self.skip_reasons, "reasons": self.reasons}


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def import_offers(engine: Engine, source: str, offers: list[Offer], *, repaired: int = 0, skipped: int = 0,
                  skip_reasons: dict[str, int] | None = None, provenance: dict | None = None,
                  raw: list[tuple[str, str, bytes]] | None = None, check: bool = True,
                  fetched_at: datetime | None = None, checks: integrity.Checks | None = None) -> ImportResult:
    """Store one snapshot of `source`; it becomes current only if it passes the integrity checks."""
    skip_reasons = dict(skip_reasons or {})
    fetched = fetched_at or (max(o.fetched_at for o in offers) if offers else datetime.now(UTC))
    with engine.begin() as c:
        snap = c.execute(schema.snapshots.insert().values(
            source=source, status="importing", fetched_at=fetched.isoformat(), imported_at=_now(),
            offers_count=len(offers), repaired=repaired, skipped=skipped,
            skip_reasons=json.dumps(skip_reasons), provenance=json.dumps(provenance or {}, ensure_ascii=False),
        ))
        sid = int(snap.inserted_primary_key[0])
        rows = [offer_to_row(o, sid) for o in offers]
        reasons: list[str] = []
        if check:
            cur = c.execute(select(schema.current.c.snapshot_id).where(schema.current.c.source == source)).first()
            old = []
            if cur:
                old = [dict(r._mapping) for r in c.execute(
                    select(schema.offers.c.gpu_id, schema.offers.c.usd_per_gpu_hour, schema.offers.c.spot,
                           schema.offers.c.offer_id)
                    .where(schema.offers.c.snapshot_id == cur[0]))]
            reasons = integrity.check(rows, old, checks or integrity.DEFAULT)
        for i in range(0, len(rows), 5000):
            c.execute(schema.offers.insert(), rows[i:i + 5000])
        for name, ctype, blob in raw or []:
            c.execute(schema.raw_responses.insert().values(snapshot_id=sid, name=name, content_type=ctype,
                                                           gzip=gzip.compress(blob)))
        status = "refused" if reasons else "good"
        c.execute(schema.snapshots.update().where(schema.snapshots.c.id == sid)
                  .values(status=status, reason="; ".join(reasons) or None))
        if status == "good":
            upd = c.execute(schema.current.update().where(schema.current.c.source == source).values(snapshot_id=sid))
            if upd.rowcount == 0:
                c.execute(schema.current.insert().values(source=source, snapshot_id=sid))
    return ImportResult(source, sid, status, len(offers), repaired, skipped, skip_reasons, reasons)


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
    sort: str = "price"
    descending: bool = False
    limit: int | None = None


def _where(f: OfferFilter):
    o = schema.offers.c
    conds = [o.snapshot_id.in_(select(schema.current.c.snapshot_id))]
    if f.gpu_ids is not None:
        conds.append(o.gpu_id.in_(f.gpu_ids))
    if f.min_gpus is not None:
        conds.append(o.gpu_count >= f.min_gpus)
    if f.interconnect:
        conds.append(o.intra_node == f.interconnect)
    if f.region:
        r = f.region.lower()
        conds.append(or_(func.lower(o.region) == r, func.lower(o.region).like(r + "%")))
    if f.spot is not None:
        conds.append(o.spot == f.spot)
    if f.providers:
        conds.append(o.provider.in_(f.providers))
    if f.max_price_usd is not None:
        conds.append(and_(o.usd_per_gpu_hour.is_not(None), o.usd_per_gpu_hour <= f.max_price_usd))
    if f.sources:
        conds.append(o.source.in_(f.sources))
    return and_(*conds)


def query_offers(engine: Engine, f: OfferFilter) -> tuple[list[dict], int]:
    """Current offers matching the filter, sorted; returns (rows, total matches before the limit)."""
    o = schema.offers.c
    col = getattr(o, SORT_COLUMNS[f.sort])
    order = [col.is_(None), col.desc() if f.descending else col.asc(), o.provider, o.region, o.offer_id]
    where = _where(f)
    q = select(schema.offers).where(where).order_by(*order)
    if f.limit:
        q = q.limit(f.limit)
    now = datetime.now(UTC)
    with engine.connect() as c:
        rows = [row_to_dict(r, now) for r in c.execute(q)]
        total = len(rows) if not f.limit or len(rows) < f.limit else c.execute(
            select(func.count()).select_from(schema.offers).where(where)).scalar_one()
    return rows, int(total)


def list_snapshots(engine: Engine, source: str | None = None) -> list[dict]:
    s = schema.snapshots.c
    q = select(schema.snapshots, schema.current.c.snapshot_id.label("current_id")).outerjoin(
        schema.current, schema.current.c.snapshot_id == s.id).order_by(s.id)
    if source:
        q = q.where(s.source == source)
    out = []
    with engine.connect() as c:
        for r in c.execute(q):
            m = dict(r._mapping)
            m["current"] = m.pop("current_id") is not None
            m["skip_reasons"] = json.loads(m["skip_reasons"] or "{}")
            m["provenance"] = json.loads(m["provenance"] or "{}")
            out.append(m)
    return out


def raw_responses(engine: Engine, snapshot_id: int) -> list[tuple[str, str | None, bytes]]:
    r = schema.raw_responses.c
    with engine.connect() as c:
        return [(row.name, row.content_type, gzip.decompress(row.gzip))
                for row in c.execute(select(r.name, r.content_type, r.gzip).where(r.snapshot_id == snapshot_id))]
