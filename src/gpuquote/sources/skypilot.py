"""SkyPilot catalog `vms.csv` files (skypilot-org/skypilot-catalog, schema v8) -> Offers.

`Price`/`SpotPrice` are USD per instance-hour for all GPUs of the row. GCP lists GPUs as add-ons
(rows without InstanceType) priced apart from the host VM, so a GCP offer is GPU row + host row.
`GpuInfo` is a Python-literal dict whose memory field means different things per cloud (per GPU or the total,
MiB or GB: MEMORY_SEMANTICS, checked on each file); the per-GPU figure is then cross-checked against the cards
the name allows (their usable-to-label window) and never moves an offer to a larger card.
Columns are read by header name; column order differs between clouds.
"""

from __future__ import annotations

import ast
import csv
import hashlib
import io
import json
from datetime import UTC, datetime
from pathlib import Path

from gpuquote.errors import BadInput
from gpuquote.hardware import load_gpus
from gpuquote.offers import InterNode, Price
from gpuquote.sources.base import ParseResult, add_by_zone, gpu_fields, zoned_offers
from gpuquote.sources.common import csv_rows

HOSTED_URL = "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/v8/{cloud}/vms.csv"
REQUIRED = ("InstanceType", "AcceleratorName", "AcceleratorCount", "Price")
BILLING_S = {"aws": 1, "gcp": 1, "azure": 60, "lambda": 60, "runpod": 1, "vast": 1}
# GCP: the host VM a GPU add-on row is attached to, by (accelerator, count). N1-attached GPUs can go on
# many N1 shapes; we assume n1-standard-(8 x count) (8 vCPU / 30 GB per GPU) and say so in the offer.
GCP_HOST = {
    "A100": {1: "a2-highgpu-1g", 2: "a2-highgpu-2g", 4: "a2-highgpu-4g", 8: "a2-highgpu-8g", 16: "a2-megagpu-16g"},
    "A100-80GB": {1: "a2-ultragpu-1g", 2: "a2-ultragpu-2g", 4: "a2-ultragpu-4g", 8: "a2-ultragpu-8g"},
    "H100": {1: "a3-highgpu-1g", 2: "a3-highgpu-2g", 4: "a3-highgpu-4g", 8: "a3-highgpu-8g"},
    "H100-MEGA": {8: "a3-megagpu-8g"},
    "H200": {8: "a3-ultragpu-8g"},
    "B200": {8: "a4-highgpu-8g"},
    "L4": {1: "g2-standard-4", 2: "g2-standard-24", 4: "g2-standard-48", 8: "g2-standard-96"},
}
GCP_N1_GPUS = {"T4", "V100", "P100", "P4", "K80"}


def _num(v: str | None) -> float | None:
    try:
        x = float(v) if v not in (None, "") else None
    except ValueError:
        return None
    return x


def read_rows(text: str, result: ParseResult) -> tuple[list[str], list[dict]]:
    """Rows by header; repair the Azure mirror's unquoted `V1,V2` Generation field, skip other bad rows."""
    reader = csv.reader(io.StringIO(text))
    try:
        header = [h.strip() for h in next(reader)]
    except StopIteration:
        raise BadInput("skypilot: empty catalog file", field="PATH") from None
    except csv.Error as e:
        raise BadInput(f"skypilot: the header row is not CSV ({e})", field="PATH") from None
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise BadInput(f"skypilot: not a SkyPilot vms.csv: missing column(s) {', '.join(missing)}; expected "
                       f"{', '.join(REQUIRED)}, ...", field="PATH")
    rows = []
    gen = header.index("Generation") if "Generation" in header else None
    for fields in csv_rows(reader, result):
        if not fields:
            continue
        if len(fields) == len(header) + 1 and gen is not None and fields[gen] == "V1" and fields[gen + 1] == "V2":
            fields = fields[:gen] + ["V1,V2"] + fields[gen + 2:]
            result.repaired += 1
        if len(fields) != len(header):
            result.skip(f"malformed row ({len(fields)} fields for {len(header)} columns)")
            continue
        rows.append(dict(zip(header, fields, strict=True)))
    return header, rows


