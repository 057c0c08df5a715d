"""CSV for every list-shaped API view (`?format=csv`): offers (streamed), summary, plan, quote check, TCO,
history and the GPU catalog. One row per list item; nested mappings flattened as `a.b`, lists joined by " | ".
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator
from typing import Any

from fastapi.responses import Response, StreamingResponse

# The CLI's `gpuquote offers --csv` columns (tests/test_web_api.py checks the two stay byte-identical).
OFFER_COLUMNS = ["offer_id", "provider", "region", "sku", "gpu_id", "gpu_count", "gpu_memory_gib", "gpu_exclusive",
                 "form_factor", "intra_node", "vcpus", "ram_gib", "nvme_gib", "inter_node_kind", "inter_node_gbps",
                 "price_amount", "price_currency", "price_per", "spot", "usd_per_gpu_hour", "usd_per_node_hour",
                 "billing_granularity_s", "source", "fetched_at", "freshness", "form", "nvme_write_gbs"]
# The CLI's `gpuquote plan --csv` columns (cli/plan_cmd.py; web does not import cli, see the layers).
PLAN_COLUMNS = ["offer_id", "provider", "sku", "region", "gpu_id", "gpus", "nodes", "spot", "time_hours",
                "total_cost_usd", "usd_per_gpu_hour", "usd_per_billion_tokens", "usd_per_million_tokens", "bound",
                "pareto", "warnings", "section", "usd_per_million_output_tokens", "usd_per_1k_requests"]
QUOTE_COLUMNS = ["id", "vendor", "gpu", "gpu_id", "gpu_count", "form", "unit", "exclusive", "region", "spot",
                 "price_text", "utilisation", "usd_per_gpu_hour", "usd_per_node_hour", "usd_per_node_month",
                 "committed", "commitment_usd", "comparable_with", "differs_from", "warnings"]
TCO_COLUMNS = ["id", "vendor", "gpu_id", "gpu_count", "price_text", "usd_per_gpu_hour", "tco.total_usd", "tco.years",
               "rent_id", "rent_price_text", "rent_usd_per_gpu_hour", "comparable", "saving_usd",
               "cheaper_at_utilisation", "break_even_utilisation", "break_even_months"]
HISTORY_COLUMNS = ["day", "provider", "min_usd_per_gpu_hour", "median_usd_per_gpu_hour", "max_usd_per_gpu_hour",
                   "offers", "snapshots", "gpu_ids", "sources"]


def cell(v: Any) -> Any:
    if v is None:
        return ""
    if isinstance(v, list | tuple):
        return " | ".join(str(cell(x)) for x in v)
    if isinstance(v, dict):
        return "; ".join(f"{k}={cell(x)}" for k, x in v.items())
    return v


def flatten(row: dict, prefix: str = "") -> dict:
    out: dict = {}
    for k, v in row.items():
        if isinstance(v, dict) and not prefix:
            out.update(flatten(v, f"{k}."))
        out[prefix + k] = v
    return out


def lines(rows: Iterable[dict], columns: list[str]) -> Iterator[str]:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    yield buf.getvalue()
    for r in rows:
        buf.seek(0)
        buf.truncate()
        w.writerow([cell(r.get(c)) for c in columns])
        yield buf.getvalue()


def text(rows: Iterable[dict], columns: list[str]) -> str:
    return "".join(lines(rows, columns))


def response(rows: Iterable[dict], columns: list[str], name: str, stream: bool = False) -> Response:
    headers = {"content-disposition": f'attachment; filename="gpuquote-{name}.csv"'}
    if stream:
        return StreamingResponse(_chunks(lines(rows, columns)), media_type="text/csv; charset=utf-8",
                                 headers=headers)
    return Response(text(rows, columns), media_type="text/csv; charset=utf-8", headers=headers)


def _chunks(it: Iterator[str], size: int = 64 * 1024) -> Iterator[bytes]:
    """Group CSV lines into ~64 KiB chunks (one write per line would cost more than the rows themselves)."""
    parts: list[str] = []
    n = 0
    for s in it:
        parts.append(s)
        n += len(s)
        if n >= size:
            yield "".join(parts).encode("utf-8")
            parts, n = [], 0
    if parts:
        yield "".join(parts).encode("utf-8")


def offer_rows(offers: Iterable[dict]) -> Iterator[dict]:
    for r in offers:
        d = dict(r)
        d.update(inter_node_kind=r["inter_node"]["kind"], inter_node_gbps=r["inter_node"]["gbps_per_node"],
                 price_amount=r["price"]["amount"], price_currency=r["price"]["currency"],
                 price_per=r["price"]["per"])
        yield d


def tco_rows(result: dict) -> Iterator[dict]:
    for p in result.get("purchases", []):
        base = flatten({k: v for k, v in p.items() if k not in ("vs", "sweep")})
        for v in p.get("vs") or [{}]:
            yield {**base, **v}


def gpu_columns(gpus: list[dict]) -> list[str]:
    cols: list[str] = []
    for g in gpus:
        cols += [k for k in g if k not in cols]
    return cols


__all__ = ["HISTORY_COLUMNS", "OFFER_COLUMNS", "PLAN_COLUMNS", "QUOTE_COLUMNS", "TCO_COLUMNS", "flatten",
           "gpu_columns", "offer_rows", "response", "tco_rows", "text"]
