"""Checks a new snapshot must pass before it becomes current (a refused one is kept, not current).

Rules (thresholds are the `Checks` defaults; a marketplace source passes looser ones):
- zero offers;
- an offer with a negative, infinite or missing price;
- an on-demand price per GPU-hour above `max_usd_per_gpu_hour` (a unit bug: cents read as dollars);
- a whole, exclusive GPU priced below `min_usd_per_gpu_hour` (a price no GPU-hour is sold at: Alibaba's
  gn5i rows at 0.0116 $/h for 2x P4);
- a GPU whose median on-demand $/GPU-h moved by more than `max_median_move` x against the current snapshot;
- an offer (same id) whose on-demand price moved by more than `max_offer_move` x;
- a GPU that had at least `min_offers_for_vanish` offers and now has none;
- the offer count falling below `min_count_ratio` of the current snapshot's (when it had at least
  `min_prev_for_count`): a renamed field that silently drops most rows.
Spot prices move by design and only take part in the validity rules.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import median

MAX_MEDIAN_MOVE = 3.0  # refuse when a GPU's median $/GPU-h moved by more than this factor
MIN_OFFERS_FOR_VANISH = 3  # a GPU with at least this many offers before and none now is suspicious
MAX_OFFER_MOVE = 5.0  # one offer's on-demand price moving by more than this factor
MAX_USD_PER_GPU_HOUR = 150.0  # above any on-demand GPU-hour sold today (B200 ~ $15)
MIN_USD_PER_GPU_HOUR = 0.03  # below any whole datacenter GPU-hour sold (old T4/P4 rent for ~0.1-0.5 $/h)
MIN_COUNT_RATIO = 0.5  # new offer count below half the current one
MIN_PREV_FOR_COUNT = 20  # ... when the current snapshot had at least this many offers
MAX_LISTED = 5  # offers named in one reason


@dataclass(frozen=True)
class Checks:
    max_median_move: float = MAX_MEDIAN_MOVE
    min_offers_for_vanish: int = MIN_OFFERS_FOR_VANISH
    max_offer_move: float | None = MAX_OFFER_MOVE
    max_usd_per_gpu_hour: float = MAX_USD_PER_GPU_HOUR
    min_usd_per_gpu_hour: float = MIN_USD_PER_GPU_HOUR
    min_count_ratio: float = MIN_COUNT_RATIO
    min_prev_for_count: int = MIN_PREV_FOR_COUNT


DEFAULT = Checks()
# A marketplace (vast.ai): hosts come and go and set their own asks, so counts and single asks move more.
MARKETPLACE = Checks(min_offers_for_vanish=10, max_offer_move=10.0, min_count_ratio=0.25, min_usd_per_gpu_hour=0.0)


def check(new_rows: list[dict], old_rows: list[dict] | None, checks: Checks = DEFAULT) -> list[str]:
    """Reasons to refuse the new snapshot (empty list: publish it)."""
    reasons: list[str] = []
    if not new_rows:
        return ["zero offers"]
    bad = [r for r in new_rows if r["usd_per_gpu_hour"] is not None
           and not (r["usd_per_gpu_hour"] >= 0 and math.isfinite(r["usd_per_gpu_hour"]))]
    bad += [r for r in new_rows if r.get("price_amount") is not None and not r["price_amount"] >= 0]
    if bad:
        reasons.append(f"{len(bad)} offers with a negative or invalid price")
    high = [r for r in new_rows if not r.get("spot") and r["usd_per_gpu_hour"] is not None
            and r["usd_per_gpu_hour"] > checks.max_usd_per_gpu_hour]
    if high:
        reasons.append(f"{len(high)} offers above {checks.max_usd_per_gpu_hour:g} $/GPU-h (a unit error?): "
                       + _list(f"{r['offer_id']} {r['usd_per_gpu_hour']:.2f}" for r in high))
    low = [r for r in new_rows if r["usd_per_gpu_hour"] is not None and 0 <= r["usd_per_gpu_hour"]
           < checks.min_usd_per_gpu_hour and str(r.get("gpu_exclusive", "true")).lower() == "true"
           and (r.get("gpu_count") or 1) >= 1]
    if low:
        reasons.append(f"{len(low)} offers below {checks.min_usd_per_gpu_hour:g} $/GPU-h (implausible): "
                       + _list(f"{r['offer_id']} {r['usd_per_gpu_hour']:.4f}" for r in low))
    if not old_rows:
        return reasons
    old_n, new_n = len(old_rows), len(new_rows)
    if old_n >= checks.min_prev_for_count and new_n < checks.min_count_ratio * old_n:
        reasons.append(f"offer count fell from {old_n} to {new_n} (below {checks.min_count_ratio:g}x)")
    new_by, old_by = _by_gpu(new_rows), _by_gpu(old_rows)
    for gpu, old_prices in sorted(old_by.items()):
        new_prices = new_by.get(gpu)
        if not new_prices:
            if len(old_prices) >= checks.min_offers_for_vanish:
                reasons.append(f"GPU {gpu} vanished ({len(old_prices)} offers before, 0 now)")
            continue
        a, b = median(old_prices), median(new_prices)
        if a > 0 and b > 0 and max(a / b, b / a) > checks.max_median_move:
            reasons.append(f"GPU {gpu}: median $/GPU-h moved {a:.3f} -> {b:.3f} "
                           f"(more than {checks.max_median_move:g}x)")
    if checks.max_offer_move:
        old_price = {r["offer_id"]: r["usd_per_gpu_hour"] for r in old_rows
                     if r.get("offer_id") and not r.get("spot") and r["usd_per_gpu_hour"]}
        jumps = []
        for r in new_rows:
            a, b = old_price.get(r.get("offer_id")), r["usd_per_gpu_hour"]
            if a and b and not r.get("spot") and b > 0 and max(a / b, b / a) > checks.max_offer_move:
                jumps.append(f"{r['offer_id']} {a:.3f} -> {b:.3f}")
        if jumps:
            reasons.append(f"{len(jumps)} offers moved more than {checks.max_offer_move:g}x: " + _list(jumps))
    return reasons


def _list(items) -> str:
    items = list(items)
    more = f" (+{len(items) - MAX_LISTED} more)" if len(items) > MAX_LISTED else ""
    return ", ".join(items[:MAX_LISTED]) + more


def _by_gpu(rows: list[dict]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for r in rows:
        p = r["usd_per_gpu_hour"]
        if p is not None and p > 0 and not r.get("spot"):
            out.setdefault(r["gpu_id"], []).append(p)
    return out
