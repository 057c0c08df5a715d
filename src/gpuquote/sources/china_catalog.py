"""The community China-cloud catalogs (Alibaba Cloud, Tencent Cloud) in SkyPilot v8 `vms.csv` form -> Offers.

The files (sugarlxn/skypilot-catalog, see shared/data/china/SOURCE.md) price every row in USD converted
from CNY at a fixed 0.138. The CNY amount is restored (USD / 0.138) and kept as the offer's native price,
so USD figures come from gpuquote's dated rates like every other CNY price. `AcceleratorName` is the
cloud's own spelling (`A100 80G`, `H`, `L20N 72G`, vGPU slices `A10*1/6`, `T4/4`); `GpuInfo` is
"{name} {memory}GB" (the slice's memory for a vGPU slice). Rows that are not GPUs we can describe
(FPGA, Ascend-class and Zixiao accelerators, codenames no public source identifies) are skipped with a
counted reason, and prices no GPU-hour is sold at are flagged (integrity), never imported.
"""

from __future__ import annotations

import re
from datetime import datetime

from gpuquote.hardware import load_gpus
from gpuquote.offers import InterNode, Price
from gpuquote.sources.base import ParseResult, add_by_zone, gpu_fields, zoned_offers

CLOUDS = ("alicloud", "tencentcloud")
#: The catalog's fixed conversion (`--cny-usd-rate 0.138` in its fetch workflows).
CATALOG_CNY_USD = 0.138
#: Below this many USD per whole-GPU-hour an on-demand or spot price is not plausible (the cheapest
#: whole datacenter GPU rents for ~0.1 $/h); three gn5i rows at 0.0116 $/h for 2x P4 trip it.
MIN_PLAUSIBLE_USD_PER_GPU_HOUR = 0.03
#: Cloud spellings the alias resolver should not learn globally (a bare "H" means nothing elsewhere).
NAMES = {
    "alicloud": {"H": "H20", "Nvidia Tesla V100": "V100"},
    "tencentcloud": {},
}
#: Accelerator names skipped, by reason (matched on the lowercased name).
SKIP = (
    (re.compile(r"xilinx|vu9p"), "FPGA (Xilinx VU9P): not a GPU"),
    (re.compile(r"^a910"), "Ascend-class NPU (A910X): not in the GPU catalog"),
    (re.compile(r"zixiao"), "Tencent Zixiao inference chip: not in the GPU catalog"),
    (re.compile(r"^g\d\de?$"), "GPU codename no public source identifies (Alibaba G39/G49/G49E/G59)"),
    (re.compile(r"^v8-"), "vGPU of an unnamed GPU (Alibaba sgn8ia 'v8-*')"),
    (re.compile(r"^h-e$"), "GPU model not named by Alibaba ('H-e', 141 GB)"),
    (re.compile(r"s7150|sg1|vg1000|ga107"), "graphics / video card, not a compute GPU in the catalog"),
)
_SLICE = re.compile(r"^(?P<base>.+?)\s*(?:\*\s*1\s*/\s*(?P<d1>\d+)|/\s*(?P<d2>\d+)|\*\s*1)$")
_MEM = re.compile(r"(\d+(?:\.\d+)?)\s*GB\s*$", re.IGNORECASE)
NOTES = {
    "alicloud": ["price includes a 40 GiB ESSD system disk (DescribePrice TradePrice for instance + disk)"],
    "tencentcloud": ["InstancePrice only (UnitPriceDiscount); whether the default system disk is included is not "
                     "stated", "no spot price in this catalog"],
}


def is_china_cloud(cloud: str) -> bool:
    return cloud in CLOUDS


def cny_from_catalog_usd(usd: float) -> float:
    """The CNY amount the catalog converted: USD / 0.138, to the fen."""
    return round(usd / CATALOG_CNY_USD, 2)


def split_slice(name: str) -> tuple[str, float]:
    """'A10*1/6' -> ('A10', 1/6); 'T4/4' -> ('T4', 0.25); 'A10*1' -> ('A10', 1.0); others -> (name, 1.0)."""
    m = _SLICE.match(name.strip())
    if not m:
        return name.strip(), 1.0
    d = m.group("d1") or m.group("d2")
    return m.group("base").strip(), 1.0 / int(d) if d else 1.0


def skip_reason(name: str) -> str | None:
    low = name.strip().lower()
    for pat, why in SKIP:
        if pat.search(low):
            return why
    return None


def _num(v: str | None) -> float | None:
    try:
        return float(v) if v not in (None, "") else None
    except ValueError:
        return None