def _gpu_info(info: str) -> dict:
    if not info or not info.startswith("{"):
        return {}
    d = _literal(info)
    return d if isinstance(d, dict) else {}


MAX_INFO_CHARS = 4096  # a GpuInfo cell is ~200 characters; a longer one is not parsed (hostile CSV)


def _literal(info: str):
    """A GpuInfo cell (a Python or JSON literal) parsed within bounds; None when it is not one."""
    if len(info) > MAX_INFO_CHARS:
        return None
    try:
        return ast.literal_eval(info)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        try:
            return json.loads(info)
        except (ValueError, RecursionError):
            return None


def _gpu_info_name(info: str) -> str | None:
    gpus = _gpu_info(info).get("Gpus") or []
    name = gpus[0].get("Name") if gpus and isinstance(gpus[0], dict) else None
    return str(name) if name else None


# What `GpuInfo` -> Gpus[0].MemoryInfo.SizeInMiB holds, per cloud, as checked on the copies in
# shared/data/skypilot-catalog/ (v8/<cloud>/vms.csv unless named; anycloud = anycloud-mirror-2026-05-20):
#   per_gpu_mib  MiB per GPU. aws (v8/aws/vms_gpu_subset_p4d-p5en.csv: p4d 40960, TotalGpuMemoryInMiB 327680 = 8x),
#                gcp (anycloud/gcp: A100 40960, A100-80GB 81920), lambda (anycloud/lambda: gpu_8x_a100_80gb_sxm4
#                81920; its TotalGpuMemoryInMiB repeats the per-GPU figure), daytona, hyperbolic, jarvislabs,
#                mithril, nebius, seeweb, verda, yotta (Total = count x Size in all of them), lium (no Total;
#                L40S_2x 46080 = one 48 GB card with ECC on).
#   total_mib    MiB summed over the row's GPUs. vast (v8/vast and anycloud/vast: 2x-A100_PCIE-32-65536 81920 =
#                2 x 40 GB, 8x-H100_SXM 652472 = 8 x 81559, Total equal to Size), primeintellect
#                (datacrunch__2xV100_16GB 32768 = 2 x 16 GB, 8xA100_80GB 655360; its Total is count x Size again).
#   per_gpu_gb   GB per GPU, not MiB. shadeform (lambdalabs_A100x8 40, crusoe_A100-80GBx2 80; no Total).
#   none         no memory. azure (anycloud/azure: GpuInfo holds the accelerator name), hyperstack (empty GpuInfo).
# A Size of 0 (seeweb RTX PRO 6000) is unknown. A cloud not listed here (a newer file, another cloud) is read
# both ways (per GPU and total / count); only a reading that exactly one way fits a card of the name is kept.
MEMORY_SEMANTICS = {
    **dict.fromkeys(("aws", "gcp", "lambda", "daytona", "hyperbolic", "jarvislabs", "mithril", "nebius", "seeweb",
                     "verda", "yotta", "lium"), "per_gpu_mib"),
    "vast": "total_mib", "primeintellect": "total_mib", "shadeform": "per_gpu_gb",
    "azure": "none", "hyperstack": "none",
}


def _gpu_memory_gib(cloud: str, info: str, count: float, gpu_id: str, result: ParseResult) -> float | None:
    """Per-GPU memory (GiB) from GpuInfo by this cloud's own convention (MEMORY_SEMANTICS), or None if unknown."""
    how = MEMORY_SEMANTICS.get(cloud, "unknown")
    d = _gpu_info(info)
    if how == "none" or not d:
        return None
    gpus = d.get("Gpus") or []
    size = (gpus[0].get("MemoryInfo") or {}).get("SizeInMiB") if gpus and isinstance(gpus[0], dict) else None
    try:
        size = float(size) if size is not None else None
    except (TypeError, ValueError):
        size = None
    if not size or size <= 0 or not count:
        return None
    if how == "per_gpu_mib":
        return size / 1024
    if how == "per_gpu_gb":
        return size
    if how == "total_mib":
        if count != 1:
            result.corrections["GpuInfo memory is the total for the row's GPUs: divided by the GPU count"] += 1
        return size / 1024 / count
    cat = load_gpus()
    fits = [g for g in (size / 1024, size / 1024 / count) if any(cat[m].memory_matches(g) for m in _members(gpu_id))]
    if len(set(fits)) == 1:
        return fits[0]
    result.corrections["GpuInfo memory of an unlisted cloud is ambiguous (per GPU or total): left unknown"] += 1
    return None


