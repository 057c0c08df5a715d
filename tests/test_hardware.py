"""GPU catalog and alias resolver: every spelling to one id; ambiguity kept as a family."""

from __future__ import annotations

import csv

import pytest

from gpuquote.errors import BadInput
from gpuquote.hardware import get_gpu, load_gpus, matches, narrow, resolve

SKUS = {
    "A100-80G-PCIe": "a100-80gb-pcie",
    "A100 80GB SXM4": "a100-80gb-sxm4",
    "A100-SXM4-80GB": "a100-80gb-sxm4",
    "NVIDIA A100-SXM4-80GB": "a100-80gb-sxm4",
    "NVIDIA A100-PCIE-40GB": "a100-40gb-pcie",
    "NVIDIA A100 80GB PCIe": "a100-80gb-pcie",
    "H100-MEGA": "h100-80gb-sxm5",
    "H100-SXM": "h100-80gb-sxm5",
    "NVIDIA H100 80GB HBM3": "h100-80gb-sxm5",
    "NVIDIA H100 PCIe": "h100-80gb-pcie",
    "H100 NVL": "h100-nvl-94gb",
    "H100-80G-SXM5": "h100-80gb-sxm5",
    "RTX6000-Ada": "rtx-6000-ada",
    "RTX6000Ada": "rtx-6000-ada",
    "NVIDIA RTX 6000 Ada Generation": "rtx-6000-ada",
    "RTXPRO6000": "rtx-pro-6000-blackwell-server",
    "RTX-PRO-6000": "rtx-pro-6000-blackwell-server",
    "Tesla V100-SXM2-32GB": "v100-32gb-sxm2",
    "NVIDIA GeForce RTX 4090": "rtx-4090",
    "A10G": "a10g",
    "L40S": "l40s",
    "a100-80gb-sxm4": "a100-80gb-sxm4",
}
FAMILIES = {
    "A100": ("a100", {"memory", "form_factor"}),
    "A100-80GB": ("a100-80gb", {"form_factor"}),
    "A100_SXM4": ("a100-sxm", {"memory"}),
    "H100": ("h100", {"memory", "form_factor"}),
    "V100-32GB": ("v100-32gb", {"form_factor"}),
}


@pytest.mark.parametrize("name,expected", SKUS.items())
def test_names_resolve_to_one_sku(name, expected):
    r = resolve(name)
    assert r.kind == "sku" and r.id == expected


@pytest.mark.parametrize("name,expected", FAMILIES.items())
def test_ambiguous_names_stay_families(name, expected):
    fid, unknown = expected
    r = resolve(name)
    assert r.kind == "family" and r.id == fid and set(r.unknown) == unknown
    assert len(r.members) > 1


def test_unknown_name_names_closest_matches():
    with pytest.raises(BadInput) as e:
        resolve("A100 96GB")
    assert "unknown GPU 'A100 96GB'" in str(e.value) and "a100" in str(e.value)


def test_family_filter_never_mixes_40_and_80():
    assert matches("a100-80gb-sxm4", "a100-80gb")
    assert matches("a100-80gb", "a100-80gb")
    assert not matches("a100-40gb-sxm4", "a100-80gb")
    assert not matches("a100", "a100-80gb")  # memory unknown: not listed under 80 GB
    assert matches("a100-sxm", "a100")


def test_narrow_by_memory_and_name_hint():
    assert narrow("a100", 40).id == "a100-40gb"
    assert narrow("a100", 80, "sxm").id == "a100-80gb-sxm4"
    assert narrow("h200", None, "nvl").id == "h200-nvl-141gb"


def test_catalog_keeps_sources_and_reference_values(shared_dir):
    gpus = load_gpus()
    with (shared_dir / "reference" / "gpu_specs.csv").open(newline="") as fh:
        ref = {r["id"]: r for r in csv.DictReader(fh)}
    assert set(gpus) == set(ref)
    for gid, r in ref.items():
        g = gpus[gid]
        assert g.source == r["source"] and g.source.startswith("http")
        assert g.memory_gib == float(r["memory_gb"])
    a100 = get_gpu("A100 80GB SXM4")
    assert a100.bf16_tflops == 312 and a100.fp8_tflops is None and a100.memory_bandwidth_gbs == 2039
    assert get_gpu("h100-sxm").has_fp8


def test_get_gpu_refuses_a_family():
    with pytest.raises(BadInput, match="family"):
        get_gpu("A100")
