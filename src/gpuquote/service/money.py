"""Show money in another currency: every USD figure of a result gets a twin in that currency.

The USD keys stay (DESIGN.md section 4 contracts: add keys, never rename or drop): beside `total_cost_usd`
comes `total_cost_cny`, beside `usd_per_gpu_hour` comes `cny_per_gpu_hour`, and every USD value inside a
breakdown gets its twin too. The result gains `currency` {code, usd_per_unit, date, source}: the dated rate
that was used (or the --rate override), so a reader can redo the sum.
"""

from __future__ import annotations

import os
from typing import Any

from gpuquote.errors import BadInput
from gpuquote.i18n import t
from gpuquote.offers.currency import canonical, currencies, rate

ENV = "GPUQUOTE_CURRENCY"
#: USD keys that are inputs or rates, not amounts of money spent: no twin.
_NO_TWIN = {"usd_per_unit", "max_price_usd", "budget_usd"}
_SKIP_DICTS = {"filters", "rates", "rate", "currency"}


def chosen(currency: str | None) -> str:
    """The display currency: the option, else $GPUQUOTE_CURRENCY, else USD; BadInput names the field."""
    code = canonical(currency or os.environ.get(ENV, "") or "USD")
    if code != "USD" and code not in currencies():
        raise BadInput(t("money.err.currency", value=currency or os.environ.get(ENV),
                         accepted=", ".join(["USD", *currencies()])), field="currency", accepted=["USD", *currencies()])
    return code


def twin_key(key: str, code: str) -> str | None:
    parts = key.split("_")
    if "usd" not in parts or key in _NO_TWIN:
        return None
    return "_".join(code.lower() if p == "usd" else p for p in parts)


def _walk(node: Any, code: str, per_usd: float) -> Any:
    if isinstance(node, list):
        for x in node:
            _walk(x, code, per_usd)
        return node
    if not isinstance(node, dict):
        return node
    for k in list(node):
        v = node[k]
        if k == "breakdown" and isinstance(v, dict):  # twins beside it, so sums over a breakdown stay USD-only
            node[f"breakdown_{code.lower()}"] = {twin_key(bk, code) or bk: round(bv * per_usd, 6)
                                                 for bk, bv in v.items() if isinstance(bv, int | float)}
            continue
        if isinstance(v, dict | list):
            if k not in _SKIP_DICTS:
                _walk(v, code, per_usd)
            continue
        tk = twin_key(k, code) if isinstance(k, str) else None
        if tk and tk not in node and isinstance(v, int | float) and not isinstance(v, bool):
            node[tk] = round(v * per_usd, 6)
    return node


def in_currency(data: dict, currency: str | None, overrides: dict[str, float] | None = None) -> dict:
    """Add `<key>_<cur>` twins of every USD amount and the rate used; USD alone leaves data as it is."""
    code = chosen(currency)
    if code == "USD":
        return data
    r = rate(code, overrides)
    _walk(data, code, 1.0 / r.usd_per_unit)
    data["currency"] = {"code": code, **r.to_dict()}
    return data


class Display:
    """Formats USD amounts in the display currency for tables (CLI and web pages)."""

    def __init__(self, data: dict):
        cur = data.get("currency") or {}
        self.code = cur.get("code", "USD")
        self.factor = 1.0 / cur["usd_per_unit"] if cur.get("usd_per_unit") else 1.0
        self.cur = cur

    def amount(self, usd: float | None) -> float | None:
        return None if usd is None else usd * self.factor

    @property
    def symbol(self) -> str:
        return {"USD": "$", "CNY": "¥", "EUR": "€"}.get(self.code, self.code + " ")
