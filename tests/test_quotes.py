"""Quotes: parsing, normalisation by form, billing, TCO, checklist and comparability (hand-computed figures)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from gpuquote.errors import BadInput
from gpuquote.offers import Offer, Price
from gpuquote.offers.billing import cost_of_run
from gpuquote.offers.checklist import CHECKLIST_ITEMS, check_offer
from gpuquote.offers.normalize import usd_per_gpu_hour
from gpuquote.offers.quotes import Quote, QuoteError, parse_quote, parse_quotes_text, read_quote_file
from gpuquote.offers.tco import break_even, compute_tco

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "quotes"
FX = {"CNY": 0.14, "EUR": 1.1}  # fixed rates so every figure below is a hand computation

FULL = {  # a complete 8x A100 80GB SXM4 HGX node quote
    "id": "full", "vendor": "V", "gpu": "A100 80GB SXM4", "gpu_count": 8, "form": "node_rental", "exclusive": True,
    "intra_node": "nvswitch", "cpu": {"model": "2x Xeon Platinum 8358", "cores": 64}, "ram_gb": 1024,
    "nvme": {"capacity_tb": 15.36}, "network": {"kind": "ib", "gbps_per_node": 800},
    "price": {"amount": 98000, "currency": "CNY", "per": "month"}, "covers": ["power", "hosting"],
}


def q(**over) -> Quote:
    raw = {**FULL, **over}
    for k in [k for k, v in raw.items() if v is None]:
        del raw[k]
    res = parse_quote(raw, 1, FX)
    assert isinstance(res, Quote), res.line_text() if isinstance(res, QuoteError) else res
    return res


def status(quote: Quote) -> dict[str, str]:
    from gpuquote.offers.checklist import run_checklist

    return {c.name: c.status for c in run_checklist(quote.facts())}


def msg(quote: Quote, name: str) -> str:
    from gpuquote.offers.checklist import run_checklist

    return next(c.message for c in run_checklist(quote.facts()) if c.name == name)


# ---------------------------------------------------------------- normalisation (hand computations)


@pytest.mark.parametrize(("price", "form", "count", "u", "gpu_h"), [
    ({"amount": 98000, "currency": "CNY", "per": "month"}, "node_rental", 8, 1.0, 98000 * 0.14 / 730 / 8),
    ({"amount": 98000, "currency": "CNY", "per": "month"}, "node_rental", 8, 0.5, 98000 * 0.14 / 730 / 8 / 0.5),
    ({"amount": 9500, "currency": "CNY", "per": "month"}, "cloud_instance", 1, 1.0, 9500 * 0.14 / 730),
    ({"amount": 1.79, "currency": "USD", "per": "hour"}, "gpu_hour", 8, 0.3, 1.79),  # pay as you go: U-free
    ({"amount": 15.2, "currency": "EUR", "per": "hour"}, "node_rental", 8, 1.0, 15.2 * 1.1 / 8),
    ({"amount": 0.0005, "currency": "USD", "per": "second"}, "cloud_instance", 1, 1.0, 1.8),
    ({"amount": 240, "currency": "CNY", "per": "day"}, "cloud_instance", 1, 1.0, 240 * 0.14 / 24),
    ({"amount": 100000, "currency": "USD", "per": "year"}, "node_rental", 4, 1.0, 100000 / 8760 / 4),
    # a term makes an hourly price owed whatever the use
    ({"amount": 2.0, "currency": "USD", "per": "hour", "term_months": 12}, "reserved", 1, 0.5, 4.0),
    # a prepaid term: the whole amount over term_months x 730 h
    ({"amount": 60000, "currency": "USD", "per": "once", "term_months": 12}, "reserved", 8, 1.0,
     60000 / (12 * 730) / 8),
])
def test_normalised_price_matches_hand_computation(price, form, count, u, gpu_h):
    quote = q(price=price, form=form, gpu_count=count)
    p = quote.prices(u, FX)
    assert p["usd_per_gpu_hour"] == pytest.approx(gpu_h, rel=1e-9)
    assert p["usd_per_node_hour"] == pytest.approx(gpu_h * count, rel=1e-9)


def test_shipped_rate_is_used_and_reported_with_its_date():
    quote = parse_quote(FULL, 1)
    p = quote.prices(1.0)
    import json

    from gpuquote.config import DATA_DIR

    table = json.loads((DATA_DIR / "fx_rates.json").read_text())
    assert p["rate"].usd_per_unit == table["usd_per_unit"]["CNY"]
    assert p["rate"].date == table["date"]
    assert p["usd_per_gpu_hour"] == pytest.approx(98000 * table["usd_per_unit"]["CNY"] / 730 / 8)


def test_offer_normalisation_honours_term_commitments_at_low_utilisation():
    term = Price(amount=2.0, currency="USD", per="hour", term_months=12)
    assert usd_per_gpu_hour(term, 1, utilisation=0.5) == pytest.approx(4.0)
    assert usd_per_gpu_hour(Price(amount=2.0, currency="USD", per="hour"), 1, utilisation=0.5) == pytest.approx(2.0)


# ---------------------------------------------------------------- billing granularity


@pytest.mark.parametrize(("per", "billing", "hours", "billed"), [
    ("hour", "hour", 20 / 60, 1.0),  # a 20-minute job on hourly billing pays one hour
    ("hour", "second", 20 / 60, 20 / 60),
    ("hour", "minute", 61 / 3600, 2 / 60),
    ("hour", None, 2.5, 3.0),  # default granularity: the price's period
    ("month", None, 20 / 60, 730.0),  # monthly billing pays a whole month
    ("month", "month", 731, 1460.0),
])
def test_cost_of_run_rounds_up_to_the_billing_granularity(per, billing, hours, billed):
    quote = q(price={"amount": 730 if per == "month" else 1.0, "currency": "USD", "per": per}, gpu_count=1,
              form="cloud_instance", billing=billing)
    rc = cost_of_run(quote, hours)
    assert rc.billed_hours == pytest.approx(billed)
    assert rc.cost_usd == pytest.approx(billed * 1.0)


def test_cost_of_run_term_minimum_nodes_and_per_gpu_prices():
    term = q(price={"amount": 10.0, "currency": "USD", "per": "hour", "term_months": 12}, form="reserved")
    rc = cost_of_run(term, 5, nodes=2)
    assert rc.minimum_usd == pytest.approx(10.0 * 12 * 730)
    assert rc.cost_usd == pytest.approx(10.0 * 12 * 730 * 2)
    per_gpu = q(price={"amount": 1.5, "currency": "USD", "per": "hour"}, form="gpu_hour", gpu_count=8)
    assert cost_of_run(per_gpu, 10).cost_usd == pytest.approx(1.5 * 8 * 10)
    offer = per_gpu.to_offer("quote:t")
    assert cost_of_run(offer, 10).cost_usd == pytest.approx(1.5 * 8 * 10)
    with pytest.raises(BadInput, match="hours"):
        cost_of_run(per_gpu, -1)


# ---------------------------------------------------------------- TCO


TCO = {"power_kw": 6.5, "pue": 1.4, "electricity": {"amount": 0.8, "currency": "CNY", "per": "kwh"},
       "hosting": {"amount": 6000, "currency": "CNY", "per": "month"}, "years": 4, "residual_fraction": 0.1}


def buy(**tco_over) -> Quote:
    return q(id="buy", form="purchase", price={"amount": 1_000_000, "currency": "CNY", "per": "once"},
             tco={**TCO, **tco_over}, covers=None)


def test_purchase_tco_matches_hand_computation():
    u = 0.6
    hours = 4 * 8760 * u
    price, resid = 1_000_000 * 0.14, 1_000_000 * 0.14 * 0.1
    power = 6.5 * 1.4 * 0.8 * 0.14 * hours  # idle hours draw nothing by default
    hosting = 6000 * 0.14 * 48
    expect = (price - resid + power + hosting) / hours / 8
    p = buy().prices(u, FX)
    assert p["usd_per_gpu_hour"] == pytest.approx(expect, rel=1e-9)
    t = p["tco"]
    assert (t.power_usd, t.hosting_usd, t.residual_usd) == pytest.approx((power, hosting, resid))


def test_purchase_tco_idle_power_and_cost_of_capital():
    u = 0.5
    h = 4 * 8760
    base = compute_tco(Price(amount=100000, currency="USD", per="once"), None, 8, utilisation=u).total_usd
    assert base == pytest.approx(100000)  # nothing but the price without TCO inputs
    t = buy(idle_power_kw=1.0, cost_of_capital=0.05).prices(u, FX)["tco"]
    e = 0.8 * 0.14
    assert t.power_usd == pytest.approx(6.5 * 1.4 * e * h * u + 1.0 * 1.4 * e * h * (1 - u))
    p, r = 140000, 14000
    pv = p - r / 1.05 ** 4
    annuity = pv * 0.05 / (1 - 1.05 ** -4) * 4 - (p - r)
    assert t.capital_usd == pytest.approx(annuity)
    avg = buy(cost_of_capital=0.05, capital_method="average").prices(u, FX)["tco"]
    assert avg.capital_usd == pytest.approx((p + r) / 2 * 0.05 * 4)
    simple = buy(cost_of_capital="5%", capital_method="simple").prices(u, FX)["tco"]
    assert simple.capital_usd == pytest.approx(p * 0.05 * 4)


def test_break_even_against_hourly_and_monthly_rentals():
    t = buy().prices(1.0, FX)["tco"]
    h = 4 * 8760
    fixed = 140000 - 14000 + 6000 * 0.14 * 48
    var = 6.5 * 1.4 * 0.8 * 0.14 * h
    be = break_even(t, 2.0, rent_committed=False)  # pay-as-you-go 2 USD/GPU-h
    assert be["break_even_utilisation"] == pytest.approx(fixed / (2.0 * 8 * h - var))
    assert be["buy_cheaper"] == "above"
    own = 6000 * 0.14 + 6.5 * 1.4 * 0.8 * 0.14 * 730
    assert be["break_even_months"] == pytest.approx(140000 / (2.0 * 8 * 730 - own))
    cheap = break_even(t, 0.2, rent_committed=False)
    assert cheap["buy_cheaper"] == "never" and cheap["break_even_months"] is None
    monthly = break_even(t, 3.0, rent_committed=True)
    assert monthly["buy_cheaper"] == "always"


# ---------------------------------------------------------------- checklist


def test_checklist_items_are_the_ten_stable_items():
    assert [n for n, _ in CHECKLIST_ITEMS] == list(range(1, 11))
    assert dict(CHECKLIST_ITEMS)[1] == "memory" and dict(CHECKLIST_ITEMS)[10] == "price_terms"


def test_complete_quote_is_all_ok():
    assert set(status(q()).values()) == {"ok"}


def test_bare_a100_memory_and_form_factor_are_missing():
    s = status(q(gpu="A100", intra_node=None))
    assert s["memory"] == "missing" and s["form_factor"] == "missing" and s["intra_node"] == "missing"
    assert "40 GB" in msg(q(gpu="A100"), "memory") and "80 GB" in msg(q(gpu="A100"), "memory")


def test_stated_memory_narrows_a_family():
    quote = q(gpu="A100", gpu_memory_gb=80, form_factor="sxm")
    assert quote.gpu_id == "a100-80gb-sxm4"
    assert status(quote)["memory"] == "ok"
    assert q(gpu="HGX A100 80GB").gpu_id == "a100-80gb-sxm4"


@pytest.mark.parametrize(("over", "item"), [
    ({"gpu": "A100 80GB PCIe", "intra_node": "nvswitch"}, "intra_node"),  # 8 PCIe cards "with NVSwitch"
    ({"gpu": "A100 80GB PCIe", "intra_node": None, "notes": "8 cards with NVSwitch"}, "intra_node"),
    ({"gpu": "L40S", "intra_node": "nvlink"}, "intra_node"),
    ({"memory_bandwidth": "1.5 TB/s"}, "memory"),  # 80 GB with 1.5 TB/s
    ({"memory_bandwidth_gbs": 1555, "gpu_memory_gb": 80}, "memory"),
    ({"precisions": ["bf16", "fp8"]}, "memory"),  # FP8 promised on an A100
    ({"notes": "supports FP8 training"}, "memory"),
    ({"gpu_memory_gb": 40}, "memory"),  # 40 GB stated for an 80 GB part
    ({"gpu_count": 1, "gpu_memory_gb": 10}, "exclusive"),  # a MIG slice sold as a full GPU
    ({"gpu_count": 1, "notes": "MIG 1g.10gb instance"}, "exclusive"),
    ({"gpu_count": 1, "exclusive": "mig:1g.5gb"}, "exclusive"),  # a 40 GB profile on an 80 GB A100
    ({"gpu": "L40S", "gpu_count": 1, "exclusive": "mig:1g.10gb"}, "exclusive"),  # no MIG on L40S
    ({"form_factor": "pcie"}, "form_factor"),  # PCIe stated for an SXM4 part
    ({"gpu_count": 32}, "gpu_count"),
    ({"intra_node": "none"}, "intra_node"),
    ({"intra_node": "pcie"}, "intra_node"),  # SXM GPUs without NVLink
    ({"spot": True, "price": {"amount": 98000, "currency": "CNY", "per": "month", "term_months": 12}},
     "price_terms"),
    ({"network": {"kind": "none", "gbps_per_node": 100}}, "network"),
])
def test_contradictions_are_mismatches(over, item):
    quote = q(**over)
    s = status(quote)
    assert s[item] == "mismatch", msg(quote, item)


def test_fp8_on_hopper_is_fine_and_negated_fp8_is_not_a_claim():
    assert status(q(gpu="H100 SXM5 80GB", precisions=["fp8"]))["memory"] == "ok"
    assert status(q(notes="no FP8 on this card"))["memory"] == "ok"


@pytest.mark.parametrize(("drop", "item"), [
    ({"cpu": None}, "cpu"), ({"ram_gb": None}, "ram"), ({"nvme": None}, "nvme"), ({"network": None}, "network"),
    ({"covers": None}, "price_terms"), ({"exclusive": None}, "exclusive"), ({"intra_node": None}, "intra_node"),
    ({"gpu_count": None}, "gpu_count"), ({"cpu": {"model": "Xeon"}}, "cpu"),
    ({"network": {"kind": "ib"}}, "network"), ({"form": "reserved"}, "price_terms"),
])
def test_missing_items_say_what_to_ask(drop, item):
    quote = q(**drop)
    assert status(quote)[item] == "missing"
    assert "ask" in msg(quote, item)


def test_purchase_without_tco_inputs_is_missing_and_low_power_is_a_mismatch():
    bare = q(form="purchase", price={"amount": 1e6, "currency": "CNY", "per": "once"}, covers=None)
    assert status(bare)["price_terms"] == "missing"
    assert any("power_kw" in a for a in bare.prices(1.0, FX)["tco"].assumptions)
    assert status(buy())["price_terms"] == "ok"
    assert status(buy(power_kw=1.0))["price_terms"] == "mismatch"  # 8 x 400 W GPUs alone draw 3.2 kW


def test_single_gpu_and_mig_need_no_gpu_link():
    assert status(q(gpu_count=1, intra_node=None))["intra_node"] == "ok"
    mig = q(gpu_count=1, exclusive="mig:1g.10gb", intra_node=None)
    assert status(mig)["exclusive"] == "ok"
    assert q(gpu="A100 80GB PCIe MIG 1g.10gb", exclusive=None, gpu_count=1).exclusive == "mig:1g.10gb"


def test_checklist_works_on_a_plain_catalog_offer():
    o = Offer(provider="aws", region="us-east-1", sku="p4de.24xlarge", gpu_id="a100-80gb-sxm4", gpu_count=8,
              intra_node="nvswitch", vcpus=96, ram_gib=1152, nvme_gib=7451, price=Price(amount=40.96),
              source="test", fetched_at=datetime.now(UTC))
    items = {c.name: c.status for c in check_offer(o)}
    assert items["memory"] == "ok" and items["intra_node"] == "ok"
    assert items["cpu"] == "missing"  # vCPUs without a CPU model
    assert items["network"] == "missing" and items["price_terms"] == "missing"
    assert len(items) == 10


# ---------------------------------------------------------------- comparability


def _check(quotes: list[dict]) -> dict:
    import yaml

    from gpuquote.service.quotes import check_quotes

    return {r["id"]: r for r in check_quotes(yaml.safe_dump({"quotes": quotes}), 1.0, FX, fmt="yaml")["quotes"]}


def test_like_for_like_and_what_differs():
    a = dict(FULL, id="a")
    # another vendor, another CPU model and price form, cores per GPU within 25% (9 vs 8): like for like
    b = dict(FULL, id="b", vendor="W", cpu={"model": "2x EPYC 7763", "cores": 72},
             price={"amount": 1.9, "currency": "USD", "per": "hour"}, form="gpu_hour")
    c40 = dict(FULL, id="c40", gpu="A100 40GB SXM4")
    mig = dict(FULL, id="mig", gpu_count=1, exclusive="mig:1g.10gb", intra_node="none")
    nocpu = {k: v for k, v in FULL.items() if k != "cpu"} | {"id": "nocpu"}
    r = _check([a, b, c40, mig, nocpu])
    assert r["a"]["comparable_with"] == ["b"] and r["b"]["comparable_with"] == ["a"]
    assert [d["item"] for d in r["a"]["differs_from"]["c40"]] == [1]
    assert 4 in [d["item"] for d in r["a"]["differs_from"]["mig"]]
    assert r["mig"]["comparable_with"] == []
    assert r["mig"]["unit"] == "mig_slice" and "usd_per_slice_hour" in r["mig"]
    assert [d["item"] for d in r["a"]["differs_from"]["nocpu"]] == [6]
    assert "missing in nocpu" in r["a"]["differs_from"]["nocpu"][0]["message"]


# ---------------------------------------------------------------- parsing and bad input


@pytest.mark.parametrize(("over", "field", "accepted"), [
    ({"price": {"amount": -5, "currency": "CNY", "per": "month"}}, "price.amount", "> 0"),
    ({"price": {"amount": "abc", "currency": "CNY", "per": "month"}}, "price.amount", "> 0"),
    ({"price": {"amount": 5, "currency": "RMBX", "per": "month"}}, "price.currency", "CNY"),
    ({"price": {"amount": 5, "currency": "CNY", "per": "fortnight"}}, "price.per", "month"),
    ({"price": {"amount": 5, "per": "month"}}, "price.currency", "USD"),
    ({"gpu": "Z9000"}, "gpu", "gpuquote gpus"),
    ({"gpu": "A1000 80GB"}, "gpu", "a100"),
    ({"gpu_count": 0}, "gpu_count", "> 0"),
    ({"gpu_count": "eight"}, "gpu_count", "> 0"),
    ({"form": "lease"}, "form", "node_rental"),
    ({"exclusive": "half"}, "exclusive", "mig:"),
    ({"intra_node": "infinityband"}, "intra_node", "nvswitch"),
    ({"form": "purchase"}, "price.per", "once"),
    ({"tco": {"pue": 0.8}, "form": "purchase", "price": {"amount": 1, "currency": "USD", "per": "once"}},
     "tco.pue", ">= 1.0"),
])
def test_each_malformed_field_is_one_error_naming_id_field_and_accepted(over, field, accepted):
    res = parse_quote({**FULL, **over}, 3, None, line=12)
    assert isinstance(res, QuoteError)
    line = res.line_text()
    assert "\n" not in line
    assert line.startswith("quote 'full' (line 12): ")
    assert f"{field}: " in line and accepted in line


def test_quote_without_id_is_named_by_position_and_several_bad_fields_share_one_line():
    res = parse_quote({"gpu": "A100", "gpu_count": -1, "price": {"amount": "x", "currency": "CNY", "per": "mo"}}, 4)
    assert isinstance(res, QuoteError) and res.quote_id == "q4"
    assert [f for f, _, _ in res.fields] == ["gpu_count", "price.amount"]
    assert res.line_text().count("quote 'q4'") == 1


def test_bad_quotes_do_not_hide_the_good_ones():
    p = read_quote_file(EXAMPLES / "bad-quotes.yaml")
    assert [x.id for x in p.quotes] == ["good-one"]
    assert [e.quote_id for e in p.errors] == ["negative-price", "text-price", "bad-currency", "bad-per",
                                              "unknown-gpu", "zero-gpus"]
    assert all(e.line for e in p.errors)


def test_file_level_errors():
    with pytest.raises(BadInput, match=r"YAML syntax error: a list or mapping is not closed: '}' is missing at line 4"
                                       r".*starts at line 3"):
        parse_quotes_text("quotes:\n  - id: a\n    price: {amount: 1\n", "yaml", "f.yaml")
    with pytest.raises(BadInput, match="no `quotes:` list"):
        parse_quotes_text("hello: 1\n", "yaml")
    with pytest.raises(BadInput, match="no quotes"):
        parse_quotes_text("quotes: []\n", "yaml")
    with pytest.raises(BadInput, match="does not exist"):
        read_quote_file("/nonexistent/q.yaml")
    dup = parse_quotes_text("quotes:\n - {id: a, gpu: A100, gpu_count: 1, form: gpu_hour, price: {amount: 1, "
                            "currency: USD, per: hour}}\n - {id: a, gpu: A100, gpu_count: 1, form: gpu_hour, "
                            "price: {amount: 2, currency: USD, per: hour}}\n")
    assert len(dup.quotes) == 1 and "duplicate" in dup.errors[0].line_text()


def test_quote_without_gpu_is_reported_with_missing_items_not_rejected():
    bare = parse_quote({"id": "buy-hgx", "form": "purchase", "price": {"amount": 1450000, "currency": "CNY",
                                                                       "per": "once"}, "tco": TCO}, 2, FX)
    assert isinstance(bare, Quote) and bare.gpu_id is None
    s = status(bare)
    assert s["memory"] == s["form_factor"] == s["gpu_count"] == "missing" and s["price_terms"] == "ok"
    p = bare.prices(1.0, FX)
    assert p["usd_per_gpu_hour"] is None and p["usd_per_node_hour"] > 0
    with pytest.raises(BadInput, match="gpu"):
        bare.to_offer("s")


def test_unknown_fields_are_reported_not_fatal_and_rate_override_accepts_a_new_currency():
    quote = q(colour="green")
    assert any("colour" in w for w in quote.warnings)
    res = parse_quote({**FULL, "price": {"amount": 5, "currency": "XAU", "per": "month"}}, 1, {"XAU": 2000.0})
    assert isinstance(res, Quote) and res.prices(1.0, {"XAU": 2000.0})["usd_per_node_hour"] == pytest.approx(
        5 * 2000 / 730)


def test_csv_and_yaml_examples_agree():
    y = {x.id: x for x in read_quote_file(EXAMPLES / "a100-quotes.yaml").quotes}
    c = read_quote_file(EXAMPLES / "a100-quotes.csv")
    assert not c.errors and len(c.quotes) == 7
    for cq in c.quotes:
        yq = y[cq.id]
        assert cq.prices(0.8)["usd_per_gpu_hour"] == pytest.approx(yq.prices(0.8)["usd_per_gpu_hour"])
        assert status(cq) == status(yq), cq.id


def test_examples_cover_the_required_cases():
    p = read_quote_file(EXAMPLES / "a100-quotes.yaml")
    assert not p.errors
    by = {x.id: x for x in p.quotes}
    forms = {x.form for x in p.quotes}
    assert {"gpu_hour", "cloud_instance", "node_rental", "purchase"} <= forms
    assert {x.price.currency for x in p.quotes} == {"CNY", "USD", "EUR"}
    assert any(x.mig_profile for x in p.quotes)
    cloud = [x for x in p.quotes if x.form == "cloud_instance" and x.price.currency == "CNY"]
    assert cloud and all(7000 <= x.price.amount <= 12000 and x.price.per == "month" for x in cloud)
    hgx = [x for x in p.quotes if x.form == "node_rental" and x.gpu_id == "a100-80gb-sxm4" and x.price.per == "month"]
    assert hgx and all(80000 <= x.price.amount <= 110000 for x in hgx)
    assert 1.2e6 <= by["q5-buy-hgx"].price.amount <= 1.6e6
    flagged = {x.id for x in p.quotes if set(status(x).values()) != {"ok"}}
    assert {"q9-vague", "q10-too-good", "q11-slice-as-gpu"} <= flagged


# ---------------------------------------------------------------- to Offer, import


def test_to_offer_keeps_the_normalised_price():
    for quote in read_quote_file(EXAMPLES / "a100-quotes.yaml", FX).quotes:
        o = quote.to_offer("quote:a100-quotes.yaml", overrides=FX)
        assert o.id == quote.id and o.source == "quote:a100-quotes.yaml"
        from gpuquote.offers.normalize import usd_per_gpu_hour as offer_gpu_h

        assert offer_gpu_h(o.price, o.gpu_count, overrides=FX) == pytest.approx(
            quote.prices(1.0, FX)["usd_per_gpu_hour"]), quote.id
    p = {x.id: x for x in read_quote_file(EXAMPLES / "a100-quotes.yaml").quotes}
    buy_offer = p["q5-buy-hgx"].to_offer("s")
    assert buy_offer.price.currency == "USD" and buy_offer.price.per == "hour"
    assert any("TCO at utilisation 1" in n for n in buy_offer.notes)
    mig = p["q8-mig-slice"].to_offer("s")
    assert mig.gpu_exclusive == "mig:1g.10gb" and mig.gpu_memory_gib == 10


def test_import_quotes_stores_offers_in_the_real_store():
    from gpuquote.service.quotes import import_quotes
    from gpuquote.store import OfferFilter, open_reader, query_offers

    res = import_quotes(EXAMPLES / "a100-quotes.yaml")
    # 11 quotes; q10 (PCIe "with NVSwitch", 1.5 TB/s, FP8 on an A100) and q11 (a 10 GB slice sold as a GPU)
    # contradict the GPU catalog on items 1-5 and are skipped, with the item and what they stated
    assert res["status"] == "good" and res["imported"] == 9 and res["source"] == "quote:a100-quotes.yaml"
    assert {s["id"] for s in res["skipped_quotes"]} == {"q10-too-good", "q11-slice-as-gpu"}
    rows, total = query_offers(open_reader(), OfferFilter(sources=["quote:a100-quotes.yaml"]))
    assert total == 9
    row = next(r for r in rows if r["offer_id"] == "q3-hgx-monthly")
    assert row["price"]["term_months"] == 12 and row["intra_node"] == "nvswitch"
    bad = import_quotes(EXAMPLES / "bad-quotes.yaml")
    assert bad["imported"] == 1 and bad["skipped"] == 6 and len(bad["errors"]) == 6
