"""vast.ai offer search (marketplace; key optional) -> one Offer per ask, plus its interruptible twin.

`dph_total` is USD per hour for the whole ask (all `num_gpus`, with the allocated disk); `min_bid`
is the lowest interruptible bid. `gpu_ram` and `cpu_ram` are MB. The GPU name ("A100 SXM4",
"H100 PCIE") plus the per-GPU memory pins the SKU; `bw_nvlink` > 0 says the GPUs share NVLink.
Internet bandwidth is not a cluster fabric, so inter-node stays unknown (noted).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from gpuquote.offers import Price
from gpuquote.sources.base import ParseResult, gpu_fields
from gpuquote.sources.common import (
    add_unique,
    build,
    fact_notes,
    load_json,
    memory_gib_from_mb,
    num,
    price_or_skip,
    records,
)
from gpuquote.sources.http import Http, Raw

NAME = "vast"
ENDPOINT = "https://console.vast.ai/api/v0/bundles/"
KEY_ENV = ("VAST_API_KEY",)
QUERY = {  # the body gpuhunt and vast-cli send; verified datacenter-or-host asks that can be rented now
    "num_gpus": {"gte": 1}, "rentable": {"eq": True}, "rented": {"eq": False}, "verified": {"eq": True},
    "external": {"eq": False}, "order": [["score", "desc"]], "type": "on-demand", "limit": 3000,
    "allocated_storage": 5.0,
}


def fetch(http: Http, env: Mapping[str, str]) -> list[Raw]:
    key = next((env[k] for k in KEY_ENV if env.get(k)), None)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    resp = http.post(ENDPOINT, json=QUERY, headers=headers, auth_hint=KEY_ENV[0])
    return [("bundles.json", "application/json", resp.content)]


def parse(raw: list[Raw], fetched_at: datetime) -> list[ParseResult]:
    result = ParseResult(source=NAME, fetched_at=fetched_at)
    asks = []
    for r in raw:
        asks.extend(records(load_json(NAME, r), ("offers", "asks", "bundles")))
    if not asks:
        result.skip("no offers in the response (expected 'offers')")
    out = []
    for a in asks:
        if not isinstance(a, dict):
            result.skip("offer is not an object")
            continue
        out.extend(_offers(a, result, fetched_at))
    add_unique(result, out)
    return [result]


def _offers(a: dict, result: ParseResult, fetched_at: datetime) -> list:
    name = str(a.get("gpu_name") or "").strip()
    if not name:
        result.skip("missing gpu_name")
        return []
    count = num(a.get("num_gpus"))
    if not count or count <= 0:
        result.skip("missing num_gpus")
        return []
    ask = a.get("id") if a.get("id") is not None else a.get("ask_contract_id")
    if ask is None:
        result.skip("missing offer id")
        return []
    price_raw = a.get("dph_total")
    if price_raw is None and isinstance(a.get("search"), dict):
        price_raw = a["search"].get("totalHour")  # the same quantity, as SkyPilot's fetcher reads it
    price = price_or_skip(result, price_raw, "dph_total")
    if price is None:
        return []
    # gpu_ram is MiB per GPU, as nvidia-smi reports it (tests/fixtures/vast/bundles.json: "4x A100 SXM4" 81920,
    # "2x A100 PCIE" 40960), unlike SkyPilot's vast vms.csv, which sums it over the GPUs (sources/skypilot.py).
    mem = memory_gib_from_mb(a.get("gpu_ram"))
    sku = f"{int(count) if float(count).is_integer() else count}x {name} #{ask}"
    g = gpu_fields(NAME, sku, name, count, memory_gib=mem)
    if g is None:
        result.skip(f"GPU not in the catalog: {name}")
        return []
    intra = g.intra_node
    nvlink = num(a.get("bw_nvlink"))
    if intra == "unknown" and count > 1 and nvlink is not None:
        intra = "nvlink" if nvlink > 0 else "pcie"
    geo = str(a.get("geolocation") or "").strip()
    region = geo.rsplit(",", 1)[-1].strip() if geo else "unknown"
    notes = fact_notes(g)
    if geo:
        notes.append(f"location: {geo}")
    for k, label in (("reliability", "reliability"), ("verification", "verification"), ("hosting_type", "hosting")):
        if a.get(k) not in (None, ""):
            notes.append(f"{label}: {a[k]}")
    if num(a.get("inet_down")) is not None:
        notes.append(f"internet {num(a.get('inet_down')):g} Mb/s down / {num(a.get('inet_up')) or 0:g} Mb/s up "
                     "(not a cluster fabric)")
    if num(a.get("disk_space")) is not None:
        notes.append(f"disk {num(a.get('disk_space')):g} GB {a.get('disk_name') or ''}".rstrip())
    extras = {k: v for k, v in (("egress_usd_per_gb", num(a.get("inet_up_cost"))),
                                ("ingress_usd_per_gb", num(a.get("inet_down_cost"))),
                                ("storage_usd_per_gb_month", num(a.get("storage_cost")))) if v is not None and v >= 0}
    ram = memory_gib_from_mb(a.get("cpu_ram"))
    rentable = a.get("rentable")
    available = None if rentable is None else bool(rentable) and not bool(a.get("rented"))
    common = dict(provider=NAME, region=region, sku=sku, gpu_id=g.gpu_id, gpu_count=count,
                  form_factor=g.form_factor, intra_node=intra,
                  vcpus=num(a.get("cpu_cores_effective")) or num(a.get("cpu_cores")),
                  cpu_model=a.get("cpu_name") or None, ram_gib=ram, covers=["hosting", "power", "storage"],
                  extras=extras, available=available, source=NAME, fetched_at=fetched_at,
                  gpu_memory_gib=g.gpu_memory_gib, billing_granularity_s=None)
    out = []
    o = build(result, **common, price=Price(amount=price, currency="USD", per="hour"), spot=False, notes=notes)
    if o:
        out.append(o)
    bid = num(a.get("min_bid"))
    if bid is not None and bid > 0:
        o = build(result, **common, price=Price(amount=bid, currency="USD", per="hour"), spot=True,
                  notes=notes + ["interruptible: min_bid, the lowest bid that currently wins"])
        if o:
            out.append(o)
    return out