def parse_vms_csv(text: str, cloud: str, *, fetched_at: datetime, source: str) -> ParseResult:
    """Parse one cloud's vms.csv text into offers (on-demand and spot kept apart)."""
    result = ParseResult(source=f"skypilot:{cloud}", fetched_at=fetched_at)
    _, rows = read_rows(text, result)
    from gpuquote.sources import china_catalog

    if china_catalog.is_china_cloud(cloud):  # CNY catalogs with the clouds' own GPU spellings
        res = china_catalog.parse_rows(rows, cloud, fetched_at=fetched_at, source=source)
        res.repaired, res.skip_reasons = result.repaired, result.skip_reasons + res.skip_reasons
        return res
    if cloud == "gcp":
        rows = _gcp_combine(rows, result)
    by_key: dict[tuple, dict] = {}
    for r in rows:
        name = (r.get("AcceleratorName") or "").strip()
        if not name:
            continue  # CPU-only row (not an offer we list); not counted as skipped
        if name.lower().startswith("tpu-"):
            result.skip("TPU slice: not a GPU offer")
            continue
        count = _num(r.get("AcceleratorCount"))
        if not count or count <= 0:
            result.skip("missing or zero AcceleratorCount")
            continue
        sku = (r.get("InstanceType") or "").strip()
        upstream = r.get("UpstreamCloudId")
        # GpuInfo's own name can pin the board where AcceleratorName does not (RunPod: 'A100-80GB' / 'A100 PCIe')
        hints = (upstream, _gpu_info_name(r.get("GpuInfo", "")))
        probe = gpu_fields(cloud, sku, name, count, extra_names=hints)
        if probe is None:
            result.skip(f"GPU not in the catalog: {name}")
            continue
        mem = _gpu_memory_gib(cloud, r.get("GpuInfo", ""), count, probe.gpu_id, result)
        fields = gpu_fields(cloud, sku, name, count, memory_gib=mem, extra_names=hints) if mem else probe
        if not fields.memory_settled:
            result.corrections["GpuInfo memory fits no card of the GPU name: memory left unknown"] += 1
        facts = fields.facts
        region = (r.get("Region") or "unknown").strip() or "unknown"
        zone = (r.get("AvailabilityZone") or "").strip()
        notes = list(fields.notes) + list(r.get("_notes", []))
        if facts and facts.note:
            notes.append(f"{facts.note} ({facts.source})")
        fractional = count < 1 or not float(count).is_integer()
        for spot, col in ((False, "Price"), (True, "SpotPrice")):
            price = _num(r.get(col))
            if price is None or (spot and price == 0):
                if not spot:
                    result.skip("no on-demand price")
                continue
            if price <= 0:
                result.skip("zero or negative price")
                continue
            offer = dict(
                provider=cloud, region=region, sku=sku or name, gpu_id=fields.gpu_id, gpu_count=count,
                gpu_exclusive="shared" if fractional else True,
                form_factor=fields.form_factor, intra_node=fields.intra_node,
                vcpus=_num(r.get("vCPUs")), ram_gib=_num(r.get("MemoryGiB")),
                nvme_gib=facts.nvme_gib if facts else (_num(r.get("StorageGiB")) if r.get("StorageGiB") else None),
                inter_node=InterNode(kind=(facts.inter_node_kind if facts and facts.inter_node_kind else "unknown"),
                                     gbps_per_node=facts.inter_node_gbps if facts else None),
                price=Price(amount=price, currency="USD", per="hour"),
                billing_granularity_s=BILLING_S.get(cloud), spot=spot,
                covers=["hosting", "power"], source=source, fetched_at=fetched_at,
                gpu_memory_gib=fields.gpu_memory_gib,
                notes=notes + (["fractional GPU: a shared slice of one card"] if fractional else []),
            )
            add_by_zone(by_key, offer, zone)
    result.offers.extend(zoned_offers(by_key))
    return result


