"""Output helpers shared by the commands: JSON that equals the API body, Rich tables, CSV."""

from __future__ import annotations

import sys
from typing import Any

from gpuquote.service.encoding import _default, dumps  # noqa: F401  (shared with the web API)


def print_json(data: Any) -> None:
    sys.stdout.write(dumps(data) + "\n")


def print_csv(rows: list[dict], columns: list[str]) -> None:
    import csv

    w = csv.DictWriter(sys.stdout, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in columns})


def console():
    from rich.console import Console

    return Console()


def fmt_num(v: Any, digits: int = 2, unknown: str = "?") -> str:
    if v is None:
        return unknown
    if isinstance(v, float):
        return f"{v:,.{digits}f}"
    return str(v)


def currency_note(data: dict) -> str | None:
    """The line that states the display currency's rate and date (None when amounts are USD)."""
    from gpuquote.i18n import t

    cur = data.get("currency")
    if not cur:
        return None
    import re

    from gpuquote.i18n import current_lang

    source = cur["source"].split(" (")[0]
    link = re.search(r"https?://[^\s)]+", cur["source"])
    if current_lang() != "en" and link:  # the source's own words are English: other languages show its link
        source = link.group(0)
    return t("money.rate", code=cur["code"], rate=f"{cur['usd_per_unit']:.6g}", source=source, date=cur["date"])


def region_label(region: str | None) -> str:
    """A region as the reader reads it: a marketplace's 'Sichuan, CN, AS' shows its country in the reader's
    language ('中国' under zh-CN); a cloud's region id (us-east-1, cn-beijing) stays as it is."""
    import re

    from gpuquote.i18n import catalog, current_lang

    r = str(region or "?")
    lang = current_lang()
    m = re.fullmatch(r"(.*), ([A-Z]{2}), ([A-Z]{2})", r)
    if lang == "en" or not m:
        return r
    return catalog(lang).get(f"region.cc.{m.group(2)}") or m.group(2)
