"""Response models for /openapi.json: they document every 200 body (the routes still return the service
dict unchanged, encoded like the CLI's `--json`; these models never re-serialise it).

Each model names the keys DESIGN.md section 4 promises and allows more (a body may gain keys, never lose one).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class InterNode(Open):
    kind: str | None = None
    gbps_per_node: float | None = None


class Price(Open):
    amount: float | None = None
    currency: str | None = None
    per: str | None = None
    term_months: float | None = None


class OfferRow(Open):
    offer_id: str
    provider: str
    region: str | None = None
    sku: str | None = None
    gpu_id: str
    gpu_count: float
    gpu_memory_gib: float | None = None
    form_factor: str | None = None
    intra_node: str | None = None
    inter_node: InterNode
    price: Price
    spot: bool
    source: str | None = None
    fetched_at: str
    freshness: str
    usd_per_gpu_hour: float | None = None
    usd_per_node_hour: float | None = None


class OffersBody(Open):
    filters: dict[str, Any]
    store: str
    count: int
    offset: int = 0
    providers: list[str]
    offers: list[OfferRow]


class SummaryRow(Open):
    gpu_id: str
    memory_gib: float | None = None
    form_factor: str | None = None
    offers: int
    providers: int
    provider_ids: list[str]
    cheapest_on_demand_usd: float | None = None
    median_on_demand_usd: float | None = None
    cheapest_spot_usd: float | None = None
    median_spot_usd: float | None = None
    on_demand_offers: int
    spot_offers: int
    freshest_fetched_at: str


class SummaryBody(Open):
    filters: dict[str, Any]
    store: str
    count: int
    providers: list[str]
    gpus: list[SummaryRow]


class GpusBody(Open):
    gpus: list[dict[str, Any]]


class GpuShowBody(Open):
    resolved: dict[str, Any]
    gpus: list[dict[str, Any]]


class HistoryPoint(Open):
    day: str
    provider: str
    min_usd_per_gpu_hour: float | None = None
    median_usd_per_gpu_hour: float | None = None
    max_usd_per_gpu_hour: float | None = None
    offers: int


class HistoryBody(Open):
    gpu: dict[str, Any]
    gpu_ids: list[str]
    store: str
    series: list[HistoryPoint]
    unit: str


class Example(Open):
    id: str
    file: str
    title: str
    text: str
    format: str


class ExamplesBody(Open):
    jobs: list[Example]
    quotes: list[Example]


class EstimateBody(Open):
    kind: str
    gpu: str | None = None
    gpus: int | None = None
    nodes: int | None = None
    memory: dict[str, Any]
    fits: bool
    time_hours: float | None = None
    assumptions: list[Any]


class PlanRow(Open):
    offer_id: str
    provider: str
    gpu_id: str
    gpus: int
    nodes: int
    time_hours: float | None = None
    total_cost_usd: float | None = None
    pareto: bool


class PlanBody(Open):
    job: dict[str, Any]
    objective: str
    rows: list[PlanRow]
    pareto_front: list[dict[str, Any]]
    excluded: dict[str, Any]
    nothing_fits: dict[str, Any] | None = None
    assumptions: list[Any]
    filters: dict[str, Any]


class QuoteCheckBody(Open):
    file: str
    format: str
    utilisation: float
    quotes: list[dict[str, Any]]
    groups: list[Any]
    errors: list[Any]


class TcoBody(Open):
    file: str
    utilisation: float
    purchases: list[dict[str, Any]]
    errors: list[Any]


class HealthBody(Open):
    status: str
    version: str
    store: str


class RfqBody(Open):
    """`gpuquote rfq JOB --format json`: the specification to request, the checklist questions, the template."""


class WatchesBody(Open):
    """`gpuquote watch list --json`: every rule with its last evaluation and notification."""


class WatchBody(Open):
    """One watch rule (added, shown with its history, or removed)."""


def ok(model: type[BaseModel]) -> dict[int | str, dict[str, Any]]:
    """A `responses` entry: the 200 body typed by `model`."""
    return {200: {"model": model, "description": "The body of the CLI's --json for the same arguments"}}


__all__ = ["ExamplesBody", "EstimateBody", "GpuShowBody", "GpusBody", "HealthBody", "HistoryBody", "OffersBody",
           "PlanBody", "QuoteCheckBody", "RfqBody", "SummaryBody", "TcoBody", "WatchBody", "WatchesBody", "ok"]
