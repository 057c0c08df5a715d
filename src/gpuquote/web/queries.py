"""The query strings of GET /api/offers and /api/offers/summary, declared once.

FastAPI reads them as query-parameter models (so OpenAPI lists every parameter with its bounds), and the offers
fast path (web/fastpath.py) validates a query with the same model: one set of names, bounds and accepted values
for both ways of answering, and the same filters for the listing and its summary.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

SortKey = Literal["price", "usd_per_gpu_hour", "node_price", "usd_per_node_hour", "provider", "region", "gpu",
                  "gpu_id", "count", "gpu_count", "fetched", "fetched_at", "memory", "vcpus", "ram", "sku"]
Interconnect = Literal["nvswitch", "nvlink", "pcie"]
FormFactor = Literal["pcie", "sxm", "oam", "other"]
OfferFormFilter = Literal["rental", "purchase", "term"]
CsvFormat = Literal["json", "csv"]


class OfferFilters(BaseModel):
    """Which offers: the filters of `gpuquote offers` (and of its `--summary`)."""

    model_config = ConfigDict(extra="ignore")  # unknown names are ignored, as FastAPI always did

    gpu: str | None = Field(None, max_length=100, description="GPU id or alias; a family matches its SKUs")
    min_gpus: float | None = Field(None, gt=0, allow_inf_nan=False, description="At least this many GPUs")
    interconnect: Interconnect | None = None
    region: str | None = Field(None, max_length=100, description="Region id or prefix")
    spot: bool | None = Field(None, description="true: only spot, false: only on-demand")
    provider: list[str] | None = Field(None, max_length=50, description="Provider id(s), repeat or comma")
    max_price_usd: float | None = Field(None, ge=0, allow_inf_nan=False, description="Max USD per GPU-hour")
    memory_gib: float | None = Field(None, gt=0, allow_inf_nan=False, description="GPU memory, GiB")
    form_factor: FormFactor | None = None
    form: OfferFormFilter | None = Field(None, description="rental | purchase | term: what the price buys")
    format: CsvFormat = "json"

    def filter_args(self) -> dict:
        """The keyword arguments of service.offers.summarize_offers (a blank text filter is no filter)."""
        return {"gpu": self.gpu or None, "min_gpus": self.min_gpus, "interconnect": self.interconnect,
                "region": self.region or None, "spot": self.spot, "provider": self.provider,
                "max_price_usd": self.max_price_usd, "memory_gib": self.memory_gib, "form_factor": self.form_factor,
                "form": self.form}


class OffersQuery(OfferFilters):
    """GET /api/offers: the filters, the order and the page."""

    sort: SortKey = "price"
    desc: bool = False
    limit: int | None = Field(None, gt=0, le=100000)
    offset: int = Field(0, ge=0, le=10_000_000, description="Skip this many rows of the sorted result (paging)")
    currency: str | None = Field(None, max_length=10, description="Add *_cny (or other) twins of USD amounts at "
                                 "the dated rate: CNY, EUR, ...")

    def list_args(self) -> dict:
        """The keyword arguments of service.offers.list_offers."""
        return {**self.filter_args(), "sort": self.sort, "descending": self.desc, "limit": self.limit,
                "offset": self.offset}


__all__ = ["CsvFormat", "FormFactor", "Interconnect", "OfferFilters", "OfferFormFilter", "OffersQuery", "SortKey"]
