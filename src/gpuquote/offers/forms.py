"""Pricing forms and their normalisation to USD per GPU-hour and per node-hour.

A quote comes in one of five forms; the form says *what* the amount buys, `price.per` says for
*how long*:

- `gpu_hour`: the amount is per GPU (per `per`, usually an hour); everything else is per node.
- `cloud_instance`, `node_rental`, `reserved`: the amount pays for the whole quoted machine
  (all `gpu_count` GPUs) per `per`.
- `purchase`: a one-off price for the machine; its hourly cost comes from the TCO model (offers.tco).

Pay-as-you-go prices (per second, minute or hour, no term) are paid only for the hours used.
A periodic price (day, week, month, year) is owed for the whole period, and a term commitment
(`term_months`) makes the whole term owed whatever `per` says; both are spread over the hours
actually used: period hours x utilisation (DESIGN.md section 3: a month is 730 h, a year 8,760 h).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuquote.errors import BadInput
from gpuquote.i18n import Msg
from gpuquote.offers.currency import Rate, to_usd
from gpuquote.offers.model import Price
from gpuquote.offers.normalize import HOURS_PER

FORMS = ("gpu_hour", "cloud_instance", "node_rental", "reserved", "purchase")
#: `per` values a quote may use (Price also accepts them all).
PERS = ("second", "minute", "hour", "day", "week", "month", "year", "once")
PAY_AS_YOU_GO = ("second", "minute", "hour")
HOURS_PER_MONTH = HOURS_PER["month"]
HOURS_PER_YEAR = HOURS_PER["year"]

#: Billing granularity words -> seconds (a month is 730 h).
GRANULARITY_S = {"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 7 * 86400,
                 "month": int(HOURS_PER_MONTH * 3600), "year": int(HOURS_PER_YEAR * 3600)}


def offer_form(form: str | None, price: Price) -> str:
    """rental | term | purchase: the price form an Offer carries (like for like needs it equal)."""
    if form == "purchase":
        return "purchase"
    return "term" if form == "reserved" or price.term_months else "rental"


def check_utilisation(utilisation: float) -> float:
    """0 < U <= 1, else BadInput naming the field."""
    try:
        u = float(utilisation)
    except (TypeError, ValueError):
        u = float("nan")
    if not 0 < u <= 1:
        raise BadInput(f"--utilisation: {utilisation!r} is out of range; accepted: a number in (0, 1], e.g. 0.7",
                       field="utilisation", accepted=["(0, 1]"])
    return u


def is_committed(price: Price) -> bool:
    """True when the cost is owed whether the GPUs are used or not (periodic price or a term)."""
    return price.per not in PAY_AS_YOU_GO or bool(price.term_months)


def price_basis(form: str | None) -> str:
    """'gpu' when the amount is per GPU (form gpu_hour), else 'node' (the whole quoted machine)."""
    return "gpu" if form == "gpu_hour" else "node"


@dataclass
class Normalised:
    """A price turned into USD per hour of use, with the figures that explain it."""

    usd_per_node_hour: float | None
    usd_per_gpu_hour: float | None
    rate: Rate
    basis: str  # gpu | node
    committed: bool
    formula: str
    commitment_usd: float | None = None  # total owed for the term (node), when a term is stated
    notes: list[str] = field(default_factory=list)


def normalise_price(price: Price, gpu_count: float | None, *, form: str | None = None, utilisation: float = 1.0,
                    overrides: dict[str, float] | None = None) -> Normalised:
    """USD per node-hour and per GPU-hour of *use* for a rental price (not `purchase`: see offers.tco).

    usd_per_hour = amount_usd / hours(per)              (pay as you go)
                 = amount_usd / hours(per) / U          (periodic price, or any price under a term)
    a prepaid term (per: once + term_months): amount_usd / (term_months x 730) / U.
    """
    u = check_utilisation(utilisation)
    usd, r = to_usd(price.amount, price.currency, overrides)
    basis = price_basis(form)
    notes: list[str] = []
    commitment = None
    if price.per == "once":
        if not price.term_months:
            raise BadInput("price.per: 'once' without term_months is a purchase; accepted: form: purchase with a "
                           "tco section, or price.term_months for a prepaid term", field="price.per",
                           accepted=["form: purchase", "price.term_months"])
        hours = price.term_months * HOURS_PER_MONTH
        per_hour = usd / hours / u
        commitment = usd
        formula = f"{usd:.6g} USD / ({price.term_months:g} months x 730 h x U={u:g})"
    else:
        per_hour = usd / HOURS_PER[price.per]
        committed = is_committed(price)
        formula = f"{usd:.6g} USD / {HOURS_PER[price.per]:g} h"
        if committed:
            per_hour /= u
            formula += f" / U={u:g}"
        if price.term_months:
            commitment = usd / HOURS_PER[price.per] * price.term_months * HOURS_PER_MONTH
            notes.append(Msg("quote.f.term_owed_gpu" if basis == "gpu" else "quote.f.term_owed",
                             months=f"{price.term_months:g}", usd=f"{commitment:,.0f}"))
    if basis == "gpu":
        gpu_h = per_hour
        node_h = per_hour * gpu_count if gpu_count else None
        if commitment is not None and gpu_count:
            commitment *= gpu_count
        formula = f"per GPU: {formula}"
    else:
        node_h = per_hour
        gpu_h = per_hour / gpu_count if gpu_count else None
        formula = f"per node: {formula}" + (f"; per GPU: / {gpu_count:g}" if gpu_count else "")
    return Normalised(node_h, gpu_h, r, basis, is_committed(price), formula, commitment, notes)


# ---- Chinese-native price spellings (issue 13): "9.5万", "1.2亿", "元/卡/小时", "卡时" ----
#: Chinese number multipliers a quote may append to an amount.
CN_MULTIPLIERS = {"万": 1e4, "亿": 1e8, "千": 1e3, "k": 1e3, "K": 1e3}
#: Chinese period words -> `per`.
CN_PERIODS = {"秒": "second", "分钟": "minute", "分": "minute", "小时": "hour", "时": "hour", "天": "day",
              "日": "day", "周": "week", "星期": "week", "月": "month", "年": "year", "一次性": "once"}
_CN_CURRENCY_MARKS = ("人民币", "元", "¥", "￥", "RMB", "rmb")


def parse_cn_amount(text: str) -> tuple[float, str | None]:
    """'9.5万' -> (95000.0, None); '1.2亿元' -> (1.2e8, 'CNY'); '¥3,500' -> (3500.0, 'CNY').

    The currency is returned when the text names it (元, 人民币, ¥, RMB). ValueError for anything else.
    """
    s = str(text).strip().replace(",", "").replace("，", "").replace(" ", "").replace("_", "")
    cur = None
    for mark in _CN_CURRENCY_MARKS:
        if mark in s:
            cur = "CNY"
            s = s.replace(mark, "")
    mult = 1.0
    while s and s[-1] in CN_MULTIPLIERS:
        mult *= CN_MULTIPLIERS[s[-1]]
        s = s[:-1]
    x = float(s)  # ValueError names nothing: the caller names the field
    if x != x or x in (float("inf"), float("-inf")):
        raise ValueError(text)
    return x * mult, cur


def parse_cn_per(text: str) -> tuple[str, bool, str | None]:
    """A Chinese or slash-separated period -> (per, per_gpu, currency).

    '月' -> ('month', False, None); '元/卡/小时' -> ('hour', True, 'CNY'); '卡时' / '卡·时' -> ('hour', True, None);
    '每卡每小时' -> ('hour', True, None). ValueError when no period is recognised.
    """
    s = str(text).strip().replace("每", "/").replace("·", "").replace(" ", "")
    cur = "CNY" if any(m in s for m in _CN_CURRENCY_MARKS) else None
    for mark in _CN_CURRENCY_MARKS:
        s = s.replace(mark, "")
    per_gpu = "卡" in s or "GPU" in s.upper()
    s = s.replace("卡", "").replace("GPU", "").replace("gpu", "")
    parts = [p for p in s.split("/") if p] or ([] if not per_gpu else ["时"])
    for p in reversed(parts):
        if p in CN_PERIODS:
            return CN_PERIODS[p], per_gpu, cur
        if p in PERS:
            return p, per_gpu, cur
    raise ValueError(text)
