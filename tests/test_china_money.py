"""CNY as a first-class price (issue 13): Chinese-native quote spellings, --currency twins of every USD amount."""

from __future__ import annotations

import json

import pytest
from tests.conftest import run_cli

from gpuquote.errors import BadInput
from gpuquote.offers.forms import parse_cn_amount, parse_cn_per
from gpuquote.offers.quotes import parse_quotes_text
from gpuquote.service.money import in_currency, twin_key


@pytest.mark.parametrize("text,amount,cur", [("9.5万", 95000.0, None), ("1.2亿", 1.2e8, None),
                                             ("3,500元", 3500.0, "CNY"), ("¥2.5万", 25000.0, "CNY"),
                                             ("12 人民币", 12.0, "CNY")])
def test_chinese_amounts(text, amount, cur):
    assert parse_cn_amount(text) == (pytest.approx(amount), cur)


@pytest.mark.parametrize("text,per,per_gpu", [("月", "month", False), ("小时", "hour", False), ("天", "day", False),
                                              ("年", "year", False), ("元/卡/小时", "hour", True),
                                              ("卡时", "hour", True), ("每卡每小时", "hour", True)])
def test_chinese_periods(text, per, per_gpu):
    assert parse_cn_per(text)[:2] == (per, per_gpu)


def test_quote_with_wan_yuan_per_month_is_cny_95000_per_month():
    text = ('quotes:\n  - id: q\n    gpu: A100 80GB SXM4\n    gpu_count: 8\n    form: node_rental\n'
            '    price: {amount: "9.5万", currency: 元, per: 月}\n')
    parsed = parse_quotes_text(text, "yaml")
    assert not parsed.errors
    p = parsed.quotes[0].price
    assert (p.amount, p.currency, p.per) == (95000.0, "CNY", "month")


def test_card_hour_implies_gpu_hour_and_bad_spellings_name_the_field():
    ok = parse_quotes_text("quotes:\n  - id: q\n    gpu: RTX 4090\n    gpu_count: 2\n"
                           "    price: {amount: 1.98, per: 元/卡/小时}\n", "yaml")
    assert not ok.errors and ok.quotes[0].form == "gpu_hour" and ok.quotes[0].price.currency == "CNY"
    bad = parse_quotes_text("quotes:\n  - id: q\n    gpu: RTX 4090\n    gpu_count: 1\n"
                            "    price: {amount: 九万, currency: 元, per: 月}\n", "yaml")
    assert bad.errors and "price.amount" in bad.errors[0].to_dict()["message"]


def test_twins_beside_usd_keys_never_replacing_them():
    data = {"rows": [{"total_cost_usd": 150.31079, "usd_per_gpu_hour": 1.5031079,
                      "breakdown": {"compute_usd": 10.0}}],
            "filters": {"max_price_usd": 3.0}}
    out = in_currency(data, "CNY", {"CNY": 0.15031079})
    row = out["rows"][0]
    assert row["total_cost_usd"] == 150.31079 and row["total_cost_cny"] == pytest.approx(1000.0)
    assert row["cny_per_gpu_hour"] == pytest.approx(10.0)
    assert row["breakdown"] == {"compute_usd": 10.0}
    assert row["breakdown_cny"]["compute_cny"] == pytest.approx(66.53, 1e-3)
    assert "max_price_cny" not in out["filters"] and out["currency"]["code"] == "CNY"
    assert twin_key("rent_usd_per_month", "CNY") == "rent_cny_per_month" and twin_key("usd_per_unit", "CNY") is None
    with pytest.raises(BadInput, match="currency"):
        in_currency({}, "XYZ")


def test_plan_in_cny_prints_totals_with_the_rate_date():
    r = run_cli("plan", "examples/jobs/lora-70b.yaml", "--provider", "alicloud,tencentcloud", "--currency", "CNY",
                env={"COLUMNS": "200"}, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "Total CNY" in r.stdout and "1 CNY =" in r.stdout and "2026-10-30" in r.stdout
    j = run_cli("plan", "examples/jobs/lora-70b.yaml", "--provider", "alicloud", "--json",
                env={"GPUQUOTE_CURRENCY": "CNY"}, timeout=300)
    data = json.loads(j.stdout)
    row = data["rows"][0]
    assert row["total_cost_cny"] == pytest.approx(row["total_cost_usd"] / data["currency"]["usd_per_unit"], 1e-4)


def test_offers_currency_option_and_bad_code():
    r = run_cli("offers", "--gpu", "a100-80gb", "--provider", "alicloud", "--currency", "CNY", "--json")
    o = json.loads(r.stdout)["offers"][0]
    assert o["price"]["currency"] == "CNY"
    assert o["cny_per_gpu_hour"] == pytest.approx(o["price"]["amount"] / o["gpu_count"], 1e-6)
    bad = run_cli("offers", "--currency", "XYZ")
    assert bad.returncode == 2 and "currency" in bad.stderr + bad.stdout


def test_web_api_currency_param_matches_the_cli():
    from fastapi.testclient import TestClient

    from gpuquote.web.app import create_app

    with TestClient(create_app(), raise_server_exceptions=False) as c:
        api = c.get("/api/offers", params={"gpu": "a100-80gb", "provider": "alicloud", "currency": "CNY"}).json()
        bad = c.get("/api/offers", params={"currency": "XYZ"})
        plan = c.post("/api/plan", json={"example": "lora-70b", "provider": ["alicloud"], "currency": "CNY",
                                         "top": 3})
    cli = json.loads(run_cli("offers", "--gpu", "a100-80gb", "--provider", "alicloud", "--currency", "CNY",
                             "--json").stdout)
    assert api["currency"] == cli["currency"] and api["currency"]["code"] == "CNY"
    assert [o["cny_per_gpu_hour"] for o in api["offers"]] == [o["cny_per_gpu_hour"] for o in cli["offers"]]
    assert bad.status_code == 400 and bad.json()["field"] == "currency"
    assert plan.status_code == 200, plan.text
    row = plan.json()["rows"][0]
    assert row["total_cost_cny"] > row["total_cost_usd"] and "breakdown_cny" in row


def test_quote_check_and_tco_in_cny():
    q = run_cli("quote", "check", "examples/quotes/cn-rental-platforms.yaml", "--currency", "CNY", "--json")
    assert q.returncode == 0, q.stderr
    data = json.loads(q.stdout)
    card = next(x for x in data["quotes"] if x["id"] == "platform-a-4090-card-hour")
    assert card["form"] == "gpu_hour" and card["cny_per_gpu_hour"] == pytest.approx(1.98, abs=1e-6)
    monthly = next(x for x in data["quotes"] if x["id"] == "platform-b-a800-8x-monthly")
    assert (monthly["price"]["amount"], monthly["price"]["per"]) == (95000.0, "month")
    assert monthly["cny_per_node_hour"] == pytest.approx(95000 / 730, rel=1e-6)
    table = run_cli("quote", "check", "examples/quotes/cn-rental-platforms.yaml", "--currency", "CNY",
                    env={"COLUMNS": "200"})
    assert "CNY/GPU-h" in table.stdout and "1 CNY =" in table.stdout
    tco = run_cli("tco", "examples/quotes/a100-quotes.yaml", "--currency", "CNY", "--json")
    buy = json.loads(tco.stdout)["purchases"][0]["tco"]
    assert buy["total_cny"] == pytest.approx(buy["total_usd"] / json.loads(tco.stdout)["currency"]["usd_per_unit"])
