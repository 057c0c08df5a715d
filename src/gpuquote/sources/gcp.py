"""GCP Cloud Billing Catalog (Compute Engine SKUs; API key) -> Offers priced per machine type.

The catalog prices *components*: a GPU SKU in $/GPU-hour, the machine family's vCPU ($/core-hour)
and RAM ($/GiB-hour), local SSD ($/GiB-month), per region, on-demand ("OnDemand") and Spot
("Preemptible"). A machine's price is rebuilt from the shapes below (vCPUs, RAM, GPUs, bundled local
SSD, from GCP's accelerator-optimized machine page):
    price = GPUs x GPU + vCPUs x core + RAM GiB x RAM (+ local SSD GiB x SSD / 730)
GPUs attached to N1 VMs (T4, V100) are priced on an assumed n1-standard host with 8 vCPUs per GPU,
said in each offer's notes. Commitment, sole-tenant, DWS and workstation SKUs are skipped.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime

from gpuquote.offers import InterNode, Price
from gpuquote.sources.base import ParseResult, gpu_fields
from gpuquote.sources.common import add_unique, build, fact_notes, load_json, num, records
from gpuquote.sources.http import Http, Raw

NAME = "gcp"
SERVICE_ID = "6F81-5844-456A"  # Compute Engine
ENDPOINT = f"https://cloudbilling.googleapis.com/v1/services/{SERVICE_ID}/skus"
KEY_ENV = ("GPUQUOTE_GCP_API_KEY", "GCP_API_KEY")
PAGE_SIZE = 5000
MAX_PAGES = 50
HOURS_PER_MONTH = 730  # GCP's own convention for monthly SKUs
SHAPES_SOURCE = "https://cloud.google.com/compute/docs/accelerator-optimized-machines"
N1_SOURCE = "https://cloud.google.com/compute/docs/gpus#n1-gpus"
# GPU label in SKU descriptions (lowercase, without " GPU running in ...") -> (key, GPU name for the resolver)
GPU_LABELS: dict[str, tuple[str, str]] = {
    "nvidia tesla a100": ("a100-40gb", "A100 40GB SXM4"),
    "nvidia tesla a100 80gb": ("a100-80gb", "A100 80GB SXM4"),
    "nvidia a100 80gb": ("a100-80gb", "A100 80GB SXM4"),
    "nvidia h100 80gb": ("h100", "H100 80GB SXM5"),
    "nvidia h100 80gb mega": ("h100-mega", "H100 80GB SXM5"),
    "nvidia h100 80gb plus": ("h100-mega", "H100 80GB SXM5"),
    "nvidia h100 mega 80gb": ("h100-mega", "H100 80GB SXM5"),
    "nvidia h200 141gb": ("h200", "H200 SXM"),
    "nvidia h200": ("h200", "H200 SXM"),
    "nvidia l4": ("l4", "L4"),
    "nvidia tesla t4": ("t4", "T4"),
    "nvidia tesla v100": ("v100", "V100 16GB"),
}
# machine -> (GPU key, core/RAM family, GPUs, vCPUs, RAM GiB, bundled local SSD GiB)
MACHINES: dict[str, tuple[str, str, int, int, float, float]] = {
    "a2-highgpu-1g": ("a100-40gb", "a2", 1, 12, 85, 0),
    "a2-highgpu-2g": ("a100-40gb", "a2", 2, 24, 170, 0),
    "a2-highgpu-4g": ("a100-40gb", "a2", 4, 48, 340, 0),
    "a2-highgpu-8g": ("a100-40gb", "a2", 8, 96, 680, 0),
    "a2-megagpu-16g": ("a100-40gb", "a2", 16, 96, 1360, 0),
    "a2-ultragpu-1g": ("a100-80gb", "a2", 1, 12, 170, 375),
    "a2-ultragpu-2g": ("a100-80gb", "a2", 2, 24, 340, 750),
    "a2-ultragpu-4g": ("a100-80gb", "a2", 4, 48, 680, 1500),
    "a2-ultragpu-8g": ("a100-80gb", "a2", 8, 96, 1360, 3000),
    "a3-highgpu-1g": ("h100", "a3", 1, 26, 234, 750),
    "a3-highgpu-2g": ("h100", "a3", 2, 52, 468, 1500),
    "a3-highgpu-4g": ("h100", "a3", 4, 104, 936, 3000),
    "a3-highgpu-8g": ("h100", "a3", 8, 208, 1872, 6000),
    "a3-megagpu-8g": ("h100-mega", "a3plus", 8, 208, 1872, 6000),
    "a3-ultragpu-8g": ("h200", "a3ultra", 8, 224, 2952, 12000),
    "g2-standard-4": ("l4", "g2", 1, 4, 16, 0),
    "g2-standard-8": ("l4", "g2", 1, 8, 32, 0),
    "g2-standard-12": ("l4", "g2", 1, 12, 48, 0),
    "g2-standard-16": ("l4", "g2", 1, 16, 64, 0),
    "g2-standard-24": ("l4", "g2", 2, 24, 96, 0),
    "g2-standard-32": ("l4", "g2", 1, 32, 128, 0),
    "g2-standard-48": ("l4", "g2", 4, 48, 192, 0),
    "g2-standard-96": ("l4", "g2", 8, 96, 384, 0),
}
# Sold only as Spot or Flex-start, not plain on-demand (the gpuhunt GCP filter makes the same cut).
SPOT_ONLY = {"a3-highgpu-1g", "a3-highgpu-2g", "a3-highgpu-4g"}
N1_GPU_COUNTS = {"t4": (1, 2, 4), "v100": (1, 2, 4, 8)}
N1_VCPU_PER_GPU = 8
N1_GIB_PER_VCPU = 3.75  # n1-standard
SKIP_WORDS = ("sole tenancy", "reserved", "premium", "custom", "suspended", "commitment", "dws", "calendar",
              "flex", "workstation", "extended")
_GPU_RE = re.compile(r"^(?:spot preemptible )?(nvidia .+?) gpu(?: attached to spot preemptible vms)? running in",
                     re.IGNORECASE)
_CR_RE = re.compile(r"^(?:spot preemptible )?(.+?) instance (core|ram) running in", re.IGNORECASE)
_SSD_RE = re.compile(r"^ssd backed local storage", re.IGNORECASE)


def _key(env: Mapping[str, str]) -> str:
    return next((env[k] for k in KEY_ENV if env.get(k)), "")


def fetch(http: Http, env: Mapping[str, str]) -> list[Raw]:
    out: list[Raw] = []
    token = None
    while len(out) < MAX_PAGES:
        params = {"key": _key(env), "pageSize": PAGE_SIZE, "currencyCode": "USD"}
        if token:
            params["pageToken"] = token
        resp = http.get(ENDPOINT, params=params, auth_hint=KEY_ENV[0])
        out.append((f"page-{len(out) + 1:04d}.json", "application/json", resp.content))
        token = (resp.json() or {}).get("nextPageToken")
        if not token:
            break
    return out


def _unit_price(sku: dict, result: ParseResult) -> tuple[float, str, str] | None:
    info = sku.get("pricingInfo") or []
    if not info:
        result.skip("missing pricingInfo")
        return None
    expr = (info[-1] or {}).get("pricingExpression") or {}
    rates = expr.get("tieredRates") or []
    prices = []
    for r in rates:
        up = (r or {}).get("unitPrice") or {}
        units, nanos = num(up.get("units") or 0), num(up.get("nanos") or 0)
        if units is None or nanos is None:
            continue
        prices.append((units + nanos / 1e9, str(up.get("currencyCode") or "USD")))
    if not prices:
        result.skip("missing price")
        return None
    paid = [p for p in prices if p[0] != 0] or prices  # a free first tier is not the marginal price
    value, cur = paid[0]
    if value < 0:
        result.skip("negative price")
        return None
    if value == 0:
        result.skip("zero price (not offered)")
        return None
    return value, cur, str(expr.get("usageUnit") or "")


def parse(raw: list[Raw], fetched_at: datetime) -> list[ParseResult]:
    result = ParseResult(source=NAME, fetched_at=fetched_at)
    skus = []
    for r in raw:
        skus.extend(records(load_json(NAME, r), ("skus",)))
    if not skus:
        result.skip("no SKUs in the response (expected 'skus')")
    gpu: dict[tuple[str, str, bool], float] = {}
    core: dict[tuple[str, str, bool], float] = {}
    ram: dict[tuple[str, str, bool], float] = {}
    ssd: dict[tuple[str, bool], float] = {}
    for s in skus:
        if not isinstance(s, dict):
            result.skip("SKU is not an object")
            continue
        cat = s.get("category") or {}
        usage = cat.get("usageType")
        desc = str(s.get("description") or "")
        low = desc.lower()
        if usage not in ("OnDemand", "Preemptible"):
            result.skip(f"{usage or 'missing'} usage type (on-demand and spot kept)")
            continue
        if any(w in low for w in SKIP_WORDS):
            result.skip("commitment, sole-tenant, DWS or workstation SKU")
            continue
        spot = usage == "Preemptible"
        regions = [str(x) for x in s.get("serviceRegions") or []]
        m_gpu, m_cr = _GPU_RE.match(desc), _CR_RE.match(desc)
        if m_gpu:
            label = m_gpu.group(1).lower()
            if label not in GPU_LABELS:
                result.skip(f"GPU not in the catalog: {m_gpu.group(1)}")
                continue
            table, key = gpu, GPU_LABELS[label][0]
        elif m_cr:
            fam = m_cr.group(1).lower().replace(" predefined", "").replace(" ", "")
            if fam not in {m[1] for m in MACHINES.values()} | {"n1"}:
                result.skip("core/RAM of a machine family without GPUs")
                continue
            table, key = (core if m_cr.group(2).lower() == "core" else ram), fam
        elif _SSD_RE.match(desc):
            price = _unit_price(s, result)
            if price:
                for reg in regions:
                    ssd[(reg, spot)] = price[0]
            continue
        else:
            result.skip("not a GPU, core, RAM or local SSD SKU")
            continue
        price = _unit_price(s, result)
        if price is None:
            continue
        value, cur, unit = price
        if cur != "USD":
            result.skip(f"currency {cur} (request currencyCode=USD)")
            continue
        want = "GiBy.h" if table is ram else "h"
        if unit and unit != want:
            result.skip(f"usage unit '{unit}' (expected {want})")
            continue
        for reg in regions:
            table[(key, reg, spot)] = value
    offers = []
    for (gkey, region, spot), gprice in sorted(gpu.items()):
        for machine, (mkey, fam, n, vcpus, gib, lssd) in MACHINES.items():
            if mkey != gkey:
                continue
            if machine in SPOT_ONLY and not spot:
                result.skip("on-demand not sold for this machine (Spot / Flex-start only)")
                continue
            o = _machine_offer(result, machine, fam, n, vcpus, gib, lssd, region, spot, gprice, core, ram, ssd,
                               fetched_at)
            if o:
                offers.append(o)
        for n in N1_GPU_COUNTS.get(gkey, ()):
            vcpus = min(N1_VCPU_PER_GPU * n, 96)
            machine = f"n1-standard-{vcpus}"
            o = _machine_offer(result, machine, "n1", n, vcpus, vcpus * N1_GIB_PER_VCPU, 0, region, spot, gprice,
                               core, ram, ssd, fetched_at, gkey=gkey)
            if o:
                offers.append(o)
    add_unique(result, offers)
    return [result]


def _machine_offer(result, machine, fam, n, vcpus, gib, lssd, region, spot, gprice, core, ram, ssd, fetched_at,
                   gkey: str | None = None):
    c, r = core.get((fam, region, spot)), ram.get((fam, region, spot))
    if c is None or r is None:
        result.skip(f"no {fam} core/RAM price in the GPU's region")
        return None
    gpu_name = next(v[1] for v in GPU_LABELS.values() if v[0] == (gkey or MACHINES[machine][0]))
    total = n * gprice + vcpus * c + gib * r
    notes = [f"price = {n} x GPU {gprice:.4f} + {vcpus} vCPU x {c:.5f} + {gib:g} GiB x {r:.6f} $/h"]
    if lssd:
        s = ssd.get((region, spot))
        if s is None:
            notes.append(f"bundled local SSD ({lssd:g} GiB) not priced: no local SSD SKU for the region")
        else:
            total += lssd * s / HOURS_PER_MONTH
            notes.append(f"+ bundled local SSD {lssd:g} GiB x {s:.4f} $/GiB-month / {HOURS_PER_MONTH}")
    sku = machine if gkey is None else f"{machine}+{n}x{gkey}"
    g = gpu_fields(NAME, machine if gkey is None else sku, gpu_name, n)
    if g is None:
        result.skip(f"GPU not in the catalog: {gpu_name}")
        return None
    facts = g.facts
    notes = fact_notes(g) + notes + [f"machine shape: {N1_SOURCE if gkey else SHAPES_SOURCE}"]
    if gkey:
        notes.append(f"host VM {machine} assumed ({N1_VCPU_PER_GPU} vCPU per GPU); other N1 shapes cost differently")
    return build(
        result, provider=NAME, region=region, sku=sku, gpu_id=g.gpu_id, gpu_count=n, form_factor=g.form_factor,
        intra_node=g.intra_node, vcpus=vcpus, ram_gib=gib,
        nvme_gib=facts.nvme_gib if facts and facts.nvme_gib else (lssd * 0.9313 if lssd else None),
        inter_node=InterNode(kind=facts.inter_node_kind or "unknown", gbps_per_node=facts.inter_node_gbps)
        if facts else InterNode(),
        price=Price(amount=round(total, 6), currency="USD", per="hour"), spot=spot, covers=["hosting", "power"],
        source=NAME, fetched_at=fetched_at, gpu_memory_gib=g.gpu_memory_gib, notes=notes,
    )
