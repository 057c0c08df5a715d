"""Planner defaults from data/plan_assumptions.yaml (stated in every plan that uses them)."""

from __future__ import annotations

from functools import lru_cache

from gpuquote.config import DATA_DIR


@lru_cache(maxsize=1)
def load() -> dict:
    import yaml

    return yaml.safe_load((DATA_DIR / "plan_assumptions.yaml").read_text(encoding="utf-8"))


def interruption_rate(provider: str, override: float | None = None) -> tuple[float, str]:
    """Interruptions per node-hour for a spot offer, and where the figure came from."""
    if override is not None:
        return override, "--interruption-rate"
    s = load()["spot"]
    rates = s["interruptions_per_node_hour"]
    kind = "hyperscaler" if provider in s["hyperscalers"] else "marketplace"
    return float(rates[kind]), f"assumed {kind} spot rate"


@lru_cache(maxsize=1)
def egress_prices() -> dict[str, dict]:
    """Public internet egress per provider (data/egress.yaml): {provider: {usd_per_gb, tier, source}}."""
    import yaml

    return yaml.safe_load((DATA_DIR / "egress.yaml").read_text(encoding="utf-8"))["providers"]
