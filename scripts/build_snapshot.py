"""Build the embedded snapshot shipped inside the package (src/gpuquote/data/snapshot.sqlite).

It is a gpuquote store (same schema as the user's) made by importing the SkyPilot catalog copies in
../shared/data/skypilot-catalog/ through the same parser as `gpuquote import skypilot`, one snapshot
per cloud. Where a cloud exists in both copies, the dated anycloud mirror wins. The China-cloud catalogs
(../shared/data/china/: alicloud, tencentcloud) follow, priced in CNY restored from the files' USD / 0.138.
Provenance (source repository, commit, file, sha256, date and how the date was set) is stored with every
snapshot; a copy whose date is unknown is dated conservatively so that it shows as stale.

Run: python scripts/build_snapshot.py [--shared ../shared]
"""

from __future__ import annotations

import argparse
import os
import sys
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

OUT = ROOT / "src" / "gpuquote" / "data" / "snapshot.sqlite"

# Where each copy came from (shared/data/skypilot-catalog/SOURCE.md).
COPIES = {
    "anycloud-mirror-2026-05-20": {
        "repository": "anycloud-sh/catalog (third-party daily mirror in SkyPilot v8 format)",
        "commit": "62ff0a987e0c257a89235415d2877812fb1aaf29",
        "date": "2026-05-20T04:50:00+00:00",
        "date_is": "upstream commit date",
    },
    "v8": {
        "repository": "skypilot-org/skypilot-catalog, catalogs/v8/<cloud>/vms.csv",
        "commit": "one stored version per file (see shared/data/skypilot-catalog/SOURCE.md)",
        # Upstream commit dates are not available. We date these files like the mirror copied in the same
        # period, so that they show as stale rather than fresh: an unknown age is never passed off as new.
        "date": "2026-05-20T00:00:00+00:00",
        "date_is": "unknown upstream date; dated like the mirror of 2026-05-20 (conservative: shows as stale)",
    },
}
PREFER = ["anycloud-mirror-2026-05-20", "v8"]
# The China-cloud catalogs (shared/data/china/SOURCE.md): sugarlxn/skypilot-catalog, one stored version per file.
# Prices are CNY x 0.138 in the files; the parser restores CNY (USD / 0.138) as the offers' native price.
CHINA = {
    "alicloud": {
        "repository": "sugarlxn/skypilot-catalog, catalogs/v8/alicloud/vms.csv",
        "commit": "003c56a723d369190b11308e630e4cfd33e25c86",
        "sha256": "c26f6bbc7706e2df32da35229325b7e39a2cfa2cad00e77b7d76706617ca339b",
        # Date unknown (98 stored versions, no commit dates). Dated at the Tencent copy's lower bound so that
        # it shows as stale, never as fresh.
        "date": "2026-05-07T00:00:00+00:00",
        "date_is": "unknown upstream date; dated 2026-05-07 like the Tencent copy (conservative: shows as stale)",
    },
    "tencentcloud": {
        "repository": "sugarlxn/skypilot-catalog, catalogs/v8/tencentcloud/vms.csv",
        "commit": "319364519647e37c5ee585be5338b02b10f744be",
        "sha256": "711bffea645cf2715829585f63a6ecad83c48325c282f5b8dfa1502b92000053",
        "date": "2026-05-07T00:00:00+00:00",
        "date_is": "no earlier than 2026-05-07 (uv.lock at that commit pins a package uploaded 2026-05-07); "
                   "dated at that lower bound",
    },
}
# Clouds left out of the shipped snapshot, and why.
LEAVE_OUT = {"mithril": "prices are placeholders (1.0 / 8.0 per hour), see SOURCE.md"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default=str(ROOT.parent / "shared"))
    args = ap.parse_args()
    base = Path(args.shared) / "data" / "skypilot-catalog"

    from gpuquote.sources.skypilot import parse_path
    from gpuquote.store import import_offers, write_engine

    tmp = OUT.with_suffix(".building")
    tmp.unlink(missing_ok=True)
    os.environ["GPUQUOTE_DB"] = str(tmp)
    eng = write_engine(seed=False)
    done: set[str] = set()
    total = 0
    for copy in PREFER:
        meta = COPIES[copy]
        folder = base / copy
        copied = datetime.fromtimestamp((base / "SOURCE.md").stat().st_mtime, UTC).replace(microsecond=0)
        fetched = datetime.fromisoformat(meta["date"]) if meta["date"] else copied
        for res in parse_path(folder, fetched_at=fetched, label=copy,
                              provenance={"copy": copy, "repository": meta["repository"], "commit": meta["commit"],
                                          "fetched_at_is": meta["date_is"]}):
            cloud = res.provenance["cloud"]
            if cloud in done:
                print(f"  skip {copy}/{cloud}: already imported from a newer copy")
                continue
            done.add(cloud)
            if cloud in LEAVE_OUT or not res.offers:
                print(f"  leave out {copy}/{cloud}: {LEAVE_OUT.get(cloud, 'no GPU offer in the catalog')}")
                continue
            r = import_offers(eng, f"skypilot:{cloud}", res.offers, repaired=res.repaired, skipped=res.skipped,
                              skip_reasons=dict(res.skip_reasons),
                              provenance={**res.provenance, "corrections": dict(res.corrections)},
                              raw=None, check=False, fetched_at=fetched)
            total += r.imported
            print(f"  {copy}/{cloud}: {r.imported} imported, {r.repaired} repaired, {r.skipped} skipped")
    china = Path(args.shared) / "data" / "china"
    for cloud, meta in CHINA.items():
        fetched = datetime.fromisoformat(meta["date"])
        for res in parse_path(china / cloud / "vms.csv", fetched_at=fetched, label="china",
                              provenance={"copy": "china", "repository": meta["repository"],
                                          "commit": meta["commit"], "fetched_at_is": meta["date_is"],
                                          "price_currency": "CNY restored from USD / 0.138"}):
            if res.provenance["sha256"] != meta["sha256"]:
                raise SystemExit(f"china/{cloud}/vms.csv: sha256 differs from SOURCE.md")
            r = import_offers(eng, f"skypilot:{cloud}", res.offers, repaired=res.repaired, skipped=res.skipped,
                              skip_reasons=dict(res.skip_reasons),
                              provenance={**res.provenance, "corrections": dict(res.corrections)},
                              raw=None, check=False, fetched_at=fetched)
            total += r.imported
            print(f"  china/{cloud}: {r.imported} imported, {r.skipped} skipped "
                  f"({len(res.provenance.get('flagged', []))} flagged implausible)")
    eng.dispose()
    import sqlite3

    con = sqlite3.connect(tmp)
    con.execute("ANALYZE")
    con.execute("VACUUM")
    con.close()
    tmp.replace(OUT)
    print(f"wrote {OUT} ({total} offers, {OUT.stat().st_size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
