"""Responses in the providers' REAL formats (recorded answers and official examples found in public code,
origins in tests/fixtures/<source>/SOURCES.md) import through the real CLI with the right GPU, count,
form factor and USD per GPU-hour. Expected prices are worked out by hand from the raw files (comments)."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gpuquote.store import write_engine

FIX = Path(__file__).parent / "fixtures"

# (source, fixture) -> [(offer_id, gpu_id, gpu_count, form_factor, usd_per_gpu_hour)]
REAL: dict[tuple[str, str], list[tuple]] = {
    ("vast", "real-gpu-index-b300.json"): [
        # dph_total 15.002083333333335 for num_gpus 2; min_bid 11.25 (interruptible) for the ask
        ("vast:US:2x B300 #47419089", "b300-sxm", 2, "sxm", 15.002083333333335 / 2),
        ("vast:US:2x B300 #47419089:spot", "b300-sxm", 2, "sxm", 11.25 / 2),
        # the 4-GPU slice of the same machine: dph_total 30.00208333333334
        ("vast:US:4x B300 #47419091", "b300-sxm", 4, "sxm", 30.00208333333334 / 4),
    ],
    ("vast", "real-gpu-index-h100-sxm.json"): [
        # geolocation ", US" (no state) -> US; gpu_ram 81559 MB pins the 80 GB SXM5 card
        ("vast:US:1x H100 SXM #48285735", "h100-80gb-sxm5", 1, "sxm", 1.3867407407407408),
        ("vast:JP:1x H100 SXM #48254133", "h100-80gb-sxm5", 1, "sxm", 1.6059259259259258),
        ("vast:JP:1x H100 SXM #48254133:spot", "h100-80gb-sxm5", 1, "sxm", 0.28),
        ("vast:US:1x H100 SXM #40291943", "h100-80gb-sxm5", 1, "sxm", 1.7355555555555555),
    ],
    ("runpod", "real-gpu-index.json"): [
        # id "NVIDIA B300 SXM6 AC" is not a catalog name; displayName "B300" is. securePrice 7.89 per GPU-hour
        ("runpod:unknown:NVIDIA B300 SXM6 AC x1 (secure)", "b300-sxm", 1, "sxm", 7.89),
        ("runpod:unknown:NVIDIA H200 x1 (community)", "h200-141gb-sxm", 1, "sxm", 3.59),  # "H200 SXM" display
        ("runpod:unknown:NVIDIA H100 80GB HBM3 x1 (secure)", "h100-80gb-sxm5", 1, "sxm", 3.29),
        ("runpod:unknown:AMD Instinct MI300X OAM x1 (community)", "mi300x", 1, "oam", 0.5),
        ("runpod:unknown:NVIDIA A100-SXM4-40GB x1 (community)", "a100-40gb-sxm4", 1, "sxm", 1.0),
    ],
    ("runpod", "real-docs-lowestprice-only.json"): [
        # only lowestPrice {minimumBidPrice 0.163, uninterruptablePrice 0.3}
        ("runpod:unknown:NVIDIA GeForce RTX 3090 x1 (lowest)", "rtx-3090", 1, "pcie", 0.3),
        ("runpod:unknown:NVIDIA GeForce RTX 3090 x1 (lowest):spot", "rtx-3090", 1, "pcie", 0.163),
    ],
    ("runpod", "real-docs-availability.json"): [
        ("runpod:unknown:NVIDIA RTX A4000 x1 (secure)", "rtx-a4000", 1, "pcie", 0.35),
        ("runpod:unknown:NVIDIA RTX A4000 x1 (secure):spot", "rtx-a4000", 1, "pcie", 0.18),
        ("runpod:unknown:NVIDIA RTX A4000 x1 (community)", "rtx-a4000", 1, "pcie", 0.2),
    ],
    ("runpod", "real-docs-get-gpu.json"): [
        # one bare GPU type object, maxGpuCount 8: pods of 1/2/4/8 at securePrice 1.89 per GPU
        ("runpod:unknown:NVIDIA A100 80GB PCIe x8 (secure)", "a100-80gb-pcie", 8, "pcie", 1.89),
        ("runpod:unknown:NVIDIA A100 80GB PCIe x1 (community):spot", "a100-80gb-pcie", 1, "pcie", 0.89),
    ],
    ("gcp", "real-opencost-skus.json"): [
        # A100 2 + 933908000e-9 $/GPU-h; A2 core 0.031611 $/h; A2 RAM 0.004237 $/GiB-h
        ("gcp:us-central1:a2-highgpu-1g", "a100-40gb-sxm4", 1, "sxm", 2.933908 + 12 * 0.031611 + 85 * 0.004237),
        ("gcp:us-east1:a2-highgpu-8g", "a100-40gb-sxm4", 8, "sxm",
         (8 * 2.933908 + 96 * 0.031611 + 680 * 0.004237) / 8),
        ("gcp:us-west1:a2-megagpu-16g", "a100-40gb-sxm4", 16, "sxm",
         (16 * 2.933908 + 96 * 0.031611 + 1360 * 0.004237) / 16),
    ],
    ("lambda", "real-inference-plane-testdata.json"): [
        # no "data" wrapper, no regions: one offer per type in region "unknown"
        ("lambda:unknown:gpu_1x_rtx6000", "quadro-rtx-6000", 1, "pcie", 0.69),  # "RTX 6000 (24 GB)", 69 cents
        ("lambda:unknown:gpu_8x_h100_sxm5", "h100-80gb-sxm5", 8, "sxm", 31.92 / 8),  # 3192 cents
        ("lambda:unknown:gpu_1x_gh200", "gh200-96gb", 1, "other", 2.29),
        ("lambda:unknown:gpu_8x_a100", "a100-40gb-sxm4", 8, "sxm", 15.92 / 8),  # "8x A100 (40 GB SXM4)"
        ("lambda:unknown:gpu_1x_a100", "a100-40gb-pcie", 1, "pcie", 1.99),  # "1x A100 (40 GB PCIe)"
    ],
    ("lambda", "real-inference-plane-live-shape.json"): [
        # no description / gpu_description: GPU from the instance type name and data/instances.yaml
        ("lambda:us-west-2:gpu_1x_a100_sxm4", "a100-40gb-sxm4", 1, "sxm", 1.99),
        ("lambda:unknown:gpu_1x_h100_sxm5", "h100-80gb-sxm5", 1, "sxm", 4.29),
        ("lambda:us-east-3:gpu_1x_gh200", "gh200", 1, "other", 2.29),  # memory not given: family, never a guess
    ],
    ("skypilot", "real-catalog-lambda.csv"): [
        ("lambda:us-east-1:gpu_8x_h100_sxm5", "h100-80gb-sxm5", 8, "sxm", 31.92 / 8),
        ("lambda:us-east-1:gpu_1x_h100_pcie", "h100-80gb-pcie", 1, "pcie", 3.29),
        ("lambda:us-east-1:gpu_1x_a6000", "rtx-a6000", 1, "pcie", 1.09),
    ],
    ("skypilot", "real-catalog-runpod.csv"): [
        # AcceleratorName "A100-80GB" + GpuInfo name "A100 PCIe"; Price 2.78 for 2 GPUs
        ("runpod:IN:2x_A100-80GB_SECURE", "a100-80gb-pcie", 2, "pcie", 2.78 / 2),
        ("runpod:US:1x_A100-80GB_SECURE", "a100-80gb-pcie", 1, "pcie", 1.39),
    ],
    ("shadeform", "real-docs-quickstart.json"): [
        ("shadeform:kansascity-usa-1:massedcompute/gpu_1x_a6000", "rtx-a6000", 1, "pcie", 0.57),  # 57 cents
    ],
}


def _offers(home: Path) -> dict[str, dict]:
    con = sqlite3.connect(home / "gpuquote.sqlite")
    con.row_factory = sqlite3.Row
    rows = con.execute("SELECT o.* FROM offers o JOIN current c ON c.snapshot_id = o.snapshot_id").fetchall()
    con.close()
    return {r["offer_id"]: dict(r) for r in rows}


def test_every_real_fixture_is_tested_and_has_a_source_line():
    files = {(p.parent.name, p.name) for p in FIX.glob("*/real-*") if p.is_file()}
    assert files == set(REAL), "each real-* fixture needs expectations here"
    for source, name in REAL:
        assert name in (FIX / source / "SOURCES.md").read_text(), f"{source}/{name} has no origin in SOURCES.md"


@pytest.mark.parametrize(("source", "name"), sorted(REAL), ids=[f"{s}-{n}" for s, n in sorted(REAL)])
def test_real_response_imports_through_the_cli(source, name, cli, isolated_home):
    write_engine(seed=False).dispose()
    r = cli("import", source, str(FIX / source / name), "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["status"] == "good" and out["imported"] > 0, out
    offers = _offers(isolated_home)
    for oid, gpu, count, form, usd in REAL[(source, name)]:
        assert oid in offers, f"{oid} missing; have {sorted(offers)[:10]}"
        o = offers[oid]
        assert (o["gpu_id"], o["gpu_count"], o["form_factor"]) == (gpu, count, form), oid
        assert o["usd_per_gpu_hour"] == pytest.approx(usd, rel=1e-6), oid


def test_runpod_zero_price_tier_and_unknown_gpu_are_not_offers(cli, isolated_home):
    # A100-SXM4-40GB securePrice 0 = not sold on secure cloud; RTX 3070 is not in the GPU catalog
    write_engine(seed=False).dispose()
    r = cli("import", "runpod", str(FIX / "runpod" / "real-gpu-index.json"), "--json")
    out = json.loads(r.stdout)
    assert out["skip_reasons"] == {"GPU not in the catalog: NVIDIA GeForce RTX 3070": 1}
    offers = _offers(isolated_home)
    assert "runpod:unknown:NVIDIA A100-SXM4-40GB x1 (secure)" not in offers
    assert not any("RTX 3070" in k for k in offers)


def test_gcp_sku_in_another_currency_is_skipped_not_mixed(cli, isolated_home):
    write_engine(seed=False).dispose()
    out = json.loads(cli("import", "gcp", str(FIX / "gcp" / "real-opencost-skus.json"), "--json").stdout)
    # 3 regions x (a2-highgpu-1/2/4/8g + a2-megagpu-16g); the IDR-priced T2D RAM SKU is not a GPU family
    assert out["imported"] == 15
    assert out["skip_reasons"] == {"core/RAM of a machine family without GPUs": 1}


def test_lambda_live_shape_marks_types_without_capacity_unavailable(cli, isolated_home):
    write_engine(seed=False).dispose()
    cli("import", "lambda", str(FIX / "lambda" / "real-inference-plane-live-shape.json"), "--json")
    offers = _offers(isolated_home)
    assert offers["lambda:unknown:gpu_1x_h100_sxm5"]["available"] == 0
    assert offers["lambda:us-east-1:gpu_1x_a100_sxm4"]["available"] == 1


def test_skypilot_lone_csv_cloud_from_rows_when_the_name_does_not_say(tmp_path, cli, isolated_home):
    # a downloaded catalog file renamed to something neutral: the gpu_Nx_ rows say Lambda
    write_engine(seed=False).dispose()
    f = tmp_path / "download" / "catalog.csv"
    f.parent.mkdir()
    f.write_bytes((FIX / "skypilot" / "real-catalog-lambda.csv").read_bytes())
    r = cli("import", "skypilot", str(f), "--json")
    assert r.returncode == 0, r.stderr
    assert "lambda:us-east-1:gpu_8x_h100_sxm5" in _offers(isolated_home)


def test_aws_price_list_query_api_answer_is_accepted():
    # `aws pricing get-products` answers {"PriceList": ["<json product+terms>", ...]}, not the bulk file
    from gpuquote.sources import aws

    product = {"product": {"productFamily": "Compute Instance", "sku": "K5ZV",
                           "attributes": {"instanceType": "p5.48xlarge", "gpu": "8", "vcpu": "192",
                                          "memory": "2048 GiB", "operatingSystem": "Linux", "tenancy": "Shared",
                                          "capacitystatus": "Used", "preInstalledSw": "NA", "regionCode": "us-east-1",
                                          "marketoption": "OnDemand"}},
               "terms": {"OnDemand": {"K5ZV.JRTCKXETXF": {"priceDimensions": {
                   "K5ZV.JRTCKXETXF.6YS6EN2CT7": {"unit": "Hrs", "pricePerUnit": {"USD": "98.3200000000"}}}}}}}
    body = json.dumps({"FormatVersion": "aws_v1", "PriceList": [json.dumps(product)], "NextToken": None}).encode()
    res = aws.parse([("products.json", "application/json", body)], datetime.now(UTC))[0]
    assert [(o.id, o.gpu_id, o.gpu_count, o.price.amount) for o in res.offers] == [
        ("aws:us-east-1:p5.48xlarge", "h100-80gb-sxm5", 8, 98.32)]


def test_aws_csv_excerpt_without_sku_column_is_read():
    # gpuhunt's pre-filter keeps the columns it needs; the header is found by PricePerUnit + Instance Type
    from gpuquote.sources import aws

    text = ('"FormatVersion","v1.0"\n"Publication Date","2026-08-27T00:00:00Z"\n'
            '"TermType","Unit","PricePerUnit","Currency","Product Family","Instance Type","GPU","Tenancy",'
            '"Operating System","CapacityStatus","Pre Installed S/W","Region Code"\n'
            '"OnDemand","Hrs","32.7726000000","USD","Compute Instance","p4d.24xlarge","8","Shared","Linux","Used",'
            '"NA","us-east-1"\n')
    res = aws.parse([("index.csv", "text/csv", text.encode())], datetime.now(UTC))[0]
    assert [(o.gpu_id, o.gpu_count, o.form_factor, o.price.amount) for o in res.offers] == [
        ("a100-40gb-sxm4", 8, "sxm", 32.7726)]
