"""Write snapshots (SQLAlchemy Core).

An import is one transaction: the snapshot row, its offers, its raw responses and the `current`
pointer commit together or not at all, so a crash or a failed check leaves the last good snapshot
current.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from sqlalchemy import Engine, select

from gpuquote.store import integrity, schema

if TYPE_CHECKING:
    from gpuquote.offers import Offer

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
    skip_examples: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"source": self.source, "snapshot_id": self.snapshot_id, "status": self.status,
                "imported": self.imported, "repaired": self.repaired, "skipped": self.skipped,
                "skip_reasons": self.skip_reasons, "reasons": self.reasons, "skip_examples": self.skip_examples}


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def import_offers(engine: Engine, source: str, offers: list[Offer], *, repaired: int = 0, skipped: int = 0,
                  skip_reasons: dict[str, int] | None = None, provenance: dict | None = None,
                  raw: list[tuple[str, str, bytes]] | None = None, check: bool = True,
                  fetched_at: datetime | None = None, checks: integrity.Checks | None = None,
                  skip_examples: dict[str, str] | None = None) -> ImportResult:
    """Store one snapshot of `source`; it becomes current only if it passes the integrity checks."""
    from gpuquote.store.rows import offer_to_row

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
            c.execute(schema.offers.update().where(schema.offers.c.snapshot_id.in_(
                select(schema.current.c.snapshot_id).where(schema.current.c.source == source))).values(is_current=0))
            c.execute(schema.offers.update().where(schema.offers.c.snapshot_id == sid).values(is_current=1))
            upd = c.execute(schema.current.update().where(schema.current.c.source == source).values(snapshot_id=sid))
            if upd.rowcount == 0:
                c.execute(schema.current.insert().values(source=source, snapshot_id=sid))
            shadow_duplicates(c)
    _refresh_statistics(engine)
    return ImportResult(source, sid, status, len(offers), repaired, skipped, skip_reasons, reasons,
                        dict(skip_examples or {}))


#: is_current values: 0 history, 1 current and shown, 2 current in its source's snapshot but shadowed by a
#: fresher row of another source for the same offer (provider, region, sku, spot): kept, never listed.
SHADOWED = 2
_SHADOW_SQL = (
    "UPDATE offers SET is_current = 2 WHERE is_current = 1 AND EXISTS (SELECT 1 FROM offers o2 "
    "WHERE o2.is_current IN (1, 2) AND o2.provider = offers.provider AND o2.region = offers.region "
    "AND o2.sku = offers.sku AND o2.spot = offers.spot AND o2.source <> offers.source "
    "AND (o2.fetched_at > offers.fetched_at OR (o2.fetched_at = offers.fetched_at AND o2.source > offers.source)))"
)


def shadow_duplicates(c) -> None:
    """One current row per offer: when two sources price the same (provider, region, sku, spot), the
    freshest is shown (ties: the later source name), the others stay current in their snapshots (is_current 2).

    Recomputed over all current rows after each publish, so that a source going stale or being replaced
    brings the other back.
    """
    from sqlalchemy import text

    c.execute(text("UPDATE offers SET is_current = 1 WHERE is_current = 2"))
    c.execute(text(_SHADOW_SQL))


def _refresh_statistics(engine: Engine) -> None:
    """Planner statistics, so that SQLite picks the gpu/provider indexes on large stores."""
    from sqlalchemy import text

    try:
        with engine.begin() as c:
            c.execute(text("ANALYZE"))
    except Exception:  # statistics are an optimisation; an import never fails for them
        pass


def raw_responses(engine: Engine, snapshot_id: int) -> list[tuple[str, str | None, bytes]]:
    r = schema.raw_responses.c
    with engine.connect() as c:
        return [(row.name, row.content_type, gzip.decompress(row.gzip))
                for row in c.execute(select(r.name, r.content_type, r.gzip).where(r.snapshot_id == snapshot_id))]
