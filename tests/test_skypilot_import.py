"""SkyPilot catalog import: prices per GPU-hour, repairs, corrections, and the embedded snapshot."""

from __future__ import annotations

import ast
import csv
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gpuquote.errors import BadInput
from gpuquote.hardware import members
from gpuquote.sources.skypilot import parse_path, parse_vms_csv

NOW = datetime(2026, 11, 30, tzinfo=UTC)


def _rows(path: Path) -> list[dict]:
    with path.open(newline="", encoding="utf-8") as fh:
        r = csv.reader(fh)
        header = next(r)
        out = []
        for f in r:
            if "Generation" in header and len(f) == len(header) + 1:
                g = header.index("Generation")
                f = f[:g] + [f[g] + "," + f[g + 1]] + f[g + 2:]
            if len(f) == len(header):
                out.append(dict(zip(header, f, strict=True)))
        return out


def test_header_order_is_read_by_name():
    a = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,SpotPrice,Region\n" \
        "gpu_8x_h100_sxm5,H100,8,208,1800,23.92,,us-east-1\n"
    b = "Region,Price,AcceleratorCount,AcceleratorName,InstanceType,SpotPrice,vCPUs,MemoryGiB\n" \
        "us-east-1,23.92,8,H100,gpu_8x_h100_sxm5,,208,1800\n"
    oa = parse_vms_csv(a, "lambda", fetched_at=NOW, source="t").offers
    ob = parse_vms_csv(b, "lambda", fetched_at=NOW, source="t").offers
    assert len(oa) == len(ob) == 1
    assert oa[0].gpu_id == ob[0].gpu_id == "h100-80gb-sxm5"
    assert oa[0].intra_node == "nvswitch" and oa[0].gpu_count == 8
    assert abs(oa[0].price.amount / 8 - 2.99) < 1e-9


def test_azure_unquoted_generation_is_repaired_and_counted():
    text = ("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,Generation\n"
            "Standard_ND96amsr_A100_v4,A100-80GB,8,96,1900,A100-80GB,32.77,6.55,eastus,V1,V2\n"
            "Standard_ND96amsr_A100_v4,A100-80GB,8,96,1900,A100-80GB,32.77,6.55,westus2,V2\n"
            "broken,row\n")
    res = parse_vms_csv(text, "azure", fetched_at=NOW, source="t")
    assert res.repaired == 1 and res.skipped == 1
    assert {o.region for o in res.offers} == {"eastus", "westus2"}
    o = res.offers[0]
    assert o.gpu_id == "a100-80gb-sxm4" and o.inter_node.kind == "ib" and o.inter_node.gbps_per_node == 1600
    assert sorted(o.spot for o in res.offers) == [False, False, True, True]  # on-demand and spot kept apart


def test_gpuinfo_total_memory_is_corrected():
    text = ("InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region\n"
            "2x-A100-32-65536,A100,2,32,64,\"{'Gpus': [{'Name': 'A100', 'Count': 2, 'MemoryInfo': "
            "{'SizeInMiB': 163840}}], 'TotalGpuMemoryInMiB': 163840}\",2.0,0.00,\"Texas, US, NA\"\n")
    res = parse_vms_csv(text, "vast", fetched_at=NOW, source="t")
    assert res.offers[0].gpu_id == "a100-80gb"  # 163840 MiB is the total for 2 GPUs -> 80 GB each
    assert sum(res.corrections.values()) == 1
    assert len(res.offers) == 1  # SpotPrice 0.00 on vast means unknown: no spot offer


def test_bad_file_is_one_clear_error(tmp_path):
    p = tmp_path / "x" / "vms.csv"
    p.parent.mkdir()
    p.write_text("a,b,c\n1,2,3\n")
    with pytest.raises(BadInput, match="missing column"):
        parse_path(p)
    with pytest.raises(BadInput, match="no such file"):
        parse_path(tmp_path / "nope")


