"""Price history: an empty answer says what the store holds and which filter hides it; one day is not a series."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from gpuquote.i18n import localize
from gpuquote.offers import Offer, Price
from gpuquote.service.refresh import empty_message, history
from gpuquote.store import import_offers, write_engine

pytestmark = pytest.mark.db_backends

T0 = datetime(2026, 10, 1, tzinfo=UTC)


def offer(price: float, provider="acme", spot=False, region="r1", t=T0) -> Offer:
    return Offer(provider=provider, region=region, sku="x8", gpu_id="a100-80gb-sxm4", gpu_count=8, spot=spot,
                 price=Price(amount=price, currency="USD", per="hour"), source="test", fetched_at=t)


@pytest.fixture
def store():
    eng = write_engine(seed=False)
    import_offers(eng, "acme", [offer(16.0), offer(12.0, region="r2")], fetched_at=T0)
    t2 = T0 + timedelta(days=2)
    import_offers(eng, "acme", [offer(17.6, t=t2), offer(12.0, region="r2", t=t2)], fetched_at=t2)
    return eng


def test_history_hidden_by_the_period_says_what_the_store_holds(store):
    data = history("a100-80gb", since="2026-11-15")
    assert data["series"] == []
    assert data["empty_reason"] == {"reason": "since", "first_day": "2026-10-01", "last_day": "2026-10-03",
                                    "days": 2}
    msg = empty_message(data)
    assert "since 2026-11-15" in msg and "2 day(s)" in msg and "2026-10-01" in msg and "2026-10-03" in msg
    zh = localize(msg, "zh-CN")
    assert "2026-10-01" in zh and "天" in zh


def test_history_hidden_by_provider_or_spot_names_what_exists(store):
    data = history("a100-80gb", provider=["nobody"])
    assert data["empty_reason"] == {"reason": "provider", "providers": ["acme"]}
    assert "from: acme" in empty_message(data)
    spot = history("a100-80gb", spot=True)
    assert spot["empty_reason"]["reason"] == "spot" and spot["empty_reason"]["spot"] is False
    assert "on-demand prices" in empty_message(spot)


def test_no_history_at_all_keeps_the_plain_sentence():
    write_engine(seed=False)
    data = history("h200")
    assert data["empty_reason"] == {"reason": "none"} and data["available"] == []
    assert "No price history for h200" in empty_message(data)


def test_history_with_data_has_no_empty_reason(store):
    data = history("a100-80gb")
    assert data["series"] and data["empty_reason"] is None and data["days"] == 2
    assert empty_message(data) is None


def test_one_day_of_history_is_drawn_by_provider_not_on_a_time_axis():
    from gpuquote.web.charts import history_chart

    eng = write_engine(seed=False)
    import_offers(eng, "acme", [offer(16.0), offer(8.0, region="r2")], fetched_at=T0)
    import_offers(eng, "zeta", [offer(24.0, provider="zeta")], fetched_at=T0)
    fig = history_chart(history("a100-80gb"), "en")
    assert fig["layout"]["xaxis"]["type"] == "category"
    (trace,) = fig["data"]
    assert trace["x"] == ["acme", "zeta"] and trace["y"] == pytest.approx([1.5, 3.0])  # cheapest median first
    assert trace["error_y"]["array"] == pytest.approx([0.5, 0.0])
    assert "2026-10-01" in fig["layout"]["title"]["text"]
    t1 = T0 + timedelta(days=1)
    import_offers(eng, "acme", [offer(17.6, t=t1), offer(8.0, region="r2", t=t1)], fetched_at=t1)
    assert history_chart(history("a100-80gb"), "en")["layout"]["xaxis"]["type"] == "date"


def test_history_page_shows_the_reason_and_a_link_to_everything(store, tmp_path):
    from fastapi.testclient import TestClient

    from gpuquote.web.app import create_app

    with TestClient(create_app()) as c:
        r = c.get("/history", params={"gpu": "a100-80gb", "since": "2026-11-15"})
        assert r.status_code == 200
        assert "2026-10-01" in r.text and 'id="history-all"' in r.text
        zh = c.get("/history", params={"gpu": "a100-80gb", "since": "2026-11-15", "lang": "zh-CN"})
        assert "请选择更早的日期" in zh.text
