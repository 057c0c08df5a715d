"""The instance knowledge file (data/instances.yaml) stays well-formed and consistent with the real catalogs."""

from __future__ import annotations

import csv
import re
from pathlib import Path

from gpuquote.hardware import load_gpus, try_resolve
from gpuquote.sources.knowledge import all_facts, lookup

INTRA = {"nvswitch", "nvlink", "pcie", "none"}
INTER = {"ib", "roce", "ethernet", "omnipath"}


def test_every_row_is_sourced_and_uses_known_values():
    facts = all_facts()
    assert len(facts) >= 60
    for f in facts:
        assert f.source.startswith("https://"), f
        assert f.note, f"{f.provider} {f.pattern}: the supporting quote belongs in note"
        re.compile(f.pattern)
        if f.gpu is not None:
            assert try_resolve(f.gpu) is not None, f.gpu
        assert f.intra_node in INTRA | {None}, f
        assert f.inter_node_kind in INTER | {None}, f
        assert f.inter_node_gbps is None or f.inter_node_gbps > 0, f
        assert f.nvme_gib is None or f.nvme_gib > 0, f


def _catalog_rows(shared_dir: Path) -> list[tuple[str, str, float]]:
    """(provider, sku, gpu count) for every GPU VM row of the catalog copies, GCP hosts included."""
    base = shared_dir / "data" / "skypilot-catalog"
    files = {"aws": base / "v8" / "aws" / "vms_gpu_subset_p4d-p5en.csv"}
    for cloud in ("azure", "gcp", "lambda"):
        files[cloud] = base / "anycloud-mirror-2026-05-20" / cloud / "vms.csv"
    for cloud in ("alicloud", "tencentcloud"):  # the China-cloud catalogs (shared/data/china)
        files[cloud] = shared_dir / "data" / "china" / cloud / "vms.csv"
    out = set()
    for cloud, f in files.items():
        with f.open(newline="", encoding="utf-8") as fh:
            for r in csv.DictReader(fh):
                sku = r.get("InstanceType") or ""
                count = float(r.get("AcceleratorCount") or 0)
                if sku and (count or cloud == "gcp"):
                    out.add((cloud, sku, count))
    return sorted(out)


def test_no_catalog_sku_is_claimed_by_two_rows(shared_dir):
    """Rules are tried in order; a SKU matched by two rows would silently take the first one's facts."""
    by_provider: dict[str, list] = {}
    for f in all_facts():
        by_provider.setdefault(f.provider, []).append(re.compile(f.pattern, re.IGNORECASE))
    checked = 0
    for cloud, sku, _ in _catalog_rows(shared_dir):
        hits = [p.pattern for p in by_provider.get(cloud, []) if p.fullmatch(sku)]
        assert len(hits) <= 1, (cloud, sku, hits)
        checked += bool(hits)
    assert checked >= 50


def test_facts_agree_with_the_catalog_gpu_counts(shared_dir):
    """A one-GPU (or fractional) SKU has no GPU-to-GPU link; a multi-GPU SKU never says `none`."""
    gpus = load_gpus()
    for cloud, sku, count in _catalog_rows(shared_dir):
        f = lookup(cloud, sku)
        if f is None or (cloud == "gcp" and not count):
            continue
        if count <= 1:
            assert f.intra_node in ("none", None), (cloud, sku, f.intra_node)
        else:
            assert f.intra_node != "none", (cloud, sku)
        if f.intra_node == "nvswitch" and f.gpu in gpus:
            assert gpus[f.gpu].form_factor in ("sxm", "oam"), (cloud, sku, f.gpu)
