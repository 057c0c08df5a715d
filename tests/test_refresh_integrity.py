"""Bad responses never become the current snapshot; history, re-parse from the archive, freshness."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from gpuquote.errors import BadInput
from gpuquote.service.refresh import history, import_source, refresh, reparse, snapshots
from gpuquote.store import OfferFilter, integrity, open_reader, query_offers, write_engine

FIX = Path(__file__).parent / "fixtures"
DAY1 = datetime(2025, 3, 1, 12, tzinfo=UTC)


@pytest.fixture(autouse=True)
def empty_store(isolated_home):
    """These tests start from an empty store, not one seeded from the embedded snapshot."""
    write_engine(seed=False).dispose()


def _azure_copy(tmp_path: Path, edit) -> Path:
    """The recorded Azure pages with `edit(item)` applied to every item."""
    out = tmp_path / "azure-edited"
    out.mkdir(exist_ok=True)
    for f in sorted((FIX / "azure").glob("*.json")):
        doc = json.loads(f.read_text())
        for it in doc["Items"]:
            edit(it)
        (out / f.name).write_text(json.dumps(doc))
    return out


def _current_azure():
    rows, _ = query_offers(open_reader(), OfferFilter(providers=["azure"], limit=None))
    return {r["offer_id"]: r for r in rows}


def _good_first(tmp_path):
    r = import_source("azure", FIX / "azure", fetched_at=DAY1)
    assert r["status"] == "good"
    return r


def test_renamed_price_field_is_refused_and_last_good_stays_current(tmp_path):
    good = _good_first(tmp_path)

    def rename(it):
        it["retail_price"] = it.pop("retailPrice")

    r = import_source("azure", _azure_copy(tmp_path, rename))
    assert r["status"] == "refused" and r["reasons"] == ["zero offers"]
    assert r["skip_reasons"]["missing retailPrice"] == 10
    snaps = {s["id"]: s for s in snapshots("azure")["snapshots"]}
    assert snaps[good["snapshot_id"]]["current"] and not snaps[r["snapshot_id"]]["current"]
    assert snaps[r["snapshot_id"]]["status"] == "refused"
    assert _current_azure()["azure:eastus:Standard_ND96amsr_A100_v4"]["usd_per_gpu_hour"] == pytest.approx(32.77 / 8)


def test_renamed_items_wrapper_is_refused(tmp_path):
    _good_first(tmp_path)
    d = tmp_path / "wrapped"
    d.mkdir()
    doc = json.loads((FIX / "azure" / "page-0001.json").read_text())
    doc["PriceItems"] = doc.pop("Items")
    (d / "p.json").write_text(json.dumps(doc))
    r = import_source("azure", d)
    assert r["status"] == "refused" and "no price items in the response (expected 'Items')" in r["skip_reasons"]


def test_missing_and_negative_prices_are_skipped_with_reasons(tmp_path):
    def edit(it):
        if it["armSkuName"] == "Standard_ND96amsr_A100_v4" and "Spot" not in it["meterName"]:
            it["retailPrice"] = -32.77
        if it["armSkuName"] == "Standard_NC96ads_A100_v4":
            del it["retailPrice"]

    r = import_source("azure", _azure_copy(tmp_path, edit))
    assert r["status"] == "good"
    assert r["skip_reasons"]["negative retailPrice"] == 1  # the reservation row is skipped before its price
    assert r["skip_reasons"]["missing retailPrice"] == 1
    cur = _current_azure()
    assert "azure:eastus:Standard_ND96amsr_A100_v4" not in cur and "azure:eastus:Standard_NC96ads_A100_v4" not in cur
    assert all(o["usd_per_gpu_hour"] > 0 for o in cur.values())


def test_tenfold_price_jump_is_refused(tmp_path):
    _good_first(tmp_path)

    def jump(it):
        it["retailPrice"] = it["retailPrice"] * 10

    r = import_source("azure", _azure_copy(tmp_path, jump))
    assert r["status"] == "refused"
    assert any("median $/GPU-h moved" in x for x in r["reasons"])
    assert _current_azure()["azure:eastus:Standard_NC24ads_A100_v4"]["usd_per_gpu_hour"] == pytest.approx(3.673)


def test_single_offer_jump_is_refused_but_force_publishes(tmp_path):
    _good_first(tmp_path)

    def one(it):
        if it["armSkuName"] == "Standard_NC40ads_H100_v5":
            it["retailPrice"] = 69.8

    r = import_source("azure", _azure_copy(tmp_path, one))
    assert r["status"] == "refused"
    assert "1 offers moved more than 5x: azure:southcentralus:Standard_NC40ads_H100_v5 6.980 -> 69.800" in r["reasons"]
    forced = import_source("azure", _azure_copy(tmp_path, one), force=True)
    assert forced["status"] == "good"
    assert _current_azure()["azure:southcentralus:Standard_NC40ads_H100_v5"]["usd_per_gpu_hour"] == 69.8


def test_integrity_rules_unit():
    def row(oid, gpu, p, spot=False):
        return {"offer_id": oid, "gpu_id": gpu, "usd_per_gpu_hour": p, "price_amount": p, "spot": spot}

    old = [row(f"o{i}", "h100", 2.0 + i / 100) for i in range(30)] + [row(f"a{i}", "a100", 1.0) for i in range(3)]
    assert integrity.check(old, old) == []
    assert integrity.check([], old) == ["zero offers"]
    vanished = integrity.check(old[:30], old)
    assert vanished == ["GPU a100 vanished (3 offers before, 0 now)"]
    dropped = integrity.check(old[:10] + old[30:], old)
    assert dropped[0] == "offer count fell from 33 to 13 (below 0.5x)"
    cents = integrity.check([row("x", "h100", 299.0)], None)
    assert cents[0].startswith("1 offers above 150 $/GPU-h")
    # spot prices may swing: no refusal for a spot-only move
    assert integrity.check(old + [row("s", "h100", 50.0, True)], old + [row("s", "h100", 1.0, True)]) == []
    # the marketplace tolerance lets a small GPU vanish
    assert integrity.check(old[:30], old, integrity.MARKETPLACE) == []


def test_reparse_from_archive_makes_a_new_snapshot_with_the_same_offers(tmp_path):
    first = _good_first(tmp_path)
    again = reparse(first["snapshot_id"])
    assert again["status"] == "good" and again["snapshot_id"] != first["snapshot_id"]
    assert again["imported"] == first["imported"] and again["reparsed_from"] == first["snapshot_id"]
    snap = {s["id"]: s for s in snapshots()["snapshots"]}[again["snapshot_id"]]
    assert snap["fetched_at"].startswith("2025-03-01") and snap["reparsable"]  # keeps the fetch time
    res = refresh(["azure"], from_archive=True)
    assert [r["status"] for r in res] == ["good"]
    with pytest.raises(BadInput, match="no snapshot 999"):
        reparse(999)


def test_reparse_cli_and_snapshots_cli(tmp_path, cli):
    r = cli("import", "vast", str(FIX / "vast" / "bundles.json"), "--json")
    sid = json.loads(r.stdout)["snapshot_id"]
    r = cli("reparse", str(sid), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["reparsed_from"] == sid
    r = cli("snapshots", "--json")
    data = json.loads(r.stdout)["snapshots"]
    assert [s["id"] for s in data] == [sid + 1, sid] and data[0]["current"] and not data[1]["current"]
    r = cli("refresh", "--from-archive", "--source", "vast", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["results"][0]["status"] == "good"
    r = cli("sources", "--json")
    vast = next(s for s in json.loads(r.stdout)["sources"] if s["name"] == "vast")
    assert vast["current"][0]["offers"] == 16  # the RTX 3090 ask (on-demand + bid) now resolves


def test_history_min_median_max_per_day_and_provider(tmp_path, cli):
    import_source("azure", FIX / "azure", fetched_at=DAY1)

    def cheaper(it):
        it["retailPrice"] = round(it["retailPrice"] * 0.8, 4)

    import_source("azure", _azure_copy(tmp_path, cheaper), fetched_at=DAY1 + timedelta(days=1))
    import_source("aws", FIX / "aws", fetched_at=DAY1 + timedelta(days=1))
    h = history("a100-80gb")
    assert set(h["gpu_ids"]) >= {"a100-80gb", "a100-80gb-sxm4", "a100-80gb-pcie"} and "a100" not in h["gpu_ids"]
    rows = {(r["day"], r["provider"]): r for r in h["series"]}
    assert set(rows) == {("2025-03-01", "azure"), ("2025-03-02", "azure"), ("2025-03-02", "aws")}
    d1 = rows[("2025-03-01", "azure")]  # NC24ads 3.673, NC96ads 14.692/4, ND96amsr 32.77/8 (on-demand only)
    assert (d1["min_usd_per_gpu_hour"], d1["max_usd_per_gpu_hour"]) == (3.673, pytest.approx(32.77 / 8))
    assert d1["median_usd_per_gpu_hour"] == 3.673 and d1["offers"] == 3
    assert rows[("2025-03-02", "azure")]["min_usd_per_gpu_hour"] == pytest.approx(3.673 * 0.8, rel=1e-3)
    assert [r["provider"] for r in history("a100-80gb", "aws")["series"]] == ["aws"]
    assert {r["day"] for r in history("a100-80gb", since="2025-03-02")["series"]} == {"2025-03-02"}
    spot = history("a100-80gb-pcie", spot=True)["series"]
    assert spot and all(r["provider"] == "azure" for r in spot)
    r = cli("history", "--gpu", "A100 80GB", "--provider", "azure", "--json")
    assert r.returncode == 0 and len(json.loads(r.stdout)["series"]) == 2
    r = cli("history", "--gpu", "a100-80gb", "--since", "yesterday")
    assert r.returncode == 2 and "--since" in r.stderr and "YYYY-MM-DD" in r.stderr
    r = cli("history", "--gpu", "Z9000")
    assert r.returncode == 2 and "unknown GPU" in r.stderr


def test_offers_show_fetched_at_and_freshness_band(tmp_path):
    import_source("azure", FIX / "azure", fetched_at=datetime.now(UTC) - timedelta(days=1))
    import_source("vast", FIX / "vast", fetched_at=datetime.now(UTC) - timedelta(days=5))
    import_source("lambda", FIX / "lambda", fetched_at=datetime.now(UTC) - timedelta(days=30))
    rows, _ = query_offers(open_reader(), OfferFilter(limit=None))
    bands = {r["provider"]: r["freshness"] for r in rows}
    assert bands == {"azure": "fresh", "vast": "aging", "lambda": "stale"}
    assert all(r["fetched_at"] for r in rows)


def test_single_skypilot_file_keeps_its_cloud(tmp_path):
    f = tmp_path / "aws" / "vms.csv"
    f.parent.mkdir()
    shutil.copy(FIX / "skypilot" / "aws" / "vms.csv", f)
    r = import_source("skypilot", f)
    assert r["source"] == "skypilot:aws" and r["status"] == "good"
