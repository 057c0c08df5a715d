"""The accepted range of every quote field, in one declarative Pydantic schema.

offers.quote_reader turns spellings and units into values (TB -> GiB, "RMB" -> CNY); this schema
says which values can be right. A value outside its range is a bad field of that quote (one
QuoteError line naming the quote id, its line and the field), never a stored offer. The bounds are
wide enough for any real machine and narrow enough to catch typos and hostile input: a price of 0
or 1e308, 10^9 GPUs, half a GPU sold as exclusive. The price itself is checked after normalising it
with the same functions the report uses (offers.forms / offers.currency), so a new spelling of an
amount, a period or a currency plugs in here unchanged.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from gpuquote.errors import BadInput
from gpuquote.i18n import Msg, join, t

#: Above this a normalised price is a typo (an H100 rents for 1-10 USD per GPU-hour; a MIG slice for less).
MAX_USD_PER_GPU_HOUR = 1000.0
#: A price amount in any currency (a 10^12 KRW cluster purchase is ~700 M USD).
MAX_AMOUNT = 1e12
MAX_GPUS = 100_000

_POS = {"gt": 0, "allow_inf_nan": False}
_NONNEG = {"ge": 0, "allow_inf_nan": False}


class TcoBounds(BaseModel):
    model_config = ConfigDict(extra="ignore")

    power_kw: float | None = Field(None, le=10_000, **_NONNEG)
    idle_power_kw: float | None = Field(None, le=10_000, **_NONNEG)
    pue: float | None = Field(None, ge=1.0, le=5.0, allow_inf_nan=False)
    years: float | None = Field(None, le=30, **_POS)
    residual_fraction: float | None = Field(None, le=1.0, **_NONNEG)
    cost_of_capital: float | None = Field(None, le=1.0, **_NONNEG)


class QuoteSchema(BaseModel):
    """One quote after reading: required fields and the range of each number."""

    model_config = ConfigDict(extra="forbid")

    id: str | None = Field(None, min_length=1, max_length=200)  # required for an offer: Quote.to_offer
    gpu: str | None = Field(None, min_length=1, max_length=200)  # idem; a check reports it missing
    gpu_count: float | None = Field(None, le=MAX_GPUS, **_POS)
    exclusive: bool | str = "unknown"
    price_amount: float | None = Field(None, le=MAX_AMOUNT, **_POS)
    price_term_months: float | None = Field(None, le=120, **_POS)
    vcpus: float | None = Field(None, le=100_000, **_POS)
    cpu_cores: float | None = Field(None, le=100_000, **_POS)
    ram_gib: float | None = Field(None, le=1_000_000, **_NONNEG)
    nvme_gib: float | None = Field(None, le=100_000_000, **_NONNEG)
    net_gbps: float | None = Field(None, le=100_000, **_NONNEG)
    gpu_memory_gib: float | None = Field(None, le=4096, **_POS)
    memory_bandwidth_gbs: float | None = Field(None, le=100_000, **_POS)
    billing_granularity_s: int | None = Field(None, le=10 * 366 * 86400, gt=0)
    extras: dict[str, float] = Field(default_factory=dict)
    tco: TcoBounds | None = None

    @model_validator(mode="after")
    def _whole_gpus(self) -> QuoteSchema:
        c = self.gpu_count
        shared = self.exclusive == "shared" or (isinstance(self.exclusive, str) and self.exclusive.startswith("mig:"))
        if c is not None and c != int(c) and not shared:
            raise ValueError(f"gpu_count|{t('hostile.whole_gpus', count=f'{c:g}')}|{t('quote.acc.whole_gpus')}")
        for k, v in self.extras.items():
            if not 0 <= v <= 10_000:
                raise ValueError(f"extras.{k}|{Msg('quote.e.out_of_range', value=f'{v:g}')}|0..10000 USD")
        return self


def _field_of(err: dict) -> str:
    loc = [str(x) for x in err.get("loc", ())]
    name = ".".join(loc)
    return {"price_amount": "price.amount", "price_term_months": "price.term_months", "cpu_cores": "cpu.cores",
            "net_gbps": "network.gbps_per_node", "ram_gib": "ram_gb", "nvme_gib": "nvme",
            "gpu_memory_gib": "gpu_memory_gb", "billing_granularity_s": "billing"}.get(name, name)


def _accepted(err: dict) -> list[str] | None:
    ctx = err.get("ctx") or {}
    parts = []
    for key, op in (("gt", ">"), ("ge", ">="), ("lt", "<"), ("le", "<=")):
        if key in ctx:
            parts.append(f"{op} {ctx[key]:g}" if isinstance(ctx[key], int | float) else f"{op} {ctx[key]}")
    if err.get("type") in ("missing", "string_too_short"):
        return [Msg("quote.acc.non_empty")]
    if err.get("type") == "finite_number":
        return [Msg("quote.acc.finite")]
    return [join(Msg("quote.acc.and"), parts)] if parts else None


def check_quote(values: dict[str, Any]) -> list[tuple[str, str, list[str] | None]]:
    """Every field of `values` outside its range, as (field, message, accepted); [] when all are fine."""
    try:
        QuoteSchema.model_validate(values)
    except ValidationError as e:
        out = []
        for err in e.errors():
            msg = str(err.get("msg", ""))
            if err.get("type") == "value_error" and msg.count("|") >= 2:
                fld, text, acc = msg.removeprefix("Value error, ").split("|", 2)
                out.append((fld, text, [acc]))
                continue
            fld = _field_of(err)
            if err.get("type") == "missing":
                out.append((fld, Msg("quote.e.required"), _accepted(err)))
                continue
            got = err.get("input")
            shown = f"{got:g}" if isinstance(got, float) else repr(got)[:40]
            out.append((fld, Msg("quote.e.out_of_range", value=shown), _accepted(err)))
        return out
    return []


def check_price(price: Any, gpu_count: float | None, form: str | None,
                overrides: dict[str, float] | None) -> list[tuple[str, str, list[str] | None]]:
    """The normalised price (the report's own normaliser, at utilisation 1) must be a plausible one."""
    from gpuquote.offers.forms import normalise_price

    if form == "purchase" or price is None or price.per == "once" and not price.term_months:
        return []
    try:
        n = normalise_price(price, gpu_count, form=form, utilisation=1.0, overrides=overrides)
    except BadInput as e:
        return [(e.field or "price", str(e), e.accepted)]
    if n.usd_per_gpu_hour is not None and n.usd_per_gpu_hour > MAX_USD_PER_GPU_HOUR:
        return [("price.amount", t("hostile.price_absurd", amount=f"{price.amount:g}", currency=price.currency,
                                   per=price.per, usd=f"{n.usd_per_gpu_hour:,.0f}"),
                 [f"<= {MAX_USD_PER_GPU_HOUR:g} USD per GPU-hour (a typo?)"])]
    return []
