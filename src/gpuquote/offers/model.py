"""The Offer: one priced configuration from one provider, with unknowns kept explicit.

Fields follow DESIGN.md section 3. "unknown" (or None for numbers) is a value the checklist reports,
never a silent default.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

PER = ("second", "minute", "hour", "day", "week", "month", "year", "once")
IntraNode = Literal["nvswitch", "nvlink", "pcie", "none", "unknown"]
InterNodeKind = Literal["ib", "roce", "ethernet", "omnipath", "none", "unknown"]
#: What the price buys: pay-as-you-go `rental`, a committed `term` (reserved / term_months), or a `purchase`
#: (its hourly price is a TCO, never a rental rate).
OfferForm = Literal["rental", "purchase", "term"]  # = kinds.OFFER_FORMS (tests/test_offers_cli.py checks)


class Price(BaseModel):
    """A price as quoted: amount in a currency, per a period (or once), with an optional committed term."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    amount: float = Field(ge=0)
    currency: str = "USD"
    per: Literal["second", "minute", "hour", "day", "week", "month", "year", "once"] = "hour"
    term_months: float | None = Field(default=None, ge=0)

    @field_validator("currency")
    @classmethod
    def _upper(cls, v: str) -> str:
        from gpuquote.offers.currency import canonical

        return canonical(v)


class InterNode(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: InterNodeKind = "unknown"
    gbps_per_node: float | None = Field(default=None, ge=0)


class Offer(BaseModel):
    """One offer. `gpu_id` is a SKU id or a family id when the source does not say more."""

    model_config = ConfigDict(extra="forbid")

    provider: str
    region: str = "unknown"
    sku: str
    gpu_id: str
    gpu_count: float = Field(gt=0)  # float: fractional GPUs exist (shared / MIG slices of one card)
    gpu_exclusive: bool | str = True  # True | "shared" | "mig:<profile>" | "unknown"
    form_factor: str = "unknown"  # pcie | sxm | oam | other | unknown
    intra_node: IntraNode = "unknown"
    vcpus: float | None = None
    cpu_model: str | None = None
    ram_gib: float | None = None
    nvme_gib: float | None = None
    nvme_write_gbs: float | None = Field(default=None, gt=0)  # sequential write GB/s per node, when stated
    inter_node: InterNode = InterNode()
    price: Price
    billing_granularity_s: int | None = None
    spot: bool = False
    covers: list[str] = Field(default_factory=list)
    extras: dict[str, float] = Field(default_factory=dict)
    available: bool | None = None
    source: str
    fetched_at: datetime
    gpu_memory_gib: float | None = None
    notes: list[str] = Field(default_factory=list)
    id: str = ""
    form: OfferForm = "rental"

    def model_post_init(self, _ctx: object) -> None:
        if not self.id:
            self.id = offer_id(self.provider, self.region, self.sku, self.spot)


def offer_id(provider: str, region: str, sku: str, spot: bool) -> str:
    """Stable id of an offer across snapshots: provider:region:sku[:spot]."""
    return f"{provider}:{region}:{sku}" + (":spot" if spot else "")
