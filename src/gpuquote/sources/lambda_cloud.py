"""Lambda Cloud instance types (API key) -> one Offer per instance type and region with capacity.

`price_cents_per_hour` is US cents per instance-hour. The GPU comes from `gpu_description`
("H100 (80 GB SXM5)") or `description` ("8x H100 (80 GB SXM5)"), overridden by data/instances.yaml
where Lambda's own label is known to be loose. Prices are the same in every region; a type with no
region that has capacity is listed once with region "unknown" and available = false.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime

from gpuquote.offers import Price
from gpuquote.sources.base import ParseResult, gpu_fields
from gpuquote.sources.common import add_unique, build, fact_notes, load_json, num, price_or_skip
from gpuquote.sources.http import Http, Raw

NAME = "lambda"
ENDPOINT = "https://cloud.lambda.ai/api/v1/instance-types"
KEY_ENV = ("LAMBDA_API_KEY",)
_DESC = re.compile(r"^\s*(\d+)\s*x\s+(?:Tesla\s+)?(.+?)\s*(?:\((.*)\))?\s*$", re.IGNORECASE)
_GPU_DESC = re.compile(r"^\s*(?:Tesla\s+)?(.+?)\s*(?:\((.*)\))?\s*$", re.IGNORECASE)


def fetch(http: Http, env: Mapping[str, str]) -> list[Raw]:
    key = next((env[k] for k in KEY_ENV if env.get(k)), "")
    resp = http.get(ENDPOINT, headers={"Authorization": f"Bearer {key}"}, auth_hint=KEY_ENV[0])
    return [("instance-types.json", "application/json", resp.content)]


def _entries(doc) -> list:
    data = doc.get("data", doc) if isinstance(doc, dict) else doc
    if isinstance(data, dict):
        if "instance_type" in data or "price_cents_per_hour" in data:
            return [data]
        return list(data.values())
    return data if isinstance(data, list) else []


def parse(raw: list[Raw], fetched_at: datetime) -> list[ParseResult]:
    result = ParseResult(source=NAME, fetched_at=fetched_at)
    entries = []
    for r in raw:
        entries.extend(_entries(load_json(NAME, r)))
    if not entries:
        result.skip("no instance types in the response (expected 'data')")
    out = []
    for e in entries:
        if not isinstance(e, dict):
            result.skip("instance type is not an object")
            continue
        out.extend(_offers(e, result, fetched_at))
    add_unique(result, out)
    return [result]


_NAME = re.compile(r"^gpu_(\d+)x_([a-z0-9_]+?)(?:_n|_v\d+)?$", re.IGNORECASE)
_PAREN = re.compile(r"^\s*([\d.]+)\s*GB\b\s*(.*)$", re.IGNORECASE)


def _gpu(it: dict) -> tuple[float | None, str | None, str | None, float | None, str]:
    """(count, GPU name such as 'H100 80 GB SXM5', model 'H100', memory GB, board text such as 'SXM5').

    Lambda's live answer may carry no `description`/`gpu_description` at all (only name, price and
    specs), so the instance type name ('gpu_8x_a100_80gb_sxm4') is the last resort.
    """
    specs = it.get("specs") if isinstance(it.get("specs"), dict) else {}
    count = num(specs.get("gpus"))
    name, paren = None, ""
    m = _DESC.match(str(it.get("description") or ""))
    if m and m.group(2).strip().upper() != "N/A":
        count = count or num(m.group(1))
        name, paren = m.group(2), m.group(3) or ""
    gd = _GPU_DESC.match(str(it.get("gpu_description") or ""))
    if gd and gd.group(1) and gd.group(1).strip().upper() != "N/A":
        name, paren = gd.group(1), gd.group(2) or ""
    if name is None:
        nm = _NAME.match(str(it.get("name") or ""))
        if nm:
            count = count or num(nm.group(1))
            name = " ".join(t.upper() for t in nm.group(2).split("_"))
    pm = _PAREN.match(paren)
    mem = num(pm.group(1)) if pm else None
    board = pm.group(2).strip() if pm else paren.strip()
    full = f"{name} {paren}".strip() if name else None
    return count, full, name, mem, board


def _offers(e: dict, result: ParseResult, fetched_at: datetime) -> list:
    it = e.get("instance_type") if isinstance(e.get("instance_type"), dict) else e
    sku = str(it.get("name") or "").strip()
    if not sku:
        result.skip("missing instance type name")
        return []
    cents = price_or_skip(result, it.get("price_cents_per_hour"), "price_cents_per_hour")
    if cents is None:
        return []
    count, name, model, mem, board = _gpu(it)
    if not count or not name:
        result.skip("no GPU (count or name) in the instance type")
        return []
    g = gpu_fields(NAME, sku, name, count)
    if g is None:
        # 'RTX 6000 (24 GB)': the model alone is a family, the memory picks the card (Quadro RTX 6000)
        g = gpu_fields(NAME, sku, model or name, count, memory_gib=mem, extra_names=(board,))
    if g is None:
        result.skip(f"GPU not in the catalog: {name}")
        return []
    specs = it.get("specs") or {}
    regions = [r.get("name") if isinstance(r, dict) else str(r) for r in e.get("regions_with_capacity_available") or []]
    regions = [r for r in regions if r]
    notes = fact_notes(g)
    if num(specs.get("storage_gib")):
        notes.append(f"local storage {num(specs.get('storage_gib')):g} GiB")
    out = []
    for region, avail in ([(r, True) for r in regions] or [("unknown", False)]):
        o = build(result, provider=NAME, region=region, sku=sku, gpu_id=g.gpu_id, gpu_count=count,
                  form_factor=g.form_factor, intra_node=g.intra_node, vcpus=num(specs.get("vcpus")),
                  ram_gib=num(specs.get("memory_gib")), price=Price(amount=cents / 100, currency="USD", per="hour"),
                  spot=False, covers=["hosting", "power", "storage"], available=avail, source=NAME,
                  fetched_at=fetched_at, gpu_memory_gib=g.gpu_memory_gib,
                  notes=notes + ([] if avail else ["no region with capacity at fetch time"]))
        if o:
            out.append(o)
    return out
