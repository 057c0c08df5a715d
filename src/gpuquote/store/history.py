"""Price history over every good snapshot, and snapshot lookups for re-parsing from the archive.

History reads all snapshots whose status is `good` (refused ones never count), not only the
current ones: offers are append-only, so yesterday's snapshot is yesterday's prices.
"""

from __future__ import annotations

import json
from statistics import median

from sqlalchemy import Engine, select

from gpuquote.store import schema


def snapshot(engine: Engine, snapshot_id: int) -> dict | None:
    """One snapshot row (with `current`), or None."""
    s = schema.snapshots.c
    with engine.connect() as c:
        row = c.execute(select(schema.snapshots).where(s.id == snapshot_id)).first()
        if row is None:
            return None
        cur = c.execute(select(schema.current.c.snapshot_id).where(schema.current.c.snapshot_id == snapshot_id)).first()
    m = dict(row._mapping)
    m["current"] = cur is not None
    m["skip_reasons"] = json.loads(m["skip_reasons"] or "{}")
    m["provenance"] = json.loads(m["provenance"] or "{}")
    return m


def latest_snapshot_ids(engine: Engine, sources: list[str] | None = None, with_raw: bool = True) -> dict[str, int]:
    """source -> id of its newest snapshot (any status) that has archived raw responses."""
    s = schema.snapshots.c
    q = select(s.source, s.id).order_by(s.id)
    if with_raw:
        q = q.where(s.id.in_(select(schema.raw_responses.c.snapshot_id)))
    out: dict[str, int] = {}
    with engine.connect() as c:
        for src, sid in c.execute(q):
            if sources is None or src in sources or src.split(":")[0] in sources:
                out[src] = sid
    return out


def current_snapshots(engine: Engine) -> dict[str, dict]:
    """source -> its current snapshot's row."""
    s = schema.snapshots.c
    q = select(schema.snapshots).join(schema.current, schema.current.c.snapshot_id == s.id)
    with engine.connect() as c:
        return {r.source: dict(r._mapping) for r in c.execute(q)}


def price_history(engine: Engine, gpu_ids: list[str], providers: list[str] | None = None,
                  since: str | None = None, spot: bool = False) -> list[dict]:
    """Min / median / max USD per GPU-hour per day (UTC, of fetched_at) and provider over good snapshots."""
    o, s = schema.offers.c, schema.snapshots.c
    q = (select(o.provider, o.fetched_at, o.usd_per_gpu_hour, o.snapshot_id, o.gpu_id, o.source)
         .join(schema.snapshots, s.id == o.snapshot_id)
         .where(s.status == "good", o.gpu_id.in_(gpu_ids), o.spot == spot, o.usd_per_gpu_hour.is_not(None)))
    if providers:
        q = q.where(o.provider.in_(providers))
    if since:
        q = q.where(o.fetched_at >= since)
    groups: dict[tuple[str, str], dict] = {}
    with engine.connect() as c:
        for prov, fetched, price, sid, gpu, src in c.execute(q):
            day = str(fetched)[:10]
            g = groups.setdefault((day, prov), {"prices": [], "snapshots": set(), "gpu_ids": set(), "sources": set()})
            g["prices"].append(float(price))
            g["snapshots"].add(sid)
            g["gpu_ids"].add(gpu)
            g["sources"].add(src)
    out = []
    for (day, prov), g in sorted(groups.items()):
        p = g["prices"]
        out.append({"day": day, "provider": prov, "min_usd_per_gpu_hour": round(min(p), 6),
                    "median_usd_per_gpu_hour": round(median(p), 6), "max_usd_per_gpu_hour": round(max(p), 6),
                    "offers": len(p), "snapshots": len(g["snapshots"]), "gpu_ids": sorted(g["gpu_ids"]),
                    "sources": sorted(g["sources"])})
    return out


def history_extent(engine: Engine, gpu_ids: list[str]) -> list[dict]:
    """What the store holds for these GPU ids over good snapshots, whatever the period, provider or spot:
    per spot flag, the first and last day, the days and the providers (an empty answer says why)."""
    o, s = schema.offers.c, schema.snapshots.c
    q = (select(o.spot, o.provider, o.fetched_at)
         .join(schema.snapshots, s.id == o.snapshot_id)
         .where(s.status == "good", o.gpu_id.in_(gpu_ids), o.usd_per_gpu_hour.is_not(None)))
    seen: dict[bool, dict] = {}
    with engine.connect() as c:
        for spot, prov, fetched in c.execute(q):
            g = seen.setdefault(bool(spot), {"days": set(), "providers": set()})
            g["days"].add(str(fetched)[:10])
            g["providers"].add(prov)
    return [{"spot": k, "first_day": min(v["days"]), "last_day": max(v["days"]), "days": len(v["days"]),
             "providers": sorted(v["providers"])} for k, v in sorted(seen.items())]


def snapshot_ids_with_raw(engine: Engine) -> set[int]:
    with engine.connect() as c:
        return {int(r[0]) for r in c.execute(select(schema.raw_responses.c.snapshot_id).distinct())}
