"""Normalise a price to USD per node-hour and per GPU-hour.

Hourly-or-finer prices are paid only for the hours used; a day, week, month or year is owed whether
the GPUs are busy or not, so its cost per used hour is spread over `utilisation` x the period's hours.
Conventions (DESIGN.md section 3): a month is 730 hours, a year 8,760. A one-off purchase has no
hourly price without a TCO model (see offers.tco).
"""

from __future__ import annotations

from gpuquote.offers.currency import Rate, to_usd
from gpuquote.offers.model import Price

HOURS_PER = {"second": 1 / 3600, "minute": 1 / 60, "hour": 1.0, "day": 24.0, "week": 168.0,
             "month": 730.0, "year": 8760.0}
PERIODIC = {"day", "week", "month", "year"}


def usd_per_node_hour(price: Price, utilisation: float = 1.0,
                      overrides: dict[str, float] | None = None) -> tuple[float | None, Rate]:
    """USD per hour of use for everything the price covers (the node, or the quoted GPUs)."""
    usd, r = to_usd(price.amount, price.currency, overrides)
    if price.per == "once":
        return None, r
    per_hour = usd / HOURS_PER[price.per]
    if price.per in PERIODIC or price.term_months:  # a term commitment is owed whether used or not
        per_hour /= max(utilisation, 1e-9)
    return per_hour, r


def usd_per_gpu_hour(price: Price, gpu_count: float, utilisation: float = 1.0,
                     overrides: dict[str, float] | None = None) -> float | None:
    node, _ = usd_per_node_hour(price, utilisation, overrides)
    return None if node is None else node / gpu_count