def _members(gpu_id: str) -> tuple[str, ...]:
    from gpuquote.hardware import members

    return members(gpu_id)


def _gcp_combine(rows: list[dict], result: ParseResult) -> list[dict]:
    """GCP: add each GPU add-on row to the price of the host VM it runs on, zone by zone."""
    hosts: dict[tuple[str, str], dict] = {}
    for r in rows:
        if r.get("InstanceType") and not r.get("AcceleratorName"):
            hosts[(r["InstanceType"], r.get("AvailabilityZone", ""))] = r
    out = []
    for r in rows:
        if r.get("InstanceType"):
            if r.get("AcceleratorName"):
                out.append(r)  # a VM row that already carries its GPUs
            continue
        name = r.get("AcceleratorName", "")
        if name.lower().startswith("tpu-"):
            out.append(r)
            continue
        count = int(_num(r.get("AcceleratorCount")) or 0)
        host_type = GCP_HOST.get(name, {}).get(count)
        note = None
        if host_type is None and name in GCP_N1_GPUS:
            host_type = f"n1-standard-{min(8 * count, 96)}"
            note = f"host VM {host_type} assumed (8 vCPU per GPU); other N1 shapes are priced differently"
        host = hosts.get((host_type, r.get("AvailabilityZone", ""))) if host_type else None
        if host is None:
            result.skip(f"GCP GPU row without a host VM in its zone: {name} x{count}")
            continue
        combined = dict(host)
        combined["AcceleratorName"] = name
        combined["AcceleratorCount"] = r["AcceleratorCount"]
        combined["GpuInfo"] = r.get("GpuInfo", "")
        for col in ("Price", "SpotPrice"):
            a, b = _num(r.get(col)), _num(host.get(col))
            combined[col] = "" if a is None or b is None or b == 0 else repr(a + b)
        combined["_notes"] = ([note] if note else []) + ["price = GPU add-on + host VM"]
        out.append(combined)
    return out


def find_files(path: Path) -> list[tuple[str, Path]]:
    """(cloud, vms.csv) pairs under a folder laid out as <cloud>/vms*.csv, or one file."""
    if path.is_file():
        return [(path.parent.name, path)]
    if not path.is_dir():
        raise BadInput(f"skypilot: no such file or folder: {path}", field="PATH")
    found = sorted((p.parent.name, p) for p in path.glob("*/vms*.csv"))
    if not found:
        found = sorted((p.parent.name, p) for p in path.glob("**/vms*.csv"))
    if not found:
        raise BadInput(f"skypilot: no <cloud>/vms.csv under {path}", field="PATH")
    return found


def parse_path(path: Path, *, fetched_at: datetime | None = None, label: str | None = None,
               provenance: dict | None = None) -> list[ParseResult]:
    """Parse a downloaded catalog (folder of <cloud>/vms.csv, or one file): one result per cloud."""
    results = []
    for cloud, f in find_files(Path(path)):
        try:
            raw = f.read_bytes()
            text = raw.decode("utf-8-sig")
        except (OSError, UnicodeDecodeError) as e:
            raise BadInput(f"skypilot: cannot read {f}: {e}", field="PATH") from None
        ts = fetched_at or datetime.fromtimestamp(f.stat().st_mtime, UTC)
        src = f"skypilot:{label or f.parent.parent.name}/{cloud}/{f.name}"
        res = parse_vms_csv(text, cloud, fetched_at=ts, source=src)
        res.provenance = {**res.provenance, "file": str(f.name), "cloud": cloud,
                          "sha256": hashlib.sha256(raw).hexdigest(), "bytes": len(raw), **(provenance or {})}
        res.raw = [(f"{cloud}/{f.name}", "text/csv", raw)]
        results.append(res)
    return results