def parse_rows(rows: list[dict], cloud: str, *, fetched_at: datetime, source: str) -> ParseResult:
    """Rows of one cloud's vms.csv (dicts by header) -> offers in CNY, zones merged where priced alike."""
    result = ParseResult(source=f"skypilot:{cloud}", fetched_at=fetched_at)
    result.provenance["flagged"] = []
    cat = load_gpus()
    by_key: dict[tuple, dict] = {}
    for r in rows:
        raw_name = (r.get("AcceleratorName") or "").strip()
        if not raw_name:
            continue
        why = skip_reason(raw_name)
        if why:
            result.skip(why)
            continue
        base, fraction = split_slice(raw_name)
        count = _num(r.get("AcceleratorCount"))
        if not count or count <= 0:
            result.skip("missing or zero AcceleratorCount")
            continue
        sku = (r.get("InstanceType") or "").strip()
        name = NAMES.get(cloud, {}).get(base, base)
        m = _MEM.search(r.get("GpuInfo") or "")
        mem = float(m.group(1)) if m else None
        g = gpu_fields(cloud, sku, name, count, memory_gib=mem if fraction == 1.0 else None)
        if g is None:
            result.skip(f"GPU not in the catalog: {raw_name}")
            continue
        full = g.gpu_memory_gib or (cat[g.gpu_id].memory_gib if g.gpu_id in cat else None)
        if fraction == 1.0 and mem and full and mem < full * 0.9:
            fraction = mem / full  # a vGPU slice spelled as the whole card (RTX 5880 with 12 GB of 48)
        gpus = count * fraction
        vgpu = sku.startswith(("ecs.sgn", "ecs.vgn"))
        shared = fraction < 1.0 or sku.startswith("ecs.sgn")
        notes = list(g.notes) + NOTES.get(cloud, [])
        if g.facts and g.facts.note:
            notes.append(f"{g.facts.note} ({g.facts.source})")
        if name != base:
            notes.append(f"'{base}' read as {name} (see data/instances.yaml)")
        if shared:
            notes.append(f"vGPU slice: {fraction:.3g} of one {base} ({raw_name}, {mem:g} GB), shared"
                         if mem else f"vGPU slice: {fraction:.3g} of one {base}, shared")
        elif vgpu:
            notes.append("vGPU (GRID) instance: a whole card behind a vGPU profile")
        region = (r.get("Region") or "unknown").strip() or "unknown"
        zone = (r.get("AvailabilityZone") or "").strip()
        od = _num(r.get("Price"))
        if od and not shared and od / gpus < MIN_PLAUSIBLE_USD_PER_GPU_HOUR:  # integrity: the whole row is suspect
            result.skip(f"implausible price (below {MIN_PLAUSIBLE_USD_PER_GPU_HOUR:g} USD per GPU-hour)")
            result.provenance["flagged"].append(f"{cloud}:{region}:{sku}@{zone} {od:g} USD/h for {gpus:g} GPU")
            continue
        for spot, col in ((False, "Price"), (True, "SpotPrice")):
            usd = _num(r.get(col))
            if usd is None or (spot and usd == 0):
                if not spot:
                    result.skip("no on-demand price")
                continue
            if usd <= 0:
                result.skip("zero or negative price")
                continue
            cny = cny_from_catalog_usd(usd)
            offer = dict(
                provider=cloud, region=region, sku=sku, gpu_id=g.gpu_id, gpu_count=gpus,
                gpu_exclusive="shared" if shared else True, form_factor=g.form_factor,
                intra_node="none" if shared else g.intra_node,
                vcpus=_num(r.get("vCPUs")), ram_gib=_num(r.get("MemoryGiB")),
                nvme_gib=g.facts.nvme_gib if g.facts else None,
                inter_node=InterNode(kind=(g.facts.inter_node_kind if g.facts and g.facts.inter_node_kind
                                           else "unknown"),
                                     gbps_per_node=g.facts.inter_node_gbps if g.facts else None),
                price=Price(amount=cny, currency="CNY", per="hour"), spot=spot,
                covers=["hosting", "power"], source=source, fetched_at=fetched_at,
                gpu_memory_gib=(mem if shared else g.gpu_memory_gib or mem),
                notes=notes + [f"CNY {cny:g}/h restored from the catalog's {usd:g} USD (converted at the fixed "
                               f"{CATALOG_CNY_USD} USD/CNY); USD shown here uses the dated rates"],
            )
            add_by_zone(by_key, offer, zone)
    result.offers.extend(zoned_offers(by_key))
    return result
