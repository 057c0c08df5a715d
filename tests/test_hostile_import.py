"""Imports that explain themselves: refused snapshots, one current row per offer, fetch time from the data."""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

from conftest import FIXTURES, ROOT

AZURE = FIXTURES / "azure"


def _azure_copy(dest: Path, edit) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    for f in sorted(AZURE.glob("*.json")):
        doc = json.loads(f.read_text(encoding="utf-8"))
        for it in doc["Items"]:
            edit(it)
        (dest / f.name).write_text(json.dumps(doc), encoding="utf-8")
    return dest


def _snapshots(cli) -> list[dict]:
    return json.loads(cli("snapshots", "--json").stdout)["snapshots"]


def test_all_negative_prices_refused_with_the_reason_and_an_example_row(cli, tmp_path):
    r = cli("import", "azure", str(AZURE), "--fetched-at", "2026-11-01")
    assert r.returncode == 0, r.stderr
    good = [s for s in _snapshots(cli) if s["source"] == "azure" and s["current"]]
    assert len(good) == 1

    def negative(it):
        it["retailPrice"] = -5

    r = cli("import", "azure", str(_azure_copy(tmp_path / "neg", negative)), "--fetched-at", "2026-11-02")
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert "last good one stays current" in lines[0]
    assert any("rows: negative retailPrice, e.g. retailPrice -5 (Standard_NC24ads_A100_v4, eastus)" in ln
               for ln in lines), r.stderr
    assert len(lines) <= 7 and "--verbose" in lines[-1]
    snaps = sorted((s for s in _snapshots(cli) if s["source"] == "azure"), key=lambda s: s["id"])
    assert [s["status"] for s in snaps] == ["good", "refused"]
    assert snaps[0]["current"] and snaps[0]["id"] == good[0]["id"]
    r = cli("import", "azure", str(tmp_path / "neg"), "--verbose")
    assert len(r.stderr.strip().splitlines()) > len(lines) - 1 and "--verbose" not in r.stderr.splitlines()[-1]


def test_after_a_fresh_import_each_azure_offer_is_listed_once_from_the_fresh_source(cli):
    def rows():
        r = cli("offers", "--provider", "azure", "--json")
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)["offers"]

    before = rows()  # the embedded catalog (SkyPilot's Azure rows)
    r = cli("import", "azure", str(AZURE), "--fetched-at", datetime.now(UTC).date().isoformat())
    assert r.returncode == 0, r.stderr
    after = rows()
    keys = Counter((o["region"], o["sku"], o["spot"]) for o in after)
    assert keys and max(keys.values()) == 1
    live = [o for o in after if o["source"] == "azure"]
    assert live and all(o["freshness"] == "fresh" for o in live)
    shadowed = {(o["region"], o["sku"], o["spot"]) for o in live}
    assert len(after) == len(before)  # the live rows replace, they do not add
    assert shadowed & {(o["region"], o["sku"], o["spot"]) for o in before}
    # the catalog's row stays in its snapshot (history), only hidden from the current listing
    r = cli("history", "--gpu", "a100-80gb", "--provider", "azure", "--json")
    assert r.returncode == 0


def test_fetch_time_comes_from_the_data_never_the_mtime(cli, tmp_path):
    from gpuquote.service.refresh import import_source, snapshots
    from gpuquote.store import OfferFilter, open_reader, query_offers

    def fetched(source="azure"):
        rows, _ = query_offers(open_reader(), OfferFilter(providers=["azure"], sources=[source]))
        return {o["fetched_at"][:10] for o in rows}

    pages = _azure_copy(tmp_path / "dated", lambda it: None)
    (pages / "page-0001.json.headers").write_text("HTTP/2 200\r\ndate: Mon, 02 Nov 2026 08:00:00 GMT\r\n")
    res = import_source("azure", pages, fetched_at=datetime(2026, 1, 1, tzinfo=UTC))
    assert res["status"] == "good" and fetched() == {"2026-11-02"}  # the server's Date header wins

    undated = _azure_copy(tmp_path / "undated", lambda it: None)
    res = import_source("azure", undated)
    snap = max((x for x in snapshots("azure")["snapshots"] if x["source"] == "azure"), key=lambda x: x["id"])
    assert snap["fetched_at"].startswith("1970-01-01")
    assert fetched() == set()  # an undated copy is older than the catalog's rows: they stay the listed ones
    from gpuquote.cli.offers_cmd import _day
    from gpuquote.store.rows import freshness

    assert _day(snap["fetched_at"]) == "date unknown" and freshness(snap["fetched_at"]) == "stale"

    import_source("azure", undated, fetched_at=datetime(2026, 11, 20, tzinfo=UTC))
    assert fetched() == {"2026-11-20"}


def test_plan_with_bad_quotes_exits_2_one_line_each_and_ranks_the_good(cli, tmp_path):
    good = (ROOT / "examples" / "quotes" / "a100-quotes.yaml").read_text(encoding="utf-8")
    bad = good.replace("quotes:\n", "quotes:\n  - id: typo-per\n    gpu: A100 80GB SXM4\n    gpu_count: 8\n"
                                    "    price: {amount: 10, currency: USD, per: fortnight}\n"
                                    "  - id: no-such-gpu\n    gpu: Z9000\n    gpu_count: 8\n"
                                    "    price: {amount: 10, currency: USD, per: hour}\n", 1)
    f = tmp_path / "q.yaml"
    f.write_text(bad, encoding="utf-8")
    r = cli("plan", str(ROOT / "examples" / "jobs" / "qlora-7b.yaml"), "--quotes", str(f), "--no-catalog", "--json")
    assert r.returncode == 2
    errs = r.stderr.strip().splitlines()
    assert len(errs) == 2 and "typo-per" in errs[0] and "price.per" in errs[0] and "no-such-gpu" in errs[1]
    data = json.loads(r.stdout)
    # the example's two catalog-contradicting quotes are left out too, but they are findings, not input errors
    bad_input = {e["id"] for e in data["quote_errors"] if not e.get("contradicts")}
    assert data["rows"] and bad_input == {"typo-per", "no-such-gpu"}
