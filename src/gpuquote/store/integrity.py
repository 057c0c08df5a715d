"""Checks a new snapshot must pass before it becomes current (a refused one is kept, not current)."""

from __future__ import annotations

from statistics import median

MAX_MEDIAN_MOVE = 3.0  # refuse when a GPU's median $/GPU-h moved by more than this factor
MIN_OFFERS_FOR_VANISH = 3  # a GPU with at least this many offers before and none now is suspicious


def check(new_rows: list[dict], old_rows: list[dict] | None) -> list[str]:
    """Reasons to refuse the new snapshot (empty list: publish it)."""
    reasons: list[str] = []
    if not new_rows:
        return ["zero offers"]
    bad = [r for r in new_rows if r["usd_per_gpu_hour"] is not None and not r["usd_per_gpu_hour"] >= 0]
    if bad:
        reasons.append(f"{len(bad)} offers with a negative or invalid price")
    if not old_rows:
        return reasons
    new_by, old_by = _by_gpu(new_rows), _by_gpu(old_rows)
    for gpu, old_prices in sorted(old_by.items()):
        new_prices = new_by.get(gpu)
        if not new_prices:
            if len(old_prices) >= MIN_OFFERS_FOR_VANISH:
                reasons.append(f"GPU {gpu} vanished ({len(old_prices)} offers before, 0 now)")
            continue
        a, b = median(old_prices), median(new_prices)
        if a > 0 and b > 0 and max(a / b, b / a) > MAX_MEDIAN_MOVE:
            reasons.append(f"GPU {gpu}: median $/GPU-h moved {a:.3f} -> {b:.3f} (more than {MAX_MEDIAN_MOVE:g}x)")
    return reasons


def _by_gpu(rows: list[dict]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for r in rows:
        p = r["usd_per_gpu_hour"]
        if p is not None and p > 0 and not r.get("spot"):
            out.setdefault(r["gpu_id"], []).append(p)
    return out
