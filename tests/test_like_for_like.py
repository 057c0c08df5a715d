"""Purchases carry their form in the store, contradictory quotes are never ranked nor imported, like for like."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
ROOT = Path(__file__).resolve().parents[1]

HGX = {  # a complete 8x A100 80GB SXM4 HGX node, rented by the hour
    "vendor": "V", "gpu": "A100 80GB SXM4", "gpu_count": 8, "form": "node_rental", "exclusive": True,
    "intra_node": "nvswitch", "cpu": {"model": "2x Xeon Platinum 8358", "cores": 64}, "ram_gb": 1024,
    "nvme": {"capacity_tb": 7.68}, "network": {"kind": "ib", "gbps_per_node": 1600},
    "price": {"amount": 14.0, "currency": "USD", "per": "hour"}, "covers": ["power", "hosting"],
}


def _write(tmp_path: Path, quotes: list[dict], name: str = "q.yaml") -> Path:
    p = tmp_path / name
    p.write_text(yaml.safe_dump({"quotes": quotes}), encoding="utf-8")
    return p


def _check(cli, path: Path) -> dict:
    r = cli("quote", "check", str(path), "--json")
    assert r.returncode == 0, r.stderr
    return {q["id"]: q for q in json.loads(r.stdout)["quotes"]}


# ---------------------------------------------------------------- like for like (item 4)


@pytest.mark.parametrize(("over", "item", "this", "other"), [
    ({"cpu": {"model": "2x Xeon Platinum 8358", "cores": 4}}, "cpu", 8, 0.5),
    ({"network": {"kind": "ethernet", "gbps_per_node": 10}}, "network", "ib/1,600", "ethernet/10"),
    ({"network": {"kind": "ib", "gbps_per_node": 400}}, "network", "ib/1,600", "ib/400"),
    ({"ram_gb": 512}, "ram", 128, 64),
    ({"nvme": {"capacity_tb": 0}}, "nvme", 7680 * 1e12 / 2**30 / 1000, 0),
    ({"spot": True}, "spot", "on-demand", "spot"),
    ({"price": {"amount": 9000, "currency": "USD", "per": "month", "term_months": 3}}, "price_form", "rent", "term"),
])
def test_two_hgx_quotes_that_differ_in_one_thing_are_not_comparable(cli, tmp_path, over, item, this, other):
    by = _check(cli, _write(tmp_path, [dict(HGX, id="a"), {**HGX, **over, "id": "b"}]))
    assert by["a"]["comparable_with"] == [] and by["b"]["comparable_with"] == []
    diffs = by["a"]["differs_from"]["b"]
    assert [d["name"] for d in diffs] == [item]
    d = diffs[0]
    if isinstance(this, float):
        assert d["this"] == pytest.approx(this, rel=1e-3) and d["other"] == other
    else:
        assert (d["this"], d["other"]) == (this, other)
    shown = (this, other) if isinstance(this, str) else (f"{this:g}" if this < 1000 else "", f"{other:g}")
    assert all(v in d["message"] for v in shown), d["message"]  # both values, in words


def test_close_enough_is_like_for_like(cli, tmp_path):
    near = {**HGX, "id": "b", "vendor": "W", "cpu": {"model": "2x AMD EPYC 7543", "cores": 72}, "ram_gb": 1200,
            "nvme": {"capacity_tb": 15.36}, "network": {"kind": "ib", "gbps_per_node": 800},
            "price": {"amount": 13.0, "currency": "USD", "per": "hour"}}
    by = _check(cli, _write(tmp_path, [dict(HGX, id="a"), near]))
    assert by["a"]["comparable_with"] == ["b"] and by["a"]["differs_from"] == {}


def test_single_node_offers_ignore_the_network(cli, tmp_path):
    one = {**HGX, "gpu_count": 1, "intra_node": "none", "cpu": {"model": "Xeon", "vcpus": 16}, "ram_gb": 128,
           "network": {"kind": "none"}}
    by = _check(cli, _write(tmp_path, [dict(one, id="a"), dict(one, id="b", nvme={"capacity_tb": 4})]))
    assert by["a"]["comparable_with"] == ["b"]


# ---------------------------------------------------------------- contradictions (item 3)

FORTY_AS_EIGHTY = {**HGX, "id": "forty-as-eighty", "gpu": "A100 40GB SXM4", "gpu_memory_gb": 80}


def test_a_40gb_card_sold_as_80gb_is_neither_ranked_nor_imported(cli, tmp_path):
    good = {**HGX, "id": "good"}
    f = _write(tmp_path, [good, FORTY_AS_EIGHTY, {**HGX, "id": "fp8-on-a100", "precisions": ["bf16", "fp8"]}])
    r = cli("plan", str(ROOT / "examples" / "jobs" / "qlora-7b.yaml"), "--quotes", str(f), "--no-catalog", "--json",
            "--gpus", "8")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert {row["offer_id"] for row in d["rows"]} == {"good"}
    errs = {e["id"]: e for e in d["quote_errors"]}
    assert set(errs) == {"forty-as-eighty", "fp8-on-a100"}
    bad = errs["forty-as-eighty"]["contradicts"]
    assert [(b["item"], b["name"]) for b in bad] == [(1, "memory")] and bad[0]["value"]["memory_gib"] == 80
    assert "80 GB per GPU stated" in errs["forty-as-eighty"]["message"]
    assert errs["fp8-on-a100"]["contradicts"][0]["value"]["precisions"] == ["bf16", "fp8"]
    assert d["excluded"]["contradictory quote (checklist items 1-5): see quote_errors"] == 2
    table = cli("plan", str(ROOT / "examples" / "jobs" / "qlora-7b.yaml"), "--quotes", str(f), "--no-catalog",
                "--gpus", "8")
    assert "Quote left out: quote 'forty-as-eighty'" in table.stdout

    imp = cli("import", "quotes", str(f), "--json")
    assert imp.returncode == 2  # like any bad quote: the good one is stored, the bad ones are named
    res = json.loads(imp.stdout)
    assert res["imported"] == 1 and res["offer_ids"] == ["good"]
    skipped = {s["id"]: s for s in res["skipped_quotes"]}
    assert skipped["forty-as-eighty"]["contradicts"][0]["item"] == 1
    assert skipped["forty-as-eighty"]["contradicts"][0]["value"]["memory_gib"] == 80
    assert any("forty-as-eighty" in k and "(1) memory" in k for k in res["skip_reasons"])
    listed = json.loads(cli("offers", "--json").stdout)["offers"]
    assert "forty-as-eighty" not in {o["offer_id"] for o in listed} and "good" in {o["offer_id"] for o in listed}


# ---------------------------------------------------------------- purchases in the store (item 3)


def test_an_imported_purchase_shows_as_a_purchase(cli):
    imp = cli("import", "quotes", str(EXAMPLES / "quotes" / "a100-quotes.yaml"), "--json")
    assert imp.returncode == 2, imp.stderr  # q10 and q11 contradict the catalog: skipped, named
    offers = json.loads(cli("offers", "--json").stdout)["offers"]
    by = {o["offer_id"]: o for o in offers}
    assert by["q5-buy-hgx"]["form"] == "purchase"
    assert by["q3-hgx-monthly"]["form"] == by["q4-hgx-monthly"]["form"] == "term"
    assert by["q6-usd-hourly"]["form"] == "rental"
    only = json.loads(cli("offers", "--form", "purchase", "--json").stdout)
    assert [o["offer_id"] for o in only["offers"]] == ["q5-buy-hgx"] and only["filters"]["form"] == "purchase"
    terms = json.loads(cli("offers", "--form", "term", "--json").stdout)["offers"]
    assert {o["offer_id"] for o in terms} == {"q3-hgx-monthly", "q4-hgx-monthly"}
    import csv
    import io

    csv_rows = list(csv.DictReader(io.StringIO(cli("offers", "--form", "purchase", "--csv").stdout)))
    assert [r["form"] for r in csv_rows] == ["purchase"] and csv_rows[0]["offer_id"] == "q5-buy-hgx"
    table = cli("offers", "--form", "purchase", env={"COLUMNS": "220"}).stdout
    assert "purchase" in table and "q5-buy-hgx" in table
    bad = cli("offers", "--form", "lease")
    assert bad.returncode == 2 and "--form" in bad.stderr and "purchase" in bad.stderr


def test_catalog_offers_are_rentals_and_the_api_filters_by_form():
    from fastapi.testclient import TestClient

    from gpuquote.web.app import create_app

    c = TestClient(create_app())
    r = c.get("/api/offers", params={"gpu": "h100", "limit": 5})
    assert r.status_code == 200 and all(o["form"] == "rental" for o in r.json()["offers"])
    assert c.get("/api/offers", params={"form": "purchase"}).json()["count"] == 0  # the snapshot sells no server
    assert c.get("/api/offers", params={"form": "lease"}).status_code in (400, 422)
