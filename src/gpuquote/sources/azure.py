"""Azure Retail Prices API (no auth) -> Offers.

`retailPrice` is USD (or `currencyCode`) per `unitOfMeasure` ("1 Hour") for the whole VM. The API
carries no GPU facts: the VM size -> GPU, count, vCPUs, RAM table below is hand-kept from Azure's
size pages (one URL per series); interconnect and network come from data/instances.yaml. Spot rows
are the same size with a meter ending in "Spot"; "Low Priority" (retired), Windows, reservation
and dev/test rows are skipped with a counted reason.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime

from gpuquote.offers import InterNode, Price
from gpuquote.sources.base import ParseResult, gpu_fields
from gpuquote.sources.common import (
    add_unique,
    build,
    currency_or_skip,
    fact_notes,
    load_json,
    price_or_skip,
    records,
)
from gpuquote.sources.http import Http, Raw

NAME = "azure"
ENDPOINT = "https://prices.azure.com/api/retail/prices"
API_VERSION = "2023-01-01-preview"
MAX_PAGES = 200  # 1,000 items a page
DOCS = "https://learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/"
# armSkuName -> (GPU name for the alias resolver, GPUs, vCPUs, RAM GiB, size page under DOCS)
SIZES: dict[str, tuple[str, float, int, float, str]] = {
    "Standard_NC24ads_A100_v4": ("A100 80GB PCIe", 1, 24, 220, "nca100v4-series"),
    "Standard_NC48ads_A100_v4": ("A100 80GB PCIe", 2, 48, 440, "nca100v4-series"),
    "Standard_NC96ads_A100_v4": ("A100 80GB PCIe", 4, 96, 880, "nca100v4-series"),
    "Standard_ND96asr_v4": ("A100 40GB SXM4", 8, 96, 900, "nda100v4-series"),
    "Standard_ND96amsr_A100_v4": ("A100 80GB SXM4", 8, 96, 1900, "ndma100v4-series"),
    "Standard_ND96isr_H100_v5": ("H100 80GB SXM5", 8, 96, 1900, "ndh100v5-series"),
    "Standard_ND96isr_H200_v5": ("H200 SXM", 8, 96, 1850, "nd-h200-v5-series"),
    "Standard_ND96isr_MI300X_v5": ("MI300X", 8, 96, 1850, "ndmi300xv5-series"),
    "Standard_NC40ads_H100_v5": ("H100 NVL", 1, 40, 320, "nch100v5-series"),
    "Standard_NCC40ads_H100_v5": ("H100 NVL", 1, 40, 320, "nch100v5-series"),
    "Standard_NC80adis_H100_v5": ("H100 NVL", 2, 80, 640, "nch100v5-series"),
    "Standard_ND40rs_v2": ("V100 32GB SXM2", 8, 40, 672, "ndv2-series"),
    "Standard_NC6s_v3": ("V100 16GB PCIe", 1, 6, 112, "ncv3-series"),
    "Standard_NC12s_v3": ("V100 16GB PCIe", 2, 12, 224, "ncv3-series"),
    "Standard_NC24s_v3": ("V100 16GB PCIe", 4, 24, 448, "ncv3-series"),
    "Standard_NC24rs_v3": ("V100 16GB PCIe", 4, 24, 448, "ncv3-series"),
    "Standard_NC4as_T4_v3": ("T4", 1, 4, 28, "ncast4v3-series"),
    "Standard_NC8as_T4_v3": ("T4", 1, 8, 56, "ncast4v3-series"),
    "Standard_NC16as_T4_v3": ("T4", 1, 16, 110, "ncast4v3-series"),
    "Standard_NC64as_T4_v3": ("T4", 4, 64, 440, "ncast4v3-series"),
    # NVads A10 v5: fractional sizes are a time-shared slice of one A10 (1/6, 1/3, 1/2).
    "Standard_NV6ads_A10_v5": ("A10", 1 / 6, 6, 55, "nvadsa10v5-series"),
    "Standard_NV12ads_A10_v5": ("A10", 1 / 3, 12, 110, "nvadsa10v5-series"),
    "Standard_NV18ads_A10_v5": ("A10", 1 / 2, 18, 220, "nvadsa10v5-series"),
    "Standard_NV36ads_A10_v5": ("A10", 1, 36, 440, "nvadsa10v5-series"),
    "Standard_NV36adms_A10_v5": ("A10", 1, 36, 880, "nvadsa10v5-series"),
    "Standard_NV72ads_A10_v5": ("A10", 2, 72, 880, "nvadsa10v5-series"),
}
_HOUR = re.compile(r"^\s*1\s*/?\s*hours?\s*$", re.IGNORECASE)
_GPU_SERIES = re.compile(r"^Standard_N[CDVG]", re.IGNORECASE)


def fetch(http: Http, env: Mapping[str, str]) -> list[Raw]:
    """All consumption meters of the GPU sizes above, every region, following NextPageLink."""
    sizes = " or ".join(f"armSkuName eq '{s}'" for s in SIZES)
    flt = f"serviceName eq 'Virtual Machines' and priceType eq 'Consumption' and ({sizes})"
    url: str | None = ENDPOINT
    params: dict | None = {"api-version": API_VERSION, "$filter": flt}
    out: list[Raw] = []
    while url and len(out) < MAX_PAGES:
        resp = http.get(url, params=params)
        out.append((f"page-{len(out) + 1:04d}.json", "application/json", resp.content))
        url = (resp.json() or {}).get("NextPageLink")
        params = None  # NextPageLink carries the query
    return out


def parse(raw: list[Raw], fetched_at: datetime) -> list[ParseResult]:
    result = ParseResult(source=NAME, fetched_at=fetched_at)
    items = []
    for r in raw:
        items.extend(records(load_json(NAME, r), ("Items", "items", "value")))
    if not items:
        result.skip("no price items in the response (expected 'Items')")
    best: dict[str, tuple[str, object]] = {}
    for it in items:
        if not isinstance(it, dict):
            result.skip("item is not an object")
            continue
        offer = _offer(it, result, fetched_at)
        if offer is None:
            continue
        start = str(it.get("effectiveStartDate") or "")
        prev = best.get(offer.id)
        if prev is None or start > prev[0]:  # several meters for one size: the latest price wins
            if prev is not None:
                result.corrections["older meter of the same size replaced by a newer one"] += 1
            best[offer.id] = (start, offer)
        else:
            result.corrections["older meter of the same size replaced by a newer one"] += 1
    result.row = None
    add_unique(result, [o for _, o in best.values()])
    return [result]


def _offer(it: dict, result: ParseResult, fetched_at: datetime):
    sku = str(it.get("armSkuName") or "").strip()
    result.row = ", ".join(str(x)[:60] for x in (sku or it.get("skuName") or "?", it.get("armRegionName") or "?"))
    if not sku:
        result.skip("missing armSkuName")
        return None
    size = SIZES.get(sku)
    if size is None:
        result.skip(f"GPU VM size not in the Azure table: {sku}" if _GPU_SERIES.match(sku) else "not a GPU VM size")
        return None
    kind = str(it.get("type") or it.get("priceType") or "Consumption")
    if kind != "Consumption":
        result.skip(f"{kind} price (only pay-as-you-go kept)")
        return None
    if "windows" in str(it.get("productName") or "").lower():
        result.skip("Windows licence included (Linux price kept)")
        return None
    meter = f"{it.get('meterName') or ''} {it.get('skuName') or ''}".lower()
    if "low priority" in meter:
        result.skip("Low Priority meter (retired; Spot kept)")
        return None
    spot = "spot" in meter
    unit = str(it.get("unitOfMeasure") or "")
    if not _HOUR.match(unit):
        result.skip(f"unit '{unit}' (expected '1 Hour')")
        return None
    price = price_or_skip(result, it.get("retailPrice"), "retailPrice")
    currency = currency_or_skip(result, it.get("currencyCode"))
    if price is None or currency is None:
        return None
    gpu_name, count, vcpus, ram, page = size
    g = gpu_fields(NAME, sku, gpu_name, count)
    if g is None:
        result.skip(f"GPU not in the catalog: {gpu_name}")
        return None
    facts = g.facts
    fractional = count < 1
    notes = fact_notes(g) + [f"size facts: {DOCS}{page}"]
    if fractional:
        notes.append(f"fractional GPU: a {count:.3g} time-shared slice of one {gpu_name}")
    region = str(it.get("armRegionName") or it.get("location") or "unknown").strip() or "unknown"
    return build(
        result, provider=NAME, region=region, sku=sku, gpu_id=g.gpu_id, gpu_count=count,
        gpu_exclusive="shared" if fractional else True, form_factor=g.form_factor, intra_node=g.intra_node,
        vcpus=vcpus, ram_gib=ram, nvme_gib=facts.nvme_gib if facts else None,
        inter_node=InterNode(kind=facts.inter_node_kind or "unknown", gbps_per_node=facts.inter_node_gbps)
        if facts else InterNode(),
        price=Price(amount=price, currency=currency, per="hour"),
        spot=spot, covers=["hosting", "power"], source=NAME, fetched_at=fetched_at,
        gpu_memory_gib=g.gpu_memory_gib, notes=notes,
    )
