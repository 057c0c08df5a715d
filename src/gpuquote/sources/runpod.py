"""RunPod GraphQL `gpuTypes` (key optional) -> Offers per GPU type, cloud tier and pod size.

Prices are USD per GPU-hour: `securePrice` / `communityPrice` on demand, `secureSpotPrice` /
`communitySpotPrice` interruptible. A pod of n GPUs costs n x the per-GPU price; offers are listed
for n in POD_SIZES up to `maxGpuCount`. The response has no region (RunPod places pods by data
centre at deploy time), so region is "unknown"; `lowestPrice.stockStatus` is the stock signal.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from gpuquote.offers import Price
from gpuquote.sources.base import ParseResult, gpu_fields
from gpuquote.sources.common import add_unique, build, fact_notes, load_json, num, records
from gpuquote.sources.http import Http, Raw

NAME = "runpod"
ENDPOINT = "https://api.runpod.io/graphql"
KEY_ENV = ("RUNPOD_API_KEY",)
POD_SIZES = (1, 2, 4, 8)
QUERY = """query GpuTypes($lowestPriceInput: GpuLowestPriceInput) {
  gpuTypes {
    id displayName manufacturer memoryInGb maxGpuCount secureCloud communityCloud
    securePrice communityPrice secureSpotPrice communitySpotPrice
    lowestPrice(input: $lowestPriceInput) { minimumBidPrice uninterruptablePrice stockStatus }
  }
}"""
TIERS = (("secure", "securePrice", False), ("secure", "secureSpotPrice", True),
         ("community", "communityPrice", False), ("community", "communitySpotPrice", True))


LOWEST = (("lowest", "uninterruptablePrice", False), ("lowest", "minimumBidPrice", True))


def _tiers(t: dict, lowest: dict) -> tuple[tuple[str, str, bool], ...]:
    """Per-tier price fields; a response that only carries `lowestPrice` (the documented
    `gpuTypes { lowestPrice { minimumBidPrice uninterruptablePrice } }` query) falls back to it."""
    if any(t.get(f) is not None for _, f, _ in TIERS):
        return TIERS
    return LOWEST if any(lowest.get(f) is not None for _, f, _ in LOWEST) else TIERS


def fetch(http: Http, env: Mapping[str, str]) -> list[Raw]:
    key = next((env[k] for k in KEY_ENV if env.get(k)), None)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    body = {"query": QUERY, "variables": {"lowestPriceInput": {"gpuCount": 1}}}
    resp = http.post(ENDPOINT, json=body, headers=headers, auth_hint=KEY_ENV[0])
    return [("gpuTypes.json", "application/json", resp.content)]


def _types(doc) -> list:
    if isinstance(doc, dict) and "id" in doc and ("securePrice" in doc or "communityPrice" in doc):
        return [doc]  # one type, as runpod.get_gpu() returns it
    return records(doc, ("data", "gpuTypes"))


def parse(raw: list[Raw], fetched_at: datetime) -> list[ParseResult]:
    result = ParseResult(source=NAME, fetched_at=fetched_at)
    types = []
    for r in raw:
        doc = load_json(NAME, r)
        if isinstance(doc, dict) and doc.get("errors") and not doc.get("data"):
            msg = str((doc["errors"][0] or {}).get("message", "error"))[:120] if isinstance(doc["errors"], list) else ""
            result.skip(f"GraphQL error: {msg}")
            continue
        types.extend(_types(doc))
    if not types:
        result.skip("no GPU types in the response (expected data.gpuTypes)")
    out = []
    for t in types:
        if not isinstance(t, dict):
            result.skip("GPU type is not an object")
            continue
        out.extend(_offers(t, result, fetched_at))
    add_unique(result, out)
    return [result]


def _offers(t: dict, result: ParseResult, fetched_at: datetime) -> list:
    name = str(t.get("id") or t.get("displayName") or "").strip()
    if not name:
        result.skip("missing id")
        return []
    # memoryInGb is GB per GPU, the card's label (tests/fixtures/runpod/gpuTypes.json: "NVIDIA A100 80GB PCIe" 80)
    mem = num(t.get("memoryInGb"))
    max_n = int(num(t.get("maxGpuCount")) or 1)
    display = str(t.get("displayName") or "").strip() or None
    gpu_name = name
    probe = gpu_fields(NAME, name, name, 1, memory_gib=mem, extra_names=(display,))
    if probe is None and display:
        # Real ids carry board suffixes the catalog does not know ("NVIDIA B300 SXM6 AC"); the display
        # name ("B300") is the plain model.
        gpu_name = display
        probe = gpu_fields(NAME, name, display, 1, memory_gib=mem, extra_names=(name,))
    if probe is None:
        result.skip(f"GPU not in the catalog: {name}")
        return []
    lowest = t.get("lowestPrice") if isinstance(t.get("lowestPrice"), dict) else {}
    stock = lowest.get("stockStatus")
    out = []
    priced = False
    for tier, field, spot in _tiers(t, lowest):
        if t.get(f"{tier}Cloud") is False:
            continue
        value = t.get(field) if tier != "lowest" else lowest.get(field)
        if value is None:
            continue  # this tier is not sold for this GPU
        price = num(value)
        if price is None:
            result.skip(f"{field} is not a number")
            continue
        if price < 0:
            result.skip(f"negative {field}")
            continue
        if price == 0:
            continue  # RunPod reports 0 for a tier without capacity
        priced = True
        for n in (s for s in POD_SIZES if s <= max_n):
            sku = f"{name} x{n} ({tier})"
            g = gpu_fields(NAME, sku, gpu_name, n, memory_gib=mem, extra_names=(display, name))
            notes = fact_notes(g) + [f"{tier} cloud; price per GPU-hour x {n}" if tier != "lowest" else
                                     f"lowest price over secure and community cloud; per GPU-hour x {n}"]
            if stock:
                notes.append(f"stock (1 GPU): {stock}")
            o = build(result, provider=NAME, region="unknown", sku=sku, gpu_id=g.gpu_id, gpu_count=n,
                      form_factor=g.form_factor, intra_node=g.intra_node, spot=spot,
                      price=Price(amount=round(price * n, 6), currency="USD", per="hour"),
                      covers=["hosting", "power"], source=NAME, fetched_at=fetched_at,
                      available=(stock is not None) if n == 1 and "lowestPrice" in t else None,
                      gpu_memory_gib=g.gpu_memory_gib, notes=notes)
            if o:
                out.append(o)
    if not priced:
        result.skip("missing price (no tier priced)")
    return out
