"""Instance knowledge: per instance family, the facts catalogs do not carry (data/instances.yaml)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from gpuquote.config import DATA_DIR


@dataclass(frozen=True)
class InstanceFacts:
    provider: str
    pattern: str
    gpu: str | None
    intra_node: str | None
    inter_node_kind: str | None
    inter_node_gbps: float | None
    nvme_gib: float | None
    source: str
    note: str | None


@lru_cache(maxsize=1)
def _rules() -> list[tuple[re.Pattern, InstanceFacts]]:
    import yaml

    data = yaml.safe_load((DATA_DIR / "instances.yaml").read_text(encoding="utf-8"))
    out = []
    for r in data["instances"]:
        inter = r.get("inter_node") or {}
        facts = InstanceFacts(
            provider=r["provider"], pattern=r["match"], gpu=r.get("gpu"), intra_node=r.get("intra_node"),
            inter_node_kind=inter.get("kind"), inter_node_gbps=inter.get("gbps_per_node"),
            nvme_gib=r.get("nvme_gib"), source=r["source"], note=r.get("note"),
        )
        out.append((re.compile(r["match"], re.IGNORECASE), facts))
    return out


@lru_cache(maxsize=8192)
def lookup(provider: str, sku: str) -> InstanceFacts | None:
    """The facts for a provider's SKU, or None when nothing is known."""
    for pat, facts in _rules():
        if facts.provider == provider and pat.fullmatch(sku or ""):
            return facts
    return None


def all_facts() -> list[InstanceFacts]:
    return [f for _, f in _rules()]
