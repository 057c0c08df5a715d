"""Total cost of ownership of a purchased server, and buy-versus-rent break-even.

Formulas (documented with examples in docs/quotes.md; all money in USD at the shipped dated rates):

    H   = years x 8760                  hours in the depreciation period
    Hu  = H x U                         hours used at utilisation U
    R   = price x residual_fraction      resale value at the end
    power    = power_kw x pue x Hu x electricity  +  idle_power_kw x pue x (H - Hu) x electricity
    hosting  = hosting per month x 12 x years  (or per year x years)      owed whether used or not
    capital  = annuity (default): yearly payment on a loan of the price less the discounted resale,
               times years, minus (price - R); `average`: (price + R) / 2 x rate x years;
               `simple`: price x rate x years
    total    = price - R + power + hosting + maintenance + capital
    usd_per_node_hour = total / Hu ;  usd_per_gpu_hour = usd_per_node_hour / gpu_count

power_kw is the server's draw under load. Idle hours draw `idle_power_kw` (default 0: an idle server
is assumed powered down or its idle draw folded into hosting); set it to charge idle draw too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from gpuquote.errors import BadInput
from gpuquote.i18n import Msg, Text
from gpuquote.offers.currency import Rate, to_usd
from gpuquote.offers.forms import HOURS_PER_MONTH, HOURS_PER_YEAR, check_utilisation
from gpuquote.offers.model import Price

DEFAULT_YEARS = 4.0
DEFAULT_PUE = 1.0
DEFAULT_RESIDUAL = 0.0
CAPITAL_METHODS = ("annuity", "average", "simple")
RECURRING_PER = ("month", "year")


@dataclass(frozen=True)
class Money:
    """An amount in a currency per a unit (kwh for electricity; month or year for hosting)."""

    amount: float
    currency: str
    per: str

    def to_dict(self) -> dict:
        return {"amount": self.amount, "currency": self.currency, "per": self.per}


@dataclass(frozen=True)
class TcoSpec:
    """TCO inputs of a purchase quote; None means not stated (a documented default is used and reported)."""

    power_kw: float | None = None
    idle_power_kw: float = 0.0
    pue: float | None = None
    electricity: Money | None = None  # per kwh
    hosting: Money | None = None  # per month | year
    maintenance: Money | None = None  # per month | year (support contract, spares)
    years: float | None = None
    residual_fraction: float | None = None
    cost_of_capital: float | None = None  # annual rate, e.g. 0.06
    capital_method: str = "annuity"

    def missing(self) -> list[str]:
        """Inputs without which the TCO is incomplete (the checklist asks the user for them)."""
        out = []
        for name in ("power_kw", "pue", "electricity", "hosting", "years"):
            if getattr(self, name) is None:
                out.append(name)
        return out

    def to_dict(self) -> dict:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__}
        for k in ("electricity", "hosting", "maintenance"):
            if d[k] is not None:
                d[k] = d[k].to_dict()
        return d


@dataclass
class TcoResult:
    price_usd: float
    residual_usd: float
    power_usd: float
    hosting_usd: float
    maintenance_usd: float
    capital_usd: float
    total_usd: float
    years: float
    hours_total: float
    hours_used: float
    utilisation: float
    gpu_count: float | None
    usd_per_node_hour: float
    usd_per_gpu_hour: float | None
    fixed_usd: float  # part of total independent of utilisation
    variable_usd_at_full_use: float  # total = fixed + variable x U
    running_usd_per_month_at_full_use: dict[str, float]
    rates: list[Rate]
    assumptions: list[str] = field(default_factory=list)
    formula: str = ""

    def to_dict(self) -> dict:
        d = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "rates"}
        d["rates"] = [r.to_dict() for r in self.rates]
        return d


def _usd_per(m: Money | None, overrides: dict[str, float] | None, rates: list[Rate]) -> float:
    if m is None:
        return 0.0
    usd, r = to_usd(m.amount, m.currency, overrides)
    if r not in rates:
        rates.append(r)
    return usd


def _monthly(m: Money | None, overrides, rates: list[Rate], name: str) -> float:
    usd = _usd_per(m, overrides, rates)
    if m is None:
        return 0.0
    if m.per == "month":
        return usd
    if m.per == "year":
        return usd / 12.0
    raise BadInput(f"tco.{name}.per: '{m.per}'; accepted: {', '.join(RECURRING_PER)}", field=f"tco.{name}.per",
                   accepted=list(RECURRING_PER))


def capital_cost(price_usd: float, residual_usd: float, rate: float | None, years: float,
                 method: str = "annuity") -> float:
    """Interest paid on the money tied up in the server over the period (0 without a rate)."""
    if not rate:
        return 0.0
    if method == "average":  # interest on the average book value (straight-line depreciation)
        return (price_usd + residual_usd) / 2.0 * rate * years
    if method == "simple":  # interest on the full price for the whole period (an upper bound)
        return price_usd * rate * years
    # Annuity: equal yearly payments that repay the price less the resale's present value.
    pv = price_usd - residual_usd / (1 + rate) ** years
    # the annuity factor (1 - (1+r)^-Y) / r first: a ratio of two small numbers stays exact for tiny rates (pv * r
    # would underflow for a subnormal rate and give nonsense), and it tends to Y as r -> 0
    factor = -math.expm1(-years * math.log1p(rate)) / rate
    # interest is never negative; rounding of a near-zero difference must not make a dearer server cheaper
    return max(0.0, pv / factor * years - (price_usd - residual_usd))


def compute_tco(price: Price, spec: TcoSpec | None, gpu_count: float | None, *, utilisation: float = 1.0,
                overrides: dict[str, float] | None = None) -> TcoResult:
    """The TCO of a one-off purchase over `years` at utilisation U, per node-hour and per GPU-hour used."""
    u = check_utilisation(utilisation)
    spec = spec or TcoSpec()
    rates: list[Rate] = []
    assumptions: list[str] = []
    p_usd, r0 = to_usd(price.amount, price.currency, overrides)
    rates.append(r0)
    years = spec.years if spec.years is not None else DEFAULT_YEARS
    if spec.years is None:
        assumptions.append(Msg("tco.a.years", years=f"{DEFAULT_YEARS:g}"))
    pue = spec.pue if spec.pue is not None else DEFAULT_PUE
    if spec.pue is None:
        assumptions.append(Msg("tco.a.pue", pue=f"{DEFAULT_PUE:g}"))
    resid_f = spec.residual_fraction if spec.residual_fraction is not None else DEFAULT_RESIDUAL
    if spec.residual_fraction is None:
        assumptions.append(Msg("tco.a.residual"))
    power_kw = spec.power_kw or 0.0
    if spec.power_kw is None:
        assumptions.append(Msg("tco.a.power_kw"))
    e = _usd_per(spec.electricity, overrides, rates)
    if spec.electricity is None:
        assumptions.append(Msg("tco.a.electricity"))
    elif spec.electricity.per != "kwh":
        raise BadInput(f"tco.electricity.per: '{spec.electricity.per}'; accepted: kwh", field="tco.electricity.per",
                       accepted=["kwh"])
    host_m = _monthly(spec.hosting, overrides, rates, "hosting")
    if spec.hosting is None:
        assumptions.append(Msg("tco.a.hosting"))
    maint_m = _monthly(spec.maintenance, overrides, rates, "maintenance")

    h_total = years * HOURS_PER_YEAR
    h_used = h_total * u
    residual = p_usd * resid_f
    power_load = power_kw * pue * e * h_total  # at U = 1
    power_idle = spec.idle_power_kw * pue * e * h_total  # if idle all the time
    power = power_load * u + power_idle * (1 - u)
    months = years * 12.0
    hosting = host_m * months
    maintenance = maint_m * months
    capital = capital_cost(p_usd, residual, spec.cost_of_capital, years, spec.capital_method)
    total = p_usd - residual + power + hosting + maintenance + capital
    fixed = p_usd - residual + hosting + maintenance + capital + power_idle
    node_h = total / h_used
    running = {"hosting": host_m, "maintenance": maint_m,
               "power": power_kw * pue * e * HOURS_PER_MONTH,
               "idle_power": spec.idle_power_kw * pue * e * HOURS_PER_MONTH,
               "capital_interest": p_usd * (spec.cost_of_capital or 0.0) / 12.0}
    formula = Text(Msg("tco.f.main", price=f"{p_usd:,.0f}", resale=f"{residual:,.0f}", power=f"{power:,.0f}",
                       hosting=f"{hosting:,.0f}"),
                   Msg("tco.f.maintenance", v=f"{maintenance:,.0f}") if maintenance else "",
                   Msg("tco.f.capital", v=f"{capital:,.0f}") if capital else "",
                   Msg("tco.f.hours", years=f"{years:g}", u=f"{u:g}"),
                   Msg("tco.f.gpus", n=f"{gpu_count:g}") if gpu_count else "")
    return TcoResult(
        price_usd=p_usd, residual_usd=residual, power_usd=power, hosting_usd=hosting, maintenance_usd=maintenance,
        capital_usd=capital, total_usd=total, years=years, hours_total=h_total, hours_used=h_used, utilisation=u,
        gpu_count=gpu_count, usd_per_node_hour=node_h, usd_per_gpu_hour=node_h / gpu_count if gpu_count else None,
        fixed_usd=fixed, variable_usd_at_full_use=power_load - power_idle,
        running_usd_per_month_at_full_use=running, rates=rates, assumptions=assumptions, formula=formula,
    )


def break_even(buy: TcoResult, rent_usd_per_gpu_hour_at_full_use: float, rent_committed: bool) -> dict:
    """Buy versus rent the same number of GPUs over the purchase's depreciation period.

    Over H hours, buy(U) = fixed + variable x U; rent(U) = p x n x H x U for pay-as-you-go, or p x n x H
    (owed whatever the use) for monthly/term rentals, with p the rental's USD per GPU-hour at U = 1.
    The break-even utilisation solves buy(U) = rent(U). Break-even months (at the chosen U): months until
    the purchase price is recovered by the monthly saving (rent per month - running cost per month,
    running = hosting + maintenance + power at U + interest on the price); resale is ignored (conservative).
    """
    n = buy.gpu_count or 0
    if not n:
        return {"break_even_utilisation": None, "buy_cheaper": None, "break_even_months": None,
                "reason": Msg("tco.r.no_gpu_count")}
    h = buy.hours_total
    p = rent_usd_per_gpu_hour_at_full_use
    a_r, b_r = (p * n * h, 0.0) if rent_committed else (0.0, p * n * h)
    a_b, b_b = buy.fixed_usd, buy.variable_usd_at_full_use
    u = buy.utilisation
    rent_total = a_r + b_r * u
    out: dict = {"rent_total_usd": rent_total, "buy_total_usd": buy.total_usd,
                 "saving_usd": rent_total - buy.total_usd, "cheaper_at_utilisation": "buy" if buy.total_usd < rent_total
                 else "rent", "years": buy.years}
    if abs(b_r - b_b) < 1e-12:
        out["break_even_utilisation"] = None
        out["buy_cheaper"] = "always" if a_b < a_r else "never"
    else:
        ustar = (a_b - a_r) / (b_r - b_b)
        if b_r > b_b:  # buying gets relatively cheaper as use grows
            verdict = "always" if ustar <= 0 else "never" if ustar > 1 else "above"
        else:
            verdict = "always" if ustar >= 1 else "never" if ustar <= 0 else "below"
        out["break_even_utilisation"] = ustar if verdict in ("above", "below") else None
        out["break_even_utilisation_unclipped"] = ustar
        out["buy_cheaper"] = verdict
    rm = buy.running_usd_per_month_at_full_use
    own_month = (rm["hosting"] + rm["maintenance"] + rm["power"] * u + rm["idle_power"] * (1 - u)
                 + rm["capital_interest"])
    rent_month = p * n * HOURS_PER_MONTH * (1.0 if rent_committed else u)
    saving = rent_month - own_month
    out["rent_usd_per_month"] = rent_month
    out["own_running_usd_per_month"] = own_month
    out["break_even_months"] = buy.price_usd / saving if saving > 0 else None
    if saving <= 0:
        out["reason"] = Msg("tco.r.never_pays_back")
    return out
