"""`import skypilot PATH`: parse a downloaded SkyPilot catalog and store one snapshot per cloud."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from gpuquote.sources.skypilot import parse_path
from gpuquote.store import import_offers, write_engine


def import_skypilot(path: str | Path, fetched_at: datetime | None = None, check: bool = True) -> dict:
    """Each cloud's file is its own transaction; a failure leaves that cloud's last good snapshot current."""
    results = parse_path(Path(path), fetched_at=fetched_at,
                         provenance={"imported_from": str(path)})
    engine = write_engine()
    out = []
    for res in results:
        r = import_offers(engine, res.source, res.offers, repaired=res.repaired, skipped=res.skipped,
                          skip_reasons=dict(res.skip_reasons),
                          provenance={**res.provenance, "corrections": dict(res.corrections)},
                          raw=res.raw, check=check, fetched_at=res.fetched_at)
        d = r.to_dict()
        d["corrections"] = dict(res.corrections)
        out.append(d)
    return {"source": "skypilot", "path": str(path), "results": out}
