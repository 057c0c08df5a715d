"""GPU catalog and alias resolver: every spelling to one id; ambiguity kept as a family."""

from __future__ import annotations

import csv

import pytest

from gpuquote.config import DATA_DIR
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
    # GPUs from gpus_extra.csv: catalog spellings and nvidia-smi names
    "NVIDIA GH200 480GB": "gh200-96gb",
    "GH200 96GB": "gh200-96gb",
    "NVIDIA GH200 144G HBM3e": "gh200-144gb",
    "RTX5090": "rtx-5090",
    "NVIDIA GeForce RTX 5090": "rtx-5090",
    "RTX3090": "rtx-3090",
    "NVIDIA GeForce RTX 3090": "rtx-3090",
    "Quadro RTX 6000": "quadro-rtx-6000",
    "A5000": "rtx-a5000",
    "RTXA5000": "rtx-a5000",
    "NVIDIA RTX A5000": "rtx-a5000",
    "A4000": "rtx-a4000",
    "RTX-A4000": "rtx-a4000",
    "NVIDIA RTX A4000": "rtx-a4000",
    "Tesla P100-PCIE-16GB": "p100-16gb-pcie",
    "Tesla P100-SXM2-16GB": "p100-16gb-sxm2",
    "P4": "p4",
    "Tesla P4": "p4",
    "M60": "m60-per-gpu",
    "Tesla M60": "m60-per-gpu",
    "RTXPRO6000WS": "rtx-pro-6000-blackwell-workstation",
    "RTXPRO6000-WK": "rtx-pro-6000-blackwell-workstation",
    "NVIDIA RTX PRO 6000 Blackwell Workstation Edition": "rtx-pro-6000-blackwell-workstation",
}
FAMILIES = {
    "A100": ("a100", {"memory", "form_factor"}),
    "A100-80GB": ("a100-80gb", {"form_factor"}),
    "A100_SXM4": ("a100-sxm", {"memory"}),
    "H100": ("h100", {"memory", "form_factor"}),
    "V100-32GB": ("v100-32gb", {"form_factor"}),
    "GH200": ("gh200", {"memory"}),
    "P100": ("p100", {"form_factor"}),
    "Tesla P100 16GB": ("p100-16gb", {"form_factor"}),
    "RTX6000": ("rtx-6000", {"memory"}),  # Turing Quadro RTX 6000 (24 GB) or RTX 6000 Ada (48 GB)
    "RTX 6000": ("rtx-6000", {"memory"}),
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


def _csv(path) -> tuple[list[str], dict[str, dict]]:
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        return list(reader.fieldnames), {r["id"]: r for r in reader}


def test_catalog_keeps_sources_and_reference_values(shared_dir):
    gpus = load_gpus()
    ref_cols, ref = _csv(shared_dir / "reference" / "gpu_specs.csv")
    extra_cols, extra = _csv(DATA_DIR / "gpus_extra.csv")
    assert extra_cols == ref_cols and not set(ref) & set(extra)
    assert set(gpus) == set(ref) | set(extra)
    for rows in (ref, extra):  # reference rows against the reference, extra rows against gpus_extra.csv
        for gid, r in rows.items():
            g = gpus[gid]
            assert g.source == r["source"] and g.source.startswith("http")
            assert g.memory_gib == float(r["memory_gb"])
            assert g.memory_bandwidth_gbs == (float(r["memory_bandwidth_gbps"]) if r["memory_bandwidth_gbps"] else None)
            assert g.bf16_tflops == (float(r["bf16_tflops_dense"]) if r["bf16_tflops_dense"] else None)
    a100 = get_gpu("A100 80GB SXM4")
    assert a100.bf16_tflops == 312 and a100.fp8_tflops is None and a100.memory_bandwidth_gbs == 2039
    assert get_gpu("h100-sxm").has_fp8


def test_get_gpu_refuses_a_family():
    with pytest.raises(BadInput, match="family"):
        get_gpu("A100")


@pytest.mark.parametrize("name", ["RTX3060", "MI25", "P40",
                                  "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition"])
def test_gpus_without_sourced_specs_stay_unknown(name):
    """Not in the catalog: refused with a hint, never mapped to a near neighbour."""
    with pytest.raises(BadInput, match="unknown GPU"):
        resolve(name)


def test_china_market_gpus_resolve_from_the_clouds_spellings():
    """Alibaba/Tencent GPUSpec names map to the sourced China-market SKUs (issue 13)."""
    assert resolve("A800 40G").id == "a800-40gb-pcie"
    assert resolve("A800 80G").id == "a800-80gb" and resolve("A800 80G").is_family
    assert resolve("L20").id == "l20" and get_gpu("l20").memory_gib == 48
    assert resolve("L20N 72G").id == "l20n-72gb" and resolve("L20N 48G").id == "l20n-48gb"
    for name in ("RTX 5880", "RTX5880", "RTX 5880 Ada", "RTX5880-Ada"):
        assert resolve(name).id == "rtx-5880-ada", name
    with pytest.raises(BadInput, match="unknown GPU"):
        resolve("H-e")  # Alibaba's 141 GB 'H-e': no public source names the model, so it stays out


def test_rtx6000_family_narrows_by_memory_only():
    assert narrow("rtx-6000", 24).id == "quadro-rtx-6000"
    assert narrow("rtx-6000", 48).id == "rtx-6000-ada"
    assert narrow("rtx-6000").id == "rtx-6000"  # no memory fact: stays ambiguous
    assert matches("quadro-rtx-6000", "rtx-6000") and matches("rtx-6000-ada", "rtx-6000")
    assert not matches("rtx-6000", "rtx-6000-ada")  # an unknown RTX 6000 is not listed under the Ada filter
    assert narrow("gh200", 96).id == "gh200-96gb" and narrow("gh200", 144).id == "gh200-144gb"
    assert narrow("p100", 16, "pcie").id == "p100-16gb-pcie"


def test_extra_rows_follow_the_reference_conventions():
    """Dense tensor figures, per-GPU values, notes that say where each figure was read."""
    _, extra = _csv(DATA_DIR / "gpus_extra.csv")
    for gid, r in extra.items():
        assert r["notes"] and r["vendor"] and r["launch_year"], gid
        assert r["sparsity_supported"] in ("yes", "no"), gid
    gh = get_gpu("gh200-96gb")
    h100 = get_gpu("h100-80gb-sxm5")
    assert (gh.bf16_tflops, gh.fp8_tflops, gh.fp32_tflops) == (h100.bf16_tflops, h100.fp8_tflops, h100.fp32_tflops)
    assert gh.nvlink_bandwidth_gbs is None and "C2C" in gh.nvlink_gen  # CPU link, not a GPU-GPU fabric
    assert get_gpu("gh200-144gb").memory_bandwidth_gbs > gh.memory_bandwidth_gbs
    g5090 = get_gpu("rtx-5090")
    assert g5090.fp4_tflops == 4 * g5090.fp8_tflops == 8 * g5090.bf16_tflops  # FP32-accumulate GeForce rates
    assert g5090.int8_tops == 2 * g5090.fp8_tflops
    for pascal in ("p100-16gb-pcie", "p100-16gb-sxm2", "p4", "m60-per-gpu"):
        g = get_gpu(pascal)
        assert g.bf16_tflops is None and g.fp16_tflops is None and g.fp8_tflops is None and g.fp32_tflops
    assert get_gpu("M60").memory_gib == 8  # per GPU: the board carries two
    assert get_gpu("RTXPRO6000WS").mig_max == 4 and get_gpu("RTXPRO6000WS").memory_bandwidth_gbs == 1792


def test_shipped_catalog_spellings_now_import():
    """Rows that the SkyPilot import used to skip as 'GPU not in the catalog' now become offers."""
    from datetime import UTC, datetime

    from gpuquote.sources.skypilot import parse_vms_csv

    now = datetime(2026, 5, 20, tzinfo=UTC)
    lam = ("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region\n"
           "gpu_1x_gh200,GH200,1.0,64,432,\"{'Gpus': [{'Name': 'GH200', 'MemoryInfo': {'SizeInMiB': 98304}}]}\","
           "1.49,,us-east-3\n"
           "gpu_1x_rtx6000,RTX6000,1.0,14,46,\"{'Gpus': [{'Name': 'RTX6000', 'MemoryInfo': {'SizeInMiB': 24576}}]}\","
           "0.5,,us-south-1\n"
           "gpu_1x_mystery,RTX6000,1.0,14,46,,0.5,,us-south-1\n")
    res = parse_vms_csv(lam, "lambda", fetched_at=now, source="t")
    by_sku = {o.sku: o for o in res.offers}
    assert res.skipped == 0
    assert by_sku["gpu_1x_gh200"].gpu_id == "gh200-96gb"
    assert by_sku["gpu_1x_rtx6000"].gpu_id == "quadro-rtx-6000"
    assert by_sku["gpu_1x_mystery"].gpu_id == "rtx-6000"  # no memory stated: kept as the ambiguous family
    az = ("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region\n"
          "Standard_NV12s_v3,M60,1,12,112,M60,1.14,0.21,eastus\n")
    (m60,) = [o for o in parse_vms_csv(az, "azure", fetched_at=now, source="t").offers if not o.spot]
    assert m60.gpu_id == "m60-per-gpu" and m60.gpu_count == 1
