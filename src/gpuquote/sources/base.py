"""What every source adapter returns, and the shared steps from a GPU name to an Offer's GPU fields."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from gpuquote.hardware import load_gpus, settle_memory, try_resolve
from gpuquote.offers import Offer
from gpuquote.sources.knowledge import InstanceFacts, lookup


@dataclass
class ParseResult:
    """Offers parsed from one source's raw data, with what was repaired or skipped and why."""

    source: str
    offers: list[Offer] = field(default_factory=list)
    repaired: int = 0
    skip_reasons: Counter = field(default_factory=Counter)
    corrections: Counter = field(default_factory=Counter)
    provenance: dict = field(default_factory=dict)
    fetched_at: datetime | None = None
    raw: list[tuple[str, str, bytes]] = field(default_factory=list)
    #: One example row per skip reason ("retailPrice -5 (Standard_NC24ads_A100_v4, eastus)"), so a refusal
    #: can show what it refused; `row` is the row being parsed, set by the adapter.
    skip_examples: dict[str, str] = field(default_factory=dict)
    row: str | None = None

    @property
    def skipped(self) -> int:
        return sum(self.skip_reasons.values())

    def skip(self, reason: str, detail: str | None = None) -> None:
        self.skip_reasons[reason] += 1
        if reason not in self.skip_examples and (detail or self.row):
            self.skip_examples[reason] = " ".join(x for x in (detail, f"({self.row})" if self.row else None) if x)

    def summary(self) -> dict:
        return {"source": self.source, "imported": len(self.offers), "repaired": self.repaired,
                "skipped": self.skipped, "skip_reasons": dict(self.skip_reasons.most_common()),
                "skip_examples": dict(self.skip_examples),
                "corrections": dict(self.corrections.most_common())}


_HINTS = [(re.compile(r"sxm"), "sxm"), (re.compile(r"pcie"), "pcie"), (re.compile(r"nvl(?!ink)"), "nvl")]


def name_variant_hint(*names: str | None) -> str | None:
    """SXM / PCIe / NVL spelled in a marketplace SKU name ('1x-A100_SXM4-32-65536')."""
    for n in names:
        if not n:
            continue
        low = n.lower()
        for pat, variant in _HINTS:
            if pat.search(low):
                return variant
    return None


@dataclass
class GpuFields:
    gpu_id: str
    form_factor: str
    intra_node: str
    gpu_memory_gib: float | None
    facts: InstanceFacts | None
    notes: list[str]
    memory_settled: bool = True  # False: the reported memory fits no card of the name (memory left unknown)


def gpu_fields(provider: str, sku: str, gpu_name: str, gpu_count: float, *, memory_gib: float | None = None,
               extra_names: tuple[str | None, ...] = ()) -> GpuFields | None:
    """GPU id, form factor and intra-node link from instance knowledge, the name, memory and SKU hints.

    `memory_gib` is the per-GPU memory the source reports (each importer converts its own unit and total-or-per-GPU
    convention first). It narrows a family only to cards whose usable-to-label window holds it, and is checked
    against a SKU the name pins: a contradiction leaves the model with its memory unknown, never a larger card.
    Returns None when the GPU name is not in the catalog.
    """
    facts = lookup(provider, sku)
    notes: list[str] = []
    settled = True
    if facts and facts.gpu:
        res = try_resolve(facts.gpu)
    else:
        res = try_resolve(gpu_name)
        if res is None:
            return None
        res, settled = settle_memory(res.id, memory_gib, name_variant_hint(sku, *extra_names))
        if not settled:
            notes.append(f"reported memory {memory_gib:.1f} GiB per GPU fits no {gpu_name} card: memory left unknown")
    if res is None:
        return None
    gpus = load_gpus()
    forms = {gpus[m].form_factor for m in res.members}
    form = forms.pop() if len(forms) == 1 else "unknown"
    if facts and facts.intra_node:
        intra = facts.intra_node
    elif gpu_count <= 1:
        intra = "none"
    elif "nvlink" in (sku or "").lower() or any("nvlink" in (n or "").lower() for n in extra_names):
        intra = "nvlink"
    elif gpu_count == 8 and form == "sxm" and gpus[res.members[0]].family in ("a100", "h100", "h200", "b200", "h800",
                                                                               "a800", "b300", "h20"):
        intra = "nvswitch"  # 8-GPU HGX boards of these GPUs always carry NVSwitch
        notes.append("intra_node nvswitch inferred: 8x SXM on an HGX board")
    else:
        intra = "unknown"
    mems = {gpus[m].memory_gib for m in res.members}
    return GpuFields(res.id, form, intra, mems.pop() if len(mems) == 1 else None, facts, notes, settled)


def add_by_zone(by_key: dict[tuple, dict], offer: dict, zone: str | None) -> None:
    """One offer per (region, sku, spot): zones at the same price merge into it, a zone priced differently
    becomes its own offer (`<id>@<zone>`). SkyPilot catalogs and the China-cloud catalogs list one row per zone."""
    region, sku, spot = offer["region"], offer["sku"], offer["spot"]
    prev = by_key.get((region, sku, spot))
    if prev is None:
        offer["_zones"] = {zone} if zone else set()
        by_key[(region, sku, spot)] = offer
    elif abs(prev["price"].amount - offer["price"].amount) < 1e-9:
        prev["_zones"].add(zone)
    elif (region, sku, spot, zone) not in by_key:
        offer["_zones"] = {zone}
        offer["id"] = f"{offer['provider']}:{region}:{sku}@{zone}" + (":spot" if spot else "")
        by_key[(region, sku, spot, zone)] = offer


def zoned_offers(by_key: dict[tuple, dict]) -> list[Offer]:
    """The offers `add_by_zone` collected, each noting the zones it stands for."""
    out = []
    for offer in by_key.values():
        zones = sorted(z for z in offer.pop("_zones") if z)
        if zones:
            offer["notes"] = offer["notes"] + [f"zones: {', '.join(zones)}"]
        out.append(Offer(**offer))
    return out
