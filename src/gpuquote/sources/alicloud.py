"""Alibaba Cloud ECS GPU prices -> Offers, in the currency Alibaba quotes (CNY on the China site).

Public path (no credentials; unofficial CDN files, see shared/data/china/SOURCE.md):
- `instancePrice.json`: `pricingInfo["Region::InstanceType::NetworkType::OS::IoOptimized"]` ->
  `{hours: [{price, period}], ...}` (prices are strings); `currency`, `version`, `publicationDate` at the top.
  No spot, no zone, no GPU spec: on-demand list prices for Linux on VPC.
- `instanceTypeDefinition.js`: `var instanceTypeDefineItems = [...];` (JavaScript, not strict JSON) with
  `InstanceTypeId`, `GPUSpec`, `GPUAmount`, `CpuCoreCount`, `MemorySize`; it says which types carry GPUs.
Credentialed path (only when ALIBABA_CLOUD_ACCESS_KEY_ID/SECRET are set): ECS OpenAPI `DescribePrice`
(RPC style, HMAC-SHA1 signature v1) per GPU type and region, with the same 40 GiB ESSD system disk the
community catalog priced; `PriceInfo.Price.TradePrice` replaces the list price for that type.
A vms.csv of the community catalog imports too (`gpuquote import alicloud vms.csv`).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from urllib.parse import quote

from gpuquote.offers import InterNode, Price
from gpuquote.sources import china_catalog as cc
from gpuquote.sources.base import ParseResult, gpu_fields
from gpuquote.sources.common import add_unique, build, load_json
from gpuquote.sources.http import Http, Raw

NAME = "alicloud"
PRICE_VERSION = "2.0.211"  # China-site (CNY) file; the segment changes over time (newest seen in public code)
SPEC_VERSION = "2.0.305"
PRICE_URL = f"https://g.alicdn.com/aliyun/ecs-price-info/{PRICE_VERSION}/price/download/instancePrice.json"
SPEC_URL = (f"https://g.alicdn.com/aliyun/ecs-price-info-intl/{SPEC_VERSION}/price/js_price/filter_price/"
            "instanceTypeDefinition.js")
ENDPOINT = PRICE_URL
API_URL = "https://ecs.aliyuncs.com/"
API_VERSION = "2014-05-26"
KEY_ENV = ("ALIBABA_CLOUD_ACCESS_KEY_ID", "ALIBABA_CLOUD_ACCESS_KEY_SECRET")
REGIONS_ENV = "GPUQUOTE_ALICLOUD_REGIONS"
DEFAULT_REGIONS = ("cn-beijing", "cn-hangzhou", "cn-shanghai", "cn-shenzhen", "cn-wulanchabu")
MAX_PRICE_CALLS = 400  # DescribePrice requests per refresh (one per GPU type and region)
SYSTEM_DISK = {"SystemDisk.Category": "cloud_essd", "SystemDisk.Size": "40"}
DOCS = "https://help.aliyun.com/zh/ecs/user-guide/gpu-accelerated-compute-optimized-and-vgpu-accelerated-instance-families-1"


# ---------------- pure parse functions ----------------

def parse_type_definitions(text: str) -> dict[str, dict]:
    """instanceTypeDefinition.js -> {InstanceTypeId: item}: strip `var x =` and `;`, add missing commas/quotes."""
    start, end = text.find("["), text.rfind("]")
    if start < 0 or end < start:
        return {}
    body = text[start:end + 1]
    body = re.sub(r"}\s*{", "},{", body)  # the file omits commas between items
    body = re.sub(r"([{,]\s*)([A-Za-z_]\w*)\s*:", r'\1"\2":', body)  # bare keys
    body = re.sub(r",\s*([}\]])", r"\1", body)  # trailing commas
    try:
        items = json.loads(body)
    except ValueError:
        return {}
    return {str(i.get("InstanceTypeId")): i for i in items if isinstance(i, dict) and i.get("InstanceTypeId")}


def split_price_key(key: str) -> tuple[str, str, str, str] | None:
    """'cn-beijing::ecs.gn7e-c16g1.4xlarge::vpc::linux::optimized' -> (region, type, network, os)."""
    parts = key.split("::")
    return (parts[0], parts[1], parts[2].lower(), parts[3].lower()) if len(parts) >= 4 else None


def hourly_price(entry: dict) -> float | None:
    hours = entry.get("hours") if isinstance(entry, dict) else None
    if not hours or not isinstance(hours, list) or not isinstance(hours[0], dict):
        return None
    return cc._num(str(hours[0].get("price", "")))


def percent_encode(s: str) -> str:
    """Alibaba RPC percent-encoding (RFC 3986: space %20, * %2A, ~ kept)."""
    return quote(str(s), safe="~")


def sign_rpc(params: Mapping[str, str], secret: str, method: str = "GET") -> str:
    """Signature v1 of an RPC request: base64(HMAC-SHA1(secret + '&', METHOD&%2F&encoded(sorted query)))."""
    canon = "&".join(f"{percent_encode(k)}={percent_encode(v)}" for k, v in sorted(params.items()))
    sts = f"{method}&{percent_encode('/')}&{percent_encode(canon)}"
    return base64.b64encode(hmac.new(f"{secret}&".encode(), sts.encode(), hashlib.sha1).digest()).decode()


def describe_price_params(key_id: str, region: str, itype: str, *, now: datetime | None = None,
                          nonce: str | None = None) -> dict[str, str]:
    ts = (now or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"Action": "DescribePrice", "Version": API_VERSION, "Format": "JSON", "AccessKeyId": key_id,
            "SignatureMethod": "HMAC-SHA1", "SignatureVersion": "1.0", "SignatureNonce": nonce or uuid.uuid4().hex,
            "Timestamp": ts, "RegionId": region, "ResourceType": "instance", "InstanceType": itype,
            "InstanceNetworkType": "vpc", "PriceUnit": "Hour", **SYSTEM_DISK}


def _offer(result: ParseResult, region: str, itype: str, spec: dict, amount: float, currency: str,
           fetched_at: datetime, note: str):
    raw_name = str(spec.get("GPUSpec") or "").replace("NVIDIA", "").replace("GPU", "").strip()
    count = cc._num(str(spec.get("GPUAmount", "")))
    if not raw_name or not count:
        result.skip("not a GPU instance type")
        return None
    why = cc.skip_reason(raw_name)
    if why:
        result.skip(why)
        return None
    base, fraction = cc.split_slice(raw_name)
    name = cc.NAMES[NAME].get(base, base)
    g = gpu_fields(NAME, itype, name, count)
    if g is None:
        result.skip(f"GPU not in the catalog: {raw_name}")
        return None
    gpus = count * fraction
    shared = fraction < 1.0 or itype.startswith("ecs.sgn")
    usd_guess = amount * (cc.CATALOG_CNY_USD if currency == "CNY" else 1.0)
    if not shared and usd_guess / gpus < cc.MIN_PLAUSIBLE_USD_PER_GPU_HOUR:
        result.skip(f"implausible price (below {cc.MIN_PLAUSIBLE_USD_PER_GPU_HOUR:g} USD per GPU-hour)")
        result.provenance.setdefault("flagged", []).append(f"{NAME}:{region}:{itype} {amount:g} {currency}/h")
        return None
    facts = g.facts
    notes = [note] + list(g.notes) + ([f"{facts.note} ({facts.source})"] if facts and facts.note else [])
    if shared:
        notes.append(f"vGPU slice: {fraction:.3g} of one {base}, shared")
    return build(
        result, provider=NAME, region=region, sku=itype, gpu_id=g.gpu_id, gpu_count=gpus,
        gpu_exclusive="shared" if shared else True, form_factor=g.form_factor,
        intra_node="none" if shared else g.intra_node,
        vcpus=cc._num(str(spec.get("CpuCoreCount", ""))), ram_gib=cc._num(str(spec.get("MemorySize", ""))),
        nvme_gib=facts.nvme_gib if facts else None,
        inter_node=InterNode(kind=facts.inter_node_kind or "unknown", gbps_per_node=facts.inter_node_gbps)
        if facts else InterNode(),
        price=Price(amount=amount, currency=currency, per="hour"), spot=False, covers=["hosting", "power"],
        source=NAME, fetched_at=fetched_at, gpu_memory_gib=g.gpu_memory_gib, notes=notes,
    )


def parse_price_file(doc: dict, specs: dict[str, dict], result: ParseResult, fetched_at: datetime) -> list:
    """instancePrice.json -> on-demand Linux/VPC offers of the GPU types in `specs`."""
    currency = str(doc.get("currency") or "CNY").upper()
    result.provenance.update({"price_version": doc.get("version"), "publicationDate": doc.get("publicationDate"),
                              "site": doc.get("site"), "currency": currency})
    out = []
    for key, entry in (doc.get("pricingInfo") or {}).items():
        parts = split_price_key(key)
        if parts is None:
            result.skip("pricingInfo key not Region::Type::Network::OS::IO")
            continue
        region, itype, net, os_ = parts
        if net != "vpc" or os_ != "linux":
            continue  # classic network / Windows rows: the Linux VPC list price is kept
        if itype not in specs:
            continue  # CPU types (the definition file lists the GPU ones)
        amount = hourly_price(entry)
        if amount is None or amount <= 0:
            result.skip("no positive hourly price")
            continue
        o = _offer(result, region, itype, specs[itype], amount, currency, fetched_at,
                   f"list price per hour, Linux, VPC, no system disk (instancePrice.json {doc.get('version')})")
        if o is not None:
            out.append(o)
    return out


def parse_describe_price(item: dict, specs: dict[str, dict], result: ParseResult, fetched_at: datetime):
    """One recorded DescribePrice answer {RegionId, InstanceType, response} -> an offer (TradePrice)."""
    price = ((item.get("response") or {}).get("PriceInfo") or {}).get("Price") or {}
    amount = cc._num(str(price.get("TradePrice", "")))
    itype, region = str(item.get("InstanceType") or ""), str(item.get("RegionId") or "unknown")
    if amount is None or amount <= 0 or itype not in specs:
        result.skip("DescribePrice answer without a TradePrice for a known GPU type")
        return None
    return _offer(result, region, itype, specs[itype], amount, str(price.get("Currency") or "CNY").upper(),
                  fetched_at, "DescribePrice TradePrice per hour, pay-as-you-go, incl. a 40 GiB ESSD system disk")


def parse(raw: list[Raw], fetched_at: datetime) -> list[ParseResult]:
    if raw and all(b.lstrip().startswith(b"InstanceType,") for _, _, b in raw):  # the community vms.csv
        from gpuquote.sources.skypilot import parse_vms_csv

        res = parse_vms_csv(raw[0][2].decode("utf-8-sig"), NAME, fetched_at=fetched_at, source=f"{NAME}:vms.csv")
        res.source = NAME
        return [res]
    result = ParseResult(source=NAME, fetched_at=fetched_at)
    specs: dict[str, dict] = {}
    prices, quotes = [], []
    for item in raw:
        name, _, body = item
        text = body.decode("utf-8-sig", errors="replace")
        if name.endswith(".js") or text.lstrip().startswith("var "):
            specs.update(parse_type_definitions(text))
            continue
        doc = load_json(NAME, item)
        if isinstance(doc, dict) and "pricingInfo" in doc:
            prices.append(doc)
        elif isinstance(doc, dict) and "InstanceType" in doc and "response" in doc:
            quotes.append(doc)
        else:
            result.skip(f"{name}: not a price file, a type definition or a DescribePrice answer")
    specs = {k: v for k, v in specs.items() if cc._num(str(v.get("GPUAmount", ""))) or v.get("GPUSpec")}
    if not specs:
        result.skip("no instanceTypeDefinition (GPU specs) in the response: nothing can be priced")
    offers = [o for doc in prices for o in parse_price_file(doc, specs, result, fetched_at)]
    quoted = {(o.region, o.sku): o for q in quotes if (o := parse_describe_price(q, specs, result, fetched_at))}
    if quoted:  # a credentialed TradePrice replaces the list price of the same type and region
        offers = [o for o in offers if (o.region, o.sku) not in quoted] + list(quoted.values())
    add_unique(result, offers)
    return [result]


# ---------------- fetch ----------------

def fetch(http: Http, env: Mapping[str, str]) -> list[Raw]:
    spec = http.get(SPEC_URL)
    out: list[Raw] = [("instanceTypeDefinition.js", "application/javascript", spec.content)]
    key_id, secret = (env.get(k) for k in KEY_ENV)
    if not (key_id and secret):
        out.append(("instancePrice.json", "application/json", http.get(PRICE_URL).content))
        return out
    specs = parse_type_definitions(spec.text)
    gpu_types = sorted(k for k, v in specs.items() if cc._num(str(v.get("GPUAmount", ""))))
    regions = [r.strip() for r in (env.get(REGIONS_ENV) or ",".join(DEFAULT_REGIONS)).split(",") if r.strip()]
    calls = 0
    for region in regions:
        for itype in gpu_types:
            if calls >= MAX_PRICE_CALLS:
                break
            params = describe_price_params(key_id, region, itype)
            params["Signature"] = sign_rpc(params, secret)
            try:
                resp = http.get(API_URL, params=params, auth_hint=" or ".join(KEY_ENV))
            except Exception as e:  # a type not sold in a region answers 4xx: skip it, keep the others
                if "HTTP 4" not in str(e) or "401" in str(e) or "403" in str(e):
                    raise
                continue
            calls += 1
            body = json.dumps({"RegionId": region, "InstanceType": itype, "response": resp.json()}).encode()
            out.append((f"describeprice-{region}-{itype}.json", "application/json", body))
    return out
