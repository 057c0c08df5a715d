"""Shadeform marketplace `/instances/types` (API key) -> Offers resold from many GPU clouds.

`hourly_price` is US cents per instance-hour. `configuration` says the GPU type, count, VRAM per GPU
and `interconnect` ("pcie", "sxm4", "sxm5", ...), so SXM and PCIe never merge. The provider is
Shadeform (the party billed); the underlying cloud and its instance type form the SKU, and facts
about that cloud's instance come from data/instances.yaml. One offer per region in `availability`.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from gpuquote.offers import Price
from gpuquote.sources.base import ParseResult, gpu_fields
from gpuquote.sources.common import add_unique, build, fact_notes, load_json, num, price_or_skip, records
from gpuquote.sources.http import Http, Raw

NAME = "shadeform"
ENDPOINT = "https://api.shadeform.ai/v1/instances/types"
KEY_ENV = ("SHADEFORM_API_KEY",)
CLOUD_ALIASES = {"lambdalabs": "lambda", "lambda-labs": "lambda", "amazon": "aws", "google": "gcp"}


def fetch(http: Http, env: Mapping[str, str]) -> list[Raw]:
    key = next((env[k] for k in KEY_ENV if env.get(k)), "")
    resp = http.get(ENDPOINT, headers={"X-API-KEY": key}, auth_hint=KEY_ENV[0])
    return [("instance-types.json", "application/json", resp.content)]


def parse(raw: list[Raw], fetched_at: datetime) -> list[ParseResult]:
    result = ParseResult(source=NAME, fetched_at=fetched_at)
    items = []
    for r in raw:
        items.extend(records(load_json(NAME, r), ("instance_types", "instanceTypes", "data")))
    if not items:
        result.skip("no instance types in the response (expected 'instance_types')")
    out = []
    for it in items:
        if not isinstance(it, dict):
            result.skip("instance type is not an object")
            continue
        out.extend(_offers(it, result, fetched_at))
    add_unique(result, out)
    return [result]


def _offers(it: dict, result: ParseResult, fetched_at: datetime) -> list:
    # the real answer repeats gpu_type, num_gpus, vcpus... at the top level; either place is read
    cfg = {**it, **(it.get("configuration") if isinstance(it.get("configuration"), dict) else {})}
    cloud = str(it.get("cloud") or "unknown").strip().lower()
    ctype = str(it.get("cloud_instance_type") or "").strip()
    stype = str(it.get("shade_instance_type") or "").strip()
    gpu_type = str(cfg.get("gpu_type") or "").strip()
    if not gpu_type:
        result.skip("missing configuration.gpu_type")
        return []
    count = num(cfg.get("num_gpus"))
    if not count or count <= 0:
        result.skip("missing configuration.num_gpus")
        return []
    cents = price_or_skip(result, it.get("hourly_price"), "hourly_price")
    if cents is None:
        return []
    inter = str(cfg.get("interconnect") or "").strip()
    # vram_per_gpu_in_gb is GB per GPU, the label (tests/fixtures/shadeform/instance-types.json: 8x H100 80)
    vram = num(cfg.get("vram_per_gpu_in_gb"))
    base_cloud = CLOUD_ALIASES.get(cloud, cloud)
    g = gpu_fields(base_cloud, ctype, gpu_type, count, memory_gib=vram, extra_names=(inter, stype))
    if g is None:
        result.skip(f"GPU not in the catalog: {gpu_type}")
        return []
    intra = g.intra_node
    if intra == "unknown" and count > 1:
        if cfg.get("nvlink") is True:
            intra = "nvlink"
        elif inter.lower() == "pcie" and cfg.get("nvlink") is not True:
            intra = "pcie"
    sku = f"{cloud}/{ctype or stype}"
    notes = fact_notes(g) + [f"resold by Shadeform from {cloud} ({ctype or stype})"]
    if it.get("deployment_type"):
        notes.append(f"deployment: {it['deployment_type']}")
    raw_avail = it.get("availability") or []
    raw_avail = [raw_avail] if isinstance(raw_avail, dict) else raw_avail
    avail = [a for a in raw_avail if isinstance(a, dict) and a.get("region")]
    out = []
    for region, ok in ([(str(a["region"]), a.get("available")) for a in avail] or [("unknown", None)]):
        o = build(result, provider=NAME, region=region, sku=sku, gpu_id=g.gpu_id, gpu_count=count,
                  form_factor=g.form_factor, intra_node=intra, vcpus=num(cfg.get("vcpus")),
                  ram_gib=num(cfg.get("memory_in_gb")), price=Price(amount=cents / 100, currency="USD", per="hour"),
                  spot=False, covers=["hosting", "power", "storage"],
                  available=ok if isinstance(ok, bool) else None, source=NAME, fetched_at=fetched_at,
                  gpu_memory_gib=g.gpu_memory_gib,
                  inter_node=_inter(g), nvme_gib=g.facts.nvme_gib if g.facts else None,
                  notes=notes + ([f"storage {num(cfg.get('storage_in_gb')):g} GB"] if num(cfg.get("storage_in_gb"))
                                 else []))
        if o:
            out.append(o)
    return out


def _inter(g):
    from gpuquote.offers import InterNode

    f = g.facts
    return InterNode(kind=f.inter_node_kind or "unknown", gbps_per_node=f.inter_node_gbps) if f else InterNode()
