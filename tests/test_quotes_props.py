"""Properties of normalisation, TCO, billing and currency conversion (hypothesis)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuquote.offers import Price
from gpuquote.offers.billing import cost_of_run
from gpuquote.offers.currency import currencies, from_usd, to_usd
from gpuquote.offers.forms import FORMS, normalise_price
from gpuquote.offers.tco import Money, TcoSpec, compute_tco

amounts = st.floats(min_value=0.01, max_value=1e7, allow_nan=False, allow_infinity=False)
utils = st.floats(min_value=0.01, max_value=1.0)
pers = st.sampled_from(["second", "minute", "hour", "day", "week", "month", "year"])
terms = st.one_of(st.none(), st.floats(min_value=1, max_value=60))
counts = st.integers(min_value=1, max_value=16)
rental_forms = st.sampled_from([f for f in FORMS if f != "purchase"])
curs = st.sampled_from(["USD", *currencies()])
SET = settings(max_examples=150, deadline=None)


@SET
@given(amounts, st.floats(min_value=0.01, max_value=1000), pers, terms, counts, rental_forms, utils, curs)
def test_normalisation_is_linear_in_price(a, k, per, term, n, form, u, cur):
    p1 = normalise_price(Price(amount=a, currency=cur, per=per, term_months=term), n, form=form, utilisation=u)
    pk = normalise_price(Price(amount=a * k, currency=cur, per=per, term_months=term), n, form=form, utilisation=u)
    assert pk.usd_per_gpu_hour == pytest.approx(k * p1.usd_per_gpu_hour, rel=1e-9)
    assert pk.usd_per_node_hour == pytest.approx(k * p1.usd_per_node_hour, rel=1e-9)
    assert p1.usd_per_node_hour == pytest.approx(p1.usd_per_gpu_hour * n, rel=1e-9)


@SET
@given(amounts, pers, terms, counts, rental_forms, utils, utils)
def test_normalisation_never_rises_with_utilisation(a, per, term, n, form, u1, u2):
    lo, hi = sorted((u1, u2))
    price = Price(amount=a, currency="USD", per=per, term_months=term)
    at_lo = normalise_price(price, n, form=form, utilisation=lo).usd_per_gpu_hour
    at_hi = normalise_price(price, n, form=form, utilisation=hi).usd_per_gpu_hour
    assert at_hi <= at_lo * (1 + 1e-12)


@SET
@given(amounts, st.floats(min_value=0, max_value=20), st.floats(min_value=1, max_value=2),
       st.floats(min_value=0, max_value=5), st.floats(min_value=0, max_value=1e5), st.floats(min_value=1, max_value=10),
       st.floats(min_value=0, max_value=0.9), st.one_of(st.none(), st.floats(min_value=0, max_value=0.2)),
       counts, utils, utils)
def test_tco_per_gpu_hour_never_rises_with_utilisation(price, kw, pue, elec, host, years, resid, coc, n, u1, u2):
    spec = TcoSpec(power_kw=kw, pue=pue, electricity=Money(elec, "USD", "kwh"), hosting=Money(host, "USD", "month"),
                   years=years, residual_fraction=resid, cost_of_capital=coc)
    lo, hi = sorted((u1, u2))
    p = Price(amount=price, currency="USD", per="once")
    a = compute_tco(p, spec, n, utilisation=lo)
    b = compute_tco(p, spec, n, utilisation=hi)
    assert b.usd_per_gpu_hour <= a.usd_per_gpu_hour * (1 + 1e-9)
    assert a.total_usd == pytest.approx(a.fixed_usd + a.variable_usd_at_full_use * lo, rel=1e-9)
    assert compute_tco(Price(amount=price * 2, currency="USD", per="once"), spec, n, utilisation=lo).total_usd \
        >= a.total_usd


@SET
@given(st.floats(min_value=1e-6, max_value=1e9), curs)
def test_currency_round_trip_is_identity(x, cur):
    usd, _ = to_usd(x, cur)
    assert from_usd(usd, cur) == pytest.approx(x, rel=1e-12)


class _Item:
    def __init__(self, price: Price, gran: int | None):
        self.price, self.billing_granularity_s, self.gpu_count, self.form = price, gran, 1, "cloud_instance"


@SET
@given(amounts, pers, st.sampled_from([None, 1, 60, 3600, 86400]), st.floats(min_value=0.001, max_value=5000),
       st.floats(min_value=0, max_value=100))
def test_cost_of_run_covers_the_hours_and_grows_with_them(a, per, gran, h, extra):
    item = _Item(Price(amount=a, currency="USD", per=per), gran)
    c1 = cost_of_run(item, h)
    c2 = cost_of_run(item, h + extra)
    assert c1.billed_hours >= h - 1e-9
    assert c1.cost_usd >= c1.usd_per_node_hour * h * (1 - 1e-9)
    assert c2.cost_usd >= c1.cost_usd * (1 - 1e-12)


def test_chinese_currency_spellings_mean_cny():
    from gpuquote.offers.currency import rate

    assert rate("RMB").usd_per_unit == rate("CNY").usd_per_unit == rate("元").usd_per_unit


def test_capital_cost_at_a_subnormal_rate_is_zero_and_never_negative():
    """Found by the property above: at cost_of_capital=5e-324 the annuity's pv * r underflowed, so the interest
    on 0.52 USD came out +0.48 and on 1.03 USD -0.03, and a dearer server looked cheaper."""
    from gpuquote.offers.tco import capital_cost

    assert capital_cost(0.5173524834944698, 0.0, 5e-324, 1.0) == 0.0
    assert capital_cost(1.0347049669889397, 0.0, 5e-324, 1.0) == 0.0
    for r in (1e-300, 1e-12, 1e-6, 0.06):
        a, b = capital_cost(100.0, 20.0, r, 3.0), capital_cost(200.0, 20.0, r, 3.0)
        assert 0.0 <= a <= b
    assert capital_cost(100000, 20000, 0.06, 3) == pytest.approx(13386.355069732395, rel=1e-12)
