"""The store: one transaction per import, integrity checks, history kept, schema versioned."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from gpuquote.offers import Offer, Price
from gpuquote.store import OfferFilter, import_offers, list_snapshots, open_reader, query_offers, write_engine

pytestmark = pytest.mark.db_backends  # again on PostgreSQL when GPUQUOTE_TEST_PG is set

T0 = datetime(2026, 11, 1, tzinfo=UTC)


def offer(price: float, gpu="a100-80gb-sxm4", region="r1", sku="x8", n=8, spot=False, t=T0) -> Offer:
    return Offer(provider="acme", region=region, sku=sku, gpu_id=gpu, gpu_count=n, spot=spot,
                 price=Price(amount=price, currency="USD", per="hour"), source="test", fetched_at=t)


def current(source="acme") -> list[dict]:
    rows, _ = query_offers(open_reader(), OfferFilter(providers=["acme"]))
    return rows


def test_import_publishes_and_keeps_history():
    eng = write_engine(seed=False)
    r1 = import_offers(eng, "acme", [offer(16.0), offer(8.0, region="r2")])
    assert r1.status == "good"
    r2 = import_offers(eng, "acme", [offer(17.6), offer(8.8, region="r2")], fetched_at=T0 + timedelta(days=1))
    assert r2.status == "good"
    rows = current()
    assert sorted(r["usd_per_gpu_hour"] for r in rows) == pytest.approx([1.1, 2.2])
    snaps = list_snapshots(open_reader(), "acme")
    assert [s["status"] for s in snaps] == ["good", "good"] and [s["current"] for s in snaps] == [False, True]


@pytest.mark.parametrize("bad,why", [
    ([], "zero offers"),
    ([offer(160.0), offer(80.0, region="r2")], "moved"),
    ([offer(16.0, gpu="h100-80gb-sxm5"), offer(8.0, gpu="h100-80gb-sxm5", region="r2"),
      offer(9.0, gpu="h100-80gb-sxm5", region="r3")], "vanished"),
])
def test_suspicious_snapshot_is_refused_and_last_good_stays(bad, why):
    eng = write_engine(seed=False)
    good = [offer(16.0), offer(8.0, region="r2"), offer(12.0, region="r3")]
    import_offers(eng, "acme", good)
    r = import_offers(eng, "acme", bad)
    assert r.status == "refused" and any(why in x for x in r.reasons)
    assert sorted(x["usd_per_gpu_hour"] for x in current()) == pytest.approx([1.0, 1.5, 2.0])
    snaps = list_snapshots(open_reader(), "acme")
    assert snaps[-1]["status"] == "refused" and why in snaps[-1]["reason"]


def test_a_failing_import_leaves_nothing_half_written(monkeypatch):
    eng = write_engine(seed=False)
    import_offers(eng, "acme", [offer(16.0)])
    from gpuquote.store import integrity

    def boom(*a, **k):
        raise RuntimeError("crash in the middle of an import")

    monkeypatch.setattr(integrity, "check", boom)
    with pytest.raises(RuntimeError):
        import_offers(eng, "acme", [offer(24.0), offer(1.0, region="r9")])
    assert [r["usd_per_gpu_hour"] for r in current()] == [2.0]
    assert len(list_snapshots(open_reader(), "acme")) == 1


def test_negative_price_is_rejected_by_the_model():
    with pytest.raises(ValueError):
        offer(-1.0)
