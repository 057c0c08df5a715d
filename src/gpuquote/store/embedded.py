"""Bring a user's store up to the catalog this gpuquote ships, once per new embedded snapshot.

Why: a store is seeded by copying the embedded snapshot on its first write. After an upgrade that ships a newer
snapshot (new providers, newer prices), the store kept the old copy's rows until the user refreshed with network,
so an offline user never saw what the new version knows, nor its corrections. Now, whenever the embedded snapshot
differs from the one the store last caught up with (meta key `embedded_merged`), every embedded source whose
current snapshot is newer than the store's current one, or of the same date but other rows (the same upstream file
read by an older parser), or that the store lacks, is imported into the store as a new snapshot of that source.
What the user imported or refreshed more recently stays current, the older rows become price history, and a
quote is never touched (quotes are never in the embedded snapshot).

Best effort: a read-only store, or another process catching up at the same moment, leaves the store as it is,
and the next run tries again.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from datetime import UTC, datetime
from functools import lru_cache

from sqlalchemy import Engine, select, update

from gpuquote.config import EMBEDDED_SNAPSHOT
from gpuquote.store import schema

META_KEY = "embedded_merged"


@lru_cache(maxsize=1)
def embedded_identity() -> str | None:
    """A short fingerprint of the embedded snapshot's current sources (None when the package has none)."""
    if not EMBEDDED_SNAPSHOT.exists():
        return None
    try:
        con = sqlite3.connect(f"file:{EMBEDDED_SNAPSHOT}?mode=ro&immutable=1", uri=True)
        try:
            rows = con.execute("SELECT s.source, s.fetched_at, s.offers_count FROM current c "
                               "JOIN snapshots s ON s.id = c.snapshot_id ORDER BY s.source").fetchall()
        finally:
            con.close()
    except sqlite3.Error:
        return None
    return hashlib.sha1(json.dumps(rows).encode()).hexdigest()[:16]


def _digest(rows) -> str:
    """The content of a snapshot's offers, whatever their keys and order (the same upstream file parsed by an
    older gpuquote has the same date but other rows: the memory of some catalog rows was misread before)."""
    skip = {"pk", "snapshot_id", "is_current"}
    items = sorted(json.dumps({k: v for k, v in r.items() if k not in skip}, sort_keys=True, default=str)
                   for r in rows)
    return hashlib.sha1("\n".join(items).encode()).hexdigest()


def needs_catch_up(merged: str | None) -> bool:
    """merged: the store's meta value ("unseeded": created without the embedded catalog, left so)."""
    ident = embedded_identity()
    return ident is not None and merged != ident and merged != "unseeded"


def catch_up(engine: Engine) -> list[str]:
    """Import the embedded sources newer than the store's (see the module docstring); returns their names."""
    from gpuquote.store.catalog import shadow_duplicates
    from gpuquote.store.db import _embedded

    ident = embedded_identity()
    if ident is None:
        return []
    S, C, OF, M = schema.snapshots, schema.current, schema.offers, schema.meta
    src = _embedded()
    with src.connect() as e:
        theirs = e.execute(select(S).join(C, C.c.snapshot_id == S.c.id)).all()
        offers_of = {s.id: [dict(r._mapping) for r in e.execute(select(OF).where(OF.c.snapshot_id == s.id))]
                     for s in theirs}
    imported: list[str] = []
    with engine.begin() as c:
        done = c.execute(select(M.c.value).where(M.c.key == META_KEY)).first()
        if done is not None and done[0] == ident:
            return []  # another process caught up first
        mine = {r.source: (r.snapshot_id, r.fetched_at) for r in
                c.execute(select(C.c.source, C.c.snapshot_id, S.c.fetched_at).join(S, S.c.id == C.c.snapshot_id))}
        now = datetime.now(UTC).isoformat(timespec="seconds")
        for s in theirs:
            have = mine.get(s.source)
            if have is not None and (have[1] > s.fetched_at or (have[1] == s.fetched_at and _digest(
                    dict(r._mapping) for r in c.execute(select(OF).where(OF.c.snapshot_id == have[0])))
                    == _digest(offers_of[s.id]))):
                continue  # the store's is newer, or the same data as parsed by this gpuquote
            prov = {**json.loads(s.provenance or "{}"), "copied_from": "the snapshot embedded in gpuquote",
                    "embedded_imported_at": s.imported_at}
            sid = int(c.execute(S.insert().values(
                source=s.source, status="good", fetched_at=s.fetched_at, imported_at=now, offers_count=s.offers_count,
                repaired=s.repaired, skipped=s.skipped, skip_reasons=s.skip_reasons,
                provenance=json.dumps(prov, ensure_ascii=False))).inserted_primary_key[0])
            rows = [{**{k: v for k, v in r.items() if k != "pk"}, "snapshot_id": sid, "is_current": 1}
                    for r in offers_of[s.id]]
            if have is not None:
                c.execute(update(OF).where(OF.c.snapshot_id == have[0]).values(is_current=0))
                c.execute(update(C).where(C.c.source == s.source).values(snapshot_id=sid))
            else:
                c.execute(C.insert().values(source=s.source, snapshot_id=sid))
            for i in range(0, len(rows), 5000):
                c.execute(OF.insert(), rows[i:i + 5000])
            imported.append(s.source)
        if imported:
            shadow_duplicates(c)
        if done is None:
            c.execute(M.insert().values(key=META_KEY, value=ident))
        else:
            c.execute(update(M).where(M.c.key == META_KEY).values(value=ident))
    return imported


__all__ = ["META_KEY", "catch_up", "embedded_identity", "needs_catch_up"]
