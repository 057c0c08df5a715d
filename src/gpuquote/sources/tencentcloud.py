"""Tencent Cloud CVM GPU prices -> Offers, kept in CNY (the China site's currency).

Public path (no credentials; the console backend, unofficial, see shared/data/china/SOURCE.md):
`POST workbench.cloud.tencent.com/cgi/area/queryCvmRegion` for the regions, then per region
`.../cgi/api?i=cvm/DescribeZoneInstanceConfigInfos` (POSTPAID_BY_HOUR). Items sit under
`data.Response.InstanceTypeQuotaSet[]` with the official API's schema: `Zone`, `InstanceType`,
`InstanceFamily`, `Cpu`, `Memory`, `GpuCount`, `Status`, `Price.{UnitPriceDiscount, UnitPrice, ChargeUnit}`,
`Externals.GPUDesc` ("<n> * <model>"). The response carries no currency field: the China site is CNY.
Credentialed path (only when TENCENTCLOUD_SECRET_ID/KEY are set): the official API at cvm.tencentcloudapi.com
signed with TC3-HMAC-SHA256: `DescribeZoneInstanceConfigInfos` per region, then, when TENCENTCLOUD_IMAGE_ID is
also set, `InquiryPriceRunInstances` per GPU type and zone (`Price.InstancePrice.UnitPriceDiscount`).
A vms.csv of the community catalog imports too (`gpuquote import tencentcloud vms.csv`).
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from datetime import UTC, datetime

from gpuquote.offers import InterNode, Price
from gpuquote.sources import china_catalog as cc
from gpuquote.sources.base import ParseResult, gpu_fields
from gpuquote.sources.common import add_unique, build, load_json
from gpuquote.sources.http import Http, Raw

NAME = "tencentcloud"
CONSOLE = "https://workbench.cloud.tencent.com/cgi"
REGION_URL = f"{CONSOLE}/area/queryCvmRegion"
ZONE_URL = f"{CONSOLE}/api?i=cvm/DescribeZoneInstanceConfigInfos&uin=&region={{region}}"
ENDPOINT = REGION_URL
API_HOST = "cvm.tencentcloudapi.com"
API_VERSION = "2017-03-12"
KEY_ENV = ("TENCENTCLOUD_SECRET_ID", "TENCENTCLOUD_SECRET_KEY")
IMAGE_ENV = "TENCENTCLOUD_IMAGE_ID"
REGIONS_ENV = "GPUQUOTE_TENCENT_REGIONS"
MAX_REGIONS = 40
MAX_INQUIRIES = 300
CURRENCY = "CNY"  # not in the response; the China site (cloud.tencent.com) bills in CNY
DOCS = "https://cloud.tencent.com/document/product/560/19701"
#: InstanceFamily -> GPU for items without Externals.GPUDesc (the community catalog's map, SOURCE.md).
FAMILY_GPU = {"GI1": "Intel SG1", "GI3X": "T4", "GN7": "T4", "GN7vi": "T4", "GN6": "P4", "GN6S": "P4", "GN8": "P40",
              "GN10X": "V100", "GN10Xp": "V100", "GNV4": "A10", "PNV4": "A10", "GT4": "A100",
              "PTX1": "Tencent Zixiao C100"}


# ---------------- pure parse functions ----------------

def gpu_name(item: dict) -> str | None:
    """'8 * NVIDIA A100' (Externals.GPUDesc) -> 'A100'; else the family map; None when unknown."""
    desc = str(((item.get("Externals") or {}).get("GPUDesc")) or "")
    if " * " in desc:
        return desc.split(" * ", 1)[1].replace("NVIDIA", "").strip() or None
    return FAMILY_GPU.get(str(item.get("InstanceFamily") or ""))


def quota_items(doc) -> tuple[list[dict], str | None]:
    """The items of one DescribeZoneInstanceConfigInfos answer (console or official), and its error, if any."""
    if not isinstance(doc, dict):
        return [], "answer is not an object"
    resp = doc.get("Response") if "Response" in doc else (doc.get("data") or {}).get("Response")
    if not isinstance(resp, dict):
        return [], "no Response in the answer"
    if resp.get("Error"):
        err = resp["Error"]
        return [], f"API error {err.get('Code')}: {str(err.get('Message'))[:80]}"
    items = resp.get("InstanceTypeQuotaSet") or []
    return [i for i in items if isinstance(i, dict)], None


def _region(zone: str) -> str:
    return zone.rsplit("-", 1)[0] if zone and zone[-1:].isdigit() else zone or "unknown"


def item_offer(item: dict, result: ParseResult, fetched_at: datetime, *, amount: float | None = None,
               note: str | None = None):
    count = cc._num(str(item.get("GpuCount") if item.get("GpuCount") not in (None, "") else item.get("Gpu", "")))
    if not count:
        return None  # a CPU type
    name = gpu_name(item)
    itype = str(item.get("InstanceType") or "")
    if not name:
        result.skip(f"GPU model not stated (family {item.get('InstanceFamily')})")
        return None
    why = cc.skip_reason(name)
    if why:
        result.skip(why)
        return None
    price = item.get("Price") or {}
    if amount is None:
        if str(price.get("ChargeUnit") or "HOUR").upper() != "HOUR":
            result.skip("price not per hour")
            return None
        amount = cc._num(str(price.get("UnitPriceDiscount") if price.get("UnitPriceDiscount") not in (None, "")
                             else price.get("UnitPrice", "")))
    if amount is None or amount <= 0:
        result.skip("no positive hourly price")
        return None
    g = gpu_fields(NAME, itype, name, count)
    if g is None:
        result.skip(f"GPU not in the catalog: {name}")
        return None
    if count >= 1 and amount * cc.CATALOG_CNY_USD / count < cc.MIN_PLAUSIBLE_USD_PER_GPU_HOUR:
        result.skip(f"implausible price (below {cc.MIN_PLAUSIBLE_USD_PER_GPU_HOUR:g} USD per GPU-hour)")
        result.provenance.setdefault("flagged", []).append(f"{NAME}:{item.get('Zone')}:{itype} {amount:g} CNY/h")
        return None
    zone = str(item.get("Zone") or "")
    facts = g.facts
    shared = count < 1  # a vGPU slice (GN7.LARGE20: 1/4 of a T4)
    head = note or "UnitPriceDiscount per hour, POSTPAID_BY_HOUR; currency not in the response (China site: CNY)"
    notes = [head] + (["vGPU slice: a shared fraction of one card"] if shared else []) + [
             f"zone: {zone}"] + list(g.notes) + ([f"{facts.note} ({facts.source})"] if facts and facts.note else [])
    return build(
        result, provider=NAME, region=_region(zone), sku=itype, gpu_id=g.gpu_id, gpu_count=count,
        gpu_exclusive="shared" if shared else True, form_factor=g.form_factor,
        intra_node="none" if shared else g.intra_node,
        vcpus=cc._num(str(item.get("Cpu", ""))), ram_gib=cc._num(str(item.get("Memory", ""))),
        cpu_model=str(item.get("CpuType")) if item.get("CpuType") else None,
        nvme_gib=facts.nvme_gib if facts else None,
        inter_node=InterNode(kind=facts.inter_node_kind or "unknown", gbps_per_node=facts.inter_node_gbps)
        if facts else InterNode(),
        price=Price(amount=amount, currency=CURRENCY, per="hour"), spot=False, covers=["hosting", "power"],
        available=None if not item.get("Status") else str(item.get("Status")).upper() == "SELL",
        source=NAME, fetched_at=fetched_at, gpu_memory_gib=g.gpu_memory_gib, notes=notes,
        id=f"{NAME}:{_region(zone)}:{itype}@{zone}",
    )


def parse(raw: list[Raw], fetched_at: datetime) -> list[ParseResult]:
    if raw and all(b.lstrip().startswith(b"InstanceType,") for _, _, b in raw):  # the community vms.csv
        from gpuquote.sources.skypilot import parse_vms_csv

        res = parse_vms_csv(raw[0][2].decode("utf-8-sig"), NAME, fetched_at=fetched_at, source=f"{NAME}:vms.csv")
        res.source = NAME
        return [res]
    result = ParseResult(source=NAME, fetched_at=fetched_at)
    listed: dict[tuple[str, str], dict] = {}
    inquiries: dict[tuple[str, str], float] = {}
    for item in raw:
        doc = load_json(NAME, item)
        if isinstance(doc, dict) and "RegionSet" in ((doc.get("data") or {}).get("Response") or {}):
            continue  # the region list
        if isinstance(doc, dict) and "InstanceType" in doc and "response" in doc:  # a recorded inquiry
            p = (((doc["response"].get("Response") or {}).get("Price") or {}).get("InstancePrice") or {})
            v = cc._num(str(p.get("UnitPriceDiscount") if p.get("UnitPriceDiscount") not in (None, "")
                            else p.get("UnitPrice", "")))
            if v:
                inquiries[(str(doc.get("Zone")), str(doc["InstanceType"]))] = v
            continue
        items, err = quota_items(doc)
        if err:
            result.skip(err)
        for it in items:
            if str(it.get("InstanceChargeType") or "POSTPAID_BY_HOUR") != "POSTPAID_BY_HOUR":
                continue
            listed[(str(it.get("Zone")), str(it.get("InstanceType")))] = it
    offers = []
    for key, it in listed.items():
        inq = inquiries.get(key)
        o = item_offer(it, result, fetched_at, amount=inq,
                       note="InquiryPriceRunInstances UnitPriceDiscount per hour (credentialed)" if inq else None)
        if o is not None:
            offers.append(o)
    add_unique(result, offers)
    return [result]


# ---------------- request signing (TC3-HMAC-SHA256) ----------------

def _hmac(key: bytes, msg: str) -> bytes:
    return hmac.new(key, msg.encode("utf-8"), hashlib.sha256).digest()


def tc3_headers(action: str, payload: str, *, secret_id: str, secret_key: str, region: str | None,
                timestamp: int | None = None, service: str = "cvm", host: str = API_HOST,
                version: str = API_VERSION) -> dict[str, str]:
    """Headers of a signed Tencent Cloud API 3.0 POST (TC3-HMAC-SHA256, per the API signature v3 docs)."""
    ts = int(timestamp if timestamp is not None else datetime.now(UTC).timestamp())
    date = datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d")
    ctype = "application/json; charset=utf-8"
    signed = "content-type;host"  # the documented minimum (the docs' worked example signs these two)
    canonical = "\n".join(["POST", "/", "", f"content-type:{ctype}\nhost:{host}\n",
                           signed, hashlib.sha256(payload.encode("utf-8")).hexdigest()])
    scope = f"{date}/{service}/tc3_request"
    sts = "\n".join(["TC3-HMAC-SHA256", str(ts), scope, hashlib.sha256(canonical.encode("utf-8")).hexdigest()])
    key = _hmac(_hmac(_hmac(("TC3" + secret_key).encode("utf-8"), date), service), "tc3_request")
    sig = hmac.new(key, sts.encode("utf-8"), hashlib.sha256).hexdigest()
    h = {"Authorization": f"TC3-HMAC-SHA256 Credential={secret_id}/{scope}, SignedHeaders={signed}, Signature={sig}",
         "Content-Type": ctype, "Host": host, "X-TC-Action": action, "X-TC-Timestamp": str(ts),
         "X-TC-Version": version}
    if region:
        h["X-TC-Region"] = region
    return h


def inquiry_payload(zone: str, itype: str, image_id: str) -> str:
    return json.dumps({"Placement": {"Zone": zone}, "InstanceChargeType": "POSTPAID_BY_HOUR", "InstanceType": itype,
                       "ImageId": image_id, "InstanceCount": 1}, separators=(",", ":"))


# ---------------- fetch ----------------

def _regions(http: Http, env: Mapping[str, str]) -> tuple[list[str], Raw | None]:
    if env.get(REGIONS_ENV):
        return [r.strip() for r in env[REGIONS_ENV].split(",") if r.strip()], None
    resp = http.post(REGION_URL, content=b"{}", headers={"Content-Type": "application/json"})
    doc = resp.json() or {}
    sets = (((doc.get("data") or {}).get("Response") or {}).get("RegionSet")) or []
    regions = [str(r.get("region") or r.get("Region")) for r in sets if isinstance(r, dict)]
    return [r for r in regions if r and r != "None"][:MAX_REGIONS], ("regions.json", "application/json",
                                                                     resp.content)


def fetch(http: Http, env: Mapping[str, str]) -> list[Raw]:
    sid, skey = (env.get(k) for k in KEY_ENV)
    regions, region_raw = _regions(http, env)
    out: list[Raw] = [region_raw] if region_raw else []
    body = {"Filters": [{"Name": "instance-charge-type", "Values": ["POSTPAID_BY_HOUR"]}]}
    gpu_items: list[dict] = []
    for region in regions:
        if sid and skey:
            payload = json.dumps(body, separators=(",", ":"))
            resp = http.post(f"https://{API_HOST}/", content=payload.encode(), auth_hint=" or ".join(KEY_ENV),
                             headers=tc3_headers("DescribeZoneInstanceConfigInfos", payload, secret_id=sid,
                                                 secret_key=skey, region=region))
        else:
            data = {"serviceType": "cvm", "action": "DescribeZoneInstanceConfigInfos", "region": region,
                    "data": {**body, "Version": API_VERSION}, "cgiName": "api"}
            resp = http.post(ZONE_URL.format(region=region), json=data)
        out.append((f"zones-{region}.json", "application/json", resp.content))
        items, _ = quota_items(resp.json() or {})
        gpu_items += [i for i in items if cc._num(str(i.get("GpuCount") or i.get("Gpu") or ""))]
    image = env.get(IMAGE_ENV)
    if sid and skey and image:
        for it in gpu_items[:MAX_INQUIRIES]:
            zone, itype = str(it.get("Zone")), str(it.get("InstanceType"))
            payload = inquiry_payload(zone, itype, image)
            resp = http.post(f"https://{API_HOST}/", content=payload.encode(), auth_hint=" or ".join(KEY_ENV),
                             headers=tc3_headers("InquiryPriceRunInstances", payload, secret_id=sid, secret_key=skey,
                                                 region=_region(zone)))
            rec = json.dumps({"Zone": zone, "InstanceType": itype, "response": resp.json()}).encode()
            out.append((f"inquiry-{zone}-{itype}.json", "application/json", rec))
    return out
