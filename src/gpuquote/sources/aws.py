"""AWS Price List bulk offer files for EC2 (no auth) -> on-demand Linux Offers.

`PricePerUnit` is USD per instance-hour ("Hrs"). The bulk file has a GPU count but no reliable
GPU model, so the instance family -> GPU table below (from AWS's accelerated-computing instance
pages) names it; SXM/NVSwitch, EFA and NVMe come from data/instances.yaml. Spot prices are not in
the bulk file (they need IAM credentials), so this source is on-demand only.

Accepted input: the CSV offer file (5 metadata rows, then a header: found by name, not position)
or the JSON offer file (products + terms.OnDemand). A fetched per-region CSV is pre-filtered while
streaming (only rows of the GPU families below that mention OnDemand and Linux are kept), so the
archived raw response is that filtered CSV, not the multi-hundred-MB original.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Mapping
from datetime import datetime

from gpuquote.offers import InterNode, Price
from gpuquote.sources.base import ParseResult, gpu_fields
from gpuquote.sources.common import (
    add_unique,
    build,
    csv_rows,
    currency_or_skip,
    fact_notes,
    load_json,
    num,
    price_or_skip,
)
from gpuquote.sources.http import Http, Raw

NAME = "aws"
ENDPOINT = "https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/{region}/index.csv"
REGIONS_ENV = "GPUQUOTE_AWS_REGIONS"  # comma-separated; optional
DEFAULT_REGIONS = ("us-east-1", "us-east-2", "us-west-2", "eu-west-1", "eu-central-1", "ap-northeast-1")
FAMILY_SOURCE = "https://aws.amazon.com/ec2/instance-types/#Accelerated_Computing"
# instance family (prefix before the first '.') -> GPU name for the alias resolver
FAMILIES: dict[str, str] = {
    "p3": "V100 16GB SXM2", "p3dn": "V100 32GB SXM2", "p4d": "A100 40GB SXM4", "p4de": "A100 80GB SXM4",
    "p5": "H100 80GB SXM5", "p5e": "H200 SXM", "p5en": "H200 SXM", "p6-b200": "B200",
    "g4dn": "T4", "g5": "A10G", "g6": "L4", "gr6": "L4", "g6f": "L4", "g6e": "L40S",
}
KNOWN_NON_CATALOG = {"p2": "K80", "g3": "M60", "g3s": "M60", "g4ad": "Radeon Pro V520", "g5g": "T4G",
                     "dl1": "Gaudi (DL1)", "inf1": "Inferentia", "inf2": "Inferentia2", "trn1": "Trainium",
                     "trn1n": "Trainium", "trn2": "Trainium2", "f1": "FPGA", "f2": "FPGA", "vt1": "video transcoder"}
CSV_KEYS = {  # our name -> CSV header / JSON attribute
    "instance": ("Instance Type", "instanceType"), "gpus": ("GPU", "gpu"), "vcpu": ("vCPU", "vcpu"),
    "memory": ("Memory", "memory"), "os": ("Operating System", "operatingSystem"), "tenancy": ("Tenancy", "tenancy"),
    "capacity": ("CapacityStatus", "capacitystatus"), "sw": ("Pre Installed S/W", "preInstalledSw"),
    "region": ("Region Code", "regionCode"), "location": ("Location", "location"),
    "family": ("Product Family", "productFamily"), "market": ("MarketOption", "marketoption"),
    "license": ("License Model", "licenseModel"), "cpu_model": ("Physical Processor", "physicalProcessor"),
}
_PREFILTER = re.compile(r'"(?:' + "|".join(re.escape(f) for f in sorted(FAMILIES, key=len, reverse=True))
                        + r')\.[0-9a-z-]+"')


def _regions(env: Mapping[str, str]) -> list[str]:
    raw = env.get(REGIONS_ENV, "")
    return [r.strip() for r in raw.split(",") if r.strip()] or list(DEFAULT_REGIONS)


def keep_line(line: str) -> bool:
    """Streaming pre-filter for the bulk CSV: GPU instance rows that may be on-demand Linux."""
    return "OnDemand" in line and "Linux" in line and _PREFILTER.search(line) is not None


def fetch(http: Http, env: Mapping[str, str]) -> list[Raw]:
    out: list[Raw] = []
    for region in _regions(env):
        body = http.get_lines(ENDPOINT.format(region=region), keep=keep_line, head=6)
        out.append((f"{region}/index.csv", "text/csv", body))
    return out


def parse(raw: list[Raw], fetched_at: datetime) -> list[ParseResult]:
    result = ParseResult(source=NAME, fetched_at=fetched_at)
    offers = []
    for item in raw:
        body = item[2].lstrip()
        if body[:1] in (b"{", b"["):
            rows = list(_json_rows(load_json(NAME, item), result))
        else:
            rows = list(_csv_rows(body.decode("utf-8-sig", errors="replace"), item[0], result))
        for row, price, currency in rows:
            o = _offer(row, price, currency, result, fetched_at)
            if o is not None:
                offers.append(o)
    add_unique(result, offers)
    return [result]


def _csv_rows(text: str, name: str, result: ParseResult):
    reader = csv_rows(csv.reader(io.StringIO(text)), result)
    header = None
    for fields in reader:
        # the header row by name: trimmed excerpts of the offer file may drop SKU or other columns
        if ("PricePerUnit" in fields and "Instance Type" in fields) or (
                "SKU" in fields and ("PricePerUnit" in fields or "Instance Type" in fields)):
            header = [f.strip() for f in fields]
            break
        if len(fields) >= 2 and fields[0] == "Publication Date":
            result.provenance.setdefault("publication_date", fields[1])
    if header is None:
        result.skip("no CSV header with SKU and PricePerUnit (not an AWS offer file)")
        return
    idx = {h: i for i, h in enumerate(header)}
    for fields in reader:
        if len(fields) != len(header):
            if fields:
                result.skip("malformed CSV row")
            continue
        row = {k: fields[idx[cols[0]]] if cols[0] in idx else None for k, cols in CSV_KEYS.items()}
        term = fields[idx["TermType"]] if "TermType" in idx else "OnDemand"
        if term != "OnDemand":
            result.skip(f"{term} term (on-demand kept)")
            continue
        unit = fields[idx["Unit"]] if "Unit" in idx else "Hrs"
        if unit not in ("Hrs", "Hours", "hrs"):
            result.skip(f"unit '{unit}' (expected Hrs)")
            continue
        price = fields[idx["PricePerUnit"]] if "PricePerUnit" in idx else None
        currency = fields[idx["Currency"]] if "Currency" in idx else "USD"
        yield row, price, currency


def _price_list_doc(doc) -> dict | None:
    """The Price List Query API answer (`pricing get-products`: PriceList = JSON strings, one product
    with its terms each) rebuilt as a bulk offer file."""
    items = doc.get("PriceList") if isinstance(doc, dict) else doc if isinstance(doc, list) else None
    if not isinstance(items, list):
        return None
    products, ondemand = {}, {}
    for item in items:
        if isinstance(item, str):
            try:
                item = json.loads(item) if len(item) < 2**20 else None
            except (ValueError, RecursionError):
                continue
        if not isinstance(item, dict) or not isinstance(item.get("product"), dict):
            continue
        sku = item["product"].get("sku") or f"item-{len(products)}"
        products[sku] = item["product"]
        ondemand[sku] = ((item.get("terms") or {}).get("OnDemand") or {})
    return {"products": products, "terms": {"OnDemand": ondemand}} if products else None


def _json_rows(doc, result: ParseResult):
    if not (isinstance(doc, dict) and "products" in doc):
        doc = _price_list_doc(doc)
    if doc is None:
        result.skip("no 'products' (bulk offer file) or 'PriceList' (Price List Query API) in the JSON")
        return
    if doc.get("publicationDate"):
        result.provenance.setdefault("publication_date", doc["publicationDate"])
    ondemand = ((doc.get("terms") or {}).get("OnDemand") or {})
    for sku, prod in (doc.get("products") or {}).items():
        attrs = dict((prod or {}).get("attributes") or {})
        attrs.setdefault("productFamily", (prod or {}).get("productFamily"))
        row = {k: attrs.get(cols[1]) for k, cols in CSV_KEYS.items()}
        terms = ondemand.get(sku)
        if not terms:
            if _family(row.get("instance")) in FAMILIES:
                result.skip("no on-demand term for the product")
            else:
                result.skip("not a GPU instance type")
            continue
        for term in terms.values():
            for dim in (term.get("priceDimensions") or {}).values():
                if dim.get("unit") not in ("Hrs", "Hours", "hrs"):
                    result.skip(f"unit '{dim.get('unit')}' (expected Hrs)")
                    continue
                ppu = dim.get("pricePerUnit") or {}
                cur = "USD" if "USD" in ppu else next(iter(ppu), "USD")
                yield row, ppu.get(cur), cur


def _family(instance: str | None) -> str:
    return (instance or "").split(".")[0].lower()


def _offer(row: dict, price_raw, currency_raw, result: ParseResult, fetched_at: datetime):
    sku = (row.get("instance") or "").strip()
    fam = _family(sku)
    gpu_name = FAMILIES.get(fam)
    if gpu_name is None:
        if fam in KNOWN_NON_CATALOG:
            result.skip(f"GPU not in the catalog: {KNOWN_NON_CATALOG[fam]} ({fam})")
        else:
            result.skip("not a GPU instance type")
        return None
    checks = (("family", ("Compute Instance", "Compute Instance (bare metal)"), "product family"),
              ("os", ("Linux",), "operating system"), ("tenancy", ("Shared",), "tenancy"),
              ("capacity", ("Used", None, ""), "capacity status"), ("sw", ("NA", "", None), "pre-installed software"),
              ("market", ("OnDemand", None, ""), "market option"))
    for key, ok, what in checks:
        v = row.get(key)
        if v not in ok:
            result.skip(f"{what} '{v}' (kept: {ok[0]})")
            return None
    count = num(row.get("gpus"))
    if count is None or count <= 0:
        result.skip("missing GPU count")
        return None
    price = price_or_skip(result, price_raw, "PricePerUnit")
    currency = currency_or_skip(result, currency_raw)
    if price is None or currency is None:
        return None
    g = gpu_fields(NAME, sku, gpu_name, count)
    if g is None:
        result.skip(f"GPU not in the catalog: {gpu_name}")
        return None
    facts = g.facts
    mem = re.match(r"\s*([\d.,]+)", str(row.get("memory") or ""))
    fractional = count < 1 or not float(count).is_integer()
    region = (row.get("region") or row.get("location") or "unknown").strip() or "unknown"
    notes = fact_notes(g) + [f"GPU model from the instance family ({FAMILY_SOURCE})"]
    if fractional:
        notes.append("fractional GPU: a shared slice of one card")
    return build(
        result, provider=NAME, region=region, sku=sku, gpu_id=g.gpu_id, gpu_count=count,
        gpu_exclusive="shared" if fractional else True, form_factor=g.form_factor, intra_node=g.intra_node,
        vcpus=num(row.get("vcpu")), cpu_model=row.get("cpu_model") or None,
        ram_gib=num(mem.group(1)) if mem else None, nvme_gib=facts.nvme_gib if facts else None,
        inter_node=InterNode(kind=facts.inter_node_kind or "unknown", gbps_per_node=facts.inter_node_gbps)
        if facts else InterNode(),
        price=Price(amount=price, currency=currency, per="hour"), spot=False, covers=["hosting", "power"],
        source=NAME, fetched_at=fetched_at, gpu_memory_gib=g.gpu_memory_gib, notes=notes,
    )