def _expected_per_gpu_hour(shared_dir: Path) -> dict:
    """From the raw CSVs, independently: (cloud, region, sku, spot) -> set of $/GPU-h, for A100/H100/H200."""
    base = shared_dir / "data" / "skypilot-catalog"
    want: dict = {}
    files = {"aws": base / "v8" / "aws" / "vms_gpu_subset_p4d-p5en.csv"}
    for cloud in ("azure", "lambda", "vast"):
        files[cloud] = base / "anycloud-mirror-2026-05-20" / cloud / "vms.csv"
    # the v8 neoclouds (vast comes from the newer mirror; mithril's placeholder prices are left out)
    for f in sorted((base / "v8").glob("*/vms.csv")):
        if f.parent.name not in files and f.parent.name not in ("mithril",):
            files[f.parent.name] = f
    for cloud, f in files.items():
        for r in _rows(f):
            name = r["AcceleratorName"]
            if not name or name.split("-")[0] not in ("A100", "H100", "H200"):
                continue
            n = float(r["AcceleratorCount"])
            for spot, col in ((False, "Price"), (True, "SpotPrice")):
                v = r.get(col) or ""
                if v and float(v) > 0:
                    want.setdefault((cloud, r["Region"] or "unknown", r["InstanceType"], spot), set()).add(float(v) / n)
    return want


def test_every_a100_h100_h200_row_keeps_its_price(shared_dir, cli):
    want = _expected_per_gpu_hour(shared_dir)
    got: dict = {}
    for gpu in ("a100", "h100", "h200"):
        res = cli("offers", "--gpu", gpu, "--json")
        assert res.returncode == 0, res.stderr
        for o in json.loads(res.stdout)["offers"]:
            got.setdefault((o["provider"], o["region"], o["sku"], o["spot"]), []).append(o["usd_per_gpu_hour"])
    checked = 0
    for key, prices in want.items():
        assert key in got, key
        for p in prices:
            assert any(abs(g - p) <= 0.005 * p for g in got[key]), (key, p, got[key])
            checked += 1
    assert checked > 500


def test_gcp_gpu_rows_are_added_to_their_host_vm(shared_dir):
    f = shared_dir / "data" / "skypilot-catalog" / "anycloud-mirror-2026-05-20" / "gcp" / "vms.csv"
    rows = _rows(f)
    gpu = next(r for r in rows if not r["InstanceType"] and r["AcceleratorName"] == "A100-80GB"
               and r["AcceleratorCount"] == "8")
    host = next(r for r in rows if r["InstanceType"] == "a2-ultragpu-8g"
                and r["AvailabilityZone"] == gpu["AvailabilityZone"])
    res = parse_path(f.parent)[0]
    o = next(o for o in res.offers if o.sku == "a2-ultragpu-8g" and o.region == gpu["Region"] and not o.spot)
    assert abs(o.price.amount - (float(gpu["Price"]) + float(host["Price"]))) < 1e-6
    assert o.gpu_id == "a100-80gb-sxm4" and o.intra_node == "nvswitch" and o.gpu_count == 8


def test_gpuinfo_literal_is_python_not_json(shared_dir):
    f = shared_dir / "data" / "skypilot-catalog" / "v8" / "vast" / "vms.csv"
    info = next(r["GpuInfo"] for r in _rows(f) if r["GpuInfo"].startswith("{"))
    assert ast.literal_eval(info)["Gpus"]


def test_embedded_snapshot_answers_offers(cli):
    res = cli("offers", "--gpu", "a100-80gb", "--json")
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["store"] == "embedded snapshot"
    assert len(set(data["providers"])) >= 6
    for o in data["offers"]:
        assert set(members(o["gpu_id"])) <= {"a100-80gb-pcie", "a100-80gb-sxm4"}  # never a 40 GB card
        assert o["fetched_at"] and o["source"] and o["freshness"] in ("fresh", "aging", "stale")
        if o["provider"] in ("aws", "gcp", "azure", "lambda"):
            assert o["form_factor"] != "unknown" and o["intra_node"] != "unknown", o
