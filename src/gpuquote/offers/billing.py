"""What a run of H hours really costs on an offer or quote: billing granularity and minimum terms.

A 20-minute job on hourly billing pays one hour; on monthly billing it pays a whole month; under a
12-month term it pays the whole term. The planner prices every candidate with `cost_of_run`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from gpuquote.errors import BadInput
from gpuquote.i18n import Msg
from gpuquote.offers.currency import Rate, to_usd
from gpuquote.offers.forms import GRANULARITY_S, HOURS_PER_MONTH
from gpuquote.offers.normalize import HOURS_PER


@dataclass
class RunCost:
    hours: float
    nodes: int
    billed_hours: float  # per node, after rounding up to the billing granularity
    granularity_s: int
    usd_per_node_hour: float  # the price's hourly rate (before rounding, at full use)
    run_usd: float  # per node: billed hours x rate
    minimum_usd: float  # per node: what a term commitment makes owed regardless
    cost_usd: float  # total: max(run, minimum) x nodes
    rate: Rate
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        d["rate"] = self.rate.to_dict()
        return d


def _ceil(x: float) -> int:
    return math.ceil(x - 1e-9)


def cost_of_run(item: Any, hours: float, *, nodes: int = 1, overrides: dict[str, float] | None = None,
                minimum_s: int = 0) -> RunCost:
    """Cost of using `nodes` copies of an Offer or Quote for `hours` of wall-clock time each.

    billed = ceil(max(hours, minimum) / granularity) x granularity; run = billed x amount_usd / hours(per);
    a term commitment makes amount_usd / hours(per) x term_months x 730 owed at least (a prepaid
    term, per: once, is bought again for every started term). A purchase is charged its TCO per
    node-hour at utilisation 1 for exactly the hours used (the server is owned: no rounding).
    """
    try:
        h = float(hours)
    except (TypeError, ValueError):
        h = float("nan")
    if not h >= 0 or math.isinf(h):
        raise BadInput(f"hours: {hours!r}; accepted: a number >= 0", field="hours", accepted=[">= 0"])
    if nodes < 1:
        raise BadInput(f"nodes: {nodes}; accepted: an integer >= 1", field="nodes", accepted=[">= 1"])
    price = item.price
    form = getattr(item, "form", None)
    count = getattr(item, "gpu_count", None)
    notes: list[str] = []
    if form == "purchase":
        from gpuquote.offers.tco import compute_tco

        t = compute_tco(price, getattr(item, "tco", None), count, utilisation=1.0, overrides=overrides)
        rate = t.usd_per_node_hour
        run = rate * h
        notes.append("purchase: TCO per node-hour at utilisation 1, no rounding")
        return RunCost(h, nodes, h, 1, rate, run, 0.0, run * nodes, t.rates[0], notes)
    usd, r = to_usd(price.amount, price.currency, overrides)
    if form == "gpu_hour":
        if not count:
            raise BadInput("gpu_count: not stated; accepted: a number > 0 (needed to price a node)",
                           field="gpu_count", accepted=["> 0"])
        usd *= count
    term_h = (price.term_months or 0) * HOURS_PER_MONTH
    if price.per == "once":
        if not term_h:
            raise BadInput("price.per: 'once' without term_months cannot be priced per run; accepted: form: purchase,"
                           " or price.term_months", field="price.per", accepted=["purchase", "term_months"])
        terms = max(1, _ceil(h / term_h)) if h > 0 else 1
        cost = usd * terms
        notes.append(Msg("quote.f.prepaid_terms", months=f"{price.term_months:g}", terms=terms))
        return RunCost(h, nodes, terms * term_h, int(term_h * 3600), usd / term_h, cost, usd, cost * nodes, r, notes)
    period_h = HOURS_PER[price.per]
    rate = usd / period_h
    gran = getattr(item, "billing_granularity_s", None) or GRANULARITY_S[price.per]
    seconds = max(h * 3600.0, float(minimum_s)) if h > 0 else 0.0
    billed_h = _ceil(seconds / gran) * gran / 3600.0
    run = billed_h * rate
    minimum = rate * term_h if term_h else 0.0
    if billed_h > h + 1e-9:
        notes.append(Msg("quote.f.billed", billed=f"{billed_h:g}", hours=f"{h:g}", gran=gran))
    if minimum > run:
        notes.append(Msg("quote.f.term_min", months=f"{price.term_months:g}", usd=f"{minimum:,.2f}"))
    return RunCost(h, nodes, billed_h, int(gran), rate, run, minimum, max(run, minimum) * nodes, r, notes)
